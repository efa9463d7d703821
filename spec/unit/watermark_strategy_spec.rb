# frozen_string_literal: true

RSpec.describe WindowMachines::WatermarkStrategy do
  let(:max) { WindowMachinesSpec::MAX }
  let(:count) { WindowMachines::Aggregate::Count.new }

  # A monotonic clock the examples move by hand, read by the strategy
  # through Process.clock_gettime as the real one is.
  def fake_clock(start = 1_000.0)
    clock = { now: start }
    allow(Process).to receive(:clock_gettime).and_call_original
    allow(Process).to receive(:clock_gettime).with(Process::CLOCK_MONOTONIC) { clock[:now] }
    clock
  end

  # Everything a caller can observe, to compare before and after a refused call.
  def state_of(strategy)
    { value: strategy.value, sources: strategy.sources, active: strategy.active_sources, inspect: strategy.inspect }
  end

  describe ".bounded" do
    it "makes a strategy with no sources and no value" do
      strategy = described_class.bounded(5)
      expect(strategy.value).to be_nil
      expect(strategy.sources).to eq([])
      expect(strategy.active_sources).to eq([])
      expect(strategy.lag).to eq(5)
      expect(strategy.idle_after).to be_nil
      expect(strategy).not_to be_frozen
    end

    it "takes idle_after as Integer or Float seconds" do
      expect(described_class.bounded(0, idle_after: 30).idle_after).to eq(30)
      expect(described_class.bounded(0, idle_after: 0.25).idle_after).to eq(0.25)
      expect(described_class.bounded(0, idle_after: nil).idle_after).to be_nil
    end

    it "takes a lag from 0 to 2**64-1" do
      expect(described_class.bounded(0).lag).to eq(0)
      expect(described_class.bounded(max).lag).to eq(max)
    end

    it "is the only constructor" do
      expect { described_class.new(5, nil) }.to raise_error(NoMethodError, /private method/)
    end
  end

  describe "#value and #observe" do
    it "is nil until a source has been seen, then the largest timestamp less the lag" do
      strategy = described_class.bounded(5)
      expect(strategy.value).to be_nil
      expect(strategy.observe(20)).to eq(15)
      expect(strategy.value).to eq(15)
      expect(strategy.observe(30)).to eq(25)
    end

    it "saturates at 0 while timestamps are smaller than the lag, instead of raising" do
      strategy = described_class.bounded(10)
      expect(strategy.observe(3)).to eq(0)
      expect(strategy.observe(0)).to eq(0)
      expect(strategy.observe(10)).to eq(0)
      expect(strategy.observe(11)).to eq(1)
    end

    it "works at the ends of the range" do
      expect(described_class.bounded(max).observe(max)).to eq(0)
      expect(described_class.bounded(max).observe(max - 1)).to eq(0)
      expect(described_class.bounded(0).observe(max)).to eq(max)
      expect(described_class.bounded(1).observe(max)).to eq(max - 1)
      expect(described_class.bounded(0).observe(0)).to eq(0)
    end

    it "never moves back for an older event of the same source" do
      strategy = described_class.bounded(5)
      strategy.observe(50)
      expect(strategy.observe(20)).to eq(45)
      expect(strategy.observe(49)).to eq(45)
      expect(strategy.observe(51)).to eq(46)
    end

    it "is the minimum over sources" do
      strategy = described_class.bounded(10)
      strategy.observe(100, source: :a)
      strategy.observe(150, source: :b)
      strategy.observe(130, source: :c)
      expect(strategy.value).to eq(90)
      expect(strategy.observe(200, source: :a)).to eq(120)
      expect(strategy.observe(300, source: :c)).to eq(140)
      expect(strategy.observe(400, source: :b)).to eq(190)
    end

    it "moves only when every source at the minimum has moved on" do
      strategy = described_class.bounded(0)
      %i[a b c].each { |source| strategy.observe(10, source: source) }
      expect(strategy.observe(20, source: :a)).to eq(10)
      expect(strategy.observe(20, source: :b)).to eq(10)
      expect(strategy.observe(15, source: :c)).to eq(15)
      expect(strategy.observe(25, source: :c)).to eq(20)
    end

    it "is not lowered by a source that starts behind it, which holds it until it catches up" do
      strategy = described_class.bounded(0)
      strategy.observe(100, source: 0)
      expect(strategy.observe(40, source: 1)).to eq(100)
      expect(strategy.observe(300, source: 0)).to eq(100)
      expect(strategy.observe(90, source: 1)).to eq(100)
      expect(strategy.observe(250, source: 1)).to eq(250)
    end

    it "takes any Hash key as a source, nil being the default" do
      strategy = described_class.bounded(0)
      name = +"orders"
      [nil, name, :orders, 1, 1.0, [1, 2], { p: 1 }].each_with_index do |source, index|
        strategy.observe(100 + index, source: source)
      end
      name << "-mutated"
      expect(strategy.sources).to eq([nil, "orders", :orders, 1, 1.0, [1, 2], { p: 1 }])
      expect(strategy.sources[1]).to be_frozen
      strategy.observe(500, source: "orders")
      strategy.observe(500, source: 1.0)
      expect(strategy.sources.size).to eq(7)
      expect(strategy.value).to eq(100) # held by nil
      expect(strategy.observe(1_000)).to eq(102) # nil, the default, moved on; :orders holds it now
      expect(strategy.active_sources).to include(nil)
    end

    it "lists sources in the order first seen" do
      strategy = described_class.bounded(0)
      %w[c a b a c].each { |source| strategy.observe(1, source: source) }
      expect(strategy.sources).to eq(%w[c a b])
      expect(strategy.active_sources).to eq(%w[c a b])
    end

    it "returns new Arrays" do
      strategy = described_class.bounded(0)
      strategy.observe(1, source: :a)
      strategy.sources << :b
      strategy.active_sources << :b
      expect(strategy.sources).to eq([:a])
      expect(strategy.active_sources).to eq([:a])
    end

    it "never reads the clock without idle_after" do
      allow(Process).to receive(:clock_gettime).and_call_original
      strategy = described_class.bounded(3)
      strategy.observe(10, source: :a)
      strategy.value
      strategy.active_sources
      expect(Process).not_to have_received(:clock_gettime).with(Process::CLOCK_MONOTONIC)
    end
  end

  describe "idle sources" do
    it "stop holding the watermark after idle_after seconds and hold it again from their next event" do
      strategy = described_class.bounded(0, idle_after: 30)
      strategy.observe(100, source: 0, now: 0)
      strategy.observe(40, source: 1, now: 1)
      strategy.observe(160, source: 0, now: 10)
      expect(strategy.value).to eq(100)
      expect(strategy.tick(30.999)).to eq(100)
      expect(strategy.active_sources).to eq([0, 1])
      expect(strategy.tick(31)).to eq(160)
      expect(strategy.active_sources).to eq([0])
      expect(strategy.sources).to eq([0, 1])

      # Back behind the watermark: it holds it where it is, and cannot lower it.
      expect(strategy.observe(150, source: 1, now: 32)).to eq(160)
      expect(strategy.active_sources).to eq([0, 1])
      expect(strategy.observe(400, source: 0, now: 33)).to eq(160)
      expect(strategy.observe(170, source: 1, now: 34)).to eq(170)
      expect(strategy.observe(500, source: 1, now: 35)).to eq(400)
    end

    it "is idle exactly idle_after seconds after its last event" do
      strategy = described_class.bounded(0, idle_after: 2.5)
      strategy.observe(10, source: :slow, now: 100.0)
      strategy.observe(50, source: :fast, now: 101.0)
      expect(strategy.tick(102.4999)).to eq(10)
      expect(strategy.tick(102.5)).to eq(50)
    end

    it "counts any event as activity, even one behind its source's largest timestamp" do
      strategy = described_class.bounded(0, idle_after: 10)
      strategy.observe(10, source: :a, now: 0)
      strategy.observe(50, source: :b, now: 0)
      strategy.observe(5, source: :a, now: 8)
      expect(strategy.tick(15)).to eq(10)
      expect(strategy.active_sources).to eq([:a])
      expect(strategy.tick(18)).to eq(10)
      expect(strategy.active_sources).to eq([])
    end

    it "keeps the watermark where it is when every source is idle" do
      strategy = described_class.bounded(5, idle_after: 10)
      strategy.observe(70, source: :a, now: 0)
      expect(strategy.observe(100, source: :b, now: 5)).to eq(65)
      expect(strategy.tick(10)).to eq(95)
      expect(strategy.active_sources).to eq([:b])
      expect(strategy.tick(15)).to eq(95)
      expect(strategy.active_sources).to eq([])
      expect(strategy.tick(1_000_000)).to eq(95)
      expect(strategy.observe(60, source: :a, now: 1_000_001)).to eq(95)
      expect(strategy.active_sources).to eq([:a])
    end

    it "moves the watermark on a source's first event when all the others are idle" do
      strategy = described_class.bounded(0, idle_after: 1)
      strategy.observe(10, source: :a, now: 0)
      strategy.tick(5)
      expect(strategy.observe(20, source: :b, now: 5)).to eq(20)
      expect(strategy.active_sources).to eq([:b])
    end

    it "goes idle as a single default source too" do
      strategy = described_class.bounded(0, idle_after: 1)
      strategy.observe(10, now: 0)
      strategy.tick(1)
      expect(strategy.active_sources).to eq([])
      expect(strategy.value).to eq(10)
      strategy.observe(11, now: 2)
      expect(strategy.active_sources).to eq([nil])
    end

    it "follows many sources going idle at different times" do
      strategy = described_class.bounded(0, idle_after: 10)
      (0...8).each { |partition| strategy.observe(partition * 10, source: partition, now: partition) }
      expect(strategy.value).to eq(0) # partition 0 holds it
      (1..8).each do |second|
        strategy.tick(9 + second)
        expect(strategy.active_sources).to eq((second...8).to_a)
      end
      expect(strategy.value).to eq(70)
    end
  end

  describe "processing time" do
    it "reads the monotonic clock by default" do
      clock = fake_clock
      strategy = described_class.bounded(0, idle_after: 30)
      strategy.observe(100, source: :a)
      clock[:now] += 10
      strategy.observe(200, source: :b)
      clock[:now] += 19.5
      expect(strategy.value).to eq(100)
      clock[:now] += 0.5
      expect(strategy.value).to eq(200)
      expect(strategy.active_sources).to eq([:b])
    end

    it "stops reading the clock once a time has been given, and uses the latest one" do
      allow(Process).to receive(:clock_gettime).and_call_original
      strategy = described_class.bounded(0, idle_after: 30)
      strategy.tick(0)
      strategy.observe(100, source: :a)
      strategy.observe(200, source: :b, now: 20)
      expect(strategy.value).to eq(100)
      strategy.observe(300, source: :b) # at 20 still
      expect(strategy.tick(29.5)).to eq(100)
      expect(strategy.tick(30)).to eq(300)
      expect(Process).not_to have_received(:clock_gettime).with(Process::CLOCK_MONOTONIC)
    end

    it "takes now: on observe as a tick first" do
      strategy = described_class.bounded(0, idle_after: 5)
      strategy.observe(10, source: :a, now: 0)
      strategy.observe(20, source: :b, now: 1)
      # At 5 :a is idle before :b's event is recorded.
      expect(strategy.observe(30, source: :b, now: 5)).to eq(30)
      expect(strategy.active_sources).to eq([:b])
    end

    it "ignores a time earlier than the latest given" do
      strategy = described_class.bounded(0, idle_after: 5)
      strategy.observe(10, source: :a, now: 100)
      strategy.observe(20, source: :b, now: 104)
      expect(strategy.tick(50)).to eq(10)
      strategy.observe(30, source: :b, now: 1) # recorded at 104
      expect(strategy.tick(105)).to eq(30)
      expect(strategy.tick(108.9)).to eq(30)
      expect(strategy.active_sources).to eq([:b])
      expect(strategy.tick(109)).to eq(30)
      expect(strategy.active_sources).to eq([])
    end

    it "gives the same answers for the same calls, whatever the real clock does" do
      runs = Array.new(2) do
        strategy = described_class.bounded(3, idle_after: 2)
        [[10, :a, 0], [20, :b, 0.5], [15, :a, 1.5], [40, :b, 3.6], [41, :c, 3.7], [50, :a, 6]].map do |ts, source, now|
          sleep 0.001
          [strategy.observe(ts, source: source, now: now), strategy.active_sources]
        end
      end
      expect(runs[0]).to eq(runs[1])
      expect(runs[0].map(&:first)).to eq([7, 7, 12, 37, 37, 47])
    end

    it "accepts a tick without idle_after, and ignores it" do
      strategy = described_class.bounded(0)
      strategy.observe(10, now: 0)
      expect(strategy.tick(1_000)).to eq(10)
      expect(strategy.active_sources).to eq([nil])
    end

    it "tick returns nil before any source is seen" do
      expect(described_class.bounded(0, idle_after: 1).tick(5)).to be_nil
    end
  end

  describe "#remove" do
    it "forgets a source, which no longer holds the watermark" do
      strategy = described_class.bounded(0)
      strategy.observe(50, source: 0)
      strategy.observe(20, source: 1)
      strategy.observe(90, source: 0)
      expect(strategy.value).to eq(50)
      expect(strategy.remove(1)).to be(true)
      expect(strategy.value).to eq(90)
      expect(strategy.sources).to eq([0])
      expect(strategy.remove(1)).to be(false)
    end

    it "returns false for an unknown source" do
      strategy = described_class.bounded(0)
      expect(strategy.remove(:nope)).to be(false)
      strategy.observe(5, source: :a)
      expect(strategy.remove(nil)).to be(false)
      expect(strategy.remove("a")).to be(false)
      expect(strategy.value).to eq(5)
    end

    it "keeps the value when the last source is removed, and treats a source seen again as new" do
      strategy = described_class.bounded(0)
      strategy.observe(50, source: :a)
      expect(strategy.remove(:a)).to be(true)
      expect(strategy.value).to eq(50)
      expect(strategy.sources).to eq([])
      expect(strategy.observe(10, source: :a)).to eq(50)
      expect(strategy.observe(70, source: :a)).to eq(70)
    end

    it "forgets an idle source too" do
      strategy = described_class.bounded(0, idle_after: 5)
      strategy.observe(10, source: :a, now: 0)
      strategy.observe(20, source: :b, now: 3)
      strategy.tick(5)
      expect(strategy.remove(:a)).to be(true)
      expect(strategy.value).to eq(20)
      expect(strategy.sources).to eq([:b])
    end

    it "finds the source as a Hash would" do
      strategy = described_class.bounded(0)
      strategy.observe(5, source: "p-0")
      strategy.observe(9, source: [1, "x"])
      expect(strategy.remove(+"p-0")).to be(true)
      expect(strategy.remove([1, "x"])).to be(true)
      expect(strategy.sources).to eq([])
    end
  end

  describe "#advance" do
    let(:strategy) { described_class.bounded(5).tap { |s| s.observe(30) } }

    it "advances a Watermark to one less than the value: the newest time that can no longer arrive" do
      watermark = WindowMachines::Watermark.new
      expect(strategy.advance(watermark)).to be(true)
      expect(watermark.value).to eq(24)
      expect(strategy.advance(watermark)).to be(false)
      ahead = WindowMachines::Watermark.new(100)
      expect(strategy.advance(ahead)).to be(false)
      expect(ahead.value).to eq(100)
    end

    it "advances Sessions to one less than the value, closing what that passed" do
      sessions = WindowMachines::Sessions.new(5)
      sessions.insert(10)
      sessions.insert(28)
      expect(strategy.advance(sessions)).to be(true)
      expect(sessions.watermark).to eq(24)
      expect(sessions.take_closed).to eq([10, 10])
      expect(sessions.take_closed).to be_nil
      expect(strategy.advance(sessions)).to be(false)
    end

    it "advances KeyedSessions" do
      sessions = WindowMachines::KeyedSessions.new(5)
      sessions.insert("ann", 10)
      sessions.insert("bob", 22)
      expect(strategy.advance(sessions)).to be(true)
      expect(sessions.watermark).to eq(24)
      expect(sessions.take_closed).to eq(["ann", 10, 10])
      expect(sessions.take_closed).to be_nil
    end

    it "advances TumblingWindows built with watermark: :manual" do
      windows = WindowMachines::TumblingWindows.new(10, aggregate: count, watermark: :manual)
      windows.add("a", 3)
      windows.add("a", 17)
      windows.add("a", 27)
      expect(strategy.advance(windows)).to be(true)
      expect(windows.watermark).to eq(25)
      expect(windows.each_closed.to_a).to eq([["a", 0, 10, 1], ["a", 10, 20, 1]])
      expect(strategy.advance(windows)).to be(false)
    end

    it "advances HoppingWindows built with watermark: :manual, less their grace" do
      windows = WindowMachines::HoppingWindows.new(10, 5, aggregate: count, grace: 5, watermark: :manual)
      windows.add("a", 7)
      expect(strategy.advance(windows)).to be(true)
      expect(windows.watermark).to eq(20)
      expect(windows.each_closed.to_a).to eq([["a", 0, 10, 1], ["a", 5, 15, 1]])
    end

    it "advances SessionWindows built with watermark: :manual to one less than the value" do
      windows = WindowMachines::SessionWindows.new(5, aggregate: count, watermark: :manual)
      windows.add("a", 10)
      windows.add("a", 12)
      windows.add("b", 24)
      expect(strategy.advance(windows)).to be(true)
      expect(windows.watermark).to eq(24)
      expect(windows.take_closed).to eq(["a", 10, 12, 2])
      expect(windows.take_closed).to be_nil
    end

    it "lets an aggregating tracker with watermark: :stream refuse it" do
      windows = WindowMachines::TumblingWindows.new(10, aggregate: count)
      expect_gem_error(WindowMachines::ArgumentError, /watermark: :manual/) { strategy.advance(windows) }
    end

    it "returns false without calling the tracker while the value is nil" do
      empty = described_class.bounded(5)
      watermark = WindowMachines::Watermark.new.freeze
      expect(empty.advance(watermark)).to be(false)
      expect(empty.advance(WindowMachines::TumblingWindows.new(10, aggregate: count))).to be(false)
      sessions = WindowMachines::Sessions.new(5)
      expect(empty.advance(sessions)).to be(false)
      expect(sessions.watermark).to be_nil
    end

    it "pushes the value at the current processing time" do
      idle = described_class.bounded(0, idle_after: 5)
      idle.observe(10, source: :a, now: 0)
      idle.observe(50, source: :b, now: 4)
      idle.tick(6)
      watermark = WindowMachines::Watermark.new
      expect(idle.advance(watermark)).to be(true)
      expect(watermark.value).to eq(49)
    end

    # The lag's promise, in every tracker's terms; Flink's
    # forBoundedOutOfOrderness watermark is max - lag - 1
    # (BoundedOutOfOrdernessWatermarksTest: 1326 after 1337 with lag 10).
    describe "an event exactly lag behind the newest" do
      let(:strategy) { described_class.bounded(10).tap { |s| s.observe(1337) } }
      let(:trackers) do
        {
          "Sessions" => [WindowMachines::Sessions.new(5), ->(t, ts) { t.insert(ts) }],
          "KeyedSessions" => [WindowMachines::KeyedSessions.new(5), ->(t, ts) { t.insert("k", ts) }],
          "SessionWindows" => [WindowMachines::SessionWindows.new(5, aggregate: count, watermark: :manual),
                               ->(t, ts) { t.add("k", ts) }],
          "TumblingWindows" => [WindowMachines::TumblingWindows.new(1, aggregate: count, watermark: :manual),
                                ->(t, ts) { t.add("k", ts) }],
          "HoppingWindows" => [WindowMachines::HoppingWindows.new(1, 1, aggregate: count, watermark: :manual),
                               ->(t, ts) { t.add("k", ts) }]
        }
      end

      it "is on time for every tracker, and one tick more is late" do
        trackers.each do |name, (tracker, add)|
          expect(strategy.advance(tracker)).to be(true), name
          expect { add.call(tracker, 1327) }.not_to raise_error, name
          expect { add.call(tracker, 1326) }.to raise_error(WindowMachines::LateEventError), name
        end
      end

      it "is on time for a Watermark, which holds Flink's watermark" do
        watermark = WindowMachines::Watermark.new
        strategy.advance(watermark)
        expect(watermark.value).to eq(1326)
      end

      it "is on time while the value is 0: nothing is pushed where nothing can be late yet" do
        early = described_class.bounded(10).tap { |s| s.observe(4) }
        expect(early.value).to eq(0)
        trackers.each do |name, (tracker, add)|
          takes_the_value = %w[TumblingWindows HoppingWindows].include?(name)
          expect(early.advance(tracker)).to be(takes_the_value), name
          expect { add.call(tracker, 0) }.not_to raise_error, name
        end
        watermark = WindowMachines::Watermark.new
        expect(early.advance(watermark)).to be(false)
        expect(watermark.value).to be_nil
      end
    end

    it "raises FrozenError from a frozen tracker once there is a value" do
      watermark = WindowMachines::Watermark.new.freeze
      expect_frozen_error(watermark) { strategy.advance(watermark) }
      sessions = WindowMachines::Sessions.new(5).freeze
      expect_frozen_error(sessions) { strategy.advance(sessions) }
    end

    it "works from a frozen strategy" do
      watermark = WindowMachines::Watermark.new
      expect(strategy.freeze.advance(watermark)).to be(true)
      expect(watermark.value).to eq(24)
    end

    it "refuses anything else with TypeError, even with no value", :mistyped do
      [nil, 25, "watermark", Object.new, described_class.bounded(1), WindowMachines::Watermark,
       WindowMachines::VersionedTable.new(5)].each do |tracker|
        [strategy, described_class.bounded(1)].each do |receiver|
          expect_gem_error(WindowMachines::TypeError, /\Atracker must be a WindowMachines::Watermark, .*got #{Regexp.escape(tracker.inspect)} \(#{tracker.class}\)\z/) do
            receiver.advance(tracker)
          end
        end
      end
    end

    it "refuses a duck that answers advance_watermark", :mistyped do
      duck = Struct.new(:seen) { def advance_watermark(timestamp) = (self.seen = timestamp) }.new
      expect_gem_error(WindowMachines::TypeError, /tracker must be/) { strategy.advance(duck) }
      expect(duck.seen).to be_nil
    end
  end

  describe "freezing, dup and clone" do
    it "refuses observe, tick and remove on a frozen strategy, before looking at the arguments" do
      strategy = described_class.bounded(0, idle_after: 5)
      strategy.observe(10, source: :a, now: 0)
      strategy.freeze
      before = state_of(strategy)
      expect_frozen_error(strategy) { strategy.observe(20, source: :a) }
      expect_frozen_error(strategy) { strategy.observe(20, source: :new, now: 1) }
      expect_frozen_error(strategy) { strategy.tick(100) }
      expect_frozen_error(strategy) { strategy.remove(:a) }
      expect_frozen_error(strategy) { strategy.remove(:unknown) }
      expect(state_of(strategy)).to eq(before)
    end

    it "refuses a frozen strategy before bad arguments", :mistyped do
      strategy = described_class.bounded(0).freeze
      expect_frozen_error(strategy) { strategy.observe(-1) }
      expect_frozen_error(strategy) { strategy.observe("x", now: "y") }
      expect_frozen_error(strategy) { strategy.tick(nil) }
    end

    it "keeps reading on a frozen strategy" do
      strategy = described_class.bounded(5)
      strategy.observe(30, source: :a)
      strategy.freeze
      expect(strategy).to be_frozen
      expect(strategy.value).to eq(25)
      expect(strategy.sources).to eq([:a])
      expect(strategy.active_sources).to eq([:a])
      expect(strategy.lag).to eq(5)
      expect(strategy.inspect).to eq("#<WindowMachines::WatermarkStrategy lag=5 idle_after=nil value=25 sources=1 active=1>")
      expect(strategy.freeze).to be(strategy)
    end

    it "stops following the clock once frozen" do
      clock = fake_clock
      strategy = described_class.bounded(0, idle_after: 10)
      strategy.observe(10, source: :a)
      clock[:now] += 5
      strategy.observe(20, source: :b)
      clock[:now] += 5 # :a is idle now, not yet seen to be
      strategy.freeze
      expect(strategy.value).to eq(20)
      expect(strategy.active_sources).to eq([:b])
      clock[:now] += 100
      expect(strategy.value).to eq(20)
      expect(strategy.active_sources).to eq([:b])
    end

    it "dup makes an unfrozen copy that goes on by itself" do
      strategy = described_class.bounded(0, idle_after: 10)
      strategy.observe(10, source: :a, now: 0)
      strategy.observe(20, source: :b, now: 1)
      strategy.freeze
      copy = strategy.dup
      expect(copy).not_to be_frozen
      expect(copy.value).to eq(10)
      expect(copy.observe(30, source: :a, now: 2)).to eq(20)
      expect(copy.tick(11)).to eq(30)
      expect(copy.remove(:a)).to be(true)
      expect(strategy.value).to eq(10)
      expect(strategy.sources).to eq(%i[a b])
      expect(strategy.active_sources).to eq(%i[a b])
    end

    it "dup of an unfrozen strategy shares no state" do
      strategy = described_class.bounded(0)
      strategy.observe(10, source: :a)
      copy = strategy.dup
      copy.observe(50, source: :a)
      strategy.observe(5, source: :b)
      expect(strategy.value).to eq(10)
      expect(copy.value).to eq(50)
      expect(copy.sources).to eq([:a])
    end

    it "clone keeps the frozen state, clone(freeze: false) does not" do
      strategy = described_class.bounded(0)
      strategy.observe(10)
      strategy.freeze
      expect(strategy.clone).to be_frozen
      expect(strategy.clone.value).to eq(10)
      thawed = strategy.clone(freeze: false)
      expect(thawed).not_to be_frozen
      expect(thawed.observe(20)).to eq(20)
      expect(strategy.value).to eq(10)
    end

    it "clone(freeze: true) freezes the copy as it is at that time" do
      clock = fake_clock
      strategy = described_class.bounded(0, idle_after: 10)
      strategy.observe(10, source: :a)
      clock[:now] += 5
      strategy.observe(20, source: :b)
      clock[:now] += 5
      copy = strategy.clone(freeze: true)
      clock[:now] += 100
      expect(copy).to be_frozen
      expect(copy.value).to eq(20)
      expect(copy.active_sources).to eq([:b])
      expect(strategy).not_to be_frozen
      expect(strategy.active_sources).to eq([])
      expect_frozen_error(copy) { copy.tick(1) }
    end
  end

  describe "#inspect" do
    it "shows the lag, idle_after, value and source counts" do
      strategy = described_class.bounded(5, idle_after: 30)
      expect(strategy.inspect).to eq("#<WindowMachines::WatermarkStrategy lag=5 idle_after=30 value=nil sources=0 active=0>")
      strategy.observe(100, source: :a, now: 0)
      strategy.observe(120, source: :b, now: 20)
      strategy.tick(30)
      expect(strategy.inspect).to eq("#<WindowMachines::WatermarkStrategy lag=5 idle_after=30 value=115 sources=2 active=1>")
      expect(described_class.bounded(0, idle_after: 0.5).inspect).to include("idle_after=0.5")
    end
  end

  describe "refused calls", :mistyped do
    bad_integers = WindowMachinesSpec::NOT_INTEGERS
    out_of_range = WindowMachinesSpec::OUT_OF_RANGE
    # An object that claims to be an Integer through is_a?, as an
    # ActiveSupport::Duration does.
    duration_like = Class.new do
      def is_a?(klass) = klass == Integer || super
      alias_method :kind_of?, :is_a?
      def to_i = 60
      def inspect = "1 minute"
    end.new

    def type_message(param, value)
      "#{param} must be an Integer, got #{value.inspect} (#{value.class})"
    end

    def range_message(param, value)
      "#{param} must be in 0..2**64-1, got #{value}"
    end

    def seconds_message(param, value, nil_allowed: false)
      expected = nil_allowed ? "nil, an Integer or a Float" : "an Integer or a Float"
      "#{param} must be #{expected} (seconds), got #{value.inspect} (#{value.class})"
    end

    def populated
      described_class.bounded(5, idle_after: 10).tap do |strategy|
        strategy.observe(30, source: :a, now: 0)
        strategy.observe(50, source: :b, now: 1)
      end
    end

    def expect_unchanged(strategy, klass, message, &block)
      before = state_of(strategy)
      expect_gem_error(klass, message) { block.call(strategy) }
      expect(state_of(strategy)).to eq(before)
    end

    describe ".bounded lag" do
      (bad_integers + [duration_like]).each do |value|
        it "refuses #{value.inspect} (#{value.class}) with TypeError" do
          expect_gem_error(WindowMachines::TypeError, type_message("lag", value)) { described_class.bounded(value) }
        end
      end

      out_of_range.each do |value|
        it "refuses #{value} with RangeError" do
          expect_gem_error(WindowMachines::RangeError, range_message("lag", value)) { described_class.bounded(value) }
        end
      end

      it "checks lag before idle_after" do
        expect_gem_error(WindowMachines::TypeError, /\Alag/) { described_class.bounded(nil, idle_after: "x") }
        expect_gem_error(WindowMachines::RangeError, /\Alag/) { described_class.bounded(-1, idle_after: 0) }
      end
    end

    describe ".bounded idle_after" do
      ["30", 3r, :a, true, WindowMachinesSpec::IntLike.new, duration_like, [30]].each do |value|
        it "refuses #{value.inspect} (#{value.class}) with TypeError" do
          expect_gem_error(WindowMachines::TypeError, seconds_message("idle_after", value, nil_allowed: true)) do
            described_class.bounded(5, idle_after: value)
          end
        end
      end

      [Float::NAN, Float::INFINITY, -Float::INFINITY].each do |value|
        it "refuses #{value} with RangeError" do
          expect_gem_error(WindowMachines::RangeError, "idle_after must be finite, got #{value}") do
            described_class.bounded(5, idle_after: value)
          end
        end
      end

      [0, 0.0, -0.0, -1, -0.5].each do |value|
        it "refuses #{value} with ArgumentError" do
          expect_gem_error(WindowMachines::ArgumentError, "idle_after must be positive, got #{value}") do
            described_class.bounded(5, idle_after: value)
          end
        end
      end

      it "accepts the smallest positive Float and a huge Integer" do
        expect(described_class.bounded(5, idle_after: Float::MIN).idle_after).to eq(Float::MIN)
        expect(described_class.bounded(5, idle_after: 2**80).idle_after).to eq(2**80)
      end
    end

    describe "#observe timestamp" do
      (bad_integers + [duration_like]).each do |value|
        it "refuses #{value.inspect} (#{value.class}) with TypeError, changing nothing" do
          expect_unchanged(populated, WindowMachines::TypeError, type_message("timestamp", value)) do |strategy|
            strategy.observe(value, source: :c, now: 100)
          end
        end
      end

      out_of_range.each do |value|
        it "refuses #{value} with RangeError, changing nothing" do
          expect_unchanged(populated, WindowMachines::RangeError, range_message("timestamp", value)) do |strategy|
            strategy.observe(value, source: :c, now: 100)
          end
        end
      end

      it "does not truncate 1.9 to 1" do
        expect_gem_error(WindowMachines::TypeError, /timestamp/) { described_class.bounded(0).observe(1.9) }
      end
    end

    describe "#observe now" do
      ["1", 3r, :a, true, WindowMachinesSpec::IntLike.new, duration_like].each do |value|
        it "refuses #{value.inspect} (#{value.class}) with TypeError, changing nothing" do
          expect_unchanged(populated, WindowMachines::TypeError, seconds_message("now", value)) do |strategy|
            strategy.observe(60, source: :c, now: value)
          end
        end
      end

      [Float::NAN, Float::INFINITY, -Float::INFINITY].each do |value|
        it "refuses #{value} with RangeError, changing nothing" do
          expect_unchanged(populated, WindowMachines::RangeError, "now must be finite, got #{value}") do |strategy|
            strategy.observe(60, source: :c, now: value)
          end
        end
      end

      it "checks the timestamp before now, and does not tick for a refused event" do
        strategy = populated
        expect_gem_error(WindowMachines::TypeError, /\Atimestamp/) { strategy.observe(nil, now: "x") }
        expect_gem_error(WindowMachines::RangeError, /\Atimestamp/) { strategy.observe(-1, now: 100) }
        expect(strategy.active_sources).to eq(%i[a b]) # still at time 1
        expect(strategy.tick(10.5)).to eq(45)
      end
    end

    describe "#tick now" do
      [nil, "1", 3r, :a, true, WindowMachinesSpec::IntLike.new, duration_like].each do |value|
        it "refuses #{value.inspect} (#{value.class}) with TypeError, changing nothing" do
          expect_unchanged(populated, WindowMachines::TypeError, seconds_message("now", value)) do |strategy|
            strategy.tick(value)
          end
        end
      end

      [Float::NAN, Float::INFINITY, -Float::INFINITY].each do |value|
        it "refuses #{value} with RangeError, changing nothing" do
          expect_unchanged(populated, WindowMachines::RangeError, "now must be finite, got #{value}") do |strategy|
            strategy.tick(value)
          end
        end
      end

      it "accepts a negative time, as monotonic clocks start anywhere" do
        strategy = described_class.bounded(0, idle_after: 1)
        strategy.observe(1, source: :a, now: -10)
        strategy.observe(2, source: :b, now: -9.5)
        expect(strategy.tick(-9)).to eq(2)
      end
    end

    it "takes any object as a source" do
      strategy = described_class.bounded(0)
      weird = Object.new
      expect(strategy.observe(1, source: weird)).to eq(1)
      expect(strategy.remove(weird)).to be(true)
    end
  end

  describe "against a model that recomputes everything on every call" do
    # The rules written down as directly as possible: per source the
    # largest timestamp, its last event's time and whether it is active.
    # Every call first moves to its processing time, where sources quiet
    # for idle_after become idle and the value rises to the minimum over the
    # active sources; then it makes its change, and the value rises again.
    model = Class.new do
      attr_reader :value

      def initialize(lag, idle_after)
        @lag = lag
        @idle_after = idle_after
        @sources = {}
        @now = nil
        @value = nil
      end

      def at(now)
        @now = now if !now.nil? && (@now.nil? || now > @now)
        @sources.each_value { |state| state[:active] = false if @idle_after && @now >= state[:seen] + @idle_after }
      end

      def publish
        active = @sources.values.select { |state| state[:active] }
        return if active.empty?

        candidate = active.map { |state| [state[:latest] - @lag, 0].max }.min
        @value = candidate if @value.nil? || candidate > @value
      end

      def observe(timestamp, source, now)
        at(now)
        publish
        state = (@sources[source] ||= { latest: timestamp })
        state[:latest] = [state[:latest], timestamp].max
        state[:seen] = @now
        state[:active] = true
        publish
        @value
      end

      def tick(now)
        at(now)
        publish
        @value
      end

      def remove(source)
        at(nil)
        publish
        known = !@sources.delete(source).nil?
        publish
        known
      end

      def read
        at(nil)
        publish
        @value
      end

      def sources = @sources.keys

      def active_sources = @sources.select { |_, state| state[:active] }.keys
    end

    sources = [nil, :a, "b", 3, [4, 5], 3.0]

    20.times do |run|
      it "agrees on random calls (run #{run})" do
        random = Random.new(Kernel.rand(2**32))
        lag = [0, 1, 7, 50].sample(random: random)
        idle_after = [nil, 1, 2.5, 6].sample(random: random)
        strategy = described_class.bounded(lag, idle_after: idle_after)
        reference = model.new(lag, idle_after)
        now = 0.0
        reference.tick(now)
        strategy.tick(now)
        base = 0
        trace = []
        failure = -> { "lag #{lag}, idle_after #{idle_after.inspect}, after #{trace.inspect}" }
        400.times do
          now += [0, 0, 0.5, 1, 1.5, 3, 7].sample(random: random)
          given = random.rand < 0.1 ? now - 5 : now # sometimes a time earlier than the latest
          source = sources.sample(random: random)
          case random.rand(10)
          when 0..5
            base += random.rand(4)
            timestamp = [base + random.rand(-20..20), 0].max
            trace << [:observe, timestamp, source, given]
            expect(strategy.observe(timestamp, source: source, now: given))
              .to eq(reference.observe(timestamp, source, given)), failure
          when 6
            trace << [:tick, given]
            expect(strategy.tick(given)).to eq(reference.tick(given)), failure
          when 7
            trace << [:remove, source]
            expect(strategy.remove(source)).to eq(reference.remove(source)), failure
          else
            trace << [:value]
            expect(strategy.value).to eq(reference.read), failure
          end
          expect(strategy.active_sources).to eq(reference.active_sources), failure
          expect(strategy.sources).to eq(reference.sources), failure
        end
      end
    end
  end

  # The motivating case of issue 12: events from two Kafka partitions, one
  # of which goes quiet. Without idleness its stale timestamp holds the
  # watermark back and no window closes; with idle_after the windows close
  # once it has been quiet long enough, and it holds the watermark again
  # when it comes back.
  describe "two partitions, one of which goes quiet" do
    # [processing time (s), partition, event time (s)]
    let(:events) do
      [[0.0, 0, 5], [0.5, 1, 8], [1.0, 0, 30], [2.0, 1, 35], # partition 1 goes quiet here
       [10.0, 0, 70], [20.0, 0, 110], [31.0, 0, 130], [45.0, 0, 190], [60.0, 0, 250]]
    end

    def run(strategy, events)
      clicks = WindowMachines::TumblingWindows.new(60, aggregate: count, watermark: :manual)
      closed = []
      events.each do |now, partition, at|
        clicks.add("clicks", at)
        strategy.observe(at, source: partition, now: now)
        strategy.advance(clicks)
        clicks.each_closed { |_key, start, finish, total| closed << [start, finish, total] }
      end
      [clicks, closed]
    end

    it "closes nothing while the quiet partition holds the watermark back" do
      strategy = described_class.bounded(10)
      clicks, closed = run(strategy, events)
      expect(closed).to eq([])
      expect(strategy.value).to eq(25)
      expect(clicks.watermark).to eq(25)
      expect(clicks.size).to eq(5)
    end

    it "closes the windows with idle_after, and holds the watermark again when the partition returns" do
      strategy = described_class.bounded(10, idle_after: 30)
      clicks, closed = run(strategy, events)
      # At 31 s partition 1 has been quiet for 29 s: still held at 25. At
      # 45 s it has been quiet for 43 s: only partition 0 counts.
      expect(closed).to eq([[0, 60, 4], [60, 120, 2], [120, 180, 1], [180, 240, 1]])
      expect(strategy.active_sources).to eq([0])
      expect(strategy.value).to eq(240)
      expect(clicks.watermark).to eq(240)

      # Partition 1 comes back with an event from before the watermark: it
      # is late for the windows, and holds the watermark where it is until
      # it catches up.
      expect { clicks.add("clicks", 100) }.to raise_error(WindowMachines::LateEventError)
      expect(strategy.observe(100, source: 1, now: 61.0)).to eq(240)
      expect(strategy.active_sources).to eq([0, 1])
      clicks.add("clicks", 400)
      expect(strategy.observe(400, source: 0, now: 62.0)).to eq(240)
      expect(strategy.advance(clicks)).to be(false)
      clicks.add("clicks", 330)
      expect(strategy.observe(330, source: 1, now: 63.0)).to eq(320)
      expect(strategy.advance(clicks)).to be(true)
      expect(clicks.each_closed.to_a).to eq([["clicks", 240, 300, 1]])
      expect(clicks.current("clicks")).to eq([[300, 360, 1], [360, 420, 1]])
    end

    it "needs only ticks while no event arrives" do
      strategy = described_class.bounded(10, idle_after: 30)
      clicks, = run(strategy, events.first(5)) # up to 10 s: partition 1 last seen at 2 s
      expect(clicks.take_closed).to be_nil
      strategy.tick(31.999)
      expect(strategy.advance(clicks)).to be(false)
      strategy.tick(32.0)
      expect(strategy.advance(clicks)).to be(true)
      expect(clicks.take_closed).to eq(["clicks", 0, 60, 4])
    end
  end
end
