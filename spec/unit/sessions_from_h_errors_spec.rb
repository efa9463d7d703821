# frozen_string_literal: true

RSpec.describe "WindowMachines::Sessions.from_h with malformed input", :mistyped do
  def valid(**overrides)
    { gap: 5, watermark: 20, sessions: [[1, 3], [10, 12]] }.merge(overrides)
  end

  {
    "not a Hash" => [[], WindowMachines::TypeError, "checkpoint must be a Hash, got [] (Array)"],
    "a missing key" => [{ gap: 5, sessions: [] }, WindowMachines::ArgumentError, "checkpoint is missing watermark"],
    "an unknown key" => [{ gap: 5, watermark: nil, sessions: [], extra: 1 }, WindowMachines::ArgumentError,
                         "checkpoint has an unknown key :extra"],
    "a key given twice" => [{ gap: 5, "gap" => 5, watermark: nil, sessions: [] }, WindowMachines::ArgumentError,
                            'checkpoint gives "gap" twice'],
    "a key that is neither Symbol nor String" => [{ gap: 5, watermark: nil, sessions: [], 1 => 2 },
                                                  WindowMachines::ArgumentError, "checkpoint has an unknown key 1"],
    "a Float gap" => [{ gap: 5.0, watermark: nil, sessions: [] }, WindowMachines::TypeError,
                      "gap must be an Integer, got 5.0 (Float)"],
    "a zero gap" => [{ gap: 0, watermark: nil, sessions: [] }, WindowMachines::ArgumentError, "gap must be positive, got 0"],
    "a negative watermark" => [{ gap: 5, watermark: -1, sessions: [] }, WindowMachines::RangeError,
                               "watermark must be in 0..2**64-1, got -1"],
    "an oversized watermark" => [{ gap: 5, watermark: 2**64, sessions: [] }, WindowMachines::RangeError,
                                 "watermark must be in 0..2**64-1, got 18446744073709551616"],
    "sessions that are not an Array" => [{ gap: 5, watermark: nil, sessions: {} }, WindowMachines::TypeError,
                                         "sessions must be an Array of [first, last] pairs, got {} (Hash)"],
    "a session that is not a pair" => [{ gap: 5, watermark: nil, sessions: [[1, 2, 3]] }, WindowMachines::TypeError,
                                       "sessions[0] must be an Array of [first, last], got [1, 2, 3] (Array)"],
    "a session bound that is not an Integer" => [{ gap: 5, watermark: nil, sessions: [[1, 2], [9, "10"]] },
                                                 WindowMachines::TypeError,
                                                 'sessions[1] last must be an Integer, got "10" (String)'],
    "first after last" => [{ gap: 5, watermark: nil, sessions: [[4, 3]] }, WindowMachines::ArgumentError,
                           "session [4, 3] must not end before it starts"],
    "unsorted sessions" => [{ gap: 5, watermark: nil, sessions: [[20, 20], [1, 1]] }, WindowMachines::ArgumentError,
                            "sessions must be sorted and more than the gap 5 apart, got [20, 20] then [1, 1]"],
    "overlapping sessions" => [{ gap: 5, watermark: nil, sessions: [[1, 10], [8, 20]] }, WindowMachines::ArgumentError,
                               "sessions must be sorted and more than the gap 5 apart, got [1, 10] then [8, 20]"],
    "sessions within a gap" => [{ gap: 5, watermark: nil, sessions: [[1, 10], [15, 20]] }, WindowMachines::ArgumentError,
                                "sessions must be sorted and more than the gap 5 apart, got [1, 10] then [15, 20]"],
    "33 sessions" => [{ gap: 1, watermark: nil, sessions: Array.new(33) { |n| [n * 3, n * 3] } },
                      WindowMachines::CapacityError, "33 sessions given, more than the 32 a tracker holds"]
  }.each do |problem, (input, klass, message)|
    it "refuses #{problem}" do
      expect_gem_error(klass, message) { WindowMachines::Sessions.from_h(input) }
      expect_gem_error(klass, message) { WindowMachines::Sessions.new(1).marshal_load(input) }
    end
  end

  it "accepts sessions exactly one more than a gap apart, and exactly 32" do
    expect(WindowMachines::Sessions.from_h(valid(sessions: [[1, 10], [16, 20]])).size).to eq(2)
    expect(WindowMachines::Sessions.from_h(gap: 1, watermark: nil, sessions: Array.new(32) { |n| [n * 3, n * 3] }).size)
      .to eq(32)
  end

  it "leaves the receiver of a refused marshal_load untouched" do
    sessions = sessions_with(2, 1, 9, watermark: 4)
    before = sessions.to_h
    expect { sessions.marshal_load(valid(sessions: [[3, 1]])) }.to raise_error(WindowMachines::ArgumentError)
    expect(sessions.to_h).to eq(before)
  end
end
