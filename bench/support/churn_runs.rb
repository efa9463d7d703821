# frozen_string_literal: true

require "objspace"
require "window_machines"

# Release/re-hold workloads for KeyedSessions, and the measurement that shows
# whether a tracker's cost and memory depend on its history. Each workload
# is in the same state (the same keys held) at the end of every cycle, so a
# later stretch of cycles doing more work, or a later memsize_of reading
# being larger, can only come from what the tracker remembers of earlier
# cycles.
module ChurnRuns
  # Cycles between two clock readings. Small enough that a tracker slowing
  # down badly still notices the budget running out soon after it does.
  CHUNK = 100

  module_function

  def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

  # One key, held by one session and released by take_closed every cycle.
  class OneKey
    DESCRIPTION = 'one key "user" held and released each cycle ' \
                  "(a cycle: insert, advance_watermark, take_closed)"

    attr_reader :tracker

    def initialize
      @tracker = WindowMachines::KeyedSessions.new(1)
      @key = "user"
    end

    def run(from, count)
      tracker = @tracker
      key = @key
      cycle = from
      stop = from + count
      while cycle < stop
        at = cycle * 10
        tracker.insert(key, at)
        tracker.advance_watermark(at + 1)
        tracker.take_closed
        cycle += 1
      end
    end

    def holds_expected? = tracker.size.zero? && tracker.key_count.zero?
  end

  # Twenty partners that send something every day, always in the same order;
  # each day's sessions close at the end of the day, releasing every key.
  class Partners
    COUNT = 20
    DESCRIPTION = "#{COUNT} partner keys each held and released each cycle, in a fixed order " \
                  "(a cycle, one day: #{COUNT} inserts, advance_watermark, #{COUNT} take_closed)".freeze

    attr_reader :tracker

    def initialize
      @tracker = WindowMachines::KeyedSessions.new(1)
      @keys = Array.new(COUNT) { |n| "partner-#{n}".freeze }.freeze
    end

    def run(from, count)
      tracker = @tracker
      keys = @keys
      day = from
      stop = from + count
      while day < stop
        at = day * 10
        index = 0
        while index < COUNT
          tracker.insert(keys[index], at)
          index += 1
        end
        tracker.advance_watermark(at + 1)
        index = 0
        while index < COUNT
          tracker.take_closed
          index += 1
        end
        day += 1
      end
    end

    def holds_expected? = tracker.size.zero? && tracker.key_count.zero?
  end

  # POPULATION keys held at all times. Each cycle holds one more key and
  # releases the one held longest. Keys come from a pool of POPULATION + AWAY,
  # so for the first AWAY cycles the key held is new, and after that it is
  # the one released AWAY cycles earlier: every key keeps coming back.
  class Steady
    POPULATION = 10_000
    AWAY = 1_000
    POOL = POPULATION + AWAY
    DESCRIPTION = "#{POPULATION} keys held; each cycle holds a returning key (new for the first #{AWAY}) " \
                  "and releases the oldest (a cycle: insert, advance_watermark, take_closed)".freeze

    attr_reader :tracker

    def initialize
      @tracker = WindowMachines::KeyedSessions.new(1)
      @keys = Array.new(POOL) { |n| "customer-#{n}".freeze }.freeze
      # Key n is held at time n, so at the end of cycle c keys c+1..c+POPULATION are.
      POPULATION.times { |n| @tracker.insert(@keys[n], n) }
    end

    def run(from, count)
      tracker = @tracker
      keys = @keys
      cycle = from
      stop = from + count
      while cycle < stop
        tracker.insert(keys[(cycle + POPULATION) % POOL], cycle + POPULATION)
        tracker.advance_watermark(cycle + 1)
        tracker.take_closed
        cycle += 1
      end
    end

    def holds_expected? = tracker.size == POPULATION && tracker.key_count == POPULATION
  end

  # Timings and memsize_of readings of one workload's cycles. Chunk n covers
  # chunk_cycles[n] cycles in chunk_seconds[n]; memsizes[n] is read after it.
  # The first chunk is the one untimed cycle whose memsize is the baseline.
  Run = Struct.new(:planned, :chunk_cycles, :chunk_seconds, :memsizes, keyword_init: true) do
    def done = chunk_cycles.sum
    def stopped? = done < planned

    # ns per cycle over the part of the cycles done from fraction `from` to
    # `to` of them, to the nearest chunk.
    def ns_per_cycle(from, to)
      timed = chunk_cycles.size - 1
      first = 1 + (timed * from).floor
      last = [1 + (timed * to).ceil, first + 1].max
      chunk_seconds[first...last].sum * 1e9 / chunk_cycles[first...last].sum
    end

    def memsize_start = memsizes.first
    def memsize_middle = memsizes[memsizes.size / 2]
    def memsize_end = memsizes.last
  end

  # Runs `cycles` cycles of a fresh `workload_class` instance, stopping early
  # if `deadline` (a ChurnRuns.now value) passes. A throwaway instance runs
  # first, so that method caches and Ruby's heap are warm without giving
  # the measured tracker any history.
  def measure(workload_class, cycles, deadline:, warmup: [cycles / 10, 1_000].min)
    workload_class.new.run(0, warmup)
    workload = workload_class.new
    GC.start
    workload.run(0, 1)
    run = Run.new(planned: cycles, chunk_cycles: [1], chunk_seconds: [0.0],
                  memsizes: [ObjectSpace.memsize_of(workload.tracker)])
    done = 1
    while done < cycles && now < deadline
      count = [CHUNK, cycles - done].min
      started = now
      workload.run(done, count)
      run.chunk_seconds << (now - started)
      run.chunk_cycles << count
      run.memsizes << ObjectSpace.memsize_of(workload.tracker)
      done += count
    end
    raise "#{workload_class}: the tracker does not hold what it should" unless workload.holds_expected?

    run
  end

  # A key whose every instance has the same hash value, so that finding one
  # means comparing with eql? against the others: the worst case a Hash
  # handles, and the one KeyedSessions must handle as well.
  class CollidingKey
    attr_reader :id

    def initialize(id)
      @id = id
    end

    def hash = 0

    def eql?(other)
      other.is_a?(CollidingKey) && id == other.id
    end
    alias == eql?
  end

  # Seconds to store every key anew, then to store each again (found this
  # time), in a Hash and in a KeyedSessions, with the same key objects.
  Collisions = Struct.new(:keys, :hash_new, :hash_again, :tracker_new, :tracker_again, keyword_init: true)

  def collisions(count)
    keys = Array.new(count) { |n| CollidingKey.new(n) }.freeze
    hash = {}
    hash_new = timed { store_all(hash, keys, 0) }
    hash_again = timed { store_all(hash, keys, count) }
    raise "Hash: #{hash.size} keys, not #{count}" unless hash.size == count

    # A gap wider than every timestamp, so the second insert of a key joins
    # its session rather than starting another.
    tracker = WindowMachines::KeyedSessions.new(4 * count)
    tracker_new = timed { insert_all(tracker, keys, 0) }
    tracker_again = timed { insert_all(tracker, keys, count) }
    unless tracker.key_count == count && tracker.size == count
      raise "KeyedSessions: #{tracker.key_count} keys, #{tracker.size} sessions, not #{count}"
    end

    Collisions.new(keys: count, hash_new: hash_new, hash_again: hash_again,
                   tracker_new: tracker_new, tracker_again: tracker_again)
  end

  def timed
    GC.start
    started = now
    yield
    now - started
  end

  def store_all(hash, keys, offset)
    index = 0
    while index < keys.size
      hash[keys[index]] = offset + index
      index += 1
    end
  end

  def insert_all(tracker, keys, offset)
    index = 0
    while index < keys.size
      tracker.insert(keys[index], offset + index)
      index += 1
    end
  end

  private_class_method :timed, :store_all, :insert_all
end
