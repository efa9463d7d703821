# frozen_string_literal: true

# KeyedSessions against a Hash of Sessions swept on every watermark advance,
# on the same invoice stream, in one process; and the memory a held session
# costs; then KeyedSessions#insert_all, one call per stretch of
# KeyedRuns::ADVANCE_EVERY events (the stream cut beforehand, as a consumer
# receives it), against an insert per event, with the same hand-overs, best
# of BATCH_ROUNDS alternating runs, checking both hand over the same sessions
# in the same order; then a tracker holding BIG_KEYS keys at once (default
# 10,000,000; 0 skips it). Run: bundle exec rake bench:keyed (PARTNERS=100000
# BIG_KEYS=100000 for a quick run).

require "objspace"
require_relative "support/keyed_runs"

PARTNERS = Integer(ENV.fetch("PARTNERS", 1_000_000))
SMALL = 10_000
BIG_KEYS = Integer(ENV.fetch("BIG_KEYS", 10_000_000))
BATCH_ROUNDS = 3
BATCH_TARGET = 1.3

def rss_bytes
  GC.start
  File.read("/proc/self/status")[/^VmRSS:\s+(\d+) kB/, 1].to_i * 1024
end

def report(label, timing)
  puts format("%-34s %9.0f ns/insert %9.0f ns/handover %8.2f s end to end (%d handed over)",
              label, timing.ns_per_insert, timing.ns_per_handover, timing.total, timing.handed_over)
end

def verdict(met) = met ? "met" : "NOT met"

small_stream = InvoiceStream.generate(SMALL)
stream = InvoiceStream.generate(PARTNERS)
puts "#{RUBY_DESCRIPTION}"
puts "invoice stream: #{PARTNERS} partners x #{InvoiceStream::PER_PARTNER} invoices over " \
     "#{InvoiceStream::DAY / 3600} h, gap #{InvoiceStream::GAP} s, up to #{InvoiceStream::LATE} s late, " \
     "watermark every #{KeyedRuns::ADVANCE_EVERY} events"

small = KeyedRuns.run(small_stream, KeyedRuns::Keyed.new)
keyed = KeyedRuns.run(stream, KeyedRuns::Keyed.new)
swept = KeyedRuns.run(stream, KeyedRuns::HashOfSessions.new)
report("KeyedSessions, #{SMALL} partners", small)
report("KeyedSessions, #{PARTNERS} partners", keyed)
report("Hash of Sessions, #{PARTNERS} partners", swept)

# Every partner holding one session at once; keys already exist.
def hold_all(keys)
  holding = KeyedRuns::Keyed.new
  keys.each_with_index { |key, n| holding.insert(key, n) }
  holding
end

# ns per take_closed emptying a tracker that holds one session per key.
def drain(holding)
  holding.tracker.advance_watermark(2**64 - 1)
  started = KeyedRuns.now
  count = holding.hand_over(2**64 - 1)
  (KeyedRuns.now - started) * 1e9 / count
end

# ns per insert for every held key once, in random order, at `offset` past
# the key's session (held at the key's index): 0 lands inside the session,
# which changes nothing but costs the same lookup; 1 grows it, which moves
# it in the closing order.
def insert_into_held(holding, keys, offset)
  order = keys.each_index.to_a.shuffle(random: Random.new(1))
  tracker = holding.tracker
  started = KeyedRuns.now
  order.each { |n| tracker.insert(keys[n], n + offset) }
  (KeyedRuns.now - started) * 1e9 / keys.size
end

before = rss_bytes
holding = hold_all(stream.keys)
per_session = (rss_bytes - before).to_f / holding.tracker.size
memsize = ObjectSpace.memsize_of(holding.tracker).to_f / holding.tracker.size
drain_large = drain(holding)
drain_small = drain(hold_all(small_stream.keys))
holding = hold_all(stream.keys)
inside_held = insert_into_held(holding, stream.keys, 0)
growing_held = insert_into_held(holding, stream.keys, 1)
holding = nil

# insert_all against insert, both on KeyedRuns::Direct (the gem's methods
# called straight from the loop), alternating which goes first, each run
# after a full GC so that none pays for the trackers before it; the best end
# to end of each. KeyedRuns::Idle's run is the loop's own cost.
slices = KeyedRuns.slices(stream)
runs = KeyedRuns.alternating(BATCH_ROUNDS, -> { KeyedRuns.run(stream, KeyedRuns::Direct.new) },
                             -> { KeyedRuns.run_batches(slices, KeyedRuns::Direct.new) })
single_best, batch_best = runs.transpose.map { |timings| timings.min_by(&:total) }
GC.start
idle = KeyedRuns.run(stream, KeyedRuns::Idle.new)
# Once more, keeping every session handed over, to check they are the same.
GC.start
single_check = KeyedRuns::Direct.new(collect: true)
KeyedRuns.run(stream, single_check)
batch_check = KeyedRuns::Direct.new(collect: true)
KeyedRuns.run_batches(slices, batch_check)
handed_over_checked = single_check.results.size
batch_identical = single_check.results == batch_check.results &&
                  runs.flatten.all? { |timing| timing.handed_over == handed_over_checked }
single_check = batch_check = slices = nil
GC.start

insert_ratio = keyed.ns_per_insert / swept.ns_per_insert
stream_take_ratio = keyed.ns_per_handover / small.ns_per_handover
drain_ratio = drain_large / drain_small
speedup = swept.total / keyed.total
puts format("take_closed emptying a tracker of %d keys: %.0f ns; of %d keys: %.0f ns",
            PARTNERS, drain_large, SMALL, drain_small)
puts
puts format("insert at %d keys / Hash of Sessions insert: %.2fx (target <= 1.2x: %s)",
            PARTNERS, insert_ratio, verdict(insert_ratio <= 1.2))
puts format("take_closed holding %d keys / holding %d keys: %.2fx (target <= 1.5x: %s)",
            PARTNERS, SMALL, drain_ratio, verdict(drain_ratio <= 1.5))
puts format("  (hand-overs in the stream, between inserts: %.2fx; see the README)", stream_take_ratio)
puts format("insert growing a held session, %d keys held: %.0f ns; landing inside one: %.0f ns (%.2fx)",
            PARTNERS, growing_held, inside_held, growing_held / inside_held)
puts format("RSS growth per held session: %.0f bytes (memsize_of says %.0f; target <= 160: %s)",
            per_session, memsize, verdict(per_session <= 160))
puts format("end to end: %.1fx faster than the Hash of Sessions with its sweep (target >= 10x: %s)",
            speedup, verdict(speedup >= 10))

puts
puts "insert_all, one call per #{KeyedRuns::ADVANCE_EVERY} events, against insert per event, " \
     "#{PARTNERS} partners, the same hand-overs (best of #{BATCH_ROUNDS} alternating runs each; all listed):"
runs.each_with_index do |(single, batch), round|
  report("  insert, round #{round + 1}", single)
  report("  insert_all, round #{round + 1}", batch)
end
puts format("  the loop alone, calling a Ruby method that does nothing: %.0f ns/event", idle.ns_per_insert)
batch_speedup = single_best.total / batch_best.total
puts format("  sessions handed over: %d by each, in the same order: %s", handed_over_checked,
            batch_identical ? "identical" : "DIFFER")
puts format("insert_all per event / insert per event at %d keys: %.2fx", PARTNERS,
            batch_best.ns_per_insert / single_best.ns_per_insert)
puts format("end to end with insert_all: %.2fx faster than with insert (target >= %.1fx: %s)%s",
            batch_speedup, BATCH_TARGET, verdict(batch_identical && batch_speedup >= BATCH_TARGET),
            batch_identical ? "" : ", results DIFFER")
puts format("  (insert per event less the loop alone: %.0f ns; insert_all per event: %.0f ns)",
            single_best.ns_per_insert - idle.ns_per_insert, batch_best.ns_per_insert)

# A tracker holding BIG_KEYS keys at once (BIG_KEYS=0 skips this): the cost
# of a new key and of a take must not climb with the number held, and GC
# must not come to dominate either. GC time is GC.total_time's (Ruby 3.1+).
if BIG_KEYS.positive?
  require_relative "support/big_keys"

  puts
  puts "#{BIG_KEYS} keys held at once, one session each: each key inserted anew (timestamps ascending), " \
       "then the watermark passes them all and take_closed hands over every session"
  puts BigKeys.table(BigKeys.integers(BIG_KEYS) + BigKeys.strings(BIG_KEYS))
end
