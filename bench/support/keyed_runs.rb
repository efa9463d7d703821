# frozen_string_literal: true

require "window_machines"
require_relative "invoice_stream"

# One pass of an invoice stream through a tracker, timing the inserts and the
# hand-overs separately. The watermark trails the newest invoice seen by
# InvoiceStream::LATE and moves once every ADVANCE_EVERY events; at the end
# everything is drained.
module KeyedRuns
  ADVANCE_EVERY = 1_000
  Timing = Struct.new(:inserts, :insert_seconds, :handed_over, :handover_seconds, keyword_init: true) do
    def total = insert_seconds + handover_seconds
    def ns_per_insert = insert_seconds * 1e9 / inserts
    def ns_per_handover = handover_seconds * 1e9 / handed_over
  end

  module_function

  def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

  # `stream` is InvoiceStream.generate's; arrays indexed in a while loop keep
  # the loop's own cost small next to the calls being timed.
  def run(stream, tracker)
    keys = stream.event_keys
    times = stream.event_times
    insert_seconds = handover_seconds = 0.0
    handed_over = 0
    newest = 0
    index = 0
    while index < keys.size
      batch_end = [index + ADVANCE_EVERY, keys.size].min
      started = now
      while index < batch_end
        at = times[index]
        tracker.insert(keys[index], at)
        newest = at if at > newest
        index += 1
      end
      insert_seconds += now - started
      started = now
      handed_over += tracker.hand_over(newest - InvoiceStream::LATE)
      handover_seconds += now - started
    end
    started = now
    handed_over += tracker.hand_over(2**64 - 1)
    handover_seconds += now - started
    Timing.new(inserts: keys.size, insert_seconds: insert_seconds,
               handed_over: handed_over, handover_seconds: handover_seconds)
  end

  # The gem's KeyedSessions, handing over through take_closed.
  class Keyed
    def initialize = @tracker = WindowMachines::KeyedSessions.new(InvoiceStream::GAP)
    def insert(key, at) = @tracker.insert(key, at)
    attr_reader :tracker

    def hand_over(watermark)
      return 0 unless watermark.positive?

      @tracker.advance_watermark(watermark)
      count = 0
      count += 1 while @tracker.take_closed
      count
    end
  end

  # What users write without it: a Hash of Sessions, every key swept on each
  # advance, emptied keys deleted so idle partners cost nothing.
  class HashOfSessions
    def initialize
      @sessions = {}
      @watermark = nil
    end

    def insert(key, at)
      (@sessions[key] ||= new_sessions).insert(at)
    end

    def hand_over(watermark)
      return 0 unless watermark.positive?

      @watermark = watermark
      count = 0
      @sessions.delete_if do |_key, sessions|
        sessions.advance_watermark(watermark)
        count += 1 while sessions.take_closed
        sessions.size.zero?
      end
      count
    end

    private

    def new_sessions
      sessions = WindowMachines::Sessions.new(InvoiceStream::GAP)
      sessions.advance_watermark(@watermark) if @watermark
      sessions
    end
  end
end
