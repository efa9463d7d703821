# frozen_string_literal: true

require "json"

RSpec.describe "WindowMachines::KeyedSessions checkpoints" do
  include WindowMachinesSpec::Checkpoints

  subject(:keyed) do
    described = WindowMachines::KeyedSessions.new(5, max_sessions: 100)
    [["b", 10], ["a", 10], ["a", 40], [[1, "x"], 12], [7, 3]].each { |key, at| described.insert(key, at) }
    described.advance_watermark(2)
    described
  end

  it "describes itself with keys, Integers, Arrays and nil, grouped by the key held longest" do
    expect(keyed.to_h).to eq(
      gap: 5, max_sessions: 100, watermark: 2,
      sessions: [["b", 10, 10], ["a", 10, 10], ["a", 40, 40], [[1, "x"], 12, 12], [7, 3, 3]]
    )
  end

  it "comes back equal through to_h, JSON and Marshal, with the same hand-over order" do
    copies = [WindowMachines::KeyedSessions.from_h(keyed.to_h),
              WindowMachines::KeyedSessions.from_h(via_json(keyed.to_h)),
              Marshal.load(Marshal.dump(keyed))]
    keyed.advance_watermark(1_000)
    expected = keyed.each_closed.to_a
    copies.each do |copy|
      expect(copy.to_a.size).to eq(5)
      copy.advance_watermark(1_000)
      expect(copy.each_closed.to_a).to eq(expected)
    end
  end

  it "behaves identically after a round trip on the same following operations" do
    rng = Random.new(RSpec.configuration.seed)
    30.times do
      original = WindowMachines::KeyedSessions.new([1, 4].sample(random: rng))
      operations = Array.new(120) do
        case rng.rand(8)
        when 0 then [:advance_watermark, rng.rand(0..300)]
        when 1 then [:take_closed]
        else [:insert, %w[a b c d].sample(random: rng), rng.rand(0..300)]
        end
      end
      operations.first(60).each { |operation| apply(original, operation) }
      copies = [WindowMachines::KeyedSessions.from_h(via_json(original.to_h)), Marshal.load(Marshal.dump(original))]
      expected = operations.drop(60).map { |operation| apply(original, operation) }
      copies.each do |copy|
        expect(operations.drop(60).map { |operation| apply(copy, operation) }).to eq(expected)
        expect(copy).to eq(original)
      end
    end
  end

  it "refuses to_h for keys JSON cannot carry exactly, while Marshal keeps them" do
    keyed.insert(:symbol, 50)
    expect_gem_error(WindowMachines::TypeError, /key :symbol \(Symbol\) has no exact JSON form/) { keyed.to_h }
    expect(Marshal.load(Marshal.dump(keyed)).sessions_for(:symbol)).to eq([[50, 50]])
  end

  {
    "a missing key" => [{ gap: 5, watermark: nil, sessions: [] }, WindowMachines::ArgumentError,
                        "checkpoint is missing max_sessions"],
    "a session that is not a triple" => [{ gap: 5, max_sessions: nil, watermark: nil, sessions: [["a", 1]] },
                                         WindowMachines::TypeError,
                                         'sessions[0] must be an Array of [key, first, last], got ["a", 1] (Array)'],
    "a key's sessions within a gap" => [{ gap: 5, max_sessions: nil, watermark: nil,
                                          sessions: [["a", 1, 1], ["b", 3, 3], ["a", 4, 4]] },
                                        WindowMachines::ArgumentError,
                                        "sessions must be sorted and more than the gap 5 apart, got [1, 1] then [4, 4]"],
    "more sessions than max_sessions" => [{ gap: 5, max_sessions: 1, watermark: nil,
                                            sessions: [["a", 1, 1], ["b", 1, 1]] },
                                          WindowMachines::CapacityError,
                                          "2 sessions given, more than the 1 a tracker holds"],
    "a zero max_sessions" => [{ gap: 5, max_sessions: 0, watermark: nil, sessions: [] },
                              WindowMachines::ArgumentError, "max_sessions must be positive, got 0"],
    "33 sessions for one key" => [{ gap: 1, max_sessions: nil, watermark: nil,
                                    sessions: Array.new(33) { |n| ["a", n * 3, n * 3] } },
                                  WindowMachines::CapacityError, "33 sessions given, more than the 32 a tracker holds"]
  }.each do |problem, (input, klass, message)|
    it "refuses #{problem}" do
      expect_gem_error(klass, message) { WindowMachines::KeyedSessions.from_h(input) }
    end
  end

  it "gives clean errors or valid trackers for mutated checkpoints" do
    rng = Random.new(RSpec.configuration.seed)
    odd = [-1, 2**64, 1.5, nil, "x", [], [1, 2], ["a", 2, 1], { a: 1 }, :a]
    restored = 0
    1_000.times do
      hash = via_json(keyed.to_h)
      case rng.rand(4)
      when 0 then hash[hash.keys.sample(random: rng)] = odd.sample(random: rng)
      when 1 then hash["sessions"][rng.rand(hash["sessions"].size)] = odd.sample(random: rng)
      when 2 then hash["sessions"].shuffle!(random: rng)
      else hash["sessions"][rng.rand(hash["sessions"].size)][rng.rand(3)] = odd.sample(random: rng)
      end
      begin
        tracker = WindowMachines::KeyedSessions.from_h(hash)
      rescue WindowMachines::Error
        next
      end
      restored += 1
      tracker.to_a.group_by(&:first).each_value do |spans|
        spans.each_cons(2) { |(_, _, last), (_, first, _)| expect(first - last).to be > tracker.gap }
      end
    end
    expect(restored).to be > 0
  end
end
