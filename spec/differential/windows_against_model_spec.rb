# frozen_string_literal: true

# TumblingWindows, HoppingWindows and SessionWindows against the plain-Ruby
# model in spec/support/plain_ruby/windows.rb (every result recomputed from
# the events a window holds), over random streams: out of order, late,
# with grace, offsets, hopping sizes whose panes are the gcd of size and
# advance, every built-in aggregator, a Hash of several, a custom one, each
# on_late mode and both watermark modes. After every operation the two must
# agree on what add returned (or raised), the watermark, late_count, size,
# key_count, current(key), what take_closed / each_closed handed over, and
# what the on_late callable saw; flush must hand over the same at the end.
#
# Inputs are chosen so that nothing the contract leaves open can differ:
# Floats are halves (so sums are exact in any order, and panes or merges
# may add in any association), Bignums and Floats never meet in one stream,
# Integers and Floats never tie in Min/Max (1 and 1.0 would tell which
# arrival was kept), only Sum and Mean are given refused inputs, the custom
# aggregator is commutative, and no timestamp is below the offset (which
# windows such an event belongs to is not specified).
RSpec.describe "Differential: keyed windows against the plain-Ruby model" do
  include WindowMachinesSpec::Differential

  let(:seed) { RSpec.configuration.seed }

  builtin = %w[Count Sum Min Max Mean Collect First Last].freeze
  # An unfrozen String among them: held as a frozen copy.
  let(:keys) { ["a", String.new("b"), :c, 1, [2, "x"], nil] }

  # Sum of squares, exact (Rationals); refuses 13 to show a raising add
  # leaves everything as it was.
  squares = Class.new do
    def initialize = freeze
    def initial = 0

    def add(acc, value)
      input = value.is_a?(Hash) ? value[:v] : value
      raise IOError, "unlucky" if input == 13

      input.is_a?(Numeric) ? acc + (input.to_r**2) : acc
    end

    def merge(one, other) = one + other
    def inspect = "#<squares>"
  end.new

  define_method(:aggregation) do |rng|
    case rng.rand(4)
    when 0
      name = builtin.sample(random: rng)
      field = rng.rand(2).zero? ? :v : nil
      [[name, field]]
    when 1
      builtin.sample(rng.rand(2..5), random: rng).map { |name| [name, rng.rand(3).zero? ? nil : :v] }
    when 2 then [[:custom, nil]]
    else [["Count", nil], [:custom, nil], ["Sum", :v], ["Collect", :v]]
    end
  end

  # One aggregator (the result is its value) or a Hash of them.
  define_method(:build) do |spec, namespace, single|
    parts = spec.map do |name, field|
      name == :custom ? squares : namespace.const_get(name).new(*[field].compact)
    end
    return parts.first if single

    spec.each_with_index.to_h { |(name, field), index| [:"#{name.downcase}_#{field}_#{index}", parts[index]] }
  end

  def input(rng, kind, refusable)
    return "not a number" if refusable && rng.rand(40).zero?
    return nil if rng.rand(8).zero?
    return 13 if rng.rand(30).zero?

    case kind
    when :ints then rng.rand(3).zero? ? (2**64) + rng.rand(-5..5) * (2**40) : rng.rand(-20..20)
    else rng.rand(2).zero? ? rng.rand(-20..20) + 0.5 : rng.rand(-20..20) * 2 + 1 # odd Integers, halves: no ties
    end
  end

  def value(rng, spec, kind)
    refusable = spec.any? { |name, _| %w[Sum Mean].include?(name) }
    fielded = spec.any? { |_, field| field == :v }
    return input(rng, kind, refusable) unless fielded

    rng.rand(15).zero? ? nil : { v: input(rng, kind, refusable) }
  end

  def build_pair(rng, shape, spec, single, on_late_calls, wide)
    grace = wide ? [100, 1_000].sample(random: rng) : [0, 0, 1, 3, 10].sample(random: rng)
    mode = rng.rand(4).zero? ? :manual : :stream
    on_late = %i[raise drop callable].sample(random: rng)
    late_of = lambda do |who|
      on_late == :callable ? ->(*args) { on_late_calls[who] << args } : on_late
    end
    options = ->(who) { { grace: grace, on_late: late_of.call(who), watermark: mode } }
    made = { gem: WindowMachines, model: PlainRuby }.to_h do |who, namespace|
      aggregate = build(spec, who == :gem ? WindowMachines::Aggregate : PlainRuby::Aggregate, single)
      tracker =
        case shape
        in [:tumbling, size, offset]
          namespace::TumblingWindows.new(size, offset: offset, aggregate: aggregate, **options.call(who))
        in [:hopping, size, advance, offset]
          namespace::HoppingWindows.new(size, advance, offset: offset, aggregate: aggregate, **options.call(who))
        in [:session, gap, max_sessions]
          namespace::SessionWindows.new(gap, max_sessions: max_sessions, aggregate: aggregate, **options.call(who))
        end
      [who, tracker]
    end
    [made[:gem], made[:model], mode, [grace, mode, on_late]]
  end

  def shape(rng, kind)
    case kind
    when :tumbling
      size = [1, 3, 5, 10].sample(random: rng)
      [:tumbling, size, rng.rand(3).zero? ? rng.rand(size) : 0]
    when :hopping
      # size/advance pairs with panes (their gcd) smaller than the advance.
      size, advance = [[10, 5], [10, 4], [9, 6], [6, 4], [7, 7], [12, 8], [5, 1], [15, 10]].sample(random: rng)
      [:hopping, size, advance, rng.rand(3).zero? ? rng.rand(advance) : 0]
    else
      [:session, [1, 3, 5].sample(random: rng), rng.rand(4).zero? ? 6 : nil]
    end
  end

  # `wide`: a grace long enough, and events far enough out of order, for a
  # key to hold dozens of windows at once (kept in an ordered map past 32).
  def run_stream(rng, kind, history, wide: false)
    spec = aggregation(rng)
    single = spec.size == 1 && rng.rand(2).zero?
    values = rng.rand(2).zero? ? :ints : :floats
    calls = { gem: [], model: [] }
    layout = shape(rng, kind)
    gem, model, mode, config = build_pair(rng, layout, spec, single, calls, wide)
    history << [:new, layout, spec, single, config, values]
    offset = layout[0] == :session ? 0 : layout.last
    top = offset
    check = lambda do |label|
      message = -> { "#{label}: gem and model differ\n#{reproduce(seed, kind.to_s, history)}" }
      expect([gem.watermark, gem.late_count, gem.size, gem.key_count])
        .to eq([model.watermark, model.late_count, model.size, model.key_count]), message
      key = keys.sample(random: rng)
      expect(gem.current(key)).to eq(model.current(key)), message
      expect(calls[:gem]).to eq(calls[:model]), message
    end

    rng.rand(wide ? 300..500 : 60..140).times do
      case rng.rand(20)
      when 0..13
        key = wide ? keys.first(2).sample(random: rng) : keys.sample(random: rng)
        # Wide: time moves on steadily while most events come far behind it.
        top += rng.rand(0..2) if wide
        timestamp = [top + (wide ? -rng.rand(0..300) : rng.rand(-12..4)), offset].max
        top = [top, timestamp].max
        value = value(rng, spec, values)
        history << [:add, key, timestamp, value]
        expected = outcome { model.add(key, timestamp, value) }
        actual = outcome { gem.add(key, timestamp, value) }
        expect(actual).to eq(expected), -> { "add\n#{reproduce(seed, kind.to_s, history)}" }
      when 14, 15
        if mode == :manual
          to = [top + rng.rand(-15..2), 0].max
          history << [:advance_watermark, to]
          expect(gem.advance_watermark(to)).to eq(model.advance_watermark(to))
        else
          history << [:take_closed]
          expect(gem.take_closed).to eq(model.take_closed), -> { reproduce(seed, kind.to_s, history) }
        end
      when 16, 17
        history << [:each_closed]
        expect(gem.each_closed.to_a).to eq(model.each_closed.to_a), -> { reproduce(seed, kind.to_s, history) }
      when 18
        history << [:take_closed]
        expect(gem.take_closed).to eq(model.take_closed), -> { reproduce(seed, kind.to_s, history) }
      else
        history << [:dup]
        copy = gem.dup
        expect(copy.each_closed.to_a).to eq(model.dup.each_closed.to_a)
      end
      check.call(history.last.first)
    end
    history << [:flush]
    expect(gem.flush.to_a).to eq(model.flush.to_a), -> { reproduce(seed, kind.to_s, history) }
    check.call(:flush)
  end

  %i[tumbling hopping session].each_with_index do |kind, salt|
    it "agrees on #{kind} windows over random streams" do
      rng = Random.new((seed * 1_000) + 40 + salt)
      30.times do
        history = []
        run_stream(rng, kind, history)
      end
    end
  end

  it "keeps apart the parts of a pane a key holding dozens reopens after some of its windows closed" do
    made = [WindowMachines, PlainRuby].map do |namespace|
      namespace::HoppingWindows.new(5, 1, grace: 60, aggregate: namespace::Aggregate::Collect.new)
    end
    # Panes 0 to 79 each get a part; at 100 the watermark is 40, which has
    # closed the first windows of panes 36 to 39, so these events make a
    # second part of each, whose windows start later.
    events = (0...80).map { |at| [at, at] } + [[100, 100]] + (36...40).map { |at| [at, -at] }
    made.each { |tracker| events.each { |at, value| tracker.add("a", at, value) } }
    gem, model = made
    expect(gem.current("a")).to eq(model.current("a"))
    expect(gem.each_closed.to_a).to eq(model.each_closed.to_a)
    expect(gem.flush.to_a).to eq(model.flush.to_a)
  end

  %i[tumbling hopping].each_with_index do |kind, salt|
    it "agrees on #{kind} windows when a key holds dozens at once, out of order" do
      rng = Random.new((seed * 1_000) + 50 + salt)
      6.times do
        history = []
        run_stream(rng, kind, history, wide: true)
      end
    end
  end
end
