# frozen_string_literal: true

# Surviving a restart: checkpoint the tracker and your own counts, reload
# them in a new process, and carry on as if nothing happened.
#
# Sessions#to_h holds only Integers, Arrays and nil, so it goes straight into
# JSON (or YAML, MessagePack, a database column). Sessions.from_h checks what
# it reads back, so a damaged file raises instead of building a broken tracker.
#
# Run: bundle exec ruby examples/surviving_restarts.rb

require "json"
require "tmpdir"
require "window_machines"

GAP = 5
LAG = 10 # events may arrive up to ten ticks out of order
EVENTS = [101, 103, 109, 106, 120, 118, 130, 127, 145, 146, 160].freeze
RESTART_AFTER = 5 # events handled before the process "crashes"

def run(sessions, counts, events, log)
  events.each do |at|
    span = sessions.insert(at) { |old_span, new_span| counts[new_span] += counts.delete(old_span) }
    counts[span] += 1
    sessions.advance_watermark(at - LAG)
    while (closed = sessions.take_closed)
      log << "#{closed.inspect}: #{counts.delete(closed)} events"
    end
  end
end

def checkpoint(sessions, counts)
  JSON.generate(tracker: sessions.to_h, counts: counts.map { |span, count| [*span, count] })
end

def restore(json)
  saved = JSON.parse(json)
  counts = Hash.new(0)
  saved["counts"].each { |first, last, count| counts[[first, last]] = count }
  [WindowMachines::Sessions.from_h(saved["tracker"]), counts]
end

# One process, start to finish.
uninterrupted = []
run(WindowMachines::Sessions.new(GAP), Hash.new(0), EVENTS, uninterrupted)

# The same stream, with a restart in the middle.
restarted = []
Dir.mktmpdir do |dir|
  path = File.join(dir, "sessions.json")
  sessions = WindowMachines::Sessions.new(GAP)
  counts = Hash.new(0)
  run(sessions, counts, EVENTS.first(RESTART_AFTER), restarted)
  File.write(path, checkpoint(sessions, counts))
  puts "checkpoint after #{RESTART_AFTER} events: #{File.read(path)}"

  sessions, counts = restore(File.read(path)) # a new process would start here
  run(sessions, counts, EVENTS.drop(RESTART_AFTER), restarted)
end

puts "finished sessions, restarted run:"
restarted.each { |line| puts "  #{line}" }
puts restarted == uninterrupted ? "identical to the uninterrupted run" : "DIFFERENT from the uninterrupted run"
exit(restarted == uninterrupted)
