# frozen_string_literal: true

module PlainRuby
  # WindowMachines::Watermark in plain Ruby.
  class Watermark
    UNSET = Object.new.freeze
    private_constant :UNSET

    attr_reader :value

    def initialize(timestamp = UNSET)
      @value = UNSET.equal?(timestamp) ? nil : Check.integer("timestamp", timestamp)
    end

    def advance(timestamp)
      Check.not_frozen(self)
      Check.integer("timestamp", timestamp)
      return false unless @value.nil? || timestamp > @value

      @value = timestamp
      true
    end

    def closes?(start, finish, lateness)
      Check.integer("start", start)
      Check.integer("finish", finish)
      Check.integer("lateness", lateness)
      if start > finish
        raise WindowMachines::ArgumentError,
              "start must not be after finish, got start #{start} and finish #{finish}"
      end

      Check.passed?(@value, finish, lateness)
    end

    def inspect
      "#<#{self.class} value=#{@value.inspect}>"
    end
  end
end
