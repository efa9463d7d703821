# frozen_string_literal: true

require "window_machines"
require_relative "keyed_runs"

# Trackers for the aggregating-window benchmark (bench/windows.rb), each
# shaped for KeyedRuns.run: `insert(key, at)` for every invoice, and
# `hand_over(watermark)` once every KeyedRuns::ADVANCE_EVERY invoices, then
# once with 2**64 - 1 to drain everything. All of them work in stream time,
# as TumblingWindows and SessionWindows do by default: the watermark trails
# the newest invoice seen by GRACE, moved on every event, so the runner's
# watermark argument only says whether the stream has ended.
#
# GRACE is InvoiceStream::LATE: every invoice arrives less than LATE after
# the newest one before it, so none is late and every tracker must count all
# of them, into identical windows and sessions.
module WindowRuns
  MINUTE = 60
  GRACE = InvoiceStream::LATE
  GAP = InvoiceStream::GAP
  DRAIN = 2**64 - 1

  module_function

  def count = WindowMachines::Aggregate::Count.new

  def tumbling = WindowMachines::TumblingWindows.new(MINUTE, grace: GRACE, aggregate: count)

  def hopping(size) = WindowMachines::HoppingWindows.new(size, MINUTE, grace: GRACE, aggregate: count)

  def sessions = WindowMachines::SessionWindows.new(GAP, grace: GRACE, aggregate: count)

  # What identifies a list of `[key, start, end_or_last, count]` whatever
  # its order (the gem hands over in closing order, the Ruby versions
  # window by window): how many there are, how many distinct windows they
  # name, and a sum of their hashes. Two lists with the same summary hold
  # the same windows with the same counts. It is small, so two runs can be
  # compared without keeping the millions of results of the first alive,
  # for the garbage collector to walk, while the second is timed.
  def summary(results)
    windows = results.map { |key, start, finish, _count| [key, start, finish].hash }.uniq.size
    [results.size, windows, results.sum(&:hash)]
  end

  # Hands over what `tracker` has closed (everything, at DRAIN): how many,
  # each kept in `results` as `[key, start, end_or_last, result]` unless
  # `results` is nil.
  def hand_over(tracker, watermark, results)
    count = 0
    handed = if results
               proc { |key, start, finish, result| results << [key, start, finish, result] }
             else
               proc { count += 1 }
             end
    before = results&.size
    watermark == DRAIN ? tracker.flush(&handed) : tracker.each_closed(&handed)
    results ? results.size - before : count
  end

  # One of the gem's aggregating trackers. With `collect: true` every window
  # handed over is kept as `[key, start, end_or_last, result]`; without, it
  # is only counted, so that timing the inserts is not disturbed by a growing
  # list for the garbage collector to walk.
  class Gem
    attr_reader :tracker, :results, :handed_sizes

    def initialize(tracker, collect:)
      @tracker = tracker
      @results = collect ? [] : nil
      @handed_sizes = []
    end

    def insert(key, at) = @tracker.add(key, at)

    def hand_over(watermark)
      WindowRuns.hand_over(@tracker, watermark, @results).tap { |size| @handed_sizes << size }
    end

    def late_count = @tracker.late_count
  end

  # The gem's TumblingWindows itself (one-minute windows, GRACE, Count),
  # handing over as Gem does: `insert` and `insert_all` are aliases of `add`
  # and `add_all`, so calling them calls the gem with no Ruby method of the
  # benchmark's in between, and single adds and batches compare fairly.
  class DirectTumbling < WindowMachines::TumblingWindows
    attr_reader :results

    alias insert add
    alias insert_all add_all

    def initialize(collect:)
      super(MINUTE, grace: GRACE, aggregate: WindowRuns.count)
      @results = collect ? [] : nil
    end

    def hand_over(watermark) = WindowRuns.hand_over(self, watermark, @results)
  end

  # A tracker that costs nothing: each hand_over hands over, as fresh
  # Arrays, the next of `sizes` results of `columns` (the keys, starts, ends
  # and results another tracker handed over at the same point of the same
  # stream, an Array each). Its time is what any tracker pays in this
  # benchmark around its own work: the loop, a call per event and per
  # advance, reading each event's key (which any keyed tracker hashes; at a
  # million keys that is a cache miss), and collecting the results.
  class Replay
    attr_reader :results

    def initialize(columns, sizes)
      @keys, @starts, @finishes, @values = columns
      @sizes = sizes.dup
      @at = 0
      @results = []
    end

    def insert(key, _at) = key.hash

    def hand_over(_watermark)
      size = @sizes.shift || 0
      results = @results
      (@at...@at + size).each { |n| results << [@keys[n], @starts[n], @finishes[n], @values[n]] }
      @at += size
      size
    end

    def late_count = 0
  end

  # What a Ruby programmer writes for counts per key and tumbling window,
  # written well: window-major, a Hash from window start to a Hash of
  # key => count. Windows close in start order, so a cursor at the oldest
  # window held walks forward over the closed ones only; open windows are
  # never visited. An event whose window has closed is refused, as the gem
  # refuses it.
  class RubyTumbling
    attr_reader :results, :late_count

    def initialize(size)
      @size = size
      @windows = {} # start => { key => count }
      @oldest = nil # the smallest start held
      @newest = nil
      @late_count = 0
      @results = []
    end

    def insert(key, at)
      @newest = at if @newest.nil? || at > @newest
      start = at - (at % @size)
      if start + @size <= @newest - GRACE
        @late_count += 1
        return false
      end

      @oldest = start if @oldest.nil? || start < @oldest
      counts = (@windows[start] ||= Hash.new(0))
      counts[key] += 1
      true
    end

    def hand_over(watermark)
      return drain if watermark == DRAIN

      closed_below = @newest - GRACE
      handed_over = 0
      while @oldest && @oldest + @size <= closed_below
        handed_over += emit(@oldest, @windows.delete(@oldest))
        @oldest = @windows.empty? ? nil : @oldest + @size
      end
      handed_over
    end

    private

    def drain
      handed_over = @windows.keys.sort.sum { |start| emit(start, @windows.delete(start)) }
      @oldest = nil
      handed_over
    end

    def emit(start, counts)
      return 0 unless counts

      finish = start + @size
      results = @results
      counts.each { |key, count| results << [key, start, finish, count] }
      counts.size
    end
  end

  # What a Ruby programmer writes for counts per key and session, written
  # well: a Hash of WindowMachines::Sessions per key, with each key's counts
  # in a Hash by span that insert's block moves along when sessions grow or
  # merge. Instead of visiting every key on each advance, each key is filed
  # under the time its newest session could close (last + gap), and only the
  # keys filed at or below the watermark are looked at; a key filed there
  # whose session has grown since finds nothing to hand over.
  class RubySessions
    attr_reader :results, :late_count

    def initialize(gap)
      @gap = gap
      @by_key = {} # key => [Sessions, { [first, last] => count }]
      @due = {} # last + gap => keys to look at then
      @next_due = nil # every due time below it has been looked at
      @newest = nil
      @late_count = 0
      @results = []
    end

    def insert(key, at)
      @newest = at if @newest.nil? || at > @newest
      # SessionWindows' stream watermark: an event at the stream time is never late.
      if at <= @newest - GRACE - 1
        @late_count += 1
        return false
      end

      sessions, counts = (@by_key[key] ||= [WindowMachines::Sessions.new(@gap), Hash.new(0)])
      span = sessions.insert(at) { |old_span, new_span| counts[new_span] += counts.delete(old_span) }
      counts[span] += 1
      file(key, span[1] + @gap) if span[1] == at # the session's end moved (or it is new)
      true
    end

    def hand_over(watermark)
      return drain if watermark == DRAIN

      closed_to = @newest - GRACE - 1
      handed_over = 0
      while @next_due && @next_due <= closed_to
        @due.delete(@next_due)&.each { |key| handed_over += take_closed(key, closed_to) }
        @next_due = @due.empty? ? nil : @next_due + 1
      end
      handed_over
    end

    private

    def file(key, due)
      (@due[due] ||= []) << key
      @next_due = due if @next_due.nil? || due < @next_due
    end

    def take_closed(key, watermark)
      sessions, counts = @by_key[key]
      return 0 unless sessions

      sessions.advance_watermark(watermark)
      handed_over = 0
      while (span = sessions.take_closed)
        @results << [key, span[0], span[1], counts.delete(span)]
        handed_over += 1
      end
      @by_key.delete(key) if sessions.size.zero?
      handed_over
    end

    def drain
      handed_over = 0
      @by_key.each do |key, (sessions, counts)|
        sessions.each do |first, last|
          @results << [key, first, last, counts[[first, last]]]
          handed_over += 1
        end
      end
      @by_key.clear
      @due.clear
      @next_due = nil
      handed_over
    end
  end
end
