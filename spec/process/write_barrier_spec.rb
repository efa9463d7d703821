# frozen_string_literal: true

# A write-barrier-protected tracker must tell the GC about every key it
# stores. One that skips the barrier works until a minor GC, which marks old
# objects only when a barrier remembered them: a key that only an old
# tracker references is then freed, and its slot reused. The scenario runs in
# a child Ruby (spec/fixtures/keys_write_barrier_scenario.rb), where minor
# GCs are cheap and a missed barrier that corrupts the heap, or that
# GC.verify_internal_consistency reports, fails this example without taking
# the suite down.
RSpec.describe "WindowMachines::KeyedSessions and the write barrier" do
  include WindowMachinesSpec::FixtureProcess

  def keys(range) = range.flat_map { |n| [["fresh", n.to_s], "fresh-#{n}"] }

  # Keys in closing order: key n's events are at n * 10 (Array) and
  # n * 10 + 1 (String).
  def intact(range) = { keys: keys(range), key_count: range.size * 2, lost: [] }

  before(:context) { @results = run_fixture("keys_write_barrier_scenario.rb") }

  {
    insert: ["inserted one by one", 0...2_000],
    insert_under_stress: ["inserted while GC.stress runs a minor GC at every allocation", 0...400],
    dup: ["inserted into a promoted dup of an old tracker", 0...2_500],
    marshal_load_into_old: ["restored by marshal_load into an old tracker", 0...2_000],
    from_h_under_stress: ["restored by from_h under minor GC stress", 0...300],
    marshal_under_stress: ["restored by Marshal.load under minor GC stress", 0...300],
    dup_under_stress: ["copied by dup of an old tracker under minor GC stress", 0...300],
    after_full_gc: ["inserted one by one, after a full GC too", 0...2_000]
  }.each do |scenario, (how, range)|
    it "keeps every key #{how}" do
      result = @results.fetch(scenario)
      expect(result[:lost]).to eq([]), "lost #{result[:lost].size} keys, e.g. #{result[:lost].first(3)}"
      expect(result).to eq(intact(range)), "keys differ, e.g. #{(result[:keys] - keys(range)).first(3)}"
    end
  end

  it "stores immediates (Integer, Float, Symbol, nil, true, false keys) into an old tracker" do
    immediates = [1, -7, 2**40, 2.5, -0.0, :symbol, nil, true, false]
    expect(@results.fetch(:immediate_keys)).to eq(keys: immediates, key_count: immediates.size, lost: [])
  end
end
