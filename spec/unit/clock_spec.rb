# frozen_string_literal: true

require "date"
require "delegate"

# WindowMachines::Clock without ActiveSupport (the specs' process never loads
# it): Durations are played by a double that behaves as
# ActiveSupport::Duration does where it matters, lying about being an
# Integer included. spec/process/clock_active_support_spec.rb runs the real
# ActiveSupport in a child Ruby.
module WindowMachinesSpec
  # ActiveSupport::Duration's shape: `parts` (a Hash, or pairs as in
  # ActiveSupport 5.0), `value` (seconds), `since`, and everything else
  # delegated to the value, is_a?(Integer) included.
  class FakeDuration
    attr_reader :value, :parts

    def initialize(value, parts = { seconds: value })
      @value = value
      @parts = parts
    end

    def since(time = ::Time.now) = time + value

    def is_a?(klass) = FakeDuration == klass || value.is_a?(klass)
    alias kind_of? is_a?

    def instance_of?(klass) = FakeDuration == klass || value.instance_of?(klass)

    def inspect = "#{value} seconds"

    def respond_to_missing?(name, include_private = false) = value.respond_to?(name, include_private)

    def method_missing(name, *args, &block)
      value.respond_to?(name) ? value.public_send(name, *args, &block) : super
    end
  end

  # A Time-like object that is not a Time: to_time returns whatever it holds.
  class TimeLike
    def initialize(time) = @time = time
    def to_time = @time
    def inspect = "#<TimeLike #{@time.inspect}>"
  end
end

RSpec.describe WindowMachines::Clock do
  let(:max) { WindowMachinesSpec::MAX }

  units = { s: 1, ms: 1_000, us: 1_000_000, ns: 1_000_000_000 }

  # An example's name for a value, a BasicObject included.
  def self.label_for(value)
    klass = ::Kernel.instance_method(:class).bind_call(value)
    [Object, BasicObject].include?(klass) ? "an instance of #{klass}" : "#{value.inspect} (#{klass})"
  end

  def clock(unit) = described_class.new(unit)

  def duration(value, parts = { seconds: value }) = WindowMachinesSpec::FakeDuration.new(value, parts)

  # 2024-05-01 12:00:00.123456789 UTC, and its ticks in each unit.
  let(:instant) { Time.at(1_714_564_800, 123_456_789, :nsec, in: "UTC") }
  let(:instant_ticks) do
    { s: 1_714_564_800, ms: 1_714_564_800_123, us: 1_714_564_800_123_456, ns: 1_714_564_800_123_456_789 }
  end

  # The part of the extension's message after "got ", for the same value.
  def native_shown(value)
    WindowMachines.tumbling(value, 1)
  rescue WindowMachines::Error => e
    e.message[/, got (.*)\z/m, 1]
  end

  describe ".new" do
    units.each do |unit, per_second|
      it "makes a frozen, shareable #{unit} clock with #{per_second} ticks a second" do
        clock = described_class.new(unit)
        expect(clock.unit).to be(unit)
        expect(clock.per_second).to eq(per_second)
        expect(clock).to be_frozen
        expect(Ractor.shareable?(clock)).to be(true)
      end
    end

    [:sec, :MS, :m, :h, :nanoseconds, "ms", "s", 1_000, 1, nil, true, 1.0, Object.new].each do |unit|
      it "refuses #{unit.inspect} with ArgumentError", :mistyped do
        expect_gem_error(WindowMachines::ArgumentError,
                         "unit must be :s, :ms, :us or :ns, got #{unit.inspect} (#{unit.class})") do
          described_class.new(unit)
        end
      end
    end
  end

  describe "#ticks" do
    units.each do |unit, per_second|
      describe "in #{unit}" do
        it "passes an Integer through unchanged, 0 and 2**64-1 included" do
          [0, 1, 12, per_second - 1, per_second, 1_714_564_800_123, max - 1, max].each do |integer|
            expect(clock(unit).ticks(integer)).to be(integer)
          end
        end

        it "refuses an Integer outside 0..2**64-1 with the extension's RangeError" do
          [-1, 2**64, -2**64, 2**200, -2**200].each do |integer|
            message = "timestamp must be in 0..2**64-1, got #{native_shown(integer)}"
            expect_gem_error(WindowMachines::RangeError, message) { clock(unit).ticks(integer) }
          end
        end

        it "converts a Time to ticks since the epoch" do
          expect(clock(unit).ticks(instant)).to eq(instant_ticks.fetch(unit))
          expect(clock(unit).ticks(Time.at(0))).to eq(0)
          expect(clock(unit).ticks(Time.utc(1970, 1, 1, 0, 0, 1))).to eq(per_second)
        end

        it "reads the instant, not the wall clock: local times and offsets give the same ticks" do
          [instant.getlocal, instant.getlocal("+05:30"), instant.getlocal("-11:00"), instant.localtime("+14:00")].each do |time|
            expect(clock(unit).ticks(time)).to eq(instant_ticks.fetch(unit))
          end
          expect(clock(unit).ticks(Time.new(1970, 1, 1, 1, 0, 0, "+01:00"))).to eq(0)
        end

        it "floors a remainder below one tick, never rounding up" do
          tick = Rational(1, per_second)
          base = Time.at(1_714_564_800, in: "UTC")
          expected = 1_714_564_800 * per_second
          [Rational(1, 10**12), tick / 2, tick * 999 / 1000, tick - Rational(1, 10**30)].each do |remainder|
            expect(clock(unit).ticks(base + remainder)).to eq(expected)
            expect(clock(unit).ticks(base + tick + remainder)).to eq(expected + 1)
          end
          expect(clock(unit).ticks(base + tick)).to eq(expected + 1)
        end

        it "is exact for Times with Rational fractions of a second" do
          [Rational(1, 3), Rational(2, 3), Rational(999_999_999_999, 10**12), Rational(10**9 + 7, 10**9 + 9)].each do |fraction|
            time = Time.at(1_000_000_000 + fraction)
            expect(clock(unit).ticks(time)).to eq(((1_000_000_000 + fraction) * per_second).floor)
          end
        end

        it "refuses a time before the epoch, even by less than one tick, with RangeError" do
          [Time.at(-1), Time.at(Rational(-1, 10**15)), Time.utc(1969, 12, 31, 23, 59, 59.999r),
           Time.utc(1900, 1, 1), Time.new(1970, 1, 1, 0, 30, 0, "+01:00")].each do |time|
            expect_gem_error(WindowMachines::RangeError,
                             "timestamp must not be before the epoch (1970-01-01 00:00:00 UTC), " \
                             "got #{time.inspect} (Time)") { clock(unit).ticks(time) }
          end
        end

        it "reaches 2**64-1 ticks exactly, floors within the last tick, and refuses a time after it" do
          last = Time.at(Rational(max, per_second), in: "UTC")
          expect(clock(unit).ticks(last)).to eq(max)
          expect(clock(unit).ticks(last + Rational(1, per_second * 10))).to eq(max)
          expect(clock(unit).ticks(last + Rational(per_second - 1, per_second * per_second))).to eq(max)
          [last + Rational(1, per_second), last + 1, Time.at(2**65)].each do |time|
            expect_gem_error(WindowMachines::RangeError, /\Atimestamp must be at most 2\*\*64-1 #{unit} \(.*\), got /) do
              clock(unit).ticks(time)
            end
          end
        end

        it "agrees with Time#to_i and Time#nsec for Times made from Floats and Rationals" do
          times = [Time.at(0.3), Time.at(1.1), Time.at(1_714_564_800.123456), Time.at(0.1 + 0.2)]
          times += Array.new(200) { Time.at(Rational(rand(2**40), rand(1..2**40))) }
          times.each do |time|
            ns = (time.to_i * 10**9) + time.nsec
            expect(clock(unit).ticks(time)).to eq(ns / (10**9 / per_second)), time.inspect
          end
        end

        it "takes a DateTime exactly, its offset and fraction of a second included" do
          date_time = DateTime.new(2024, 5, 1, 14, 0, Rational(123_456_789_999, 10**12), "+02:00")
          expect(clock(unit).ticks(date_time)).to eq(instant_ticks.fetch(unit))
          expect(clock(unit).ticks(DateTime.new(1970, 1, 1, 1, 0, 0, "+01:00"))).to eq(0)
        end

        it "refuses a DateTime before the epoch or past 2**64-1 ticks with RangeError" do
          expect_gem_error(WindowMachines::RangeError, /before the epoch/) do
            clock(unit).ticks(DateTime.new(1970, 1, 1, 0, 59, 59, "+01:00"))
          end
          last = Time.at(Rational(max, per_second), in: "UTC")
          after = DateTime.new(last.year, last.month, last.day, last.hour, last.min,
                               last.sec + last.subsec + Rational(1, per_second))
          expect_gem_error(WindowMachines::RangeError, /at most 2\*\*64-1/) { clock(unit).ticks(after) }
        end

        it "takes anything whose to_time returns a Time" do
          expect(clock(unit).ticks(WindowMachinesSpec::TimeLike.new(instant))).to eq(instant_ticks.fetch(unit))
        end

        # RBS's runtime checker cannot see a delegator's methods, so it
        # reports this call though the delegator has a to_time.
        it "takes a delegator to a Time", :mistyped do
          expect(clock(unit).ticks(SimpleDelegator.new(instant))).to eq(instant_ticks.fetch(unit))
        end

        it "round-trips with #time for ticks across the whole range" do
          ([0, 1, per_second, max - 1, max] + Array.new(200) { rand(2**64) }).each do |ticks|
            expect(clock(unit).ticks(clock(unit).time(ticks))).to eq(ticks)
          end
        end
      end
    end

    it "is exact at nanoseconds where a Float is not" do
      time = Time.at(1_714_564_800, Rational(123_456_789_999, 1000), :nsec)
      expect(clock(:ns).ticks(time)).to eq(1_714_564_800_123_456_789)
      expect((time.to_f * 10**9).to_i).not_to eq(1_714_564_800_123_456_789)
    end

    it "refuses a Time subclass whose own to_r is not an exact number of seconds with TypeError", :mistyped do
      [1.5, nil, "5", Complex(5, 1), Float::NAN].each do |seconds|
        odd = Class.new(Time) { define_method(:to_r) { seconds } }.at(5)
        expect { clock(:ms).ticks(odd) }.to raise_error(WindowMachines::TypeError, /to_r must return a Rational/)
      end
      expect(clock(:ms).ticks(Class.new(Time).at(5))).to eq(5000)
    end

    it "floors a time built from 0.3, whose exact value is below 0.3 seconds" do
      expect(clock(:ns).ticks(Time.at(0.3))).to eq(299_999_999)
      expect(clock(:ms).ticks(Time.at(0.3))).to eq(299)
      expect(clock(:ns).ticks(Time.at(3r / 10))).to eq(300_000_000)
    end

    describe "refusals", :mistyped do
      (WindowMachinesSpec::NOT_INTEGERS + [Object.new, BasicObject.new, [1], { at: 1 }, 1i]).each do |value|
        it "refuses #{label_for(value)} with TypeError in the extension's style" do
          message = "timestamp must be an Integer, a Time or a DateTime, got #{native_shown(value)}"
          units.each_key { |unit| expect_gem_error(WindowMachines::TypeError, message) { clock(unit).ticks(value) } }
        end
      end

      it "cuts a long value short in the message, as the extension does" do
        long = "2024-05-01T12:00:00Z#{' ' * 100}"
        expect_gem_error(WindowMachines::TypeError, "timestamp must be an Integer, a Time or a DateTime, " \
                                                    "got #{native_shown(long)}") { clock(:ms).ticks(long) }
        expect(native_shown(long)).to end_with("... (120 bytes) (String)")
      end

      it "refuses a Duration (a length, not a point in time), though it claims to be an Integer" do
        minutes = duration(1_800, { minutes: 30 })
        expect(minutes.is_a?(Integer)).to be(true)
        expect(minutes.instance_of?(Integer)).to be(true)
        units.each_key do |unit|
          expect_gem_error(WindowMachines::TypeError, "timestamp must be an Integer, a Time or a DateTime, " \
                                                      "got 1800 seconds (WindowMachinesSpec::FakeDuration): " \
                                                      "a length, not a point in time") { clock(unit).ticks(minutes) }
        end
      end

      it "refuses a Date: a day, not a point in time" do
        date = Date.new(2024, 5, 1)
        expect(date).to respond_to(:to_time)
        expect_gem_error(WindowMachines::TypeError, /\Atimestamp must be an Integer, a Time or a DateTime, got #<Date: 2024-05-01 .*\(Date\): a day, not a point in time/) do
          clock(:s).ticks(date)
        end
      end

      it "refuses a String even when it has a to_time" do
        string_with_to_time = Class.new(String) { def to_time = Time.at(0) }.new("1970-01-01")
        expect_gem_error(WindowMachines::TypeError, /\Atimestamp must be an Integer, a Time or a DateTime, got "1970-01-01"/) do
          clock(:s).ticks(string_with_to_time)
        end
        to_str = Class.new { def to_str = "1970-01-01"
                             def to_time = Time.at(0) }.new
        expect_gem_error(WindowMachines::TypeError, /must be an Integer, a Time or a DateTime/) { clock(:s).ticks(to_str) }
      end

      it "refuses a to_time that returns something other than a Time" do
        [nil, 0, "1970-01-01"].each do |result|
          like = WindowMachinesSpec::TimeLike.new(result)
          expect_gem_error(WindowMachines::TypeError,
                           "timestamp's to_time must return a Time, got #{result.inspect} (#{result.class}) " \
                           "from #{like.inspect} (WindowMachinesSpec::TimeLike)") { clock(:ms).ticks(like) }
        end
        [Date.new(2024, 5, 1), DateTime.new(2024, 5, 1), WindowMachinesSpec::TimeLike.new(Time.at(0))].each do |result|
          expect_gem_error(WindowMachines::TypeError, /\Atimestamp's to_time must return a Time, got #<.*\(#{result.class}\) from/) do
            clock(:ms).ticks(WindowMachinesSpec::TimeLike.new(result))
          end
        end
      end
    end
  end

  describe "#length" do
    units.each do |unit, per_second|
      describe "in #{unit}" do
        it "passes an Integer through unchanged, 0 and 2**64-1 included" do
          [0, 1, 60, per_second, max].each { |integer| expect(clock(unit).length(integer)).to be(integer) }
        end

        it "refuses an Integer outside 0..2**64-1 with the extension's RangeError" do
          [-1, 2**64, 2**200].each do |integer|
            expect_gem_error(WindowMachines::RangeError, "length must be in 0..2**64-1, got #{native_shown(integer)}") do
              clock(unit).length(integer)
            end
          end
        end

        it "converts a Duration to ticks, though it claims to be an Integer" do
          minutes = duration(1_800, { minutes: 30 })
          expect(minutes.is_a?(Integer)).to be(true)
          expect(clock(unit).length(minutes)).to eq(1_800 * per_second)
          expect(clock(unit).length(duration(86_400 * 7, { weeks: 1 }))).to eq(604_800 * per_second)
          expect(clock(unit).length(duration(0))).to eq(0)
        end

        it "converts a Duration holding Rational seconds exactly" do
          expect(clock(unit).length(duration(Rational(3_600, 1), { hours: Rational(1, 1) }))).to eq(3_600 * per_second)
          expect(clock(unit).length(duration(Rational(5, 1)))).to eq(5 * per_second)
        end

        it "takes a Duration of exactly 2**64-1 ticks and refuses one tick more with RangeError" do
          expect(clock(unit).length(duration(Rational(max, per_second)))).to eq(max)
          longer = duration(Rational(max + 1, per_second))
          expect_gem_error(WindowMachines::RangeError, "length must be at most 2**64-1 #{unit}, got #{longer.inspect} " \
                                                       "(WindowMachinesSpec::FakeDuration)") { clock(unit).length(longer) }
          expect_gem_error(WindowMachines::RangeError, /at most 2\*\*64-1/) { clock(unit).length(duration(2**64)) }
        end

        it "refuses a negative Duration with RangeError, whatever its parts" do
          [duration(-5), duration(-1, { hours: 1, seconds: -3_601 }), duration(Rational(-1, 10**12)),
           duration(-(2**70))].each do |negative|
            expect_gem_error(WindowMachines::RangeError,
                             "length must not be negative, got #{negative.inspect} (WindowMachinesSpec::FakeDuration)") do
              clock(unit).length(negative)
            end
          end
        end

        it "takes a Duration whose parts cancel out" do
          expect(clock(unit).length(duration(0, { hours: 1, seconds: -3_600 }))).to eq(0)
        end
      end
    end

    it "refuses a Duration that is not a whole number of ticks with ArgumentError" do
      half = duration(Rational(1, 2))
      expect(clock(:ms).length(half)).to eq(500)
      expect_gem_error(WindowMachines::ArgumentError,
                       "length must be a whole number of s, got 1/2 seconds (WindowMachinesSpec::FakeDuration)") do
        clock(:s).length(half)
      end
      third = duration(Rational(1, 3))
      units.each_key do |unit|
        expect_gem_error(WindowMachines::ArgumentError, /\Alength must be a whole number of #{unit}, got 1\/3 seconds/) do
          clock(unit).length(third)
        end
      end
      expect(clock(:ns).length(duration(Rational(1, 10**9)))).to eq(1)
      expect_gem_error(WindowMachines::ArgumentError, /whole number of ns/) { clock(:ns).length(duration(Rational(1, 10**10))) }
    end

    it "refuses a Duration that names months or years with ArgumentError, in either shape of parts" do
      [duration(2_629_746, { months: 1 }), duration(31_556_952, { years: 1 }),
       duration(2_629_748, { months: 1, seconds: 2 }), duration(2_629_746, [[:months, 1]]),
       duration(3_456_000, { months: 1, weeks: 1, days: 2, hours: 13, minutes: 30, seconds: 54 }),
       duration(-2_629_746, { months: -1 }), duration(2_629_746.0, { months: 1.0 })].each do |varying|
        units.each_key do |unit|
          expect_gem_error(WindowMachines::ArgumentError, "length must not count months or years, whose length varies, " \
                                                          "got #{varying.inspect} (WindowMachinesSpec::FakeDuration)") do
            clock(unit).length(varying)
          end
        end
      end
    end

    it "takes a Duration whose months or years are zero" do
      expect(clock(:s).length(duration(0, { months: 0 }))).to eq(0)
      expect(clock(:s).length(duration(60, { years: 0, minutes: 1 }))).to eq(60)
      expect(clock(:s).length(duration(60, [[:months, 0], [:seconds, 60]]))).to eq(60)
    end

    it "counts a Duration's value, not its parts (ActiveSupport 6.1 forgets the parts of 1.hour / 2)" do
      expect(clock(:s).length(duration(1_800, {}))).to eq(1_800)
    end

    describe "refusals", :mistyped do
      (WindowMachinesSpec::NOT_INTEGERS + [Object.new, BasicObject.new, 1i]).each do |value|
        it "refuses #{label_for(value)} with TypeError" do
          message = "length must be an Integer or an ActiveSupport::Duration, got #{native_shown(value)}"
          units.each_key { |unit| expect_gem_error(WindowMachines::TypeError, message) { clock(unit).length(value) } }
        end
      end

      it "refuses points in time with TypeError" do
        [Time.at(60), DateTime.new(1970, 1, 1, 0, 1, 0), Date.new(1970, 1, 2),
         WindowMachinesSpec::TimeLike.new(Time.at(60))].each do |value|
          expect_gem_error(WindowMachines::TypeError, /\Alength must be an Integer or an ActiveSupport::Duration, got /) do
            clock(:s).length(value)
          end
        end
      end

      it "refuses a Duration holding its seconds in a Float (1.5.seconds), even a whole one, with TypeError" do
        [duration(1.5), duration(1_800.0, { minutes: 30.0 }), duration(0.1)].each do |floating|
          units.each_key do |unit|
            expect_gem_error(WindowMachines::TypeError,
                             "length must count its seconds in an Integer or a Rational, got #{floating.inspect} " \
                             "(WindowMachinesSpec::FakeDuration) holding #{floating.value} (Float)") do
              clock(unit).length(floating)
            end
          end
        end
      end

      it "refuses a Duration holding something other than a number with TypeError" do
        expect_gem_error(WindowMachines::TypeError, /holding nil \(NilClass\)\z/) { clock(:s).length(duration(nil, {})) }
        expect_gem_error(WindowMachines::TypeError, /holding "60" \(String\)\z/) { clock(:s).length(duration("60", {})) }
      end
    end
  end

  describe "#time" do
    units.each do |unit, per_second|
      it "gives a new UTC Time for #{unit} ticks, exactly" do
        [0, 1, per_second - 1, 1_714_564_800_123, max].each do |ticks|
          time = clock(unit).time(ticks)
          expect(time).to be_an_instance_of(Time)
          expect(time).to be_utc
          expect(time.to_r).to eq(Rational(ticks, per_second))
          expect(clock(unit).time(ticks)).not_to be(time)
        end
        expect(clock(unit).time(instant_ticks.fetch(unit))).to eq(Time.at(Rational(instant_ticks.fetch(unit), per_second)))
      end

      it "refuses #{unit} ticks outside 0..2**64-1 with RangeError" do
        [-1, 2**64].each do |ticks|
          expect_gem_error(WindowMachines::RangeError, "ticks must be in 0..2**64-1, got #{ticks}") { clock(unit).time(ticks) }
        end
      end
    end

    it "keeps every digit of a nanosecond tick" do
      time = clock(:ns).time(1_500_000_001)
      expect([time.to_i, time.nsec, time.subsec]).to eq([1, 500_000_001, Rational(500_000_001, 10**9)])
      expect(clock(:ns).time(max).inspect).to eq("2554-07-21 23:34:33.709551615 UTC")
      expect(clock(:s).time(max).to_i).to eq(max)
    end

    it "refuses anything but an Integer with TypeError, a Time or a Duration included", :mistyped do
      (WindowMachinesSpec::NOT_INTEGERS + [Time.at(0), duration(60)]).each do |value|
        expect_gem_error(WindowMachines::TypeError, /\Aticks must be an Integer, got /) { clock(:ms).time(value) }
      end
    end
  end

  describe "#tumbling and #sliding" do
    it "answer as the module functions do, in ticks, for Times and Durations" do
      clock = clock(:ms)
      time = Time.utc(2024, 5, 1, 12, 0, 42.5r)
      at = 1_714_564_842_500
      expect(clock.tumbling(time, 60_000)).to eq(WindowMachines.tumbling(at, 60_000))
      expect(clock.tumbling(time, duration(60, { minutes: 1 }))).to eq([1_714_564_800_000, 1_714_564_860_000])
      expect(clock.tumbling(at, 60_000)).to eq([1_714_564_800_000, 1_714_564_860_000])
      expect(clock.sliding(time, duration(60, { minutes: 1 }), duration(20))).to eq(WindowMachines.sliding(at, 60_000, 20_000))
      expect(clock.sliding(time, 60_000, 20_000)).to eq([[1_714_564_840_000, 1_714_564_900_000],
                                                         [1_714_564_820_000, 1_714_564_880_000],
                                                         [1_714_564_800_000, 1_714_564_860_000]])
      expect(clock(:s).sliding(DateTime.new(1970, 1, 1, 0, 0, 12), 10, 5)).to eq([[10, 20], [5, 15]])
    end

    it "pass on the module functions' own refusals" do
      clock = clock(:s)
      expect_gem_error(WindowMachines::ArgumentError, "size must be positive, got 0") { clock.tumbling(Time.at(5), 0) }
      expect_gem_error(WindowMachines::ArgumentError, "size must be positive, got 0") { clock.tumbling(Time.at(5), duration(0)) }
      expect_gem_error(WindowMachines::ArgumentError, "slide must be positive, got 0") { clock.sliding(Time.at(5), 10, 0) }
      expect_gem_error(WindowMachines::CapacityError, /more than 32/) { clock.sliding(Time.at(5), duration(60), 1) }
      expect_gem_error(WindowMachines::RangeError, /past 2\*\*64-1/) { clock.tumbling(Time.at(max), 10) }
    end

    it "name the argument a conversion refused", :mistyped do
      clock = clock(:s)
      expect_gem_error(WindowMachines::TypeError, /\Atimestamp must be an Integer, a Time or a DateTime, got 1.5/) do
        clock.tumbling(1.5, 10)
      end
      expect_gem_error(WindowMachines::TypeError, /\Asize must be an Integer or an ActiveSupport::Duration, got 1.5/) do
        clock.tumbling(Time.at(5), 1.5)
      end
      expect_gem_error(WindowMachines::TypeError, /\Awidth must be/) { clock.sliding(Time.at(5), 10.0, 5) }
      expect_gem_error(WindowMachines::ArgumentError, /\Aslide must be a whole number of s/) do
        clock.sliding(Time.at(5), 10, duration(Rational(1, 2)))
      end
      expect_gem_error(WindowMachines::RangeError, /\Atimestamp must not be before the epoch/) { clock.tumbling(Time.at(-5), 10) }
      expect_gem_error(WindowMachines::RangeError, "size must be in 0..2**64-1, got -1") { clock.tumbling(5, -1) }
    end
  end

  describe "equality, hashing, inspect, copies and Marshal" do
    it "compares equal by unit, and works as a Hash key" do
      expect(clock(:ms)).to eq(clock(:ms))
      expect(clock(:ms)).to eql(clock(:ms))
      expect(clock(:ms).hash).to eq(clock(:ms).hash)
      expect(clock(:ms)).not_to eq(clock(:us))
      expect(clock(:ms)).not_to eql(clock(:ns))
      expect(clock(:s)).not_to eq(:s)
      expect(clock(:s)).not_to eq(1)
      expect({ clock(:ms) => 1 }[clock(:ms)]).to eq(1)
      expect(units.keys.map { |unit| clock(unit) }.uniq.size).to eq(4)
    end

    it "inspects as its class and unit" do
      units.each_key { |unit| expect(clock(unit).inspect).to eq("#<WindowMachines::Clock #{unit}>") }
    end

    it "cannot be changed" do
      clock = clock(:ms)
      expect_frozen_error(clock) { clock.instance_variable_set(:@unit, :ns) }
      expect_frozen_error(clock) { clock.marshal_load({ unit: :ns }) }
      expect(clock.unit).to be(:ms)
    end

    it "copies into frozen, equal clocks" do
      clock = clock(:us)
      [clock.dup, clock.clone, clock.clone(freeze: false)].each do |copy|
        expect(copy).to eq(clock)
        expect(copy).to be_frozen
        expect(copy.per_second).to eq(1_000_000)
      end
    end

    units.each do |unit, per_second|
      it "survives a Marshal round trip as a frozen #{unit} clock" do
        copy = Marshal.load(Marshal.dump(clock(unit)))
        expect(copy).to eq(clock(unit))
        expect(copy).to be_frozen
        expect(copy.per_second).to eq(per_second)
        expect(copy.ticks(instant)).to eq(instant_ticks.fetch(unit))
        expect(Marshal.load(Marshal.dump([clock(unit), clock(unit)])).uniq.size).to eq(1)
      end
    end

    it "refuses a tampered Marshal stream", :mistyped do
      tampered = Marshal.dump(clock(:ms)).sub(":\x07ms".b, ":\x07xs".b)
      expect(tampered).not_to eq(Marshal.dump(clock(:ms)))
      expect_gem_error(WindowMachines::ArgumentError, "unit must be :s, :ms, :us or :ns, got :xs (Symbol)") do
        Marshal.load(tampered)
      end
      blank = described_class.allocate
      expect_gem_error(WindowMachines::TypeError, "clock checkpoint must be a Hash, got :ms (Symbol)") { blank.marshal_load(:ms) }
      [{}, { "unit" => :ms }, { unit: :ms, extra: 1 }].each do |checkpoint|
        expect_gem_error(WindowMachines::ArgumentError, "clock checkpoint must hold exactly :unit, got #{checkpoint.inspect}") do
          blank.marshal_load(checkpoint)
        end
      end
      expect_gem_error(WindowMachines::ArgumentError, /\Aunit must be/) { blank.marshal_load({ unit: "ms" }) }
      expect(blank).not_to be_frozen
    end
  end

  it "works inside a Ractor, refusals included", :ractor do
    experimental = Warning[:experimental]
    Warning[:experimental] = false
    ractor = Ractor.new(clock(:ms)) do |clock|
      refused = begin
        clock.ticks(1.5)
      rescue WindowMachines::TypeError => e
        e.message
      end
      [clock.ticks(Time.at(1, 500, :millisecond)), clock.length(60_000), clock.time(1_500), clock.tumbling(Time.at(61), 60_000),
       refused]
    end
    expect(ractor.take).to eq([1_500, 60_000, Time.at(1.5r).utc, [60_000, 120_000],
                               "timestamp must be an Integer, a Time or a DateTime, got 1.5 (Float)"])
  ensure
    Warning[:experimental] = experimental
  end
end
