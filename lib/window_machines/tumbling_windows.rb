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
      super.tap { |restored| restored.send(:back_to_back, restored) }
    end

    # @!visibility private
    def marshal_load(checkpoint)
      # Frozen: the native call refuses it before reading anything.
      return super if frozen?

      held = dup
      super
      back_to_back(held)
    end

    private

    # Refuses what a checkpoint made of the tracker if its windows overlap
    # (a HoppingWindows checkpoint): each event is in exactly one tumbling
    # window. Checked on the restored tracker, whatever Hash the checkpoint
    # was; `held` is put back first.
    # @raise [ArgumentError]
    def back_to_back(held)
      return self if advance == window_size

      message = "a TumblingWindows checkpoint's advance must equal its size, got size #{window_size} and " \
                "advance #{advance} (restore it with HoppingWindows.from_h)"
      initialize_copy(held) unless held.equal?(self)
      raise ArgumentError, message
    end
  end
end
