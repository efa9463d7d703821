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
  #   @return [Object]
  # @!method inspect
  #   @return [String]
  class SessionWindows
    include Aggregating
  end
end
