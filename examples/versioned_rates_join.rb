# frozen_string_literal: true

# Orders priced at the exchange rate in force when they were placed, while
# rate updates reach the service late and out of order.
#
# Rates go into a VersionedTable keyed by currency, each from the moment it
# took effect, so an order placed at 09:25 is converted at the rate valid at
# 09:25, whatever arrived since. A rate that arrives late still goes into
# the table's history, and every order processed after it gets it. The table
# keeps an hour of history: a rate older than that is refused, and an order
# older than that finds a rate only if its currency's latest rate is older
# still (the latest rate is kept however old).
#
# Run: bundle exec ruby examples/versioned_rates_join.rb

require "time"
require "window_machines"

HISTORY = 60 * 60 # an hour of history, and of grace for late rate updates

def at(clock) = Time.parse("2026-03-16 #{clock} UTC").to_i

def clock(seconds) = Time.at(seconds).utc.strftime("%H:%M")

def money(cents) = format("%<units>d.%<cents>02d", units: cents / 100, cents: cents % 100)

# In the order they arrived: rate updates (currency, in force from, USD for
# one unit) and orders (number, currency, placed at, amount in cents).
ARRIVALS = [
  [:rate, "EUR", "09:00", "1.0800"],
  [:rate, "GBP", "09:00", "1.2600"],
  [:rate, "CHF", "08:30", "1.1200"],
  [:order, 1, "EUR", "09:10", 12_000],
  [:rate, "EUR", "09:30", "1.0850"],
  [:order, 2, "EUR", "09:40", 8_000],
  [:rate, "EUR", "09:20", "1.0820"], # late: 09:30's rate came first
  [:order, 3, "EUR", "09:25", 5_000], # after the late rate, so it gets it
  [:order, 4, "EUR", "09:15", 2_000],
  [:order, 5, "GBP", "09:45", 10_000],
  [:rate, "GBP", "10:00", "1.2650"],
  [:rate, "EUR", "11:00", "1.0900"], # an hour past 10:00: history before 10:00 is let go
  [:order, 6, "EUR", "09:50", 4_000],
  [:order, 7, "GBP", "10:30", 3_000],
  [:order, 8, "CHF", "09:35", 6_000], # CHF's 08:30 rate is its latest: never let go
  [:rate, "EUR", "09:55", "1.0830"] # more than an hour behind 11:00: refused
].freeze

rates = WindowMachines::VersionedTable.new(HISTORY, on_late: :drop)

ARRIVALS.each do |kind, *fields|
  if kind == :rate
    currency, from, rate = fields
    answer = case rates.put(currency, rate, at(from))
             in nil then "the latest"
             in Integer => valid_to then "late, filed in history until #{clock(valid_to)}"
             in false then "refused: over an hour before the newest rate (#{clock(rates.stream_time)})"
             end
    puts "rate  #{currency} #{rate} from #{from}: #{answer}"
  else
    number, currency, placed, cents = fields
    rate = rates.get(currency, at(placed))
    priced = if rate
               "at #{rate} = USD #{money((cents * rate.to_r).round)}"
             else
               "no rate: over an hour before the newest rate (#{clock(rates.stream_time)})"
             end
    puts "order #{number} #{currency} #{money(cents).rjust(6)} placed #{placed}: #{priced}"
  end
end

cutoff = rates.stream_time - HISTORY
puts "history a query at #{clock(cutoff)} or later can reach:"
%w[EUR GBP CHF].each do |currency|
  spans = rates.history(currency).map { |rate, from, to| "#{rate} #{clock(from)}-#{to ? clock(to) : 'now'}" }
  puts "  #{currency}: #{spans.join(', ')}"
end
puts "#{rates.late_count} rate refused"

# Prints:
# rate  EUR 1.0800 from 09:00: the latest
# rate  GBP 1.2600 from 09:00: the latest
# rate  CHF 1.1200 from 08:30: the latest
# order 1 EUR 120.00 placed 09:10: at 1.0800 = USD 129.60
# rate  EUR 1.0850 from 09:30: the latest
# order 2 EUR  80.00 placed 09:40: at 1.0850 = USD 86.80
# rate  EUR 1.0820 from 09:20: late, filed in history until 09:30
# order 3 EUR  50.00 placed 09:25: at 1.0820 = USD 54.10
# order 4 EUR  20.00 placed 09:15: at 1.0800 = USD 21.60
# order 5 GBP 100.00 placed 09:45: at 1.2600 = USD 126.00
# rate  GBP 1.2650 from 10:00: the latest
# rate  EUR 1.0900 from 11:00: the latest
# order 6 EUR  40.00 placed 09:50: no rate: over an hour before the newest rate (11:00)
# order 7 GBP  30.00 placed 10:30: at 1.2650 = USD 37.95
# order 8 CHF  60.00 placed 09:35: at 1.1200 = USD 67.20
# rate  EUR 1.0830 from 09:55: refused: over an hour before the newest rate (11:00)
# history a query at 10:00 or later can reach:
#   EUR: 1.0850 09:30-11:00, 1.0900 11:00-now
#   GBP: 1.2650 10:00-now
#   CHF: 1.1200 08:30-now
# 1 rate refused
