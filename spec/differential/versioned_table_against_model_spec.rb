# frozen_string_literal: true

require "json"

module VersionedTableSpec
  # Equal to a plain String of the same bytes, as a Hash key; named, so that
  # Marshal can write it.
  class SubString < String; end

  # What the random streams are made of, and how results are compared.
  module Streams
    MAX = WindowMachinesSpec::MAX
    # Keys with an exact JSON form: to_h works while only these are held.
    JSON_KEYS = ["a", "b", "ü", "", 0, 1, 2**64 + 1, nil, true, [1, "x"], []].freeze
    # Keys JSON cannot carry, several equal (as Hash keys) to one above or
    # to each other: a String subclass equals the plain String, 1.0 differs
    # from 1, 0.0 and -0.0 are one key.
    OTHER_KEYS = [SubString.new("a").freeze, SubString.new("b").freeze, :a, 1.0, 0.0, -0.0,
                  "a".encode("UTF-16LE"), "\xFF".b, [:c]].freeze
    VALUES = [nil, 0, 1, 1.0, "v", :v, [1, nil], false].freeze
    INVALID_TIMESTAMPS = [-1, 2**64, 1.5, 3r, "7", nil].freeze

    # A comparable picture of any result: classes, encodings and (for held
    # keys) frozenness count, so 1 and 1.0, a String and an equal subclass,
    # 0.0 and -0.0 are told apart.
    def tag(object, frozen: true)
      case object
      when Array then [Array, object.map { |entry| tag(entry, frozen: frozen) }]
      when Hash then [Hash, object.map { |key, value| [key.to_s, tag(value, frozen: frozen)] }.sort_by(&:first)]
      when String then [object.class, object.encoding.name, object.b, frozen ? object.frozen? : :any]
      when Float then [Float, object.to_s]
      else [object.class, object]
      end
    end

    # The result, or the error with what the notes promise about it.
    def outcome_of
      [:ok, tag(yield)]
    rescue StandardError => e
      if e.is_a?(WindowMachines::LateEventError)
        [:error, e.class, e.message, e.timestamp, e.watermark, tag(e.key, frozen: false)]
      else
        [:error, e.class]
      end
    end

    # Everything a caller can see, on_late aside, to be compared with eql?
    # (so 1 and 1.0 differ); the checkpoint is tagged, so the class and
    # frozenness of every held key and value count too.
    def observable(table, keys)
      dump = table.marshal_dump.reject { |name, _| name == :on_late }
      [table.history_retention, table.stream_time, table.late_count, table.size, table.version_count,
       tag(dump), table.each.to_a, keys.map { |key| [table.history(key), table.version(key), table.get(key)] }]
    end

    # A trial's settings: retention, the keys it uses, where its timestamps
    # start, how fast they move and how far out of order they come.
    def any_trial(rng, max_keys)
      pool = rng.rand(2).zero? ? JSON_KEYS : JSON_KEYS + OTHER_KEYS
      { retention: any_retention(rng), keys: pool.sample(rng.rand(2..[pool.size, max_keys].min), random: rng),
        base: any_base(rng), drift: [0, 0, 1, 3].sample(random: rng), spread: [5, 40, 300].sample(random: rng) }
    end

    def any_retention(rng)
      case rng.rand(9)
      when 0, 1 then 0
      when 2, 3 then rng.rand(1..20)
      when 4 then rng.rand(21..400)
      when 5 then 2**rng.rand(0..63)
      when 6 then MAX - rng.rand(0..3)
      when 7 then rng.rand(0..MAX)
      else rng.rand(1..5)
      end
    end

    def any_base(rng)
      case rng.rand(5)
      when 0 then rng.rand(0..50)
      when 1 then MAX - rng.rand(0..600)
      when 2 then 2**63 - rng.rand(0..300)
      when 3 then rng.rand(0..MAX)
      else 2**62
      end
    end

    # A fresh key equal to `key`: itself, an unfrozen copy or a frozen copy.
    def variant(rng, key)
      return key unless key.is_a?(String)

      case rng.rand(3)
      when 0 then key
      when 1 then key.dup
      else key.dup.freeze
      end
    end

    # A timestamp at an edge that matters now (the cutoff, the stream time,
    # a held version), or somewhere around the stream, often out of order.
    def any_timestamp_for(rng, model, now, spread)
      stream_time = model.stream_time
      cutoff = model.cutoff
      held = model.marshal_dump[:versions].map { |entry| entry[1] }
      raw = case rng.rand(14)
            when 0 then cutoff || now
            when 1 then (cutoff || now) - 1
            when 2 then (cutoff || now) + 1
            when 3 then stream_time || now
            when 4 then (stream_time || now) + 1
            when 5, 6 then held.empty? ? now : held.sample(random: rng) + rng.rand(-1..1)
            when 7 then [0, 1, MAX - 1, MAX].sample(random: rng)
            when 8 then (stream_time || now) - rng.rand(0..(2 * spread))
            else now + rng.rand(0..spread)
            end
      raw.clamp(0, MAX)
    end

    def any_operation(rng, model, key, now, spread, step)
      timestamp = -> { any_timestamp_for(rng, model, now, spread) }
      case rng.rand(100)
      when 0...36 then [:put, key, rng.rand(3).zero? ? VALUES.sample(random: rng) : "v#{step}", timestamp.call]
      when 36...52 then [:delete, key, timestamp.call]
      when 52...64 then [:get, key, timestamp.call]
      when 64...74 then [:version, key, timestamp.call]
      when 74...77 then [:get, key]
      when 77...80 then [:version, key]
      when 80...84 then [:history, key]
      when 84...86 then [%i[size version_count stream_time late_count history_retention].sample(random: rng)]
      when 86...89 then invalid_operation(rng, key)
      else [:round_trip, %i[to_h json marshal dup].sample(random: rng)]
      end
    end

    def invalid_operation(rng, key)
      case rng.rand(4)
      when 0 then [:put, key, "bad", INVALID_TIMESTAMPS.sample(random: rng)]
      when 1 then [:delete, key, INVALID_TIMESTAMPS.sample(random: rng)]
      when 2 then [:get, key, INVALID_TIMESTAMPS.sample(random: rng)]
      else [:version, key, INVALID_TIMESTAMPS.sample(random: rng)]
      end
    end
  end
end

# WindowMachines::VersionedTable against PlainRuby::VersionedTable
# (spec/support/plain_ruby/versioned_table.rb) over random streams of puts
# and deletes with out-of-order and late timestamps, lookups at and around
# every edge, and round trips through to_h / from_h, JSON, Marshal and dup
# at random points, after which both go on. Every return value is compared,
# and the whole observable state after every step. The streams come from a
# Random seeded from RSpec's seed plus a salt per example; every failure
# message prints the seed and the last operations.
RSpec.describe "Differential: WindowMachines::VersionedTable against a plain-Ruby model", :mistyped do
  include WindowMachinesSpec::Differential
  include VersionedTableSpec::Streams

  let(:seed) { RSpec.configuration.seed }

  def rng_for(salt)
    Random.new((seed * 1_000) + salt)
  end

  # on_late for one side: the mode, or a lambda (so the arity is checked)
  # recording what it is called with into `calls`.
  def on_late_for(mode, calls)
    return mode unless mode == :callable

    ->(key, value, timestamp, stream_time) { calls << [key, value, timestamp, stream_time] }
  end

  # Runs one trial of `steps` random operations, comparing as it goes, and
  # tallies what happened.
  def agree(rng, mode, steps:, label:, max_keys: 12)
    trial = any_trial(rng, max_keys)
    calls = { gem: [], model: [] }
    gem = WindowMachines::VersionedTable.new(trial[:retention], on_late: on_late_for(mode, calls[:gem]))
    model = PlainRuby::VersionedTable.new(trial[:retention], on_late: on_late_for(mode, calls[:model]))
    history = [[:new, mode, trial]]
    tally = Hash.new(0)
    compare = lambda do |what, actual, expected|
      expect(actual).to eq(expected), lambda {
        "#{what}: gem #{actual.inspect}, model #{expected.inspect}\n#{reproduce(seed, label, history)}"
      }
    end

    steps.times do |step|
      now = clamp(trial[:base] + (step * trial[:drift]))
      key = variant(rng, trial[:keys].sample(random: rng))
      operation = any_operation(rng, model, key, now, trial[:spread], step)
      history << [step, *operation]
      late_before = model.late_count
      if operation.first == :round_trip
        tally[operation.last] += 1
        gem, model = round_trip(operation.last, gem, model, mode, calls, compare)
      else
        expected = outcome_of { model.public_send(*operation) }
        actual = outcome_of { gem.public_send(*operation) }
        tally[expected.first == :ok ? operation.first : expected[1]] += 1
        tally[:into_history] += 1 if operation.first == :put && expected.first == :ok && expected.last.first == Integer
        tally[:refused_late] += 1 if model.late_count > late_before
        compare.call("#{operation.first} returned", actual, expected)
      end
      compare.call("on_late calls", calls[:gem].size, calls[:model].size)
      compare.call("on_late call", tag(calls[:gem].last, frozen: false), tag(calls[:model].last, frozen: false))
      state = [observable(gem, trial[:keys]), observable(model, trial[:keys])]
      expect(state.first.eql?(state.last)).to be(true), lambda {
        "state: gem #{state.first.inspect}\nmodel #{state.last.inspect}\n#{reproduce(seed, label, history)}"
      }
    end
    tally
  end

  # Both sides through the same round trip; returns the copies to go on with.
  def round_trip(kind, gem, model, mode, calls, compare)
    case kind
    when :to_h, :json
      expected = outcome_of { model.to_h }
      compare.call("to_h", outcome_of { gem.to_h }, expected)
      return [gem, model] unless expected.first == :ok

      gem_h, model_h = [gem.to_h, model.to_h].map { |h| kind == :json ? JSON.parse(JSON.generate(h)) : h }
      restored = WindowMachines::VersionedTable.from_h(gem_h, on_late: on_late_for(mode, calls[:gem]))
      expect(restored).to eq(gem) if kind == :to_h && mode != :callable
      [restored, PlainRuby::VersionedTable.from_h(model_h, on_late: on_late_for(mode, calls[:model]))]
    when :marshal
      expected = outcome_of { Marshal.dump(model).size.positive? }
      compare.call("Marshal.dump", outcome_of { Marshal.dump(gem).size.positive? }, expected)
      return [gem, model] unless expected.first == :ok

      restored = Marshal.load(Marshal.dump(gem))
      expect([restored == gem, restored.eql?(gem), restored.hash == gem.hash, restored.frozen?])
        .to eq([true, true, true, false])
      [restored, Marshal.load(Marshal.dump(model))]
    else
      copy = gem.dup
      expect(copy).to eq(gem)
      [copy, model.dup]
    end
  end

  def run_trials(salt, count, steps:, max_keys: 12)
    rng = rng_for(salt)
    tally = Hash.new(0)
    count.times do |trial|
      mode = yield(rng)
      tally.merge!(agree(rng, mode, steps: steps, label: "#{mode} trial #{trial}", max_keys: max_keys)) do |_, a, b|
        a + b
      end
    end
    tally
  end

  it "agrees under on_late: :raise, down to the LateEventError's message, timestamp, watermark and key" do
    tally = run_trials(1, 60, steps: 120) { :raise }
    expect(tally[WindowMachines::LateEventError]).to be > 20, tally.inspect
    expect(tally[:into_history]).to be > 20, tally.inspect
    expect(%i[to_h json marshal dup].map { |kind| tally[kind] }).to all(be > 5), tally.inspect
  end

  it "agrees under on_late: :drop" do
    tally = run_trials(2, 60, steps: 120) { :drop }
    expect(tally[:refused_late]).to be > 20, tally.inspect
    expect(tally[:delete]).to be > 200, tally.inspect
    expect(tally[WindowMachines::TypeError]).to be > 10, tally.inspect
    expect(tally[WindowMachines::RangeError]).to be > 10, tally.inspect
  end

  it "agrees under an on_late callable, called with key, value, timestamp and stream_time" do
    tally = run_trials(3, 60, steps: 120) { :callable }
    expect(tally[:refused_late]).to be > 20, tally.inspect
    expect(tally[:put]).to be > 200, tally.inspect
  end

  it "agrees on long streams over few keys" do
    tally = run_trials(4, 12, steps: 500, max_keys: 3) { |rng| %i[raise drop callable].sample(random: rng) }
    expect(tally[:version]).to be > 100, tally.inspect
  end
end
