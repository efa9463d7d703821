# frozen_string_literal: true

module PlainRuby
  module_function

  def tumbling(timestamp, size)
    Check.integer("timestamp", timestamp)
    Check.integer("size", size)
    Check.positive("size", size)
    start = timestamp - (timestamp % size)
    [start, window_end(start, size)]
  end

  def sliding(timestamp, width, slide)
    Check.integer("timestamp", timestamp)
    Check.integer("width", width)
    Check.integer("slide", slide)
    Check.positive("width", width)
    Check.positive("slide", slide)
    if width > slide * MAX_SLIDING_WINDOWS
      raise WindowMachines::CapacityError,
            "width #{width} with slide #{slide} puts a timestamp in up to #{(width + slide - 1) / slide} windows, " \
            "more than #{MAX_SLIDING_WINDOWS}"
    end

    newest = timestamp - (timestamp % slide)
    # The oldest start still reaching timestamp, rounded up to a multiple of slide.
    oldest = [timestamp - width + 1, 0].max
    oldest += -oldest % slide
    return [] if newest < oldest

    # The newest window has the largest end: if it fits, they all do.
    window_end(newest, width)
    newest.step(oldest, -slide).map { |start| [start, start + width] }
  end

  def window_end(start, length)
    finish = start + length
    if finish > MAX
      raise WindowMachines::RangeError, "the window starting at #{start} ends past 2**64-1 (#{start} + #{length})"
    end

    finish
  end
  private_class_method :window_end
end

module PlainRuby
  # Aggregators of issue 10 in plain Ruby, written for obviousness: a window
  # keeps its events ([timestamp, arrival, value]) and every result is
  # recomputed from all of them, folded in arrival order. Built-ins are named
  # by class, so a model tracker accepts WindowMachines::Aggregate::Sum.new(:x)
  # as well as PlainRuby::Aggregate::Sum.new(:x); anything else is a custom
  # aggregator (initial, add and maybe merge), called on the whole value.
  module Aggregate
    # One built-in aggregator; subclasses say what it computes.
    class Builtin
      attr_reader :field

      def initialize(field = nil)
        @field = field
        freeze
      end

      def ==(other)
        other.class == self.class && other.field == field
      end

      def input(value)
        return value if @field.nil?

        value.nil? ? nil : value[@field]
      end

      # Raises (and so refuses the event) if this aggregator cannot take
      # the inputs; otherwise the result.
      def result(events)
        compute(events.map { |timestamp, arrival, value| [timestamp, arrival, input(value)] })
      end

      def numbers(inputs)
        inputs.each_with_object([]) do |input, kept|
          next if input.nil?
          raise WindowMachines::TypeError, "#{name} takes numbers, got #{input.inspect}" unless input.is_a?(Numeric)

          kept << input
        end
      end

      def name = self.class.name.split("::").last.downcase

      # Replaces the held extreme only when strictly beyond it, so ties keep
      # the earlier arrival; <=> returning nil raises as Ruby's Comparable does.
      def extreme(inputs, want)
        inputs.compact.reduce(nil) do |held, input|
          next input if held.nil?

          order = input <=> held
          raise ::ArgumentError, "comparison of #{input.class} with #{held.class} failed" if order.nil?

          order == want ? input : held
        end
      end
    end

    class Count < Builtin
      def compute(rows) = field.nil? ? rows.size : rows.count { |_, _, input| !input.nil? }
    end

    class Sum < Builtin
      def compute(rows) = numbers(rows.map(&:last)).reduce(0) { |sum, input| sum + input }
    end

    class Min < Builtin
      def compute(rows) = extreme(rows.map(&:last), -1)
    end

    class Max < Builtin
      def compute(rows) = extreme(rows.map(&:last), 1)
    end

    class Mean < Builtin
      def compute(rows)
        inputs = numbers(rows.map(&:last))
        inputs.empty? ? nil : inputs.reduce(0) { |sum, input| sum + input }.fdiv(inputs.size)
      end
    end

    class Collect < Builtin
      def compute(rows) = rows.sort_by { |timestamp, arrival, _| [timestamp, arrival] }.map(&:last)
    end

    class First < Builtin
      def compute(rows) = rows.min_by { |timestamp, arrival, _| [timestamp, arrival] }&.last
    end

    class Last < Builtin
      def compute(rows) = rows.max_by { |timestamp, arrival, _| [timestamp, arrival] }&.last
    end

    # A user's aggregator: initial, then add(acc, value) per event in arrival
    # order. Its merge is never needed here (nothing is merged: results are
    # recomputed), so use associative, commutative aggregators to compare.
    class Custom
      def initialize(aggregator)
        @aggregator = aggregator
      end

      def result(events)
        events.reduce(@aggregator.initial) { |acc, (_, _, value)| @aggregator.add(acc, value) }
      end
    end

    BUILTIN = %w[Count Sum Min Max Mean Collect First Last].freeze

    module_function

    # The model's aggregator for what a tracker was given.
    def model_of(aggregator)
      short = aggregator.class.name.to_s.split("::").last
      if BUILTIN.include?(short) && aggregator.class.name.to_s.include?("Aggregate::")
        const_get(short).new(aggregator.field)
      elsif aggregator.respond_to?(:initial) && aggregator.respond_to?(:add)
        Custom.new(aggregator)
      else
        raise WindowMachines::ArgumentError, "aggregate must respond to initial and add, got #{aggregator.inspect}"
      end
    end
  end

  # What TumblingWindows, HoppingWindows and SessionWindows share: keys in a
  # Hash, the watermark, lateness handling and the hand-over order.
  class KeyedAggregation
    ON_LATE = %i[raise drop].freeze
    MODES = %i[stream manual].freeze

    attr_reader :grace, :late_count

    def initialize(grace, aggregate, on_late, watermark, needs_merge)
      Check.integer("grace", grace)
      @grace = grace
      @parts = parts_of(aggregate, needs_merge)
      unless ON_LATE.include?(on_late) || on_late.respond_to?(:call)
        raise WindowMachines::ArgumentError, "on_late must be :raise, :drop or callable, got #{on_late.inspect}"
      end
      unless MODES.include?(watermark)
        raise WindowMachines::ArgumentError, "watermark must be :stream or :manual, got #{watermark.inspect}"
      end

      @on_late = on_late
      @mode = watermark
      @time = nil # stream time (largest accepted timestamp) or the manual value
      @late_count = 0
      @arrivals = 0
      @held = [] # {key:, seen:, start:, last:, events:}; sessions use start as first
      @seen = {} # key => when it became held (Hash semantics, String keys frozen copies)
      @seen_counter = 0
    end

    def initialize_copy(other)
      super
      @held = @held.map { |item| item.merge(events: item[:events].dup) }
      @seen = @seen.dup
    end

    def advance_watermark(timestamp)
      Check.not_frozen(self)
      Check.integer("timestamp", timestamp)
      raise WindowMachines::ArgumentError, "advance_watermark needs watermark: :manual" unless @mode == :manual
      return false unless @time.nil? || timestamp > @time

      @time = timestamp
      true
    end

    def size = @held.size

    def key_count = @seen.size

    def current(key)
      @held.select { |item| item[:key].eql?(key) && !closed?(item) }
           .sort_by { |item| item[:start] }
           .map { |item| [item[:start], finish(item), result(item[:events])] }
    end

    def take_closed
      Check.not_frozen(self)
      item = @held.select { |candidate| closed?(candidate) }.min_by { |candidate| order(candidate) }
      item && hand_over(item)
    end

    def each_closed
      Check.not_frozen(self)
      return enum_for(:each_closed) unless block_given?

      while (handed = take_closed)
        yield(*handed)
      end
      self
    end

    def flush
      Check.not_frozen(self)
      return enum_for(:flush) unless block_given?

      until @held.empty?
        yield(*hand_over(@held.min_by { |item| order(item) }))
      end
      self
    end

    private

    def parts_of(aggregate, needs_merge)
      named = aggregate.is_a?(Hash) ? aggregate : { nil => aggregate }
      raise WindowMachines::ArgumentError, "aggregate must not be empty" if named.empty?

      named.transform_values do |aggregator|
        if needs_merge && !aggregator.class.name.to_s.include?("Aggregate::") && !aggregator.respond_to?(:merge)
          raise WindowMachines::ArgumentError, "a custom aggregator here needs merge"
        end

        Aggregate.model_of(aggregator)
      end
    end

    def result(events)
      # Every Sum and Mean checks its inputs before any aggregator runs, so a
      # non-Numeric input is a TypeError whatever else would fail.
      @parts.each_value { |part| part.numbers(events.map { |*, value| part.input(value) }) if part.respond_to?(:numbers) && %w[sum mean].include?(part.name) }
      values = @parts.transform_values { |part| part.result(events) }
      @parts.key?(nil) ? values[nil] : values
    end

    # A late event: counted in every mode, and nothing else changes.
    def late(key, timestamp, value)
      @late_count += 1
      mark = watermark
      case @on_late
      when :raise
        error = WindowMachines::LateEventError.new("late event: timestamp #{timestamp} is at or below the watermark #{mark}")
        # The readers the gem's error has (timestamp, watermark, key).
        { timestamp: timestamp, watermark: mark, key: key }.each { |name, at| error.instance_variable_set(:"@#{name}", at) }
        raise error
      when :drop then false
      else
        @on_late.call(key, timestamp, value, mark)
        false
      end
    end

    def time_after(timestamp)
      @mode == :stream ? [@time, timestamp].compact.max : @time
    end

    def seen_of(key)
      @seen.fetch(key) { @seen_counter }
    end

    # Puts the new item list in place, all at once (after every check passed).
    def commit(key, held, timestamp)
      @held = held
      unless @seen.key?(key)
        @seen[key] = @seen_counter
        @seen_counter += 1
      end
      @arrivals += 1
      @time = time_after(timestamp)
      true
    end

    def hand_over(item)
      @held.delete(item)
      @seen.delete(item[:key]) if @held.none? { |other| other[:key].eql?(item[:key]) }
      [item[:key], item[:start], finish(item), result(item[:events])]
    end

    def order(item) = [closes_at(item), item[:seen], item[:start]]

    def stored_key(key)
      key.instance_of?(String) && !key.frozen? ? key.dup.freeze : key
    end
  end

  # TumblingWindows and HoppingWindows: windows [offset + k * step, + size)
  # with start >= 0; each holds the events that entered it.
  class Windows < KeyedAggregation
    attr_reader :window_size, :offset

    def initialize(size, step, grace, offset, aggregate, on_late, watermark, needs_merge)
      Check.integer("size", size)
      Check.integer("advance", step)
      Check.integer("grace", grace)
      Check.integer("offset", offset)
      Check.positive("size", size)
      Check.positive("advance", step)
      raise WindowMachines::ArgumentError, "advance #{step} is past size #{size}" if step > size
      raise WindowMachines::ArgumentError, "offset #{offset} must be below #{step}" if offset >= step

      @window_size = size
      @step = step
      @offset = offset
      super(grace, aggregate, on_late, watermark, needs_merge)
    end

    def watermark = mark_at(@time)

    def add(key, timestamp, value = nil)
      Check.not_frozen(self)
      Check.integer("timestamp", timestamp)
      starts = starts_holding(timestamp)
      raise "model: no window holds #{timestamp} (before offset #{@offset}); unspecified" if starts.empty?

      last = starts.max
      if last + @window_size > MAX
        raise WindowMachines::RangeError, "the window starting at #{last} ends past 2**64-1 (#{last} + #{@window_size})"
      end

      mark = mark_at(time_after(timestamp))
      open = starts.reject { |start| !mark.nil? && start + @window_size <= mark }
      return late(key, timestamp, value) if open.empty?

      key = stored_key(@seen.keys.find { |held| held.eql?(key) } || key)
      event = [timestamp, @arrivals, value]
      held = @held.map(&:dup)
      open.each do |start|
        window = held.find { |item| item[:key].eql?(key) && item[:start] == start }
        if window
          window[:events] = window[:events] + [event]
        else
          held << { key: key, seen: seen_of(key), start: start, events: [event] }
        end
      end
      # Every changed window's result must compute (a refusing aggregator or
      # a raising custom add leaves everything as it was).
      held.each { |item| result(item[:events]) if item[:events].last.equal?(event) }
      commit(key, held, timestamp)
    end

    private

    def mark_at(time) = time && [time - @grace, 0].max

    def starts_holding(timestamp)
      return [] if timestamp < @offset

      newest = timestamp - ((timestamp - @offset) % @step)
      newest.step(0, -@step).take_while { |start| start + @window_size > timestamp && start >= 0 }.reverse
    end

    def finish(item) = item[:start] + @window_size

    def closes_at(item) = finish(item)

    def closed?(item)
      mark = watermark
      !mark.nil? && finish(item) <= mark
    end
  end

  # WindowMachines::TumblingWindows in plain Ruby.
  class TumblingWindows < Windows
    def initialize(size, grace: 0, offset: 0, aggregate:, on_late: :raise, watermark: :stream)
      super(size, size, grace, offset, aggregate, on_late, watermark, false)
    end
  end

  # WindowMachines::HoppingWindows in plain Ruby.
  class HoppingWindows < Windows
    def initialize(size, advance, grace: 0, offset: 0, aggregate:, on_late: :raise, watermark: :stream)
      super(size, advance, grace, offset, aggregate, on_late, watermark, true)
    end

    def advance = @step
  end

  # WindowMachines::SessionWindows in plain Ruby: per key, the rules of
  # KeyedSessions (inclusive gap, bridging merges, 32 per key, max_sessions).
  class SessionWindows < KeyedAggregation
    attr_reader :gap, :max_sessions

    def initialize(gap, grace: 0, aggregate:, on_late: :raise, watermark: :stream, max_sessions: nil)
      Check.integer("gap", gap)
      Check.integer("grace", grace)
      Check.integer("max_sessions", max_sessions) unless max_sessions.nil?
      Check.positive("gap", gap)
      Check.positive("max_sessions", max_sessions) unless max_sessions.nil?
      @gap = gap
      @max_sessions = max_sessions
      super(grace, aggregate, on_late, watermark, true)
    end

    # Stream time T: T - grace - 1, so an event at T is never late; manual
    # M: M - grace. Unset while that would be below 0.
    def watermark = mark_at(@time)

    def add(key, timestamp, value = nil)
      Check.not_frozen(self)
      Check.integer("timestamp", timestamp)
      mark = mark_at(time_after(timestamp))
      return late(key, timestamp, value) if !mark.nil? && timestamp <= mark

      key = stored_key(@seen.keys.find { |held| held.eql?(key) } || key)
      event = [timestamp, @arrivals, value]
      mine, others = @held.partition { |item| item[:key].eql?(key) }
      joined, apart = mine.partition { |item| item[:start] - @gap <= timestamp && timestamp <= item[:last] + @gap }
      if joined.empty?
        if mine.size >= MAX_SESSIONS
          raise WindowMachines::CapacityError, "a new session would exceed the #{MAX_SESSIONS} sessions held for a key"
        end
        if @max_sessions && @held.size >= @max_sessions
          raise WindowMachines::CapacityError, "a new session would exceed the #{@max_sessions} sessions held"
        end
      end

      events = joined.flat_map { |item| item[:events] } + [event]
      session = { key: key, seen: seen_of(key), start: events.map(&:first).min, last: events.map(&:first).max,
                  events: events.sort_by { |_, arrival, _| arrival } }
      result(session[:events])
      commit(key, others + apart + [session], timestamp)
    end

    private

    def mark_at(time)
      return nil if time.nil?

      mark = @mode == :stream ? time - @grace - 1 : time - @grace
      mark.negative? ? nil : mark
    end

    def finish(item) = item[:last]

    def closes_at(item) = [item[:last] + @gap, MAX].min

    # KeyedSessions' order: last event, then first, then the key held longest.
    def order(item) = [item[:last], item[:start], item[:seen]]

    def closed?(item) = Check.passed?(watermark, item[:last], @gap)
  end
end
