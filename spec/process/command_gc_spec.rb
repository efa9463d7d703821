# frozen_string_literal: true

# The command's job run under GC.stress after a compaction that moved what
# it could, and apart under GC.stress while a signal handler compacts and
# allocates in the middle of the run, each followed by
# GC.verify_compaction_references
# (spec/fixtures/command_gc_scenario.rb): the output is the one a quiet run
# writes. Not under GC.stress with auto-compaction on: after an earlier
# forked run, that crashes Ruby 3.1.2 inside its own check of the VM stack
# for moved objects, which reads one slot past the stack's top (fixed in
# ruby/ruby#7081), while the job converts its options; on some days in every
# run, signals or not.
RSpec.describe "The window_machines command's job under GC" do
  include WindowMachinesSpec::FixtureProcess

  it "writes the same output under GC.stress after a compaction, and under GC.stress with a compacting signal handler" do
    results = run_fixture("command_gc_scenario.rb")
    quiet, stressed, signalled = results.values_at(:quiet, :stressed, :signalled)
    [quiet, stressed, signalled].each do |result|
      expect(result).not_to include(:error), "#{result[:error]}\n#{Array(result[:backtrace]).join("\n")}"
      expect(result[:verified]).to be(true)
      expect(result[:outcome]).to include(events: 20_000, late: 0, bad: 0)
    end
    expect(signalled[:handled]).to be_positive
    expect(quiet[:output].lines.size).to eq(37)
    expect(stressed[:output]).to eq(quiet[:output])
    expect(signalled[:output]).to eq(quiet[:output])
  end
end
