# frozen_string_literal: true

module PlainRuby
  # Argument and receiver checks shared by every call, in the contract's order:
  # frozen receiver, then each argument (type, then range).
  module Check
    module_function

    def integer(name, value)
      unless value.is_a?(Integer)
        raise WindowMachines::TypeError, "#{name} must be an Integer, got #{value.inspect} (#{value.class})"
      end
      raise WindowMachines::RangeError, "#{name} must be in 0..2**64-1, got #{value}" if value.negative? || value > MAX

      value
    end

    def positive(name, value)
      raise WindowMachines::ArgumentError, "#{name} must be positive, got 0" if value.zero?
    end

    def not_frozen(receiver)
      return unless receiver.frozen?

      raise FrozenError.new("can't modify frozen #{receiver.class}: #{receiver.inspect}", receiver: receiver)
    end

    # Whether everything up to time + lateness is settled under watermark; a
    # sum past MAX counts as MAX.
    def passed?(watermark, time, lateness)
      !watermark.nil? && (time + lateness <= watermark || watermark == MAX)
    end
  end
end
