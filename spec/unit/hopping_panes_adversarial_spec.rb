# frozen_string_literal: true

require "json"
require "objspace"

# HoppingWindows' panes attacked: every result checked against a plain-Ruby
# reference that keeps each window's events separately (no panes, no parts,
# nothing merged), over random streams that mix out-of-order and late
# events, manual watermarks, interleaved hand-overs, copies and checkpoints;
# merges that re-enter the tracker, raise, freeze it or switch Fiber or
# Thread; and a key churning through 200,000 windows. Every random example
# draws from the RSpec seed, which a failure prints with what led to it.
#
# The reference follows README "Aggregating windows": a window holds every
# event that came while it was open; results are recomputed from those
# events (Collect, First and Last in event-time order, equal timestamps in
# arrival order). A custom aggregator's result is `merge` of the panes'
# accumulators, earliest pane first and, within a pane, the parts in order
# of their first window, each part `add`ing its events in arrival order: for
# an Array-concatenating aggregator, the events ordered by (pane, first open
# window when the event came, arrival). Within a pane that is arrival order:
# an event that makes a part of its own came after every event of the parts
# before it. Windows that flush handed over while still open and that an
# event then opens again are the exception (the gem keeps arrival order
# there too; "keeps equal timestamps in arrival order after a flush cut
# short" checks it), so the random streams keep order-revealing
# aggregators away from them.
module HoppingPanesAdversarialSpec
  # Ids concatenated: a result that shows the order parts were merged in.
  # Named, so that Marshal can write a tracker holding it.
  class Concat
    def initial = []
    def add(acc, value) = acc + [value[:id]]
    def merge(one, other) = one + other
  end

  # Concat whose merge first calls `hook` (set per example).
  class HookedConcat < Concat
    attr_accessor :hook

    def merge(one, other)
      hook&.call
      super
    end
  end

  # Raised by merges on purpose.
  class MergeFailed < StandardError; end

  # Windows kept separately, each with the events it took in.
  class Reference
    Event = Struct.new(:timestamp, :seq, :value, :pane, :first)

    attr_reader :late_count

    def initialize(config, on_late)
      @size = config[:size]
      @step = config[:advance]
      @offset = config[:offset]
      @grace = config[:grace]
      @mode = config[:watermark]
      @parts = config[:parts]
      @single = config[:single]
      @on_late = on_late
      @pane = @size.gcd(@step)
      @windows = {} # [key, start] => [Event], in arrival order
      @seen = {} # key => when it became held
      @held = 0
      @seq = 0
      @time = nil
      @late_count = 0
    end

    def initialize_copy(source)
      super
      @windows = @windows.transform_values(&:dup)
      @seen = @seen.dup
    end

    def watermark = @time && [@time - @grace, 0].max
    def size = @windows.size
    def key_count = @seen.size

    def add(key, timestamp, value = nil)
      return false if timestamp < @offset

      time = @mode == :stream ? [@time, timestamp].compact.max : @time
      mark = time && [time - @grace, 0].max
      open = starts(timestamp).select { |start| mark.nil? || start + @size > mark }
      return late(key, timestamp, value, mark) if open.empty?

      @seq += 1
      event = Event.new(timestamp, @seq, value, timestamp - ((timestamp - @offset) % @pane), open.min)
      open.each { |start| (@windows[[key, start]] ||= []) << event }
      @seen[key] ||= (@held += 1)
      @time = time
      true
    end

    def advance_watermark(timestamp)
      return false unless @time.nil? || timestamp > @time

      @time = timestamp
      true
    end

    def current(key)
      mark = watermark
      @windows.select { |(held, start), _| held == key && (mark.nil? || start + @size > mark) }
              .sort_by { |(_, start), _| start }
              .map { |(_, start), events| [start, start + @size, result(events)] }
    end

    def take_closed
      mark = watermark
      mark && hand_over(@windows.keys.select { |_, start| start + @size <= mark })
    end

    def take_open = hand_over(@windows.keys)

    def each_closed
      return enum_for(:each_closed) unless block_given?

      while (window = take_closed)
        yield(*window)
      end
      self
    end

    def flush
      return enum_for(:flush) unless block_given?

      while (window = take_open)
        yield(*window)
      end
      self
    end

    private

    def starts(timestamp)
      newest = timestamp - ((timestamp - @offset) % @step)
      newest.step(@offset, -@step).take_while { |start| start + @size > timestamp }
    end

    def late(key, timestamp, value, mark)
      @late_count += 1
      case @on_late
      when :raise
        error = WindowMachines::LateEventError.new("late")
        { timestamp: timestamp, watermark: mark, key: key }.each { |name, at| error.instance_variable_set(:"@#{name}", at) }
        raise error
      when :drop then false
      else
        @on_late.call(key, timestamp, value, mark)
        false
      end
    end

    def hand_over(candidates)
      return nil if candidates.empty?

      key, start = candidates.min_by { |held, at| [at + @size, @seen.fetch(held), at] }
      events = @windows.delete([key, start])
      @seen.delete(key) unless @windows.each_key.any? { |held, _| held == key }
      [key, start, start + @size, result(events)]
    end

    def result(events)
      values = @parts.transform_values { |(kind, field)| compute(kind, field, events) }
      @single ? values.values.first : values
    end

    def compute(kind, field, events)
      inputs = events.map { |event| field ? event.value[field] : event.value }
      in_time = -> { events.sort_by { |event| [event.timestamp, event.seq] } }
      case kind
      when :count then field ? inputs.compact.size : inputs.size
      when :sum then inputs.compact.sum(0)
      when :mean then inputs.compact.then { |kept| kept.empty? ? nil : kept.sum(0).fdiv(kept.size) }
      when :min then inputs.compact.min
      when :max then inputs.compact.max
      when :collect then in_time.call.map { |event| event.value[field] }
      when :first then in_time.call.first&.value&.fetch(field)
      when :last then in_time.call.last&.value&.fetch(field)
      when :concat then events.sort_by { |event| [event.pane, event.first, event.seq] }.map { |event| event.value[:id] }
      end
    end
  end

  # What a random stream is made of.
  module Streams
    # size, advance: panes (the gcd) smaller than the advance, equal to it,
    # and tumbling.
    SHAPES = [[10, 4], [6, 4], [9, 6], [12, 8], [15, 10], [10, 5], [8, 2], [5, 1], [7, 7]].freeze

    # Every aggregator a stream may use, by the name its result carries.
    KINDS = {
      count: [:count, nil], present: [:count, :n], sum: [:sum, :n], mean: [:mean, :n],
      min: [:min, :m], max: [:max, :m], all: [:collect, :id], first: [:first, :id],
      last: [:last, :id], concat: [:concat, nil]
    }.freeze

    # Min and Max read `m`: Integers for some keys, Strings for others.
    KEYS = { "a" => :int, "b" => :str, "c" => :int, "d" => :str }.freeze
    WORDS = %w[apple fig kiwi lime pear plum quince].freeze

    # Aggregators whose results do not depend on the order of parts, for the
    # streams that cut flush short (where this reference's order is not the
    # gem's; see the header).
    ORDER_FREE = %i[count present sum mean min max].freeze

    module_function

    def config(rng, kinds: KINDS.keys, on_late: %i[raise drop callable], flush_first: true)
      size, advance = SHAPES.sample(random: rng)
      names = kinds.sample(rng.rand(1..kinds.size), random: rng)
      single = names.size == 1 && rng.rand(2).zero?
      {
        size: size, advance: advance, offset: rng.rand(3).zero? ? rng.rand(advance) : 0,
        grace: [0, 0, 1, 3, 7].sample(random: rng), watermark: rng.rand(3).zero? ? :manual : :stream,
        on_late: on_late.sample(random: rng), parts: names.to_h { |name| [name, KINDS.fetch(name)] },
        single: single, flush_first: flush_first && (names - ORDER_FREE).empty?
      }
    end

    def aggregate(config, concat = Concat.new)
      built = config[:parts].transform_values do |(kind, field)|
        kind == :concat ? concat : WindowMachines::Aggregate.const_get(kind.capitalize).new(*[field].compact)
      end
      config[:single] ? built.values.first : built
    end

    def tracker(config, on_late, concat = Concat.new)
      WindowMachines::HoppingWindows.new(config[:size], config[:advance],
                                         offset: config[:offset], grace: config[:grace],
                                         watermark: config[:watermark], on_late: on_late,
                                         aggregate: aggregate(config, concat))
    end

    def number(rng)
      case rng.rand(12)
      when 0 then nil
      when 1 then 2**64 + rng.rand(-3..3) * 2**40 # a Bignum
      when 2 then 2**62 + rng.rand(100) # fits 64 bits, two of them do not
      when 3 then -(2**62)
      else rng.rand(-20..20)
      end
    end

    def value(rng, key, id)
      m = if rng.rand(10).zero? then nil
          elsif KEYS.fetch(key) == :int then rng.rand(-30..30)
          else WORDS.sample(random: rng)
          end
      { id: id, n: number(rng), m: m }
    end

    # A timestamp around the newest so far: mostly out of order, now and
    # then before the offset.
    def timestamp(rng, top, offset)
      return rng.rand(offset) if offset.positive? && rng.rand(40).zero?

      [top + rng.rand(-14..3), offset].max
    end
  end
end

RSpec.describe WindowMachines::HoppingWindows, "panes under attack" do
  agg = WindowMachines::Aggregate

  let(:seed) { RSpec.configuration.seed }

  def streams = HoppingPanesAdversarialSpec::Streams

  # A result, or what was raised: late events with what they carry.
  def outcome
    [:ok, yield]
  rescue WindowMachines::LateEventError => e
    [:late, e.timestamp, e.watermark, e.key]
  rescue StandardError => e
    [:error, e.class]
  end

  def perform(tracker, operation)
    case operation
    in [:add, key, timestamp, value] then tracker.add(key, timestamp, value)
    in [:advance_watermark, timestamp] then tracker.advance_watermark(timestamp)
    in [:take_closed] then tracker.take_closed
    in [:each_closed] then tracker.each_closed.to_a
    in [:flush] then tracker.flush.to_a
    in [:flush_first, count] then tracker.flush.first(count)
    end
  end

  # What the operation returned or raised, and what on_late was given.
  def run(tracker, operation, late_calls)
    before = late_calls.size
    [outcome { perform(tracker, operation) }, late_calls.drop(before)]
  end

  def observe(tracker, key)
    [tracker.watermark, tracker.late_count, tracker.size, tracker.key_count, tracker.current(key)]
  end

  def random_operation(rng, config, top)
    case rng.rand(100)
    when 0...62
      key = streams::KEYS.keys.sample(random: rng)
      [:add, key, streams.timestamp(rng, top, config[:offset]), nil]
    when 62...74 then config[:watermark] == :manual ? [:advance_watermark, [top + rng.rand(-8..3), 0].max] : [:take_closed]
    when 74...84 then [:take_closed]
    when 84...91 then [:each_closed]
    when 91...93 then [:flush]
    when 93...96 then config[:flush_first] ? [:flush_first, rng.rand(1..3)] : [:each_closed]
    else [:copy]
    end
  end

  # How to rerun a failure, and what led to it.
  def trail(label, history, expected = nil, actual = nil)
    "#{label}\nseed #{seed} (rerun with `rspec #{__FILE__} --seed #{seed}`)\n" \
      "#{history.first(2).map(&:inspect).join("\n")}\nlast operations:\n  " \
      "#{history.drop(2).last(30).map(&:inspect).join("\n  ")}\nexpected: #{expected.inspect}\n     got: #{actual.inspect}"
  end

  # Runs one random stream on a gem tracker and the reference, and on
  # every copy made of them along the way; after each operation, yields
  # the pairs, which one it ran on, the operation and the gem's outcome.
  def run_stream(rng, config, history, &block)
    late_calls = []
    on_late = config[:on_late] == :callable ? ->(*args) { late_calls << args } : config[:on_late]
    pairs = [[streams.tracker(config, on_late), HoppingPanesAdversarialSpec::Reference.new(config, on_late)]]
    history << config
    step = lambda do |at, operation|
      gem, reference = pairs[at]
      history << [at, *operation]
      expected = run(reference, operation, late_calls)
      actual = run(gem, operation, late_calls)
      expect(actual).to eq(expected), -> { trail("#{operation.first} differs", history, expected, actual) }
      key = streams::KEYS.keys.sample(random: rng)
      seen, wanted = observe(gem, key), observe(reference, key)
      expect(seen).to eq(wanted), -> { trail("state after it differs (key #{key})", history, wanted, seen) }
      block&.call(pairs, at, operation, actual, late_calls, on_late)
    end
    top = config[:offset]
    id = 0
    rng.rand(40..90).times do
      at = rng.rand(pairs.size)
      operation = random_operation(rng, config, top)
      if operation == [:copy]
        gem, reference = pairs[at]
        pairs << [rng.rand(2).zero? ? gem.dup : gem.clone, reference.dup]
        history << [:copy, at]
        next
      end
      if operation.first == :add
        operation[3] = streams.value(rng, operation[1], id += 1)
        top = [top, operation[2]].max
      end
      step.call(at, operation)
    end
    pairs.each_index do |at|
      step.call(at, [:flush])
      expect([pairs[at].first.size, pairs[at].first.key_count]).to eq([0, 0])
    end
  end

  describe "against a reference that keeps every window separately" do
    it "agrees over random streams with late events, watermarks, hand-overs, copies and current" do
      rng = Random.new(seed * 1_000 + 71)
      100.times do |stream|
        run_stream(rng, streams.config(rng), [:"stream #{stream}"])
      end
    end

    it "agrees when every stream holds Bignum sums, String extremes and an order-revealing custom merge" do
      rng = Random.new(seed * 1_000 + 72)
      kinds = %i[sum min max all first last concat]
      40.times do |stream|
        config = streams.config(rng, kinds: kinds).merge(parts: kinds.to_h { |name| [name, streams::KINDS[name]] },
                                                         single: false, flush_first: false)
        run_stream(rng, config, [:"stream #{stream}"])
      end
    end
  end

  describe "checkpoints" do
    # Reads a checkpoint of `gem` back: to_h through JSON (String keys), or
    # Marshal.
    def restored(gem, how, on_late)
      case how
      when :json
        described_class.from_h(JSON.parse(JSON.generate(gem.to_h)), aggregate: gem.aggregate, on_late: on_late)
      when :marshal then Marshal.load(Marshal.dump(gem))
      end
    end

    def ways(config)
      ways = []
      ways << :json unless config[:parts].key?(:concat) # to_h refuses custom aggregators
      ways << :marshal unless config[:on_late] == :callable # Marshal cannot write a Proc
      ways
    end

    # Whether to_h lists a key's pane part twice (same pane, same window to
    # go into next); nil when to_h cannot be made.
    def repeats_a_part?(gem)
      gem.to_h[:windows].map { |key, start, _, _, from| [key, start, from] }.tally.values.max.to_i > 1
    rescue WindowMachines::TypeError
      nil
    end

    # Runs random streams; at random points reads checkpoints of a tracker
    # back, gives each copy every operation its original gets from then on,
    # and expects the same outcomes and state. Returns how many checkpoints
    # were read back, and how many of them repeated a part.
    def round_trips(rng, count, every:, hopping: false)
      read_back = repeated = 0
      count.times do |stream|
        # Hopping: shapes where a pane is in several windows, no grace (so
        # that windows close between events of their panes), and aggregators
        # to_h can write, to see which checkpoints repeat a part.
        config = streams.config(rng, kinds: hopping ? streams::KINDS.keys - [:concat] : streams::KINDS.keys)
        config = config.merge(size: 10, advance: [4, 5].sample(random: rng), offset: 0, grace: 0) if hopping
        config = config.merge(on_late: %i[raise drop].sample(random: rng)) if ways(config).empty?
        copies = Hash.new { |hash, at| hash[at] = [] }
        history = [:"stream #{stream}"]
        run_stream(rng, config, history) do |pairs, at, operation, actual, late_calls, on_late|
          gem = pairs[at].first
          copies[at].each do |how, copy|
            got = run(copy, operation, late_calls)
            expect(got).to eq(actual), -> { trail("the #{how} copy differs", history, actual, got) }
            expect(observe(copy, "b")).to eq(observe(gem, "b")), -> { trail("the #{how} copy's state differs", history) }
          end
          next unless rng.rand(every).zero?

          repeated += 1 if repeats_a_part?(gem)
          ways(config).each do |how|
            copy = restored(gem, how, on_late)
            expect(copy.to_h).to eq(gem.to_h) if how == :json
            copies[at] << [how, copy]
            copies[at].shift if copies[at].size > 6
            read_back += 1
          end
        end
      end
      [read_back, repeated]
    end

    it "round-trip (to_h through JSON, and Marshal) at random points, and then hand over what the original does" do
      read_back, = round_trips(Random.new(seed * 1_000 + 73), 60, every: 3)
      expect(read_back).to be > 200
    end

    it "round-trip when a hand-over has brought two parts of a pane to the same first window" do
      tracker = described_class.new(10, 5, aggregate: HoppingPanesAdversarialSpec::Concat.new, watermark: :manual)
      tracker.add("k", 7, { id: 1 })
      tracker.advance_watermark(10) # [0, 10) closes; the pane [5, 10) goes on into [5, 15)
      tracker.add("k", 8, { id: 2 }) # a part of its own, kept out of [0, 10)
      expect(tracker.take_closed).to eq(["k", 0, 10, [1]])
      tracker.add("k", 9, { id: 3 })
      copy = Marshal.load(Marshal.dump(tracker))
      [tracker, copy].each { |one| one.add("k", 6, { id: 4 }) }
      expect(copy.flush.to_a).to eq([["k", 5, 15, [1, 2, 3, 4]]])
      expect(tracker.flush.to_a).to eq([["k", 5, 15, [1, 2, 3, 4]]])

      collect = described_class.new(10, 5, aggregate: agg::Collect.new, watermark: :manual)
      [[7, :once], [:advance, 10], [8, :late], [:take], [9, :after]].each do |at, value|
        case at
        when :advance then collect.advance_watermark(value)
        when :take then collect.take_closed
        else collect.add("k", at, value.to_s)
        end
      end
      expect(collect.to_h[:windows]).to eq([["k", 5, 10, [[7, "once"]], 5], ["k", 5, 10, [[8, "late"], [9, "after"]], 5]])
      json = described_class.from_h(JSON.parse(JSON.generate(collect.to_h)), aggregate: agg::Collect.new)
      expect(json.to_h).to eq(collect.to_h)
      expect(json.flush.to_a).to eq([["k", 5, 15, %w[once late after]]])

      read_back, repeated = round_trips(Random.new(seed * 1_000 + 74), 50, every: 1, hopping: true)
      expect(read_back).to be > 1_000
      expect(repeated).to be_positive # what this example is about did come up
    end
  end

  describe "merges that re-enter the tracker at hand-over" do
    let(:concat) { HoppingPanesAdversarialSpec::HookedConcat.new }

    # Keys "k" and "j", each with events in two panes of [0, 10).
    def two_keys(tracker)
      [["k", 2, 1], ["k", 7, 2], ["j", 3, 3], ["j", 8, 4]].each { |key, at, id| tracker.add(key, at, { id: id }) }
      tracker
    end

    def manual(**options)
      described_class.new(10, 5, aggregate: concat, watermark: :manual, **options)
    end

    it "takes in events a merge adds, retries, and hands the window over once, without them" do
      tracker = two_keys(manual)
      tracker.advance_watermark(10)
      added = false
      concat.hook = lambda do
        next if added

        added = true
        tracker.add("k", 9, { id: 5 }) # [0, 10) has closed: only [5, 15) takes it
        tracker.add("n", 12, { id: 6 }) # a key of its own
      end
      expect(tracker.each_closed.to_a).to eq([["k", 0, 10, [1, 2]], ["j", 0, 10, [3, 4]]])
      expect(tracker.flush.to_a).to eq([["k", 5, 15, [2, 5]], ["j", 5, 15, [4]], ["n", 5, 15, [6]], ["n", 10, 20, [6]]])
    end

    it "hands each window over once when a merge takes windows itself, and loses none" do
      tracker = two_keys(manual)
      tracker.add("k", 12, { id: 5 })
      tracker.advance_watermark(15)
      inner = []
      reentered = false
      concat.hook = lambda do
        next if reentered

        reentered = true
        inner << tracker.take_closed
      end
      outer = tracker.take_closed
      expect(inner).to eq([["k", 0, 10, [1, 2]]])
      expect(outer).to eq(["j", 0, 10, [3, 4]])
      reentered = false
      inner.clear
      rest = tracker.each_closed.to_a
      expect(inner).to eq([["k", 5, 15, [2, 5]]]) # taken inside the merge for [5, 15) itself
      expect(rest).to eq([["j", 5, 15, [4]]])
      expect(tracker.flush.to_a).to eq([["k", 10, 20, [5]]])
    end

    it "gives up after 8 tries when every merge changes the tracker, hands nothing over, and keeps what was added" do
      tracker = two_keys(manual)
      tracker.advance_watermark(10)
      calls = 0
      concat.hook = lambda do
        calls += 1
        tracker.add("other", 100 + calls, { id: 100 + calls })
      end
      expect { tracker.take_closed }.to raise_error(RuntimeError, /changed during each of 8 tries.*nothing was handed over/)
      expect(calls).to eq(8)
      concat.hook = nil
      expect(tracker.current("other").map(&:first)).to eq([95, 100, 105])
      expect(tracker.each_closed.to_a).to eq([["k", 0, 10, [1, 2]], ["j", 0, 10, [3, 4]]])
      expect(tracker.flush.map { |key, start, _, result| [key, start, result.size] })
        .to eq([["k", 5, 1], ["j", 5, 1], ["other", 95, 4], ["other", 100, 8], ["other", 105, 4]])
    end

    it "keeps the window a merge raised in, and never hands over again those handed before" do
      tracker = two_keys(manual)
      tracker.add("k", 12, { id: 5 })
      tracker.advance_watermark(15)
      calls = 0
      concat.hook = -> { raise HoppingPanesAdversarialSpec::MergeFailed, "no" if [2, 3].include?(calls += 1) }
      handed = []
      expect { tracker.each_closed { |*window| handed << window } }.to raise_error(HoppingPanesAdversarialSpec::MergeFailed)
      expect(handed).to eq([["k", 0, 10, [1, 2]]])
      expect { tracker.take_closed }.to raise_error(HoppingPanesAdversarialSpec::MergeFailed)
      expect(tracker.size).to eq(4)
      expect(tracker.take_closed).to eq(["j", 0, 10, [3, 4]])
      expect(tracker.flush.to_a).to eq([["k", 5, 15, [2, 5]], ["j", 5, 15, [4]], ["k", 10, 20, [5]]])
      expect(calls).to eq(5)
    end

    it "gives a copy made inside a merge the window being handed over, for it to hand over too" do
      tracker = two_keys(manual)
      tracker.advance_watermark(10)
      copies = []
      concat.hook = -> { copies.push(tracker.dup, tracker.clone) if copies.empty? }
      expect(tracker.take_closed).to eq(["k", 0, 10, [1, 2]])
      concat.hook = nil
      copies.each do |copy|
        expect(copy.take_closed).to eq(["k", 0, 10, [1, 2]])
        copy.add("k", 9, { id: 9 })
      end
      expect(tracker.current("k")).to eq([[5, 15, [2]]])
      expect(copies.map { |copy| copy.current("k") }).to all(eq([[5, 15, [2, 9]]]))
    end

    it "never changes a tracker that a merge froze during the hand-over" do
      tracker = two_keys(manual)
      tracker.advance_watermark(10)
      held = tracker.dup.flush.to_a
      concat.hook = -> { tracker.freeze }
      expect { tracker.take_closed }.to raise_error(FrozenError)
      expect([tracker.size, tracker.dup.flush.to_a]).to eq([4, held])
    end

    it "leaves the tracker usable while a merge has switched Fiber, and hands each window over once" do
      tracker = manual
      [[2, 1], [7, 2], [12, 3]].each { |at, id| tracker.add("k", at, { id: id }) }
      tracker.advance_watermark(15) # [0, 10) and [5, 15) closed, each merged from two panes
      paused = nil
      concat.hook = -> { Fiber.yield(:paused) if Fiber.current.equal?(paused) }
      paused = Fiber.new { tracker.take_closed }
      expect(paused.resume).to eq(:paused) # inside the merge for [0, 10)
      expect(tracker.take_closed).to eq(["k", 0, 10, [1, 2]]) # this Fiber hands it over meanwhile
      tracker.add("k", 14, { id: 4 })
      expect(paused.resume).to eq(:paused) # the tracker changed: it retries, with [5, 15)
      expect(paused.resume).to eq(["k", 5, 15, [2, 3]])
      expect(tracker.flush.to_a).to eq([["k", 10, 20, [3, 4]]])
    end

    it "is not held up by a Fiber left suspended inside a merge" do
      tracker = two_keys(manual)
      tracker.advance_watermark(10)
      paused = nil
      concat.hook = -> { Fiber.yield(:paused) if Fiber.current.equal?(paused) }
      paused = Fiber.new { tracker.take_closed }
      expect(paused.resume).to eq(:paused)
      expect(tracker.each_closed.to_a).to eq([["k", 0, 10, [1, 2]], ["j", 0, 10, [3, 4]]])
      tracker.add("k", 9, { id: 5 })
      expect(paused.resume).to be_nil # nothing left closed once it is resumed
      expect(tracker.flush.to_a).to eq([["k", 5, 15, [2, 5]], ["j", 5, 15, [4]]])
    end

    it "hands each window over once when a merge waits for another Thread that takes windows meanwhile" do
      tracker = manual
      [[2, 1], [7, 2], [12, 3]].each { |at, id| tracker.add("k", at, { id: id }) }
      tracker.advance_watermark(15)
      in_merge = Queue.new
      go_on = Queue.new
      concat.hook = lambda do
        next if Thread.current == Thread.main

        in_merge << :waiting
        go_on.pop
      end
      other = Thread.new { tracker.take_closed }
      in_merge.pop # the other Thread is inside the merge for [0, 10)
      expect(tracker.take_closed).to eq(["k", 0, 10, [1, 2]])
      go_on << :go
      in_merge.pop # it retries, merging [5, 15)
      go_on << :go
      expect(other.value).to eq(["k", 5, 15, [2, 3]])
      expect(tracker.flush.to_a).to eq([["k", 10, 20, [3]]])
    end

    # Merges that add events, take windows or raise, at random, from inside
    # take_closed, each_closed and flush. Whatever a merge did comes before
    # the hand-over that ran it, so the reference replays the journal of
    # what happened in order.
    it "hands every window over exactly once when merges re-enter at random" do
      rng = Random.new(seed * 1_000 + 75)
      150.times do |stream|
        config = streams.config(rng, on_late: %i[raise drop], flush_first: false)
                        .merge(parts: { concat: [:concat, nil], all: [:collect, :id], least: [:min, :m], sum: [:sum, :n] },
                               single: false)
        hooked = HoppingPanesAdversarialSpec::HookedConcat.new
        gem = streams.tracker(config, config[:on_late], hooked)
        reference = HoppingPanesAdversarialSpec::Reference.new(config, config[:on_late])
        history = [:"stream #{stream}", config]
        journal = []
        armed = inside = flushing = false
        budget = id = 0
        top = config[:offset]
        event = lambda do
          key = streams::KEYS.keys.sample(random: rng)
          at = streams.timestamp(rng, top, config[:offset])
          top = [top, at].max
          [key, at, streams.value(rng, key, id += 1)]
        end
        reenter = lambda do
          inside = true
          budget -= 1
          # Not while flushing: an event for a window flush has handed over
          # but not closed opens it again, or a flush cut short leaves it
          # so, where this reference's order is not the gem's.
          case flushing ? 2 : rng.rand(5)
          when 0, 1
            key, at, value = event.call
            journal << [:add, key, at, value, outcome { gem.add(key, at, value) }]
          when 2 then journal << [:take, outcome { gem.take_closed }]
          when 3
            journal << [:raise]
            raise HoppingPanesAdversarialSpec::MergeFailed, "at random"
          end
        ensure
          inside = false
        end
        hooked.hook = -> { reenter.call if armed && !inside && budget.positive? }

        rng.rand(40..80).times do
          operation = case rng.rand(10)
                      when 0..4 then [:add, *event.call]
                      when 5
                        config[:watermark] == :manual ? [:advance_watermark, [top + rng.rand(-8..2), 0].max] : [:take_closed]
                      when 6, 7 then [:take_closed]
                      when 8 then [:each_closed]
                      else rng.rand(4).zero? ? [:flush] : [:each_closed]
                      end
          history << operation
          if operation.first in :add | :advance_watermark
            expect(outcome { perform(gem, operation) })
              .to eq(outcome { perform(reference, operation) }), -> { trail(operation.first, history) }
            next
          end

          journal.clear
          armed = true
          flushing = operation == [:flush]
          budget = rng.rand(1..3)
          got = outcome do
            if operation == [:take_closed]
              gem.take_closed
            else
              gem.public_send(operation.first) { |*window| journal << [:yield, window] }
              nil
            end
          end
          armed = false
          journal << [:returned, got]
          history << journal.dup
          journal.each do |entry|
            case entry
            in [:add, key, at, value, added] then expect(outcome { reference.add(key, at, value) }).to eq(added)
            in [:take, taken] then expect(outcome { reference.take_closed }).to eq(taken)
            in [:yield, window]
              expected = operation == [:flush] ? reference.take_open : reference.take_closed
              expect(window).to eq(expected), -> { trail("yield", history, expected, window) }
            in [:raise] then nil
            in [:returned, [:error, error]]
              expect(error).to eq(HoppingPanesAdversarialSpec::MergeFailed), -> { trail("raised", history) }
            in [:returned, [:ok, returned]]
              expected = operation == [:flush] ? reference.take_open : reference.take_closed
              expect(returned).to eq(expected), -> { trail("returned", history, expected, returned) }
            end
          end
          expect(observe(gem, "a")).to eq(observe(reference, "a")), -> { trail("state", history) }
        end
        expect(gem.flush.to_a).to eq(reference.flush.to_a), -> { trail("final flush", history) }
      end
    end
  end

  describe "copies" do
    it "dup and clone a tracker holding closed windows and late parts, each copy going on by itself" do
      config = { size: 10, advance: 4, offset: 1, grace: 0, watermark: :manual, on_late: :drop,
                 parts: { all: [:collect, :id], concat: [:concat, nil], most: [:max, :m] }, single: false }
      gem = streams.tracker(config, :drop)
      reference = HoppingPanesAdversarialSpec::Reference.new(config, :drop)
      step = lambda do |(tracker, model), operation|
        expect(outcome { perform(tracker, operation) }).to eq(outcome { perform(model, operation) })
        expect(observe(tracker, "b")).to eq(observe(model, "b"))
      end
      id = 0
      add = ->(at) { [:add, "b", at, { id: id += 1, m: "w#{at}" }] }
      [add[3], add[8], add[12], [:advance_watermark, 13], add[10], add[12]].each do |operation|
        step.call([gem, reference], operation)
      end

      frozen, as_frozen = gem.clone.freeze, reference.dup
      copies = [[gem.dup, reference.dup], [gem.clone, reference.dup], [gem, reference]]
      copies.each_with_index do |pair, index|
        [add[13 + index], [:take_closed], add[11 + index], [:advance_watermark, 17 + index], add[16]].each do |operation|
          step.call(pair, operation)
        end
      end
      copies.each { |pair| step.call(pair, [:flush]) }
      expect(frozen.clone).to be_frozen
      expect_frozen_error(frozen) { frozen.add("b", 20, { id: 0, m: "w" }) }
      expect_frozen_error(frozen) { frozen.take_closed }
      expect(observe(frozen, "b")).to eq(observe(as_frozen, "b"))
      step.call([frozen.dup, as_frozen], [:flush])
    end
  end

  describe "pane bugs" do
    it "refuses a Min input it cannot compare with a part that a hand-over brought to the same first window" do
      tracker = described_class.new(10, 5, aggregate: agg::Min.new, watermark: :manual)
      tracker.add(:k, 7, 5)
      tracker.advance_watermark(10)
      tracker.add(:k, 8, nil) # a part of its own, with no extreme
      expect(tracker.take_closed).to eq([:k, 0, 10, 5])
      expect { tracker.add(:k, 9, "pear") }.to raise_error(ArgumentError, /comparison/)
      expect(tracker.flush.to_a).to eq([[:k, 5, 15, 5]])
    end

    it "keeps equal timestamps in arrival order after a flush cut short" do
      tracker = described_class.new(10, 5, aggregate: { all: agg::Collect.new, first: agg::First.new, last: agg::Last.new })
      tracker.add(:k, 7, :a)
      expect(tracker.flush.first).to eq([:k, 0, 10, { all: [:a], first: :a, last: :a }])
      tracker.add(:k, 7, :b) # [0, 10) is still open: it holds :b alone
      expect(tracker.flush.to_a).to eq([[:k, 0, 10, { all: [:b], first: :b, last: :b }],
                                        [:k, 5, 15, { all: %i[a b], first: :a, last: :b }]])
    end

    it "breaks a Min tie between panes for the earlier pane, as README says, where a tumbling window keeps the earlier arrival" do
      hopping = described_class.new(10, 5, aggregate: agg::Min.new)
      tumbling = WindowMachines::TumblingWindows.new(10, aggregate: agg::Min.new)
      [hopping, tumbling].each do |tracker|
        tracker.add(:k, 7, 1) # arrives first, in the later pane
        tracker.add(:k, 2, 1.0)
      end
      expect(tumbling.flush.first.last).to eql(1)
      expect(hopping.flush.first.last).to eql(1.0)
    end
  end

  it "keeps size, key_count and memsize bounded while one key hands over 200,000 windows" do
    tracker = described_class.new(10, 4, aggregate: { count: agg::Count.new, sum: agg::Sum.new }, watermark: :manual)
    handed = 0
    results = Hash.new { |hash, start| hash[start] = Hash.new(0) }
    samples = []
    cycle = 0
    while handed < 200_000
      base = 20 * cycle
      tracker.add("k", base + 9, 1)
      tracker.add("k", base + 3, 2)
      tracker.advance_watermark(base + 10)
      tracker.add("k", base + 8, 3) # [base, base + 10) has closed: a part of its own
      take = (cycle % 10).zero? ? :flush : :each_closed # now and then, everything: the key goes
      tracker.public_send(take) do |_, start, _, result|
        handed += 1
        results[start % 20][result] += 1
      end
      samples << [tracker.size, tracker.key_count, ObjectSpace.memsize_of(tracker)]
      cycle += 1
    end
    tenth = samples.size / 10
    first, last = samples.first(tenth).transpose, samples.last(tenth).transpose
    expect(last[0].max).to be <= first[0].max
    expect(last[1].max).to eq(1)
    expect(last[2].max).to be <= first[2].max
    expect(results.transform_values(&:keys)).to eq(
      0 => [{ count: 2, sum: 3 }], 4 => [{ count: 2, sum: 4 }], 8 => [{ count: 2, sum: 4 }], 16 => [{ count: 1, sum: 2 }]
    )
    expect(tracker.flush.to_a.size).to be <= 3
    expect([tracker.size, tracker.key_count]).to eq([0, 0])
  end
end
