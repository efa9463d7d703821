# frozen_string_literal: true

# The batch calls store many new Ruby objects in one call: keys (String
# copies, Arrays) for KeyedSessions#insert_all, keys and Collect's String
# values for TumblingWindows#add_all, referenced by the tracker alone once
# the call returns, while the GC may run (and move objects) at any
# allocation in the middle of the batch: a block's merge Arrays, a String
# key's frozen copy, a growing accumulator. The scenarios run in a child
# Ruby (spec/fixtures/batch_gc_scenario.rb, each in its own fork) under
# GC.stress with auto-compaction and GC.verify_compaction_references, so
# that a lost or mixed-up object ([BUG], a wrong answer) fails one example
# rather than the suite; what the trackers held, yielded and handed over is
# compared with a plain-Ruby model fed keys and values rebuilt from scratch.
RSpec.describe "Batch calls holding Ruby objects under GC" do
  include WindowMachinesSpec::FixtureProcess

  before(:context) { @results = run_fixture("batch_gc_scenario.rb") }

  def result_of(scenario)
    result = @results.fetch(scenario)
    expect(result).not_to include(:error), "#{scenario}: #{result[:error]}\n#{Array(result[:backtrace]).join("\n")}"
    expect(result[:verified]).to eq(%i[verified verified]), "#{scenario}: verify_compaction_references did not run"
    expect(result[:frozen_keys]).to be(true), "#{scenario}: a String key is held unfrozen"
    result
  end

  # `got` and `want` are Arrays; names the first element that differs.
  def expect_same(got, want, label)
    expect(got).to eq(want), lambda {
      index = (0...[got.size, want.size].max).find { |i| got[i] != want[i] }
      "#{label}: #{got.size} items, #{want.size} expected; first difference at #{index}: " \
        "#{got[index].inspect}, expected #{want[index].inspect}"
    }
  end

  it "keeps the new String and Array keys of KeyedSessions#insert_all intact through GC.stress " \
     "with auto-compaction and verify_compaction_references(toward: :empty)" do
    result = result_of(:keyed)
    expect(result[:applied]).to eq([60, 60, 60, 60])
    expect(result[:expected].size).to eq(40)
    expect_same(result[:held], result[:expected], "sessions held")
    expect_same(result[:lookups], result[:expected_lookups], "sessions_for with rebuilt keys")
    expect_same(result[:taken_between], result[:expected_taken_between], "sessions taken between the halves")
    expect(result[:taken_between]).to include([:key_count, 0])
    expect_same(result[:taken], result[:expected], "sessions taken at the end")
    expect(result[:key_count]).to eq(0)
  end

  it "keeps the new keys of KeyedSessions#insert_all without a block intact through GC.stress " \
     "with auto-compaction and verify_compaction_references(toward: :empty)" do
    result = result_of(:keyed_runs)
    expect(result[:applied]).to eq([60, 60, 60, 60])
    expect_same(result[:held], result[:expected], "sessions held")
    expect_same(result[:lookups], result[:expected_lookups], "sessions_for with rebuilt keys")
    expect_same(result[:taken_between], result[:expected_taken_between], "sessions taken between the halves")
    expect_same(result[:taken], result[:expected], "sessions taken at the end")
    expect(result[:merges]).to be_empty
    expect(result[:key_count]).to eq(0)
  end

  it "yields the keys given to KeyedSessions#insert_all intact, with each merge, under GC.stress" do
    result = result_of(:keyed)
    expect(result[:expected_merges].size).to eq(160)
    expect_same(result[:merges], result[:expected_merges], "merges yielded")
  end

  it "keeps the new keys and Collect's String values of TumblingWindows#add_all intact through GC.stress " \
     "with auto-compaction and verify_compaction_references(toward: :empty)" do
    result = result_of(:windows)
    expect(result[:applied]).to eq([60, 60, 60, 60])
    expect(result[:applied]).to eq(result[:expected_applied])
    expect(result[:expected].size).to be > 40
    expect(result[:expected].map(&:last)).to include(satisfy { |values| values.size > 3 })
    expect_same(result[:handed], result[:expected], "windows handed over")
    expect_same(result[:current], result[:expected_current], "current with rebuilt keys")
    expect(result[:current].map(&:last)).to all(be_any)
    expect([result[:late_count], result[:key_count]]).to eq([result[:expected_late_count], 0])
  end
end
