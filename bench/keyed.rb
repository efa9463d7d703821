# frozen_string_literal: true

# KeyedSessions against a Hash of Sessions swept on every watermark advance,
# on the same invoice stream, in one process; and the memory a held session
# costs. Run: bundle exec rake bench:keyed (PARTNERS=100000 for a quick run).

require "objspace"
require_relative "support/keyed_runs"

PARTNERS = Integer(ENV.fetch("PARTNERS", 1_000_000))
SMALL = 10_000

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
before = rss_bytes
holding = KeyedRuns::Keyed.new
stream.keys.each_with_index { |key, n| holding.insert(key, n) }
per_session = (rss_bytes - before).to_f / holding.tracker.size
memsize = ObjectSpace.memsize_of(holding.tracker).to_f / holding.tracker.size

insert_ratio = keyed.ns_per_insert / swept.ns_per_insert
take_ratio = keyed.ns_per_handover / small.ns_per_handover
speedup = swept.total / keyed.total
puts
puts format("insert at %d keys / Hash of Sessions insert: %.2fx (target <= 1.2x: %s)",
            PARTNERS, insert_ratio, verdict(insert_ratio <= 1.2))
puts format("handover at %d keys / at %d keys: %.2fx (target <= 1.5x: %s)",
            PARTNERS, SMALL, take_ratio, verdict(take_ratio <= 1.5))
puts format("RSS growth per held session: %.0f bytes (memsize_of says %.0f; target <= 160: %s)",
            per_session, memsize, verdict(per_session <= 160))
puts format("end to end: %.1fx faster than the Hash of Sessions with its sweep (target >= 10x: %s)",
            speedup, verdict(speedup >= 10))
