# frozen_string_literal: true

# Signups per ten minutes, bucketed by when they happened.
#
# Two sources feed one queue: the web app, which delivers within minutes, and
# a mobile app whose phones queue signups while offline and sync later. Mateo
# and Nadia signed up on a plane at 14:04 and 14:15; the phone synced at
# 16:40. A chart keyed by arrival time files them under 16:40. This one files
# them under 14:00 and 14:10, because the watermark follows the slowest
# source, so no bucket is reported while the phone is still catching up.
#
# Run: bundle exec ruby examples/late_signups.rb

require "csv"
require "time"
require "window_machines"

BUCKET = 10 * 60 # ten-minute buckets
LATENESS = 2 * 60 # how long a bucket waits past its end
SOURCE_LAG = 5 * 60 # how far out of order one source's own events may be
SESSION_GAP = 5 * 60 # five minutes of silence ends a burst of signups

def at(clock) = Time.parse("2026-03-14 #{clock} UTC").to_i

def clock(timestamp) = Time.at(timestamp).utc.strftime("%H:%M")

def span(first, last) = "#{clock(first)}-#{clock(last)}"

def signups(count) = count == 1 ? "1 signup" : "#{count} signups"

counts = Hash.new(0) # [start, end] => signups: the gem keeps no payloads
latest_by_source = {}
watermark = WindowMachines::Watermark.new
bursts = WindowMachines::Sessions.new(SESSION_GAP)

report_closed = lambda do
  counts.keys.sort.each do |start, finish|
    next unless watermark.closes?(start, finish, LATENESS)

    puts "#{' ' * 26}bucket #{span(start, finish)} closed: #{signups(counts.delete([start, finish]))}"
  end
  while (first, last = bursts.take_closed)
    puts "#{' ' * 26}burst #{span(first, last)} finished"
  end
end

puts "arrived  happened  source  user      bucket"
CSV.foreach(File.join(__dir__, "signups.csv"), headers: true) do |row|
  happened = at(row["happened"])
  line = format("%-8s %-9s %-7s %-9s", row["arrived"], row["happened"], row["source"], row["user"])
  begin
    # The sessions tracker shares the watermark's value and refuses a late
    # event before it is counted, so a reported bucket never changes.
    bursts.insert(happened)
    start, finish = WindowMachines.tumbling(happened, BUCKET)
    counts[[start, finish]] += 1
    puts "#{line} #{span(start, finish)}"
  rescue WindowMachines::LateEventError
    puts "#{line} refused: at or below the watermark #{clock(watermark.value)}"
  end

  source = row["source"]
  latest_by_source[source] = [latest_by_source[source], happened].compact.max
  slowest = latest_by_source.values.min - SOURCE_LAG
  bursts.advance_watermark(slowest)
  report_closed.call if watermark.advance(slowest)
end

puts
puts "Still open when the stream ends (watermark #{clock(watermark.value)}):"
counts.sort.each { |(start, finish), count| puts "  bucket #{span(start, finish)}: #{signups(count)}" }
bursts.to_a.each { |first, last| puts "  burst #{span(first, last)}" }
