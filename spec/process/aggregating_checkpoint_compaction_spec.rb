# frozen_string_literal: true

# A checkpoint is built from objects the tracker holds natively, and a copy
# or a restore holds them again from a second tracker: each step allocates,
# so under GC.stress with auto-compaction any object kept only in Rust
# memory for a moment is moved or freed under it. The fixture
# (spec/fixtures/aggregating_checkpoint_compaction.rb) runs in a child Ruby
# so that a [BUG] fails this file rather than the suite.
RSpec.describe "Aggregating checkpoints and copies under compaction" do
  include WindowMachinesSpec::FixtureProcess

  before(:context) { @results = run_fixture("aggregating_checkpoint_compaction.rb") }

  %i[tumbling hopping sessions].each do |kind|
    %i[marshal dup from_h original].each do |copy|
      it "#{kind}: the #{copy} copy hands over what a tracker fed without stress does" do
        expect(@results.fetch(kind).fetch(copy)).to be(true)
      end
    end

    it "#{kind}: built while an aggregator's respond_to? and a name's hash compact the heap, " \
       "hands over what one built without does" do
      expect(@results.fetch(:construction).fetch(kind)).to be(true)
    end
  end
end
