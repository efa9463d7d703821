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
  # @!method add_all(keys, timestamps, values = nil)
  #   {#add} for each key, timestamp and value at the same index, in
  #   order, in one call: the state afterwards, `late_count`, the
  #   `on_late:` calls and the errors are exactly those of calling {#add}
  #   for each. It returns a count instead of a Boolean per event, so the
  #   call makes no Ruby object per event (an aggregator may make its own).
  #
  #   The Arrays are copied when the call starts. An event that is refused
  #   raises the error {#add} would have raised, as a copy extended with
  #   {BatchElement} (its `index`, and " (at index N)" at the end of its
  #   message); this includes an exception from a custom aggregator, an
  #   `on_late` callable or a key's `hash` or `eql?`. The events before it
  #   stay added, none after it is tried. A late event under `on_late:
  #   :drop` or a callable is not refused: it is handled as {#add} handles
  #   it and the batch goes on. Interrupts are checked every 16,384 events.
  #   @param keys [Array<Object>, #to_ary] each any object usable as a
  #     Hash key. A key may itself be an Array, so there is no form with one
  #     key for the whole batch.
  #   @param timestamps [Array<Integer>, #to_ary] as many as `keys`, each in
  #     `0..2**64-1`.
  #   @param values [Array<Object>, #to_ary, nil] as many as `keys`, what
  #     the aggregators read; nil (or left out) when every value is nil, as
  #     for a Count without a field.
  #   @return [Integer] how many events entered at least one window: not
  #     those that were late (and dropped or handed to on_late) or before
  #     `offset`.
  #   @raise [FrozenError] if the tracker is frozen, even when the Arrays
  #     are empty; extended with {BatchElement} if an aggregator, an
  #     `on_late` callable or a key's `hash` or `eql?` froze it.
  #   @raise [TypeError] if an argument is neither an Array nor converts to
  #     one with `to_ary` (nor, for `values`, nil); extended with
  #     {BatchElement}, if a timestamp is not an Integer, or Sum or Mean
  #     cannot add a value's input.
  #   @raise [ArgumentError] if the Arrays differ in length, before anything
  #     is added.
  #   @raise [RangeError] extended with {BatchElement}, if a timestamp is
  #     outside `0..2**64-1`.
  #   @raise [LateEventError] extended with {BatchElement}, for a late
  #     event under `on_late: :raise`.
  #   @example Page views per minute, a batch of five
  #     views = WindowMachines::TumblingWindows.new(60, grace: 10, aggregate: WindowMachines::Aggregate::Count.new)
  #     views.add_all(%w[ana ben ana ana ben], [5, 30, 65, 50, 75])   # => 5
  #     views.each_closed.to_a   # => [["ana", 0, 60, 2], ["ben", 0, 60, 1]]
  #   @example Late events dropped: counted out, not raised
  #     totals = WindowMachines::TumblingWindows.new(60, on_late: :drop, aggregate: WindowMachines::Aggregate::Sum.new(:amount))
  #     totals.add_all(%w[a a a], [100, 10, 110], [{ amount: 5 }, { amount: 7 }, { amount: 1 }])   # => 2
  #     totals.late_count       # => 1
  #     totals.current("a")     # => [[60, 120, 6]]
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
  #   @return [Object] the `aggregate:` given; a Hash as a frozen plain
  #     Hash of its pairs (no default, no subclass), taken at construction.
  # @!method inspect
  #   @return [String]
  class HoppingWindows
    include Aggregating
  end
end
