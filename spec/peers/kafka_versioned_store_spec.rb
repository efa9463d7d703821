# frozen_string_literal: true

require "json"

# Kafka Streams' own expectations for versioned key-value stores (KIP-889) and
# for the DSL processors that read them (KIP-914), translated to
# VersionedTable. Sources (apache/kafka):
# streams/src/test/java/org/apache/kafka/streams/state/internals/RocksDBVersionedStoreTest.java
# (store semantics, read next to RocksDBVersionedStore.java), and in
# streams/src/test/java/org/apache/kafka/streams/integration/ (KIP-914):
# StreamTableJoinIntegrationTest.java, TableTableJoinIntegrationTest.java
# (both over AbstractJoinIntegrationTest#input) and
# KTableKTableForeignKeyJoinIntegrationTest.java.
#
# RocksDBVersionedStoreTest runs with HISTORY_RETENTION = 300_000 (which
# doubles as the grace period), SEGMENT_INTERVAL = 100_000 and
# BASE_TIMESTAMP = 10; so do these translations.
#
# Semantic differences:
# 1. Tombstones: Kafka's put(key, null, ts) deletes; here put(key, nil, ts)
#    stores nil as a value (version tells it from a tombstone, get cannot)
#    and only delete makes a tombstone. So each putToStore(k, null, ts,
#    validTo) becomes delete(k, ts). Kafka's put answers the tombstone's
#    validTo; delete answers the version valid at ts before it (Kafka's
#    delete does too), so the tombstone's validTo is read from to_h: the
#    key's next newer timestamp, nil for none.
# 2. Return codes: PUT_RETURN_CODE_VALID_TO_UNDEFINED is nil, a validTo is
#    that Integer, PUT_RETURN_CODE_NOT_PUT is false under on_late: :drop (the
#    default on_late: :raise raises LateEventError instead).
# 3. Metrics: Kafka's expired-record sensor (dropped-records-total) is
#    late_count. Kafka does not count records its restore skips as expired
#    (shouldNotRestoreExpired: 0); restoring here is replaying the changelog
#    through put/delete, and late_count counts the skipped record (1).
# 4. Segments and bytes: SEGMENT_INTERVAL only names timestamps here. Segment
#    boundaries, the latest-value store, RocksDB value formats and Kafka's
#    empty byte array versus null have no counterpart ("" is just a value).
# 5. Expiry: Kafka hides versions older than stream time - retention from
#    get but keeps them in segments until a whole segment is dropped; here a
#    version is dropped once its valid_to <= stream time - retention, so
#    history, version_count and size are exact. Where a Kafka test expires a
#    version, history is checked as well.
# 6. Range queries: Kafka's get(key, fromTime, toTime, order) has no
#    counterpart. It is translated as a filter over history(key)
#    (versions_between below, after RocksDBVersionedStore#get(key, from, to,
#    order)): the versions valid at some point of [from, to], only the latest
#    once to < stream time - retention. history is oldest first; the tests'
#    ResultOrder.ANY answers came newest first. Long.MIN_VALUE and
#    Long.MAX_VALUE become 0 and 2**64 - 1 (timestamps are non-negative).
# 7. Restore: Kafka restores from its changelog (restoreBatch); here the
#    same records are replayed through put/delete and the table goes through
#    to_h/from_h (JSON, Marshal), which is how this gem restores.
# 8. KIP-914 processors are not part of the gem. A versioned KTable source
#    marks an update as the key's latest iff put answered so
#    (PUT_RETURN_CODE_VALID_TO_UNDEFINED): here put answering nil; for a
#    tombstone (difference 1), iff no version of the key, tombstones
#    included, is newer (read from to_h before the delete). A stream-table
#    join reads table.get(key, stream_ts); table-table joins drop updates
#    that are not the latest and read the other side's latest version. The
#    tests expect nothing from stream records with a null value; the helpers
#    skip them. The integration tests add a MockTime base to every timestamp;
#    the offsets are used as they are here (retention is 5 minutes, so
#    nothing is late either way).
RSpec.describe "Peers: Kafka Streams versioned store" do
  retention = 300_000 # HISTORY_RETENTION (and GRACE_PERIOD)
  s = 100_000 # SEGMENT_INTERVAL
  b = 10 # BASE_TIMESTAMP
  max_ts = (2**64) - 1 # stands for Long.MAX_VALUE in range queries

  let(:table) { WindowMachines::VersionedTable.new(retention, on_late: :drop) }

  # putToStore(key, value, ts, expectedValidTo) with a non-null value.
  def put(table, key, value, at, valid_to)
    expect([at, table.put(key, value, at)]).to eq([at, valid_to])
  end

  # The key's timestamps held, tombstones included (to_h lists them).
  def held_timestamps(table, key)
    table.to_h[:versions].filter_map { |held_key, at, *| at if held_key == key }
  end

  # putToStore(key, null, ts, expectedValidTo) (difference 1).
  def tombstone(table, key, at, valid_to)
    before = table.version(key, at)
    expect([at, table.delete(key, at)]).to eq([at, before])
    expect(table.to_h[:versions]).to include([key, at])
    expect([at, held_timestamps(table, key).select { |held| held > at }.min]).to eq([at, valid_to])
  end

  # records: [value, timestamp, Kafka's expected validTo]; a nil value is
  # Kafka's put(key, null, ts).
  def apply(table, key, records)
    records.each do |value, at, valid_to|
      value.nil? ? tombstone(table, key, at, valid_to) : put(table, key, value, at, valid_to)
    end
    table
  end

  # The same records as restoreBatch gets them: no return codes to check.
  def replay(table, key, records)
    records.each { |value, at, _| value.nil? ? table.delete(key, at) : table.put(key, value, at) }
    table
  end

  # verifyGetValueFromStore (value, from) or verifyGetNullFromStore (nil).
  def expect_latest(table, key, value = nil, from = nil)
    expected = from.nil? ? nil : [value, from, nil]
    expect([table.get(key), table.version(key)]).to eq([value, expected])
  end

  # verifyTimestampedGetValueFromStore / verifyTimestampedGetNullFromStore,
  # as { query_ts => [value, validFrom, validTo] or nil }.
  def expect_as_of(table, key, expected)
    expect(expected.keys.to_h { |at| [at, table.version(key, at)] }).to eq(expected)
    expect(expected.keys.to_h { |at| [at, table.get(key, at)] }).to eq(expected.transform_values { |v| v&.first })
  end

  # RocksDBVersionedStore#get(key, fromTime, toTime, order) over history
  # (difference 6), oldest first.
  def versions_between(table, key, from, to)
    cutoff = [table.stream_time.to_i - table.history_retention, 0].max
    held = to < cutoff ? table.history(key).last(1).select { |_, _, valid_to| valid_to.nil? } : table.history(key)
    held.select { |_, valid_from, valid_to| valid_from <= to && (valid_to.nil? || valid_to > from) }
  end

  # shouldMoveRecordToOlderSegmentDuringPut, shouldRestore
  moving = [["vp20", s + 20, nil], ["vp10", s + 10, s + 20], ["vn10", s - 10, s + 10], ["vn2", s - 2, s + 10],
            ["vn1", s - 1, s + 10], ["vp1", s + 1, s + 10]]
  moving_as_of = { s + 30 => ["vp20", s + 20, nil], s + 15 => ["vp10", s + 10, s + 20],
                   s + 5 => ["vp1", s + 1, s + 10], s => ["vn1", s - 1, s + 1], s - 1 => ["vn1", s - 1, s + 1],
                   s - 2 => ["vn2", s - 2, s - 1], s - 5 => ["vn10", s - 10, s - 2] }
  # shouldMoveRecordToOlderSegmentWithNullsDuringPut, shouldRestoreWithNulls
  moving_nulls = [[nil, s + 20, nil], [nil, s - 1, s + 20], [nil, s + 1, s + 20], [nil, s - 10, s - 1],
                  [nil, s + 10, s + 20], ["vp5", s + 5, s + 10], ["vn5", s - 5, s - 1], ["vn6", s - 6, s - 5]]
  moving_nulls_as_of = { s + 30 => nil, s + 15 => nil, s + 6 => ["vp5", s + 5, s + 10], s + 2 => nil, s => nil,
                         s - 1 => nil, s - 5 => ["vn5", s - 5, s - 1], s - 6 => ["vn6", s - 6, s - 5], s - 8 => nil }
  # shouldPutRepeatTimestamps, shouldRestoreWithNullsAndRepeatTimestamps
  repeats = [["to_be_replaced", s + 20, nil], [nil, s - 10, s + 20], ["to_be_replaced", s - 10, s + 20],
             [nil, s - 10, s + 20], ["to_be_replaced", s - 1, s + 20], ["to_be_replaced", s + 1, s + 20],
             [nil, s - 1, s + 1], [nil, s + 1, s + 20], [nil, s + 10, s + 20], [nil, s + 5, s + 10],
             ["vp5", s + 5, s + 10], ["to_be_replaced", s - 5, s - 1], ["vn5", s - 5, s - 1], [nil, s + 20, nil],
             [nil, s + 20, nil], ["vn6", s - 6, s - 5]]
  # shouldPutIntoMultipleSegments, shouldRestoreMultipleBatches
  segments = [[nil, s - 20, nil], ["vn10", s - 10, nil], [nil, s - 1, nil], [nil, s + 1, nil], ["vp10", s + 10, nil],
              [nil, s + 20, nil]]
  segments_as_of = { s + 30 => nil, s + 15 => ["vp10", s + 10, s + 20], s + 5 => nil, s + 2 => nil, s => nil,
                     s - 1 => nil, s - 5 => ["vn10", s - 10, s - 1], s - 15 => nil }

  describe "put and get (RocksDBVersionedStoreTest)" do
    it "shouldPutLatest" do
      apply(table, "k", [["v", b, nil], ["v2", b + 1, nil]])
      expect_latest(table, "k", "v2", b + 1)
      expect_as_of(table, "k", b => ["v", b, b + 1], b + 1 => ["v2", b + 1, nil], b + 2 => ["v2", b + 1, nil])
    end

    it "shouldPutNullAsLatest: two tombstones, nothing to read" do
      apply(table, "k", [[nil, b, nil], [nil, b + 1, nil]])
      expect_latest(table, "k")
      expect_as_of(table, "k", b => nil, b + 1 => nil, b + 2 => nil)
    end

    it "shouldPutNullAsLatest, difference 1: put(k, nil) stores nil as a value, delete stores a tombstone" do
      apply(table, "k", [[nil, b, nil]])
      put(table, "n", nil, b, nil)
      expect([table.get("n"), table.get("k")]).to eq([nil, nil])
      expect([table.version("n"), table.version("k")]).to eq([[nil, b, nil], nil])
      expect([table.history("n"), table.history("k")]).to eq([[[nil, b, nil]], []])
      expect(table.to_h[:versions]).to eq([["k", b], ["n", b, nil]])
    end

    it "shouldPutOlderWithNonNullLatest" do
      apply(table, "k", [["v", b, nil], ["v2", b - 2, b], ["v1", b - 1, b], ["v4", b - 4, b - 2]])
      expect_latest(table, "k", "v", b)
      expect_as_of(table, "k", b => ["v", b, nil], b - 1 => ["v1", b - 1, b], b - 2 => ["v2", b - 2, b - 1],
                               b - 3 => ["v4", b - 4, b - 2])
    end

    it "shouldPutOlderWithNullLatest" do
      apply(table, "k", [[nil, b, nil], ["v2", b - 2, b], ["v1", b - 1, b], ["v4", b - 4, b - 2]])
      expect_latest(table, "k")
      expect_as_of(table, "k", b => nil, b - 1 => ["v1", b - 1, b], b - 2 => ["v2", b - 2, b - 1],
                               b - 3 => ["v4", b - 4, b - 2])
    end

    it "shouldPutOlderNullWithNonNullLatest" do
      apply(table, "k", [["v", b, nil], [nil, b - 2, b], [nil, b - 1, b], [nil, b - 4, b - 2], ["v5", b - 5, b - 4],
                         ["v3", b - 3, b - 2], [nil, b - 6, b - 5]])
      expect_latest(table, "k", "v", b)
      expect_as_of(table, "k", b => ["v", b, nil], b - 1 => nil, b - 2 => nil, b - 3 => ["v3", b - 3, b - 2],
                               b - 4 => nil, b - 5 => ["v5", b - 5, b - 4], b - 6 => nil)
    end

    it "shouldPutOlderNullWithNullLatest" do
      apply(table, "k", [[nil, b, nil], [nil, b - 2, b], [nil, b - 1, b], [nil, b - 4, b - 2], ["v3", b - 3, b - 2],
                         ["v5", b - 5, b - 4], [nil, b - 6, b - 5]])
      expect_latest(table, "k")
      expect_as_of(table, "k", b => nil, b - 1 => nil, b - 2 => nil, b - 3 => ["v3", b - 3, b - 2], b - 4 => nil,
                               b - 5 => ["v5", b - 5, b - 4], b - 6 => nil)
    end

    it "shouldPutRepeatTimestampAsLatest: a value or a tombstone at the same timestamp replaces the version there" do
      apply(table, "k", [["to_be_replaced", b, nil], ["b", b, nil]])
      expect_latest(table, "k", "b", b)
      expect_as_of(table, "k", b => ["b", b, nil], b - 1 => nil)
      apply(table, "k", [[nil, b, nil]])
      expect_latest(table, "k")
      expect_as_of(table, "k", b => nil, b - 1 => nil)
      apply(table, "k", [[nil, b, nil]])
      expect_latest(table, "k")
      expect_as_of(table, "k", b => nil, b - 1 => nil)
      apply(table, "k", [["b", b, nil]])
      expect_latest(table, "k", "b", b)
      expect_as_of(table, "k", b => ["b", b, nil], b - 1 => nil)
      expect(table.version_count).to eq(1)
    end

    it "shouldPutRepeatTimestamps" do
      apply(table, "k", repeats)
      expect_latest(table, "k")
      expect_as_of(table, "k", s + 30 => nil, s + 15 => nil, s + 6 => ["vp5", s + 5, s + 10], s + 2 => nil, s => nil,
                               s - 1 => nil, s - 5 => ["vn5", s - 5, s - 1], s - 6 => ["vn6", s - 6, s - 5],
                               s - 8 => nil)
    end

    it "shouldPutIntoMultipleSegments" do
      apply(table, "k", segments)
      expect_latest(table, "k")
      expect_as_of(table, "k", segments_as_of)
    end

    it "shouldMoveRecordToOlderSegmentDuringPut" do
      apply(table, "k", moving)
      expect_latest(table, "k", "vp20", s + 20)
      expect_as_of(table, "k", moving_as_of)
    end

    it "shouldMoveRecordToOlderSegmentWithNullsDuringPut" do
      apply(table, "k", moving_nulls)
      expect_latest(table, "k")
      expect_as_of(table, "k", moving_nulls_as_of)
    end

    it "shouldFallThroughToExistingOlderSegmentAsLatestDuringPut" do
      apply(table, "k", [[nil, s - 5, nil], ["vn6", s - 6, s - 5], ["vp20", s + 20, nil], [nil, s + 10, s + 20],
                         [nil, s - 1, s + 10], ["vn2", s - 2, s - 1]])
      expect_latest(table, "k", "vp20", s + 20)
      expect_as_of(table, "k", s + 30 => ["vp20", s + 20, nil], s + 12 => nil, s => nil, s - 1 => nil,
                               s - 2 => ["vn2", s - 2, s - 1], s - 5 => nil, s - 6 => ["vn6", s - 6, s - 5])
    end

    it "shouldPutNonLatestTombstoneIntoNewSegmentWithValidTo" do
      apply(table, "k", [["vp30", s + 30, nil], [nil, s - 10, s + 30], ["vn5", s - 5, s + 30], ["vn1", s - 1, s + 30],
                         [nil, s - 2, s - 1]])
      expect_latest(table, "k", "vp30", s + 30)
      expect_as_of(table, "k", s + 10 => ["vn1", s - 1, s + 30], s - 1 => ["vn1", s - 1, s + 30], s - 2 => nil,
                               s - 5 => ["vn5", s - 5, s - 2], s - 10 => nil)
    end

    it "shouldDistinguishEmptyAndNull: an empty String is a value, a tombstone is not" do
      apply(table, "k", [[nil, s + 20, nil], [nil, s - 10, s + 20], [nil, s - 1, s + 20], [nil, s + 1, s + 20],
                         [nil, s + 10, s + 20], ["", s + 5, s + 10], ["", s - 5, s - 1], ["", s - 6, s - 5]])
      expect_latest(table, "k")
      expect_as_of(table, "k", s + 30 => nil, s + 15 => nil, s + 6 => ["", s + 5, s + 10], s + 2 => nil, s => nil,
                               s - 1 => nil, s - 5 => ["", s - 5, s - 1], s - 6 => ["", s - 6, s - 5], s - 8 => nil)
    end

    it "shouldGetFromOlderSegments: another key's versions do not answer for k" do
      apply(table, "ko", [[nil, s - 10, nil], [nil, (2 * s) - 10, nil], [nil, (3 * s) - 10, nil]])
      expect_as_of(table, "k", s - 20 => nil)
      apply(table, "k", [["v", s - 20, nil], [nil, s - 10, nil]])
      first = { s - 30 => nil, s - 15 => ["v", s - 20, s - 10], s - 5 => nil }
      expect_as_of(table, "k", first)
      apply(table, "k", [["v2", (3 * s) - 20, nil], [nil, (3 * s) - 10, nil]])
      expect_as_of(table, "k", first)
    end
  end

  describe "delete (RocksDBVersionedStoreTest#shouldDelete)" do
    it "answers the version valid at the timestamp, which Kafka's delete answers too" do
      apply(table, "k", [["vp20", s + 20, nil], ["vp10", s + 10, s + 20], ["vn10", s - 10, s + 10],
                         ["vn2", s - 2, s + 10]])
      # Kafka checks the value and timestamp; validTo is what get answered.
      expect(table.delete("k", s - 5)).to eq(["vn10", s - 10, s - 2]) # delete from segment
      expect(table.delete("k", s + 10)).to eq(["vp10", s + 10, s + 20]) # delete existing timestamp
      expect(table.delete("k", s + 10)).to be_nil # delete the same timestamp again
      expect(table.delete("k", s + 25)).to eq(["vp20", s + 20, nil]) # delete from latest value store
      expect_latest(table, "k")
    end
  end

  describe "history retention and grace (RocksDBVersionedStoreTest)" do
    it "shouldNotPutExpired: stream time - grace is accepted, one less is refused and counted" do
      put(table, "k", "v", retention + 10, nil)
      put(table, "k1", "v1", retention + 10 - retention, nil) # grace period has not elapsed
      expect_latest(table, "k1", "v1", 10)
      put(table, "k2", "v2", retention + 9 - retention, false) # PUT_RETURN_CODE_NOT_PUT
      expect_latest(table, "k2")
      expect(table.late_count).to eq(1) # verifyExpiredRecordSensor(1)
    end

    it "shouldNotPutExpired under on_late: :raise (difference 2)" do
      strict = WindowMachines::VersionedTable.new(retention)
      strict.put("k", "v", retention + 10)
      expect { strict.put("k2", "v2", 9) }.to raise_error(WindowMachines::LateEventError) { |error|
        expect([error.timestamp, error.watermark, error.key]).to eq([9, 9, "k2"])
        expect(error.message).to eq("late event: timestamp 9 is at or below the watermark 9")
      }
      expect([strict.get("k2"), strict.late_count]).to eq([nil, 1])
    end

    it "shouldNotDeleteExpired: a refused delete answers nil even though a record exists" do
      put(table, "k1", "v1", 1, nil)
      put(table, "k2", "v2", 1, nil)
      put(table, "kother", "vother", retention + 10, nil) # use separate key to advance stream time
      expect(table.delete("k1", retention + 10 - retention)).to eq(["v1", 1, nil]) # grace period has not elapsed
      expect_latest(table, "k1")
      expect(table.delete("k2", retention + 9 - retention)).to be_nil # grace period has elapsed
      expect_latest(table, "k2", "v2", 1)
      expect(table.late_count).to eq(1) # verifyExpiredRecordSensor(1)
      # Difference 5: k1's value (valid to 10) and tombstone (at 10) are both
      # at or below the cutoff 10, so k1 is released.
      expect(table.size).to eq(2)
    end

    it "shouldNotGetExpired: a version valid until the cutoff is gone" do
      put(table, "k", "v_old", 0, nil)
      put(table, "k", "v", s - 10, nil)
      expect_as_of(table, "k", s - 11 => ["v_old", 0, s - 10]) # old record has not yet expired
      put(table, "ko", "vo", retention + s - 11, nil)
      expect_as_of(table, "k", s - 11 => ["v_old", 0, s - 10]) # old record still has not yet expired
      put(table, "ko", "vo2", retention + s - 10, nil)
      expect_as_of(table, "k", s - 11 => nil) # old record is expired now
      expect(table.history("k")).to eq([["v", s - 10, nil]]) # difference 5
    end

    it "shouldGetExpiredIfLatestValue: past retention only the latest version answers" do
      put(table, "k", "v", 1, nil)
      put(table, "ko", "vo_old", 1, nil)
      put(table, "ko", "vo_new", retention + 12, nil)
      # expired get on key where latest satisfies timestamp bound still returns data
      expect_as_of(table, "k", 10 => ["v", 1, nil])
      # same expired get on key where latest value does not satisfy timestamp bound does not return data
      expect_as_of(table, "ko", 10 => nil)
    end

    it "shouldAllowZeroHistoryRetention" do
      zero = WindowMachines::VersionedTable.new(0, on_late: :drop)
      put(zero, "k", "v", b, nil) # put and get
      expect_latest(zero, "k", "v", b)
      expect_as_of(zero, "k", b => ["v", b, nil], b + 1 => ["v", b, nil]) # query in "future" is allowed
      put(zero, "k", "updated", b, nil) # update existing record at same timestamp
      expect_latest(zero, "k", "updated", b)
      expect_as_of(zero, "k", b => ["updated", b, nil])
      put(zero, "k", "v2", b + 2, nil) # put new record version
      expect_latest(zero, "k", "v2", b + 2)
      expect_as_of(zero, "k", b + 2 => ["v2", b + 2, nil], b + 1 => nil) # query in past returns null
      expect(zero.delete("k", b + 3)).to eq(["v2", b + 2, nil]) # delete existing key
      expect_latest(zero, "k")
      put(zero, "k2", "v", b + 2, false) # put in past (grace period expired) does not update the store
      expect_latest(zero, "k2")
      expect(zero.late_count).to eq(1) # verifyExpiredRecordSensor(1)
      # Difference 5: with no history, k's value and tombstone are gone.
      expect([zero.size, zero.version_count]).to eq([0, 0])
    end
  end

  describe "record versions (RocksDBVersionedStoreTest, difference 6)" do
    it "shouldGetRecordVersionsFromOlderSegments" do
      apply(table, "ko", [[nil, s - 10, nil], [nil, (2 * s) - 10, nil], [nil, (3 * s) - 10, nil]])
      expect(versions_between(table, "k", s - 20, s)).to eq([]) # the key does not exist
      apply(table, "k", [["v1", s - 30, nil], ["v2", s - 25, nil], [nil, s - 20, nil], [nil, s - 15, nil],
                         ["v3", s - 10, nil], ["v4", s - 5, nil]])
      all = [["v1", s - 30, s - 25], ["v2", s - 25, s - 20], ["v3", s - 10, s - 5], ["v4", s - 5, nil]]
      expect(versions_between(table, "k", s - 40, s - 35)).to eq([]) # before any value
      expect(versions_between(table, "k", s - 30, s - 5)).to eq(all) # values valid, tombstones between
      expect(versions_between(table, "k", 0, max_ts)).to eq(all) # (MIN, MAX)
      expect(versions_between(table, "k", s - 4, s)).to eq([all[3]]) # only the latest
      expect(versions_between(table, "k", s - 5, s - 5)).to eq([all[3]]) # from = to
      expect(versions_between(table, "k", s - 4, s - 4)).to eq([all[3]])
      expect(versions_between(table, "k", s - 31, s - 21)).to eq(all[0, 2]) # before any tombstone
      expect(versions_between(table, "k", s - 24, s - 11)).to eq([all[1]]) # covering both tombstones
      expect(versions_between(table, "k", s - 11, s - 4)).to eq(all[2, 2]) # after the tombstones
      expect(versions_between(table, "k", s - 26, s - 5)).to eq(all) # valid in range, inserted before it
      expect(versions_between(table, "k", s - 15, s - 10)).to eq([all[2]]) # validFrom = upper bound
      expect(versions_between(table, "k", s - 19, s - 16)).to eq([]) # no value valid
      apply(table, "k", [["v5", (3 * s) - 30, nil], [nil, (3 * s) - 20, nil]])
      expect(versions_between(table, "k", s - 40, s - 35)).to eq([])
      expect(versions_between(table, "k", s - 30, s - 26)).to eq([all[0]])
      expect(versions_between(table, "k", s - 19, s - 16)).to eq([])
    end

    it "shouldGetRecordVersionsInAscendingOrder: history is oldest first" do
      apply(table, "k", [["v1", s - 30, nil], ["v2", s - 25, nil], ["v3", s - 10, nil], ["v4", s - 5, nil]])
      expected = [["v1", s - 30, s - 25], ["v2", s - 25, s - 10], ["v3", s - 10, s - 5], ["v4", s - 5, nil]]
      expect(versions_between(table, "k", s - 30, s - 5)).to eq(expected)
      expect(table.history("k")).to eq(expected)
    end

    it "shouldGetRecordVersionsFromMultipleOldSegmentsInAscendingOrder" do
      apply(table, "k", [["v1", s - 10, nil], ["v2", s - 5, nil], ["v3", (2 * s) - 10, nil], ["v4", (2 * s) - 5, nil]])
      expected = [["v1", s - 10, s - 5], ["v2", s - 5, (2 * s) - 10], ["v3", (2 * s) - 10, (2 * s) - 5],
                  ["v4", (2 * s) - 5, nil]]
      expect(versions_between(table, "k", 0, max_ts)).to eq(expected)
      expect(table.history("k")).to eq(expected)
    end

    it "shouldNotGetExpiredRecordVersions" do
      put(table, "k", "v_old", 0, nil)
      put(table, "k", "v", s - 10, nil)
      expect(versions_between(table, "k", 0, s - 11)).to eq([["v_old", 0, s - 10]]) # not yet expired
      put(table, "ko", "vo", retention + s - 11, nil)
      expect(versions_between(table, "k", 0, s - 11)).to eq([["v_old", 0, s - 10]]) # still not expired
      put(table, "ko", "vo2", retention + s - 10, nil)
      expect(versions_between(table, "k", 0, s - 11)).to eq([]) # expired now
    end

    it "shouldGetExpiredIfLatestVersionValue" do
      put(table, "k", "v", 1, nil)
      put(table, "ko", "vo_old", 1, nil)
      put(table, "ko", "vo_new", retention + 12, nil)
      expect(versions_between(table, "k", 0, 10)).to eq([["v", 1, nil]])
      expect(versions_between(table, "ko", 0, 10)).to eq([])
    end
  end

  describe "restore (RocksDBVersionedStoreTest, difference 7)" do
    it "shouldRestore: from_h(to_h) and Marshal answer as the table did" do
      replayed = replay(table, "k", moving)
      [WindowMachines::VersionedTable.from_h(replayed.to_h, on_late: :drop),
       Marshal.load(Marshal.dump(replayed))].each do |restored|
        expect(restored).to eq(replayed)
        expect_latest(restored, "k", "vp20", s + 20)
        expect_as_of(restored, "k", moving_as_of)
      end
    end

    it "shouldRestoreWithNulls: tombstones survive a JSON round trip" do
      json = JSON.generate(replay(table, "k", moving_nulls).to_h)
      restored = WindowMachines::VersionedTable.from_h(JSON.parse(json))
      expect_latest(restored, "k")
      expect_as_of(restored, "k", moving_nulls_as_of)
      expect(held_timestamps(restored, "k")).to eq([s - 10, s - 6, s - 5, s - 1, s + 1, s + 5, s + 10, s + 20])
    end

    it "shouldRestoreWithNullsAndRepeatTimestamps" do
      restored = WindowMachines::VersionedTable.from_h(replay(table, "k", repeats).to_h)
      expect_latest(restored, "k")
      expect_as_of(restored, "k", s + 30 => nil, s + 15 => nil, s + 6 => ["vp5", s + 5, s + 10], s + 2 => nil,
                                  s => nil, s - 1 => nil, s - 5 => ["vn5", s - 5, s - 1],
                                  s - 6 => ["vn6", s - 6, s - 5], s - 8 => nil)
    end

    it "shouldRestoreMultipleBatches: a checkpoint between the batches" do
      first = WindowMachines::VersionedTable.from_h(replay(table, "k", segments.first(3)).to_h, on_late: :drop)
      restored = WindowMachines::VersionedTable.from_h(replay(first, "k", segments.drop(3)).to_h)
      expect_latest(restored, "k")
      expect_as_of(restored, "k", segments_as_of)
    end

    it "shouldNotRestoreExpired: the record past grace is skipped (and counted, difference 3)" do
      table.put("k", "v", retention + 10)
      table.put("k1", "v1", retention + 10 - retention) # grace period has not elapsed
      table.put("k2", "v2", retention + 9 - retention) # grace period has elapsed, so not restored
      restored = WindowMachines::VersionedTable.from_h(table.to_h)
      expect_latest(restored, "k", "v", retention + 10)
      expect_latest(restored, "k1", "v1", retention + 10 - retention)
      expect_latest(restored, "k2")
      expect(restored.late_count).to eq(1) # Kafka's sensor: 0
    end

    it "shouldRestoreEvenIfRecordWouldBeExpiredByEndOfBatch: the latest version never expires" do
      table.put("k2", "v2", retention - retention)
      table.put("k", "v", retention + 10)
      restored = WindowMachines::VersionedTable.from_h(table.to_h)
      expect_latest(restored, "k2", "v2", retention - retention)
      expect_latest(restored, "k", "v", retention + 10)
    end
  end

  describe "KIP-914 processors over versioned tables (difference 8)" do
    key = 0 # ANY_UNIQUE_KEY
    # AbstractJoinIntegrationTest#input: [topic, value, timestamp offset].
    input = [[:left, nil, 1], [:right, nil, 2], [:left, "A", 3], [:right, "a", 4], [:left, "B", 5], [:right, "b", 6],
             [:left, nil, 7], [:right, nil, 8], [:left, "C", 9], [:right, "c", 10], [:right, nil, 11],
             [:left, nil, 12], [:right, nil, 13],
             [:right, "d", 7], # out-of-order data with null as latest
             [:left, "D", 6], [:left, nil, 2], [:right, nil, 3], [:right, "e", 14], [:left, "E", 15],
             [:left, nil, 10], # out-of-order data with non-null as latest
             [:right, nil, 9], [:left, "F", 4], [:right, "f", 3]]

    # ValueJoiner (value1, value2) -> value1 + "-" + value2, Java's "null" included.
    def joined(left, right)
      [left, right].map { |value| value.nil? ? "null" : value }.join("-")
    end

    # Whether a versioned KTable source forwards the update as the key's latest.
    def update_latest?(table, key, value, at)
      return table.put(key, value, at).nil? unless value.nil?

      newest = held_timestamps(table, key).max
      table.delete(key, at)
      newest.nil? || at >= newest
    end

    # What each input record made the join emit, by its position (1-based) in
    # input: [value, timestamp], value nil for a tombstone.
    def emitted(outputs)
      outputs.each_with_index.filter_map { |output, index| [index + 1, output] if output }.to_h
    end

    # KStreamKTableJoin over a versioned table: the table version valid at the
    # stream record's timestamp (KIP-914).
    def stream_table_join(input, key, left_join:)
      table = WindowMachines::VersionedTable.new(5 * 60 * 1000) # Duration.ofMinutes(5)
      input.map do |topic, value, at|
        if topic == :right
          value.nil? ? table.delete(key, at) : table.put(key, value, at)
          next
        end
        next if value.nil?

        other = table.get(key, at)
        [joined(value, other), at] if other || left_join
      end
    end

    # KTableKTable{Inner,Left,Outer}Join (and KTableKTableRightJoin, the left
    # join's right side) with both tables versioned: an update that is not the
    # key's latest is dropped; any other joins the other table's latest version,
    # stamped with the larger timestamp.
    def table_table_join(input, key, kind)
      tables = { left: WindowMachines::VersionedTable.new(5 * 60 * 1000),
                 right: WindowMachines::VersionedTable.new(5 * 60 * 1000) }
      input.map do |side, value, at|
        this = tables.fetch(side)
        old = this.get(key)
        next unless update_latest?(this, key, value, at)

        other, other_from = tables.fetch(side == :left ? :right : :left).version(key)
        left_value, right_value = side == :left ? [value, other] : [other, value]
        emit = case kind
               when :inner then !other.nil?
               when :left then side == :left ? !(other.nil? && value.nil? && old.nil?) : !other.nil?
               when :outer then !(other.nil? && value.nil? && old.nil?)
               end
        next unless emit

        result = if kind == :outer || (kind == :left && side == :right)
                   joined(left_value, right_value) unless left_value.nil? && right_value.nil?
                 else
                   joined(left_value, right_value) unless value.nil?
                 end
        [result, other.nil? ? at : [at, other_from].max]
      end
    end

    it "StreamTableJoinIntegrationTest#testInnerWithVersionedStore: the table as of the stream record" do
      expect(emitted(stream_table_join(input, key, left_join: false)))
        .to eq(5 => ["B-a", 5], 15 => ["D-b", 6], 19 => ["E-e", 15], 22 => ["F-a", 4])
    end

    it "StreamTableJoinIntegrationTest#testLeftWithVersionedStore" do
      expect(emitted(stream_table_join(input, key, left_join: true)))
        .to eq(3 => ["A-null", 3], 5 => ["B-a", 5], 9 => ["C-null", 9], 15 => ["D-b", 6], 19 => ["E-e", 15],
               22 => ["F-a", 4])
    end

    it "StreamTableJoinIntegrationTest: the out-of-order table records answer from their own timestamps" do
      table = WindowMachines::VersionedTable.new(5 * 60 * 1000)
      input.each do |topic, value, at|
        next unless topic == :right

        value.nil? ? table.delete(key, at) : table.put(key, value, at)
      end
      # d@7 (under the tombstone at 8) and f@3 (replacing the tombstone at 3):
      # the non-versioned join sees d and f as the latest (testInner: D-d).
      expect_as_of(table, key, 6 => ["b", 6, 7], 7 => ["d", 7, 8], 3 => ["f", 3, 4], 4 => ["a", 4, 6])
      expect_latest(table, key, "e", 14)
    end

    it "TableTableJoinIntegrationTest#testInnerWithVersionedStores: out-of-order updates emit nothing" do
      expect(emitted(table_table_join(input, key, :inner)))
        .to eq(4 => ["A-a", 4], 5 => ["B-a", 5], 6 => ["B-b", 6], 7 => [nil, 7], 10 => ["C-c", 10],
               11 => [nil, 11], 19 => ["E-e", 15])
    end

    it "TableTableJoinIntegrationTest#testLeftWithVersionedStores" do
      expect(emitted(table_table_join(input, key, :left)))
        .to eq(3 => ["A-null", 3], 4 => ["A-a", 4], 5 => ["B-a", 5], 6 => ["B-b", 6], 7 => [nil, 7],
               9 => ["C-null", 9], 10 => ["C-c", 10], 11 => ["C-null", 11], 12 => [nil, 12], 19 => ["E-e", 15])
    end

    it "TableTableJoinIntegrationTest#testOuterWithVersionedStores" do
      expect(emitted(table_table_join(input, key, :outer)))
        .to eq(3 => ["A-null", 3], 4 => ["A-a", 4], 5 => ["B-a", 5], 6 => ["B-b", 6], 7 => ["null-b", 7],
               8 => [nil, 8], 9 => ["C-null", 9], 10 => ["C-c", 10], 11 => ["C-null", 11], 12 => [nil, 12],
               18 => ["null-e", 14], 19 => ["E-e", 15])
    end

    it "KTableKTableForeignKeyJoinIntegrationTest#shouldIgnoreOutOfOrderRecordsIffVersioned (both versioned)" do
      left = WindowMachines::VersionedTable.new(retention)
      right = WindowMachines::VersionedTable.new(retention)
      result = lambda do |lhs|
        value = left.get(lhs)
        other = value && right.get(value.split("|").last)
        "(#{value},#{other})" if other
      end
      on_left = ->(lhs, value, at) { update_latest?(left, lhs, value, at) ? { lhs => result.call(lhs) } : {} }
      on_right = lambda do |rhs, value, at|
        next {} unless update_latest?(right, rhs, value, at)

        %w[lhs1 lhs2].select { |lhs| left.get(lhs)&.end_with?("|#{rhs}") }.to_h { |lhs| [lhs, result.call(lhs)] }
      end

      expect(on_right.call("rhs1", "rhsValue1", 4)).to eq({}) # RHS record
      # LHS records with match to existing RHS record
      expect(on_left.call("lhs1", "lhsValue1|rhs1", 3).merge(on_left.call("lhs2", "lhsValue2|rhs1", 5)))
        .to eq("lhs1" => "(lhsValue1|rhs1,rhsValue1)", "lhs2" => "(lhsValue2|rhs1,rhsValue1)")
      # replace with tombstone, to validate behavior when latest record is null
      expect(on_left.call("lhs2", nil, 6)).to eq("lhs2" => nil)
      # out-of-order LHS record (for existing key) does not produce a new result iff LHS is versioned
      expect(on_left.call("lhs1", "lhsValue1_ooo|rhs1", 2).merge(on_left.call("lhs2", "lhsValue2_ooo|rhs1", 2)))
        .to eq({})
      expect([left.version("lhs1", 2), left.version("lhs2", 2)])
        .to eq([["lhsValue1_ooo|rhs1", 2, 3], ["lhsValue2_ooo|rhs1", 2, 5]])
      # out-of-order LHS tombstone (for existing key) is similarly ignored
      expect(on_left.call("lhs1", nil, 2)).to eq({})
      expect(%w[lhs1 lhs2].to_h { |lhs| [lhs, result.call(lhs)] })
        .to eq("lhs1" => "(lhsValue1|rhs1,rhsValue1)", "lhs2" => nil) # the materialized store
      # LHS record with larger timestamp always produces a new result
      expect(on_left.call("lhs1", "lhsValue1_new|rhs1", 8).merge(on_left.call("lhs2", "lhsValue2_new|rhs1", 8)))
        .to eq("lhs1" => "(lhsValue1_new|rhs1,rhsValue1)", "lhs2" => "(lhsValue2_new|rhs1,rhsValue1)")
      # out-of-order RHS record and tombstone (for existing key) do not produce a new result
      expect(on_right.call("rhs1", "rhsValue1_ooo", 1).merge(on_right.call("rhs1", nil, 1))).to eq({})
      # RHS record with larger timestamps always produces new results
      expect(on_right.call("rhs1", "rhsValue1_new", 6))
        .to eq("lhs1" => "(lhsValue1_new|rhs1,rhsValue1_new)", "lhs2" => "(lhsValue2_new|rhs1,rhsValue1_new)")
    end
  end
end
