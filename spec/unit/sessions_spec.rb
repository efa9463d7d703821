# frozen_string_literal: true

RSpec.describe WindowMachines::Sessions do
  let(:max) { WindowMachinesSpec::MAX }

  describe ".new" do
    it "holds nothing and has no watermark" do
      sessions = described_class.new(5)
      expect(sessions.gap).to eq(5)
      expect(sessions.size).to eq(0)
      expect(sessions.to_a).to eq([])
      expect(sessions.watermark).to be_nil
      expect(sessions.take_closed).to be_nil
    end

    it "accepts gaps from 1 to 2**64-1" do
      expect(described_class.new(1).gap).to eq(1)
      expect(described_class.new(max).gap).to eq(max)
    end

    it "refuses a zero gap" do
      expect_gem_error(WindowMachines::ArgumentError, /\bgap\b/) { described_class.new(0) }
    end
  end

  describe "#insert" do
    it "starts a one-event session [t, t]" do
      sessions = described_class.new(5)
      expect(sessions.insert(10)).to eq([10, 10])
      expect(sessions.to_a).to eq([[10, 10]])
    end

    it "joins a session exactly gap away, on either side" do
      sessions = sessions_with(5, 10)
      expect(sessions.insert(15)).to eq([10, 15])
      expect(sessions.insert(5)).to eq([5, 15])
      expect(sessions.to_a).to eq([[5, 15]])
    end

    it "starts a new session gap + 1 away, on either side" do
      sessions = sessions_with(5, 10)
      expect(sessions.insert(16)).to eq([16, 16])
      expect(sessions.insert(4)).to eq([4, 4])
      expect(sessions.to_a).to eq([[4, 4], [10, 10], [16, 16]])
    end

    it "with gap 1 joins neighbours and separates anything two apart" do
      sessions = described_class.new(1)
      expect(sessions.insert(10)).to eq([10, 10])
      expect(sessions.insert(11)).to eq([10, 11])
      expect(sessions.insert(13)).to eq([13, 13])
      expect(sessions.insert(12)).to eq([10, 13])
      expect(sessions.to_a).to eq([[10, 13]])
    end

    it "with gap 2**64-1 puts everything in one session" do
      sessions = described_class.new(max)
      expect(sessions.insert(max)).to eq([max, max])
      expect(sessions.insert(0)).to eq([0, max])
      expect(sessions.insert(2**63)).to eq([0, max])
      expect(sessions.size).to eq(1)
    end

    it "merges two sessions when the event bridges them" do
      sessions = sessions_with(5, 10, 15, 30, 21)
      expect(sessions.to_a).to eq([[10, 15], [21, 21], [30, 30]])
      expect(sessions.insert(26)).to eq([21, 30])
      expect(sessions.to_a).to eq([[10, 15], [21, 30]])
    end

    it "merges two sessions that are exactly 2 * gap apart through the middle" do
      sessions = sessions_with(5, 10, 20)
      expect(sessions.insert(15)).to eq([10, 20])
      expect(sessions.to_a).to eq([[10, 20]])
    end

    it "returns the session unchanged for an event inside it" do
      sessions = sessions_with(5, 10, 14)
      expect(sessions.insert(12)).to eq([10, 14])
      expect(sessions.insert(10)).to eq([10, 14])
      expect(sessions.insert(14)).to eq([10, 14])
      expect(sessions.to_a).to eq([[10, 14]])
    end

    it "keeps sessions sorted whatever the arrival order" do
      sessions = sessions_with(2, 50, 10, 30, 0, 40, 20)
      expect(sessions.to_a).to eq([[0, 0], [10, 10], [20, 20], [30, 30], [40, 40], [50, 50]])
    end

    it "works at both ends of the domain" do
      sessions = described_class.new(3)
      expect(sessions.insert(0)).to eq([0, 0])
      expect(sessions.insert(max)).to eq([max, max])
      expect(sessions.insert(max - 3)).to eq([max - 3, max])
      expect(sessions.insert(3)).to eq([0, 3])
      expect(sessions.to_a).to eq([[0, 3], [max - 3, max]])
    end

    describe "late events" do
      it "refuses a timestamp equal to the watermark and changes nothing" do
        sessions = sessions_with(5, 10, watermark: 12)
        before = observable_state(sessions)
        expect_gem_error(WindowMachines::LateEventError, /\b12\b/) { sessions.insert(12) }
        expect(observable_state(sessions)).to eq(before)
      end

      it "refuses a timestamp below the watermark, even one inside a session" do
        sessions = sessions_with(5, 10, 14, watermark: 12)
        before = observable_state(sessions)
        expect_gem_error(WindowMachines::LateEventError, /\b11\b/) { sessions.insert(11) }
        expect_gem_error(WindowMachines::LateEventError, /\b0\b/) { sessions.insert(0) }
        expect(observable_state(sessions)).to eq(before)
      end

      it "admits the next timestamp above the watermark" do
        sessions = sessions_with(5, 10, watermark: 12)
        expect(sessions.insert(13)).to eq([10, 13])
      end

      it "refuses 0 once the watermark is 0" do
        sessions = sessions_with(5, watermark: 0)
        expect_gem_error(WindowMachines::LateEventError, /watermark/) { sessions.insert(0) }
        expect(sessions.insert(1)).to eq([1, 1])
      end

      it "refuses everything once the watermark is 2**64-1" do
        sessions = sessions_with(5, watermark: max)
        expect_gem_error(WindowMachines::LateEventError, /watermark/) { sessions.insert(max) }
        expect(sessions.size).to eq(0)
      end
    end

    describe "capacity" do
      it "holds 32 sessions" do
        sessions = full_sessions
        expect(sessions.size).to eq(32)
        expect(sessions.to_a.first).to eq([0, 0])
        expect(sessions.to_a.last).to eq([310, 310])
      end

      it "refuses a 33rd session with CapacityError and changes nothing" do
        sessions = full_sessions(watermark: 0)
        before = observable_state(sessions)
        expect_gem_error(WindowMachines::CapacityError, /32/) { sessions.insert(1_000) }
        expect_gem_error(WindowMachines::CapacityError, /32/) { sessions.insert(5_000) }
        expect(observable_state(sessions)).to eq(before)
      end

      it "lets a session grow at 32" do
        sessions = full_sessions
        expect(sessions.insert(315)).to eq([310, 315])
        expect(sessions.insert(2)).to eq([0, 2])
        expect(sessions.size).to eq(32)
      end

      it "lets two sessions merge at 32, which makes room for one more" do
        sessions = full_sessions
        expect(sessions.insert(15)).to eq([10, 20])
        expect(sessions.size).to eq(31)
        expect(sessions.insert(1_000)).to eq([1_000, 1_000])
        expect_gem_error(WindowMachines::CapacityError, /32/) { sessions.insert(2_000) }
      end

      it "accepts an event inside a session at 32" do
        sessions = full_sessions
        expect(sessions.insert(310)).to eq([310, 310])
      end

      it "counts closed sessions until take_closed hands them over" do
        sessions = full_sessions(watermark: 100)
        expect_gem_error(WindowMachines::CapacityError, /32/) { sessions.insert(1_000) }
        expect(sessions.take_closed).to eq([0, 0])
        expect(sessions.insert(1_000)).to eq([1_000, 1_000])
      end

      it "reports a late event as late, not as over capacity" do
        sessions = full_sessions(watermark: 500)
        expect_gem_error(WindowMachines::LateEventError, /late/) { sessions.insert(400) }
      end
    end
  end

  describe "#advance_watermark" do
    it "moves forward and says so, exactly like Watermark#advance" do
      sessions = described_class.new(5)
      expect(sessions.advance_watermark(0)).to be(true)
      expect(sessions.watermark).to eq(0)
      expect(sessions.advance_watermark(0)).to be(false)
      expect(sessions.advance_watermark(25)).to be(true)
      expect(sessions.advance_watermark(9)).to be(false)
      expect(sessions.watermark).to eq(25)
    end

    it "does not hand anything over by itself" do
      sessions = sessions_with(5, 10, watermark: 100)
      expect(sessions.to_a).to eq([[10, 10]])
    end
  end

  describe "#take_closed" do
    it "returns nil without a watermark" do
      sessions = sessions_with(1, 0)
      expect(sessions.take_closed).to be_nil
      expect(sessions.size).to eq(1)
    end

    it "closes a session once last + gap is at or below the watermark, not before" do
      sessions = sessions_with(5, 10, 15, watermark: 19)
      expect(sessions.take_closed).to be_nil
      sessions.advance_watermark(20)
      expect(sessions.take_closed).to eq([10, 15])
      expect(sessions.size).to eq(0)
    end

    it "hands over the oldest closed session first, then nil" do
      sessions = sessions_with(2, 30, 1, 20, 10, watermark: 22)
      expect(sessions.take_closed).to eq([1, 1])
      expect(sessions.take_closed).to eq([10, 10])
      expect(sessions.take_closed).to eq([20, 20])
      expect(sessions.take_closed).to be_nil
      expect(sessions.take_closed).to be_nil
      expect(sessions.to_a).to eq([[30, 30]])
    end

    it "is exact near 2**64-1" do
      sessions = sessions_with(10, max - 20, watermark: max - 11)
      expect(sessions.take_closed).to be_nil
      sessions.advance_watermark(max - 10)
      expect(sessions.take_closed).to eq([max - 20, max - 20])
    end

    it "counts an overflowing last + gap as 2**64-1" do
      sessions = sessions_with(5, 0, max - 3, max)
      expect(sessions.to_a).to eq([[0, 0], [max - 3, max]])
      sessions.advance_watermark(max - 1)
      expect(sessions.take_closed).to eq([0, 0])
      expect(sessions.take_closed).to be_nil
      sessions.advance_watermark(max)
      expect(sessions.take_closed).to eq([max - 3, max])
      expect(sessions.take_closed).to be_nil
    end

    it "closes a gap-2**64-1 session only when the watermark is 2**64-1" do
      sessions = sessions_with(max, 0, watermark: max - 1)
      expect(sessions.take_closed).to be_nil
      sessions.advance_watermark(max)
      expect(sessions.take_closed).to eq([0, 0])
    end

    it "makes a session final: the next admissible event starts a new one" do
      sessions = sessions_with(5, 10, watermark: 15)
      expect(sessions.insert(16)).to eq([16, 16])
      expect(sessions.to_a).to eq([[10, 10], [16, 16]])
      expect(sessions.take_closed).to eq([10, 10])
    end
  end

  describe "#each_closed" do
    # Closed at watermark 20: [3, 3] and [10, 12]; [18, 18] and [30, 30] are not.
    subject(:sessions) { sessions_with(3, 30, 10, 3, 12, 18, watermark: 20) }

    it "yields first and last of every closed session, oldest first, and returns self" do
      yielded = []
      expect(sessions.each_closed { |first, last| yielded << [first, last] }).to be(sessions)
      expect(yielded).to eq([[3, 3], [10, 12]])
    end

    it "removes each session just before yielding it, and leaves the open ones" do
      seen = []
      sessions.each_closed { |first, _last| seen << [first, sessions.to_a] }
      expect(seen).to eq([[3, [[10, 12], [18, 18], [30, 30]]], [10, [[18, 18], [30, 30]]]])
      expect(sessions.to_a).to eq([[18, 18], [30, 30]])
      expect(sessions.take_closed).to be_nil
    end

    it "yields nothing when nothing is closed" do
      open_only = sessions_with(3, 30, watermark: 20)
      expect { |probe| open_only.each_closed(&probe) }.not_to yield_control
      expect(open_only.to_a).to eq([[30, 30]])
    end

    it "returns an Enumerator that takes the sessions only when iterated" do
      enumerator = sessions.each_closed
      expect(enumerator).to be_an(Enumerator)
      expect(sessions.size).to eq(4)
      expect(enumerator.to_a).to eq([[3, 3], [10, 12]])
      expect(sessions.to_a).to eq([[18, 18], [30, 30]])
      expect(enumerator.to_a).to eq([])
    end

    it "hands over what the block closes and leaves what it inserts open" do
      yielded = []
      sessions.each_closed do |first, last|
        yielded << [first, last]
        next unless first == 3

        sessions.insert(26)
        sessions.advance_watermark(25)
      end
      # 25 closes [18, 18] (18 + 3 <= 25); [26, 26] and [30, 30] stay open.
      expect(yielded).to eq([[3, 3], [10, 12], [18, 18]])
      expect(sessions.to_a).to eq([[26, 26], [30, 30]])
    end

    it "raises FrozenError on a frozen tracker, with or without a block, closed sessions or not" do
      [sessions, sessions_with(3, 30)].each do |tracker|
        tracker.freeze
        before = observable_state(tracker)
        expect_frozen_error(tracker) { tracker.each_closed { nil } }
        expect_frozen_error(tracker) { tracker.each_closed.to_a }
        expect(observable_state(tracker)).to eq(before)
      end
    end
  end

  describe "#to_a" do
    it "returns held sessions oldest first" do
      expect(sessions_with(5, 30, 10).to_a).to eq([[10, 10], [30, 30]])
    end

    it "returns fresh arrays: mutating them does not touch the tracker" do
      sessions = sessions_with(5, 10, 30)
      list = sessions.to_a
      list.first[0] = 99
      list.first << 7
      list << [1, 2]
      list.delete_at(1)
      expect(sessions.to_a).to eq([[10, 10], [30, 30]])
      expect(sessions.to_a).not_to be(sessions.to_a)
      expect(sessions.to_a.first).not_to be(sessions.to_a.first)
    end

    it "returns arrays that insert and take_closed results do not share" do
      sessions = described_class.new(5)
      inserted = sessions.insert(10)
      inserted << :mutated
      sessions.advance_watermark(100)
      taken = sessions.take_closed
      expect(taken).to eq([10, 10])
    end
  end

  describe "#size" do
    it "counts held sessions through growth, merges and hand-overs" do
      sessions = described_class.new(5)
      expect { sessions.insert(10) }.to change(sessions, :size).from(0).to(1)
      expect { sessions.insert(12) }.not_to change(sessions, :size)
      expect { sessions.insert(20) }.to change(sessions, :size).from(1).to(2)
      expect { sessions.insert(16) }.to change(sessions, :size).from(2).to(1)
      sessions.advance_watermark(25)
      expect { sessions.take_closed }.to change(sessions, :size).from(1).to(0)
    end
  end

  describe "#inspect" do
    it "shows the gap, watermark and sessions" do
      expect(described_class.new(5).inspect)
        .to eq("#<WindowMachines::Sessions gap=5 watermark=nil sessions=[]>")
      expect(sessions_with(5, 10, 15, 30, watermark: 12).inspect)
        .to eq("#<WindowMachines::Sessions gap=5 watermark=12 sessions=[[10, 15], [30, 30]]>")
    end
  end
end
