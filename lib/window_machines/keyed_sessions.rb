# frozen_string_literal: true

module WindowMachines
  # {Sessions} for any number of keys under one shared watermark: per user,
  # per trading partner, per order.
  #
  # Each key's sessions follow the rules of {Sessions} (joining within the
  # gap, merging, at most 32 held per key). Keys behave exactly like Hash
  # keys: any object a Hash accepts will do, a key finds what a Hash lookup
  # would find (every String is hashed by its bytes, String subclasses and
  # Strings with singleton methods included; `1` and `1.0` are different
  # keys, `0.0` and `-0.0` the same), and an unfrozen String key is stored
  # as a frozen copy. Do not change a key object while it is held.
  #
  # A key's `hash` and `eql?` may run any Ruby code, even code that uses
  # this tracker (inserts, takes, freezes it) or lets another Fiber or
  # Thread do so: the lookup then starts over, so an event is always filed
  # under the key it was given and a frozen tracker never changes. A `hash`
  # or `eql?` that changes the tracker every time it runs makes the call
  # raise `RuntimeError` after 8 tries, having changed nothing.
  #
  # Memory and cost depend only on what is held now: a released key leaves
  # nothing behind, however often keys come and go, and keys whose hashes
  # collide cost one `eql?` each, as in a Hash.
  #
  # Closed sessions are handed over in closing order: the smallest `last`,
  # then the smallest `first`, then the key held longest. A key's state is
  # released as soon as its last session is handed over. No operation walks
  # the keys: {#take_closed} costs `O(log n)` in the sessions held, and
  # {#insert} `O(log n)` plus a hash lookup.
  #
  # The class is defined by the native extension; this file documents it and
  # adds {#each}, {#each_closed} (and with them Enumerable), {#==}, {#eql?}
  # and {#hash}. Trackers can be frozen (then {#insert}, {#insert_all},
  # {#advance_watermark}, {#take_closed} and {#each_closed} raise
  # `FrozenError`) and survive a restart through {#to_h} / {.from_h} or
  # `Marshal`. `dup` copies the state into an unfrozen tracker; `clone`
  # keeps the frozen state too.
  #
  # @example
  #   batches = WindowMachines::KeyedSessions.new(1800)
  #   batches.insert("ACME", 100)       # => [100, 100]
  #   batches.insert("Borealis", 150)   # => [150, 150]
  #   batches.insert("ACME", 900)       # => [100, 900]
  #   batches.advance_watermark(2_000)
  #   batches.take_closed   # => ["Borealis", 150, 150]
  #   batches.take_closed   # => nil: ACME's batch closes at 900 + 1800
  #   batches.key_count     # => 1
  class KeyedSessions
    include Enumerable
    include SameCheckpoint

    # @!method self.from_h(checkpoint)
    #   A tracker restored from the Hash {#to_h} or {#marshal_dump} returns,
    #   read as untrusted input: no checkpoint can produce a tracker that
    #   inserts could not have built. Keys of the Hash may be Symbols or
    #   Strings, so a JSON round trip works. Sessions are grouped by key, and
    #   keys are held in the order they first appear, which decides ties in
    #   the closing order.
    #   @param checkpoint [Hash{Symbol, String => Object}] exactly the keys
    #     `gap` (a positive Integer), `max_sessions` (nil or a positive
    #     Integer), `watermark` (nil or an Integer) and `sessions` (an Array
    #     of `[key, first, last]`; per key, at most 32 sessions, sorted, each
    #     with `first <= last`, any two more than `gap` apart).
    #   @return [KeyedSessions] a new, unfrozen tracker.
    #   @raise [TypeError] if `checkpoint` is not a Hash, or a part of it has
    #     the wrong type.
    #   @raise [RangeError] if an Integer in it is outside `0..2**64-1`.
    #   @raise [ArgumentError] if a key is missing, unknown or given twice,
    #     the gap or max_sessions is 0, or a key's sessions are reversed,
    #     unsorted, overlapping or within a gap of each other.
    #   @raise [CapacityError] if a key has more than 32 sessions, or there
    #     are more than `max_sessions` in all.

    # @!method initialize(gap, max_sessions: nil)
    #   An empty tracker with an unset watermark.
    #   @param gap [Integer] the longest silence inside a session, positive.
    #   @param max_sessions [Integer, nil] the most sessions held across all
    #     keys, positive; nil for no limit beyond 32 per key.
    #   @raise [TypeError] if `gap` is not an Integer, or `max_sessions` is
    #     neither nil nor an Integer.
    #   @raise [RangeError] if `gap` or `max_sessions` is outside
    #     `0..2**64-1`.
    #   @raise [ArgumentError] if `gap` or `max_sessions` is 0 (a
    #     {WindowMachines::ArgumentError}), or another keyword is given
    #     (Ruby's own `ArgumentError`).

    # @!method insert(key, timestamp)
    #   Puts an event into the key's session it belongs to, starting, growing
    #   or merging that key's sessions as {Sessions#insert} does. The key
    #   starts being held with its first session.
    #
    #   Given a block, yields `(old_span, new_span)` for each of the key's
    #   sessions the insert replaced, exactly as {Sessions#insert} does.
    #   @param key [Object] any object usable as a Hash key.
    #   @param timestamp [Integer] the event's time, in `0..2**64-1` and
    #     above the watermark.
    #   @yieldparam old_span [Array(Integer, Integer)] `[first, last]` of a
    #     session that no longer exists.
    #   @yieldparam new_span [Array(Integer, Integer)] `[first, last]` of the
    #     session it became part of (the value `insert` returns).
    #   @yieldreturn [void]
    #   @return [Array(Integer, Integer)] `[first, last]` of the key's
    #     session the event ended up in, a new Array.
    #   @raise [FrozenError] if the tracker is frozen, or the key's `hash`
    #     or `eql?` froze it.
    #   @raise [TypeError] if `timestamp` is not an Integer.
    #   @raise [RangeError] if `timestamp` is outside `0..2**64-1`.
    #   @raise [RuntimeError] if the key's `hash` or `eql?` changed the
    #     tracker on each of 8 tries to look the key up.
    #   @raise [LateEventError] if `timestamp` is at or below the watermark.
    #   @raise [CapacityError] if the event would start a 33rd session for
    #     the key, or a session past `max_sessions` in all.

    # @!method insert_all(keys, timestamps)
    #   {#insert} for each key and timestamp at the same index, in order,
    #   in one call: the state afterwards, the block's calls and the errors
    #   are exactly those of calling {#insert} for each. It returns a count
    #   instead of a span per event, so no Ruby object is made per event
    #   unless the block is given and something grows or merges. (Without
    #   the spans, a payload cannot be filed per session here: for a count
    #   or a sum per session, {SessionWindows#add_all} keeps it for you.)
    #
    #   The Arrays are copied when the call starts, so the block, or a
    #   key's `hash` or `eql?`, may change the Arrays they came from. An
    #   element that is refused raises the error {#insert} would have
    #   raised, as a copy extended with {BatchElement} (its `index`, and
    #   " (at index N)" at the end of its message); this includes an
    #   exception from a key's `hash` or `eql?`. The elements before it
    #   stay inserted, none after it is tried. An exception from the block
    #   passes through as it is, after its own element was inserted.
    #   Interrupts are checked every 16,384 elements.
    #   @param keys [Array<Object>, #to_ary] each any object usable as a
    #     Hash key. A key may itself be an Array, so there is no form with
    #     one key for the whole batch.
    #   @param timestamps [Array<Integer>, #to_ary] as many as `keys`, each
    #     in `0..2**64-1` and above the watermark.
    #   @yieldparam old_span [Array(Integer, Integer)] `[first, last]` of a
    #     session that no longer exists.
    #   @yieldparam new_span [Array(Integer, Integer)] `[first, last]` of the
    #     session it became part of.
    #   @yieldparam key [Object] the key whose sessions changed, the element
    #     of `keys` as given (a batch holds many keys).
    #   @yieldreturn [void]
    #   @return [Integer] how many events were inserted: all of them, since
    #     any refusal raises.
    #   @raise [FrozenError] if the tracker is frozen, even when the Arrays
    #     are empty; extended with {BatchElement} if the block, or a key's
    #     `hash` or `eql?`, froze it.
    #   @raise [TypeError] if `keys` or `timestamps` is neither an Array nor
    #     converts to one with `to_ary`; extended with {BatchElement}, if a
    #     timestamp is not an Integer.
    #   @raise [ArgumentError] if `keys` and `timestamps` differ in length,
    #     before anything is inserted.
    #   @raise [RangeError] extended with {BatchElement}, if a timestamp is
    #     outside `0..2**64-1`.
    #   @raise [RuntimeError] extended with {BatchElement}, if a key's `hash`
    #     or `eql?` changed the tracker on each of 8 tries to look it up.
    #   @raise [LateEventError] extended with {BatchElement}, if a timestamp
    #     is at or below the watermark.
    #   @raise [CapacityError] extended with {BatchElement}, if an event
    #     would start a 33rd session for its key, or a session past
    #     `max_sessions` in all.
    #   @example The block gets the key too
    #     batches = WindowMachines::KeyedSessions.new(1800)
    #     batches.insert_all(["ACME", "Borealis", "ACME"], [100, 150, 900]) do |old_span, new_span, key|
    #       puts "#{key}: #{old_span} -> #{new_span}"
    #     end   # => 3, having printed ACME: [100, 100] -> [100, 900]
    #     batches.advance_watermark(2_000)
    #     batches.take_closed   # => ["Borealis", 150, 150]

    # @!method advance_watermark(timestamp)
    #   Moves the shared watermark to `timestamp` if that is forward, as
    #   {Watermark#advance} does.
    #   @param timestamp [Integer] in `0..2**64-1`.
    #   @return [Boolean] true if the watermark moved, false if `timestamp`
    #     was not above it.
    #   @raise [FrozenError] if the tracker is frozen.
    #   @raise [TypeError] if `timestamp` is not an Integer.
    #   @raise [RangeError] if `timestamp` is outside `0..2**64-1`.

    # @!method take_closed
    #   Removes the session that closed first, across all keys, and returns
    #   it; releases its key if that was the key's last session. Call it
    #   until it returns nil, or use {#each_closed}.
    #   @return [Array(Object, Integer, Integer), nil] `[key, first, last]`
    #     of that session, or nil if no held session is closed.
    #   @raise [FrozenError] if the tracker is frozen.

    # @!method watermark
    #   @return [Integer, nil] the shared watermark, or nil if it has not
    #     been set.

    # @!method gap
    #   @return [Integer] the gap the tracker was made with.

    # @!method max_sessions
    #   @return [Integer, nil] the limit on sessions held across all keys, or
    #     nil if there is none.

    # @!method size
    #   @return [Integer] the number of sessions held across all keys, open
    #     or closed.

    # @!method key_count
    #   @return [Integer] the number of keys holding at least one session.

    # @!method sessions_for(key)
    #   @param key [Object] matched by `hash` and `eql?`.
    #   @return [Array<Array(Integer, Integer)>] `[first, last]` of the key's
    #     held sessions, oldest first, as new Arrays; empty if the key is not
    #     held.

    # @!method to_a
    #   @return [Array<Array(Object, Integer, Integer)>] `[key, first, last]`
    #     of every held session in closing order, as new Arrays.

    # @!method to_h
    #   The tracker as a checkpoint that JSON can carry exactly; {.from_h}
    #   reads it back. Sessions are listed as `[key, first, last]`, grouped by
    #   key, keys in the order they were first held, so a restored tracker
    #   breaks ties as this one would.
    #   @return [Hash{Symbol => Object}] `{gap: Integer, max_sessions:
    #     Integer or nil, watermark: Integer or nil, sessions: [[key, first,
    #     last], ...]}`, a new Hash.
    #   @raise [TypeError] if a held key has no exact JSON form: only
    #     Integers, true, false, nil, Strings that are valid UTF-8 or ASCII
    #     only (in an ASCII-compatible encoding), and Arrays of these (nested
    #     at most 64 deep) do; a Symbol would come back a String, a UTF-16
    #     String as UTF-8. Checkpoint such keys with `Marshal`.

    # @!method marshal_dump
    #   Called by `Marshal.dump`: the Hash {#to_h} returns, for keys of any
    #   type.
    #   @return [Hash{Symbol => Object}]

    # @!method marshal_load(checkpoint)
    #   Called by `Marshal.load` on a new tracker, with the data
    #   {#marshal_dump} returned. The data is checked as {.from_h} checks it.
    #   @param checkpoint [Hash{Symbol, String => Object}]
    #   @return [void]
    #   @raise [FrozenError] if the tracker is frozen.
    #   @raise [TypeError, RangeError, ArgumentError, CapacityError] as
    #     {.from_h} does.

    # @!method inspect
    #   @return [String] the class, gap, watermark and the numbers of
    #     sessions and keys held, e.g.
    #     `#<WindowMachines::KeyedSessions gap=5 watermark=nil sessions=3 keys=2>`.

    # Yields key, first and last of every held session, in closing order. It
    # iterates over a snapshot taken when the call starts, so the block may
    # insert or take without disturbing the iteration.
    #
    # @overload each
    #   @yieldparam key [Object]
    #   @yieldparam first [Integer]
    #   @yieldparam last [Integer]
    #   @yieldreturn [void]
    #   @return [self]
    # @overload each
    #   @return [Enumerator<Array(Object, Integer, Integer)>] a sized
    #     Enumerator over the sessions held when it is iterated.
    def each(&block)
      return enum_for(:each) { size } unless block

      to_a.each { |key, first, last| yield key, first, last }
      self
    end

    # Hands over every closed session in closing order, removing each from
    # the tracker (with {#take_closed}) just before it is yielded.
    #
    # @overload each_closed
    #   @yieldparam key [Object]
    #   @yieldparam first [Integer]
    #   @yieldparam last [Integer]
    #   @yieldreturn [void]
    #   @return [self]
    # @overload each_closed
    #   @return [Enumerator<Array(Object, Integer, Integer)>] an Enumerator
    #     that takes the closed sessions when it is iterated.
    # @raise [FrozenError] if the tracker is frozen.
    # @example
    #   batches = WindowMachines::KeyedSessions.new(5)
    #   batches.insert("a", 10)
    #   batches.insert("b", 3)
    #   batches.advance_watermark(20)
    #   batches.each_closed { |key, first, last| puts "#{key} #{first}..#{last}" }   # prints b 3..3, then a 10..10
    #   batches.size   # => 0
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
    #   @yieldparam key [Object]
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

    # @!method ==(other)
    #   @param other [Object]
    #   @return [Boolean] true if `other` is a tracker of the same class with
    #     the same gap, limit, watermark, keys (in the order they were first
    #     held) and sessions. Keys are compared as Hash keys are, with `eql?`:
    #     trackers holding the key `1` and the key `1.0` differ, as they would
    #     file later events differently.
  end
end
