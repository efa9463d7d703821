# frozen_string_literal: true

require_relative "helpers"

module WindowMachinesSpec
  # A plain-Ruby model of the contract in SPEC.md, written for obviousness
  # rather than speed: unbounded Integers, enumeration instead of arithmetic
  # shortcuts, and a list of spans scanned in full on every call. It raises the
  # gem's error classes so outcomes can be compared by class.
  module Model
    MAX = WindowMachinesSpec::MAX
    SLIDING_CAP = 32
    SESSION_CAP = 32

    module_function

    def integer!(value)
      raise WindowMachines::TypeError, "not an Integer" unless value.is_a?(Integer)
      raise WindowMachines::RangeError, "out of range" unless value.between?(0, MAX)

      value
    end

    def positive!(value)
      raise WindowMachines::ArgumentError, "zero length" if value.zero?
    end

    def window(start, length)
      finish = start + length
      raise WindowMachines::RangeError, "end past MAX" if finish > MAX

      [start, finish]
    end

    def tumbling(timestamp, size)
      [timestamp, size].each { |value| integer!(value) }
      positive!(size)
      window(timestamp - (timestamp % size), size)
    end

    def sliding(timestamp, width, slide)
      [timestamp, width, slide].each { |value| integer!(value) }
      positive!(width)
      positive!(slide)
      raise WindowMachines::CapacityError, "ratio" if (width + slide - 1) / slide > SLIDING_CAP

      # Every multiple of slide from the lowest start that still reaches
      # timestamp (and is not below 0) up to timestamp itself.
      lowest = [timestamp - width + 1, 0].max
      first_start = ((lowest + slide - 1) / slide) * slide
      starts = []
      start = first_start
      while start <= timestamp
        starts << start
        start += slide
      end
      starts.reverse.map { |s| window(s, width) }
    end

    # A sum above MAX counts as MAX when compared with a watermark.
    def settled?(watermark, time, lateness)
      !watermark.nil? && [time + lateness, MAX].min <= watermark
    end

    # Model of WindowMachines::Watermark.
    class Watermark
      attr_reader :value

      def initialize(value = nil)
        @value = value.nil? ? nil : Model.integer!(value)
      end

      def advance(timestamp)
        Model.integer!(timestamp)
        return false unless @value.nil? || timestamp > @value

        @value = timestamp
        true
      end

      def closes?(start, finish, lateness)
        [start, finish, lateness].each { |value| Model.integer!(value) }
        raise WindowMachines::ArgumentError, "start after finish" if start > finish

        Model.settled?(@value, finish, lateness)
      end
    end

    # Model of WindowMachines::Sessions: an unordered list of [first, last].
    class Sessions
      attr_reader :gap, :watermark

      def initialize(gap)
        Model.integer!(gap)
        Model.positive!(gap)
        @gap = gap
        @watermark = nil
        @spans = []
      end

      def initialize_copy(other)
        super
        @spans = other.to_a
      end

      def insert(timestamp)
        Model.integer!(timestamp)
        raise WindowMachines::LateEventError, "late" if !@watermark.nil? && timestamp <= @watermark

        joined = @spans.select { |first, last| first - @gap <= timestamp && timestamp <= last + @gap }
        if joined.empty? && @spans.size >= SESSION_CAP
          raise WindowMachines::CapacityError, "full"
        end

        merged = [(joined.map(&:first) + [timestamp]).min, (joined.map(&:last) + [timestamp]).max]
        @spans = (@spans - joined) + [merged]
        merged.dup
      end

      def advance_watermark(timestamp)
        Model.integer!(timestamp)
        return false unless @watermark.nil? || timestamp > @watermark

        @watermark = timestamp
        true
      end

      def take_closed
        closed = @spans.select { |_first, last| Model.settled?(@watermark, last, @gap) }
        oldest = closed.min_by(&:first)
        @spans.delete(oldest) unless oldest.nil?
        oldest
      end

      def size
        @spans.size
      end

      def to_a
        @spans.sort.map(&:dup)
      end
    end
  end
end
