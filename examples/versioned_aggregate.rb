# frozen_string_literal: true

# The total of the current prices per category, from a product table whose
# updates arrive out of order.
#
# Each product's versions go into a VersionedTable. The totals follow the
# latest version of each product only, so an update is applied only when
# `put` says it became the latest (nil). An update older than the latest
# (put answers the Integer time its successor took effect) goes into the
# table's history and leaves the totals alone: applying it would put a
# stale price back. Deletes work the same way: `delete` answers the version
# it ended, and that version was the current one only if it had no
# successor. Updates more than half an hour behind the newest are refused.
#
# Run: bundle exec ruby examples/versioned_aggregate.rb

require "time"
require "window_machines"

HISTORY = 30 * 60

def at(clock) = Time.parse("2026-03-16 #{clock} UTC").to_i

def clock(seconds) = Time.at(seconds).utc.strftime("%H:%M")

def money(cents) = format("%<units>d.%<cents>02d", units: cents / 100, cents: cents % 100)

# In the order they arrived: [sku, in force from, category, price in cents],
# or [sku, removed at] for a product taken off sale.
UPDATES = [
  ["tea-01", "09:00", "tea", 450],
  ["tea-02", "09:00", "tea", 600],
  ["mug-01", "09:01", "mugs", 1200],
  ["tea-01", "09:10", "tea", 480],
  ["tea-01", "09:05", "tea", 470], # out of order: 09:10's price is current
  ["mug-01", "09:20", "mugs", 1100],
  ["tea-02", "09:25", "gifts", 650], # moves to another category
  ["mug-01", "09:15", "mugs", 1150], # out of order
  ["mug-01", "09:18"], # out of order too: taken off at 09:18, back on sale at 09:20
  ["tea-01", "09:30"], # taken off sale
  ["tea-02", "08:55", "tea", 620] # more than half an hour behind 09:30: refused
].freeze

products = WindowMachines::VersionedTable.new(HISTORY, on_late: :drop)
totals = Hash.new(0)
move = lambda do |product, sign|
  totals[product[:category]] += sign * product[:price] if product
end

UPDATES.each do |sku, from, category, price|
  if category
    product = { category: category, price: price }
    current = products.get(sku)
    answer = case products.put(sku, product, at(from))
             in nil
               move.call(current, -1)
               move.call(product, +1)
               "#{category} #{money(price)}, current"
             in Integer => valid_to then "#{category} #{money(price)}, out of order (until #{clock(valid_to)}): skipped"
             in false then "refused: over half an hour before #{clock(products.stream_time)}"
             end
  else
    answer = case products.delete(sku, at(from))
             in [product, _valid_from, nil]
               move.call(product, -1)
               "removed, was current"
             in [_product, _valid_from, Integer => valid_to] then "removed, out of order (until #{clock(valid_to)}): skipped"
             in nil then "removed, nothing to remove"
             end
  end
  summary = totals.map { |name, cents| "#{name} #{money(cents)}" }.join(", ")
  puts format("%-6s %s  %-48s totals: %s", sku, from, answer, summary)
end

recounted = totals.transform_values { 0 }
UPDATES.map(&:first).uniq.each do |sku|
  product = products.get(sku)
  recounted[product[:category]] += product[:price] if product
end
puts "totals match the latest version of every product: #{recounted == totals}"
puts "#{products.late_count} update refused; #{products.version_count} versions held, tombstones included"

# Prints:
# tea-01 09:00  tea 4.50, current                                totals: tea 4.50
# tea-02 09:00  tea 6.00, current                                totals: tea 10.50
# mug-01 09:01  mugs 12.00, current                              totals: tea 10.50, mugs 12.00
# tea-01 09:10  tea 4.80, current                                totals: tea 10.80, mugs 12.00
# tea-01 09:05  tea 4.70, out of order (until 09:10): skipped    totals: tea 10.80, mugs 12.00
# mug-01 09:20  mugs 11.00, current                              totals: tea 10.80, mugs 11.00
# tea-02 09:25  gifts 6.50, current                              totals: tea 4.80, mugs 11.00, gifts 6.50
# mug-01 09:15  mugs 11.50, out of order (until 09:20): skipped  totals: tea 4.80, mugs 11.00, gifts 6.50
# mug-01 09:18  removed, out of order (until 09:20): skipped     totals: tea 4.80, mugs 11.00, gifts 6.50
# tea-01 09:30  removed, was current                             totals: tea 0.00, mugs 11.00, gifts 6.50
# tea-02 08:55  refused: over half an hour before 09:30          totals: tea 0.00, mugs 11.00, gifts 6.50
# totals match the latest version of every product: true
# 1 update refused; 10 versions held, tombstones included
