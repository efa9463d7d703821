# frozen_string_literal: true

# User code that runs while a TumblingWindows, HoppingWindows or
# SessionWindows is in the middle of an add: a key's hash and eql?, a custom
# aggregator's add, an on_late callable. It may re-enter the tracker, raise,
# freeze it or switch Fibers. Whatever the outcome (the add completes, or
# raises), no event may be filed under another key or window, a frozen
# tracker must not change, and an add that raises changes nothing (the
# late count aside, for a late event).
RSpec.describe "Aggregating windows and hostile user code" do
  aggregate = WindowMachines::Aggregate

  hostile_key = WindowMachinesSpec::HookKey

  builders = {
    tumbling: ->(agg, **opts) { WindowMachines::TumblingWindows.new(10, aggregate: agg, **opts) },
    hopping: ->(agg, **opts) { WindowMachines::HoppingWindows.new(10, 5, aggregate: agg, **opts) },
    sessions: ->(agg, **opts) { WindowMachines::SessionWindows.new(3, aggregate: agg, **opts) }
  }

  # Everything observable, without changing the tracker.
  def state(tracker)
    { size: tracker.size, key_count: tracker.key_count, late_count: tracker.late_count,
      watermark: tracker.watermark, held: tracker.dup.flush.to_a }
  end

  # Every held window is found again through current(key) of its key.
  def expect_consistent(tracker)
    held = tracker.dup.flush.to_a
    expect(held.size).to eq(tracker.size)
    expect(held.map(&:first).uniq.size).to eq(tracker.key_count)
    open = held.group_by(&:first).transform_values { |windows| windows.map { |_, *rest| rest } }
    open.each do |key, windows|
      expect(tracker.current(key) - windows).to eq([]), "current(#{key.inspect}) shows windows flush does not"
    end
  end

  def values_by_key(tracker) = tracker.dup.flush.to_a.group_by(&:first).transform_values { |ws| ws.flat_map(&:last) }

  builders.each do |kind, build|
    describe kind.to_s do
      it "files an add made from inside a key's hash under its own key, and the outer add under the hostile key" do
        tracker = build.call(aggregate::Collect.new)
        tracker.add("a", 1, :a)
        reentered = false
        key = hostile_key.new("h") do
          unless reentered
            reentered = true
            tracker.add("b", 2, :b)
          end
        end
        outcome = begin
          tracker.add(key, 3, :h)
        rescue RuntimeError => e
          e
        end
        expect_consistent(tracker)
        by_key = values_by_key(tracker)
        expect(by_key["a"].uniq).to eq([:a])
        expect(by_key["b"].uniq).to eq([:b])
        if outcome.is_a?(Exception)
          expect(by_key.keys).to contain_exactly("a", "b")
        else
          expect(outcome).to be(true)
          expect(by_key.keys).to contain_exactly("a", "b", hostile_key.new("h"))
          expect(by_key[hostile_key.new("h")].uniq).to eq([:h])
        end
      end

      it "files both adds when a key's hash adds that same key object, as a Hash stores both" do
        tracker = build.call(aggregate::Collect.new)
        reentered = false
        key = hostile_key.new("h") do
          unless reentered
            reentered = true
            expect(tracker.add(key, 1, :inner)).to be(true)
          end
        end
        expect(tracker.add(key, 2, :outer)).to be(true)
        expect(reentered).to be(true)
        tracker.add(hostile_key.new("h"), 2, :equal)
        expect_consistent(tracker)
        expect(tracker.key_count).to eq(1)
        expect(values_by_key(tracker)).to eq(hostile_key.new("h") => %i[inner outer equal])
        expect(tracker.current(hostile_key.new("h"))).to eq(tracker.current(key))
        expect(tracker.current(key)).not_to be_empty
      end

      it "stays consistent when a key's hash takes closed windows in the middle of an add" do
        tracker = build.call(aggregate::Collect.new, grace: 0)
        tracker.add("a", 1, :a)
        taken = []
        armed = true
        key = hostile_key.new("h") { armed && (window = tracker.take_closed) && taken << window }
        outcome = begin
          tracker.add(key, 40, :h)
        rescue RuntimeError => e
          e
        end
        armed = false # the checks below hash the key too
        expect_consistent(tracker)
        remaining = tracker.dup.flush.to_a
        # The event for "a" is held or was taken, exactly once per window.
        a_windows = (taken + remaining).select { |k, *| k == "a" }
        expect(a_windows).to eq(a_windows.uniq)
        expect(a_windows.map(&:last).uniq).to eq([[:a]])
        hostile = remaining.select { |k, *| k.is_a?(hostile_key) }
        expect(hostile.map(&:last).uniq).to eq(outcome == true ? [[:h]] : [])
        expect(taken.map(&:first).uniq - ["a"]).to eq([])
      end

      it "never changes a tracker that a key's hash froze" do
        tracker = build.call(aggregate::Collect.new)
        tracker.add("a", 1, :a)
        before = state(tracker)
        key = hostile_key.new("h") { tracker.freeze }
        expect { tracker.add(key, 2, :h) }.to raise_error { |e| expect(e).to be_a(FrozenError).or be_a(RuntimeError) }
        expect(tracker).to be_frozen
        expect(state(tracker)).to eq(before)
        expect { tracker.add("a", 3, :a) }.to raise_error(FrozenError)
        expect { tracker.each_closed.to_a }.to raise_error(FrozenError)
        expect(state(tracker)).to eq(before)
      end

      it "leaves the tracker as it was when a custom aggregator raises" do
        agg = Object.new
        def agg.initial = []
        def agg.add(acc, value) = value == :bad ? raise(ArgumentError, "refused") : acc + [value]
        def agg.merge(earlier, later) = earlier + later
        tracker = build.call({ collect: aggregate::Collect.new, custom: agg })
        tracker.add("a", 1, :ok)
        tracker.add("a", 2, :ok2)
        before = state(tracker)
        expect { tracker.add("a", 3, :bad) }.to raise_error(ArgumentError, "refused")
        expect { tracker.add("new", 3, :bad) }.to raise_error(ArgumentError, "refused")
        expect(state(tracker)).to eq(before)
        expect_consistent(tracker)
      end

      it "lets the error of an on_late callable propagate, counting the late event and changing nothing else" do
        calls = []
        on_late = lambda do |*args|
          calls << args
          raise IOError, "late!"
        end
        tracker = build.call(aggregate::Count.new, on_late: on_late)
        tracker.add("a", 50, :x)
        before = state(tracker)
        expect { tracker.add("a", 1, :late) }.to raise_error(IOError, "late!")
        expect(calls).to eq([["a", 1, :late, before[:watermark]]])
        expect(state(tracker)).to eq(before.merge(late_count: 1))
        expect_consistent(tracker)
      end

      it "completes an add whose key's eql? switches Fibers while the tracker is used elsewhere" do
        root = Fiber.current
        switching = hostile_key.new("f", on_eql: -> { Fiber.yield(:switched) unless Fiber.current == root })
        tracker = build.call(aggregate::Collect.new, grace: 100)
        tracker.add(switching, 1, :f1)
        fiber = Fiber.new { tracker.add(hostile_key.new("f", on_eql: switching.instance_variable_get(:@on_eql)), 2, :f2) }
        expect(fiber.resume).to eq(:switched)
        expect(tracker.add("z", 3, :z)).to be(true)
        outcome = nil
        10.times do
          outcome = fiber.resume
          break unless fiber.alive?
        end
        expect(fiber).not_to be_alive
        expect(outcome).to be(true)
        expect_consistent(tracker)
        by_key = values_by_key(tracker)
        expect(by_key.keys).to contain_exactly(switching, "z")
        expect(by_key[switching].uniq.sort).to eq(%i[f1 f2])
        expect(by_key["z"].uniq).to eq([:z])
      end
    end
  end

  describe "a custom aggregator whose add re-enters the tracker" do
    def reentering_tracker(times:)
      tracker = nil
      calls = 0
      agg = Object.new
      agg.define_singleton_method(:initial) { [] }
      agg.define_singleton_method(:merge) { |earlier, later| earlier + later }
      agg.define_singleton_method(:add) do |acc, value|
        if value == :reenter && calls < times
          calls += 1
          tracker.add("other", 5, :inner)
        end
        acc + [value]
      end
      tracker = WindowMachines::TumblingWindows.new(10, aggregate: agg)
      tracker.add("a", 1, :ok)
      [tracker, -> { calls }]
    end

    it "files the event once when add re-entered only once" do
      tracker, calls = reentering_tracker(times: 1)
      expect(tracker.add("a", 2, :reenter)).to be(true)
      expect(calls.call).to eq(1)
      expect(tracker.current("a")).to eq([[0, 10, %i[ok reenter]]])
      expect(tracker.current("other")).to eq([[0, 10, [:inner]]])
      expect(tracker.size).to eq(2)
    end

    it "gives up with a RuntimeError when add re-enters every time, without filing the outer event" do
      tracker, calls = reentering_tracker(times: Float::INFINITY)
      expect { tracker.add("a", 2, :reenter) }.to raise_error(RuntimeError, /changed/)
      # Each retry called add, whose inner add was a complete add of its own.
      expect(tracker.current("a")).to eq([[0, 10, [:ok]]])
      expect(tracker.current("other")).to eq([[0, 10, [:inner] * calls.call]])
      expect(tracker.size).to eq(2)
      expect(tracker.key_count).to eq(2)
    end
  end

  # The replaced state's aggregators are no longer marked by the tracker;
  # the add that was running keeps them pinned until it returns.
  it "files an event into the state a key's hash swapped in with marshal_load, compacting meanwhile" do
    appender = Class.new do
      def initial = []
      def add(acc, value) = acc + [value.fetch("s")]
      def merge(one, other) = one + other
    end
    stub_const("SwappedAppender", appender)
    swapper = Class.new do
      attr_accessor :tracker, :checkpoint

      def hash
        if checkpoint
          tracker.marshal_load(checkpoint)
          self.checkpoint = nil
          GC.start
          GC.compact if GC.respond_to?(:compact)
        end
        1
      end

      def eql?(other) = other.instance_of?(self.class)
    end
    made = -> { WindowMachines::HoppingWindows.new(10, 5, aggregate: { all: SwappedAppender.new }) }
    other = made.call
    other.add("x", 1, { "s" => "other" })
    tracker = made.call
    key = swapper.new
    key.tracker = tracker
    key.checkpoint = other.marshal_dump
    expect(tracker.add(key, 3, { "s" => "mine" })).to be(true)
    handed = tracker.flush.map { |held, start, finish, result| [held == "x" ? "x" : :swapper, start, finish, result[:all]] }
    expect(handed).to eq([["x", 0, 10, ["other"]], [:swapper, 0, 10, ["mine"]]])
  end

  describe "result names whose hash and eql? raise once the tracker is built" do
    # A name Ruby's Hash finds by calling its hash and eql?. The window has
    # left the tracker when its result is built, so a raise there would
    # lose it; the result is copied from a Hash made at construction (held
    # natively: spec/fixtures/aggregating_gc_scenario.rb moves one under
    # GC.stress with auto-compaction).
    let(:name_class) do
      Class.new do
        attr_reader :label
        attr_accessor :broken

        def initialize(label) = @label = label
        def hash = broken ? raise("hash of #{label}") : label.hash
        def eql?(other) = broken ? raise("eql? of #{label}") : other.instance_of?(self.class) && other.label == label
        def inspect = "name #{label}"
      end
    end

    builders.each do |kind, build|
      it "hands every #{kind} window over with its names, after a compaction" do
        views = name_class.new("views")
        spent = name_class.new("spent")
        tracker = build.call({ views => aggregate::Count.new, spent => aggregate::Sum.new(:amount),
                               plain: aggregate::Max.new(:amount) })
        tracker.add("ana", 1, { amount: 4 })
        tracker.add("ana", 2, { amount: 6 })
        views.broken = spent.broken = true
        GC.compact if GC.respond_to?(:compact)
        handed = tracker.flush.to_a
        expect(handed.map { |_key, _start, _finish, result| result.transform_keys { |name| name.is_a?(Symbol) ? name : name.label } })
          .to all(eq({ "views" => 2, "spent" => 10, plain: 6 }))
        expect(handed.map(&:first)).to all(eq("ana"))
        expect(tracker.size).to eq(0)
      end
    end

    it "refuses at construction a name whose hash raises then" do
      name = name_class.new("views")
      names = { name => aggregate::Count.new }
      name.broken = true
      expect { WindowMachines::TumblingWindows.new(10, aggregate: names) }
        .to raise_error(RuntimeError, "hash of views")
    end
  end

  describe "user code that freezes the tracker while initialize or marshal_load rebuilds it" do
    # A name's hash runs while the new state is built; a tracker frozen
    # meanwhile must not change.
    let(:freezer) do
      Class.new do
        attr_accessor :target

        def hash
          target&.freeze
          7
        end

        def eql?(other) = equal?(other)
      end
    end

    def filled
      tracker = WindowMachines::TumblingWindows.new(10, aggregate: { views: WindowMachines::Aggregate::Count.new })
      tracker.add("ana", 1)
      tracker
    end

    def unchanged?(tracker)
      tracker.frozen? && tracker.window_size == 10 && tracker.aggregate.keys == [:views] &&
        tracker.dup.flush.to_a == [["ana", 0, 10, { views: 1 }]]
    end

    it "refuses initialize with FrozenError, the tracker as it was" do
      tracker = filled
      name = freezer.new
      names = { views: aggregate::Count.new, name => aggregate::Count.new }
      name.target = tracker
      expect { tracker.send(:initialize, 99, aggregate: names) }.to raise_error(FrozenError)
      expect(unchanged?(tracker)).to be(true)
    end

    it "refuses marshal_load with FrozenError, the tracker as it was" do
      name = freezer.new
      source = WindowMachines::TumblingWindows.new(50, aggregate: { views: aggregate::Count.new, name => aggregate::Count.new })
      source.add("ben", 2)
      checkpoint = source.marshal_dump
      tracker = filled
      name.target = tracker
      expect { tracker.marshal_load(checkpoint) }.to raise_error(FrozenError)
      expect(unchanged?(tracker)).to be(true)
    end
  end

  describe "the aggregate: Hash" do
    it "is kept as a frozen copy, so changing the caller's Hash changes neither results nor checkpoints" do
      names = { views: aggregate::Count.new, spent: aggregate::Sum.new(:amount) }
      tracker = WindowMachines::TumblingWindows.new(10, aggregate: names)
      names.delete(:views)
      names[:other] = aggregate::Max.new(:amount)
      tracker.add("ana", 1, { amount: 5 })
      expect(tracker.aggregate).to eq({ views: aggregate::Count.new, spent: aggregate::Sum.new(:amount) }).and be_frozen
      expect(Marshal.load(Marshal.dump(tracker)).flush.to_a).to eq([["ana", 0, 10, { views: 1, spent: 5 }]])
    end

    it "copies the pairs alone into a plain Hash: a default proc or a subclass does not follow, and the tracker Marshals" do
      with_default = Hash.new { |hash, name| hash[name] = aggregate::Count.new }
      with_default[:views] = aggregate::Count.new
      subclassed = Class.new(Hash)[spent: aggregate::Sum.new(:amount)]
      [with_default, subclassed].each do |names|
        tracker = WindowMachines::SessionWindows.new(10, aggregate: names)
        tracker.add("ana", 1, { amount: 5 })
        expect(tracker.aggregate).to be_an_instance_of(Hash).and eq(names.to_a.to_h)
        expect(tracker.aggregate.default_proc).to be_nil
        expect(Marshal.load(Marshal.dump(tracker))).to eq(tracker)
      end
    end

    it "is copied before any user code runs, so a name's hash that changes the caller's Hash changes nothing" do
      names = {}
      meddler = Class.new do
        attr_accessor :armed

        define_method(:hash) do
          if armed
            self.armed = false
            names.delete(:spent)
            names[:other] = WindowMachines::Aggregate::Max.new(:amount)
          end
          1
        end
        def eql?(other) = equal?(other)
      end.new
      names.merge!(views: aggregate::Count.new, meddler => aggregate::Sum.new(:amount), spent: aggregate::Min.new(:amount))
      meddler.armed = true
      tracker = WindowMachines::TumblingWindows.new(10, aggregate: names)
      expect(names.keys).to eq([:views, meddler, :other])
      tracker.add("ana", 1, { amount: 5 })
      tracker.add("ana", 2, { amount: 3 })
      expect([tracker.aggregate.keys, tracker.marshal_dump[:aggregate].keys]).to all(eq([:views, meddler, :spent]))
      expect(tracker.flush.to_a).to eq([["ana", 0, 10, { views: 2, meddler => 8, spent: 3 }]])
    end

    it "refuses two names a result Hash would hold as one" do
      names = {}.compare_by_identity
      names[+"a"] = aggregate::Count.new
      names[+"a"] = aggregate::Sum.new(:amount)
      expect { WindowMachines::TumblingWindows.new(10, aggregate: names) }
        .to raise_error(WindowMachines::ArgumentError, /names two aggregators alike/)
    end

    it "lets what a custom aggregator's respond_to? raises or throws go on as it is", :mistyped do
      thrower = Class.new do
        def respond_to?(*) = throw(:out, :thrown)
      end.new
      expect(catch(:out) { WindowMachines::TumblingWindows.new(10, aggregate: { views: thrower }) }).to eq(:thrown)
      raiser = Class.new do
        def respond_to?(*) = raise(Interrupt)
      end.new
      expect { WindowMachines::SessionWindows.new(10, aggregate: raiser) }.to raise_error(Interrupt)
    end

    it "keeps its result-building helper private" do
      expect(WindowMachines::Aggregate).not_to respond_to(:named_results)
    end
  end
end
