# frozen_string_literal: true

# Keeping payloads across merges: page views per reading session.
#
# A reader's views arrive out of order. Each session's count lives in a Hash
# keyed by its [first, last] span; the block given to insert moves counts
# whenever a session grows or two sessions merge, so no count is lost or
# counted twice, and each session's total is printed as take_closed hands it
# over.
#
# Run: bundle exec ruby examples/reading_sessions.rb

require "window_machines"

GAP = 30 * 60 # half an hour without a page view ends a reading session
LAG = 10 * 60 # views may arrive up to ten minutes out of order

# Seconds since midnight, in arrival order. The view at 9:38 arrives after
# the one at 9:45 and bridges the morning's first two sessions.
VIEWS = [32_400, 32_640, 33_000, 35_100, 34_680, 37_800, 37_860, 37_740, 40_800, 40_500].freeze

def clock(seconds) = format("%<h>d:%<m>02d", h: seconds / 3600, m: seconds % 3600 / 60)

sessions = WindowMachines::Sessions.new(GAP)
views = Hash.new(0) # [first, last] => page views

report = lambda do
  while (span = sessions.take_closed)
    first, last = span
    puts "  session #{clock(first)}-#{clock(last)} finished: #{views.delete(span)} views"
  end
end

VIEWS.each do |at|
  span = sessions.insert(at) do |old_span, new_span|
    views[new_span] += views.delete(old_span)
  end
  views[span] += 1
  puts "view at #{clock(at)} -> session #{span.map { |t| clock(t) }.join('-')}"
  report.call if sessions.advance_watermark(at - LAG)
end

# End of the day: nothing more will arrive.
sessions.advance_watermark(2**64 - 1)
report.call
