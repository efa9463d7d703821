# frozen_string_literal: true

# Invoices from trading partners over a business day, as seconds since it
# began: each partner sends a batch of a few invoices within ten minutes, and
# each invoice arrives up to five minutes late (so out of order, always
# within the 30-minute gap). Generated before anything is timed, from a
# fixed seed; partner keys are frozen Strings made here, so key objects are
# not part of any measurement.
module InvoiceStream
  DAY = 8 * 3600
  BATCH_SPREAD = 600
  LATE = 300
  GAP = 1800
  PER_PARTNER = 3

  module_function

  Stream = Struct.new(:keys, :event_keys, :event_times, keyword_init: true)

  # Partner keys, and each invoice's partner and timestamp in arrival order.
  def generate(partners, seed: 20_261_129)
    random = Random.new(seed)
    keys = Array.new(partners) { |n| "partner-#{n}".freeze }
    events = keys.flat_map do |key|
      start = random.rand(DAY)
      Array.new(PER_PARTNER) { [key, start + random.rand(BATCH_SPREAD)] }
    end
    arrivals = events.map { |_, at| at + random.rand(LATE) }
    order = events.each_index.sort_by { |index| arrivals[index] }
    Stream.new(keys: keys, event_keys: order.map { |index| events[index][0] },
               event_times: order.map { |index| events[index][1] })
  end
end
