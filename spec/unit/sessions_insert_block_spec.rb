# frozen_string_literal: true

RSpec.describe "WindowMachines::Sessions#insert with a block" do
  subject(:sessions) { sessions_with(5, 10, 30) }

  def yields_of(sessions, timestamp)
    yielded = []
    result = sessions.insert(timestamp) { |old_span, new_span| yielded << [old_span, new_span] }
    [result, yielded]
  end

  it "yields the old and the new span when a session grows to the left" do
    expect(yields_of(sessions, 7)).to eq([[7, 10], [[[10, 10], [7, 10]]]])
  end

  it "yields the old and the new span when a session grows to the right" do
    expect(yields_of(sessions, 14)).to eq([[10, 14], [[[10, 10], [10, 14]]]])
  end

  it "yields both merged spans, oldest first, each with the span they became" do
    sessions.insert(20)
    expect(yields_of(sessions, 25)).to eq([[20, 30], [[[20, 20], [20, 30]], [[30, 30], [20, 30]]]])
  end

  it "yields nothing for an event inside a session" do
    sessions.insert(14)
    expect(yields_of(sessions, 12)).to eq([[10, 14], []])
  end

  it "yields nothing for a new session" do
    expect(yields_of(sessions, 50)).to eq([[50, 50], []])
  end

  it "yields nothing and changes nothing for a late event" do
    sessions.advance_watermark(12)
    before = sessions.to_h
    expect { sessions.insert(11) { raise "must not be called" } }.to raise_error(WindowMachines::LateEventError)
    expect(sessions.to_h).to eq(before)
  end

  it "yields nothing and changes nothing when a new session would exceed capacity" do
    full = full_sessions
    before = full.to_h
    expect { full.insert(1000) { raise "must not be called" } }.to raise_error(WindowMachines::CapacityError)
    expect(full.to_h).to eq(before)
  end

  it "still grows and merges at capacity, yielding as usual" do
    full = full_sessions
    expect(yields_of(full, 5)).to eq([[0, 10], [[[0, 0], [0, 10]], [[10, 10], [0, 10]]]])
    expect(full.size).to eq(31)
  end

  it "runs the block after the tracker is updated" do
    seen = nil
    sessions.insert(14) { seen = sessions.to_a }
    expect(seen).to eq([[10, 14], [30, 30]])
  end

  it "hands the block fresh arrays that do not alias the tracker or each other", :mistyped do
    sessions.insert(20)
    sessions.insert(25) do |old_span, new_span|
      old_span << :scribbled
      new_span.clear
    end
    expect(sessions.to_a).to eq([[10, 10], [20, 30]])
  end

  it "lets the block call the tracker again, even to insert" do
    nested = []
    result = sessions.insert(14) do |_old_span, new_span|
      nested << sessions.insert(100)
      nested << sessions.insert(new_span.last + 1) { |old, new| nested << [old, new] }
    end
    expect(result).to eq([10, 14])
    expect(nested).to eq([[100, 100], [[10, 14], [10, 15]], [10, 15]])
    expect(sessions.to_a).to eq([[10, 15], [30, 30], [100, 100]])
  end

  it "propagates an exception from the block and keeps the update" do
    sessions.insert(20)
    calls = 0
    expect do
      sessions.insert(25) do
        calls += 1
        raise IOError, "payload store down"
      end
    end.to raise_error(IOError, "payload store down")
    expect(calls).to eq(1)
    expect(sessions.to_a).to eq([[10, 10], [20, 30]])
    expect(sessions.insert(31)).to eq([20, 31])
  end

  it "returns the same span with or without a block" do
    without = sessions_with(5, 10, 30)
    [14, 20, 25, 12, 50].each do |timestamp|
      expect(sessions.insert(timestamp) { nil }).to eq(without.insert(timestamp))
    end
    expect(sessions).to eq(without)
  end

  it "keeps per-session counts right over a random stream" do
    rng = Random.new(RSpec.configuration.seed)
    counts = Hash.new(0)
    tracker = WindowMachines::Sessions.new(7)
    600.times do
      span = tracker.insert(rng.rand(0..200)) { |old, new| counts[new] += counts.delete(old) }
      counts[span] += 1
    end
    expect(tracker.size).to be < 32
    expect(counts.keys.sort).to eq(tracker.to_a)
    expect(counts.values.sum).to eq(600)
  end
end
