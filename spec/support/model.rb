# frozen_string_literal: true

require_relative "helpers"

module WindowMachinesSpec
  # A plain-Ruby model of the windows and the watermark in SPEC.md, written
  # for obviousness rather than speed: unbounded Integers, enumeration instead
  # of arithmetic shortcuts. It raises the gem's error classes so outcomes can
  # be compared by class. Sessions are modelled once, by PlainRuby::Sessions
  # (spec/support/plain_ruby/sessions.rb), which the benchmarks share.
  module Model
    MAX = WindowMachinesSpec::MAX
    SLIDING_CAP = 32

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
  end
end
