# frozen_string_literal: true

require_relative "streams"
require_relative "workload"

# The operations the issue lists, each over a stream from Streams; and the
# batch calls against the single calls they replace, over BATCH_EVENTS.
module Workloads
  SIZE = 60_000
  SLIDE = 10_000
  LATENESS = 5_000
  GAP = Streams::GAP
  BATCH_EVENTS = 1_000_000

  module_function

  def all
    [tumbling, sliding(2, target: 1.8), sliding(32, target: nil), advance, closes,
     in_order, bursty, out_of_order, bridging]
  end

  # Made after `all`, so that its streams are the ones they always were.
  def batches
    [tumbling_starts, insert_all]
  end

  def divmod(stream, divisor)
    -> { stream.map { |timestamp| timestamp.divmod(divisor) } }
  end

  def tumbling
    stream = Streams.out_of_order
    Workload.new(name: "tumbling", events: stream.size, target: 1.2, floor: divmod(stream, SIZE),
                 bind: ->(api) { -> { stream.map { |timestamp| api.tumbling(timestamp, SIZE) } } })
  end

  def sliding(windows, target:)
    stream = Streams.out_of_order
    width = windows * SLIDE
    Workload.new(name: "sliding, #{windows} windows", events: stream.size, target: target,
                 floor: divmod(stream, SLIDE),
                 bind: ->(api) { -> { stream.map { |timestamp| api.sliding(timestamp, width, SLIDE) } } })
  end

  # A fresh watermark per iteration of EVENTS events; one in ten does not move it.
  def advance
    stream = Streams.out_of_order
    Workload.new(name: "Watermark#advance", events: stream.size, target: 0.9, floor: divmod(stream, SIZE),
                 bind: lambda { |api|
                   lambda {
                     watermark = api::Watermark.new
                     stream.map { |timestamp| watermark.advance(timestamp) }
                   }
                 })
  end

  # The tumbling window of each event, as [start, finish]; about half have
  # closed. The floor destructures the pairs the same way.
  def closes
    windows = Streams.out_of_order.map do |timestamp|
      start = timestamp - (timestamp % SIZE)
      [start, start + SIZE]
    end
    value = windows[windows.size / 2].last + LATENESS
    Workload.new(name: "Watermark#closes?", events: windows.size, target: 0.9,
                 floor: -> { windows.map { |start, _finish| start.divmod(SIZE) } },
                 bind: lambda { |api|
                   watermark = api::Watermark.new(value)
                   -> { windows.map { |start, finish| watermark.closes?(start, finish, LATENESS) } }
                 })
  end

  # A fresh tracker per iteration of EVENTS events, all in one session.
  def in_order
    inserts("Sessions#insert, in order", Streams.in_order, target: 1.3)
  end

  # As in_order, with one event in ten arriving after its successor.
  def out_of_order
    inserts("Sessions#insert, 10% out of order", Streams.out_of_order, target: nil)
  end

  def inserts(name, stream, target:)
    Workload.new(name: name, events: stream.size, target: target, floor: divmod(stream, GAP),
                 bind: lambda { |api|
                   lambda {
                     sessions = api::Sessions.new(GAP)
                     stream.map { |timestamp| sessions.insert(timestamp) }
                   }
                 })
  end

  # Sessions of 10 events; after each, the watermark moves to its last event,
  # which closes the one before, and take_closed is called until nil. A fresh
  # tracker per iteration of EVENTS events.
  def bursty
    bursts = Streams.bursts
    Workload.new(name: "bursty stream, per event", events: bursts.sum(&:size), target: 1.6,
                 floor: -> { bursts.map { |burst| burst.map { |timestamp| timestamp.divmod(GAP) } } },
                 bind: ->(api) { -> { run_bursts(api::Sessions.new(GAP), bursts) } })
  end

  def run_bursts(sessions, bursts)
    bursts.map do |burst|
      burst.each { |timestamp| sessions.insert(timestamp) }
      sessions.advance_watermark(burst.last)
      closed = []
      while (span = sessions.take_closed)
        closed << span
      end
      closed
    end
  end

  # Each iteration dups a tracker holding 32 one-event sessions (built
  # untimed), then 31 inserts each bridge two sessions, newest first, until
  # one is left. The dup is timed: 1/31 of it is in each insert.
  def bridging
    starts, bridges = Streams.sessions_to_bridge
    Workload.new(name: "Sessions#insert, bridging", events: bridges.size, target: nil, floor: divmod(bridges, GAP),
                 bind: lambda { |api|
                   template = api::Sessions.new(GAP)
                   starts.each { |timestamp| template.insert(timestamp) }
                   lambda {
                     sessions = template.dup
                     bridges.map { |timestamp| sessions.insert(timestamp) }
                   }
                 })
  end

  # WindowMachines.tumbling_starts over BATCH_EVENTS timestamps, 10% out of
  # order, against `tumbling` (the pair it returns) for each; both build an
  # Array of BATCH_EVENTS results.
  def tumbling_starts
    stream = Streams.out_of_order(BATCH_EVENTS)
    BatchWorkload.new(name: "WindowMachines.tumbling_starts", events: stream.size, target: 0.2,
                      read: -> { stream.map { |timestamp| timestamp } },
                      single: -> { stream.map { |timestamp| WindowMachines.tumbling(timestamp, SIZE) } },
                      batch: -> { WindowMachines.tumbling_starts(stream, SIZE) },
                      same: ->(windows, starts) { windows.map(&:first) == starts })
  end

  # Sessions#insert_all of BATCH_EVENTS in-order timestamps (one session)
  # into a fresh tracker, against an insert for each; the single calls'
  # spans are dropped, as the batch call returns only a count.
  def insert_all
    stream = Streams.in_order(BATCH_EVENTS)
    BatchWorkload.new(name: "Sessions#insert_all, in order", events: stream.size, target: 0.25,
                      read: -> { stream.each { |timestamp| timestamp } },
                      single: lambda {
                        sessions = WindowMachines::Sessions.new(GAP)
                        stream.each { |timestamp| sessions.insert(timestamp) }
                        sessions
                      },
                      batch: lambda {
                        sessions = WindowMachines::Sessions.new(GAP)
                        raise "insert_all applied too few" unless sessions.insert_all(stream) == stream.size

                        sessions
                      },
                      same: ->(one, other) { one == other && one.to_a == [[stream.first, stream.last]] })
  end

  private_class_method :divmod, :inserts, :run_bursts, :tumbling_starts, :insert_all
end
