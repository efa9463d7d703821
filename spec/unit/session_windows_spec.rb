# frozen_string_literal: true

require "json"

RSpec.describe WindowMachines::SessionWindows do
  agg = WindowMachines::Aggregate

  subject(:sessions) { described_class.new(5, grace: 20, aggregate: agg::Collect.new, on_late: :drop) }

  def state_of(tracker, key)
    [tracker.current(key), tracker.size, tracker.key_count, tracker.late_count, tracker.watermark]
  end

  describe ".new" do
    it "has readers and refuses bad arguments", :mistyped do
      tracker = described_class.new(30, grace: 4, max_sessions: 9, aggregate: agg::Count.new)
      expect([tracker.gap, tracker.grace, tracker.max_sessions]).to eq([30, 4, 9])
      expect(sessions.max_sessions).to be_nil
      expect_gem_error(WindowMachines::ArgumentError, /gap/) { described_class.new(0, aggregate: agg::Count.new) }
      expect_gem_error(WindowMachines::TypeError, /gap/) { described_class.new(1.5, aggregate: agg::Count.new) }
      expect_gem_error(WindowMachines::RangeError, /gap/) { described_class.new(-1, aggregate: agg::Count.new) }
      expect_gem_error(WindowMachines::ArgumentError, /max_sessions/) do
        described_class.new(5, max_sessions: 0, aggregate: agg::Count.new)
      end
      expect_gem_error(WindowMachines::ArgumentError, nil) do
        described_class.new(5, aggregate: agg::Count.new, watermark: :wall_clock)
      end
      unmergeable = Struct.new(:initial) { def add(acc, _value) = acc }.new(0)
      expect_gem_error(WindowMachines::ArgumentError,
                       /it lacks merge \(sessions and hopping windows merge accumulators\)/) do
        described_class.new(5, aggregate: unmergeable)
      end
    end
  end

  it "joins events within the gap, inclusive, and merges sessions an event bridges" do
    sessions.add(:k, 10, :a)
    sessions.add(:k, 15, :b) # exactly one gap apart: joins
    sessions.add(:k, 21, :c) # six apart: a new session
    expect(sessions.current(:k)).to eq([[10, 15, %i[a b]], [21, 21, [:c]]])
    sessions.add(:k, 18, :d) # within 5 of 15 and of 21
    expect(sessions.current(:k)).to eq([[10, 21, %i[a b d c]]])
    expect(sessions.size).to eq(1)
  end

  it "puts the stream watermark at T - grace - 1: an event at T is never late" do
    tracker = described_class.new(5, grace: 2, aggregate: agg::Count.new, on_late: :drop)
    tracker.add(:k, 2)
    expect(tracker.watermark).to be_nil # 2 - 2 - 1 < 0
    tracker.add(:k, 3)
    expect(tracker.watermark).to eq(0)
    tracker.add(:j, 20)
    expect(tracker.watermark).to eq(17)
    expect(tracker.add(:j, 20)).to be(true)
    expect(tracker.add(:x, 18)).to be(true)
    expect(tracker.add(:x, 17)).to be(false)
    expect(tracker.late_count).to eq(1)
  end

  it "closes a session once last + gap is at or below the watermark (last + gap + grace < T)" do
    tracker = described_class.new(5, grace: 2, aggregate: agg::Count.new)
    tracker.add(:k, 10)
    tracker.add(:j, 17) # 10 + 5 + 2 = 17, not below 17
    expect(tracker.take_closed).to be_nil
    tracker.add(:j, 18)
    expect(tracker.take_closed).to eq([:k, 10, 10, 1])
    expect(tracker.current(:k)).to eq([])
    expect(tracker.key_count).to eq(1)
  end

  it "follows a manual watermark M - grace" do
    tracker = described_class.new(5, grace: 3, aggregate: agg::Count.new, watermark: :manual)
    tracker.add(:k, 100)
    expect(tracker.advance_watermark(2)).to be(true)
    expect(tracker.watermark).to be_nil # 2 - 3 < 0
    tracker.advance_watermark(13)
    expect(tracker.watermark).to eq(10)
    expect { tracker.add(:k, 10) }.to raise_error(WindowMachines::LateEventError) { |error|
      expect([error.timestamp, error.watermark, error.key]).to eq([10, 10, :k])
    }
    expect(tracker.add(:k, 11)).to be(true)
    expect(tracker.late_count).to eq(1)
    expect_gem_error(WindowMachines::ArgumentError, nil) { sessions.advance_watermark(1) }
  end

  it "hands over as KeyedSessions does: by last event, then first, then the key held longest" do
    tracker = described_class.new(5, aggregate: agg::Count.new, watermark: :manual)
    [["b", 4], ["a", 1], ["a", 4], ["c", 9], ["b", 30]].each { |key, at| tracker.add(key, at) }
    tracker.advance_watermark(100)
    expect(tracker.each_closed.to_a).to eq([["a", 1, 4, 2], ["b", 4, 4, 1], ["c", 9, 9, 1], ["b", 30, 30, 1]])
    [["x", 7], ["w", 7]].each { |key, at| tracker.add(key, at + 200) }
    tracker.advance_watermark(300)
    expect(tracker.each_closed.to_a.map(&:first)).to eq(%w[x w])
  end

  it "holds 32 sessions per key and max_sessions in all, changing nothing when refused" do
    tracker = described_class.new(1, aggregate: agg::Count.new, max_sessions: 40)
    32.times { |n| tracker.add(:k, n * 10) }
    before = state_of(tracker, :k)
    expect_gem_error(WindowMachines::CapacityError, nil) { tracker.add(:k, 1_000) }
    expect(state_of(tracker, :k)).to eq(before)
    expect(tracker.add(:k, 311)).to be(true) # grows a held session
    8.times { |n| tracker.add(n, 2_000) }
    expect_gem_error(WindowMachines::CapacityError, nil) { tracker.add(:other, 2_000) }
    expect(tracker.size).to eq(40)
  end

  it "merges results when sessions merge, and a raising custom merge changes nothing" do
    summing = Class.new do
      def initial = 0
      def add(acc, value) = acc + value
      def merge(one, other) = one + other > 100 ? raise(IOError, "too big") : one + other
    end.new
    tracker = described_class.new(5, grace: 50, aggregate: { sum: summing, first: agg::First.new, n: agg::Count.new })
    tracker.add(:k, 10, 1)
    tracker.add(:k, 20, 2)
    tracker.add(:k, 15, 3)
    expect(tracker.current(:k)).to eq([[10, 20, { sum: 6, first: 1, n: 3 }]])
    tracker.add(:k, 30, 99)
    before = state_of(tracker, :k)
    expect { tracker.add(:k, 25, 0) }.to raise_error(IOError, "too big")
    expect(state_of(tracker, :k)).to eq(before)
  end

  # Within a session equal inputs keep the earlier arrival; when an event
  # bridges two sessions, the earlier session's (in event time) is kept,
  # whichever arrived first: merged accumulators no longer know arrivals.
  it "keeps the earlier session's input for Min ties across a merge" do
    tracker = described_class.new(5, grace: 50, aggregate: agg::Min.new)
    tracker.add(:k, 20, 1.0)
    tracker.add(:k, 10, 1)
    tracker.add(:k, 15, 7)
    expect(tracker.current(:k)).to eq([[10, 20, 1]])
    expect(tracker.current(:k).first.last).to be_a(Integer)
    tracker.add(:k, 21, 1.0)
    expect(tracker.current(:k).first.last).to be_a(Integer)
  end

  it "refuses when frozen and copies with dup" do
    sessions.add(:k, 1, :a)
    copy = sessions.dup
    copy.add(:k, 3, :b)
    expect(sessions.current(:k)).to eq([[1, 1, [:a]]])
    sessions.freeze
    expect_frozen_error(sessions) { sessions.add(:k, 2, :c) }
    expect_frozen_error(sessions) { sessions.take_closed }
    expect(sessions.current(:k)).to eq([[1, 1, [:a]]])
    expect(copy.flush.to_a).to eq([[:k, 1, 3, %i[a b]]])
  end

  describe "LateEventError readers on the older trackers" do
    it "Sessions#insert gives timestamp and watermark, and a nil key" do
      tracker = WindowMachines::Sessions.new(5)
      tracker.advance_watermark(20)
      expect { tracker.insert(20) }.to raise_error(WindowMachines::LateEventError) { |error|
        expect([error.timestamp, error.watermark, error.key]).to eq([20, 20, nil])
      }
    end

    it "KeyedSessions#insert gives timestamp, watermark and key" do
      tracker = WindowMachines::KeyedSessions.new(5)
      tracker.advance_watermark(20)
      expect { tracker.insert("acme", 7) }.to raise_error(WindowMachines::LateEventError) { |error|
        expect([error.timestamp, error.watermark, error.key]).to eq([7, 20, "acme"])
      }
    end
  end

  it "survives a JSON round trip of to_h and Marshal, merges still to come" do
    aggregate = { "n" => agg::Count.new, "paths" => agg::Collect.new("path"), "last" => agg::Last.new("path") }
    tracker = described_class.new(5, grace: 10, aggregate: aggregate, max_sessions: 10)
    [["ana", 1, "/"], ["ana", 4, "/a"], ["ana", 12, "/b"], ["ben", 3, "/x"]].each { |key, at, path| tracker.add(key, at, { "path" => path }) }
    restored = described_class.from_h(JSON.parse(JSON.generate(tracker.to_h)), aggregate: aggregate)
    marshalled = Marshal.load(Marshal.dump(tracker))
    [tracker, restored, marshalled].each { |copy| copy.add("ana", 8, { "path" => "/bridge" }) }
    expected = tracker.flush.to_a
    expect(expected.first).to eq(["ben", 3, 3, { "n" => 1, "paths" => ["/x"], "last" => "/x" }])
    expect(expected.last).to eq(["ana", 1, 12, { "n" => 4, "paths" => ["/", "/a", "/bridge", "/b"], "last" => "/b" }])
    expect(restored.flush.to_a).to eq(expected)
    expect(marshalled.flush.to_a).to eq(expected)
    expect([restored.max_sessions, restored.gap, restored.grace]).to eq([10, 5, 10])
    bad = tracker.to_h.merge(windows: [["ana", 1, 3, [2, [[1, "/"], [3, "/"]], [3, "/"]]],
                                       ["ana", 6, 9, [2, [[6, "/"], [9, "/"]], [9, "/"]]]])
    expect { described_class.from_h(bad, aggregate: aggregate) }.to raise_error(WindowMachines::ArgumentError, /more than the gap/)
    ahead = tracker.to_h.merge(time: 12, windows: [["ana", 1, 13, [2, [[1, "/"], [13, "/"]], [13, "/"]]]])
    expect { described_class.from_h(ahead, aggregate: aggregate) }
      .to raise_error(WindowMachines::ArgumentError, /held at 13 is after the stream time 12/)
    empty = tracker.to_h.merge(windows: [["ana", 1, 3, [0, [], nil]]])
    expect { described_class.from_h(empty, aggregate: aggregate) }.to raise_error(WindowMachines::ArgumentError, /count none/)
    # Both ends of a session are events: inserts cannot build one that lacks either.
    [[1, [[1, "/"], [3, "/"]], [3, "/"]], [2, [[2, "/"], [3, "/"]], [3, "/"]], [2, [[1, "/"], [3, "/"]], [2, "/"]]]
      .each do |accs|
        lacking = tracker.to_h.merge(windows: [["ana", 1, 3, accs]])
        expect { described_class.from_h(lacking, aggregate: aggregate) }
          .to raise_error(WindowMachines::ArgumentError, /lack an event at either end/)
      end
    one = tracker.to_h.merge(windows: [["ana", 3, 3, [1, [[3, "/"]], [3, "/"]]]])
    expect(described_class.from_h(one, aggregate: aggregate).current("ana")).to eq([[3, 3, { "n" => 1, "paths" => ["/"], "last" => "/" }]])
  end
end
