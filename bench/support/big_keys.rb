# frozen_string_literal: true

require "window_machines"

# A KeyedSessions tracker holding one session for each of very many keys at
# once: inserting each key anew, then handing every session over. Ruby 3.1
# has GC.total_time (nanoseconds spent in GC, measured by default), so the
# GC share of each phase is read from it, with GC.stat's minor and major
# counts; GC::Profiler is not needed and would add its own bookkeeping.
module BigKeys
  # Any gap will do: each key gets a single event, and the watermark only
  # moves once every key is held.
  GAP = 1

  Phase = Struct.new(:keys, :name, :ops, :seconds, :gc_seconds, :minor_gcs, :major_gcs, :rss_growth,
                     keyword_init: true) do
    def ns_per_op = seconds * 1e9 / ops
    def gc_share = gc_seconds / seconds
  end

  module_function

  def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

  def rss_bytes = File.read("/proc/self/status")[/^VmRSS:\s+(\d+) kB/, 1].to_i * 1024

  # Both phases for Integer keys 0...count: the loop index is the key, so
  # there is nothing to generate.
  def integers(count)
    run("Integer", count) { |tracker| insert_integers(tracker, count) }
  end

  # Both phases for `count` distinct frozen Strings, made before anything
  # is timed so that only the tracker's work is.
  def strings(count)
    keys = Array.new(count) { |n| "key-#{n}".freeze }
    run("String", count) { |tracker| insert_keys(tracker, keys) }
  end

  # Times the block inserting every key into a new tracker, then the
  # hand-over of all their sessions.
  def run(label, count)
    tracker = WindowMachines::KeyedSessions.new(GAP)
    inserts = phase(label, "insert, new key", count) { yield tracker }
    raise "#{label}: #{tracker.key_count} keys held, not #{count}" unless tracker.key_count == count

    tracker.advance_watermark(2**64 - 1)
    takes = phase(label, "take_closed", count) { take_all(tracker) }
    raise "#{label}: #{tracker.size} sessions left" unless tracker.size.zero?

    [inserts, takes]
  end

  # Garbage from before is collected first so the phase pays only for its
  # own; RSS is read after a full GC so the growth is what the phase keeps.
  def phase(label, name, ops)
    GC.start
    rss_before = rss_bytes
    gc_before = GC.total_time
    stat_before = GC.stat
    started = now
    yield
    seconds = now - started
    gc_seconds = (GC.total_time - gc_before) / 1e9
    stat_after = GC.stat
    GC.start
    Phase.new(keys: label, name: name, ops: ops, seconds: seconds, gc_seconds: gc_seconds,
              minor_gcs: stat_after[:minor_gc_count] - stat_before[:minor_gc_count],
              major_gcs: stat_after[:major_gc_count] - stat_before[:major_gc_count],
              rss_growth: rss_bytes - rss_before)
  end

  def insert_integers(tracker, count)
    key = 0
    while key < count
      tracker.insert(key, key)
      key += 1
    end
  end

  def insert_keys(tracker, keys)
    index = 0
    count = keys.size
    while index < count
      tracker.insert(keys[index], index)
      index += 1
    end
  end

  def take_all(tracker)
    taken = 0
    taken += 1 while tracker.take_closed
    taken
  end

  def table(phases)
    header = ["keys", "phase", "ns/op", "GC ms", "GC share", "minor/major GCs", "RSS growth"]
    rows = phases.map do |phase|
      [phase.keys, phase.name, format("%.0f", phase.ns_per_op), format("%.0f", phase.gc_seconds * 1e3),
       format("%.0f%%", phase.gc_share * 100), "#{phase.minor_gcs}/#{phase.major_gcs}",
       format("%+.0f MB (%+.0f B/key)", phase.rss_growth / 1e6, phase.rss_growth.to_f / phase.ops)]
    end
    [header, header.map { "---" }, *rows].map { |cells| "| #{cells.join(' | ')} |" }.join("\n")
  end

  private_class_method :run, :phase, :insert_integers, :insert_keys, :take_all
end
