# frozen_string_literal: true

require "objspace"

RSpec.describe "WindowMachines::KeyedSessions and the garbage collector" do
  # Keys that exist only inside the tracker once the caller lets go.
  def fresh_key(n) = ["partner", n.to_s * 3]

  include WindowMachinesSpec::FixtureProcess

  it "keeps keys it holds alive and intact under GC.stress" do
    results = run_fixture("keyed_gc_stress_scenario.rb")
    expect(results[:regrown]).to eq(Array.new(40) { |n| [n * 100, (n * 100) + 1] })
    expect(results[:taken].size).to eq(20)
    expect(results[:taken].first).to eq([fresh_key(0), 0, 1])
    expect(results[:held].map(&:first)).to eq(Array.new(20) { |n| fresh_key(n + 20) } + ["unfrozen"])
    expect(results[:checkpoint]).to eq(results[:held])
    expect(results[:key_count]).to eq(21)
  end

  it "finds its keys again after GC.compact moves objects around" do
    keyed = WindowMachines::KeyedSessions.new(5)
    200.times { |n| keyed.insert(fresh_key(n), n * 100) }
    200.times { |n| keyed.insert("string-#{n}", n * 100) }
    GC.compact
    200.times { |n| expect(keyed.insert(fresh_key(n), (n * 100) + 2)).to eq([n * 100, (n * 100) + 2]) }
    GC.compact
    keyed.advance_watermark(10_000)
    taken = keyed.each_closed.to_a
    expect(taken.first(2)).to eq([["string-0", 0, 0], [fresh_key(0), 0, 2]])
    expect(taken.map(&:first)).to include(fresh_key(99), "string-99")
  end

  it "releases a key's memory after its last session is taken" do
    keyed = WindowMachines::KeyedSessions.new(5)
    2_000.times { |n| keyed.insert("key-#{n}", n) }
    held = ObjectSpace.memsize_of(keyed)
    expect(keyed.key_count).to eq(2_000)
    keyed.advance_watermark(2_010)
    keyed.each_closed { nil }
    expect(keyed.key_count).to eq(0)
    expect(keyed.size).to eq(0)
    expect(ObjectSpace.memsize_of(keyed)).to be < held
    # Released slots are reused: holding as many keys again takes about the
    # same room (plus the list of released slots it kept).
    2_000.times { |n| keyed.insert("again-#{n}", 3_000 + n) }
    expect(ObjectSpace.memsize_of(keyed)).to be < held * 1.1
  end

  # What the tracker marks, asked of its mark function: exact, where a
  # GC.start-then-_id2ref check depends on what the conservative stack scan
  # happens to find.
  it "stops marking a released key" do
    keyed = WindowMachines::KeyedSessions.new(5)
    key = Object.new
    keyed.insert(key, 1)
    expect(ObjectSpace.reachable_objects_from(keyed)).to include(key)
    keyed.advance_watermark(10)
    keyed.take_closed
    expect(ObjectSpace.reachable_objects_from(keyed)).not_to include(key)
  end
end
