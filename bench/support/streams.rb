# frozen_string_literal: true

# Timestamps for the benchmarks, generated once before anything is timed:
# milliseconds around a recent epoch, all Fixnums, from a fixed seed.
module Streams
  EPOCH = 1_700_000_000_000
  # Events in each stream, so each benchmark iteration handles this many.
  EVENTS = 1_000
  # A session gap of 30 s; events within a session at most 3 s apart.
  GAP = 30_000
  STEP = 1..3_000
  # Sessions in the bursty stream last 10 events.
  BURST = 10

  RANDOM = Random.new(20_240_101)
  private_constant :RANDOM

  module_function

  # Strictly increasing, no two events more than STEP apart: one long session.
  def in_order(events = EVENTS, from: EPOCH)
    Array.new(events) { from += RANDOM.rand(STEP) }
  end

  # in_order, with one event in ten arriving just after its successor, which
  # is at most STEP (so within the gap) later.
  def out_of_order(events = EVENTS)
    stream = in_order(events)
    (0...events).step(10) do |index|
      swap = index + RANDOM.rand(9)
      stream[swap], stream[swap + 1] = stream[swap + 1], stream[swap]
    end
    stream
  end

  # EVENTS / BURST bursts of BURST events each, more than three gaps apart.
  def bursts
    from = EPOCH
    Array.new(EVENTS / BURST) do
      burst = in_order(BURST, from: from)
      from = burst.last + (3 * GAP)
      burst
    end
  end

  # 32 one-event sessions two gaps apart (the most a tracker holds), and the
  # 31 events that bridge them, newest pair first, back into one session.
  def sessions_to_bridge
    starts = Array.new(32) { |index| EPOCH + (2 * GAP * index) }
    bridges = starts.each_cons(2).map { |older, _newer| older + GAP }.reverse
    [starts, bridges]
  end
end
