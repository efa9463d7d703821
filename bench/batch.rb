# frozen_string_literal: true

# TumblingWindows#add_all with Aggregate::Count against an add per event, in
# one process. The stream (bench/support/busy_stream.rb): EVENTS events
# (default 1,000,000) over an 8-hour day from KEYS String keys (default
# 10,000) drawn at random, each arriving up to 5 minutes late. Windows of one
# minute with 5 minutes of grace (WindowRuns::DirectTumbling: the windows
# bench/windows.rb counts in), so a window sees about 2,100 events from about
# 1,900 keys. The watermark is the tracker's stream time (the newest event
# less the grace, moved by every add), so nothing is late; the windows it
# closes are handed over through each_closed once every
# KeyedRuns::ADVANCE_EVERY (1,000) events, about every 29 s of stream time,
# and flushed at the end: KeyedRuns.run adds the events of each stretch one
# by one, KeyedRuns.run_batches with one add_all on the stretch, cut
# beforehand as a consumer receives it. The target is on the adds; the
# hand-overs are the same work in both. Best of ROUNDS alternating runs each;
# then both once more keeping every window handed over, which must be
# identical, in the same order. Run: bundle exec rake bench:batch.

require_relative "support/window_runs"
require_relative "support/busy_stream"

EVENTS = Integer(ENV.fetch("EVENTS", 1_000_000))
KEYS = Integer(ENV.fetch("KEYS", 10_000))
ROUNDS = 5
TARGET = 2.0

def verdict(met) = met ? "met" : "NOT met"

def report(label, timing)
  puts format("  %-34s %5.0f ns/add %5.0f ns/handover %6.2f s end to end (%d handed over)",
              label, timing.ns_per_insert, timing.ns_per_handover, timing.total, timing.handed_over)
end

def single(stream) = KeyedRuns.run(stream, WindowRuns::DirectTumbling.new(collect: false))
def batches(slices) = KeyedRuns.run_batches(slices, WindowRuns::DirectTumbling.new(collect: false))

stream = BusyStream.generate(EVENTS, KEYS)
slices = KeyedRuns.slices(stream)
warmup = BusyStream.generate(EVENTS / 10, KEYS, seed: 1)
single(warmup)
batches(KeyedRuns.slices(warmup))

puts RUBY_DESCRIPTION
puts "TumblingWindows, 1-minute windows, grace #{WindowRuns::GRACE} s, Aggregate::Count; #{EVENTS} events from " \
     "#{KEYS} String keys over #{InvoiceStream::DAY / 3600} h, up to #{InvoiceStream::LATE} s late; " \
     "each_closed every #{KeyedRuns::ADVANCE_EVERY} events, add_all on each #{KeyedRuns::ADVANCE_EVERY} " \
     "(best of #{ROUNDS} alternating runs each; all listed)"

runs = KeyedRuns.alternating(ROUNDS, -> { single(stream) }, -> { batches(slices) })
GC.start
idle = KeyedRuns.run(stream, KeyedRuns::Idle.new)
single_best, batch_best = runs.transpose.map { |timings| timings.min_by(&:insert_seconds) }

GC.start
single_check = WindowRuns::DirectTumbling.new(collect: true)
KeyedRuns.run(stream, single_check)
batch_check = WindowRuns::DirectTumbling.new(collect: true)
KeyedRuns.run_batches(slices, batch_check)
counted = batch_check.results.sum { |_key, _start, _finish, count| count }
identical = single_check.results == batch_check.results && counted == EVENTS &&
            single_check.late_count.zero? && batch_check.late_count.zero? &&
            runs.flatten.all? { |timing| timing.handed_over == batch_check.results.size }

runs.each_with_index do |(one, all), round|
  report("add, round #{round + 1}", one)
  report("add_all, round #{round + 1}", all)
end
puts format("  the loop alone, calling a Ruby method that does nothing: %.0f ns/event", idle.ns_per_insert)
puts format("  windows handed over: %d by each, %d events counted, late: %d and %d; in the same order: %s",
            batch_check.results.size, counted, single_check.late_count, batch_check.late_count,
            identical ? "identical" : "DIFFER")
puts
speedup = single_best.insert_seconds / batch_best.insert_seconds
puts format("add_all at %d keys: %.2fx faster than add per event (target >= %.1fx: %s)%s", KEYS, speedup, TARGET,
            verdict(identical && speedup >= TARGET), identical ? "" : ", results DIFFER")
puts format("  end to end, hand-overs included: %.2fx", single_best.total / batch_best.total)
puts format("  (add per event less the loop alone: %.0f ns; add_all per event: %.0f ns)",
            single_best.ns_per_insert - idle.ns_per_insert, batch_best.ns_per_insert)
