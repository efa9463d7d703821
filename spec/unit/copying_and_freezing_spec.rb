# frozen_string_literal: true

RSpec.describe "Copying and freezing" do
  describe WindowMachines::Watermark do
    let(:original) { described_class.new(22) }

    describe "#dup" do
      it "copies the value into an unfrozen, independent watermark" do
        copy = original.dup
        expect(copy).not_to be(original)
        expect(copy.value).to eq(22)
        expect(copy).not_to be_frozen
        expect(copy.advance(30)).to be(true)
        expect(original.value).to eq(22)
        expect(original.advance(25)).to be(true)
        expect(copy.value).to eq(30)
      end

      it "copies an unset watermark as unset" do
        expect(described_class.new.dup.value).to be_nil
      end

      it "unfreezes: a dup of a frozen watermark can advance" do
        copy = original.freeze.dup
        expect(copy).not_to be_frozen
        expect(copy.advance(30)).to be(true)
        expect(original.value).to eq(22)
      end
    end

    describe "#clone" do
      it "copies the value and keeps an unfrozen watermark unfrozen" do
        copy = original.clone
        expect(copy.value).to eq(22)
        expect(copy).not_to be_frozen
        copy.advance(30)
        expect(original.value).to eq(22)
      end

      it "keeps the frozen state" do
        copy = original.freeze.clone
        expect(copy).to be_frozen
        expect(copy.value).to eq(22)
        expect_frozen_error(copy) { copy.advance(30) }
      end

      it "honours clone(freeze: false)" do
        copy = original.freeze.clone(freeze: false)
        expect(copy).not_to be_frozen
        expect(copy.advance(30)).to be(true)
      end
    end

    describe "#freeze" do
      it "makes advance raise FrozenError, even when it would not move" do
        original.freeze
        expect_frozen_error(original) { original.advance(30) }
        expect_frozen_error(original) { original.advance(1) }
        expect(original.value).to eq(22)
      end

      it "leaves the readers working" do
        original.freeze
        expect(original.value).to eq(22)
        expect(original.closes?(10, 20, 2)).to be(true)
        expect(original.inspect).to eq("#<WindowMachines::Watermark value=22>")
      end

      it "returns the receiver" do
        expect(original.freeze).to be(original)
      end
    end

    it "inspects the state of a copy" do
      copy = original.dup
      copy.advance(99)
      expect(copy.inspect).to eq("#<WindowMachines::Watermark value=99>")
      expect(original.inspect).to eq("#<WindowMachines::Watermark value=22>")
    end
  end

  describe WindowMachines::Sessions do
    let(:original) { sessions_with(5, 10, 15, 30, watermark: 12) }

    describe "#dup" do
      it "copies gap, watermark and sessions into an unfrozen tracker" do
        copy = original.dup
        expect(copy).not_to be(original)
        expect(copy).not_to be_frozen
        expect(observable_state(copy)).to eq(observable_state(original))
      end

      it "is independent afterwards, both ways" do
        copy = original.dup
        before = observable_state(original)

        copy.insert(20)
        expect(copy.insert(25)).to eq([10, 30])
        copy.insert(100)
        copy.advance_watermark(50)
        expect(copy.take_closed).to eq([10, 30])
        expect(observable_state(original)).to eq(before)

        original.insert(16)
        expect(original.to_a).to eq([[10, 16], [30, 30]])
        expect(copy.to_a).to eq([[100, 100]])
        expect(copy.watermark).to eq(50)
      end

      it "copies a full tracker, capacity included" do
        copy = full_sessions.dup
        expect(copy.size).to eq(32)
        expect { copy.insert(1_000) }.to raise_error(WindowMachines::CapacityError)
      end

      it "unfreezes: a dup of a frozen tracker can be changed" do
        copy = original.freeze.dup
        expect(copy).not_to be_frozen
        expect(copy.insert(40)).to eq([40, 40])
        expect(original.size).to eq(2)
      end
    end

    describe "#clone" do
      it "copies all state and is independent" do
        copy = original.clone
        expect(observable_state(copy)).to eq(observable_state(original))
        expect(copy).not_to be_frozen
        copy.insert(40)
        expect(original.to_a).to eq([[10, 15], [30, 30]])
      end

      it "keeps the frozen state" do
        copy = original.freeze.clone
        expect(copy).to be_frozen
        expect(observable_state(copy)).to eq(observable_state(original))
        expect_frozen_error(copy) { copy.insert(40) }
      end
    end

    describe "#freeze" do
      before { original.freeze }

      it "makes insert, advance_watermark and take_closed raise FrozenError" do
        before = observable_state(original)
        expect_frozen_error(original) { original.insert(40) }
        expect_frozen_error(original) { original.insert(12) }
        expect_frozen_error(original) { original.advance_watermark(40) }
        expect_frozen_error(original) { original.advance_watermark(0) }
        expect_frozen_error(original) { original.take_closed }
        expect(observable_state(original)).to eq(before)
      end

      it "raises FrozenError from take_closed even when a session is closable" do
        tracker = sessions_with(5, 10, watermark: 20).freeze
        expect_frozen_error(tracker) { tracker.take_closed }
        expect(tracker.to_a).to eq([[10, 10]])
      end

      it "leaves the readers working" do
        expect(original.gap).to eq(5)
        expect(original.watermark).to eq(12)
        expect(original.size).to eq(2)
        expect(original.to_a).to eq([[10, 15], [30, 30]])
        expect(original.inspect).to eq("#<WindowMachines::Sessions gap=5 watermark=12 sessions=[[10, 15], [30, 30]]>")
      end

      it "still hands out fresh arrays from to_a" do
        list = original.to_a
        list.first[0] = 0
        expect(original.to_a).to eq([[10, 15], [30, 30]])
        expect(list).not_to be_frozen
      end
    end

    it "inspects the state of a copy" do
      copy = original.dup
      copy.advance_watermark(25)
      copy.take_closed
      expect(copy.inspect).to eq("#<WindowMachines::Sessions gap=5 watermark=25 sessions=[[30, 30]]>")
    end
  end
end
