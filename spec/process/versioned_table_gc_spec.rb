# frozen_string_literal: true

# A VersionedTable holds keys and values natively; once put returns, it is
# the only thing that references them. The scenarios run in a child Ruby
# (spec/fixtures/versioned_table_gc_scenario.rb, each in its own fork) so
# that a table that loses or mixes up an object while the GC moves or frees
# it ([BUG], a wrong answer, an unexpected error) fails one example rather
# than the suite: put (new keys, unfrozen String keys, fresh String, Array
# and Hash values), delete, get, version, history, each, dup, clone,
# to_h/from_h, a Marshal round trip and an on_late callable that puts more,
# compared afterwards with a plain-Ruby model fed keys and values rebuilt
# from scratch.
RSpec.describe "WindowMachines::VersionedTable holding Ruby objects under GC" do
  include WindowMachinesSpec::FixtureProcess

  before(:context) { @results = run_fixture("versioned_table_gc_scenario.rb") }

  def expect_intact(scenario)
    result = @results.fetch(scenario)
    expect(result).not_to include(:error), "#{scenario}: #{result[:error]}\n#{Array(result[:backtrace]).join("\n")}"
    expect(result[:wrong]).to eq([]), lambda {
      label, got, want = result[:wrong].first
      "#{scenario}: #{result[:wrong].size} parts differ (#{result[:wrong].map(&:first).join(', ')}); " \
        "#{label}: got #{got}\nexpected #{want}"
    }
    expect(result[:compared]).to be > 20
    expect(result[:frozen_keys]).to be(true), "#{scenario}: a String key is held unfrozen"
  end

  it "answers and copies exactly as the model under GC.stress with auto-compaction, and after GC.compact" do
    expect_intact(:stress)
  end

  it "answers and copies exactly as the model around GC.verify_compaction_references(toward: :empty), " \
     "and under GC.stress with auto-compaction between" do
    expect_intact(:verify)
  end

  it "keeps fresh objects put into a table in the old generation across minor GCs" do
    expect_intact(:old)
  end
end
