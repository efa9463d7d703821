# frozen_string_literal: true

module WindowMachines
  # Converts between Ruby's times and lengths and the gem's ticks: Integers
  # in `0..2**64-1` counting seconds, milliseconds, microseconds or
  # nanoseconds since the Unix epoch (1970-01-01 00:00:00 UTC).
  #
  # Every conversion is exact: a Time is read as a Rational (`Time#to_r`),
  # never as a Float. What cannot be converted exactly is refused rather
  # than rounded, except a time's remainder below one tick, which is floored
  # (the event happened in that tick), as Kafka and Flink truncate to
  # milliseconds. An Integer is already a count of ticks and passes
  # unchanged, under the same strict rule as the rest of the gem.
  #
  # **Points in time** ({#ticks}): a `Time` (an
  # `ActiveSupport::TimeWithZone` too), or anything else with a `to_time`
  # that returns a Time, such as a `DateTime`. A time before the epoch, or
  # past `2**64-1` ticks, raises {RangeError}. A `Date` is refused: it is a
  # day, not a point in time, and its `to_time` would pick the machine's
  # time zone. A String is refused too, even where ActiveSupport gives
  # Strings a `to_time`: parse it first.
  #
  # **Lengths** ({#length}): an `ActiveSupport::Duration`, recognised by
  # what it responds to (`parts`, `value` and `since`), so the gem never
  # loads ActiveSupport. Its seconds (`value`) must be an Integer or a
  # Rational and make a whole number of ticks. Days and weeks count 86,400
  # and 604,800 seconds, as `Duration#to_i` counts them: ticks have no time
  # zone and no daylight saving time. A Duration that names months or years
  # is refused, because their length varies and ActiveSupport's averages
  # (2,629,746 and 31,556,952 seconds) are not what a window of "a month"
  # means; this includes a Duration that `Duration.build` split into months.
  # (ActiveSupport 6.1 forgets the parts of a Duration divided by a number,
  # so `1.month / 2` cannot be told apart from 1,314,873 seconds and is
  # taken as that.)
  #
  # Floats and Rationals are refused everywhere: as ticks they would be
  # rounded, and as seconds they name no unit.
  #
  # Clocks are frozen, compare equal by unit, and survive `Marshal`. Any
  # error raised for bad input includes {Error}, as everywhere in the gem.
  #
  # @example Milliseconds, as Kafka timestamps count them
  #   clock = WindowMachines::Clock.new(:ms)
  #   clock.ticks(Time.utc(2024, 5, 1, 12, 0, 0.25r))   # => 1714564800250
  #   clock.ticks(1714564800250)                       # => 1714564800250
  #   clock.time(1714564800250)                        # => 2024-05-01 12:00:00.25 UTC
  #   clock.length(90_000)                             # => 90000
  #   clock.length(30.minutes)                         # => 1800000 (with ActiveSupport)
  #   clock.tumbling(Time.utc(2024, 5, 1, 12, 0, 42), 60_000)
  #   # => [1714564800000, 1714564860000]
  class Clock
    # Ticks in one second, by unit.
    PER_SECOND = { s: 1, ms: 1_000, us: 1_000_000, ns: 1_000_000_000 }.freeze
    private_constant :PER_SECOND

    # The largest tick.
    MAX = 2**64 - 1
    private_constant :MAX

    # The methods that make an object a Duration here. `ActiveSupport::Duration`
    # has all three; Integers, Times and Dates have none of `parts`.
    DURATION_METHODS = %i[parts value since].freeze
    private_constant :DURATION_METHODS

    # Parts of a Duration whose length varies.
    VARIABLE_PARTS = %i[months years].freeze
    private_constant :VARIABLE_PARTS

    # How much of a value's inspect a message shows, as the extension does.
    SHOWN_CHARS = 60
    private_constant :SHOWN_CHARS

    # @return [Symbol] the unit of a tick: `:s`, `:ms`, `:us` or `:ns`.
    attr_reader :unit

    # @return [Integer] ticks in one second: 1, 1000, 10**6 or 10**9.
    attr_reader :per_second

    # @param unit [Symbol] the unit of a tick: `:s` (seconds), `:ms`
    #   (milliseconds), `:us` (microseconds) or `:ns` (nanoseconds).
    # @raise [ArgumentError] if `unit` is anything else, a String included.
    # @example
    #   WindowMachines::Clock.new(:us).per_second   # => 1000000
    def initialize(unit)
      setup(unit)
    end

    # The tick a point in time falls in, counted from the epoch.
    #
    # @param value [Integer, Time, #to_time] an Integer (already ticks,
    #   returned unchanged), a Time or ActiveSupport::TimeWithZone, or an
    #   object whose `to_time` returns a Time, such as a DateTime.
    # @return [Integer] in `0..2**64-1`; a remainder below one tick is
    #   floored.
    # @raise [TypeError] for anything else: a Float, a Rational, a String,
    #   nil, a Date, an ActiveSupport::Duration (a length, not a point in
    #   time), or an object whose `to_time` returns something other than a
    #   Time.
    # @raise [RangeError] for an Integer outside `0..2**64-1`, a time before
    #   the epoch (by any amount, even below one tick), or a time past
    #   `2**64-1` ticks.
    # @example
    #   clock = WindowMachines::Clock.new(:s)
    #   clock.ticks(Time.utc(1970, 1, 1, 0, 1, 59.999r))   # => 119
    #   clock.ticks(DateTime.new(1970, 1, 1, 1, 0, 0, "+01:00"))   # => 0
    def ticks(value)
      to_ticks(value, "timestamp")
    end

    # A length in ticks.
    #
    # @param value [Integer, #parts] an Integer (already ticks, returned
    #   unchanged) or an ActiveSupport::Duration.
    # @return [Integer] in `0..2**64-1`.
    # @raise [TypeError] for anything else (a Float or a Rational is
    #   ambiguous: ticks or seconds?), a Time, or a Duration whose seconds
    #   are neither an Integer nor a Rational (`1.5.seconds` holds a Float).
    # @raise [ArgumentError] for a Duration that names months or years, or
    #   is not a whole number of ticks.
    # @raise [RangeError] for an Integer outside `0..2**64-1`, a negative
    #   Duration, or one longer than `2**64-1` ticks.
    # @example
    #   WindowMachines::Clock.new(:ms).length(30.minutes)    # => 1800000 (with ActiveSupport)
    #   WindowMachines::Clock.new(:s).length(Rational(1, 2).seconds)   # raises ArgumentError
    def length(value)
      to_length(value, "length")
    end

    # The point in time a tick starts at.
    #
    # @param ticks [Integer] in `0..2**64-1`.
    # @return [Time] a new UTC Time, exact: `ticks(time(t)) == t` for every
    #   tick.
    # @raise [TypeError] if `ticks` is not an Integer.
    # @raise [RangeError] if `ticks` is outside `0..2**64-1`.
    # @example
    #   WindowMachines::Clock.new(:ns).time(1_500_000_001)   # => 1970-01-01 00:00:01.500000001 UTC
    def time(ticks)
      ticks = checked_integer(ticks, "ticks")
      seconds = @per_second == 1 ? ticks : Rational(ticks, @per_second)
      ::Time.at(seconds).utc
    end

    # {WindowMachines.tumbling} with the arguments converted: `time` by
    # {#ticks}, `size` by {#length}.
    #
    # @param time [Integer, Time, #to_time] the event's time.
    # @param size [Integer, #parts] the window length.
    # @return [Array(Integer, Integer)] `[start, end]` in ticks.
    # @raise [TypeError, RangeError, ArgumentError] as {#ticks},
    #   {#length} and {WindowMachines.tumbling} raise them.
    # @example
    #   WindowMachines::Clock.new(:s).tumbling(Time.utc(1970, 1, 1, 0, 1, 5), 60)   # => [60, 120]
    def tumbling(time, size)
      WindowMachines.tumbling(to_ticks(time, "timestamp"), to_length(size, "size"))
    end

    # {WindowMachines.tumbling_starts} with the arguments converted: each
    # of `times` by {#ticks} (before any start is computed), `size` by
    # {#length}.
    #
    # @param times [Array<Integer, Time, #to_time>] the events' times.
    # @param size [Integer, #parts] the window length.
    # @return [Array<Integer>] the start of each time's window, in ticks.
    # @raise [TypeError, RangeError, ArgumentError] as {#ticks},
    #   {#length} and {WindowMachines.tumbling_starts} raise them; a time
    #   refused is named by the error's `index` (see {BatchElement}).
    # @example
    #   WindowMachines::Clock.new(:s).tumbling_starts([Time.utc(1970, 1, 1, 0, 1, 5), 130], 60)   # => [60, 120]
    def tumbling_starts(times, size)
      WindowMachines.tumbling_starts(Clocked.each_ticks(self, times), to_length(size, "size"))
    end

    # {WindowMachines.sliding} with the arguments converted: `time` by
    # {#ticks}, `width` and `slide` by {#length}.
    #
    # @param time [Integer, Time, #to_time] the event's time.
    # @param width [Integer, #parts] the window length.
    # @param slide [Integer, #parts] the distance between window starts.
    # @return [Array<Array(Integer, Integer)>] `[[start, end], ...]` in
    #   ticks, newest first.
    # @raise [TypeError, RangeError, ArgumentError, CapacityError] as
    #   {#ticks}, {#length} and {WindowMachines.sliding} raise them.
    # @example
    #   WindowMachines::Clock.new(:s).sliding(Time.utc(1970, 1, 1, 0, 0, 12), 10, 5)   # => [[10, 20], [5, 15]]
    def sliding(time, width, slide)
      WindowMachines.sliding(to_ticks(time, "timestamp"), to_length(width, "width"), to_length(slide, "slide"))
    end

    # @param other [Object]
    # @return [Boolean] true for a Clock of the same class with the same unit.
    def ==(other)
      other.instance_of?(self.class) && other.unit == @unit
    end
    alias eql? ==

    # @return [Integer]
    def hash
      [self.class, @unit].hash
    end

    # @return [String] such as `#<WindowMachines::Clock ms>`.
    def inspect
      "#<#{self.class} #{@unit}>"
    end

    # @return [Hash{Symbol => Symbol}] `{ unit: unit }`, what `Marshal` writes.
    def marshal_dump
      { unit: @unit }
    end

    # Restores a clock from what {#marshal_dump} returned, read as untrusted
    # input. `Marshal.load` calls it on a new clock, which ends up frozen.
    #
    # @param checkpoint [Hash{Symbol => Symbol}] `{ unit: unit }`.
    # @return [void]
    # @raise [TypeError] if `checkpoint` is not a Hash.
    # @raise [ArgumentError] if the Hash holds anything but a valid `unit`.
    def marshal_load(checkpoint)
      unless checkpoint.instance_of?(::Hash)
        raise TypeError, "clock checkpoint must be a Hash, got #{described(checkpoint)}"
      end
      unless checkpoint.keys == [:unit]
        raise ArgumentError, "clock checkpoint must hold exactly :unit, got #{shown(checkpoint)}"
      end

      setup(checkpoint[:unit])
    end

    private

    def setup(unit)
      per_second = PER_SECOND[unit] if ::Symbol === unit
      raise ArgumentError, "unit must be :s, :ms, :us or :ns, got #{described(unit)}" if per_second.nil?

      @unit = unit
      @per_second = per_second
      freeze
    end

    # A copy (`dup`, `clone`) is frozen too.
    def initialize_copy(other)
      super
      freeze
    end

    def to_ticks(value, name)
      # Module#=== asks for the object's real class, which a Duration cannot
      # fake: ActiveSupport::Duration answers is_a?(Integer) with true, but
      # Integer === 30.minutes is false. (ActiveSupport does redefine
      # Time.=== to accept a TimeWithZone, whose to_r is exact too; without
      # that, a TimeWithZone takes the to_time path below.)
      return checked_integer(value, name) if ::Integer === value
      return seconds_to_ticks(value, value.to_r, name) if ::Time === value

      if duration?(value)
        raise TypeError, "#{name} must be an Integer, a Time or a DateTime, got #{described(value)}: " \
                         "a length, not a point in time"
      end
      if date?(value)
        raise TypeError, "#{name} must be an Integer, a Time or a DateTime, got #{described(value)}: " \
                         "a day, not a point in time (convert it with a time zone first)"
      end
      unless !responds?(value, :to_str) && responds?(value, :to_time)
        raise TypeError, "#{name} must be an Integer, a Time or a DateTime, got #{described(value)}"
      end

      time = value.to_time
      unless ::Time === time
        raise TypeError, "#{name}'s to_time must return a Time, got #{described(time)} from #{described(value)}"
      end

      seconds_to_ticks(value, time.to_r, name)
    end

    def seconds_to_ticks(value, seconds, name)
      # A Time subclass may define its own to_r: only an exact number of
      # seconds is read, never a Float (or nil, or NaN).
      unless ::Rational === seconds || ::Integer === seconds
        raise TypeError, "#{name}'s to_r must return a Rational, got #{described(seconds)} from #{described(value)}"
      end
      if seconds.negative?
        raise RangeError, "#{name} must not be before the epoch (1970-01-01 00:00:00 UTC), got #{described(value)}"
      end

      ticks = (seconds * @per_second).floor
      if ticks > MAX
        raise RangeError, "#{name} must be at most 2**64-1 #{@unit} (#{time(MAX).inspect}), got #{described(value)}"
      end

      ticks
    end

    def to_length(value, name)
      return checked_integer(value, name) if ::Integer === value

      unless duration?(value)
        raise TypeError, "#{name} must be an Integer or an ActiveSupport::Duration, got #{described(value)}"
      end

      variable = value.parts.select { |part, amount| VARIABLE_PARTS.include?(part) && amount != 0 }
      unless variable.empty?
        raise ArgumentError, "#{name} must not count months or years, whose length varies, got #{described(value)}"
      end

      seconds = value.value
      unless ::Integer === seconds || ::Rational === seconds
        raise TypeError, "#{name} must count its seconds in an Integer or a Rational, " \
                         "got #{described(value)} holding #{described(seconds)}"
      end
      raise RangeError, "#{name} must not be negative, got #{described(value)}" if seconds.negative?

      ticks = seconds * @per_second
      unless ::Integer === ticks || ticks.denominator == 1
        raise ArgumentError, "#{name} must be a whole number of #{@unit}, got #{described(value)}"
      end

      ticks = ticks.to_i
      raise RangeError, "#{name} must be at most 2**64-1 #{@unit}, got #{described(value)}" if ticks > MAX

      ticks
    end

    def checked_integer(value, name)
      raise TypeError, "#{name} must be an Integer, got #{described(value)}" unless ::Integer === value
      raise RangeError, "#{name} must be in 0..2**64-1, got #{shown(value)}" if value.negative? || value > MAX

      value
    end

    def duration?(value)
      DURATION_METHODS.all? { |method| responds?(value, method) }
    end

    # A Date that is not a DateTime. Date and DateTime are only referenced
    # when loaded: the gem requires neither.
    def date?(value)
      defined?(::Date) && ::Date === value && !(defined?(::DateTime) && ::DateTime === value)
    end

    # respond_to? that answers false for a BasicObject without one. (A
    # constant holding Kernel's UnboundMethods would not be shareable, and
    # Kernel#respond_to? bound to a Delegator misses its target's methods.)
    def responds?(value, method)
      value.respond_to?(method)
    rescue ::NoMethodError
      false
    end

    # `1.5 (Float)`, as the extension writes a value and its class: the real
    # class, which no object can override (a BasicObject has no `class`).
    def described(value)
      "#{shown(value)} (#{::Kernel.instance_method(:class).bind_call(value)})"
    end

    # The value's inspect, cut short as the extension cuts it: a message
    # never grows with its input.
    def shown(value)
      if ::String === value && value.bytesize > SHOWN_CHARS
        return "#{cut(value[0, SHOWN_CHARS].inspect)}... (#{value.bytesize} bytes)"
      end
      if ::Integer === value && (bytes = (value.abs.bit_length + 7) / 8) > 16
        return "an Integer of #{'-' if value.negative?}#{bytes} bytes"
      end

      cut(inspected(value))
    end

    def inspected(value)
      value.inspect
    rescue ::NoMethodError
      ::Kernel.instance_method(:to_s).bind_call(value)
    end

    def cut(text)
      text.length > SHOWN_CHARS ? "#{text[0, SHOWN_CHARS]}..." : text
    end
  end
end
