# frozen_string_literal: true

# Every batch call against the single calls it stands for, over random
# streams: WindowMachines.tumbling_starts against tumbling, Sessions and
# KeyedSessions#insert_all (with a block and without) against insert, and
# add_all of TumblingWindows, HoppingWindows and SessionWindows (Count,
# Sum(:amount) over Hash values, Collect, a custom aggregator; on_late
# :raise, :drop and a callable; both watermark modes) against add. Each batch goes to one tracker and the same
# events, one call each, to a twin; between batches both take closed
# windows or sessions and move their watermark.
#
# After every batch the two must agree on everything observable: the state
# (to_h / marshal_dump), late_count, what each_closed, take_closed and flush
# hand over, the merges the blocks were given and in which order, what the
# on_late callables were called with, and the batch's count against the
# single calls' results. A batch with a refused element (a late event, a
# 33rd session, a timestamp out of range or of the wrong type, a value Sum
# cannot add, a custom aggregator that raises) must raise the error the
# single call raised there, named with that index, having applied exactly
# the elements before it. Arrays of different lengths, and arguments that
# are no Arrays, are refused before anything is applied. Now and then an
# argument is an object that only converts with to_ary.
RSpec.describe "Differential: batch calls against the same single calls" do
  include WindowMachinesSpec::Differential

  aggregate = WindowMachines::Aggregate

  let(:seed) { RSpec.configuration.seed }
  let(:listed) { Struct.new(:to_ary) }
  # An unfrozen String among them: held as a frozen copy, yielded as given;
  # and a String subclass equal to "a", which only its eql? can tell is.
  let(:keys) { ["a", String.new("b"), :c, 1, 1.0, [2, "x"], nil, Class.new(String).new("a")] }

  # Collects its values; refuses 13, to show a refusal from Ruby code in
  # the middle of a batch.
  collector = Class.new do
    def initialize = freeze
    def initial = []

    def add(acc, value)
      raise IOError, "unlucky" if value == 13

      acc + [value]
    end

    def merge(earlier, later) = earlier + later
    def inspect = "#<collector>"
  end.new

  # What the block came to: [:ok, value] or [:error, exception].
  def attempt
    [:ok, yield]
  rescue StandardError => e
    [:error, e]
  end

  # The single calls for indexes 0...count, in order, up to the first that
  # raises: [results, error, its index], or [results, nil, nil].
  def singly(count)
    results = []
    count.times do |index|
      results << yield(index)
    rescue StandardError => e
      return [results, e, index]
    end
    [results, nil, nil]
  end

  # The batch returned what the single calls' results make (`returned`),
  # or raised a copy of the error the first refused single call raised,
  # named with its index, with the same readers.
  def expect_same_outcome(batch, single, returned, message)
    status, got = batch
    results, error, index = single
    if error.nil?
      expect([status, got]).to eq([:ok, returned.call(results)]), message
      return
    end
    expect(status).to eq(:error), -> { "single call #{index} raised #{error.inspect}, batch did not\n#{message.call}" }
    expect(got.class).to be(error.class), -> { "#{got.inspect} for #{error.inspect}\n#{message.call}" }
    expect(got).to be_a(WindowMachines::BatchElement), message
    expect(error).not_to be_a(WindowMachines::BatchElement), message
    expect(got.index).to eq(index), message
    expect(got.message).to eq("#{error.message} (at index #{index})"), message
    %i[timestamp watermark key limit].each do |reader|
      next unless error.respond_to?(reader)

      expect(got.public_send(reader)).to eq(error.public_send(reader)), -> { "#{reader}\n#{message.call}" }
    end
  end

  # An Array argument as it is, or now and then behind to_ary.
  def given(rng, array) = rng.rand(5).zero? ? listed.new(array) : array

  # A timestamp near the stream time `top`: mostly a little behind or ahead
  # (out of order, often late once the watermark moves), now and then far
  # ahead (a new session, and in time a 33rd).
  def near(rng, top)
    return top + rng.rand(30..300) if rng.rand(12).zero?

    [top + rng.rand(-20..6), 0].max
  end

  # A timestamp that is refused whatever the tracker holds: out of range,
  # or (unless `typed`) not an Integer at all.
  def refused_timestamp(rng, typed)
    choices = [-1, 2**64, -(2**70), 2**64 + 12_345]
    choices += ["7", 1.5, nil, :t, 3r, WindowMachinesSpec::IntLike.new] unless typed
    choices.sample(random: rng)
  end

  # How many elements a batch has: none, one, or up to 40.
  def batch_length(rng)
    case rng.rand(10)
    when 0 then 0
    when 1 then 1
    else rng.rand(2..40)
    end
  end

  # Timestamps for a batch from stream time `top`, one of them now and then
  # refused by range or type. Returns them and the new stream time.
  def timestamps_for(rng, top, typed, offset: 0)
    timestamps = Array.new(batch_length(rng)) do
      timestamp = [near(rng, top), offset].max
      top = [top, timestamp].max
      timestamp
    end
    timestamps[rng.rand(timestamps.size)] = refused_timestamp(rng, typed) if timestamps.any? && rng.rand(4).zero?
    [timestamps, top]
  end

  describe "WindowMachines.tumbling_starts against tumbling" do
    def run_batches(rng, typed, history)
      40.times do
        size = rng.rand(3).zero? ? any_length(rng) : rng.rand(1..20)
        timestamps = Array.new(batch_length(rng)) { any_timestamp(rng) }
        timestamps[rng.rand(timestamps.size)] = refused_timestamp(rng, typed) if timestamps.any? && rng.rand(5).zero?
        history << [:tumbling_starts, timestamps, size]
        message = -> { reproduce(seed, "tumbling_starts", history) }
        batch = attempt { WindowMachines.tumbling_starts(given(rng, timestamps), size) }
        if size.zero?
          # The size is checked before any timestamp, as tumbling(0, 0) checks it.
          expect(batch[0]).to eq(:error), message
          expect([batch[1].class, batch[1].message]).to eq([WindowMachines::ArgumentError, "size must be positive, got 0"])
          expect(batch[1]).not_to be_a(WindowMachines::BatchElement)
        else
          single = singly(timestamps.size) { |index| WindowMachines.tumbling(timestamps[index], size)[0] }
          expect_same_outcome(batch, single, :itself.to_proc, message)
        end
      end
    end

    it "agrees over random timestamps and sizes, refusals included" do
      rng = Random.new((seed * 1_000) + 70)
      history = []
      20.times { run_batches(rng, true, history) }
    end

    it "agrees when timestamps of the wrong type are refused", :mistyped do
      rng = Random.new((seed * 1_000) + 71)
      history = []
      8.times { run_batches(rng, false, history) }
    end
  end

  describe "Sessions#insert_all against insert" do
    def run_stream(rng, typed, history)
      gap = [1, 2, 5, 10].sample(random: rng)
      batch = WindowMachines::Sessions.new(gap)
      single = WindowMachines::Sessions.new(gap)
      history << [:new, gap]
      top = rng.rand(0..50)
      message = -> { reproduce(seed, "Sessions", history) }
      rng.rand(8..16).times do
        case rng.rand(10)
        when 0, 1
          to = [top + rng.rand(-25..0), 0].max
          history << [:advance_watermark, to]
          expect(batch.advance_watermark(to)).to eq(single.advance_watermark(to)), message
        when 2
          history << [:each_closed]
          expect(batch.each_closed.to_a).to eq(single.each_closed.to_a), message
        else
          timestamps, top = timestamps_for(rng, top, typed)
          with_block = rng.rand(3).positive?
          history << [:insert_all, timestamps, with_block ? :block : :no_block]
          batch_merges = []
          single_merges = []
          merged = ->(old_span, new_span) { batch_merges << [old_span, new_span] }
          outcome = attempt { with_block ? batch.insert_all(given(rng, timestamps), &merged) : batch.insert_all(given(rng, timestamps)) }
          singles = singly(timestamps.size) do |index|
            single.insert(timestamps[index]) { |old_span, new_span| single_merges << [old_span, new_span] }
          end
          expect_same_outcome(outcome, singles, :size.to_proc, message)
          expect(batch_merges).to eq(with_block ? single_merges : []), message
        end
        expect(batch.to_h).to eq(single.to_h), message
      end
      history << [:finish]
      expect(batch.finish.to_a).to eq(single.finish.to_a), message
    end

    it "agrees over random streams, late events and 33rd sessions included" do
      rng = Random.new((seed * 1_000) + 72)
      history = []
      80.times { run_stream(rng, true, history) }
    end

    it "agrees when timestamps of the wrong type are refused", :mistyped do
      rng = Random.new((seed * 1_000) + 73)
      history = []
      50.times { run_stream(rng, false, history) }
    end
  end

  describe "KeyedSessions#insert_all against insert" do
    def run_stream(rng, typed, history)
      gap = [1, 2, 5, 10].sample(random: rng)
      max_sessions = [nil, nil, 4, 12].sample(random: rng)
      batch = WindowMachines::KeyedSessions.new(gap, max_sessions: max_sessions)
      single = WindowMachines::KeyedSessions.new(gap, max_sessions: max_sessions)
      history << [:new, gap, max_sessions]
      top = rng.rand(0..50)
      message = -> { reproduce(seed, "KeyedSessions", history) }
      rng.rand(8..16).times do
        case rng.rand(10)
        when 0, 1
          to = [top + rng.rand(-25..0), 0].max
          history << [:advance_watermark, to]
          expect(batch.advance_watermark(to)).to eq(single.advance_watermark(to)), message
        when 2
          history << [:take_closed_and_each_closed]
          expect(batch.take_closed).to eq(single.take_closed), message
          expect(batch.each_closed.to_a).to eq(single.each_closed.to_a), message
        else
          timestamps, top = timestamps_for(rng, top, typed)
          batch_keys = Array.new(timestamps.size) { keys.sample(random: rng) }
          # Without a block, the batch inserts in runs that call no Ruby code.
          with_block = rng.rand(2).zero?
          history << [:insert_all, batch_keys, timestamps, with_block]
          batch_merges = []
          single_merges = []
          outcome = attempt do
            if with_block
              batch.insert_all(given(rng, batch_keys), given(rng, timestamps)) do |old_span, new_span, key|
                batch_merges << [old_span, new_span, key]
              end
            else
              batch.insert_all(given(rng, batch_keys), given(rng, timestamps))
            end
          end
          singles = singly(timestamps.size) do |index|
            key = batch_keys[index]
            single.insert(key, timestamps[index]) do |old_span, new_span|
              single_merges << [old_span, new_span, key] if with_block
            end
          end
          expect_same_outcome(outcome, singles, :size.to_proc, message)
          expect(batch_merges).to eq(single_merges), message
          # The key yielded is the element as given, not the copy held.
          expect(batch_merges.map(&:last).map(&:object_id)).to eq(single_merges.map(&:last).map(&:object_id)), message
        end
        expect(batch.marshal_dump).to eq(single.marshal_dump), message
        expect([batch.size, batch.key_count]).to eq([single.size, single.key_count]), message
      end
      history << [:finish]
      expect(batch.finish.to_a).to eq(single.finish.to_a), message
    end

    it "agrees over random streams, late events and capacity refusals included" do
      rng = Random.new((seed * 1_000) + 74)
      history = []
      60.times { run_stream(rng, true, history) }
    end

    it "agrees when timestamps of the wrong type are refused", :mistyped do
      rng = Random.new((seed * 1_000) + 75)
      history = []
      40.times { run_stream(rng, false, history) }
    end
  end

  describe "add_all against add" do
    # Two trackers of `kind` alike but for their on_late callables, which
    # record their calls in `calls`; and the aggregator's name.
    define_method(:pair) do |rng, kind, calls, history|
      name = %i[count sum collect custom].sample(random: rng)
      aggregator = { count: aggregate::Count.new, sum: aggregate::Sum.new(:amount),
                     collect: aggregate::Collect.new, custom: collector }.fetch(name)
      on_late = %i[raise drop callable].sample(random: rng)
      options = { aggregate: aggregator, grace: [0, 0, 2, 5].sample(random: rng),
                  watermark: rng.rand(4).zero? ? :manual : :stream }
      # [size, offset], [size, advance, offset] or [gap, max_sessions].
      shape =
        case kind
        when :tumbling then [[1, 3, 5, 10].sample(random: rng)]
        when :hopping then [[10, 5], [9, 6], [6, 4], [5, 1]].sample(random: rng)
        else [[1, 3, 5].sample(random: rng), [nil, nil, 5].sample(random: rng)]
        end
      shape += [rng.rand(3).zero? ? rng.rand(shape.last) : 0] unless kind == :session
      history << [:new, kind, shape, name, on_late, options.except(:aggregate)]
      made = %i[batch single].map do |who|
        late = on_late == :callable ? ->(*args) { calls[who] << args } : on_late
        case kind
        when :tumbling then WindowMachines::TumblingWindows.new(shape[0], offset: shape[1], on_late: late, **options)
        when :hopping then WindowMachines::HoppingWindows.new(shape[0], shape[1], offset: shape[2], on_late: late, **options)
        else WindowMachines::SessionWindows.new(shape[0], max_sessions: shape[1], on_late: late, **options)
        end
      end
      offset = kind == :session ? 0 : shape.last
      [*made, name, options[:watermark], offset]
    end

    # A value for the aggregator `name`; now and then one it refuses.
    def value(rng, name, serial)
      case name
      when :count then rng.rand(4).zero? ? nil : serial
      when :sum
        case rng.rand(30)
        when 0 then { amount: "x" }
        when 1 then nil
        when 2 then {}
        else { amount: rng.rand(2).zero? ? rng.rand(-20..20) : rng.rand(-20..20) + 0.5 }
        end
      when :collect then "v#{serial}"
      else rng.rand(25).zero? ? 13 : serial
      end
    end

    # Everything observable but the hand-overs, without changing anything.
    def observed(tracker)
      [tracker.marshal_dump.except(:aggregate, :on_late), tracker.watermark, tracker.late_count, tracker.size,
       tracker.key_count]
    end

    def run_stream(rng, kind, typed, history)
      calls = { batch: [], single: [] }
      batch, single, name, mode, offset = pair(rng, kind, calls, history)
      top = offset + rng.rand(0..30)
      serial = 0
      message = -> { reproduce(seed, kind.to_s, history) }
      rng.rand(8..14).times do
        case rng.rand(10)
        when 0
          history << [:take_closed]
          expect(batch.take_closed).to eq(single.take_closed), message
        when 1
          history << [:each_closed]
          expect(batch.each_closed.to_a).to eq(single.each_closed.to_a), message
        when 2
          if mode == :manual
            to = [top + rng.rand(-15..2), 0].max
            history << [:advance_watermark, to]
            expect(batch.advance_watermark(to)).to eq(single.advance_watermark(to)), message
          end
        else
          timestamps, top = timestamps_for(rng, top, typed, offset: offset)
          batch_keys = Array.new(timestamps.size) { keys.sample(random: rng) }
          values = rng.rand(5).zero? && name != :sum ? nil : Array.new(timestamps.size) { value(rng, name, serial += 1) }
          history << [:add_all, batch_keys, timestamps, values]
          outcome = attempt do
            if values.nil? && rng.rand(2).zero?
              batch.add_all(given(rng, batch_keys), given(rng, timestamps))
            else
              batch.add_all(given(rng, batch_keys), given(rng, timestamps), values && given(rng, values))
            end
          end
          singles = singly(timestamps.size) do |index|
            if values
              single.add(batch_keys[index], timestamps[index], values[index])
            else
              single.add(batch_keys[index], timestamps[index])
            end
          end
          expect_same_outcome(outcome, singles, ->(results) { results.count(true) }, message)
          expect(singles[0]).to all(be(true).or(be(false))), message
        end
        expect(observed(batch)).to eq(observed(single)), message
        expect(calls[:batch]).to eq(calls[:single]), message
      end
      history << [:flush]
      expect(batch.flush.to_a).to eq(single.flush.to_a), message
      expect(observed(batch)).to eq(observed(single)), message
    end

    %i[tumbling hopping session].each_with_index do |kind, salt|
      it "agrees for #{kind} windows over random streams, refusals and late events included" do
        rng = Random.new((seed * 1_000) + 80 + salt)
        history = []
        60.times { run_stream(rng, kind, true, history) }
      end
    end

    it "agrees when timestamps of the wrong type are refused", :mistyped do
      rng = Random.new((seed * 1_000) + 83)
      history = []
      60.times { run_stream(rng, %i[tumbling hopping session].sample(random: rng), false, history) }
    end
  end

  describe "arguments refused before anything is applied" do
    # A tracker of each kind with some events in it, and a batch call on it.
    define_method(:trackers) do
      count = aggregate::Count.new
      {
        keyed: [WindowMachines::KeyedSessions.new(5).tap { |tracker| tracker.insert_all(%w[a b], [1, 20]) },
                ->(tracker, args) { tracker.insert_all(*args.first(2)) }],
        tumbling: [WindowMachines::TumblingWindows.new(10, aggregate: count).tap { |tracker| tracker.add_all(%w[a b], [1, 20]) },
                   ->(tracker, args) { tracker.add_all(*args) }],
        hopping: [WindowMachines::HoppingWindows.new(10, 5, aggregate: count).tap { |tracker| tracker.add_all(%w[a], [3]) },
                  ->(tracker, args) { tracker.add_all(*args) }],
        session: [WindowMachines::SessionWindows.new(5, aggregate: count).tap { |tracker| tracker.add_all(%w[a], [3]) },
                  ->(tracker, args) { tracker.add_all(*args) }]
      }
    end

    def state(tracker) = tracker.marshal_dump.except(:aggregate, :on_late)

    it "refuses Arrays of different lengths, naming each length, and changes nothing" do
      rng = Random.new((seed * 1_000) + 90)
      trackers.each do |kind, (tracker, call)|
        before = state(tracker)
        200.times do
          lengths = Array.new(kind == :keyed ? 2 : 3) { rng.rand(0..4) }
          next if lengths.uniq.size == 1

          names = %w[keys timestamps values].first(lengths.size)
          args = lengths.each_with_index.map { |length, index| Array.new(length) { index == 1 ? 100 + rng.rand(50) : "k" } }
          args = args.map { |array| given(rng, array) }
          described = names.zip(lengths).map { |argument, length| "#{argument} has #{length}" }.join(", ")
          expect_gem_error(WindowMachines::ArgumentError, "a batch needs Arrays of one length, but #{described}") do
            call.call(tracker, args)
          end
        end
        expect(state(tracker)).to eq(before), kind.to_s
      end
      sessions = WindowMachines::Sessions.new(5)
      expect(sessions.insert_all(listed.new([]))).to eq(0)
    end

    it "refuses arguments that are no Arrays and do not convert to one, and changes nothing", :mistyped do
      rng = Random.new((seed * 1_000) + 91)
      not_arrays = [nil, 5, "ab", :sym, 1..3, { a: 1 }, 1.5, Object.new.tap { |object| def object.inspect = "#<thing>" }]
      trackers.each do |kind, (tracker, call)|
        before = state(tracker)
        100.times do
          length = rng.rand(0..3)
          args = [Array.new(length, "k"), Array.new(length) { 100 + rng.rand(50) }, Array.new(length)]
          args = args.first(2) if kind == :keyed
          position = rng.rand(args.size)
          wrong = not_arrays.sample(random: rng)
          next if wrong.nil? && position == 2 # nil values are every value nil

          args[position] = wrong
          name = %w[keys timestamps values][position]
          expect_gem_error(WindowMachines::TypeError, "#{name} must be an Array, got #{wrong.inspect} (#{wrong.class})") do
            call.call(tracker, args)
          end
        end
        expect(state(tracker)).to eq(before), kind.to_s
      end
      sessions = WindowMachines::Sessions.new(5)
      not_arrays.each do |wrong|
        expect_gem_error(WindowMachines::TypeError, "timestamps must be an Array, got #{wrong.inspect} (#{wrong.class})") do
          sessions.insert_all(wrong)
        end
      end
      expect(sessions.size).to eq(0)
    end
  end
end
