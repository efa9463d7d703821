# frozen_string_literal: true

RSpec.describe WindowMachines::Watermark do
  let(:max) { WindowMachinesSpec::MAX }

  describe ".new" do
    it "starts with no value" do
      expect(described_class.new.value).to be_nil
    end

    it "may start at a given timestamp" do
      expect(described_class.new(22).value).to eq(22)
      expect(described_class.new(0).value).to eq(0)
      expect(described_class.new(max).value).to eq(max)
    end
  end

  describe "#advance" do
    it "moves forward and says so" do
      watermark = described_class.new
      expect(watermark.advance(22)).to be(true)
      expect(watermark.advance(23)).to be(true)
      expect(watermark.value).to eq(23)
    end

    it "ignores a timestamp below the value and says so" do
      watermark = described_class.new(22)
      expect(watermark.advance(9)).to be(false)
      expect(watermark.value).to eq(22)
    end

    it "does not move for a timestamp equal to the value" do
      watermark = described_class.new(22)
      expect(watermark.advance(22)).to be(false)
      expect(watermark.value).to eq(22)
    end

    it "moves on the first advance, even to 0" do
      watermark = described_class.new
      expect(watermark.advance(0)).to be(true)
      expect(watermark.value).to eq(0)
      expect(watermark.advance(0)).to be(false)
    end

    it "reaches 2**64-1 and stays there" do
      watermark = described_class.new(max - 1)
      expect(watermark.advance(max)).to be(true)
      expect(watermark.advance(max)).to be(false)
      expect(watermark.advance(0)).to be(false)
      expect(watermark.value).to eq(max)
    end
  end

  describe "#closes?" do
    it "is true once finish + lateness is at or below the value" do
      watermark = described_class.new(22)
      expect(watermark.closes?(10, 20, 2)).to be(true)
      expect(watermark.closes?(10, 20, 1)).to be(true)
      expect(watermark.closes?(10, 20, 3)).to be(false)
      expect(watermark.closes?(20, 30, 0)).to be(false)
      expect(watermark.closes?(12, 22, 0)).to be(true)
    end

    it "is false for everything while the value is nil" do
      watermark = described_class.new
      expect(watermark.closes?(0, 0, 0)).to be(false)
    end

    it "accepts an empty window (start == finish)" do
      expect(described_class.new(5).closes?(3, 3, 0)).to be(true)
      expect(described_class.new(5).closes?(6, 6, 0)).to be(false)
    end

    it "refuses a window whose start is after its finish" do
      watermark = described_class.new(100)
      expect_gem_error(WindowMachines::ArgumentError, /\bstart\b.*\bfinish\b/) { watermark.closes?(3, 2, 0) }
      expect_gem_error(WindowMachines::ArgumentError, /\bstart\b/) { watermark.closes?(max, 0, 0) }
    end

    it "refuses a reversed window even before there is a value" do
      expect_gem_error(WindowMachines::ArgumentError, /\bstart\b/) { described_class.new.closes?(3, 2, 0) }
    end

    describe "near 2**64-1, where finish + lateness counts as 2**64-1 when above it" do
      it "decides sums that fit exactly" do
        watermark = described_class.new(max - 1)
        expect(watermark.closes?(0, max - 2, 1)).to be(true)
        expect(watermark.closes?(0, max - 2, 2)).to be(false)
        expect(watermark.closes?(0, max - 1, 0)).to be(true)
        expect(watermark.closes?(0, max, 0)).to be(false)
      end

      it "never closes an overflowing sum below the top" do
        watermark = described_class.new(max - 1)
        expect(watermark.closes?(0, max, 1)).to be(false)
        expect(watermark.closes?(0, max - 1, max)).to be(false)
        expect(watermark.closes?(max, max, max)).to be(false)
      end

      it "closes every window once the value is 2**64-1" do
        watermark = described_class.new(max)
        expect(watermark.closes?(0, max, max)).to be(true)
        expect(watermark.closes?(max, max, 1)).to be(true)
        expect(watermark.closes?(0, 1, max)).to be(true)
      end
    end

    it "works on a frozen watermark" do
      watermark = described_class.new(22).freeze
      expect(watermark.closes?(10, 20, 2)).to be(true)
      expect(watermark.closes?(10, 20, 3)).to be(false)
    end

    it "changes nothing" do
      watermark = described_class.new(22)
      watermark.closes?(10, 20, 2)
      expect(watermark.value).to eq(22)
    end
  end

  describe "#inspect" do
    it "shows the value" do
      expect(described_class.new.inspect).to eq("#<WindowMachines::Watermark value=nil>")
      expect(described_class.new(22).inspect).to eq("#<WindowMachines::Watermark value=22>")
      expect(described_class.new(max).inspect).to eq("#<WindowMachines::Watermark value=#{max}>")
    end
  end
end
