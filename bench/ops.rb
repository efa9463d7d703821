# frozen_string_literal: true

# Times every operation on Integer#divmod (the floor), the gem and a plain-Ruby
# implementation of the same API, in one process, and prints a Markdown table
# of nanoseconds per event and their ratios. Run: bundle exec rake bench.

require "benchmark/ips"
require "window_machines"
require_relative "../spec/support/plain_ruby"
require_relative "support/result"
require_relative "support/table"
require_relative "support/workloads"

TIME = 2
WARMUP = 0.5

def measure(workload)
  jobs = { divmod: workload.floor, gem: workload.for(WindowMachines), plain: workload.for(PlainRuby) }
  GC.start
  report = Benchmark.ips(time: TIME, warmup: WARMUP, quiet: true) do |bench|
    jobs.each { |label, job| bench.report(label.to_s, &job) }
  end
  ns = report.entries.to_h { |entry| [entry.label.to_sym, 1e9 / entry.ips / workload.events] }
  Result.new(workload, **ns)
end

workloads = Workloads.all
workloads.each(&:check!)
results = workloads.map do |workload|
  warn "measuring #{workload.name}"
  measure(workload)
end

puts RUBY_DESCRIPTION
puts "benchmark-ips #{Benchmark::IPS::VERSION}: #{TIME} s per report after #{WARMUP} s of warmup"
puts "ns per event: each iteration maps over a batch of pre-generated events " \
     "(#{workloads.map(&:events).uniq.join(' or ')}), the floor with Integer#divmod in the same loop; " \
     "trackers are made inside the timed loop, once per batch (bridging: a dup of 32 sessions)"
puts
puts Table.render(results)
