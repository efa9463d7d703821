# frozen_string_literal: true

# Page views per reading session, from views that arrive out of order.
#
# Half an hour without a view ends a reader's session. Phones deliver views
# late, so the tracker waits ten minutes of stream time (the grace) before
# it treats a session as finished. A view that arrives late can still join a
# session, or bridge two of a reader's sessions into one: the counts and
# the paths move with it, and the paths come out in the order the reader
# saw them, not the order they arrived.
#
# Run: bundle exec ruby examples/page_views_per_session.rb

require "time"
require "window_machines"

GAP = 30 * 60   # half an hour without a view ends a session
GRACE = 10 * 60 # views may arrive up to ten minutes out of order

def at(clock) = Time.parse("2026-03-16 #{clock} UTC").to_i

def clock(seconds) = Time.at(seconds).utc.strftime("%H:%M")

def views(count) = count == 1 ? "1 view" : "#{count} views"

def describe(reader, first, last, result)
  "#{reader} #{clock(first)}-#{clock(last)}, #{views(result[:views])}: #{result[:pages].join(' > ')}"
end

# reader, when the page was viewed, path; in the order the views arrived.
VIEWS = [
  ["ana", "09:00", "/"],
  ["ben", "09:05", "/blog"],
  ["ana", "09:04", "/pricing"],
  ["ben", "09:20", "/blog/event-time"],
  ["ben", "09:12", "/blog/sessions"],
  ["ana", "09:40", "/docs"],
  ["ana", "09:30", "/docs/install"], # arrives after 09:40 and bridges ana's two sessions
  ["ben", "10:15", "/blog/watermarks"],
  ["ana", "10:05", "/docs/grace"],
  ["ana", "10:50", "/changelog"],
  ["ben", "10:42", "/blog/late-data"]
].freeze

sessions = WindowMachines::SessionWindows.new(
  GAP,
  grace: GRACE,
  aggregate: { views: WindowMachines::Aggregate::Count.new, pages: WindowMachines::Aggregate::Collect.new(:path) }
)

VIEWS.each do |reader, viewed, path|
  sessions.add(reader, at(viewed), { path: path })
  open = sessions.current(reader).map { |first, last, _result| "#{clock(first)}-#{clock(last)}" }
  puts format("%-5s %-3s %-17s %s's open sessions: %s", viewed, reader, path, reader, open.join(", "))
  sessions.each_closed { |*session| puts "  session finished: #{describe(*session)}" }
end

puts "end of the stream: handing over what is still open"
sessions.flush { |*session| puts "  #{describe(*session)}" }

# Prints:
# 09:00 ana /                 ana's open sessions: 09:00-09:00
# 09:05 ben /blog             ben's open sessions: 09:05-09:05
# 09:04 ana /pricing          ana's open sessions: 09:00-09:04
# 09:20 ben /blog/event-time  ben's open sessions: 09:05-09:20
# 09:12 ben /blog/sessions    ben's open sessions: 09:05-09:20
# 09:40 ana /docs             ana's open sessions: 09:00-09:04, 09:40-09:40
# 09:30 ana /docs/install     ana's open sessions: 09:00-09:40
# 10:15 ben /blog/watermarks  ben's open sessions: 10:15-10:15
#   session finished: ben 09:05-09:20, 3 views: /blog > /blog/sessions > /blog/event-time
# 10:05 ana /docs/grace       ana's open sessions: 09:00-10:05
# 10:50 ana /changelog        ana's open sessions: 10:50-10:50
#   session finished: ana 09:00-10:05, 5 views: / > /pricing > /docs/install > /docs > /docs/grace
# 10:42 ben /blog/late-data   ben's open sessions: 10:15-10:42
# end of the stream: handing over what is still open
#   ben 10:15-10:42, 2 views: /blog/watermarks > /blog/late-data
#   ana 10:50-10:50, 1 view: /changelog
