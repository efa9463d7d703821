# frozen_string_literal: true

RSpec.describe "Checkpoints" do
  include WindowMachinesSpec::Checkpoints

  max = WindowMachinesSpec::MAX

  describe WindowMachines::Sessions do
    subject(:sessions) { sessions_with(5, 10, 14, 30, watermark: 12) }

    it "describes itself with Integers, Arrays and nil" do
      expect(sessions.to_h).to eq(gap: 5, watermark: 12, sessions: [[10, 14], [30, 30]])
      expect(WindowMachines::Sessions.new(3).to_h).to eq(gap: 3, watermark: nil, sessions: [])
    end

    it "comes back equal from to_h, from JSON with String keys, and from Marshal" do
      expect(WindowMachines::Sessions.from_h(sessions.to_h)).to eq(sessions)
      expect(WindowMachines::Sessions.from_h(via_json(sessions.to_h))).to eq(sessions)
      expect(Marshal.load(Marshal.dump(sessions))).to eq(sessions)
    end

    it "keeps 2**64-1 exact through every round trip" do
      top = sessions_with(max, max, watermark: max - 1)
      expect(WindowMachines::Sessions.from_h(via_json(top.to_h)).to_h).to eq(top.to_h)
      expect(Marshal.load(Marshal.dump(top)).to_h).to eq(top.to_h)
    end

    it "restores into a subclass when called on one" do
      subclass = Class.new(WindowMachines::Sessions)
      restored = subclass.from_h(sessions.to_h)
      expect(restored).to be_an_instance_of(subclass)
      expect(restored.to_a).to eq(sessions.to_a)
    end

    it "restores an unfrozen tracker from a frozen one" do
      expect(Marshal.load(Marshal.dump(sessions.freeze))).not_to be_frozen
    end

    it "refuses marshal_load on a frozen tracker" do
      sessions.freeze
      expect_frozen_error(sessions) { sessions.marshal_load(sessions.to_h) }
    end

    it "behaves identically after a round trip on the same following operations" do
      rng = Random.new(RSpec.configuration.seed)
      200.times do
        original = random_sessions(rng)
        copies = [WindowMachines::Sessions.from_h(original.to_h),
                  WindowMachines::Sessions.from_h(via_json(original.to_h)),
                  Marshal.load(Marshal.dump(original))]
        base = original.to_a.dig(0, 0) || original.watermark || 0
        operations = Array.new(30) { random_operation(rng, base) }
        expected = operations.map { |operation| apply(original, operation) }
        copies.each do |copy|
          expect(operations.map { |operation| apply(copy, operation) }).to eq(expected)
          expect(copy).to eq(original)
        end
      end
    end
  end

  describe WindowMachines::Watermark do
    it "describes itself as {value:}" do
      expect(WindowMachines::Watermark.new(22).to_h).to eq(value: 22)
      expect(WindowMachines::Watermark.new.to_h).to eq(value: nil)
    end

    it "comes back equal from to_h, JSON and Marshal" do
      [WindowMachines::Watermark.new, WindowMachines::Watermark.new(0), WindowMachines::Watermark.new(max)].each do |watermark|
        expect(WindowMachines::Watermark.from_h(watermark.to_h)).to eq(watermark)
        expect(WindowMachines::Watermark.from_h(via_json(watermark.to_h))).to eq(watermark)
        expect(Marshal.load(Marshal.dump(watermark))).to eq(watermark)
      end
    end

    it "refuses a malformed checkpoint with a clear error" do
      expect_gem_error(WindowMachines::ArgumentError, "checkpoint is missing value") do
        WindowMachines::Watermark.from_h({})
      end
      expect_gem_error(WindowMachines::RangeError, "value must be in 0..2**64-1, got -1") do
        WindowMachines::Watermark.from_h(value: -1)
      end
      expect_gem_error(WindowMachines::TypeError, "value must be an Integer, got 1.5 (Float)") do
        WindowMachines::Watermark.from_h("value" => 1.5)
      end
    end
  end

  describe "equality" do
    it "compares class and state, and hashes alike when equal" do
      a = sessions_with(5, 10, 30, watermark: 3)
      b = sessions_with(5, 30, 10, watermark: 3)
      expect(a).to eq(b)
      expect(a).to eql(b)
      expect(a.hash).to eq(b.hash)
      expect({ a => 1 }[b]).to eq(1)
      b.insert(50)
      expect(a).not_to eq(b)
      expect(a).not_to eq(a.to_h)
      expect(a).not_to eq(Class.new(WindowMachines::Sessions).from_h(a.to_h))
      expect(WindowMachines::Watermark.new(1)).to eq(WindowMachines::Watermark.new(1))
      expect(WindowMachines::Watermark.new(1)).not_to eq(WindowMachines::Watermark.new)
    end
  end
  it "keep a late count restored at 2**64-1 there, rather than wrapping to 0 on the next late event" do
    count = WindowMachines::Aggregate::Count.new
    table = WindowMachines::VersionedTable.from_h(
      { history_retention: 5, stream_time: 10, late_count: max, versions: [] }, on_late: :drop
    )
    windows = WindowMachines::TumblingWindows.new(10, aggregate: count, on_late: :drop)
    windows.add("a", 25)
    windows = WindowMachines::TumblingWindows.from_h(windows.to_h.merge(late_count: max), aggregate: count, on_late: :drop)
    sessions = WindowMachines::SessionWindows.new(5, aggregate: count, on_late: :drop)
    sessions.add("a", 25)
    sessions = WindowMachines::SessionWindows.from_h(sessions.to_h.merge(late_count: max), aggregate: count, on_late: :drop)
    expect([table.put("a", 1, 0), windows.add("b", 1), sessions.add("b", 1)]).to eq([false, false, false])
    expect([table, windows, sessions].map(&:late_count)).to eq([max, max, max])
  end
end
