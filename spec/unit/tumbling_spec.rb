# frozen_string_literal: true

RSpec.describe "WindowMachines.tumbling" do
  let(:max) { WindowMachinesSpec::MAX }

  def tumbling(timestamp, size)
    WindowMachines.tumbling(timestamp, size)
  end

  it "returns [start, end] with start the largest multiple of size at or below the timestamp" do
    expect(tumbling(12, 10)).to eq([10, 20])
    expect(tumbling(7, 3)).to eq([6, 9])
    expect(tumbling(1_000_003, 1_000)).to eq([1_000_000, 1_001_000])
  end

  it "is half-open: the start is inside, the end begins the next window" do
    expect(tumbling(10, 10)).to eq([10, 20])
    expect(tumbling(19, 10)).to eq([10, 20])
    expect(tumbling(20, 10)).to eq([20, 30])
  end

  it "puts 0 in the first window" do
    expect(tumbling(0, 10)).to eq([0, 10])
    expect(tumbling(0, max)).to eq([0, max])
  end

  it "gives every timestamp its own window for size 1" do
    expect(tumbling(0, 1)).to eq([0, 1])
    expect(tumbling(max - 1, 1)).to eq([max - 1, max])
  end

  it "handles timestamps and sizes beyond the Fixnum range" do
    expect(tumbling(2**63 + 5, 2**62)).to eq([2**63, 2**63 + 2**62])
    expect(tumbling(max - 1, max)).to eq([0, max])
  end

  it "returns a window ending exactly at 2**64-1" do
    # 2**64-1 is divisible by 5, so max - 5 starts a window of 5.
    expect(tumbling(max - 1, 5)).to eq([max - 5, max])
  end

  it "raises RangeError when the window would end past 2**64-1" do
    expect_gem_error(WindowMachines::RangeError, /2\*\*64-1/) { tumbling(max, 1) }
    expect_gem_error(WindowMachines::RangeError, /2\*\*64-1/) { tumbling(max, 5) }
    expect_gem_error(WindowMachines::RangeError, /2\*\*64-1/) { tumbling(max, max) }
    expect_gem_error(WindowMachines::RangeError, /2\*\*64-1/) { tumbling(max - 1, 2) }
  end

  it "refuses a zero size with ArgumentError" do
    expect_gem_error(WindowMachines::ArgumentError, /\bsize\b/) { tumbling(12, 0) }
    expect_gem_error(WindowMachines::ArgumentError, /\bsize\b/) { tumbling(0, 0) }
  end

  it "returns a fresh array each call" do
    first = tumbling(12, 10)
    first << :mutated
    expect(tumbling(12, 10)).to eq([10, 20])
  end
end
