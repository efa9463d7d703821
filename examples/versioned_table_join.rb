# frozen_string_literal: true

# Shipping labels from two tables that change independently: customers'
# names and customers' addresses, each fed by its own system, each update
# stamped with when it took effect and delivered late at times.
#
# Both tables are VersionedTables, and the join emits a label whenever an
# update on either side becomes its key's latest version (`put` answers
# nil) and the other side has a value: the label joins the two latest
# versions. An update that arrives after a newer one for the same customer
# (`put` answers an Integer) changes no latest version, so it emits
# nothing: a label built from it would carry a stale address and overwrite
# the correct label downstream. Removing an address withdraws the label,
# unless the removal too is out of order.
#
# Run: bundle exec ruby examples/versioned_table_join.rb

require "time"
require "window_machines"

HISTORY = 60 * 60

def at(clock) = Time.parse("2026-03-16 #{clock} UTC").to_i

def clock(seconds) = Time.at(seconds).utc.strftime("%H:%M")

# In the order they arrived: [table, customer, in force from, value], with
# no value for an address removed.
UPDATES = [
  [:names, "c1", "09:00", "Ana Lima"],
  [:addresses, "c1", "09:00", "Rua Augusta 10, Lisbon"],
  [:names, "c2", "09:02", "Ben Ode"],
  [:addresses, "c1", "09:30", "Rua do Ouro 5, Lisbon"],
  [:addresses, "c1", "09:10", "Avenida da Liberdade 2, Lisbon"], # an older move, reported late
  [:addresses, "c2", "09:05", "Kastanienallee 3, Berlin"],
  [:names, "c1", "09:40", "Ana Lima Sousa"],
  [:names, "c2", "09:01", "Benedikt Ode"], # out of order: 09:02's name is newer
  [:addresses, "c2", "09:50"], # moved away, no address yet
  [:addresses, "c1", "09:20"] # out of order: 09:30's address is newer
].freeze

names = WindowMachines::VersionedTable.new(HISTORY)
addresses = WindowMachines::VersionedTable.new(HISTORY)
labels = {}

UPDATES.each do |side, customer, from, value|
  table, other = side == :names ? [names, addresses] : [addresses, names]
  outcome = if value
              valid_to = table.put(customer, value, at(from))
              found = other.version(customer) # [value, valid_from, nil], or nil
              if valid_to
                "nothing: out of order, #{clock(valid_to)}'s is newer"
              elsif found
                name, address = side == :names ? [value, found[0]] : [found[0], value]
                labels[customer] = "#{name}, #{address}"
                # A label holds from when the newer of its two versions took effect.
                "label from #{clock([at(from), found[1]].max)}: #{labels[customer]}"
              else
                "nothing: no #{side == :names ? 'address' : 'name'} yet"
              end
            else
              ended = table.delete(customer, at(from)) # [value, valid_from, valid_to], or nil
              if ended.nil?
                "nothing: no address to remove"
              elsif ended[2]
                "nothing: out of order, #{clock(ended[2])}'s is newer"
              elsif labels.delete(customer)
                "label withdrawn"
              else
                "nothing: there was no label"
              end
            end
  puts format("%-9s %s %s %-30s -> %s", side, customer, from, value || "(removed)", outcome)
end

puts "labels at the end:"
labels.each { |customer, label| puts "  #{customer}: #{label}" }
joined = %w[c1 c2].to_h { |customer| [customer, [names.get(customer), addresses.get(customer)]] }
                  .reject { |_customer, sides| sides.include?(nil) }
                  .transform_values { |sides| sides.join(", ") }
puts "the same as joining the latest names and addresses: #{joined == labels}"

# Prints:
# names     c1 09:00 Ana Lima                       -> nothing: no address yet
# addresses c1 09:00 Rua Augusta 10, Lisbon         -> label from 09:00: Ana Lima, Rua Augusta 10, Lisbon
# names     c2 09:02 Ben Ode                        -> nothing: no address yet
# addresses c1 09:30 Rua do Ouro 5, Lisbon          -> label from 09:30: Ana Lima, Rua do Ouro 5, Lisbon
# addresses c1 09:10 Avenida da Liberdade 2, Lisbon -> nothing: out of order, 09:30's is newer
# addresses c2 09:05 Kastanienallee 3, Berlin       -> label from 09:05: Ben Ode, Kastanienallee 3, Berlin
# names     c1 09:40 Ana Lima Sousa                 -> label from 09:40: Ana Lima Sousa, Rua do Ouro 5, Lisbon
# names     c2 09:01 Benedikt Ode                   -> nothing: out of order, 09:02's is newer
# addresses c2 09:50 (removed)                      -> label withdrawn
# addresses c1 09:20 (removed)                      -> nothing: out of order, 09:30's is newer
# labels at the end:
#   c1: Ana Lima Sousa, Rua do Ouro 5, Lisbon
# the same as joining the latest names and addresses: true
