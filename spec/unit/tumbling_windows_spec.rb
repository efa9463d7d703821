# frozen_string_literal: true

require "json"

RSpec.describe WindowMachines::TumblingWindows do
  agg = WindowMachines::Aggregate
  max = WindowMachinesSpec::MAX

  subject(:windows) { described_class.new(10, aggregate: agg::Count.new) }

  def state_of(tracker, *keys)
    [tracker.size, tracker.key_count, tracker.late_count, tracker.watermark, keys.map { |key| tracker.current(key) }]
  end

  describe ".new" do
    it "has readers for its configuration" do
      tracker = described_class.new(60, grace: 5, offset: 7, aggregate: agg::Sum.new)
      expect([tracker.window_size, tracker.grace, tracker.offset]).to eq([60, 5, 7])
      expect([windows.grace, windows.offset, windows.watermark, windows.late_count]).to eq([0, 0, nil, 0])
    end

    it "refuses bad sizes, grace and offsets", :mistyped do
      WindowMachinesSpec::NOT_INTEGERS.each do |bad|
        expect_gem_error(WindowMachines::TypeError, /size/) { described_class.new(bad, aggregate: agg::Count.new) }
        expect_gem_error(WindowMachines::TypeError, /grace/) do
          described_class.new(10, grace: bad, aggregate: agg::Count.new)
        end
        expect_gem_error(WindowMachines::TypeError, /offset/) do
          described_class.new(10, offset: bad, aggregate: agg::Count.new)
        end
      end
      WindowMachinesSpec::OUT_OF_RANGE.each do |bad|
        expect_gem_error(WindowMachines::RangeError, /size/) { described_class.new(bad, aggregate: agg::Count.new) }
        expect_gem_error(WindowMachines::RangeError, /grace/) do
          described_class.new(10, grace: bad, aggregate: agg::Count.new)
        end
      end
      expect_gem_error(WindowMachines::ArgumentError, /size/) { described_class.new(0, aggregate: agg::Count.new) }
      expect_gem_error(WindowMachines::ArgumentError, /offset/) do
        described_class.new(10, offset: 10, aggregate: agg::Count.new)
      end
      expect(described_class.new(10, offset: 9, aggregate: agg::Count.new).offset).to eq(9)
    end

    it "refuses unknown on_late and watermark modes", :mistyped do
      expect_gem_error(WindowMachines::ArgumentError, nil) do
        described_class.new(10, aggregate: agg::Count.new, on_late: :ignore)
      end
      expect_gem_error(WindowMachines::ArgumentError, nil) do
        described_class.new(10, aggregate: agg::Count.new, watermark: :event)
      end
      expect { described_class.new(10, aggregate: agg::Count.new, window: 3) }.to raise_error(::ArgumentError, /window/)
    end
  end

  describe "#add" do
    it "files each event in its window and returns true" do
      tracker = described_class.new(10, grace: 15, aggregate: agg::Count.new)
      expect(tracker.add("a", 12)).to be(true)
      expect(tracker.add("a", 19, :x)).to be(true)
      expect(tracker.add("a", 20)).to be(true)
      expect(tracker.add("b", 0)).to be(true) # watermark 5: [0, 10) is open
      expect(tracker.current("a")).to eq([[10, 20, 2], [20, 30, 1]])
      expect(tracker.current("b")).to eq([[0, 10, 1]])
      expect([tracker.size, tracker.key_count, tracker.watermark]).to eq([3, 2, 5])
    end

    it "moves the watermark to stream time less grace, never below 0 and never back" do
      tracker = described_class.new(10, grace: 5, aggregate: agg::Count.new)
      tracker.add(:k, 3)
      expect(tracker.watermark).to eq(0)
      tracker.add(:k, 27)
      expect(tracker.watermark).to eq(22)
      tracker.add(:k, 24)
      expect(tracker.watermark).to eq(22)
    end

    it "closes a window once its end is at or below the watermark" do
      tracker = described_class.new(10, grace: 2, aggregate: agg::Count.new)
      tracker.add(:k, 5)
      tracker.add(:k, 11)
      expect(tracker.take_closed).to be_nil # watermark 9, end 10
      tracker.add(:k, 12)
      expect(tracker.take_closed).to eq([:k, 0, 10, 1]) # watermark 10
    end

    it "takes an event while its window is open, grace included" do
      tracker = described_class.new(10, grace: 5, aggregate: agg::Collect.new, on_late: :drop)
      tracker.add(:k, 14, :a)
      tracker.add(:k, 24, :b) # watermark 19
      expect(tracker.add(:k, 10, :c)).to be(true) # [10, 20) still open
      tracker.add(:k, 25, :d) # watermark 20: [10, 20) closes
      expect(tracker.add(:k, 19, :e)).to be(false)
      expect(tracker.late_count).to eq(1)
      expect(tracker.each_closed.to_a).to eq([[:k, 10, 20, %i[c a]]])
    end

    it "places windows at offset + k * size, starting at 0 or later" do
      tracker = described_class.new(10, offset: 3, aggregate: agg::Collect.new)
      [3, 12, 13, 22, 40].each { |at| tracker.add(:k, at, at) }
      expect(tracker.flush.to_a).to eq([[:k, 3, 13, [3, 12]], [:k, 13, 23, [13, 22]], [:k, 33, 43, [40]]])
    end

    it "raises RangeError when the window would end past 2**64-1, changing nothing" do
      tracker = described_class.new(10, aggregate: agg::Count.new)
      expect_gem_error(WindowMachines::RangeError, nil) { tracker.add(:k, max) }
      expect(state_of(tracker, :k)).to eq(state_of(described_class.new(10, aggregate: agg::Count.new), :k))
      top = described_class.new(5, aggregate: agg::Count.new) # 2**64-1 is a multiple of 5
      expect(top.add(:k, max - 1)).to be(true)
      expect(top.current(:k)).to eq([[max - 5, max, 1]])
    end

    it "refuses bad timestamps, checking the receiver first", :mistyped do
      windows.add(:k, 5)
      before = state_of(windows, :k)
      WindowMachinesSpec::NOT_INTEGERS.each do |bad|
        expect_gem_error(WindowMachines::TypeError, /timestamp/) { windows.add(:k, bad) }
      end
      WindowMachinesSpec::OUT_OF_RANGE.each do |bad|
        expect_gem_error(WindowMachines::RangeError, /timestamp/) { windows.add(:k, bad) }
      end
      expect(state_of(windows, :k)).to eq(before)
      windows.freeze
      expect_frozen_error(windows) { windows.add(:k, nil) }
    end
  end

  describe "late events" do
    def late_tracker(on_late)
      described_class.new(10, aggregate: WindowMachines::Aggregate::Sum.new, on_late: on_late).tap do |tracker|
        tracker.add("k", 25, 1)
      end
    end

    it "raise LateEventError by default, with timestamp, watermark and key, and are counted" do
      tracker = late_tracker(:raise)
      before = state_of(tracker, "k")
      expect_gem_error(WindowMachines::LateEventError, nil) { tracker.add("other", 19, 1) }
      begin
        tracker.add("other", 19, 1)
      rescue WindowMachines::LateEventError => e
        expect([e.timestamp, e.watermark, e.key]).to eq([19, 25, "other"])
      end
      expect(tracker.late_count).to eq(2)
      after = state_of(tracker, "k")
      expect(after.values_at(0, 1, 3, 4)).to eq(before.values_at(0, 1, 3, 4))
      expect(tracker.key_count).to eq(1)
    end

    it "are dropped with on_late: :drop, add returning false" do
      tracker = late_tracker(:drop)
      expect(tracker.add("k", 0, 100)).to be(false)
      expect(tracker.add("k", 20, 100)).to be(true) # [20, 30) is open
      expect(tracker.late_count).to eq(1)
      expect(tracker.current("k")).to eq([[20, 30, 101]])
    end

    it "go to a callable with key, timestamp, value and watermark; its result is ignored" do
      seen = []
      tracker = late_tracker(->(*args) { seen << args and true })
      expect(tracker.add("x", 3, { v: 1 })).to be(false)
      expect(seen).to eq([["x", 3, { v: 1 }, 25]])
      expect([tracker.late_count, tracker.key_count, tracker.size]).to eq([1, 1, 1])
    end
  end

  describe "manual watermark" do
    let(:manual) { described_class.new(10, grace: 3, aggregate: agg::Count.new, watermark: :manual) }

    it "follows advance_watermark less grace, not the events" do
      manual.add(:k, 50)
      expect(manual.watermark).to be_nil
      manual.add(:k, 5) # nothing closed yet: [0, 10) takes it
      expect(manual.advance_watermark(13)).to be(true)
      expect(manual.watermark).to eq(10)
      expect(manual.advance_watermark(12)).to be(false)
      expect(manual.watermark).to eq(10)
      expect(manual.each_closed.to_a).to eq([[:k, 0, 10, 1]])
      expect { manual.add(:k, 9) }.to raise_error(WindowMachines::LateEventError)
    end

    it "is refused in stream mode and checks its argument first", :mistyped do
      expect_gem_error(WindowMachines::ArgumentError, nil) { windows.advance_watermark(5) }
      expect_gem_error(WindowMachines::TypeError, /timestamp/) { windows.advance_watermark(1.5) }
      expect_gem_error(WindowMachines::TypeError, /timestamp/) { manual.advance_watermark(nil) }
      expect_gem_error(WindowMachines::RangeError, /timestamp/) { manual.advance_watermark(-1) }
      expect(manual.watermark).to be_nil
      manual.freeze
      expect_frozen_error(manual) { manual.advance_watermark(1) }
    end
  end

  describe "handing over" do
    before do
      # "b" is held before "a"; both [0, 10) windows close together.
      [["b", 1], ["a", 2], ["a", 4], ["b", 12], ["a", 15], ["c", 31]].each { |key, at| windows.add(key, at) }
    end

    it "orders by end, then by the key held longest, then by start" do
      expect(windows.take_closed).to eq(["b", 0, 10, 1])
      expect(windows.each_closed.to_a).to eq([["a", 0, 10, 2], ["b", 10, 20, 1], ["a", 10, 20, 1]])
      expect(windows.take_closed).to be_nil
      expect([windows.size, windows.key_count]).to eq([1, 1])
    end

    it "each_closed yields key, start, end and result and returns self" do
      yielded = []
      expect(windows.each_closed { |*args| yielded << args }).to be(windows)
      expect(yielded.map(&:first)).to eq(%w[b a b a])
    end

    it "flush hands over everything held, closed or not, and returns self" do
      windows.take_closed
      handed = []
      expect(windows.flush { |*args| handed << args }).to be(windows)
      expect(handed).to eq([["a", 0, 10, 2], ["b", 10, 20, 1], ["a", 10, 20, 1], ["c", 30, 40, 1]])
      expect([windows.size, windows.key_count, windows.watermark]).to eq([0, 0, 31])
      expect(windows.flush.to_a).to eq([])
    end

    it "a released key is held anew, behind keys held since before" do
      windows.each_closed { nil }
      windows.add("b", 35)
      windows.add("c", 36)
      expect(windows.flush.to_a.map(&:first)).to eq(%w[c b])
    end
  end

  describe "current" do
    it "lists a key's open windows, oldest first, changing nothing" do
      tracker = described_class.new(10, grace: 20, aggregate: agg::Sum.new)
      [25, 3, 14].each { |at| tracker.add(:k, at, at) }
      before = state_of(tracker, :k)
      expect(tracker.current(:k)).to eq([[0, 10, 3], [10, 20, 14], [20, 30, 25]])
      expect(tracker.current(:nobody)).to eq([])
      expect(state_of(tracker, :k)).to eq(before)
    end
  end

  describe "keys" do
    it "match as Hash keys do, and an unfrozen String is held as a frozen copy" do
      name = String.new("acme")
      windows.add(name, 1)
      name << " corp"
      expect(windows.current("acme")).to eq([[0, 10, 1]])
      windows.add(1, 2)
      windows.add(1.0, 3)
      expect(windows.key_count).to eq(3)
      key = windows.flush.to_a.first.first
      expect(key).to eq("acme")
      expect(key).to be_frozen
    end
  end

  describe "freeze, dup and clone" do
    before { windows.add(:k, 3) && windows.add(:k, 14) }

    it "refuses every mutator on a frozen tracker and changes nothing" do
      before = state_of(windows, :k)
      windows.freeze
      expect_frozen_error(windows) { windows.add(:k, 15) }
      expect_frozen_error(windows) { windows.take_closed }
      expect_frozen_error(windows) { windows.each_closed { nil } }
      expect_frozen_error(windows) { windows.each_closed.to_a }
      expect_frozen_error(windows) { windows.flush { nil } }
      expect(state_of(windows, :k)).to eq(before)
      expect(windows.current(:k)).to eq([[10, 20, 1]])
    end

    it "copies into an independent tracker" do
      copy = windows.dup
      copy.add(:k, 15)
      copy.add(:j, 40)
      expect(windows.current(:k)).to eq([[10, 20, 1]])
      expect(windows.watermark).to eq(14)
      expect(copy.current(:k)).to eq([])
      expect(copy.flush.to_a).to eq([[:k, 0, 10, 1], [:k, 10, 20, 2], [:j, 40, 50, 1]])
      expect(windows.flush.to_a).to eq([[:k, 0, 10, 1], [:k, 10, 20, 1]])
      expect(windows.freeze.clone).to be_frozen
      expect(windows.dup).not_to be_frozen
    end
  end

  describe "equality" do
    def tracker(**options) = described_class.new(10, aggregate: WindowMachines::Aggregate::Count.new, **options)

    it "compares by class and state, aggregators and on_late included, as KeyedSessions does" do
      one = tracker
      other = tracker
      expect(one).to eq(other)
      one.add(1, 3)
      expect(one).not_to eq(other)
      other.add(1, 3)
      expect([one == other, one.eql?(other), one.hash == other.hash]).to eq([true, true, true])
      one.add(2, 4)
      other.add(2.0, 4)
      expect(one).not_to eql(other) # keys compare as Hash keys do: 2 is not 2.0
      expect(tracker(on_late: :drop)).not_to eq(tracker)
      expect(tracker).not_to eq(described_class.new(10, aggregate: agg::Sum.new))
      expect(tracker).not_to eq(WindowMachines::HoppingWindows.new(10, 10, aggregate: agg::Count.new))
      expect(one.dup).to eq(one)
      expect(Marshal.load(Marshal.dump(one))).to eq(one)
    end

    it "is equal to itself holding a NaN aggregate, as an Array holding one is, and so found as a Hash key" do
      nan = described_class.new(10, aggregate: agg::Sum.new)
      nan.add(:k, 1, Float::NAN)
      expect([nan == nan, nan.eql?(nan), { nan => 1 }[nan]]).to eq([true, true, 1])
    end
  end

  describe "checkpoints" do
    let(:aggregate) { { "n" => agg::Count.new, "sum" => agg::Sum.new("v"), "all" => agg::Collect.new("v"), "first" => agg::First.new("v"), "mean" => agg::Mean.new("v") } }

    def filled(aggregate)
      tracker = described_class.new(10, grace: 5, offset: 2, aggregate: aggregate, on_late: :drop)
      [["a", 5, 1], ["b", 13, 2**70], ["a", 27, 3.5], ["a", 3, 9]].each { |key, at, v| tracker.add(key, at, { "v" => v }) }
      tracker
    end

    it "survive a JSON round trip of to_h and Marshal, and go on identically" do
      tracker = filled(aggregate)
      restored = described_class.from_h(JSON.parse(JSON.generate(tracker.to_h)), aggregate: aggregate, on_late: :drop)
      marshalled = Marshal.load(Marshal.dump(tracker))
      [tracker, restored, marshalled].each { |copy| copy.add("b", 30, { "v" => 4 }) }
      expected = tracker.flush.to_a
      expect(expected.size).to eq(4)
      expect(restored.flush.to_a).to eq(expected)
      expect(marshalled.flush.to_a).to eq(expected)
      expect([restored.late_count, restored.window_size, restored.grace, restored.offset]).to eq([1, 10, 5, 2])
    end

    it "refuse custom aggregators and non-JSON keys in to_h, and carry them through Marshal" do
      custom = Class.new do
        def initial = []
        def add(acc, value) = acc + [value]
      end
      tracker = described_class.new(10, aggregate: custom.new)
      tracker.add(:k, 1, "x")
      expect { tracker.to_h }.to raise_error(WindowMachines::TypeError, /use Marshal/)
      stub_const("CheckpointCustom", custom)
      tracker = described_class.new(10, aggregate: CheckpointCustom.new)
      tracker.add(:k, 1, "x")
      expect(Marshal.load(Marshal.dump(tracker)).flush.to_a).to eq([[:k, 0, 10, ["x"]]])
    end

    it "refuse what no stream of events could have made" do
      checkpoint = filled(aggregate).to_h
      bad = {
        [["a", 3, 13, [1, 0, [[3, 0]], [3, 0], [0, 0]]]] => [WindowMachines::ArgumentError, /nothing held can start at 3/],
        [["a", 2, 12, [1, 0, [[40, 1]], nil, [0, 0]]]] => [WindowMachines::ArgumentError, /do not match/],
        [["a", 12, 22, [1, 0, [[12, 0]], [12, 0], [0, 0]]], ["a", 2, 12, [1, 0, [[2, 0]], [2, 0], [0, 0]]]] =>
          [WindowMachines::ArgumentError, /sorted/],
        [["a", 2, 12, [1, 0, [], nil]]] => [WindowMachines::TypeError, /one state per aggregator/],
        [["a", 2, 12, [-1, 0, [], nil, [0, 0]]]] => [WindowMachines::RangeError, /count/]
      }
      bad.each do |windows, (error, message)|
        expect { described_class.from_h(checkpoint.merge(windows: windows), aggregate: aggregate) }.to raise_error(error, message)
      end
      expect { described_class.from_h(checkpoint, aggregate: agg::Count.new) }.to raise_error(WindowMachines::TypeError)
      expect { described_class.from_h(checkpoint.merge(extra: 1), aggregate: aggregate) }.to raise_error(WindowMachines::ArgumentError, /unknown key/)
    end

    it "refuse overlapping windows, which only HoppingWindows hold, through from_h and marshal_load alike" do
      hopping = WindowMachines::HoppingWindows.new(10, 5, aggregate: agg::Count.new)
      hopping.add("a", 7)
      message = /advance must equal its size, got size 10 and advance 5/
      expect { described_class.from_h(hopping.to_h, aggregate: agg::Count.new) }.to raise_error(WindowMachines::ArgumentError, message)
      expect { described_class.from_h(JSON.parse(JSON.generate(hopping.to_h)), aggregate: agg::Count.new) }
        .to raise_error(WindowMachines::ArgumentError, message)
      tracker = described_class.new(10, aggregate: agg::Count.new)
      tracker.add("b", 3)
      expect { tracker.marshal_load(hopping.marshal_dump) }.to raise_error(WindowMachines::ArgumentError, message)
      expect(tracker.current("b")).to eq([[0, 10, 1]])
      # Checked on what was restored, whatever Hash held the checkpoint.
      by_identity = hopping.to_h.to_h { |name, value| [name.to_s, value] }.compare_by_identity
      expect { described_class.from_h(by_identity, aggregate: agg::Count.new) }.to raise_error(WindowMachines::ArgumentError, message)
      dumped = hopping.marshal_dump.to_h { |name, value| [name.to_s, value] }.compare_by_identity
      expect { tracker.marshal_load(dumped) }.to raise_error(WindowMachines::ArgumentError, message)
      expect(tracker.current("b")).to eq([[0, 10, 1]])
      expect(WindowMachines::HoppingWindows.from_h(hopping.to_h, aggregate: agg::Count.new).current("a")).to eq([[0, 10, 1], [5, 15, 1]])
    end

    it "refuse a window no event went into, and what the stream time has not seen" do
      checkpoint = filled(aggregate).to_h
      expect(checkpoint[:time]).to eq(27)
      bad = {
        { windows: [["a", 2, 12, [0, 0, [], nil, [0, 0]]]] } => /window at 2 do not match the aggregators, .*count none/,
        # An event at 28 in [22, 32), after the stream time.
        { windows: [["a", 22, 32, [1, 0, [[28, 1]], nil, [0, 0]]]] } => /window at 22 do not match the aggregators/,
        { time: nil } => /held at 22 but the stream time is nil/,
        { time: nil, windows: [], late_count: 1 } => /1 late events are counted but there is no stream time or watermark/
      }
      bad.each do |change, message|
        expect { described_class.from_h(checkpoint.merge(change), aggregate: aggregate) }
          .to raise_error(WindowMachines::ArgumentError, message)
      end
      # Only a Count can say a window after the stream time held an event
      # without saying when: every other aggregate here holds its time.
      expect { described_class.from_h(checkpoint.merge(windows: [["a", 32, 42, [1]]]), aggregate: { "n" => agg::Count.new }) }
        .to raise_error(WindowMachines::ArgumentError, /held at 32 is after the stream time 27/)
      expect(described_class.from_h(checkpoint.merge(time: nil, windows: [], late_count: 0), aggregate: aggregate).size).to eq(0)
      counted = { "n" => agg::Count.new("v") }
      with_nil = described_class.new(10, aggregate: counted)
      with_nil.add("a", 3, {})
      expect(described_class.from_h(with_nil.to_h, aggregate: counted).flush.to_a).to eq([["a", 0, 10, { "n" => 0 }]])
      { agg::Collect.new => [], agg::First.new => nil, agg::Last.new => nil }.each do |empty, nothing|
        held = described_class.new(10, aggregate: empty)
        held.add("a", 3)
        emptied = held.to_h.merge(windows: [["a", 0, 10, nothing]])
        expect { described_class.from_h(emptied, aggregate: empty) }.to raise_error(WindowMachines::ArgumentError, /count none/)
        expect(described_class.from_h(held.to_h, aggregate: empty).size).to eq(1)
      end
      manual = described_class.new(10, aggregate: agg::Count.new, watermark: :manual)
      manual.add("a", 500)
      expect(described_class.from_h(manual.to_h, aggregate: agg::Count.new).current("a")).to eq([[500, 510, 1]])
    end
  end

  it "inspects as its shape, clock and counts" do
    windows = described_class.new(60, grace: 5, offset: 15, aggregate: WindowMachines::Aggregate::Count.new)
    windows.add("a", 100)
    expect(windows.inspect).to eq("#<WindowMachines::TumblingWindows size=60 advance=60 offset=15 grace=5 watermark=95 windows=1 keys=1>")
    sessions = WindowMachines::SessionWindows.new(5, aggregate: WindowMachines::Aggregate::Count.new)
    sessions.add("a", 100)
    expect(sessions.inspect).to eq("#<WindowMachines::SessionWindows gap=5 grace=0 watermark=99 sessions=1 keys=1>")
  end
end
