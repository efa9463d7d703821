# frozen_string_literal: true

module PlainRuby
  # WindowMachines::Sessions in plain Ruby: a sorted Array of [first, last]
  # spans, any two more than gap apart. The differential spec checks the gem
  # against it and bench/ops.rb times the gem against it, so it has to be
  # right by inspection and as quick as the Ruby a user would write.
  class Sessions
    attr_reader :gap, :watermark

    def initialize(gap)
      Check.integer("gap", gap)
      Check.positive("gap", gap)
      @gap = gap
      @watermark = nil
      @spans = []
    end

    def initialize_copy(other)
      super
      @spans = @spans.map(&:dup)
    end

    def insert(timestamp)
      Check.not_frozen(self)
      Check.integer("timestamp", timestamp)
      if !@watermark.nil? && timestamp <= @watermark
        raise WindowMachines::LateEventError,
              "late event: timestamp #{timestamp} is at or below the watermark #{@watermark}"
      end

      gap = @gap
      # An event joins the spans with first - gap <= timestamp <= last + gap.
      # Spans before `older` end too far below it. `newer` starts more than
      # gap past older's last, so above the event, and anything after `newer`
      # starts more than gap above that. Only these two can take it in.
      index = @spans.bsearch_index { |span| span[1] + gap >= timestamp } || @spans.size
      older = @spans[index]
      return open(index, timestamp) if older.nil? || timestamp < older[0] - gap

      newer = @spans[index + 1]
      if newer && timestamp >= newer[0] - gap
        # It bridges the two, which become one.
        older[1] = newer[1]
        @spans.delete_at(index + 1)
      elsif timestamp < older[0]
        older[0] = timestamp
      elsif timestamp > older[1]
        older[1] = timestamp
      end
      older.dup
    end

    def advance_watermark(timestamp)
      Check.not_frozen(self)
      Check.integer("timestamp", timestamp)
      return false unless @watermark.nil? || timestamp > @watermark

      @watermark = timestamp
      true
    end

    # Spans close in order (last + gap grows along the Array), so a closed
    # span, if any, is the first.
    def take_closed
      Check.not_frozen(self)
      oldest = @spans.first
      @spans.shift if oldest && Check.passed?(@watermark, oldest[1], @gap)
    end

    def size
      @spans.size
    end

    def to_a
      @spans.map(&:dup)
    end

    def inspect
      "#<#{self.class} gap=#{@gap} watermark=#{@watermark.inspect} sessions=#{@spans.inspect}>"
    end

    private

    def open(index, timestamp)
      if @spans.size >= MAX_SESSIONS
        raise WindowMachines::CapacityError,
              "a new session would exceed the #{MAX_SESSIONS} sessions held at once; " \
              "advance the watermark and take_closed to make room"
      end

      span = [timestamp, timestamp]
      @spans.insert(index, span)
      span.dup
    end
  end
end
