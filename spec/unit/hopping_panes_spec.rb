# frozen_string_literal: true

# HoppingWindows aggregate by panes (slices of gcd(size, advance)): an event
# updates one pane, and a window's result is merged from its panes when it
# is handed over (or read with current). These are the cases panes make
# delicate: a window that closed but was not yet handed over must not see
# events that came after it closed; merges that only Ruby can do (custom
# aggregators, Bignum sums, String extremes) run at hand-over, where a
# raising or re-entering merge must leave the tracker as it was; and
# checkpoints carry a pane's first window when it is not the first holding
# it.
RSpec.describe WindowMachines::HoppingWindows, "panes" do
  let(:agg) { WindowMachines::Aggregate }

  it "keeps an event out of a window that closed before it came but is not yet handed over" do
    tracker = described_class.new(10, 5, aggregate: agg::Collect.new, watermark: :manual)
    tracker.add(:k, 7, :before)
    tracker.advance_watermark(10) # [0, 10) has closed; [5, 15) is open
    tracker.add(:k, 8, :after)
    expect(tracker.current(:k)).to eq([[5, 15, %i[before after]]])
    expect(tracker.each_closed.to_a).to eq([[:k, 0, 10, [:before]]])
    expect(tracker.flush.to_a).to eq([[:k, 5, 15, %i[before after]]])
  end

  it "counts windows, not panes, and frees a key once its last window is handed over" do
    tracker = described_class.new(10, 5, aggregate: agg::Count.new, watermark: :manual)
    tracker.add(:k, 7)
    tracker.add(:k, 12)
    expect(tracker.size).to eq(3) # [0, 10), [5, 15), [10, 20)
    tracker.advance_watermark(15)
    expect(tracker.each_closed.to_a).to eq([[:k, 0, 10, 1], [:k, 5, 15, 2]])
    expect([tracker.size, tracker.key_count]).to eq([1, 1])
    expect(tracker.flush.to_a).to eq([[:k, 10, 20, 1]])
    expect([tracker.size, tracker.key_count]).to eq([0, 0])
  end

  it "merges in event-time order across panes and parts (Collect, First, Last)" do
    tracker = described_class.new(6, 2, grace: 10,
                                         aggregate: { all: agg::Collect.new, first: agg::First.new, last: agg::Last.new })
    [[5, :e5], [1, :e1], [3, :e3], [1, :again1], [0, :e0]].each { |ts, value| tracker.add(:k, ts, value) }
    window = tracker.flush.find { |_, start, _, _| start.zero? }
    expect(window).to eq([:k, 0, 6, { all: %i[e0 e1 again1 e3 e5], first: :e0, last: :e5 }])
  end

  it "runs a custom merge at hand-over, and one that raises leaves the window held" do
    flaky = Class.new do
      attr_accessor :broken

      def initial = []
      def add(acc, value) = acc + [value]

      def merge(one, other)
        raise IOError, "merge failed" if broken

        one + other
      end
    end.new
    tracker = described_class.new(10, 5, aggregate: flaky, watermark: :manual)
    tracker.add(:k, 2, :a)
    tracker.add(:k, 7, :b)
    tracker.advance_watermark(10)
    flaky.broken = true
    expect { tracker.take_closed }.to raise_error(IOError, "merge failed")
    expect([tracker.size, tracker.current(:k)]).to eq([2, [[5, 15, [:b]]]])
    flaky.broken = false
    expect(tracker.take_closed).to eq([:k, 0, 10, %i[a b]])
  end

  it "merges Bignum sums and String extremes with Ruby, exactly" do
    tracker = described_class.new(4, 2, aggregate: { sum: agg::Sum.new(:n), least: agg::Min.new(:s) })
    tracker.add(:k, 1, { n: 2**64, s: "pear" })
    tracker.add(:k, 3, { n: 2**64, s: "apple" })
    expect(tracker.flush.to_a).to eq([[:k, 0, 4, { sum: 2**65, least: "apple" }],
                                      [:k, 2, 6, { sum: 2**64, least: "apple" }]])
  end

  it "refuses a Min input it cannot compare with an extreme a shared window holds" do
    tracker = described_class.new(4, 2, aggregate: agg::Min.new)
    tracker.add(:k, 1, "pear")
    expect { tracker.add(:k, 3, 7) }.to raise_error(ArgumentError, /comparison/)
    expect(tracker.add(:k, 5, 7)).to be(true) # shares no window with "pear"
    expect(tracker.flush.to_a).to eq([[:k, 0, 4, "pear"], [:k, 2, 6, 7], [:k, 4, 8, 7]])
  end

  it "survives a merge that re-enters the tracker: the window is handed over once" do
    tracker = nil
    reentrant = Class.new do
      define_method(:initial) { 0 }
      define_method(:add) { |acc, value| acc + value }
      define_method(:merge) do |one, other|
        tracker.add(:other, 100, 1) if tracker.current(:other).empty?
        one + other
      end
    end.new
    tracker = described_class.new(10, 5, aggregate: reentrant, watermark: :manual)
    tracker.add(:k, 2, 1)
    tracker.add(:k, 7, 10)
    tracker.advance_watermark(10)
    expect(tracker.each_closed.to_a).to eq([[:k, 0, 10, 11]])
    expect(tracker.flush.to_a).to eq([[:k, 5, 15, 10], [:other, 95, 105, 1], [:other, 100, 110, 1]])
  end

  it "checkpoints a pane that no longer goes into its first window with that window, and reads it back" do
    tracker = described_class.new(10, 5, aggregate: agg::Collect.new, watermark: :manual)
    tracker.add("k", 7, 1)
    tracker.advance_watermark(10)
    tracker.add("k", 8, 2)
    checkpoint = tracker.to_h
    expect(checkpoint[:windows]).to eq([["k", 5, 10, [[7, 1]]], ["k", 5, 10, [[8, 2]], 5]])
    restored = described_class.from_h(JSON.parse(JSON.generate(checkpoint), symbolize_names: true),
                                      aggregate: agg::Collect.new)
    expect(restored.each_closed.to_a).to eq([["k", 0, 10, [1]]])
    expect(restored.flush.to_a).to eq([["k", 5, 15, [1, 2]]])
  end

  it "refuses checkpoint panes no stream could have made" do
    checkpoint = described_class.new(10, 5, aggregate: agg::Min.new).to_h
    [
      [[:k, 5, 10, 1, 10]], # first window past the pane's last
      [[:k, 5, 10, 1, 3]], # not a window start
      [[:k, 5, 10, 1], [:k, 5, 10, 2]], # the same part twice
      [[:k, 0, 10, 1]] # a window, not a pane
    ].each do |windows|
      expect { described_class.from_h(checkpoint.merge(windows: windows), aggregate: agg::Min.new) }
        .to raise_error(WindowMachines::ArgumentError)
    end
    expect { described_class.from_h(checkpoint.merge(time: 9, windows: [[:k, 0, 5, "a"], [:k, 5, 10, 1]]), aggregate: agg::Min.new) }
      .to raise_error(WindowMachines::ArgumentError, /no stream of events could have left together/)
  end
end
