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
  end
end
