# frozen_string_literal: true

# Runs the README's examples against whichever window_machines `require`
# finds, and says where it was loaded from. Used by `rake install:verify` to
# check installed gems from outside the checkout.

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
