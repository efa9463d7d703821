# frozen_string_literal: true

# Quix Streams' expectations for tumbling and hopping time windows, translated
# to TumblingWindows and HoppingWindows. Sources (quixio/quix-streams):
# tests/test_quixstreams/test_dataframe/test_windows/test_tumbling.py and
# tests/test_quixstreams/test_dataframe/test_windows/test_hopping.py.
#
# Quix returns the windows an event updated and the windows it expired; we
# check the expired ones with each_closed after every add, and the updated
# ones with current(key).
#
# Semantic differences:
# 1. Quix's closing_strategy="key" expires a key's windows by that key's own
#    latest timestamp; our stream time is shared by all keys (Quix's
#    "partition" strategy). test_tumbling_partition_expiration_to_key expects
#    key3@115 to expire nothing of key1; here it closes key1's and key2's [100, 110).
# 2. Quix refuses step == duration for hopping windows
#    (test_hopping_window_def_init_invalid); HoppingWindows allows advance == size.
# 3. Quix's Collect lists values in arrival order; ours in event-time order
#    (the same in these tests, where arrivals are in time order).
# 4. Quix's Mean of Integers may come back an Integer in updates; ours is a Float.
# 5. before_update/after_update triggers and count-based windows have no counterpart.
RSpec.describe "Peers: Quix Streams time windows" do
  agg = WindowMachines::Aggregate

  def step(tracker, key, value, at)
    tracker.add(key, at, value)
    tracker.each_closed.to_a
  end

  describe "tumbling (test_tumbling.py)" do
    it "test_multiaggregation: count, sum, mean, max, min and collect of [0, 10)" do
      tracker = WindowMachines::TumblingWindows.new(
        10, aggregate: { count: agg::Count.new, sum: agg::Sum.new, mean: agg::Mean.new, max: agg::Max.new,
                         min: agg::Min.new, collect: agg::Collect.new }
      )
      expect(step(tracker, "key", 1, 2)).to eq([])
      expect(tracker.current("key")).to eq([[0, 10, { count: 1, sum: 1, mean: 1.0, max: 1, min: 1, collect: [1] }]])
      expect(step(tracker, "key", 4, 4)).to eq([])
      expect(step(tracker, "key", 2, 12))
        .to eq([["key", 0, 10, { count: 2, sum: 5, mean: 2.5, max: 4, min: 1, collect: [1, 4] }]])
      expect(tracker.current("key")).to eq([[10, 20, { count: 1, sum: 2, mean: 2.0, max: 2, min: 2, collect: [2] }]])
    end

    it "test_tumblingwindow_count / _sum / _mean / _max / _min with grace 5" do
      { agg::Count.new => 2, agg::Sum.new => 3, agg::Mean.new => 1.5, agg::Max.new => 2, agg::Min.new => 1 }
        .each do |aggregate, expected|
          tracker = WindowMachines::TumblingWindows.new(10, grace: 5, aggregate: aggregate)
          step(tracker, "key", 2, 100)
          expect(step(tracker, "key", 1, 100)).to eq([])
          expect(tracker.current("key")).to eq([[100, 110, expected]])
        end
    end

    it "test_tumblingwindow_collect: [100, 110) closes at 200 with [1, 2, 3]" do
      tracker = WindowMachines::TumblingWindows.new(10, grace: 5, aggregate: agg::Collect.new)
      [[1, 100], [2, 100], [3, 101]].each { |value, at| step(tracker, "key", value, at) }
      expect(step(tracker, "key", 4, 200)).to eq([["key", 100, 110, [1, 2, 3]]])
    end

    it "test_tumbling_window_process_window_expired: grace 0, [100, 110) closes at 110" do
      tracker = WindowMachines::TumblingWindows.new(10, aggregate: agg::Sum.new)
      expect(step(tracker, "key", 1, 100)).to eq([])
      expect(tracker.current("key")).to eq([[100, 110, 1]])
      expect(step(tracker, "key", 2, 110)).to eq([["key", 100, 110, 1]])
      expect(tracker.current("key")).to eq([[110, 120, 2]])
    end

    it "test_tumbling_partition_expiration: grace 2, an older key2 event is accepted, then both close" do
      tracker = WindowMachines::TumblingWindows.new(10, grace: 2, aggregate: agg::Sum.new)
      [["key1", 1, 100], ["key1", 3, 105], ["key2", 5, 102], ["key2", 7, 108]].each { |k, v, at| step(tracker, k, v, at) }
      expect(step(tracker, "key1", 2, 110)).to eq([])
      expect(tracker.current("key1")).to eq([[100, 110, 4], [110, 120, 2]])
      expect(step(tracker, "key2", 2, 109)).to eq([])
      expect(tracker.current("key2")).to eq([[100, 110, 14]])
      expect(step(tracker, "key1", 2, 112)).to eq([["key1", 100, 110, 4], ["key2", 100, 110, 14]])
      expect(tracker.current("key1")).to eq([[110, 120, 4]])
    end

    it "test_tumbling_key_expiration_to_partition (partition part): key3@115 closes key1 and key2" do
      tracker = WindowMachines::TumblingWindows.new(10, aggregate: agg::Sum.new)
      [["key1", 100], ["key2", 102], ["key2", 105], ["key1", 106], ["key1", 107], ["key2", 108]]
        .each { |k, at| step(tracker, k, 1, at) }
      expect(step(tracker, "key3", 1, 115)).to eq([["key1", 100, 110, 3], ["key2", 100, 110, 3]])
      expect(tracker.current("key3")).to eq([[110, 120, 1]])
    end

    it "test_tumbling_partition_expiration_to_key: differs, stream time is shared (difference 1)" do
      tracker = WindowMachines::TumblingWindows.new(10, aggregate: agg::Sum.new)
      [["key1", 100], ["key2", 102], ["key2", 105], ["key1", 106], ["key1", 107], ["key2", 108]]
        .each { |k, at| step(tracker, k, 1, at) }
      # Quix ("key" strategy) expects nothing expired here, and key1's window
      # only at key1@116.
      expect(step(tracker, "key3", 1, 115)).to eq([["key1", 100, 110, 3], ["key2", 100, 110, 3]])
      expect(step(tracker, "key1", 1, 116)).to eq([])
    end
  end

  describe "hopping (test_hopping.py)" do
    it "test_multiaggregation: size 10, step 5" do
      tracker = WindowMachines::HoppingWindows.new(
        10, 5, aggregate: { count: agg::Count.new, sum: agg::Sum.new, mean: agg::Mean.new, max: agg::Max.new,
                            min: agg::Min.new, collect: agg::Collect.new }
      )
      expect(step(tracker, "key", 1, 2)).to eq([])
      expect(tracker.current("key").map(&:first)).to eq([0]) # no window starts below 0
      expect(step(tracker, "key", 4, 6)).to eq([])
      expect(step(tracker, "key", 2, 12))
        .to eq([["key", 0, 10, { count: 2, sum: 5, mean: 2.5, max: 4, min: 1, collect: [1, 4] }]])
      expect(tracker.current("key")).to eq(
        [[5, 15, { count: 2, sum: 6, mean: 3.0, max: 4, min: 2, collect: [4, 2] }],
         [10, 20, { count: 1, sum: 2, mean: 2.0, max: 2, min: 2, collect: [2] }]]
      )
      expect(step(tracker, "key", 1, 16))
        .to eq([["key", 5, 15, { count: 2, sum: 6, mean: 3.0, max: 4, min: 2, collect: [4, 2] }]])
    end

    it "test_hoppingwindow_count / _sum / _mean / _max / _min / _reduce: both windows of 100" do
      tracker = WindowMachines::HoppingWindows.new(10, 5, aggregate: { count: agg::Count.new, sum: agg::Sum.new,
                                                                         mean: agg::Mean.new, all: agg::Collect.new })
      step(tracker, "key", 2, 100)
      step(tracker, "key", 1, 100)
      result = { count: 2, sum: 3, mean: 1.5, all: [2, 1] }
      expect(tracker.current("key")).to eq([[95, 105, result], [100, 110, result]])
    end

    it "test_hoppingwindow_collect: both windows close at 110 with [1, 2, 3]" do
      tracker = WindowMachines::HoppingWindows.new(10, 5, aggregate: agg::Collect.new)
      [[1, 100], [2, 100], [3, 101]].each { |value, at| step(tracker, "key", value, at) }
      expect(step(tracker, "key", 4, 110)).to eq([["key", 95, 105, [1, 2, 3]], ["key", 100, 110, [1, 2, 3]]])
    end

    it "test_hopping_partition_expiration: grace 2" do
      tracker = WindowMachines::HoppingWindows.new(10, 5, grace: 2, aggregate: agg::Sum.new)
      [["key1", 1, 100], ["key1", 3, 106], ["key2", 5, 102]].each { |k, v, at| step(tracker, k, v, at) }
      # Quix does not check this step's expiry; [95, 105) closes here (watermark 106).
      expect(step(tracker, "key2", 7, 108)).to eq([["key1", 95, 105, 1], ["key2", 95, 105, 5]])
      expect(step(tracker, "key1", 2, 110)).to eq([])
      expect(tracker.current("key1")).to eq([[100, 110, 4], [105, 115, 5], [110, 120, 2]])
      expect(step(tracker, "key2", 2, 109)).to eq([])
      expect(tracker.current("key2")).to eq([[100, 110, 14], [105, 115, 9]])
      expect(step(tracker, "key1", 3, 112)).to eq([["key1", 100, 110, 4], ["key2", 100, 110, 14]])
      expect(tracker.current("key1")).to eq([[105, 115, 8], [110, 120, 5]])
    end

    it "test_hopping_key_expiration_to_partition (partition part): key3@114" do
      tracker = WindowMachines::HoppingWindows.new(10, 5, aggregate: agg::Sum.new)
      [["key1", 100], ["key2", 102], ["key2", 105], ["key1", 106], ["key1", 107], ["key2", 108]]
        .each { |k, at| step(tracker, k, 1, at) }
      expect(step(tracker, "key3", 1, 114)).to eq([["key1", 100, 110, 3], ["key2", 100, 110, 3]])
      expect(tracker.current("key3")).to eq([[105, 115, 1], [110, 120, 1]])
    end

    it "test_hopping_window_def_init_invalid: step 0 and step > duration refused; step == duration allowed here" do
      expect { WindowMachines::HoppingWindows.new(10, 0, aggregate: agg::Sum.new) }
        .to raise_error(WindowMachines::ArgumentError)
      expect { WindowMachines::HoppingWindows.new(10, 11, aggregate: agg::Sum.new) }
        .to raise_error(WindowMachines::ArgumentError)
      expect(WindowMachines::HoppingWindows.new(10, 10, aggregate: agg::Sum.new).advance).to eq(10) # difference 2
    end
  end
end
