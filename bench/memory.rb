# frozen_string_literal: true

# Prints what a Sessions tracker and a Watermark occupy (ObjectSpace.memsize_of)
# against their targets, then RSS before and after CYCLES (default 10,000,000)
# cycles of Sessions.new / insert / advance_watermark / take_closed / drop.
# Run: bundle exec rake bench, or CYCLES=100000 ruby -Ilib bench/memory.rb.

require "objspace"
require "window_machines"

GAP = 30
CYCLES = Integer(ENV.fetch("CYCLES", 10_000_000))
# Cycles run before the first RSS reading, so that Ruby's heap has grown to
# its working size and the comparison shows only what the cycles keep.
WARMUP_CYCLES = 100_000
RSS_TOLERANCE = 5.0

def sessions_holding(count)
  sessions = WindowMachines::Sessions.new(GAP)
  count.times { |index| sessions.insert(index * 2 * GAP) }
  sessions
end

def report_size(label, object, target = nil)
  bytes = ObjectSpace.memsize_of(object)
  verdict = target && (bytes <= target ? ", target <= #{target}: met" : ", target <= #{target}: NOT met")
  puts "memsize_of #{label}: #{bytes} bytes#{verdict}"
end

def cycle(count)
  count.times do |timestamp|
    sessions = WindowMachines::Sessions.new(GAP)
    sessions.insert(timestamp)
    sessions.advance_watermark(timestamp + GAP)
    sessions.take_closed
  end
end

def rss_kb
  GC.start
  File.read("/proc/self/status")[/^VmRSS:\s+(\d+) kB/, 1].to_i
end

report_size("Watermark", WindowMachines::Watermark.new(0))
report_size("Sessions holding 1 session", sessions_holding(1), 160)
report_size("Sessions holding 32 sessions", sessions_holding(32), 700)

cycle(WARMUP_CYCLES)
before = rss_kb
cycle(CYCLES)
after = rss_kb
change = 100.0 * (after - before) / before
puts "RSS before #{CYCLES} cycles (after #{WARMUP_CYCLES} warmup cycles): #{before} kB"
puts "RSS after: #{after} kB (#{format('%+.2f', change)}%, target within #{RSS_TOLERANCE}%: " \
     "#{change.abs <= RSS_TOLERANCE ? 'met' : 'NOT met'})"
