# frozen_string_literal: true

RSpec.describe "WindowMachines::Sessions as an Enumerable" do
  subject(:sessions) { sessions_with(5, 30, 10, 12, 50) }

  it "is Enumerable" do
    expect(WindowMachines::Sessions).to include(Enumerable)
  end

  it "yields [first, last] of each held session, oldest first, and returns itself" do
    yielded = []
    expect(sessions.each { |first, last| yielded << [first, last] }).to be(sessions)
    expect(yielded).to eq([[10, 12], [30, 30], [50, 50]])
  end

  it "returns a sized Enumerator without a block" do
    enumerator = sessions.each
    expect(enumerator).to be_an(Enumerator)
    expect(enumerator.size).to eq(3)
    expect(enumerator.to_a).to eq([[10, 12], [30, 30], [50, 50]])
  end

  it "gives Enumerable's methods" do
    expect(sessions.map { |first, last| last - first }).to eq([2, 0, 0])
    expect(sessions.count).to eq(3)
    expect(sessions.min_by(&:last)).to eq([10, 12])
  end

  it "iterates over the sessions held when it started, even if the block changes them" do
    yielded = []
    sessions.each do |span|
      yielded << span
      sessions.insert(14)
      sessions.insert(100)
    end
    expect(yielded).to eq([[10, 12], [30, 30], [50, 50]])
    expect(sessions.to_a).to eq([[10, 14], [30, 30], [50, 50], [100, 100]])
  end

  it "yields nothing for an empty tracker" do
    expect(WindowMachines::Sessions.new(1).to_a).to eq([])
    expect(WindowMachines::Sessions.new(1).each.size).to eq(0)
  end

  it "works on a frozen tracker" do
    expect(sessions.freeze.to_a).to eq([[10, 12], [30, 30], [50, 50]])
    expect(sessions.each.to_a.size).to eq(3)
  end
end
