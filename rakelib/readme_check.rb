# frozen_string_literal: true

# Runs the README's examples against whichever window_machines `require`
# finds, and says where it was loaded from. Used by `rake install:verify` to
# check installed gems from outside the checkout.

require "stringio"
require "window_machines"

# In a module: a top-level method would become a private method of every object.
module ReadmeCheck
  module_function

  def check(label, actual, expected)
    return if actual == expected

    abort "README example #{label}: expected #{expected.inspect}, got #{actual.inspect}"
  end
end

ReadmeCheck.check "tumbling", [WindowMachines.tumbling(12, 10), WindowMachines.tumbling(20, 10)], [[10, 20], [20, 30]]
ReadmeCheck.check "sliding", WindowMachines.sliding(12, 10, 5), [[10, 20], [5, 15]]
ReadmeCheck.check "sliding hole", WindowMachines.sliding(12, 1, 5), []

watermark = WindowMachines::Watermark.new
ReadmeCheck.check "watermark", [watermark.value, watermark.advance(22), watermark.advance(9), watermark.value], [nil, true, false, 22]
ReadmeCheck.check "closes?", [watermark.closes?(10, 20, 2), watermark.closes?(10, 20, 3)], [true, false]

sessions = WindowMachines::Sessions.new(5)
inserted = [10, 15, 30, 21, 26].map { |at| sessions.insert(at) }
ReadmeCheck.check "sessions", inserted, [[10, 10], [10, 15], [30, 30], [21, 21], [21, 30]]
sessions.advance_watermark(25)
ReadmeCheck.check "take_closed", [sessions.take_closed, sessions.take_closed], [[10, 15], nil]
sessions.advance_watermark(40)
ReadmeCheck.check "take_closed later", sessions.take_closed, [21, 30]
begin
  sessions.insert(40)
  abort "README example late insert: nothing raised"
rescue ArgumentError
  nil
end

batches = WindowMachines::KeyedSessions.new(1800)
batches.insert("ACME", 100)
batches.insert("Borealis", 150)
batches.insert("ACME", 900)
batches.advance_watermark(2_000)
ReadmeCheck.check "keyed", batches.take_closed, ["Borealis", 150, 150]

views = WindowMachines::TumblingWindows.new(60, grace: 10, aggregate: WindowMachines::Aggregate::Count.new)
ReadmeCheck.check "aggregating add", [views.add("ana", 5), views.add("ben", 30), views.add("ana", 65)], [true, true, true]
ReadmeCheck.check "aggregating watermark", views.watermark, 55
ReadmeCheck.check "aggregating grace", [views.add("ana", 50), views.add("ben", 75)], [true, true]
ReadmeCheck.check "aggregating each_closed", views.each_closed.to_a, [["ana", 0, 60, 2], ["ben", 0, 60, 1]]
begin
  views.add("ben", 40)
  abort "README example late add: nothing raised"
rescue WindowMachines::LateEventError => e
  ReadmeCheck.check "aggregating late", [e.timestamp, e.watermark, e.key], [40, 65, "ben"]
end
ReadmeCheck.check "aggregating current", views.current("ana"), [[60, 120, 1]]
ReadmeCheck.check "aggregating flush", views.flush.to_a, [["ana", 60, 120, 1], ["ben", 60, 120, 1]]

ReadmeCheck.check "tumbling_starts", WindowMachines.tumbling_starts([12, 19, 20, 7], 10), [10, 10, 20, 0]
begin
  WindowMachines.tumbling_starts([], 0)
  abort "README example tumbling_starts size 0: nothing raised"
rescue ArgumentError
  nil
end
moved = []
sessions = WindowMachines::Sessions.new(5)
ReadmeCheck.check "insert_all", sessions.insert_all([10, 15, 30, 21, 26]) { |*spans| moved << spans }, 5
ReadmeCheck.check "insert_all block", [moved, sessions.to_a],
                  [[[[10, 10], [10, 15]], [[21, 21], [21, 30]], [[30, 30], [21, 30]]], [[10, 15], [21, 30]]]
moved = []
batches = WindowMachines::KeyedSessions.new(1800)
ReadmeCheck.check "keyed insert_all",
                  batches.insert_all(%w[ACME Borealis ACME], [100, 150, 900]) { |*yielded| moved << yielded }, 3
ReadmeCheck.check "keyed insert_all block", moved, [[[100, 100], [100, 900], "ACME"]]
views = WindowMachines::TumblingWindows.new(60, grace: 10, aggregate: WindowMachines::Aggregate::Count.new)
ReadmeCheck.check "add_all", views.add_all(%w[ana ben ana ana ben], [5, 30, 65, 50, 75]), 5
ReadmeCheck.check "add_all each_closed", views.each_closed.to_a, [["ana", 0, 60, 2], ["ben", 0, 60, 1]]

sessions = WindowMachines::Sessions.new(5)
sessions.advance_watermark(25)
times = [31, 20, 40]
begin
  sessions.insert_all(times)
  abort "README example batch late: nothing raised"
rescue WindowMachines::LateEventError => e
  ReadmeCheck.check "batch late", [e.index, e.message, sessions.to_a],
                    [1, "late event: timestamp 20 is at or below the watermark 25 (at index 1)", [[31, 31]]]
  ReadmeCheck.check "batch go on", sessions.insert_all(times.drop(e.index + 1)), 1
end
ReadmeCheck.check "batch after", sessions.to_a, [[31, 31], [40, 40]]

module ReadmeCheck
  # The README's consumer, as printed.
  class PageViewsConsumer
    attr_accessor :messages

    def consume
      keys = messages.map { |m| m.payload["user"] }
      times = messages.map { |m| m.payload["ts"] }
      windows.add_all(keys, times, messages.map(&:payload))
      windows.each_closed do |user, start, _finish, result|
        puts "#{user}, minute #{start / 60_000}: #{result[:views]} views (#{result[:pages].join(' ')})"
      end
    end

    private

    def windows
      @windows ||= WindowMachines::TumblingWindows.new(
        60_000, grace: 10_000, on_late: :drop,
        aggregate: { views: WindowMachines::Aggregate::Count.new, pages: WindowMachines::Aggregate::Collect.new("page") }
      )
    end
  end

  Message = Struct.new(:payload)

  # What `consumer.consume` printed.
  def self.printed(consumer)
    out = StringIO.new
    $stdout = out
    consumer.consume
    out.string
  ensure
    $stdout = STDOUT
  end
end

view = ->(user, ts, page) { ReadmeCheck::Message.new({ "user" => user, "ts" => ts, "page" => page }) }
consumer = ReadmeCheck::PageViewsConsumer.new
consumer.messages = [view["ana", 5_000, "/"], view["ben", 20_000, "/docs"], view["ana", 50_000, "/pricing"]]
ReadmeCheck.check "consumer first batch", ReadmeCheck.printed(consumer), ""
consumer.messages = [view["ben", 58_000, "/blog"], view["ana", 75_000, "/docs"]]
ReadmeCheck.check "consumer second batch", ReadmeCheck.printed(consumer),
                  "ana, minute 0: 2 views (/ /pricing)\nben, minute 0: 2 views (/docs /blog)\n"

rates = WindowMachines::VersionedTable.new(60)
ReadmeCheck.check "versioned puts", [rates.put("EUR", 1.08, 100), rates.put("EUR", 1.12, 130), rates.put("EUR", 1.09, 120)],
                  [nil, nil, 130]
ReadmeCheck.check "versioned gets", [rates.get("EUR"), rates.get("EUR", 125), rates.get("EUR", 99), rates.version("EUR", 110)],
                  [1.12, 1.09, nil, [1.08, 100, 120]]
ReadmeCheck.check "versioned retention", [rates.put("EUR", 1.11, 200), rates.history("EUR"), rates.get("EUR", 150),
                                          rates.get("EUR", 135)], [nil, [[1.12, 130, 200], [1.11, 200, nil]], 1.12, nil]
begin
  rates.put("EUR", 1.07, 139)
  abort "README example late put: nothing raised"
rescue WindowMachines::LateEventError => e
  ReadmeCheck.check "versioned late", [e.timestamp, e.watermark, e.key], [139, 139, "EUR"]
end
ReadmeCheck.check "versioned delete", [rates.delete("EUR", 210), rates.get("EUR"), rates.get("EUR", 205)],
                  [[1.11, 200, nil], nil, 1.11]

clock = WindowMachines::Clock.new(:ms)
ReadmeCheck.check "clock", [clock.ticks(Time.utc(2026, 12, 1, 9)), clock.length(30), clock.time(1_796_115_660_000)],
                  [1_796_115_600_000, 30, Time.utc(2026, 12, 1, 9, 1)]
orders = WindowMachines::TumblingWindows.new(60_000, grace: 120_000, clock: clock,
                                             aggregate: WindowMachines::Aggregate::Count.new)
ReadmeCheck.check "clocked add", [orders.add("shop-1", Time.utc(2026, 12, 1, 9, 0, 30)), orders.current("shop-1")],
                  [true, [[1_796_115_600_000, 1_796_115_660_000, 1]]]
strategy = WindowMachines::WatermarkStrategy.bounded(10, idle_after: 30)
ReadmeCheck.check "strategy", [strategy.observe(95, source: 0), strategy.observe(60, source: 1),
                               strategy.observe(99, source: 1), strategy.value], [85, 85, 85, 85]
finished = WindowMachines::Sessions.new(5)
[3, 10, 30].each { |at| finished.insert(at) }
ReadmeCheck.check "finish", finished.finish.to_a, [[3, 3], [10, 10], [30, 30]]

puts "README examples pass with window_machines #{WindowMachines::VERSION} from " \
     "#{$LOADED_FEATURES.grep(/window_machines\.so\z/).first}"
