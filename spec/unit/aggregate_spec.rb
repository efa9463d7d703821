# frozen_string_literal: true

require "open3"
require "rbconfig"

# The built-in aggregators and custom ones, seen through a tumbling window
# wide enough to hold every event of an example.
RSpec.describe "WindowMachines::Aggregate" do
  agg = WindowMachines::Aggregate

  # The result of one window that took `events` ([timestamp, value]) in order.
  def result_of(aggregate, events)
    windows = WindowMachines::TumblingWindows.new(1_000, aggregate: aggregate)
    events.each { |timestamp, value| windows.add(:k, timestamp, value) }
    windows.current(:k).map(&:last).first
  end

  def state_of(windows, key = :k)
    [windows.current(key), windows.size, windows.key_count, windows.late_count, windows.watermark]
  end

  describe "the built-in classes" do
    it "read a field or the value, are frozen and compare by class and field" do
      %i[Count Sum Min Max Mean Collect First Last].each do |name|
        klass = agg.const_get(name)
        expect(klass.new.field).to be_nil
        expect(klass.new(:amount).field).to eq(:amount)
        expect(klass.new(:amount)).to be_frozen
        expect(klass.new(:amount)).to eq(klass.new(:amount))
        expect(klass.new(:amount)).not_to eq(klass.new(:other))
        expect(klass.new).not_to eq(klass.new(:amount))
      end
      expect(agg::Sum.new(:x)).not_to eq(agg::Mean.new(:x))
    end

    it "read value[field], and a nil value as a nil input" do
      expect(result_of(agg::Collect.new(:v), [[1, { v: 1 }], [2, nil], [3, { w: 2 }]])).to eq([1, nil, nil])
      expect(result_of(agg::Collect.new(0), [[1, [7, 8]], [2, nil]])).to eq([7, nil])
      expect(result_of(agg::Collect.new, [[1, { v: 1 }], [2, nil]])).to eq([{ v: 1 }, nil])
    end

    it "read value[field] through a Hash subclass's or a singleton's own [], as HashWithIndifferentAccess has" do
      indifferent = Class.new(Hash) { def [](field) = super(field.to_s) }
      singleton = { "v" => 7 }.tap { |hash| hash.define_singleton_method(:[]) { |field| super(field.to_s) } }
      values = [indifferent[{ "v" => 5 }], singleton, { v: 1 }, { "v" => 2 }]
      expect(result_of(agg::Collect.new(:v), values.each_with_index.map { |value, at| [at, value] })).to eq([5, 7, 1, nil])
      sums = WindowMachines::TumblingWindows.new(10, aggregate: { n: agg::Count.new(:v), total: agg::Sum.new(:v) })
      expect(sums.add_all(%i[k k], [1, 2], [indifferent[{ "v" => 5 }], singleton])).to eq(2)
      expect(sums.flush.to_a).to eq([[:k, 0, 10, { n: 2, total: 12 }]])
    end

    it "read value[field] through a [] a module prepended to Hash gives every Hash (in a child: it cannot be undone)" do
      script = <<~RUBY
        require "window_machines"
        Hash.prepend(Module.new { def [](field) = field.is_a?(Symbol) && !key?(field) ? super(field.to_s) : super })
        windows = WindowMachines::TumblingWindows.new(10, aggregate: WindowMachines::Aggregate::Sum.new(:v))
        windows.add(:k, 1, { "v" => 5 })
        windows.add_all(%i[k], [2], [{ v: 7 }])
        p windows.current(:k)
      RUBY
      out, status = Open3.capture2(RbConfig.ruby, "-I", File.expand_path("../../lib", __dir__), "-e", script)
      expect(status).to be_success
      expect(out).to eq("[[0, 10, 12]]\n")
    end
  end

  describe "Count" do
    it "counts events, or with a field the events whose input is not nil" do
      events = [[1, { v: 1 }], [2, { v: nil }], [3, nil], [4, { v: false }]]
      expect(result_of(agg::Count.new, events)).to eq(4)
      expect(result_of(agg::Count.new(:v), events)).to eq(2)
      expect(result_of(agg::Count.new(:v), [[1, nil]])).to eq(0)
    end
  end

  describe "counts restored at 2**64-1" do
    most = (2**64) - 1

    def restored(klass, windows, aggregate, **fields)
      klass.from_h({ grace: 0, watermark: "stream", time: 5, late_count: 0, windows: windows, **fields },
                   aggregate: aggregate)
    end

    it "stay there, adding or merging, rather than wrap to nothing, and restore from their own checkpoint" do
      tumbling = restored(WindowMachines::TumblingWindows, [["a", 0, 10, most]], agg::Count.new,
                          size: 10, advance: 10, offset: 0)
      tumbling.add("a", 6)
      expect(tumbling.current("a")).to eq([[0, 10, most]])
      expect(WindowMachines::TumblingWindows.from_h(tumbling.to_h, aggregate: agg::Count.new)).to eq(tumbling)

      mean = restored(WindowMachines::TumblingWindows, [["a", 0, 10, [10, most]]], agg::Mean.new,
                      size: 10, advance: 10, offset: 0)
      mean.add("a", 6, 1)
      expect(mean.to_h[:windows]).to eq([["a", 0, 10, [11, most]]])

      hopping = restored(WindowMachines::HoppingWindows, [["a", 0, 2, most], ["a", 2, 4, 1]], agg::Count.new,
                         size: 4, advance: 2, offset: 0, time: 3)
      expect(hopping.current("a").first).to eq([0, 4, most])

      sessions = restored(WindowMachines::SessionWindows, [["a", 10, 10, [1, most]], ["a", 14, 14, [1, 1]]],
                          agg::Mean.new, gap: 2, max_sessions: nil, grace: 5, time: 14)
      sessions.add("a", 12, 1)
      expect(sessions.to_h[:windows]).to eq([["a", 10, 14, [3, most]]])
    end
  end

  describe "Sum" do
    it "skips nils and is 0 when every input is nil" do
      expect(result_of(agg::Sum.new, [[1, 2], [2, nil], [3, 5]])).to eq(7)
      expect(result_of(agg::Sum.new(:v), [[1, nil], [2, { v: nil }]])).to eql(0)
    end

    it "adds Integers exactly at any size" do
      inputs = [2**63 - 1, 2**63 - 1, 2**64 - 1, 2**70, -(2**65), 3]
      expect(result_of(agg::Sum.new, inputs.each_with_index.map { |input, at| [at, input] })).to eql(inputs.sum)
      expect(result_of(agg::Sum.new, Array.new(5) { |at| [at, 2**64 - 1] })).to eql(5 * ((2**64) - 1))
    end

    # Two sessions' sums that each fit 64 bits may not fit once an event
    # bridges them; the merged sum is exact all the same.
    it "adds Integers exactly when an event merges two sessions whose sums only fit apart" do
      fixnum_max = (2**62) - 1
      [[[fixnum_max, fixnum_max, 1], 1], [[fixnum_max, fixnum_max, fixnum_max], 0],
       [[-fixnum_max - 1, -fixnum_max - 1, -fixnum_max - 1], 0]].each do |(one, two, three), bridging|
        [agg::Sum.new, agg::Mean.new].each do |aggregator|
          sessions = WindowMachines::SessionWindows.new(10, grace: 30, aggregate: aggregator)
          [[0, one], [1, two], [21, three]].each { |at, value| sessions.add("k", at, value) }
          expect(sessions.add("k", 11, bridging)).to be(true)
          total = one + two + three + bridging
          expected = aggregator.is_a?(agg::Sum) ? total : total.fdiv(4)
          expect(sessions.flush.to_a).to eq([["k", 0, 21, expected]]), aggregator.class.name
        end
      end
    end

    it "is a Float once a Float is added, as Integer#+ makes it" do
      expect(result_of(agg::Sum.new, [[1, 1], [2, 0.5]])).to eql(1.5)
      expect(result_of(agg::Sum.new, [[1, 0.1], [2, 0.2]])).to eql(0.1 + 0.2)
      expect(result_of(agg::Sum.new, [[1, 3], [2, 0.25], [3, 4]])).to eql(7.25)
    end

    it "adds other Numerics with their own +" do
      expect(result_of(agg::Sum.new, [[1, 1/3r], [2, 2/3r]])).to eq(1)
      expect(result_of(agg::Sum.new, [[1, 1], [2, 1/2r]])).to eql(3/2r)
    end

    it "refuses a non-Numeric input with TypeError, changing nothing" do
      windows = WindowMachines::TumblingWindows.new(10, aggregate: agg::Sum.new(:v))
      windows.add(:k, 5, { v: 1 })
      before = state_of(windows)
      expect_gem_error(WindowMachines::TypeError, nil) { windows.add(:k, 6, { v: "2" }) }
      expect_gem_error(WindowMachines::TypeError, nil) { windows.add(:other, 40, { v: :x }) }
      expect(state_of(windows)).to eq(before)
      expect(state_of(windows, :other)).to eq([[], 1, 1, 0, 5])
      expect(windows.add(:k, 7, { v: 2 })).to be(true)
      expect(windows.current(:k)).to eq([[0, 10, 3]])
    end
  end

  describe "Min and Max" do
    it "skip nils and are nil when there is no input" do
      events = [[1, nil], [2, 4], [3, -2], [4, nil], [5, 9]]
      expect(result_of(agg::Min.new, events)).to eq(-2)
      expect(result_of(agg::Max.new, events)).to eq(9)
      expect(result_of(agg::Min.new(:v), [[1, nil]])).to be_nil
      expect(result_of(agg::Max.new(:v), [[1, { v: nil }]])).to be_nil
    end

    it "compare Integers and Floats exactly, Bignums too" do
      expect(result_of(agg::Min.new, [[1, 3], [2, 2.5], [3, 7]])).to eql(2.5)
      expect(result_of(agg::Max.new, [[1, 2**64], [2, 1.8e19], [3, 2**63]])).to eql(2**64)
      expect(result_of(agg::Max.new, [[1, 2**53 + 1], [2, (2**53).to_f]])).to eql(2**53 + 1)
    end

    it "keep the earlier arrival among equal inputs" do
      expect(result_of(agg::Min.new, [[5, 1.0], [1, 1]])).to eql(1.0)
      expect(result_of(agg::Min.new, [[1, 1], [5, 1.0]])).to eql(1)
      expect(result_of(agg::Max.new, [[9, 2], [1, 2.0]])).to eql(2)
      expect(result_of(agg::Max.new, [[1, 2.0], [9, 2]])).to eql(2.0)
    end

    it "compare other objects with <=>, and refuse incomparable ones with Ruby's ArgumentError" do
      expect(result_of(agg::Min.new, [[1, "b"], [2, "a"], [3, "c"]])).to eq("a")
      expect(result_of(agg::Max.new, [[1, [1, 2]], [2, [1, 3]]])).to eq([1, 3])
      windows = WindowMachines::TumblingWindows.new(10, aggregate: agg::Max.new)
      windows.add(:k, 1, 5)
      before = state_of(windows)
      expect { windows.add(:k, 2, "x") }.to raise_error(::ArgumentError, /comparison/)
      expect(state_of(windows)).to eq(before)
    end
  end

  describe "Mean" do
    it "skips nils, is nil with no input, and is a Float" do
      expect(result_of(agg::Mean.new, [[1, 2], [2, nil], [3, 1]])).to eql(1.5)
      expect(result_of(agg::Mean.new(:v), [[1, nil]])).to be_nil
      expect(result_of(agg::Mean.new, [[1, 4]])).to eql(4.0)
    end

    it "divides the exact sum, not a rounded one" do
      # 3 * 2**53 + 3 rounds to 3 * 2**53 + 4 as a Float; the exact sum's fdiv
      # gives 2**53 + 1, which rounds to 2**53.
      inputs = [2**53, 2**53, 2**53 + 3]
      expect(result_of(agg::Mean.new, inputs.each_with_index.map { |input, at| [at, input] }))
        .to eql(inputs.sum.fdiv(3))
      expect(inputs.sum.fdiv(3)).not_to eql(inputs.sum.to_f / 3)
      bignums = [2**64, 2**70 + 1, (2**64) + 2]
      expect(result_of(agg::Mean.new, bignums.each_with_index.map { |input, at| [at, input] }))
        .to eql(bignums.sum.fdiv(3))
    end

    it "refuses a non-Numeric input with TypeError, changing nothing" do
      windows = WindowMachines::TumblingWindows.new(10, aggregate: agg::Mean.new)
      windows.add(:k, 1, 2)
      before = state_of(windows)
      expect_gem_error(WindowMachines::TypeError, nil) { windows.add(:k, 2, "3") }
      expect(state_of(windows)).to eq(before)
    end

    it "refuses a Numeric with no Float form when it is added, rather than lose its window when handed over" do
      cents = Class.new(Numeric) do
        attr_reader :n

        def initialize(cents) = (@n = cents)
        def +(other) = self.class.new(n + (other.is_a?(self.class) ? other.n : other))
        def coerce(other) = [self.class.new(other), self]
      end
      windows = WindowMachines::TumblingWindows.new(10, aggregate: { total: agg::Sum.new, mean: agg::Mean.new })
      windows.add(:k, 1, 2)
      before = state_of(windows)
      expect { windows.add(:k, 2, cents.new(5)) }.to raise_error(TypeError, /can't convert .* into Float/)
      expect(state_of(windows)).to eq(before)
      sums = WindowMachines::TumblingWindows.new(10, aggregate: agg::Sum.new)
      sums.add(:k, 2, cents.new(5))
      expect(sums.flush.to_a.dig(0, 3).n).to eq(5)
      [Complex(1, 2), Complex(1, 0)].each do |complex|
        expect { windows.add(:k, 2, complex) }
          .to raise_error(TypeError, "Mean averages into a Float, and this input's mean would be a Complex")
      end
      expect(state_of(windows)).to eq(before)
      expect(result_of(agg::Mean.new, [[1, 1r], [2, 2r]])).to eql(1.5)
    end
  end

  describe "Collect" do
    it "lists every input, nils too, in event-time order and equal timestamps in arrival order" do
      events = [[5, :e1], [3, :c1], [5, :e2], [1, nil], [3, :c2], [5, :e3], [4, nil]]
      expect(result_of(agg::Collect.new, events)).to eq([nil, :c1, :c2, nil, :e1, :e2, :e3])
    end

    it "keeps that order through current, a checkpoint and a session merge, however the inputs came" do
      windows = WindowMachines::TumblingWindows.new(100, grace: 100, aggregate: agg::Collect.new)
      [[9, :i], [1, :a], [8, :h], [2, :b], [5, :e1], [5, :e2]].each { |at, value| windows.add(:k, at, value) }
      expect(windows.current(:k)).to eq([[0, 100, %i[a b e1 e2 h i]]])
      restored = Marshal.load(Marshal.dump(windows))
      [[5, :e3], [0, :z]].each { |at, value| restored.add(:k, at, value) }
      expect(restored.flush.to_a).to eq([[:k, 0, 100, %i[z a b e1 e2 e3 h i]]])

      sessions = WindowMachines::SessionWindows.new(3, grace: 100, aggregate: agg::Collect.new)
      [[10, :late_one], [4, :b2], [3, :b1], [7, :bridge], [10, :late_two], [1, :a]].each do |at, value|
        sessions.add(:k, at, value)
      end
      expect(sessions.flush.to_a).to eq([[:k, 1, 10, %i[a b1 b2 bridge late_one late_two]]])
    end
  end

  describe "First and Last" do
    it "take the input of the smallest / largest timestamp" do
      events = [[5, :five], [2, :two], [9, :nine], [4, :four]]
      expect(result_of(agg::First.new, events)).to eq(:two)
      expect(result_of(agg::Last.new, events)).to eq(:nine)
    end

    it "break ties by arrival: First keeps the earliest, Last takes the latest" do
      events = [[5, :a], [2, :b], [5, :c], [2, :d], [5, :e]]
      expect(result_of(agg::First.new, events)).to eq(:b)
      expect(result_of(agg::Last.new, events)).to eq(:e)
    end

    it "keep a nil input and are nil for none" do
      expect(result_of(agg::First.new(:v), [[1, nil], [2, { v: 3 }]])).to be_nil
      expect(result_of(agg::Last.new(:v), [[1, { v: 3 }], [2, { v: nil }]])).to be_nil
      expect(result_of(agg::Last.new(:v), [[2, { v: nil }], [1, { v: 3 }]])).to be_nil
    end
  end

  describe "custom aggregators" do
    let(:joiner) do
      Class.new do
        def initial = ""
        def add(acc, value) = "#{acc}+#{value.inspect}"
        def merge(one, other) = one + other
      end.new
    end

    it "fold the whole value from initial with add, in arrival order" do
      expect(result_of(joiner, [[3, { v: 1 }], [1, nil], [2, 7]])).to eq("+{:v=>1}+nil+7")
    end

    it "need merge for hopping and session windows only", :mistyped do
      no_merge = Class.new do
        def initial = 0
        def add(acc, _value) = acc + 1
      end.new
      expect(WindowMachines::TumblingWindows.new(10, aggregate: no_merge).window_size).to eq(10)
      expect_gem_error(WindowMachines::ArgumentError, nil) do
        WindowMachines::HoppingWindows.new(10, 5, aggregate: no_merge)
      end
      expect_gem_error(WindowMachines::ArgumentError, nil) do
        WindowMachines::SessionWindows.new(10, aggregate: { n: agg::Count.new, custom: no_merge })
      end
    end

    it "propagate an exception from add, leaving the tracker as before the event" do
      picky = Class.new do
        def initial = []
        def add(acc, value) = value == :bad ? raise(IOError, "bad value") : acc + [value]
        def merge(one, other) = one + other
      end.new
      windows = WindowMachines::HoppingWindows.new(10, 5, aggregate: { all: picky, n: agg::Count.new })
      windows.add(:k, 7, :ok)
      before = state_of(windows)
      expect { windows.add(:k, 8, :bad) }.to raise_error(IOError, "bad value")
      expect { windows.add(:new, 30, :bad) }.to raise_error(IOError, "bad value")
      expect(state_of(windows)).to eq(before)
      expect(windows.watermark).to eq(7) # stream time did not move to 30
      expect(windows.current(:k)).to eq([[0, 10, { all: [:ok], n: 1 }], [5, 15, { all: [:ok], n: 1 }]])
    end
  end

  describe "aggregate:" do
    it "gives a Hash of results under the same names, in the same order" do
      aggregate = { z: agg::Count.new, a: agg::Sum.new(:v), "m" => agg::Max.new(:v), 3 => agg::Collect.new(:v) }
      result = result_of(aggregate, [[1, { v: 2 }], [2, { v: 5 }]])
      expect(result).to eq({ z: 2, a: 7, "m" => 5, 3 => [2, 5] })
      expect(result.keys).to eq([:z, :a, "m", 3])
    end

    it "is required and may not be an empty Hash", :mistyped do
      expect { WindowMachines::TumblingWindows.new(10) }.to raise_error(::ArgumentError, /aggregate/)
      expect_gem_error(WindowMachines::ArgumentError, nil) { WindowMachines::TumblingWindows.new(10, aggregate: {}) }
      expect { WindowMachines::TumblingWindows.new(10, aggregate: Object.new) }.to raise_error(WindowMachines::Error)
    end
  end
end
