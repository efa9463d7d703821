# frozen_string_literal: true

module WindowMachines
  # Per-key back-to-back windows of `size`: {HoppingWindows} whose advance
  # is the size, so each event is in exactly one window.
  #
  # @example Orders per minute, with two minutes of grace (in seconds)
  #   orders = WindowMachines::TumblingWindows.new(60, grace: 120, aggregate: WindowMachines::Aggregate::Count.new)
  #   orders.add("shop-1", 10)    # => true
  #   orders.add("shop-1", 170)   # => true
  #   orders.add("shop-1", 50)    # => true (its window [0, 60) waits until 180)
  #   orders.take_closed          # => nil
  #   orders.add("shop-1", 200)   # => true
  #   orders.take_closed          # => ["shop-1", 0, 60, 2]
  class TumblingWindows < HoppingWindows
    # @param size [Integer] window length, positive.
    # @param options [Hash] `aggregate:`, `grace:`, `offset:`, `on_late:`,
    #   `watermark:`, as for {HoppingWindows#initialize}.
    def initialize(size, **options)
      super(size, size, **options)
    end

    # @!visibility private
    def self.from_h(*arguments, **options)
      # The checkpoint may come as bare keywords, beside aggregate: and on_late:.
      back_to_back(arguments.first || options)
      super
    end

    # @!visibility private
    def marshal_load(checkpoint)
      TumblingWindows.back_to_back(checkpoint) unless frozen?
      super
    end

    # Refuses a checkpoint of windows that overlap (a HoppingWindows one):
    # each event is in exactly one tumbling window. Only Integers are
    # compared, so no code of the checkpoint's runs; anything else is left
    # for the checks every checkpoint gets.
    # @raise [ArgumentError]
    # @!visibility private
    def self.back_to_back(checkpoint)
      return unless ::Hash === checkpoint

      size, advance = %i[size advance].map { |name| checkpoint.fetch(name) { checkpoint[name.to_s] } }
      return unless ::Integer === size && ::Integer === advance && advance != size

      raise ArgumentError, "a TumblingWindows checkpoint's advance must equal its size, got size #{size} and " \
                           "advance #{advance} (restore it with HoppingWindows.from_h)"
    end
  end
end
