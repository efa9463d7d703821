# frozen_string_literal: true

# Many keys: invoices per trading partner, grouped into sending batches.
#
# Partners send invoices in bursts; 30 minutes of silence ends a batch. One
# KeyedSessions tracks every partner under one watermark and hands over each
# batch as it closes, oldest first, without walking all partners to find
# them; a partner's state is gone once its last batch is handed over. The
# batch sizes live in a Hash keyed by [partner, first, last], moved along by
# insert's block when a batch grows or two merge.
#
# Run: bundle exec ruby examples/partner_batches.rb

require "csv"
require "time"
require "window_machines"

GAP = 30 * 60
LAG = 10 * 60 # invoices may arrive up to ten minutes out of order

def at(clock) = Time.parse("2026-03-16 #{clock} UTC").to_i

def clock(seconds) = Time.at(seconds).utc.strftime("%H:%M")

def invoices(count) = count == 1 ? "1 invoice" : "#{count} invoices"

batches = WindowMachines::KeyedSessions.new(GAP)
sizes = Hash.new(0) # [partner, first, last] => invoices
history = Hash.new { |hash, partner| hash[partner] = [] } # partner => closed batch sizes

report = lambda do
  batches.each_closed do |partner, first, last|
    history[partner] << sizes.delete([partner, first, last])
    average = history[partner].sum.fdiv(history[partner].size)
    puts format("  %-9s batch %s-%s closed: %s (average per batch so far %.1f)",
                partner, clock(first), clock(last), invoices(history[partner].last), average)
  end
end

newest = 0
CSV.foreach(File.join(__dir__, "invoices.csv"), headers: true) do |row|
  partner = row["partner"]
  issued = at(row["issued"])
  first, last = batches.insert(partner, issued) do |(old_first, old_last), (new_first, new_last)|
    sizes[[partner, new_first, new_last]] += sizes.delete([partner, old_first, old_last])
  end
  sizes[[partner, first, last]] += 1
  puts "#{partner} invoice issued #{row['issued']} -> batch #{clock(first)}-#{clock(last)}"
  newest = [newest, issued].max
  report.call if batches.advance_watermark(newest - LAG)
end

puts "end of day"
batches.advance_watermark(2**64 - 1)
report.call
puts "partners still held: #{batches.key_count}"
