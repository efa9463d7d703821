# frozen_string_literal: true

# WindowMachines::Clock with the real ActiveSupport (Debian's
# ruby-activesupport), in a child Ruby: the specs' own process never loads
# it, so spec/unit/clock_spec.rb covers the same rules with a Duration
# double. spec/fixtures/clock_active_support.rb records every case; these
# examples read what it recorded. Without ActiveSupport they fail and say
# how to install it (CI installs it), rather than being skipped.
RSpec.describe "WindowMachines::Clock with ActiveSupport" do
  include WindowMachinesSpec::FixtureProcess

  units = { s: 1, ms: 1_000, us: 1_000_000, ns: 1_000_000_000 }
  max = WindowMachinesSpec::MAX

  before(:context) { @results = run_fixture("clock_active_support.rb") }

  # The recorded outcome of a case, after checking ActiveSupport was there.
  def recorded(label)
    load_error = @results[:load_error]
    expect(load_error).to be_nil, lambda {
      "ActiveSupport could not be loaded in the child Ruby (#{load_error}). Install Debian's ruby-activesupport " \
        "(sudo apt-get install -y ruby-activesupport), as CI does, and run these examples again."
    }
    @results.fetch(:cases).fetch(label)
  end

  def result_of(label)
    outcome = recorded(label)
    expect(outcome.first).to eq(:ok), -> { "#{label}: raised #{outcome[1]}: #{outcome[2]}" }
    outcome.last
  end

  def expect_refused(label, klass, message)
    outcome = recorded(label)
    expect(outcome.first).to eq(:error), -> { "#{label}: returned #{outcome.last.inspect} instead of raising" }
    _, class_name, text, gem_error = outcome
    expect(class_name).to eq(klass.name), -> { "#{label}: raised #{class_name}: #{text}" }
    expect(text).to match(message)
    expect(gem_error).to be(true)
  end

  it "does not load ActiveSupport when window_machines is loaded" do
    expect(@results.fetch(:before)).to eq({ active_support: false, features: [] })
  end

  it "runs against ActiveSupport 6.1 or newer" do
    recorded("30.minutes is_a? Integer")
    expect(Gem::Version.new(@results.fetch(:version))).to be >= Gem::Version.new("6.1")
  end

  it "meets Durations that claim to be Integers, recognised by parts, value and since" do
    expect(result_of("30.minutes is_a? Integer")).to be(true)
    expect(result_of("Integer === 30.minutes")).to be(false)
    expect(result_of("30.minutes responds to parts, value and since")).to eq([true, true, true])
  end

  it "meets TimeWithZones that claim to be Times but are not" do
    expect(result_of("Time.zone.at is a TimeWithZone, not a Time")).to eq([true, true])
  end

  units.each do |unit, per_second|
    describe "in #{unit}" do
      it "converts Durations exactly, days and weeks at 86,400 and 604,800 seconds" do
        expect(result_of("length 30.minutes #{unit}")).to eq(1_800 * per_second)
        expect(result_of("length 1.day #{unit}")).to eq(86_400 * per_second)
        expect(result_of("length 2.weeks #{unit}")).to eq(1_209_600 * per_second)
        expect(result_of("length 2.hours + 30.seconds #{unit}")).to eq(7_230 * per_second)
        expect(result_of("length 0.seconds #{unit}")).to eq(0)
        expect(result_of("length parse PT1H30M #{unit}")).to eq(5_400 * per_second)
        expect(result_of("length 1.hour / 2 #{unit}")).to eq(1_800 * per_second)
        expect(result_of("length 1.hour * Rational(1, 2) #{unit}")).to eq(1_800 * per_second)
        expect(result_of("length 1.month - 1.month #{unit}")).to eq(0)
        expect(result_of("length max #{unit}")).to eq(max)
      end

      it "takes half a second only where it is a whole number of ticks, and a third nowhere" do
        if unit == :s
          expect_refused("length Rational(1, 2).seconds s", WindowMachines::ArgumentError,
                         "length must be a whole number of s, got 1/2 seconds (ActiveSupport::Duration)")
        else
          expect(result_of("length Rational(1, 2).seconds #{unit}")).to eq(per_second / 2)
        end
        expect_refused("length Rational(1, 3).seconds #{unit}", WindowMachines::ArgumentError,
                       "length must be a whole number of #{unit}, got 1/3 seconds (ActiveSupport::Duration)")
      end

      it "refuses Durations counted in Floats with TypeError" do
        expect_refused("length 1.5.seconds #{unit}", WindowMachines::TypeError,
                       "length must count its seconds in an Integer or a Rational, " \
                       "got 1.5 seconds (ActiveSupport::Duration) holding 1.5 (Float)")
        expect_refused("length 1.hour * 1.5 #{unit}", WindowMachines::TypeError, /holding 5400.0 \(Float\)\z/)
        expect_refused("length parse PT0.5S #{unit}", WindowMachines::TypeError, /holding 0.5 \(Float\)\z/)
      end

      it "refuses months and years with ArgumentError, Duration.build's months included" do
        ["1.month", "1.year", "1.month + 1.second", "build 40 days"].each do |name|
          expect_refused("length #{name} #{unit}", WindowMachines::ArgumentError,
                         /\Alength must not count months or years, whose length varies, got .*\(ActiveSupport::Duration\)\z/)
        end
      end

      it "refuses negative Durations and ones longer than 2**64-1 ticks with RangeError" do
        expect_refused("length -5.seconds #{unit}", WindowMachines::RangeError,
                       "length must not be negative, got -5 seconds (ActiveSupport::Duration)")
        expect_refused("length 1.hour - 2.hours #{unit}", WindowMachines::RangeError, /must not be negative/)
        expect_refused("length max + 1 #{unit}", WindowMachines::RangeError, /\Alength must be at most 2\*\*64-1 #{unit}, got /)
      end

      it "refuses a Duration as a point in time or as ticks, and a TimeWithZone as a length, with TypeError" do
        expect_refused("ticks 30.minutes #{unit}", WindowMachines::TypeError,
                       "timestamp must be an Integer, a Time or a DateTime, got 30 minutes (ActiveSupport::Duration): " \
                       "a length, not a point in time")
        expect_refused("time 30.minutes #{unit}", WindowMachines::TypeError,
                       "ticks must be an Integer, got 30 minutes (ActiveSupport::Duration)")
        expect_refused("length TimeWithZone #{unit}", WindowMachines::TypeError,
                       /\Alength must be an Integer or an ActiveSupport::Duration, got .* \(ActiveSupport::TimeWithZone\)\z/)
      end

      it "converts TimeWithZones exactly, flooring below one tick, across daylight saving time" do
        nanos = 1_714_564_800_123_456_789
        expect(result_of("ticks Time.zone.at #{unit}")).to eq(nanos / (10**9 / per_second))
        expect(result_of("ticks Time.zone.at sub-ns #{unit}")).to eq(nanos / (10**9 / per_second))
        expect(result_of("ticks in_time_zone #{unit}")).to eq(nanos / (10**9 / per_second))
        expect(result_of("ticks after DST starts #{unit}")).to eq(1_711_846_800 * per_second)
        expect(result_of("ticks before DST starts #{unit}")).to eq(1_711_846_799 * per_second)
        expect(result_of("ticks twice 02:30 when DST ends #{unit}")).to eq([1_729_989_000 * per_second,
                                                                            1_729_992_600 * per_second])
      end

      it "takes a TimeWithZone at the epoch and at 2**64-1 ticks, and refuses one before or after with RangeError" do
        expect(result_of("ticks Time.zone.at epoch #{unit}")).to eq(0)
        expect(result_of("ticks Time.zone.at max #{unit}")).to eq(max)
        ["-1", "sub-tick before epoch"].each do |name|
          expect_refused("ticks Time.zone.at #{name} #{unit}", WindowMachines::RangeError,
                         /\Atimestamp must not be before the epoch \(1970-01-01 00:00:00 UTC\), got .* CET \+01:00 \(ActiveSupport::TimeWithZone\)\z/)
        end
        expect_refused("ticks Time.zone.at max + 1 #{unit}", WindowMachines::RangeError,
                       /\Atimestamp must be at most 2\*\*64-1 #{unit} \(.* UTC\), got .*\(ActiveSupport::TimeWithZone\)\z/)
      end

      it "converts a DateTime exactly with ActiveSupport's DateTime#to_time" do
        expect(result_of("ticks DateTime #{unit}")).to eq(1_714_564_800_123_456_789 / (10**9 / per_second))
      end

      it "refuses Strings and Dates with TypeError, though ActiveSupport gives them a to_time" do
        expect_refused("ticks String #{unit}", WindowMachines::TypeError,
                       'timestamp must be an Integer, a Time or a DateTime, got "2024-05-01 12:00:00 UTC" (String)')
        expect_refused("ticks Date #{unit}", WindowMachines::TypeError,
                       "timestamp must be an Integer, a Time or a DateTime, got Wed, 01 May 2024 (Date): " \
                       "a day, not a point in time (convert it with a time zone first)")
        expect_refused("ticks Date.current #{unit}", WindowMachines::TypeError, /\(Date\): a day, not a point in time/)
      end

      it "gives back plain UTC Times that hold the TimeWithZone's tick" do
        class_name, utc, seconds, not_after, next_after = result_of("round trip #{unit}")
        expect([class_name, utc, not_after, next_after]).to eq(["Time", true, true, true])
        expect(seconds).to eq(Rational(1_714_564_800_123_456_789 / (10**9 / per_second), per_second))
      end
    end
  end

  it "runs the module functions with TimeWithZones and Durations" do
    expect(result_of("tumbling 1.minute")).to eq([1_714_564_800_000, 1_714_564_860_000])
    expect(result_of("sliding 10.minutes 5.minutes")).to eq([[1_714_564_800_000, 1_714_565_400_000],
                                                             [1_714_564_500_000, 1_714_565_100_000]])
    expect(result_of("tumbling Time.current")).to eq([Integer, Integer])
    expect_refused("tumbling 1.month", WindowMachines::ArgumentError,
                   "size must not count months or years, whose length varies, got 1 month (ActiveSupport::Duration)")
    expect_refused("tumbling 0.seconds", WindowMachines::ArgumentError, "size must be positive, got 0")
    expect_refused("sliding 1.hour 1.second", WindowMachines::CapacityError, /more than 32\z/)
  end
end
