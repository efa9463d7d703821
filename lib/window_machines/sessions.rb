# frozen_string_literal: true

module WindowMachines
  # Sessions of activity: runs of events in which no two neighbours are more
  # than `gap` apart. A session is `[first, last]`, both ends event
  # timestamps and both inside (a one-event session is `[t, t]`).
  #
  # An event joins every held session it is within `gap` of (exactly `gap`
  # apart still joins): none starts a new session, one grows it, two are
  # merged into one. A session closes once the watermark is a full gap past
  # its last event (`last + gap <= watermark`, a sum past `2**64-1` counting
  # as `2**64-1`); since later events must be above the watermark, a closed
  # session can never change again. {#take_closed} hands closed sessions
  # over, oldest first.
  #
  # At most 32 sessions are held, open or closed but not yet taken; an event
  # that would start a 33rd is refused with {CapacityError}. Events at or
  # below the watermark are refused with {LateEventError}. A refused call
  # changes nothing.
  #
  # The class is defined by the native extension; this file documents it and
  # adds {#each}, {#each_closed} (and with them Enumerable). Trackers compare
  # by value, can be frozen (then {#insert}, {#insert_all},
  # {#advance_watermark}, {#take_closed} and {#each_closed} raise
  # `FrozenError`), and survive a restart through {#to_h} / {.from_h} or
  # `Marshal`. `dup` copies the state into an unfrozen tracker; `clone`
  # keeps the frozen state too.
  #
  # @example
  #   sessions = WindowMachines::Sessions.new(5)
  #   sessions.insert(10)   # => [10, 10]  a new session
  #   sessions.insert(15)   # => [10, 15]  exactly one gap apart still joins
  #   sessions.insert(30)   # => [30, 30]  too far: a second session
  #   sessions.insert(21)   # => [21, 21]  nine from 30: a third
  #   sessions.insert(26)   # => [21, 30]  bridges 21 and 30, which merge
  #   sessions.advance_watermark(25)
  #   sessions.take_closed  # => [10, 15]
  #   sessions.take_closed  # => nil: [21, 30] is still open
  class Sessions
    include Enumerable

    # @!method self.from_h(checkpoint)
    #   A tracker restored from the Hash {#to_h} returns, read as untrusted
    #   input: no checkpoint can produce a tracker that inserts could not
    #   have built. Keys may be Symbols or Strings, so a JSON round trip
    #   works.
    #   @param checkpoint [Hash{Symbol, String => Object}] exactly the keys
    #     `gap` (a positive Integer), `watermark` (nil or an Integer) and
    #     `sessions` (an Array of at most 32 `[first, last]` Integer pairs,
    #     sorted, each with `first <= last`, any two more than `gap` apart).
    #   @return [Sessions] a new, unfrozen tracker.
    #   @raise [TypeError] if `checkpoint` is not a Hash, or a part of it has
    #     the wrong type.
    #   @raise [RangeError] if an Integer in it is outside `0..2**64-1`.
    #   @raise [ArgumentError] if a key is missing, unknown or given twice,
    #     the gap is 0, or the sessions are reversed, unsorted, overlapping
    #     or within a gap of each other.
    #   @raise [CapacityError] if it holds more than 32 sessions.
    #   @example A JSON round trip
    #     require "json"
    #     sessions = WindowMachines::Sessions.new(5)
    #     sessions.insert(30)
    #     json = JSON.generate(sessions.to_h)
    #     WindowMachines::Sessions.from_h(JSON.parse(json)) == sessions   # => true

    # @!method initialize(gap)
    #   An empty tracker with an unset watermark.
    #   @param gap [Integer] the longest silence inside a session, positive.
    #   @raise [TypeError] if `gap` is not an Integer.
    #   @raise [RangeError] if `gap` is outside `0..2**64-1`.
    #   @raise [ArgumentError] if `gap` is 0.

    # @!method insert(timestamp)
    #   Puts an event into the session it belongs to, starting, growing or
    #   merging sessions as needed.
    #
    #   A session's span changes whenever it grows or merges. Given a block,
    #   `insert` yields once for each held session the insert replaced: once
    #   when a session grows, twice (oldest first) when two merge, never for
    #   a new session or an event inside an existing one. The block runs
    #   after the tracker is updated, so it may call the tracker; an
    #   exception from it propagates and the update stands.
    #   @param timestamp [Integer] the event's time, in `0..2**64-1` and
    #     above the watermark.
    #   @yieldparam old_span [Array(Integer, Integer)] `[first, last]` of a
    #     session that no longer exists.
    #   @yieldparam new_span [Array(Integer, Integer)] `[first, last]` of the
    #     session it became part of (the value `insert` returns).
    #   @yieldreturn [void]
    #   @return [Array(Integer, Integer)] `[first, last]` of the session the
    #     event ended up in, a new Array.
    #   @raise [FrozenError] if the tracker is frozen.
    #   @raise [TypeError] if `timestamp` is not an Integer.
    #   @raise [RangeError] if `timestamp` is outside `0..2**64-1`.
    #   @raise [LateEventError] if `timestamp` is at or below the watermark.
    #   @raise [CapacityError] if the event would start a 33rd session.
    #   @example Count views per session, moving the counts as spans change
    #     sessions = WindowMachines::Sessions.new(5)
    #     views = Hash.new(0)
    #     [10, 14, 20, 17].each do |at|
    #       span = sessions.insert(at) { |old_span, new_span| views[new_span] += views.delete(old_span) }
    #       views[span] += 1
    #     end
    #     views   # => {[10, 20]=>4}

    # @!method insert_all(timestamps)
    #   {#insert} for each timestamp, in order, in one call: the state
    #   afterwards, the block's calls and the errors are exactly those of
    #   calling {#insert} for each. It returns a count instead of a span per
    #   event, so no Ruby object is made per event unless the block is
    #   given and something grows or merges.
    #
    #   `timestamps` is copied when the call starts, so the block may change
    #   the Array it came from. A timestamp that is refused raises the error
    #   {#insert} would have raised, as a copy extended with {BatchElement}
    #   (its `index`, and " (at index N)" at the end of its message); the
    #   timestamps before it stay inserted, none after it is tried. An
    #   exception from the block passes through as it is, after its own
    #   timestamp was inserted. Interrupts are checked every 16,384
    #   timestamps.
    #   @param timestamps [Array<Integer>, #to_ary] the events' times, in
    #     the order to insert them; each in `0..2**64-1` and above the
    #     watermark.
    #   @yieldparam old_span [Array(Integer, Integer)] `[first, last]` of a
    #     session that no longer exists.
    #   @yieldparam new_span [Array(Integer, Integer)] `[first, last]` of the
    #     session it became part of.
    #   @yieldreturn [void]
    #   @return [Integer] how many timestamps were inserted: all of them,
    #     since any refusal raises.
    #   @raise [FrozenError] if the tracker is frozen, even when `timestamps`
    #     is empty; extended with {BatchElement} if the block froze it.
    #   @raise [TypeError] if `timestamps` is neither an Array nor converts to
    #     one with `to_ary`; extended with {BatchElement}, if a timestamp is
    #     not an Integer.
    #   @raise [RangeError] extended with {BatchElement}, if a timestamp is
    #     outside `0..2**64-1`.
    #   @raise [LateEventError] extended with {BatchElement}, if a timestamp
    #     is at or below the watermark.
    #   @raise [CapacityError] extended with {BatchElement}, if a timestamp
    #     would start a 33rd session.
    #   @example The walkthrough of {#insert}, in one call
    #     sessions = WindowMachines::Sessions.new(5)
    #     sessions.insert_all([10, 15, 30, 21, 26]) do |old_span, new_span|
    #       puts "#{old_span} -> #{new_span}"
    #     end   # => 5, having printed [10, 10] -> [10, 15], [21, 21] -> [21, 30], [30, 30] -> [21, 30]
    #     sessions.to_a   # => [[10, 15], [21, 30]]
    #   @example A late timestamp stops the batch where it is
    #     sessions = WindowMachines::Sessions.new(5)
    #     sessions.advance_watermark(25)
    #     begin
    #       sessions.insert_all([31, 20, 40])
    #     rescue WindowMachines::LateEventError => e
    #       e.index       # => 1
    #       e.timestamp   # => 20
    #     end
    #     sessions.to_a   # => [[31, 31]]: 40 was never tried

    # @!method advance_watermark(timestamp)
    #   Moves the watermark to `timestamp` if that is forward, as
    #   {Watermark#advance} does. Sessions a full gap behind the new
    #   watermark become closed, ready for {#take_closed}.
    #   @param timestamp [Integer] in `0..2**64-1`.
    #   @return [Boolean] true if the watermark moved, false if `timestamp`
    #     was not above it.
    #   @raise [FrozenError] if the tracker is frozen.
    #   @raise [TypeError] if `timestamp` is not an Integer.
    #   @raise [RangeError] if `timestamp` is outside `0..2**64-1`.

    # @!method take_closed
    #   Removes the oldest closed session (the one with the smallest `first`)
    #   and returns it. Call it until it returns nil, or use {#each_closed}.
    #   @return [Array(Integer, Integer), nil] `[first, last]` of that
    #     session, or nil if no held session is closed.
    #   @raise [FrozenError] if the tracker is frozen.

    # @!method watermark
    #   @return [Integer, nil] the watermark, or nil if it has not been set.

    # @!method gap
    #   @return [Integer] the gap the tracker was made with.

    # @!method size
    #   @return [Integer] the number of sessions held, open or closed, from 0
    #     to 32.

    # @!method to_a
    #   @return [Array<Array(Integer, Integer)>] `[first, last]` of every held
    #     session, oldest first, as new Arrays.

    # @!method to_h
    #   The tracker as a checkpoint made of Integers, Arrays and nil only, so
    #   JSON, YAML, MessagePack or a database column can hold it; {.from_h}
    #   reads it back.
    #   @return [Hash{Symbol => Object}] `{gap: Integer, watermark: Integer
    #     or nil, sessions: [[first, last], ...]}`, a new Hash.
    #   @example
    #     sessions = WindowMachines::Sessions.new(5)
    #     sessions.insert(30)
    #     sessions.insert(31)
    #     sessions.advance_watermark(25)
    #     sessions.to_h   # => {gap: 5, watermark: 25, sessions: [[30, 31]]}

    # @!method marshal_dump
    #   Called by `Marshal.dump`.
    #   @return [Hash{Symbol => Object}] the same Hash as {#to_h}.

    # @!method marshal_load(checkpoint)
    #   Called by `Marshal.load` on a new tracker, with the data
    #   {#marshal_dump} returned. The data is checked as {.from_h} checks it.
    #   @param checkpoint [Hash{Symbol, String => Object}]
    #   @return [void]
    #   @raise [FrozenError] if the tracker is frozen.
    #   @raise [TypeError, RangeError, ArgumentError, CapacityError] as
    #     {.from_h} does.

    # @!method ==(other)
    #   @param other [Object]
    #   @return [Boolean] true if `other` is a tracker of the same class with
    #     the same gap, watermark and sessions.

    # @!method eql?(other)
    #   The same as {#==}, so trackers work as Hash keys.
    #   @param other [Object]
    #   @return [Boolean]

    # @!method hash
    #   @return [Integer] a hash code consistent with {#eql?}.

    # @!method inspect
    #   @return [String] the class, gap, watermark and sessions, e.g.
    #     `#<WindowMachines::Sessions gap=5 watermark=25 sessions=[[30, 31]]>`.

    # Yields `[first, last]` of every held session, oldest first. It iterates
    # over a snapshot taken when the call starts, so the block may insert or
    # take without disturbing the iteration.
    #
    # @overload each
    #   @yieldparam span [Array(Integer, Integer)] `[first, last]`, a new
    #     Array.
    #   @yieldreturn [void]
    #   @return [self]
    # @overload each
    #   @return [Enumerator<Array(Integer, Integer)>] a sized Enumerator over
    #     the sessions held when it is iterated.
    # @example
    #   sessions = WindowMachines::Sessions.new(5)
    #   [30, 10, 12].each { |at| sessions.insert(at) }
    #   sessions.each { |first, last| puts "#{first}..#{last}" }   # prints 10..12, then 30..30
    #   sessions.map { |first, last| last - first }                # => [2, 0]
    def each(&block)
      return enum_for(:each) { size } unless block

      to_a.each(&block)
      self
    end

    # Hands over every closed session, oldest first, removing each from the
    # tracker (with {#take_closed}) just before it is yielded.
    #
    # @overload each_closed
    #   @yieldparam first [Integer]
    #   @yieldparam last [Integer]
    #   @yieldreturn [void]
    #   @return [self]
    # @overload each_closed
    #   @return [Enumerator<Array(Integer, Integer)>] an Enumerator that takes
    #     the closed sessions when it is iterated.
    # @raise [FrozenError] if the tracker is frozen.
    # @example
    #   sessions = WindowMachines::Sessions.new(5)
    #   [30, 10, 3].each { |at| sessions.insert(at) }
    #   sessions.advance_watermark(20)
    #   sessions.each_closed { |first, last| puts "#{first}..#{last}" }   # prints 3..3, then 10..10
    #   sessions.size   # => 1
    def each_closed(&block)
      return enum_for(:each_closed) unless block

      take_each_closed(&block)
    end

    # Ends the input: moves the watermark to 2**64-1
    # ({Watermark::END_OF_TIME}), where every session has closed, and hands
    # them all over as {#each_closed} does. The tracker is then empty, and
    # an insert after it is late.
    #
    # @overload finish
    #   @yieldparam first [Integer]
    #   @yieldparam last [Integer]
    #   @yieldreturn [void]
    #   @return [self]
    # @overload finish
    #   @return [Enumerator] an Enumerator that ends the input when it is
    #     iterated.
    # @raise [FrozenError] if the tracker is frozen.
    def finish(&block)
      return enum_for(:finish) unless block

      advance_watermark(Watermark::END_OF_TIME)
      each_closed(&block)
    end
  end
end
