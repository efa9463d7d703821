# frozen_string_literal: true

# Many events at once: a Kafka consumer that hands each batch over in one call.
#
# Karafka (like any Kafka client) gives a consumer its messages in batches.
# Adding them one at a time costs a Ruby method call and a result per event;
# TumblingWindows#add_all takes the whole batch, applies each event exactly
# as add would, in order, and returns one count. This consumer counts page
# views per user and minute, reports each minute once it is final, reports
# a view that comes after its minute was reported as late instead of
# counting it, and skips a message without a usable timestamp instead of
# losing the batch.
#
# It runs without Karafka: the consumer would inherit from
# Karafka::BaseConsumer, which provides `messages` (here an accessor), and
# Message stands in for Karafka's message, its payload already parsed from
# JSON. At the end the same messages go through `add` one at a time, to show
# the batches changed nothing but the number of calls.
#
# Run: bundle exec ruby examples/batch_consumer.rb

require "time"
require "window_machines"

MINUTE = 60_000 # payload timestamps are milliseconds
GRACE = 10_000 # views may arrive up to ten seconds out of order

Message = Struct.new(:offset, :payload)

def at(clock) = Time.parse("2026-03-16 #{clock} UTC").to_i * 1000

def clock(ms, format = "%H:%M:%S") = Time.at(ms / 1000).utc.strftime(format)

def views(count) = count == 1 ? "1 view" : "#{count} views"

# Page views per user and minute. Karafka keeps a consumer object per
# assigned partition between batches, so each partition has its own tracker
# for as long as it is assigned.
def page_views(on_late)
  WindowMachines::TumblingWindows.new(
    MINUTE, grace: GRACE, on_late: on_late,
    aggregate: { views: WindowMachines::Aggregate::Count.new, pages: WindowMachines::Aggregate::Collect.new("page") }
  )
end

class PageViewsConsumer # < Karafka::BaseConsumer
  attr_accessor :messages # Karafka::BaseConsumer provides it
  attr_reader :reported

  def initialize
    super
    @reported = []
    @windows = page_views(lambda do |user, ts, _payload, watermark|
      puts "  late: #{user} at #{clock(ts)}, after its minute closed (watermark #{clock(watermark)})"
    end)
  end

  # Karafka calls this with each batch.
  def consume
    keys = messages.map { |m| m.payload["user"] }
    times = messages.map { |m| m.payload["ts"] }
    counted = add_from(0, keys, times, messages.map(&:payload))
    puts "  #{views(counted)} counted"
    @windows.each_closed { |user, start, _finish, result| report(user, start, result) }
  end

  # Karafka calls this when the process stops; a real consumer would also
  # checkpoint (to_h) on `revoked`, when the partition moves elsewhere.
  def shutdown
    @windows.flush { |user, start, _finish, result| report(user, start, result) }
  end

  private

  # add_all from index `from` on; returns how many views were counted. A
  # refused message raises with its index (counted from `from`), the ones
  # before it already added: skip it and go on after it.
  def add_from(from, keys, times, payloads)
    late_before = @windows.late_count
    @windows.add_all(keys.drop(from), times.drop(from), payloads.drop(from))
  rescue WindowMachines::TypeError, WindowMachines::RangeError => e
    bad = from + e.index
    puts "  offset #{messages[bad].offset} skipped: no usable timestamp (ts #{times[bad].inspect})"
    # Of the messages before it, all but the late ones were counted.
    e.index - (@windows.late_count - late_before) + add_from(bad + 1, keys, times, payloads)
  end

  def report(user, start, result)
    @reported << [user, start, result]
    puts "  minute #{clock(start, '%H:%M')} #{user}: #{views(result[:views])} (#{result[:pages].join(' ')})"
  end
end

# Three polls of one partition: user, when the page was viewed, page. One
# message has lost its timestamp; ben's view at 09:00:45 comes after his
# 09:00 minute was reported.
offsets = (0..).each
BATCHES = [
  [%w[ana 09:00:05 /], %w[ben 09:00:20 /docs], %w[ana 09:00:50 /pricing], %w[ben 09:01:02 /docs/install]],
  [%w[ana 09:00:58 /docs], %w[cal 09:01:15 /], ["ben", nil, "/blog"], %w[ana 09:01:40 /docs/grace]],
  [%w[ben 09:00:45 /pricing], %w[cal 09:02:20 /blog], %w[ana 09:02:31 /]]
].map do |batch|
  batch.map { |user, ts, page| Message.new(offsets.next, { "user" => user, "ts" => ts && at(ts), "page" => page }) }
end.freeze

consumer = PageViewsConsumer.new
BATCHES.each_with_index do |batch, poll|
  puts "poll #{poll + 1}: offsets #{batch.first.offset}-#{batch.last.offset}"
  consumer.messages = batch
  consumer.consume
end
puts "shutdown"
consumer.shutdown

# The same batches through `add`, one message at a time, handing over after
# each batch as the consumer does.
one_at_a_time = page_views(:drop)
reported = []
hand_over = ->(user, start, _finish, result) { reported << [user, start, result] }
BATCHES.each do |batch|
  batch.each do |message|
    next if message.payload["ts"].nil? # skipped, as the consumer skips it

    one_at_a_time.add(message.payload["user"], message.payload["ts"], message.payload)
  end
  one_at_a_time.each_closed(&hand_over)
end
one_at_a_time.flush(&hand_over)
puts "the same as one add per message: #{reported == consumer.reported}"

# Prints:
# poll 1: offsets 0-3
#   4 views counted
# poll 2: offsets 4-7
#   offset 6 skipped: no usable timestamp (ts nil)
#   3 views counted
#   minute 09:00 ana: 3 views (/ /pricing /docs)
#   minute 09:00 ben: 1 view (/docs)
# poll 3: offsets 8-10
#   late: ben at 09:00:45, after its minute closed (watermark 09:01:30)
#   2 views counted
#   minute 09:01 ana: 1 view (/docs/grace)
#   minute 09:01 ben: 1 view (/docs/install)
#   minute 09:01 cal: 1 view (/)
# shutdown
#   minute 09:02 ana: 1 view (/)
#   minute 09:02 cal: 1 view (/blog)
# the same as one add per message: true
