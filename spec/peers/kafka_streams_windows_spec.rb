# frozen_string_literal: true

# Kafka Streams' own expectations for windowed and session aggregation,
# translated to TumblingWindows, HoppingWindows and SessionWindows. Sources
# (apache/kafka, streams/src/test/java/org/apache/kafka/streams/kstream/internals/):
# KStreamWindowAggregateTest.java and KStreamSessionWindowAggregateProcessorTest.java.
#
# Kafka emits an updated result on every record (a KTable changelog); we hand
# a window over once, when it closes, so each translation checks the final
# value of every window, which is the last update Kafka emits for it.
#
# Semantic differences:
# 1. Late drops: Kafka counts a record once per expired window it would have
#    entered (dropped-records-total 7 in shouldLogAndMeterWhenSkippingExpiredWindow,
#    where records 5 and 6 still enter [5, 15)); late_count counts events that
#    entered no window at all (5 there).
# 2. Session lateness: Kafka drops a record only if its merged session ends
#    before streamTime - grace - gap (KStreamSessionWindowAggregate#process,
#    windowCloseTime); we refuse any event at or below T - grace - 1. Kafka is
#    one gap more lenient, and can merge a record into a session it already
#    treats as closed (shouldMergeSessions with no grace); we need grace > gap/2 there.
# 3. Both close a session once end + gap + grace < stream time, and a window
#    once end <= stream time - grace (Kafka: windowEnd > closeTime keeps it open).
# 4. Kafka's aggregator sees records in arrival order (the "0+2+2+2+1+2+3"
#    strings); Collect lists inputs in event-time order, so results are
#    compared with Count, Sum and Collect rather than a string concatenation.
# 5. Kafka skips null keys; nil is an ordinary key here.
RSpec.describe "Peers: Kafka Streams windowed aggregation" do
  agg = WindowMachines::Aggregate

  def feed(tracker, records)
    records.each { |key, value, at| tracker.add(key, at, value) }
    tracker
  end

  # KStreamWindowAggregateTest#testAggBasic: TimeWindows.ofSizeAndGrace(10, 100).advanceBy(5).
  it "testAggBasic: hopping 10/5 with grace 100 takes every record, late ones too" do
    records = [["A", 1, 0], ["B", 2, 1], ["C", 3, 2], ["D", 4, 3], ["A", 1, 4],
               ["A", 1, 5], ["B", 2, 6], ["D", 4, 7], ["B", 2, 8], ["C", 3, 9],
               ["A", 1, 10], ["B", 2, 11], ["D", 4, 12], ["B", 2, 13], ["C", 3, 14],
               ["B", 1, 3], ["B", 2, 2], ["B", 3, 9]]
    tracker = WindowMachines::HoppingWindows.new(10, 5, grace: 100,
                                                        aggregate: { n: agg::Count.new, values: agg::Collect.new })
    feed(tracker, records)
    expect(tracker.late_count).to eq(0)
    final = tracker.flush.to_a.to_h { |key, start, finish, result| [[key, start, finish], result] }
    # Kafka's last update per window, e.g. B@[0,10) "0+2+2+2+1+2+3" (arrival
    # order); Collect gives event-time order.
    expect(final).to eq(
      ["A", 0, 10] => { n: 3, values: [1, 1, 1] }, ["A", 5, 15] => { n: 2, values: [1, 1] },
      ["A", 10, 20] => { n: 1, values: [1] },
      ["B", 0, 10] => { n: 6, values: [2, 2, 1, 2, 2, 3] }, ["B", 5, 15] => { n: 5, values: [2, 2, 3, 2, 2] },
      ["B", 10, 20] => { n: 2, values: [2, 2] },
      ["C", 0, 10] => { n: 2, values: [3, 3] }, ["C", 5, 15] => { n: 2, values: [3, 3] },
      ["C", 10, 20] => { n: 1, values: [3] },
      ["D", 0, 10] => { n: 2, values: [4, 4] }, ["D", 5, 15] => { n: 2, values: [4, 4] },
      ["D", 10, 20] => { n: 1, values: [4] }
    )
  end

  # KStreamWindowAggregateTest#testJoin, the topic2 table: same windows, records a..d.
  it "testJoin (topic2): records 13 ms behind stream time still land with grace 100" do
    records = [["A", "a", 0], ["B", "b", 1], ["C", "c", 2], ["D", "d", 20], ["A", "a", 20],
               ["A", "a", 5], ["B", "b", 6], ["D", "d", 7], ["D", "d", 18], ["A", "a", 21]]
    tracker = feed(WindowMachines::HoppingWindows.new(10, 5, grace: 100, aggregate: agg::Count.new), records)
    final = tracker.flush.to_a.to_h { |key, start, finish, count| [[key, start, finish], count] }
    expect(final).to eq(
      ["A", 0, 10] => 2, ["A", 5, 15] => 1, ["A", 15, 25] => 2, ["A", 20, 30] => 2,
      ["B", 0, 10] => 2, ["B", 5, 15] => 1, ["C", 0, 10] => 1,
      ["D", 0, 10] => 1, ["D", 5, 15] => 1, ["D", 10, 20] => 1, ["D", 15, 25] => 2, ["D", 20, 30] => 1
    )
  end

  # KStreamWindowAggregateTest#shouldLogAndMeterWhenSkippingExpiredWindow:
  # ofSizeAndGrace(10, 90).advanceBy(5); k@100, then k@0..6.
  it "shouldLogAndMeterWhenSkippingExpiredWindow: [0, 10) expired at stream time 100, [5, 15) not" do
    tracker = WindowMachines::HoppingWindows.new(10, 5, grace: 90, aggregate: agg::Collect.new, on_late: :drop)
    expect(tracker.add("k", 100, 100)).to be(true)
    expect((0..6).map { |at| tracker.add("k", at, at) }).to eq([false] * 5 + [true, true])
    expect(tracker.watermark).to eq(10) # Kafka's "expiration=[10] streamTime=[100]"
    # Difference 1: Kafka's dropped-records-total is 7 (5 and 6 each missed [0, 10)).
    expect(tracker.late_count).to eq(5)
    expect(tracker.flush.to_a).to eq([["k", 5, 15, [5, 6]], ["k", 95, 105, [100]], ["k", 100, 110, [100]]])
  end

  # KStreamWindowAggregateTest#shouldLogAndMeterWhenSkippingExpiredWindowByGrace:
  # ofSizeAndGrace(10, 90).advanceBy(10); k@200 then k@100..105 and k@6.
  it "shouldLogAndMeterWhenSkippingExpiredWindowByGrace: every record after k@200 is dropped" do
    tracker = WindowMachines::TumblingWindows.new(10, grace: 90, aggregate: agg::Collect.new, on_late: :drop)
    tracker.add("k", 200, 100)
    seen = [100, 101, 102, 103, 104, 105, 6].map { |at| tracker.add("k", at, at) }
    expect(seen).to all(be(false))
    expect(tracker.late_count).to eq(7) # one window each: Kafka's 7 as well
    expect(tracker.watermark).to eq(110) # "expiration=[110] streamTime=[200]"
    expect(tracker.flush.to_a).to eq([["k", 200, 210, [100]]])
  end
end

RSpec.describe "Peers: Kafka Streams session aggregation" do
  agg = WindowMachines::Aggregate
  gap = 5 * 60 * 1000 # GAP_MS

  # The test's aggregator counts records; its merger adds counts.
  def sessions(gap, grace: 0)
    WindowMachines::SessionWindows.new(gap, grace: grace, aggregate: WindowMachines::Aggregate::Count.new,
                                            on_late: :drop)
  end

  it "shouldCreateSingleSessionWhenWithinGap" do
    tracker = sessions(gap)
    tracker.add("john", 0)
    tracker.add("john", 500)
    expect(tracker.current("john")).to eq([[0, 500, 2]])
  end

  it "shouldUpdateSessionIfTheSameTime: an event at the stream time is never late" do
    tracker = sessions(gap)
    tracker.add("mel", 0)
    expect(tracker.add("mel", 0)).to be(true)
    expect(tracker.current("mel")).to eq([[0, 0, 2]])
  end

  it "shouldRemoveMergedSessionsFromStateStore / shouldImmediatelyForwardRemovedSessionsWhenMerging" do
    removed = sessions(gap)
    removed.add("a", 0)
    removed.add("a", 100)
    forwarded = sessions(gap)
    forwarded.add("a", 0)
    forwarded.add("a", 5)
    expect([removed.current("a"), removed.size]).to eq([[[0, 100, 2]], 1])
    expect([forwarded.current("a"), forwarded.size]).to eq([[[0, 5, 2]], 1])
  end

  it "shouldHaveMultipleSessionsForSameIdWhenTimestampApartBySessionGap: gap + 1 apart is a new session" do
    tracker = sessions(gap)
    [0, gap + 1, gap + 1, (2 * gap) + 2, (2 * gap) + 2, (2 * gap) + 2].each { |at| tracker.add("mel", at) }
    handed = tracker.each_closed.to_a + tracker.flush.to_a
    expect(handed).to eq([["mel", 0, 0, 1], ["mel", gap + 1, gap + 1, 2], ["mel", (2 * gap) + 2, (2 * gap) + 2, 3]])
  end

  it "shouldGetAggregatedValuesFromValueGetter" do
    tracker = sessions(gap)
    [0, gap + 1, gap + 1].each { |at| tracker.add("a", at) }
    expect(tracker.flush.to_a).to eq([["a", 0, 0, 1], ["a", gap + 1, gap + 1, 2]])
  end

  it "shouldHandleMultipleSessionsAndMerging: same sessions, and the same order" do
    tracker = sessions(gap)
    handed = []
    [["a", 0], ["b", 0], ["c", 0], ["d", 0], ["d", gap / 2], ["a", gap + 1], ["b", gap + 1],
     ["a", gap + 1 + (gap / 2)], ["c", gap + 1 + (gap / 2)]].each do |key, at|
      expect(tracker.add(key, at)).to be(true)
      tracker.each_closed { |*session| handed << session }
    end
    tracker.flush { |*session| handed << session }
    expect(handed).to eq([["a", 0, 0, 1], ["b", 0, 0, 1], ["c", 0, 0, 1], ["d", 0, gap / 2, 2],
                          ["b", gap + 1, gap + 1, 1], ["a", gap + 1, gap + 1 + (gap / 2), 2],
                          ["c", gap + 1 + (gap / 2), gap + 1 + (gap / 2), 1]])
  end

  it "shouldMergeSessions: needs grace past gap/2 here, where Kafka merges with no grace (difference 2)" do
    strict = sessions(gap)
    strict.add("mel", 0)
    strict.add("mel", gap + 1)
    # Kafka (ofInactivityGapWithNoGrace) merges this into [0, gap + 1] with count 3.
    expect(strict.add("mel", gap / 2)).to be(false)
    expect(strict.late_count).to eq(1)

    lenient = sessions(gap, grace: (gap / 2) + 1)
    [0, gap + 1, gap / 2].each { |at| lenient.add("mel", at) }
    expect(lenient.current("mel")).to eq([[0, gap + 1, 3]])
  end

  it "shouldLogAndMeterWhenSkippingLateRecordWithZeroGrace: gap 10, grace 0" do
    tracker = sessions(10)
    tracker.add("dummy", 0)
    expect(tracker.add("OnTime1", 0)).to be(true)
    tracker.add("dummy", 11)
    expect(tracker.add("Late1", 0)).to be(false) # Kafka: window=[0,0] expiration=[1] streamTime=[11]
    expect(tracker.late_count).to eq(1)
    # Difference 2: Kafka would accept a new record at 1..10 (its end is not
    # below 11 - 0 - 10 = 1); our watermark is 10.
    expect(tracker.add("Late2", 10)).to be(false)
    expect(tracker.add("OnTime2", 11)).to be(true)
  end

  it "shouldLogAndMeterWhenSkippingLateRecordWithNonzeroGrace: gap 10, grace 1" do
    tracker = sessions(10, grace: 1)
    tracker.add("dummy", 0)
    expect(tracker.add("OnTime1", 0)).to be(true)
    tracker.add("dummy", 11)
    # Kafka accepts OnTime2@0 (closeTime 11 - 1 - 10 = 0, end 0 is not below
    # it); our watermark is 11 - 1 - 1 = 9, so it is late (difference 2).
    expect(tracker.add("OnTime2", 0)).to be(false)
    tracker.add("dummy", 12)
    expect(tracker.add("Late1", 0)).to be(false) # late for both
    expect(tracker.late_count).to eq(2) # Kafka: 1 dropped
    expect(tracker.watermark).to eq(10)
  end
end
