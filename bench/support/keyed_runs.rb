# frozen_string_literal: true

require "window_machines"
require_relative "invoice_stream"

# One pass of an invoice stream through a tracker, timing the inserts and the
# hand-overs separately. The watermark trails the newest invoice seen by
# InvoiceStream::LATE and moves once every ADVANCE_EVERY events; at the end
# everything is drained. `run` inserts one event at a time, `run_batches`
# each stretch of ADVANCE_EVERY events with one batch call.
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
    timed((0...keys.size).step(ADVANCE_EVERY), tracker, keys.size) do |index, newest|
      stretch_end = [index + ADVANCE_EVERY, keys.size].min
      while index < stretch_end
        at = times[index]
        tracker.insert(keys[index], at)
        newest = at if at > newest
        index += 1
      end
      newest
    end
  end

  # `rounds` timings of each of two jobs, `[[one, other], ...]`, alternating
  # which goes first, each run after a full GC so that none pays for what
  # ran before it.
  def alternating(rounds, one, other)
    Array.new(rounds) do |round|
      jobs = round.odd? ? [other, one] : [one, other]
      timings = jobs.map do |job|
        GC.start
        job.call
      end
      round.odd? ? timings.reverse : timings
    end
  end

  # The stream cut into the stretches `run` inserts between two hand-overs,
  # each as [keys, timestamps]: what a consumer receiving batches is given.
  # Made once, before anything is timed.
  def slices(stream)
    stream.event_keys.each_slice(ADVANCE_EVERY).zip(stream.event_times.each_slice(ADVANCE_EVERY))
  end

  # `run` with each slice inserted by one `tracker.insert_all(keys, times)`,
  # and the same hand-overs at the same points. The newest timestamp of a
  # slice is found inside the timed region, as `run` finds it.
  def run_batches(slices, tracker)
    timed(slices, tracker, slices.sum { |keys, _times| keys.size }) do |(keys, times), newest|
      tracker.insert_all(keys, times)
      [times.max, newest].max
    end
  end

  # Inserts each of `stretches` with the block (given the stretch and the
  # newest timestamp so far, it returns the newest after it), then hands
  # over what the watermark trailing the newest by InvoiceStream::LATE has
  # closed; at the end drains everything. Inserts and hand-overs are timed
  # apart.
  def timed(stretches, tracker, inserts)
    insert_seconds = handover_seconds = 0.0
    handed_over = 0
    newest = 0
    stretches.each do |stretch|
      started = now
      newest = yield(stretch, newest)
      insert_seconds += now - started
      started = now
      handed_over += tracker.hand_over(newest - InvoiceStream::LATE)
      handover_seconds += now - started
    end
    started = now
    handed_over += tracker.hand_over(2**64 - 1)
    handover_seconds += now - started
    Timing.new(inserts: inserts, insert_seconds: insert_seconds,
               handed_over: handed_over, handover_seconds: handover_seconds)
  end

  # Advances a KeyedSessions `tracker` to `watermark` and takes what closed:
  # how many, each kept in `results` unless `results` is nil.
  def hand_over(tracker, watermark, results = nil)
    return 0 unless watermark.positive?

    tracker.advance_watermark(watermark)
    count = 0
    while (closed = tracker.take_closed)
      results&.push(closed)
      count += 1
    end
    count
  end

  # The gem's KeyedSessions, handing over through take_closed.
  class Keyed
    def initialize = @tracker = WindowMachines::KeyedSessions.new(InvoiceStream::GAP)
    def insert(key, at) = @tracker.insert(key, at)
    attr_reader :tracker

    def hand_over(watermark) = KeyedRuns.hand_over(@tracker, watermark)
  end

  # KeyedSessions itself, handing over as Keyed does: `insert` and
  # `insert_all` are the gem's own methods, with no Ruby method of the
  # benchmark's in between (Keyed's `insert` is one, a call per event that
  # only single inserts would pay), so single inserts and batches compare
  # fairly. With `collect: true`, keeps what it hands over, as Keyed.
  class Direct < WindowMachines::KeyedSessions
    attr_reader :results

    def initialize(collect: false)
      super(InvoiceStream::GAP)
      @results = collect ? [] : nil
    end

    def hand_over(watermark) = KeyedRuns.hand_over(self, watermark, @results)
  end

  # A tracker that does nothing: its time in `run` is the loop's own, reading
  # the stream and making a call per event, and in `run_batches` a call per
  # slice.
  class Idle
    def insert(_key, _at) = true
    def insert_all(keys, _times) = keys.size
    def hand_over(_watermark) = 0
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
