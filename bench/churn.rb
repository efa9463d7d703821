# frozen_string_literal: true

# Whether a KeyedSessions tracker's cost and memory depend only on what it
# holds now, never on its history: keys released and held again CYCLES times
# (default 1,000,000), timed in chunks, with memsize_of read between them;
# then COLLIDING keys (default 4,000) sharing one hash value, in a tracker
# and in a Hash. Ratios are measured in this process; nothing is asserted.
# Run: bundle exec rake bench:churn, or CYCLES=5000 COLLIDING=500 ruby -Ilib bench/churn.rb.
# BUDGET (seconds, default 60) stops a workload early if the tracker slows
# down so much that it would never finish; the report then says so.

require_relative "support/churn_runs"

module Churn
  CYCLES = Integer(ENV.fetch("CYCLES", 1_000_000))
  COLLIDING = Integer(ENV.fetch("COLLIDING", 4_000))
  BUDGET = Float(ENV.fetch("BUDGET", 60))
  COST_TARGET = 1.2
  MEMSIZE_TARGET = 1.1
  COLLISION_TARGET = 2.0
  WORKLOADS = { "(a)" => ChurnRuns::OneKey, "(b)" => ChurnRuns::Partners, "(c)" => ChurnRuns::Steady }.freeze

  module_function

  def verdict(ratio, target) = format("%.2fx (target <= %.1fx: %s)", ratio, target, ratio <= target ? "met" : "NOT met")

  def report_workload(label, workload_class)
    run = ChurnRuns.measure(workload_class, CYCLES, deadline: ChurnRuns.now + BUDGET)
    puts "#{label} #{workload_class::DESCRIPTION}"
    if run.stopped?
      puts format("    STOPPED by the %.0f s budget after %d of %d cycles; the figures cover those only",
                  BUDGET, run.done, run.planned)
    end
    tenths = Array.new(10) { |n| format("%.0f", run.ns_per_cycle(n / 10.0, (n + 1) / 10.0)) }
    puts "    ns/cycle by tenth of the cycles: #{tenths.join(' ')}"
    first = run.ns_per_cycle(0.0, 0.1)
    middle = run.ns_per_cycle(0.45, 0.55)
    last = run.ns_per_cycle(0.9, 1.0)
    puts format("    ns/cycle: first 10%% %.0f, middle 10%% %.0f, last 10%% %.0f; last/first %s",
                first, middle, last, verdict(last / first, COST_TARGET))
    puts format("    memsize_of after cycle 1: %d B, half way: %d B, at the end: %d B; end/start %s",
                run.memsize_start, run.memsize_middle, run.memsize_end,
                verdict(run.memsize_end.to_f / run.memsize_start, MEMSIZE_TARGET))
  end

  def report_collisions
    result = ChurnRuns.collisions(COLLIDING)
    ns = ->(seconds) { seconds * 1e9 / result.keys }
    puts "(d) #{result.keys} keys with one hash value for all (eql? compares an id), the same objects in each"
    puts format("    %-44s %12s %12s", "", "Hash", "KeyedSessions")
    { "store each key anew, ns/op" => %i[hash_new tracker_new],
      "store each key again (found), ns/op" => %i[hash_again tracker_again] }.each do |label, (hash, tracker)|
      hash_ns = ns.call(result[hash])
      tracker_ns = ns.call(result[tracker])
      puts format("    %-44s %12.0f %12.0f   KeyedSessions/Hash %s",
                  label, hash_ns, tracker_ns, verdict(tracker_ns / hash_ns, COLLISION_TARGET))
    end
  end
end

abort "CYCLES must be at least #{10 * ChurnRuns::CHUNK}" if Churn::CYCLES < 10 * ChurnRuns::CHUNK
abort "COLLIDING must be positive" unless Churn::COLLIDING.positive?

puts RUBY_DESCRIPTION
puts "#{Churn::CYCLES} cycles per workload, timed #{ChurnRuns::CHUNK} at a time; " \
     "every cycle ends with the same keys held, so only history could make later cycles differ"
Churn::WORKLOADS.each { |label, workload_class| Churn.report_workload(label, workload_class) }
Churn.report_collisions
