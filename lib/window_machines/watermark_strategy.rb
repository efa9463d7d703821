# frozen_string_literal: true

module WindowMachines
  # A watermark that follows real sources: the largest timestamp seen per
  # source, less a bounded lag, and the minimum of that over the sources
  # still sending, as Flink's `WatermarkStrategy.forBoundedOutOfOrderness`
  # `.withIdleness` and Kafka Streams' per-partition stream time do. Push it
  # into a {Watermark} or a tracker with {#advance}.
  #
  # - {#observe} records an event's timestamp for its source (a Kafka
  #   partition, a file, a device: any object a Hash accepts as a key; nil
  #   is the default source, for a single stream).
  # - {#value} is nil until a source has been seen; then the minimum over
  #   the active sources of `largest seen - lag`, saturating at 0 while the
  #   timestamps are still smaller than the lag: the oldest timestamp still
  #   on time, one more than Flink's watermark. Like every watermark in the
  #   gem it never moves back: a source that is new, or returns from
  #   idleness, behind the watermark holds it where it is until it catches
  #   up (its older events are late for the trackers, not refused here).
  # - {#advance} pushes it in each tracker's terms, so that an event exactly
  #   `lag` behind the newest is on time for every one of them: the value
  #   itself into windows (which close a window once its end is at or below
  #   their watermark, as Flink fires it), one less (Flink's watermark) into
  #   a {Watermark} and the session trackers, whose watermark is the newest
  #   time that can no longer arrive.
  # - With `idle_after:`, a source with no event for that many seconds of
  #   processing time is idle: it stops holding the watermark back, and
  #   holds it again from its next event. When every source is idle the
  #   watermark stays where it is; it never jumps ahead on its own.
  #
  # Processing time is read from `Process.clock_gettime(Process::CLOCK_MONOTONIC)`
  # (seconds, a Float), and only when `idle_after:` is set. A consumer that
  # owns its clock, and every test, gives it instead: {#tick} sets it, and
  # {#observe} takes it as `now:`. Once a time has been given, the strategy
  # uses the latest time given and never reads the clock again, so give
  # times from the start (before the first event) and from one monotonic
  # clock: times from different clocks cannot be compared.
  #
  # Event time is in the gem's ticks (Integers in `0..2**64-1`, strictly
  # checked); processing time is not, so `idle_after:` and `now:` are
  # seconds as an Integer or a Float.
  #
  # The strategy is plain Ruby and not synchronized: share one between
  # threads behind a Mutex. Each call costs a Hash lookup, and now and then
  # a pass over the sources (when a source holding the watermark moves on,
  # one is removed, or an idle deadline passes). It can be frozen: then
  # {#observe}, {#tick} and {#remove} raise `FrozenError`, and {#value} and
  # {#active_sources} stay as they were when it was frozen (the clock is
  # not read again). `dup` makes an unfrozen copy that goes on by itself;
  # `clone` keeps the frozen state too. It is not a checkpoint: processing
  # times mean nothing in another process, so after a restart build a new
  # strategy (the trackers' own checkpoints keep their watermarks, and
  # {#advance} never moves them back).
  #
  # @example One source, five ticks of lag
  #   strategy = WindowMachines::WatermarkStrategy.bounded(5)
  #   strategy.value          # => nil
  #   strategy.observe(3)     # => 0: saturates instead of raising
  #   strategy.observe(20)    # => 15
  #   strategy.observe(12)    # => 15: never moves back
  #
  # @example Two partitions, one of which goes quiet
  #   strategy = WindowMachines::WatermarkStrategy.bounded(0, idle_after: 30)
  #   strategy.observe(100, source: 0, now: 0.0)   # => 100
  #   strategy.observe(40, source: 1, now: 1.0)    # => 100: 1 cannot lower it
  #   strategy.observe(160, source: 0, now: 10.0)  # => 100: 1 holds it back
  #   strategy.tick(31.0)                          # => 160: 1 has been quiet for 30 s
  #   strategy.active_sources                      # => [0]
  #   strategy.observe(170, source: 1, now: 32.0)  # => 160: 1 holds it again
  #
  # @example Closing windows with it
  #   counts = WindowMachines::TumblingWindows.new(60, aggregate: WindowMachines::Aggregate::Count.new,
  #                                                    watermark: :manual)
  #   strategy = WindowMachines::WatermarkStrategy.bounded(10)
  #   counts.add("a", 30)
  #   strategy.observe(30)
  #   strategy.observe(75)
  #   strategy.advance(counts)   # => true: the watermark reached 65
  #   counts.take_closed         # => ["a", 0, 60, 1]
  class WatermarkStrategy
    # The largest timestamp, lag and watermark.
    MAX_TICKS = 2**64 - 1
    private_constant :MAX_TICKS

    # The trackers {#advance} pushes into with `advance_watermark`: those
    # that take the value as it is (TumblingWindows is a HoppingWindows), and
    # those whose watermark is the newest time that can no longer arrive.
    WINDOW_TRACKERS = [HoppingWindows].freeze
    SESSION_TRACKERS = [Sessions, KeyedSessions, SessionWindows].freeze
    private_constant :WINDOW_TRACKERS, :SESSION_TRACKERS

    # A source's state is a small Array: the largest timestamp seen, the
    # processing time at which it goes idle (nil without `idle_after:`), and
    # whether it holds the watermark.
    LATEST = 0
    IDLE_AT = 1
    ACTIVE = 2
    private_constant :LATEST, :IDLE_AT, :ACTIVE

    # A strategy for events at most `lag` ticks out of order, per source.
    # @param lag [Integer] how far, in ticks, an event may be behind the
    #   largest timestamp of its source and still not be late; in
    #   `0..2**64-1`. 0 is for sources whose events arrive in order.
    # @param idle_after [Integer, Float, nil] seconds of processing time
    #   without an event after which a source is idle and stops holding the
    #   watermark back; positive and finite. nil (the default): sources
    #   never go idle, and the clock is never read.
    # @return [WatermarkStrategy] a new strategy with no sources and a nil
    #   {#value}.
    # @raise [TypeError] if `lag` is not an Integer, or `idle_after` is
    #   neither nil, an Integer nor a Float (a Rational or an
    #   `ActiveSupport::Duration` included: use `to_f`).
    # @raise [RangeError] if `lag` is outside `0..2**64-1`, or `idle_after`
    #   is NaN or infinite.
    # @param clock [Clock, nil] with a clock, `lag` may be a Duration and
    #   {#observe} takes Times (see {Clocked}); the value is still in ticks.
    # @raise [ArgumentError] if `idle_after` is 0 or negative.
    # @example
    #   WindowMachines::WatermarkStrategy.bounded(5_000, idle_after: 60)
    #   # => #<WindowMachines::WatermarkStrategy lag=5000 idle_after=60 value=nil sources=0 active=0>
    def self.bounded(lag, idle_after: nil, clock: nil)
      return new(lag, idle_after) if clock.nil?

      clock = Clocked.checked(clock)
      strategy = new(clock.length(lag), idle_after)
      strategy.instance_variable_set(:@clock, clock)
      strategy
    end

    # @return [Clock, nil] the clock the strategy was built with.
    attr_reader :clock

    private_class_method :new

    # Use {.bounded}.
    # @param lag [Integer]
    # @param idle_after [Integer, Float, nil]
    # @api private
    def initialize(lag, idle_after)
      @clock = nil
      @lag = check_ticks(lag, "lag")
      @idle_after = check_idle_after(idle_after)
      # source => [largest timestamp, idle at, active], in first-seen order.
      @sources = {}
      @value = nil
      # The minimum of `latest - lag` over the active sources (nil when
      # none is), as of the last refresh and what was observed since.
      @candidate = nil
      # No active source goes idle before this processing time.
      @next_idle_at = Float::INFINITY
      # The latest processing time given to tick or observe; nil: the clock.
      @now = nil
    end

    # @return [Integer] the lag the strategy was made with, in ticks.
    attr_reader :lag

    # @return [Integer, Float, nil] the idle timeout the strategy was made
    #   with, in seconds of processing time; nil if sources never go idle.
    attr_reader :idle_after

    # Records an event: the largest timestamp of `source` becomes
    # `timestamp` if that is larger, and `source` is active from now on
    # (until `idle_after` seconds pass without another event). An event
    # behind its source's largest timestamp, or at or below the watermark,
    # is recorded as activity and changes nothing else; a tracker refuses it
    # as late if it is.
    # @param timestamp [Integer] the event's time, in `0..2**64-1`.
    # @param source [Object] where the event came from: any object usable
    #   as a Hash key (a String is stored as a frozen copy, as a Hash does);
    #   nil, the default, for a single stream.
    # @param now [Integer, Float, nil] the processing time of the event, in
    #   seconds: the same as calling {#tick} with it first (an earlier time
    #   than the latest given is ignored). nil reads the clock, or uses the
    #   latest time given if one was.
    # @return [Integer] the new {#value}.
    # @raise [FrozenError] if the strategy is frozen.
    # @raise [TypeError] if `timestamp` is not an Integer, or `now` is
    #   neither nil, an Integer nor a Float.
    # @raise [RangeError] if `timestamp` is outside `0..2**64-1`, or `now`
    #   is NaN or infinite.
    # @example
    #   strategy = WindowMachines::WatermarkStrategy.bounded(10)
    #   strategy.observe(95, source: "orders-0")   # => 85
    #   strategy.observe(60, source: "orders-1")   # => 85: 1 holds it there
    #   strategy.observe(99, source: "orders-1")   # => 85: orders-0 is at 95 - 10
    def observe(timestamp, source: nil, now: nil)
      raise_frozen if frozen?
      timestamp = @clock.ticks(timestamp) if @clock
      check_ticks(timestamp, "timestamp")
      give_time(check_now(now)) unless now.nil?
      if @idle_after
        time = processing_time
        refresh(time) if time >= @next_idle_at
        record(source, timestamp, time + @idle_after)
      else
        record(source, timestamp, nil)
      end
      @value
    end

    # Sets the processing time, then marks the sources that have had no
    # event for `idle_after` seconds idle. From the first call on, the
    # strategy uses the latest time given instead of reading the clock.
    # @param now [Integer, Float] seconds on a monotonic clock (the one
    #   every other time given comes from). A time earlier than the latest
    #   given is ignored: processing time never moves back.
    # @return [Integer, nil] the {#value} at that time.
    # @raise [FrozenError] if the strategy is frozen.
    # @raise [TypeError] if `now` is not an Integer or a Float.
    # @raise [RangeError] if `now` is NaN or infinite.
    # @example
    #   strategy = WindowMachines::WatermarkStrategy.bounded(0, idle_after: 5)
    #   strategy.observe(10, source: :a, now: 0)
    #   strategy.observe(50, source: :b, now: 3)   # => 10
    #   strategy.tick(5)                           # => 50: :a is idle
    def tick(now)
      raise_frozen if frozen?
      give_time(check_now(now))
      refresh_due
      @value
    end

    # The watermark: nil until a source has been seen; then the largest
    # value the minimum over the active sources of `largest seen - lag`
    # (at least 0) has reached, the oldest timestamp still on time. It never
    # moves back, and stays where it is while no source is active.
    # @return [Integer, nil]
    def value
      refresh_due unless frozen?
      @value
    end

    # Forgets a source, for a revoked partition or a closed file: it no
    # longer holds the watermark back, which may move forward at once. A
    # source observed again later is new.
    # @param source [Object] as given to {#observe}.
    # @return [Boolean] true if the source was known, false otherwise.
    # @raise [FrozenError] if the strategy is frozen, even for an unknown
    #   source.
    # @example
    #   strategy = WindowMachines::WatermarkStrategy.bounded(0)
    #   strategy.observe(50, source: 0)
    #   strategy.observe(20, source: 1)
    #   strategy.value       # => 50: 1 came later and cannot lower it
    #   strategy.observe(90, source: 0)
    #   strategy.value       # => 50: 1 holds it at 50 until it passes
    #   strategy.remove(1)   # => true
    #   strategy.value       # => 90
    def remove(source)
      raise_frozen if frozen?
      refresh_due
      entry = @sources.delete(source)
      return false unless entry

      if entry[ACTIVE]
        @candidate = minimum_of_active
        publish
      end
      true
    end

    # Pushes the current {#value} into a watermark or tracker, so that an
    # event exactly `lag` behind the newest is on time there: the value
    # itself with `advance_watermark` on {HoppingWindows} and
    # {TumblingWindows}, which close a window once its end is at or below
    # it; one less (the newest time that can no longer arrive, Flink's
    # watermark) with `advance` on a {Watermark} and `advance_watermark` on
    # {Sessions}, {KeyedSessions} and {SessionWindows}. The aggregating
    # trackers must be built with `watermark: :manual`; their watermark
    # becomes what is pushed less their grace. While the value is nil
    # nothing is pushed and the tracker is not called; nor while it is 0
    # for those that take one less, since nothing is late yet.
    # @param tracker [Watermark, Sessions, KeyedSessions, HoppingWindows,
    #   TumblingWindows, SessionWindows]
    # @return [Boolean] what the tracker returned: true if its watermark
    #   moved; false if it did not, or the value is nil.
    # @raise [TypeError] if `tracker` is none of those classes (or a
    #   subclass of one).
    # @raise [FrozenError] if the value is set and the tracker is frozen.
    # @raise [ArgumentError] if the value is set and an aggregating tracker
    #   was built with `watermark: :stream` (raised by the tracker).
    # @example
    #   watermark = WindowMachines::Watermark.new
    #   strategy = WindowMachines::WatermarkStrategy.bounded(5)
    #   strategy.advance(watermark)   # => false: nothing seen yet
    #   strategy.observe(30)          # => 25
    #   strategy.advance(watermark)   # => true
    #   watermark.value               # => 24: an event at 25 is on time
    def advance(tracker)
      case tracker
      when Watermark
        newest_gone { |gone| tracker.advance(gone) }
      when *SESSION_TRACKERS
        newest_gone { |gone| tracker.advance_watermark(gone) }
      when *WINDOW_TRACKERS
        current = value
        current.nil? ? false : tracker.advance_watermark(current)
      else
        raise WindowMachines::TypeError,
              "tracker must be a WindowMachines::Watermark, Sessions, KeyedSessions, HoppingWindows, " \
              "TumblingWindows or SessionWindows, got #{tracker.inspect} (#{tracker.class})"
      end
    end

    # @return [Array<Object>] every known source, in the order each was
    #   first observed (since its last {#remove}), a new Array.
    def sources
      @sources.keys
    end

    # @return [Array<Object>] the sources that hold the watermark back now:
    #   those with an event in the last `idle_after` seconds (every known
    #   source without `idle_after:`), in the order of {#sources}, a new
    #   Array.
    def active_sources
      refresh_due unless frozen?
      # Not filter_map: nil is a source like any other.
      @sources.select { |_source, entry| entry[ACTIVE] }.keys
    end

    # Freezes the strategy as it is now: {#value} and {#active_sources}
    # stop following the clock.
    # @return [self]
    def freeze
      refresh_due unless frozen?
      super
    end

    # @return [String] the class, lag, idle_after, value and source counts,
    #   e.g. `#<WindowMachines::WatermarkStrategy lag=5 idle_after=30
    #   value=95 sources=2 active=1>`.
    def inspect
      "#<#{self.class} lag=#{@lag} idle_after=#{@idle_after.inspect} value=#{value.inspect} " \
        "sources=#{@sources.size} active=#{active_sources.size}>"
    end

    private

    # Yields the newest time that can no longer arrive, one less than the
    # value, unless nothing can be late yet.
    # @return [Boolean] what the block returned, or false.
    def newest_gone
      current = value
      current.nil? || current.zero? ? false : yield(current - 1)
    end

    # Gives the copy its own source states (`dup` and `clone`).
    # @param original [WatermarkStrategy]
    # @return [void]
    def initialize_copy(original)
      super
      @sources = @sources.transform_values(&:dup)
    end

    # `clone(freeze: true)` freezes the copy without calling {#freeze}, so
    # the copy is brought up to date here.
    # @param original [WatermarkStrategy]
    # @param freeze [Boolean, nil]
    # @return [void]
    def initialize_clone(original, freeze: nil)
      super
      refresh_due if freeze && !original.frozen?
    end

    # @param timestamp [Integer] checked.
    # @param source [Object]
    # @param idle_at [Integer, Float, nil] when the source goes idle if
    #   nothing else arrives; nil without `idle_after:`.
    # @return [void]
    def record(source, timestamp, idle_at)
      entry = @sources[source]
      if entry.nil?
        @sources[source] = [timestamp, idle_at, true]
        activate(floor(timestamp), idle_at)
      elsif !entry[ACTIVE]
        entry[LATEST] = timestamp if timestamp > entry[LATEST]
        entry[IDLE_AT] = idle_at
        entry[ACTIVE] = true
        activate(floor(entry[LATEST]), idle_at)
      else
        entry[IDLE_AT] = idle_at
        return if timestamp <= entry[LATEST]

        held = floor(entry[LATEST])
        entry[LATEST] = timestamp
        # Only the source at the minimum can raise it (ties are found by
        # the pass over the sources).
        return unless held == @candidate && floor(timestamp) > held

        @candidate = minimum_of_active
      end
      publish
    end

    # A source starts holding the watermark back.
    # @param held [Integer] its `latest - lag`.
    # @param idle_at [Integer, Float, nil]
    # @return [void]
    def activate(held, idle_at)
      @candidate = held if @candidate.nil? || held < @candidate
      @next_idle_at = idle_at if idle_at && idle_at < @next_idle_at
    end

    # @param timestamp [Integer]
    # @return [Integer] `timestamp - lag`, at least 0.
    def floor(timestamp)
      timestamp > @lag ? timestamp - @lag : 0
    end

    # @return [Integer, nil] the minimum of `latest - lag` over the sources
    #   marked active, nil if none is.
    def minimum_of_active
      minimum = nil
      @sources.each_value do |latest, _idle_at, active|
        next unless active

        held = floor(latest)
        minimum = held if minimum.nil? || held < minimum
      end
      minimum
    end

    # Moves the value up to the candidate, never back.
    # @return [void]
    def publish
      @value = @candidate if @candidate && (@value.nil? || @candidate > @value)
    end

    # Marks idle the sources whose deadline has passed, if one may have.
    # @return [void]
    def refresh_due
      return unless @idle_after

      time = processing_time
      refresh(time) if time >= @next_idle_at
    end

    # Marks idle every active source whose deadline is at or before `time`
    # (an idle source becomes active only through {#observe}), and
    # recomputes the candidate and the next deadline.
    # @param time [Integer, Float]
    # @return [void]
    def refresh(time)
      minimum = nil
      next_idle_at = Float::INFINITY
      @sources.each_value do |entry|
        next unless entry[ACTIVE]

        if time >= entry[IDLE_AT]
          entry[ACTIVE] = false
        else
          held = floor(entry[LATEST])
          minimum = held if minimum.nil? || held < minimum
          next_idle_at = entry[IDLE_AT] if entry[IDLE_AT] < next_idle_at
        end
      end
      @candidate = minimum
      @next_idle_at = next_idle_at
      publish
    end

    # @return [Integer, Float] the latest time given, or the monotonic clock.
    def processing_time
      @now || Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    # @param now [Integer, Float] checked.
    # @return [void]
    def give_time(now)
      @now = now if @now.nil? || now > @now
    end

    # @param value [Object]
    # @param name [String]
    # @return [Integer] `value`, an Integer in `0..2**64-1`.
    # @raise [TypeError, RangeError]
    def check_ticks(value, name)
      # `Integer === value`, not `value.is_a?(Integer)`: an
      # ActiveSupport::Duration claims to be an Integer through `is_a?`.
      unless Integer === value
        raise WindowMachines::TypeError, "#{name} must be an Integer, got #{value.inspect} (#{value.class})"
      end
      raise WindowMachines::RangeError, "#{name} must be in 0..2**64-1, got #{value}" unless value.between?(0, MAX_TICKS)

      value
    end

    # @param now [Object]
    # @return [Integer, Float] `now`, a finite Integer or Float.
    # @raise [TypeError, RangeError]
    def check_now(now)
      check_seconds(now, "now")
    end

    # @param idle_after [Object]
    # @return [Integer, Float, nil] `idle_after`, nil or positive seconds.
    # @raise [TypeError, RangeError, ArgumentError]
    def check_idle_after(idle_after)
      return nil if idle_after.nil?

      check_seconds(idle_after, "idle_after", nil_allowed: true)
      raise WindowMachines::ArgumentError, "idle_after must be positive, got #{idle_after}" unless idle_after.positive?

      idle_after
    end

    # @param seconds [Object]
    # @param name [String]
    # @param nil_allowed [Boolean] whether the message names nil.
    # @return [Integer, Float] `seconds`.
    # @raise [TypeError, RangeError]
    def check_seconds(seconds, name, nil_allowed: false)
      case seconds
      when Integer
        seconds
      when Float
        raise WindowMachines::RangeError, "#{name} must be finite, got #{seconds}" unless seconds.finite?

        seconds
      else
        expected = nil_allowed ? "nil, an Integer or a Float" : "an Integer or a Float"
        raise WindowMachines::TypeError,
              "#{name} must be #{expected} (seconds), got #{seconds.inspect} (#{seconds.class})"
      end
    end

    # @raise [FrozenError] always, as Ruby raises it for a frozen receiver.
    # @return [void]
    def raise_frozen
      raise FrozenError.new("can't modify frozen #{self.class}: #{inspect}", receiver: self)
    end
  end
end
