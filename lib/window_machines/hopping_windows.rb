# frozen_string_literal: true

module WindowMachines
  # Per-key windows of `size` every `advance` that carry an aggregate, and
  # hand each window over once, when it is final.
  #
  # Windows are `[offset + k * advance, + size)`; only those starting at or
  # after 0 exist, as in Kafka Streams and Quix. The watermark is the stream
  # time (the largest timestamp added; `watermark: :stream`) or the value
  # last given to {#advance_watermark} (`watermark: :manual`), less `grace`,
  # at least 0. A window closes once its end is at or below the watermark,
  # that is `end + grace <= stream time`, when Kafka Streams closes it. An
  # event enters each of its windows that has not closed, so grace really
  # admits out-of-order events; it is late only when all of them have, and
  # is then raised, dropped or handed to a callable (`on_late:`), changing
  # nothing but {#late_count}. An event before `offset` is in no window.
  #
  # Closed windows are handed over by {#each_closed} and {#take_closed},
  # earliest end first; among equal ends, the key held longest first. A
  # key's state is released with its last window.
  #
  # @example Sum per hour, every 30 minutes (in seconds)
  #   totals = WindowMachines::HoppingWindows.new(3600, 1800, aggregate: WindowMachines::Aggregate::Sum.new)
  #   totals.add("a", 100, 5)      # => true
  #   totals.add("a", 2000, 7)     # => true
  #   totals.add("a", 5400, 1)     # => true
  #   totals.take_closed           # => ["a", 0, 3600, 12]
  #
  # @!method initialize(size, advance, aggregate:, grace: 0, offset: 0, on_late: :raise, watermark: :stream)
  #   @param size [Integer] window length, positive.
  #   @param advance [Integer] distance between window starts, positive, at most `size`.
  #   @param aggregate [Aggregate::Builtin, #initial, Hash{Object => Aggregate::Builtin, #initial}]
  #     one aggregator (the result is its value) or a Hash of them (the
  #     result is a Hash with the same names). Custom aggregators need
  #     `merge` when `advance < size`.
  #   @param grace [Integer] how long past its end a window waits.
  #   @param offset [Integer] shifts window starts; below `advance`.
  #   @param on_late [:raise, :drop, #call] what happens to a late event; a
  #     callable gets `(key, timestamp, value, watermark)`.
  #   @param watermark [:stream, :manual]
  #   @raise [TypeError] if a length is not an Integer.
  #   @raise [RangeError] if a length is outside `0..2**64-1`.
  #   @raise [ArgumentError] for a zero size or advance, an advance past the
  #     size, an offset not below the advance, an unknown on_late or
  #     watermark, or an aggregator that is not one.
  # @!method add(key, timestamp, value = nil)
  #   Puts the event into every open window of `key` that holds `timestamp`.
  #   @return [Boolean] true if it entered a window; false if it was late
  #     (and dropped or handed to on_late) or is before `offset`.
  #   @raise [LateEventError] for a late event under `on_late: :raise`.
  #   @raise [TypeError] for a non-Integer timestamp, or a non-Numeric input
  #     to Sum or Mean.
  #   @raise [FrozenError] if the tracker is frozen.
  # @!method take_closed
  #   @return [Array(Object, Integer, Integer, Object), nil] `[key, start,
  #     end, result]` of the window that closed first, removed; nil if none
  #     has closed.
  #   @raise [FrozenError] if the tracker is frozen.
  # @!method current(key)
  #   @return [Array<Array(Integer, Integer, Object)>] `[start, end, result]`
  #     of each window `key` holds, oldest first: partial results.
  # @!method advance_watermark(timestamp)
  #   @return [Boolean] true if the manual time moved forward.
  #   @raise [ArgumentError] unless built with `watermark: :manual`.
  # @!method watermark
  #   @return [Integer, nil] nil before the first event (or advance).
  # @!method late_count
  #   @return [Integer] late events seen, whatever on_late did with them.
  # @!method size
  #   @return [Integer] windows held.
  # @!method key_count
  #   @return [Integer] keys held.
  # @!method window_size
  #   @return [Integer]
  # @!method advance
  #   @return [Integer]
  # @!method offset
  #   @return [Integer]
  # @!method grace
  #   @return [Integer]
  # @!method aggregate
  #   @return [Object] the `aggregate:` given.
  # @!method inspect
  #   @return [String]
  class HoppingWindows
    include Aggregating
  end
end
