# frozen_string_literal: true

require "json"

# Valid checkpoints of the aggregating trackers with random parts changed
# (values swapped for odd ones, Arrays cut short or shuffled, keys added):
# each is refused with one of the gem's errors, or read into a tracker that
# then works, and whose own checkpoint reads back to the same state.
RSpec.describe "Restoring aggregating trackers from untrusted checkpoints", :mistyped do
  agg = WindowMachines::Aggregate
  aggregate = { "n" => agg::Count.new, "s" => agg::Sum.new("v"), "c" => agg::Collect.new("v"),
                "f" => agg::First.new("v"), "m" => agg::Mean.new("v"), "mx" => agg::Max.new("v") }
  makers = {
    tumbling: -> { WindowMachines::TumblingWindows.new(10, grace: 5, offset: 3, aggregate: aggregate) },
    hopping: -> { WindowMachines::HoppingWindows.new(10, 5, grace: 5, aggregate: aggregate) },
    sessions: -> { WindowMachines::SessionWindows.new(5, grace: 5, aggregate: aggregate, max_sessions: 20) }
  }
  odd = [nil, 0, -1, 1, 2**64, 2**70, 1.5, "x", :sym, [], [1], [[1, 2]], {}, [0, 0], [5, nil], [[0, 1], [1, 2]]].freeze

  let(:rng) { Random.new(RSpec.configuration.seed) }

  define_method(:mutate) do |value|
    case value
    when Hash
      changed = value.to_h { |key, entry| [key, rng.rand(5).zero? ? mutate(entry) : entry] }
      rng.rand(20).zero? ? changed.merge("extra" => 1) : changed
    when Array
      return odd.sample(random: rng) if rng.rand(10).zero?

      changed = value.map { |entry| rng.rand(4).zero? ? mutate(entry) : entry }
      changed = changed.shuffle(random: rng) if rng.rand(10).zero?
      rng.rand(15).zero? ? changed[0...-1] : changed
    else odd.sample(random: rng)
    end
  end

  makers.each do |kind, make|
    it "refuses or reads back every mutated #{kind} checkpoint" do
      outcomes = Hash.new(0)
      300.times do
        tracker = make.call
        25.times do
          tracker.add(%w[a b c].sample(random: rng), rng.rand(0..60), { "v" => [1, 2.5, 2**70, nil].sample(random: rng) })
        rescue WindowMachines::LateEventError
          nil
        end
        checkpoint = mutate(JSON.parse(JSON.generate(tracker.to_h)))
        begin
          restored = tracker.class.from_h(checkpoint, aggregate: aggregate, on_late: :drop)
        rescue WindowMachines::Error => e
          outcomes[e.class] += 1
          next
        end
        outcomes[:read] += 1
        # Through Marshal: a key read from JSON may have no exact JSON form
        # (a Float), which to_h would refuse.
        expect(Marshal.load(Marshal.dump(restored)).marshal_dump).to eq(restored.marshal_dump)
        restored.add("a", rng.rand(0..100), { "v" => 1 })
        held = restored.size
        expect(restored.flush.to_a.size).to eq(held)
        expect([restored.size, restored.key_count]).to eq([0, 0])
      end
      expect(outcomes[:read]).to be > 10
      expect(outcomes.keys - [:read]).not_to be_empty
    end
  end
end
