# frozen_string_literal: true

RSpec.describe WindowMachines::HoppingWindows do
  agg = WindowMachines::Aggregate

  subject(:windows) { described_class.new(10, 5, aggregate: agg::Collect.new, on_late: :drop) }

  describe ".new" do
    it "has readers, and allows advance == size" do
      tracker = described_class.new(10, 4, grace: 3, offset: 2, aggregate: agg::Count.new)
      expect([tracker.window_size, tracker.advance, tracker.grace, tracker.offset]).to eq([10, 4, 3, 2])
      expect(described_class.new(10, 10, aggregate: agg::Count.new).advance).to eq(10)
    end

    it "refuses zero lengths, advance past size, offset at or past advance, bad types", :mistyped do
      expect_gem_error(WindowMachines::ArgumentError, /size/) { described_class.new(0, 1, aggregate: agg::Count.new) }
      expect_gem_error(WindowMachines::ArgumentError, /advance/) { described_class.new(10, 0, aggregate: agg::Count.new) }
      expect_gem_error(WindowMachines::ArgumentError, /advance/) { described_class.new(10, 11, aggregate: agg::Count.new) }
      expect_gem_error(WindowMachines::ArgumentError, /offset/) do
        described_class.new(10, 4, offset: 4, aggregate: agg::Count.new)
      end
      expect_gem_error(WindowMachines::TypeError, /advance/) { described_class.new(10, 2.5, aggregate: agg::Count.new) }
      expect_gem_error(WindowMachines::RangeError, /advance/) { described_class.new(10, -1, aggregate: agg::Count.new) }
      expect_gem_error(WindowMachines::RangeError, /offset/) do
        described_class.new(10, 4, offset: 2**64, aggregate: agg::Count.new)
      end
      expect_gem_error(WindowMachines::ArgumentError, nil) do
        described_class.new(10, 5, aggregate: agg::Count.new, on_late: "drop")
      end
    end
  end

  it "puts an event in every window holding it, only those starting at 0 or later" do
    windows.add(:k, 2, :a)
    expect(windows.current(:k)).to eq([[0, 10, [:a]]])
    windows.add(:k, 7, :b)
    expect(windows.current(:k)).to eq([[0, 10, %i[a b]], [5, 15, [:b]]])
  end

  it "with panes smaller than the advance (size 10, advance 4: gcd 2)" do
    tracker = described_class.new(10, 4, aggregate: agg::Collect.new)
    tracker.add(:k, 9, 9)
    expect(tracker.current(:k).map { |start, finish, _| [start, finish] }).to eq([[0, 10], [4, 14], [8, 18]])
    tracker.add(:k, 13, 13)
    expect(tracker.current(:k)).to eq([[4, 14, [9, 13]], [8, 18, [9, 13]], [12, 22, [13]]])
    expect(tracker.each_closed.to_a).to eq([[:k, 0, 10, [9]]])
  end

  it "takes an event into the windows still open and is late only when all have closed" do
    windows.add(:k, 12, :a) # watermark 12: [0, 10) and [5, 15) hold nothing yet
    expect(windows.add(:k, 8, :b)).to be(true) # [5, 15) is open, [0, 10) closed
    expect(windows.current(:k)).to eq([[5, 15, %i[b a]], [10, 20, [:a]]])
    expect(windows.late_count).to eq(0)
    windows.add(:k, 15, :c)
    expect(windows.add(:k, 9, :d)).to be(false) # [0, 10) and [5, 15) both closed
    expect(windows.late_count).to eq(1)
    expect(windows.flush.to_a).to eq([[:k, 5, 15, %i[b a]], [:k, 10, 20, %i[a c]], [:k, 15, 25, [:c]]])
  end

  it "honours an offset" do
    tracker = described_class.new(10, 5, offset: 3, aggregate: agg::Count.new)
    tracker.add(:k, 9)
    expect(tracker.current(:k)).to eq([[3, 13, 1], [8, 18, 1]])
  end

  it "orders hand-overs by end, then key held longest, then start" do
    tracker = described_class.new(10, 5, grace: 100, aggregate: agg::Count.new, watermark: :manual)
    [["y", 7], ["x", 1], ["x", 6], ["y", 12]].each { |key, at| tracker.add(key, at) }
    tracker.advance_watermark(120)
    expect(tracker.each_closed.to_a).to eq(
      [["y", 0, 10, 1], ["x", 0, 10, 2], ["y", 5, 15, 2], ["x", 5, 15, 1], ["y", 10, 20, 1]]
    )
  end

  it "a raising custom merge or add leaves it unchanged; frozen refuses; dup is independent" do
    picky = Class.new do
      def initial = 0
      def add(acc, value) = value.negative? ? raise(IOError, "negative") : acc + value
      def merge(one, other) = one + other
    end.new
    tracker = described_class.new(10, 5, aggregate: picky)
    tracker.add(:k, 7, 1)
    before = [tracker.current(:k), tracker.size, tracker.watermark]
    expect { tracker.add(:k, 30, -1) }.to raise_error(IOError)
    expect([tracker.current(:k), tracker.size, tracker.watermark]).to eq(before)
    copy = tracker.dup
    copy.add(:k, 8, 5)
    expect(tracker.current(:k)).to eq([[0, 10, 1], [5, 15, 1]])
    expect(copy.current(:k)).to eq([[0, 10, 6], [5, 15, 6]])
    tracker.freeze
    expect_frozen_error(tracker) { tracker.add(:k, 8, 5) }
    expect_frozen_error(tracker) { tracker.flush.to_a }
    expect(tracker.current(:k)).to eq([[0, 10, 1], [5, 15, 1]])
  end

  it "holds up to 4,096 windows per event, far past sliding's 32, and refuses more when made" do
    agg = WindowMachines::Aggregate
    wide = described_class.new(4096, 1, aggregate: agg::Count.new)
    expect(wide.add(:k, 5_000)).to be(true)
    expect(wide.size).to eq(4096)
    expect(described_class.new(3600, 60, aggregate: agg::Count.new).tap { |h| h.add(:k, 7_200) }.size).to eq(60)
    expect { described_class.new(4097, 1, aggregate: agg::Count.new) }
      .to raise_error(WindowMachines::CapacityError, /up to 4097 windows, more than 4096/)
  end
end
