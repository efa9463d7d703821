# frozen_string_literal: true

# Order totals per store and minute, with two minutes of grace for stragglers.
#
# Tills send their orders over a shaky connection, so an order can reach the
# reporting service a little after later ones. Each minute's window waits
# until the newest order seen is two minutes past its end, then it is
# reported once, with its order count and its total. An order that comes
# later still would change a total already reported, so it is not counted:
# the on_late callable books it as a correction instead.
#
# Run: bundle exec ruby examples/order_totals_per_minute.rb

require "time"
require "window_machines"

MINUTE = 60
GRACE = 2 * 60

def at(clock) = Time.parse("2026-03-16 #{clock} UTC").to_i

def clock(seconds, format = "%H:%M:%S") = Time.at(seconds).utc.strftime(format)

def money(cents) = format("%<units>d.%<cents>02d", units: cents / 100, cents: cents % 100)

def orders(count) = count == 1 ? "1 order" : "#{count} orders"

# store, when the order was placed, amount in cents; in the order they arrived.
ORDERS = [
  ["lisbon", "12:00:05", 1250],
  ["porto", "12:00:20", 800],
  ["lisbon", "12:00:50", 2000],
  ["lisbon", "12:01:10", 450],
  ["porto", "12:00:55", 1500], # out of order, well within the grace
  ["porto", "12:02:30", 990],
  ["lisbon", "12:03:05", 3100],
  ["porto", "12:00:40", 700], # its minute was reported a moment ago: too late
  ["lisbon", "12:01:50", 600], # 12:01 is still waiting: counted
  ["porto", "12:04:15", 1200],
  ["lisbon", "12:05:30", 1800]
].freeze

corrections = []
book_correction = lambda do |store, placed, order, watermark|
  corrections << [store, placed, order[:amount]]
  puts "  late: #{store} order at #{clock(placed)} (watermark #{clock(watermark)}), booked as a correction"
end

totals = WindowMachines::TumblingWindows.new(
  MINUTE,
  grace: GRACE,
  aggregate: { orders: WindowMachines::Aggregate::Count.new, total: WindowMachines::Aggregate::Sum.new(:amount) },
  on_late: book_correction
)

report = lambda do |store, start, _finish, result|
  puts "  minute #{clock(start, '%H:%M')} #{store}: #{orders(result[:orders])}, #{money(result[:total])}"
end

ORDERS.each do |store, placed, amount|
  puts "#{placed} #{store.ljust(6)} #{money(amount).rjust(6)}"
  totals.add(store, at(placed), { amount: amount })
  totals.each_closed(&report)
end

puts "end of the day: the minutes still open"
totals.flush(&report)
corrected = corrections.sum { |_store, _placed, amount| amount }
puts "#{orders(totals.late_count)} too late to count, #{money(corrected)} booked as corrections"

# Prints:
# 12:00:05 lisbon  12.50
# 12:00:20 porto    8.00
# 12:00:50 lisbon  20.00
# 12:01:10 lisbon   4.50
# 12:00:55 porto   15.00
# 12:02:30 porto    9.90
# 12:03:05 lisbon  31.00
#   minute 12:00 lisbon: 2 orders, 32.50
#   minute 12:00 porto: 2 orders, 23.00
# 12:00:40 porto    7.00
#   late: porto order at 12:00:40 (watermark 12:01:05), booked as a correction
# 12:01:50 lisbon   6.00
# 12:04:15 porto   12.00
#   minute 12:01 lisbon: 2 orders, 10.50
# 12:05:30 lisbon  18.00
#   minute 12:02 porto: 1 order, 9.90
# end of the day: the minutes still open
#   minute 12:03 lisbon: 1 order, 31.00
#   minute 12:04 porto: 1 order, 12.00
#   minute 12:05 lisbon: 1 order, 18.00
# 1 order too late to count, 7.00 booked as corrections
