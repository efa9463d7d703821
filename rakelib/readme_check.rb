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

puts "README examples pass with window_machines #{WindowMachines::VERSION} from " \
     "#{$LOADED_FEATURES.grep(/window_machines\.so\z/).first}"
