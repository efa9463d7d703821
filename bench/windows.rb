# frozen_string_literal: true

# The aggregating windows (TumblingWindows, HoppingWindows, SessionWindows
# with Aggregate::Count) on bench/keyed.rb's invoice stream, in one process:
#   (a) TumblingWindows#add, one-minute windows, against KeyedSessions#insert;
#   (b) the stream counted end to end per one-minute window and per session
#       (30-minute gap), against the same counts in Ruby written well (see
#       bench/support/window_runs.rb), checking the results are identical,
#       and against a tracker that costs nothing (WindowRuns::Replay): the
#       most any tracker could gain over the Ruby version here. Best of
#       ROUNDS (default 2) runs each, alternating which goes first; each run
#       keeps only a summary of its results, so that none is timed beside
#       the millions of results an earlier run collected;
#   (c) HoppingWindows of an hour every minute against TumblingWindows of a
#       minute, per event: adds alone (a manual watermark held still, so
#       nothing closes and only adds are timed), and in the stream above,
#       where the hopping tracker also hands over 60 windows per event;
#   (e) RSS per open window;
#   (f) one key's windows opened out of order under a grace that closes
#       none: an add among 160,000 of them against one among 10,000
#       (a B-tree's depth and the cache make it dearer, never 16x), and
#       `current` of that key, per window it lists;
#   (g) one window's Collect taking 200,000 inputs in falling time order
#       against rising, adds and the hand-over together (inserting each in
#       its place cost in proportion to those held: 480x at that size).
# Run: bundle exec rake bench:windows (PARTNERS=20000 for a quick run;
# HOPPING=0 skips (c); ROUNDS=1 times (b) once each).

require "objspace"
require_relative "support/window_runs"

PARTNERS = Integer(ENV.fetch("PARTNERS", 1_000_000))
HOPPING = ENV.fetch("HOPPING", "1") != "0"
# Untimed runs on a stream this large first, so method caches and Ruby's
# heap are warm before anything is measured.
WARMUP = [PARTNERS / 10, 10_000].min
HOUR = 3600

ADD_TARGET = 1.0
END_TO_END_TARGET = 3.0
END_TO_END_ROUNDS = Integer(ENV.fetch("ROUNDS", 2))
HOPPING_TARGET = 1.5
COLLECTED = 200_000
COLLECT_TARGET = 1.5
RSS_TARGET = 120
CROWDED_TARGET = 3.0

def rss_bytes
  GC.start
  File.read("/proc/self/status")[/^VmRSS:\s+(\d+) kB/, 1].to_i * 1024
end

def verdict(met) = met ? "met" : "NOT met"

def at_most(ratio, target) = format("%.2fx (target <= %.1fx: %s)", ratio, target, verdict(ratio <= target))

def run(stream, tracker)
  GC.start
  KeyedRuns.run(stream, tracker)
end

def report(label, timing)
  puts format("  %-48s %7.0f ns/event %8.0f ns/handover %7.2f s end to end (%d handed over)",
              label, timing.ns_per_insert, timing.ns_per_handover, timing.total, timing.handed_over)
end

# Per-window RSS, measured before anything else has run, so no memory freed
# by earlier runs can be reused for it. Every partner holds one open window
# (a manual watermark never advanced closes nothing); the partner Strings
# already exist, so only what the tracker adds is counted.
def open_window_cost(keys)
  before = rss_bytes
  tracker = WindowMachines::TumblingWindows.new(WindowRuns::MINUTE, aggregate: WindowRuns.count, watermark: :manual)
  keys.each_with_index { |key, n| tracker.add(key, n % InvoiceStream::DAY) }
  raise "#{tracker.size} windows held, not #{keys.size}" unless tracker.size == keys.size

  [(rss_bytes - before).to_f / tracker.size, ObjectSpace.memsize_of(tracker).to_f / tracker.size]
end

# Nanoseconds per add of one key's `windows` one-tick windows, opened in a
# random order into a tracker whose grace closes none of them, and per
# window `current` lists for the key then.
def one_key_out_of_order(windows)
  times = (0...windows).to_a.shuffle(random: Random.new(1))
  tracker = WindowMachines::TumblingWindows.new(1, grace: 2**40, aggregate: WindowRuns.count)
  GC.start
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  times.each { |at| tracker.add("partner", at) }
  elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
  raise "#{tracker.size} windows held, not #{windows}" unless tracker.size == windows

  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  listed = tracker.current("partner").size
  listing = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
  raise "current listed #{listed} windows, not #{windows}" unless listed == windows

  [elapsed * 1e9 / windows, listing * 1e9 / windows]
end

# Nanoseconds per add of `stream` into a fresh tracker that nothing closes
# in; the best of `rounds`, alternating with the other trackers measured.
def adds_alone(stream, size, advance)
  tracker = WindowMachines::HoppingWindows.new(size, advance, aggregate: WindowRuns.count, watermark: :manual)
  keys = stream.event_keys
  times = stream.event_times
  GC.start
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  index = 0
  while index < keys.size
    tracker.add(keys[index], times[index])
    index += 1
  end
  (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started) * 1e9 / keys.size
end

# Nanoseconds per input of COLLECTED inputs of one key collected in one
# window, their times rising or falling, its hand-over included; checks it
# lists them in time order.
def one_window_collected(order)
  times = (1..COLLECTED).to_a
  times.reverse! if order == :falling
  tracker = WindowMachines::TumblingWindows.new(2 * COLLECTED, grace: 2 * COLLECTED,
                                                aggregate: WindowMachines::Aggregate::Collect.new)
  GC.start
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  times.each { |at| tracker.add("partner", at, at) }
  (_key, _start, _end, collected), = tracker.flush.to_a
  elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
  raise "#{order} inputs were not listed in time order" unless collected == (1..COLLECTED).to_a

  elapsed * 1e9 / COLLECTED
end

warmup_stream = InvoiceStream.generate(WARMUP, seed: 1)
stream = InvoiceStream.generate(PARTNERS)
puts RUBY_DESCRIPTION
puts "invoice stream: #{PARTNERS} partners x #{InvoiceStream::PER_PARTNER} invoices over " \
     "#{InvoiceStream::DAY / 3600} h, up to #{InvoiceStream::LATE} s late; grace #{WindowRuns::GRACE} s " \
     "(so nothing is late), windows handed over every #{KeyedRuns::ADVANCE_EVERY} events"

rss_per_window, memsize_per_window = open_window_cost(stream.keys)
GC.start

[-> { KeyedRuns::Keyed.new },
 -> { WindowRuns::Gem.new(WindowRuns.tumbling, collect: true) },
 -> { WindowRuns::Gem.new(WindowRuns.sessions, collect: true) },
 -> { WindowRuns::RubyTumbling.new(WindowRuns::MINUTE) },
 -> { WindowRuns::RubySessions.new(WindowRuns::GAP) }].each { |make| KeyedRuns.run(warmup_stream, make.call) }

puts
puts "(a) per event, #{PARTNERS} String keys"
keyed = run(stream, KeyedRuns::Keyed.new)
tumbling = run(stream, WindowRuns::Gem.new(WindowRuns.tumbling, collect: false))
report("KeyedSessions#insert, 30-minute gap", keyed)
report("TumblingWindows#add, 1 minute, Count", tumbling)

puts "(b) end to end, #{PARTNERS} keys, every window and session collected"
END_TO_END = [
  ["per 1-minute window",
   ["TumblingWindows", -> { WindowRuns::Gem.new(WindowRuns.tumbling, collect: true) }],
   ["Ruby: Hash of window => Hash of key => count", -> { WindowRuns::RubyTumbling.new(WindowRuns::MINUTE) }]],
  ["per session",
   ["SessionWindows", -> { WindowRuns::Gem.new(WindowRuns.sessions, collect: true) }],
   ["Ruby: Hash of key => Sessions, counts moved", -> { WindowRuns::RubySessions.new(WindowRuns::GAP) }]]
].freeze
# Runs a fresh tracker from `make` over the stream, keeping only what
# identifies its results, so that nothing it handed over is still alive
# while the next run is timed. With `replay: true` it then times a tracker
# costing nothing that hands over the same results at the same points.
def end_to_end_run(stream, make, replay: false)
  tracker = make.call
  timing = run(stream, tracker)
  counted = tracker.results.sum { |_key, _start, _finish, count| count }
  outcome = [timing, WindowRuns.summary(tracker.results), counted, tracker.late_count]
  return outcome unless replay

  columns = tracker.results.transpose
  sizes = tracker.handed_sizes
  tracker = nil # the rows are collectable from here: `columns` holds what Replay needs
  outcome << run(stream, WindowRuns::Replay.new(columns, sizes))
end

# The best of END_TO_END_ROUNDS runs each, alternating which goes first:
# whichever runs later finds the heap grown by the results of the runs
# before it, and collects garbage less often (the same tracker measured
# 1.45x apart by its place in the order). The tracker costing nothing is
# timed once, after the gem's first run, whose results it replays.
def end_to_end_best(stream, make_gem, make_ruby)
  floor = nil
  gem = lambda do
    outcome = end_to_end_run(stream, make_gem, replay: floor.nil?)
    floor ||= outcome.pop
    outcome
  end
  runs = KeyedRuns.alternating(END_TO_END_ROUNDS, gem, -> { end_to_end_run(stream, make_ruby) })
  gem_runs, ruby_runs = runs.transpose
  [gem_runs.min_by { |timing, *| timing.total }, ruby_runs.min_by { |timing, *| timing.total }, floor,
   (gem_runs + ruby_runs).map { |_timing, summary, *| summary }.uniq.size == 1]
end

end_to_end = END_TO_END.to_h do |label, (gem_label, make_gem), (ruby_label, make_ruby)|
  gem_run, ruby_run, floor, same = end_to_end_best(stream, make_gem, make_ruby)
  gem_timing, gem_summary, counted, gem_late = gem_run
  ruby_timing, _ruby_summary, _, ruby_late = ruby_run
  report(gem_label, gem_timing)
  report(ruby_label, ruby_timing)
  identical = same && gem_late.zero? && ruby_late.zero? && counted == stream.event_keys.size &&
              gem_summary[0] == gem_summary[1]
  puts format("  %s: %d handed over, %d events counted, late: gem %d, Ruby %d; results %s",
              label, gem_summary[0], counted, gem_late, ruby_late, identical ? "identical" : "DIFFER")
  report("a tracker costing nothing (loop, keys, results)", floor)
  [label, [ruby_timing.total / gem_timing.total, identical, ruby_timing.total / floor.total]]
end
GC.start

if HOPPING
  puts "(c) per event, #{PARTNERS} keys, windows only counted"
  hopping = run(stream, WindowRuns::Gem.new(WindowRuns.hopping(HOUR), collect: false))
  report("HoppingWindows#add, 1 hour every minute, Count", hopping)
  report("TumblingWindows#add, 1 minute, Count (from (a))", tumbling)
  alone = Array.new(2) { [adds_alone(stream, HOUR, WindowRuns::MINUTE), adds_alone(stream, WindowRuns::MINUTE, WindowRuns::MINUTE)] }
  hopping_alone, tumbling_alone = alone.transpose.map(&:min)
  puts format("  adds alone, nothing closing: hopping %.0f ns, tumbling %.0f ns an event", hopping_alone, tumbling_alone)
end

puts
puts format("(a) TumblingWindows#add / KeyedSessions#insert at %d keys: %s",
            PARTNERS, at_most(tumbling.ns_per_insert / keyed.ns_per_insert, ADD_TARGET))
end_to_end.each do |label, (speedup, identical, ceiling)|
  puts format("(b) end to end %s, Ruby time / gem time: %.2fx (target >= %.1fx: %s)%s; " \
              "Ruby time / a tracker costing nothing: %.2fx",
              label, speedup, END_TO_END_TARGET, verdict(identical && speedup >= END_TO_END_TARGET),
              identical ? "" : ", results DIFFER", ceiling)
  next if ceiling >= END_TO_END_TARGET

  puts "  no tracker can meet this target here: the loop, the calls, reading the keys and collecting " \
       "the results alone leave less than #{END_TO_END_TARGET}x"
end
if HOPPING
  puts format("(c) HoppingWindows 1 h / 1 min per event / TumblingWindows per event, adds alone: %s; " \
              "in the stream, among hand-overs: %.2fx",
              at_most(hopping_alone / tumbling_alone, HOPPING_TARGET), hopping.ns_per_insert / tumbling.ns_per_insert)
end
puts format("(e) RSS growth per open window with Count: %.0f bytes beyond the key (memsize_of says %.0f; " \
            "target <= %d: %s)", rss_per_window, memsize_per_window, RSS_TARGET, verdict(rss_per_window <= RSS_TARGET))
few, crowded = Array.new(2) { [one_key_out_of_order(10_000), one_key_out_of_order(160_000)] }.transpose
                   .map { |runs| runs.transpose.map(&:min) }
puts format("(f) one key, windows opened out of order: %.0f ns an add among 160,000 against %.0f among 10,000: %s " \
            "(an add costing in proportion to the windows held would read 16x); current lists them at %.0f " \
            "against %.0f ns a window",
            crowded[0], few[0], at_most(crowded[0] / few[0], CROWDED_TARGET), crowded[1], few[1])
rising, falling = Array.new(3) { [one_window_collected(:rising), one_window_collected(:falling)] }.transpose.map(&:min)
puts format("(g) one window's Collect, %d inputs: %.0f ns an input in falling time order against %.0f rising: %s",
            COLLECTED, falling, rising, at_most(falling / rising, COLLECT_TARGET))
