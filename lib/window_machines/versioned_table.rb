# frozen_string_literal: true

module WindowMachines
  # Values by key and time: the value a key had at the moment an event
  # happened, while updates to it arrive out of order. The semantics are
  # those of Kafka Streams' versioned key-value stores (KIP-889) with the
  # put result of KIP-914.
  #
  # Each key holds versions: a value valid from its timestamp until the
  # next version's (excluded). The stream time is the largest timestamp put
  # or deleted so far, and the history retention works both ways:
  # - a {#put} or {#delete} older than `stream_time - history_retention`
  #   is refused (LateEventError, dropped, or handed to `on_late:`, and
  #   counted by {#late_count}); one exactly that old is applied;
  # - a query that old ({#get} or {#version} with a timestamp) is answered
  #   only by the latest version (if its timestamp is at or before the
  #   query's), and gets nil otherwise.
  # So nothing a query within the retention cannot reach is kept: a version
  # whose validity ended at or before `stream_time - history_retention` is
  # dropped as the stream time passes, and so is a tombstone that old as a
  # key's latest version, after which the key is released. The latest value
  # of a key is kept until a delete. With a zero retention only the latest
  # version of each key is kept, and changes older than the stream time are
  # refused.
  #
  # `nil` is a value like any other for {#put}; only {#delete} writes a
  # tombstone. Keys behave exactly as Hash keys do (see {KeyedSessions});
  # values are held as they are and never called. Expiry costs amortised
  # `O(log n)` per change through an index of when each key next loses a
  # version, never a sweep over the keys.
  #
  # The class is defined by the native extension; this file documents it
  # and adds {#each} (and with it Enumerable), {.from_h}, {#==}, {#eql?} and
  # {#hash}. Tables can be frozen (then {#put} and {#delete} raise
  # `FrozenError`), copied with `dup` and `clone`, and checkpointed with
  # {#to_h} / {.from_h} or Marshal.
  #
  # @example Exchange rates as of the order's time
  #   rates = WindowMachines::VersionedTable.new(3_600)
  #   rates.put("EUR", 1.08, 1_000)    # => nil (the latest)
  #   rates.put("EUR", 1.10, 2_000)    # => nil
  #   rates.put("EUR", 1.09, 1_500)    # => 2000 (out of order: valid until 2000)
  #   rates.get("EUR", 1_700)          # => 1.09
  #   rates.get("EUR")                 # => 1.1
  #   rates.version("EUR", 1_200)      # => [1.08, 1000, 1500]
  class VersionedTable
    include Enumerable
    include SameCheckpoint

    # A table from a {#to_h} checkpoint (or a JSON round trip of one), read
    # as untrusted input under the rules below, which puts and deletes
    # keep.
    # @param checkpoint [Hash{Symbol, String => Object}] exactly the keys
    #   `history_retention`, `stream_time` (nil only with no versions),
    #   `late_count` and `versions`: `[key, timestamp, value]` for a value,
    #   `[key, timestamp]` for a tombstone, a key's versions together and in
    #   increasing time order, none newer than the stream time nor already
    #   out of reach; `late_count` 0 while the stream time is nil.
    # @param on_late [:raise, :drop, #call] as for {#initialize}.
    # @return [VersionedTable] a new, unfrozen table.
    # @raise [TypeError, RangeError, ArgumentError] for a malformed
    #   checkpoint or one that breaks those rules.
    def self.from_h(checkpoint, on_late: :raise)
      checkpoint = checkpoint.merge(on_late: on_late) if checkpoint.is_a?(Hash)
      restore_checkpoint(checkpoint)
    end

    # @!method initialize(history_retention, on_late: :raise)
    #   An empty table with no stream time.
    #   @param history_retention [Integer] how far behind the stream time a
    #     change is still applied and a query fully answered; 0 keeps only
    #     the latest versions.
    #   @param on_late [:raise, :drop, #call] what happens to a change older
    #     than the retention: raise LateEventError, drop it, or call the
    #     callable with `(key, value, timestamp, stream_time)` (value nil for
    #     a delete), whose result is ignored. Counted by {#late_count} in
    #     every case; nothing else changes.
    #   @raise [TypeError] if `history_retention` is not an Integer.
    #   @raise [RangeError] if it is outside `0..2**64-1`.
    #   @raise [ArgumentError] for another `on_late`.

    # @!method put(key, value, timestamp)
    #   Adds a version of `key`, replacing one at the same timestamp.
    #   @param key [Object] any object usable as a Hash key.
    #   @param value [Object] any object, nil included.
    #   @param timestamp [Integer] in `0..2**64-1`.
    #   @return [nil, Integer, false] nil if it is now the key's latest
    #     version; the timestamp of the next newer version (its `valid_to`)
    #     if it went into the history, that is, arrived out of order; false
    #     if it was too old and dropped or handed to `on_late`.
    #   @raise [FrozenError] if the table is frozen, or the key's `hash` or
    #     `eql?` froze it.
    #   @raise [TypeError] if `timestamp` is not an Integer.
    #   @raise [RangeError] if `timestamp` is outside `0..2**64-1`.
    #   @raise [LateEventError] under `on_late: :raise` if `timestamp` is
    #     older than `stream_time - history_retention`; its `watermark` is
    #     the newest timestamp that would be refused.
    #   @raise [RuntimeError] if the key's `hash` or `eql?` changed the
    #     table on each of 8 tries to look the key up.

    # @!method delete(key, timestamp)
    #   Writes a tombstone for `key` at `timestamp`, under the rules of
    #   {#put}: the key has no value from then until its next version.
    #   @param key [Object]
    #   @param timestamp [Integer]
    #   @return [Array(Object, Integer, Integer), Array(Object, Integer, nil), nil]
    #     `[value, valid_from, valid_to]` of the version valid at
    #     `timestamp` before the delete (as {#version} answered), or nil if
    #     there was none, it was a tombstone, or the delete was too old and
    #     dropped or handed to `on_late`.
    #   @raise [FrozenError, TypeError, RangeError, LateEventError, RuntimeError]
    #     as for {#put}.

    # @!method get(key, timestamp = nil)
    #   @param key [Object]
    #   @param timestamp [Integer, nil] nil for the latest value.
    #   @return [Object, nil] the value of the version valid at `timestamp`
    #     (the one with the largest timestamp at or before it); nil if there
    #     is none, it is a tombstone, or `timestamp` is older than
    #     `stream_time - history_retention` and the latest version is newer
    #     than it.
    #   @raise [TypeError, RangeError] for a `timestamp` that is not an
    #     Integer in `0..2**64-1`.

    # @!method version(key, timestamp = nil)
    #   {#get} with the interval the value is valid in.
    #   @param key [Object]
    #   @param timestamp [Integer, nil]
    #   @return [Array(Object, Integer, Integer), Array(Object, Integer, nil), nil]
    #     `[value, valid_from, valid_to]`, valid_to nil for the latest.
    #   @raise [TypeError, RangeError] as {#get}.

    # @!method history(key)
    #   @param key [Object]
    #   @return [Array<Array(Object, Integer, Integer), Array(Object, Integer, nil)>]
    #     `[value, valid_from, valid_to]` of every version of `key` a query
    #     within the retention can still reach, oldest first; tombstones are
    #     left out (they end the validity of the version before them).

    # @!method to_a
    #   @return [Array<Array(Object, Object, Integer, Integer), Array(Object, Object, Integer, nil)>]
    #     `[key, value, valid_from, valid_to]` of every key's {#history},
    #     keys in the order they were first held.

    # @!method history_retention
    #   @return [Integer]

    # @!method stream_time
    #   @return [Integer, nil] the largest timestamp put or deleted, nil
    #     before the first.

    # @!method late_count
    #   @return [Integer] changes refused as too old, whatever `on_late` did.

    # @!method on_late
    #   @return [:raise, :drop, #call]

    # @!method size
    #   @return [Integer] keys held: with a version, or with a tombstone a
    #     query or an out-of-order put can still meet.

    # @!method version_count
    #   @return [Integer] versions held, tombstones included.

    # @!method to_h
    #   The table as a checkpoint; {.from_h} reads it back. Values are put in
    #   as they are, so JSON carries it exactly when they are JSON values.
    #   @return [Hash{Symbol => Object}] `{history_retention:, stream_time:,
    #     late_count:, versions: [[key, timestamp, value], [key, timestamp],
    #     ...]}`, a key's versions together, oldest first, keys in the order
    #     they were first held; a two-element entry is a tombstone.
    #   @raise [TypeError] if a key has no exact JSON form (see
    #     {KeyedSessions#to_h}); use Marshal for such keys.

    # @!method marshal_dump
    #   Called by `Marshal.dump`: {#to_h} for keys of any type, with
    #   `on_late` (so a table whose `on_late` is a Proc cannot be dumped).
    #   @return [Hash{Symbol => Object}]

    # @!method marshal_load(checkpoint)
    #   Called by `Marshal.load`, checked as {.from_h} checks.
    #   @param checkpoint [Hash{Symbol, String => Object}]
    #   @return [void]
    #   @raise [FrozenError] if the table is frozen.

    # @!method inspect
    #   @return [String] e.g. `#<WindowMachines::VersionedTable
    #     history_retention=60 stream_time=120 keys=2 versions=3>`.

    # Yields every version {#history} lists, key by key in the order keys
    # were first held, from a snapshot taken when the call starts.
    # @overload each
    #   @yieldparam key [Object]
    #   @yieldparam value [Object]
    #   @yieldparam valid_from [Integer]
    #   @yieldparam valid_to [Integer, nil] nil for the latest.
    #   @yieldreturn [void]
    #   @return [self]
    # @overload each
    #   @return [Enumerator<Array(Object, Object, Integer, Integer)>]
    def each
      return enum_for(:each) unless block_given?

      to_a.each { |key, value, valid_from, valid_to| yield key, value, valid_from, valid_to }
      self
    end

    # @!method ==(other)
    #   @param other [Object]
    #   @return [Boolean] true if `other` is a table of the same class with the
    #     same retention, stream time, late count, `on_late`, keys (compared
    #     with `eql?`, in the order first held) and versions (values compared
    #     with `eql?`).
  end
end
