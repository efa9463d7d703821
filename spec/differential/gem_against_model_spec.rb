# frozen_string_literal: true

# The gem against plain-Ruby models, over thousands of random operations:
# spec/support/model.rb for the windows and the watermark, PlainRuby::Sessions
# (spec/support/plain_ruby/sessions.rb) for sessions. The operations come
# from a Random seeded from RSpec's seed (plus a fixed salt per example, so
# each example is reproducible on its own); every failure message prints the
# seed.
RSpec.describe "Differential: the gem against a plain-Ruby model", :mistyped do
  include WindowMachinesSpec::Differential

  model = WindowMachinesSpec::Model
  max = WindowMachinesSpec::MAX

  let(:seed) { RSpec.configuration.seed }

  def rng_for(salt)
    Random.new(seed * 1_000 + salt)
  end

  it "agrees on tumbling" do
    rng = rng_for(1)
    history = []
    3_000.times do |step|
      timestamp = sometimes_invalid(rng, any_timestamp(rng))
      size = sometimes_invalid(rng, any_length(rng))
      history << [step, :tumbling, timestamp, size]
      expected = outcome { model.tumbling(timestamp, size) }
      actual = outcome { WindowMachines.tumbling(timestamp, size) }
      expect(actual).to eq(expected), -> { "gem #{actual.inspect}, model #{expected.inspect}\n#{reproduce(seed, 'tumbling', history)}" }
    end
  end

  it "agrees on sliding" do
    rng = rng_for(2)
    history = []
    tally = Hash.new(0)
    4_000.times do |step|
      timestamp = any_timestamp(rng)
      slide = any_length(rng)
      # Widths around every ratio up to just past the cap, and holes.
      width = case rng.rand(4)
              when 0 then rng.rand(0..[slide, 1].max)
              else clamp(slide * rng.rand(0..34) + rng.rand(-1..1))
              end
      timestamp, width, slide = [timestamp, width, slide].map { |value| sometimes_invalid(rng, value, odds: 60) }
      history << [step, :sliding, timestamp, width, slide]
      expected = outcome { model.sliding(timestamp, width, slide) }
      actual = outcome { WindowMachines.sliding(timestamp, width, slide) }
      tally[expected.first == :ok ? [:ok, expected.last.size.clamp(0, 2)] : expected] += 1
      expect(actual).to eq(expected), -> { "gem #{actual.inspect}, model #{expected.inspect}\n#{reproduce(seed, 'sliding', history)}" }
    end
    [[:ok, 0], [:ok, 1], [:ok, 2], [:error, WindowMachines::CapacityError], [:error, WindowMachines::RangeError],
     [:error, WindowMachines::ArgumentError], [:error, WindowMachines::TypeError]].each do |kind|
      expect(tally[kind]).to be > 0, "seed #{seed}: the generator never produced #{kind.inspect}: #{tally.inspect}"
    end
  end

  it "agrees on Watermark" do
    rng = rng_for(3)
    history = []
    200.times do |trial|
      base = [0, max - 300, rng.rand(0..max - 300)].sample(random: rng)
      start = rng.rand(3).zero? ? base : nil
      gem = WindowMachines::Watermark.new(*[start].compact)
      mirror = model::Watermark.new(start)
      history << [trial, :new, start]
      near = -> { clamp(base + rng.rand(-20..300)) }
      20.times do
        if rng.rand(2).zero?
          timestamp = sometimes_invalid(rng, near.call)
          history << [:advance, timestamp]
          expected = outcome { mirror.advance(timestamp) }
          actual = outcome { gem.advance(timestamp) }
        else
          finish = near.call
          start_of = clamp(finish - rng.rand(-2..50))
          lateness = rng.rand(3).zero? ? clamp(max - rng.rand(0..300)) : rng.rand(0..30)
          args = [start_of, finish, lateness].map { |value| sometimes_invalid(rng, value, odds: 60) }
          history << [:closes?, *args]
          expected = outcome { mirror.closes?(*args) }
          actual = outcome { gem.closes?(*args) }
        end
        expect([actual, gem.value]).to eq([expected, mirror.value]),
                                       -> { "gem #{[actual, gem.value].inspect}, model #{[expected, mirror.value].inspect}\n#{reproduce(seed, 'watermark', history)}" }
      end
    end
  end

  it "agrees on Sessions, keeping the invariants after every step" do
    rng = rng_for(4)
    history = []
    tally = Hash.new(0)
    steps = 0
    120.times do |trial|
      gap = case rng.rand(8)
            when 0 then 1
            when 1 then 2
            when 2 then rng.rand(3..50)
            when 3 then 2**rng.rand(20..63)
            when 4 then max - rng.rand(0..2)
            when 5 then max
            else rng.rand(1..10)
            end
      # Spread events over a few dozen gaps, so sessions grow, merge and fill up.
      spread = [gap * [4, 40, 120].sample(random: rng), max].min
      base = case rng.rand(3)
             when 0 then 0
             when 1 then max - spread
             else rng.rand(0..max - spread)
             end
      gem = WindowMachines::Sessions.new(gap)
      mirror = PlainRuby::Sessions.new(gap)
      history << [trial, :new, gap, :base, base]

      100.times do
        steps += 1
        floor = [mirror.watermark || base, base].max
        operation = rng.rand(100)
        if operation < 62
          timestamp = rng.rand(8).zero? ? clamp(floor - rng.rand(0..gap)) : clamp(floor + rng.rand(0..spread))
          timestamp = sometimes_invalid(rng, timestamp, odds: 50)
          history << [:insert, timestamp]
          size_before = mirror.size
          expected = outcome { mirror.insert(timestamp) }
          actual = outcome { gem.insert(timestamp) }
          kind = if expected.first == :error then expected.last
                 elsif mirror.size > size_before then :new
                 elsif mirror.size < size_before then :merge
                 else :grow_or_inside
                 end
          tally[kind] += 1
        elsif operation < 80
          timestamp = rng.rand(20).zero? ? rng.rand(0..max) : clamp(floor + rng.rand(-gap..(gap * 3)))
          timestamp = sometimes_invalid(rng, timestamp, odds: 50)
          history << [:advance_watermark, timestamp]
          expected = outcome { mirror.advance_watermark(timestamp) }
          actual = outcome { gem.advance_watermark(timestamp) }
        elsif operation < 97
          history << [:take_closed]
          expected = outcome { mirror.take_closed }
          actual = outcome { gem.take_closed }
          tally[expected.last.nil? ? :take_nil : :taken] += 1
        else
          history << [:dup]
          gem = gem.dup
          mirror = mirror.dup
          expected = actual = [:ok, nil]
        end

        state = [actual, gem.to_a, gem.size, gem.watermark, gem.gap]
        expected_state = [expected, mirror.to_a, mirror.size, mirror.watermark, mirror.gap]
        expect(state).to eq(expected_state),
                         -> { "gem #{state.inspect}\nmodel #{expected_state.inspect}\n#{reproduce(seed, 'sessions', history)}" }
        violations = session_violations(gem.to_a, gap)
        expect(violations).to be_empty, -> { "#{violations.join("\n")}\n#{reproduce(seed, 'sessions', history)}" }
      end
    end

    expect(steps).to be >= 10_000
    [:new, :merge, :grow_or_inside, :taken, :take_nil, WindowMachines::LateEventError,
     WindowMachines::CapacityError, WindowMachines::TypeError, WindowMachines::RangeError].each do |kind|
      expect(tally[kind]).to be > 0, "seed #{seed}: the generator never produced #{kind.inspect}: #{tally.inspect}"
    end
  end
end
