# frozen_string_literal: true

require_relative "invoice_stream"

# Many events from few keys, as InvoiceStream::Stream: `events` events over
# an InvoiceStream::DAY, each from one of `keys` frozen Strings drawn at
# random, at a uniformly random time, arriving up to InvoiceStream::LATE late
# (so out of order, and never late for a grace of LATE). Generated before
# anything is timed, from a fixed seed.
module BusyStream
  module_function

  def generate(events, keys, seed: 20_261_201)
    random = Random.new(seed)
    names = Array.new(keys) { |n| "sensor-#{n}".freeze }
    times = Array.new(events) { random.rand(InvoiceStream::DAY) }
    arrivals = times.map { |at| at + random.rand(InvoiceStream::LATE) }
    order = times.each_index.sort_by { |index| arrivals[index] }
    InvoiceStream::Stream.new(keys: names, event_keys: Array.new(events) { names[random.rand(keys)] },
                              event_times: order.map { |index| times[index] })
  end
end
