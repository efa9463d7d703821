# frozen_string_literal: true

# TumblingWindows, HoppingWindows and SessionWindows hold Ruby objects in
# native memory: keys, aggregators and accumulators (Collect's Strings,
# First/Last's Arrays, Sum's Bignums, Min/Max's Strings, a custom
# aggregator's Array). Once add returns, the tracker is the only thing that
# references them. The scenarios run in a child Ruby
# (spec/fixtures/aggregating_gc_scenario.rb, each kind of tracker in its own
# fork) so that a tracker that loses or mixes up an object under GC
# compaction or a minor GC ([BUG], a wrong result, an unexpected error)
# fails one example rather than the suite. Every window the tracker handed
# over (each_closed and take_closed along the way, flush at the end) is
# compared with a plain-Ruby model of the same events.
RSpec.describe "Aggregating windows holding Ruby objects under GC" do
  include WindowMachinesSpec::FixtureProcess

  before(:context) { @results = run_fixture("aggregating_gc_scenario.rb") }

  def expect_intact(result, label)
    expect(result).not_to include(:error), "#{label}: #{result[:error]}"
    got = result.fetch(:got)
    expected = result.fetch(:expected)
    wrong = expected.reject { |id, value| got[id] == value }
    expect(wrong).to be_empty, lambda {
      id, value = wrong.first
      "#{label}: #{wrong.size} of #{expected.size} windows differ, e.g. #{id.inspect}: #{got[id].inspect}, expected #{value.inspect}"
    }
    expect(got.keys - expected.keys).to eq([]), "#{label}: windows nobody expected"
    expect(result[:handed_count]).to eq(expected.size), "#{label}: windows handed over more than once"
    expect(result[:refused]).to eq([]), "#{label}: add returned false"
    expect(result[:current_wrong]).to eq([]), "#{label}: current(key) differs from the model"
  end

  %i[tumbling hopping sessions].each do |kind|
    describe kind.to_s do
      it "keeps accumulators, keys and aggregators through GC.stress with auto-compaction, " \
         "GC.compact and verify_compaction_references" do
        result = @results.fetch(:compaction).fetch(kind)
        expect_intact(result, "compaction")
        expect(result[:verify]).to eq(:verified).or eq(:unsupported)
      end

      it "keeps fresh objects stored into an old tracker across minor GCs" do
        expect_intact(@results.fetch(:old).fetch(kind), "old tracker")
      end

      it "keeps everything in a promoted dup of an old tracker fed more fresh objects" do
        expect_intact(@results.fetch(:dup).fetch(kind), "dup")
      end

      it "hands windows over intact with take_closed, each_closed and flush under GC.stress" do
        result = @results.fetch(:handover).fetch(kind)
        expect_intact(result, "handover")
        expect(result[:sizes]).to include(after_flush: 0)
      end

      it "keeps fresh keys of a tracker that only counts across minor GCs, GC.stress and compaction" do
        expect_intact(@results.fetch(:counts_only).fetch(kind), "counts only")
      end
    end
  end
end
