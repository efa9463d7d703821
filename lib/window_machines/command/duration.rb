# frozen_string_literal: true

module WindowMachines
  module Command
    # Lengths of time as the command line writes them: `500ms`, `30s`,
    # `30m`, `2h`, `1d`, or a bare number in the time field's unit (seconds
    # for epoch seconds, nanoseconds for ISO times and times of day).
    module Duration
      # Nanoseconds in each unit.
      UNITS = {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000
      }.freeze
      # The longest length each kind holds: 2**64-1 of the time field's
      # unit, and nanoseconds enough for 2**64-1 seconds.
      LONGEST = { "units" => (2**64) - 1, "ns" => ((2**64) - 1) * UNITS.fetch("s") }.freeze
      # A whole number and an optional unit.
      PATTERN = /\A(\d+)(#{UNITS.keys.join("|")})?\z/

      module_function

      # @param text [String]
      # @return [Array(String, Integer)] `["ns", nanoseconds]` or
      #   `["units", amount]` for a bare number
      # @raise [OptionParser::InvalidArgument] if `text` is not a duration
      def parse(text)
        match = PATTERN.match(text) or
          raise OptionParser::InvalidArgument, "#{text} (durations look like 500ms, 30s, 30m, 2h, 1d)"
        amount = Integer(match[1], 10)
        length = match[2] ? ["ns", amount * UNITS.fetch(match[2])] : ["units", amount]
        raise OptionParser::InvalidArgument, "#{text} (too long)" if length.last > LONGEST.fetch(length.first)

        length
      end
    end
  end
end
