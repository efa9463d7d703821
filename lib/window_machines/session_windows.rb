# frozen_string_literal: true

module WindowMachines
  # Per-key sessions that carry an aggregate: {KeyedSessions}' rules
  # (inclusive gap, bridging merges, 32 sessions per key, `max_sessions` in
  # all) with each session's accumulators kept natively: a growing session
  # adds to them, two sessions bridged by an event merge theirs.
  #
  # The watermark follows the stream time (the largest timestamp added;
  # `watermark: :stream`) less `grace`, less one more tick so that an event
  # at the stream time is never late; with `watermark: :manual` it is the
  # value last given to {#advance_watermark} less `grace`. It is nil until
  # there is room for it. An event at or below it is late; a session closes
  # once `last + gap` is at or below it, that is `last + gap + grace <
  # stream time`, when Kafka Streams closes it.
  #
  # Sessions are handed over as `[key, first, last, result]`, first and last
  # being event timestamps, by last event, then first, then the key held
  # longest.
  #
  # @example Page views per reading session (gap 30)
  #   views = WindowMachines::SessionWindows.new(30, aggregate: WindowMachines::Aggregate::Count.new)
  #   views.add("ann", 100)
  #   views.add("ann", 120)
  #   views.add("ann", 200)
  #   views.take_closed   # => ["ann", 100, 120, 2]
  #
  # @!method initialize(gap, aggregate:, grace: 0, on_late: :raise, watermark: :stream, max_sessions: nil)
  #   @param gap [Integer] the longest silence inside a session, positive.
  #   @param aggregate [Aggregate::Builtin, #initial, Hash] as for
  #     {HoppingWindows#initialize}; custom aggregators need `merge`.
  #   @param grace [Integer]
  #   @param on_late [:raise, :drop, #call]
  #   @param watermark [:stream, :manual]
  #   @param max_sessions [Integer, nil] the most sessions held at once.
  #   @raise [ArgumentError] for a zero gap or max_sessions, an unknown
  #     on_late or watermark, or an aggregator that is not one.
  # @!method add(key, timestamp, value = nil)
  #   @return [Boolean] true if the event joined or opened a session; false
  #     if it was late and dropped or handed to on_late.
  #   @raise [LateEventError] for a late event under `on_late: :raise`.
  #   @raise [CapacityError] for a 33rd session of a key, or past max_sessions.
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
  #   @return [Integer] how many events joined or opened a session: not
  #     those that were late (and dropped or handed to on_late).
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
  #   @raise [CapacityError] extended with {BatchElement}, for a 33rd
  #     session of a key, or one past max_sessions.
  #   @example Amounts per session, a batch of three
  #     spend = WindowMachines::SessionWindows.new(10, aggregate: WindowMachines::Aggregate::Sum.new(:amount))
  #     spend.add_all(%w[ann bob ann], [1, 2, 5], [{ amount: 1 }, { amount: 2 }, { amount: 3 }])   # => 3
  #     spend.flush.to_a   # => [["bob", 2, 2, 2], ["ann", 1, 5, 4]]
  # @!method take_closed
  #   @return [Array(Object, Integer, Integer, Object), nil]
  # @!method current(key)
  #   @return [Array<Array(Integer, Integer, Object)>] `[first, last,
  #     result]` of each session of `key` that has not closed.
  # @!method advance_watermark(timestamp)
  #   @return [Boolean] true if the manual time moved forward.
  #   @raise [ArgumentError] unless built with `watermark: :manual`.
  # @!method watermark
  #   @return [Integer, nil]
  # @!method late_count
  #   @return [Integer]
  # @!method size
  #   @return [Integer] sessions held.
  # @!method key_count
  #   @return [Integer]
  # @!method gap
  #   @return [Integer]
  # @!method max_sessions
  #   @return [Integer, nil]
  # @!method grace
  #   @return [Integer]
  # @!method aggregate
  #   @return [Object] the `aggregate:` given; a Hash as a frozen plain
  #     Hash of its pairs (no default, no subclass), taken at construction.
  # @!method inspect
  #   @return [String]
  class SessionWindows
    include Aggregating
  end
end
