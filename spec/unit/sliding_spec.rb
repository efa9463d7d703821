# frozen_string_literal: true

RSpec.describe "WindowMachines.sliding" do
  let(:max) { WindowMachinesSpec::MAX }

  def sliding(timestamp, width, slide)
    WindowMachines.sliding(timestamp, width, slide)
  end

  it "returns every window holding the timestamp, newest first" do
    expect(sliding(12, 10, 5)).to eq([[10, 20], [5, 15]])
    expect(sliding(21, 7, 3)).to eq([[21, 28], [18, 25], [15, 22]])
  end

  it "handles a width that is not a multiple of the slide" do
    expect(sliding(20, 7, 3)).to eq([[18, 25], [15, 22]])
  end

  it "is half-open: a window does not hold its own end" do
    expect(sliding(15, 10, 5)).to eq([[15, 25], [10, 20]])
    expect(sliding(14, 10, 5)).to eq([[10, 20], [5, 15]])
  end

  it "is the tumbling window when width equals slide" do
    expect(sliding(12, 10, 10)).to eq([[10, 20]])
  end

  describe "windows that would start below 0" do
    it "do not exist" do
      expect(sliding(0, 10, 5)).to eq([[0, 10]])
      expect(sliding(7, 10, 5)).to eq([[5, 15], [0, 10]])
      expect(sliding(3, 32, 1)).to eq([[3, 35], [2, 34], [1, 33], [0, 32]])
    end
  end

  describe "holes (slide wider than width)" do
    it "gives an empty list to a timestamp in a hole" do
      expect(sliding(12, 1, 5)).to eq([])
      expect(sliding(14, 4, 10)).to eq([])
    end

    it "still finds the window right at the start of a slide" do
      expect(sliding(10, 1, 5)).to eq([[10, 11]])
      expect(sliding(13, 4, 10)).to eq([[10, 14]])
    end

    it "returns nothing, so nothing can overflow, for a top timestamp in a hole" do
      expect(sliding(max, 1, (max - 1) / 2)).to eq([])
    end
  end

  describe "the cap of 32 windows per timestamp" do
    it "allows a ratio of exactly 32" do
      expect(sliding(1_000, 32, 1).size).to eq(32)
      expect(sliding(1_000, 320, 10).size).to eq(32)
      expect(sliding(1_000, 311, 10).size).to eq(32)
    end

    it "refuses a ratio above 32 with CapacityError" do
      expect_gem_error(WindowMachines::CapacityError, /33/) { sliding(1_000, 33, 1) }
      expect_gem_error(WindowMachines::CapacityError, /33/) { sliding(1_000, 321, 10) }
      expect_gem_error(WindowMachines::CapacityError, /32/) { sliding(1_000, max, 1) }
    end

    it "refuses a ratio above 32 even at 0, where only one window would exist" do
      expect_gem_error(WindowMachines::CapacityError, /33/) { sliding(0, 33, 1) }
      expect(sliding(0, 32, 1)).to eq([[0, 32]])
    end
  end

  describe "the top of the domain" do
    it "returns windows ending exactly at 2**64-1" do
      expect(sliding(max - 1, 1, 1)).to eq([[max - 1, max]])
      expect(sliding(max - 1, max, max)).to eq([[0, max]])
      expect(sliding(max - 2, 2, 1)).to eq([[max - 2, max], [max - 3, max - 1]])
    end

    it "raises RangeError when any returned window would end past 2**64-1" do
      expect_gem_error(WindowMachines::RangeError, /2\*\*64-1/) { sliding(max, 2, 1) }
      expect_gem_error(WindowMachines::RangeError, /2\*\*64-1/) { sliding(max, 1, 1) }
      expect_gem_error(WindowMachines::RangeError, /2\*\*64-1/) { sliding(max - 1, 2, 1) }
    end

    it "raises the plain RangeError class for overflow, not CapacityError" do
      expect { sliding(max, 2, 1) }.to raise_error(WindowMachines::RangeError) { |error|
        expect(error).not_to be_a(WindowMachines::CapacityError)
      }
    end
  end

  describe "zero lengths" do
    it "refuses a zero width" do
      expect_gem_error(WindowMachines::ArgumentError, /\bwidth\b/) { sliding(12, 0, 5) }
    end

    it "refuses a zero slide" do
      expect_gem_error(WindowMachines::ArgumentError, /\bslide\b/) { sliding(12, 5, 0) }
    end

    it "names the width first when both are zero" do
      expect_gem_error(WindowMachines::ArgumentError, /\bwidth\b/) { sliding(12, 0, 0) }
    end
  end
end
