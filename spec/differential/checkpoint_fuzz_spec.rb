# frozen_string_literal: true

require_relative "../fixtures/forked"

RSpec.describe "Restoring from untrusted checkpoints", :mistyped do
  include WindowMachinesSpec::Checkpoints

  let(:rng) { Random.new(RSpec.configuration.seed) }
  let(:odd_values) do
    max = WindowMachinesSpec::MAX
    [0, 1, 5, -1, max, max + 1, -(2**70), 1.5, 3r, "7", :gap, nil, true, [], [1], [1, 2], [2, 1], [[1, 2]],
     { gap: 1 }, Object.new, WindowMachinesSpec::IntLike.new]
  end

  def invariants_hold?(sessions)
    spans = sessions.to_a
    spans.size <= 32 &&
      spans.all? { |first, last| first <= last } &&
      spans.each_cons(2).all? { |(_, last), (first, _)| first - last > sessions.gap } &&
      WindowMachines::Sessions.from_h(sessions.to_h) == sessions
  end

  # A valid checkpoint with one thing changed at random.
  def mutated_checkpoint
    hash = random_sessions(rng).to_h
    hash = via_json(hash) if rng.rand(2).zero?
    key = hash.keys.sample(random: rng)
    case rng.rand(6)
    when 0 then hash[key] = odd_values.sample(random: rng)
    when 1 then hash.delete(key)
    when 2 then hash[odd_values.sample(random: rng)] = 1
    when 3 then hash[hash.key?(:sessions) ? :sessions : "sessions"] = random_spans
    when 4 then hash[hash.key?(:gap) ? :gap : "gap"] = [1, 2, 1000, 0].sample(random: rng)
    else return odd_values.sample(random: rng)
    end
    hash
  end

  # Mostly increasing spans, some too close, reversed or not pairs at all.
  def random_spans
    at = rng.rand(0..100)
    Array.new(rng.rand(0..34)) do
      next odd_values.sample(random: rng) if rng.rand(10).zero?

      first = at + rng.rand(0..12)
      at = first + rng.rand(0..12)
      rng.rand(10).zero? ? [at, first] : [first, at]
    end
  end

  it "gives a clean WindowMachines::Error or a valid tracker for thousands of mutated hashes" do
    outcomes = Hash.new(0)
    3_000.times do
      input = mutated_checkpoint
      begin
        restored = WindowMachines::Sessions.from_h(input)
        expect(invariants_hold?(restored)).to be(true), "broken tracker from #{input.inspect}"
        outcomes[:restored] += 1
      rescue WindowMachines::Error => e
        outcomes[e.class] += 1
      end
    end
    # The fuzzing must exercise both paths and several kinds of refusal.
    expect(outcomes[:restored]).to be > 50
    expect(outcomes.keys).to include(WindowMachines::TypeError, WindowMachines::ArgumentError, WindowMachines::RangeError)
  end

  # Marshal believes a corrupted length enough to reserve gigabytes of
  # address space, which the process keeps after the load fails; past that,
  # this process could no longer start the children later examples run. The
  # loads run in a child of their own (spec/fixtures/forked.rb), which
  # reports back.
  it "never builds a broken tracker from corrupted Marshal data" do
    dumps = Array.new(20) { Marshal.dump(random_sessions(rng)) }
    outcome = isolated do
      restored = 0
      broken = []
      3_000.times do
        bytes = dumps.sample(random: rng).dup
        rng.rand(1..3).times do
          position = rng.rand(bytes.bytesize)
          case rng.rand(3)
          when 0 then bytes.setbyte(position, rng.rand(256))
          when 1 then bytes.insert(position, rng.rand(256).chr)
          else bytes.slice!(position)
          end
        end
        begin
          result = Marshal.load(bytes)
        rescue StandardError, NoMemoryError # Marshal's own answer to a corrupted length
          next
        end
        next unless result.is_a?(WindowMachines::Sessions)

        restored += 1
        broken << bytes unless invariants_hold?(result)
      end
      { restored: restored, broken: broken }
    end
    expect(outcome).not_to include(:error)
    expect(outcome[:broken]).to be_empty, "broken tracker from #{outcome[:broken].first.inspect}"
    expect(outcome[:restored]).to be > 0
  end
end
