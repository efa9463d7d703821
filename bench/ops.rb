# frozen_string_literal: true

# Times every operation on Integer#divmod (the floor), the gem and a plain-Ruby
# implementation of the same API, in one process, and prints a Markdown table
# of nanoseconds per event and their ratios; then each batch call against the
# single calls it replaces, over a million events, with a loop that only reads
# the events for scale. Run: bundle exec rake bench.

require "benchmark/ips"
require "window_machines"
require_relative "../spec/support/plain_ruby"
require_relative "support/result"
require_relative "support/table"
require_relative "support/workloads"

TIME = 2
WARMUP = 0.5

# Nanoseconds per event of each job (label => a loop over `events` events).
def ns_per_event(jobs, events)
  GC.start
  report = Benchmark.ips(time: TIME, warmup: WARMUP, quiet: true) do |bench|
    jobs.each { |label, job| bench.report(label.to_s, &job) }
  end
  report.entries.to_h { |entry| [entry.label.to_sym, 1e9 / entry.ips / events] }
end

def measure(workload)
  jobs = { divmod: workload.floor, gem: workload.for(WindowMachines), plain: workload.for(PlainRuby) }
  Result.new(workload, **ns_per_event(jobs, workload.events))
end

def measure_batch(workload)
  jobs = { read: workload.read, single: workload.single, batch: workload.batch }
  BatchResult.new(workload, **ns_per_event(jobs, workload.events))
end

workloads = Workloads.all
workloads.each(&:check!)
batches = Workloads.batches
batches.each(&:check!)
results = workloads.map do |workload|
  warn "measuring #{workload.name}"
  measure(workload)
end
batch_results = batches.map do |workload|
  warn "measuring #{workload.name}"
  measure_batch(workload)
end

puts RUBY_DESCRIPTION
puts "benchmark-ips #{Benchmark::IPS::VERSION}: #{TIME} s per report after #{WARMUP} s of warmup"
puts "ns per event: each iteration maps over a batch of pre-generated events " \
     "(#{workloads.map(&:events).uniq.join(' or ')}), the floor with Integer#divmod in the same loop; " \
     "trackers are made inside the timed loop, once per batch (bridging: a dup of 32 sessions)"
puts
puts Table.render(results)
puts
puts "Batch calls: ns per event, each iteration one batch call over #{Workloads::BATCH_EVENTS} " \
     "pre-generated events, against the single call for each in a Ruby loop, and that loop " \
     "with the call taken out (a fresh tracker per iteration)"
puts
puts Table.render_batches(batch_results)
puts
batch_results.each do |result|
  puts format("%s / single calls: %.2fx (target <= %.2fx: %s)", result.workload.name,
              result.batch_over_single, result.workload.target, result.met? ? "met" : "NOT met")
end
