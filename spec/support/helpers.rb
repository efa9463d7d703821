# frozen_string_literal: true

# Values and helpers shared by the specs.
module WindowMachinesSpec
  # The top of the domain: every value is an Integer in 0..MAX.
  MAX = 2**64 - 1

  # Not an Integer, though it converts to one implicitly. The gem must refuse
  # it rather than coerce it.
  class IntLike
    def to_int = 3
    def to_i = 3
    def inspect = "#<IntLike 3>"
  end

  # Every kind of non-Integer the contract names.
  NOT_INTEGERS = [1.5, 3r, "1", nil, true, :a, IntLike.new].freeze

  # Integers just outside 0..MAX, on both sides.
  OUT_OF_RANGE = [-1, 2**64].freeze

  # Helpers mixed into every example group.
  module Helpers
    MAX = WindowMachinesSpec::MAX

    # A Sessions tracker with `timestamps` inserted, then the watermark advanced.
    def sessions_with(gap, *timestamps, watermark: nil)
      sessions = WindowMachines::Sessions.new(gap)
      timestamps.each { |timestamp| sessions.insert(timestamp) }
      sessions.advance_watermark(watermark) unless watermark.nil?
      sessions
    end

    # A Sessions tracker holding exactly 32 sessions (0, 10, ..., 310 with gap 5).
    def full_sessions(watermark: nil)
      sessions_with(5, *(0...32).map { |n| n * 10 }, watermark: watermark)
    end

    # Everything a caller can observe about a tracker or watermark, to compare
    # before and after a call that should have changed nothing.
    def observable_state(object)
      case object
      when WindowMachines::Watermark
        { value: object.value, inspect: object.inspect }
      when WindowMachines::Sessions
        { gap: object.gap, watermark: object.watermark, size: object.size,
          to_a: object.to_a, inspect: object.inspect }
      end
    end

    # Expects the block to raise `klass` (a gem error class) with `message`,
    # and checks the error is also the plain Ruby class the README names and a
    # WindowMachines::Error.
    def expect_gem_error(klass, message, &block)
      expect(&block).to raise_error(klass, message) { |error|
        expect(error).to be_a(klass.ancestors.find { |ancestor| ruby_base?(ancestor) })
        expect(error).to be_a(WindowMachines::Error)
      }
    end

    def ruby_base?(klass)
      [::ArgumentError, ::TypeError, ::RangeError].include?(klass)
    end

    # Expects the block to raise Ruby's own FrozenError with `receiver` set.
    def expect_frozen_error(receiver, &block)
      expect(&block).to raise_error(FrozenError) { |error|
        expect(error).to be_an_instance_of(FrozenError)
        expect(error.receiver).to be(receiver)
        expect(error).not_to be_a(WindowMachines::Error)
      }
    end
  end
end

RSpec.configure do |config|
  config.include WindowMachinesSpec::Helpers
end
