# frozen_string_literal: true

module WindowMachines
  # Included by every error class the gem defines, so that
  # `rescue WindowMachines::Error` catches any error raised for bad input,
  # while `rescue ArgumentError` and friends keep working. A frozen receiver
  # raises Ruby's own `FrozenError`, which does not include it.
  #
  # @example
  #   begin
  #     WindowMachines.tumbling(12, 0)
  #   rescue WindowMachines::Error => e
  #     e.class     # => WindowMachines::ArgumentError
  #     e.message   # => "size must be positive, got 0"
  #   end
  module Error; end

  # A call's arguments contradict each other or its rules: a zero size,
  # width, slide, gap or max_sessions, a window whose start is after its
  # finish, or a checkpoint with missing, unknown or inconsistent contents.
  class ArgumentError < ::ArgumentError
    include Error
  end

  # An argument that is not an Integer (nothing is coerced, not even objects
  # that respond to `to_int`), or a checkpoint part of the wrong type.
  class TypeError < ::TypeError
    include Error
  end

  # An Integer outside `0..2**64-1`, or a window whose end would be past it.
  class RangeError < ::RangeError
    include Error
  end

  # An event at or below the watermark: it may belong to a window or session
  # that was already reported, so it is refused rather than misfiled.
  class LateEventError < ArgumentError
    # @return [Integer, nil] the refused event's timestamp.
    attr_reader :timestamp
    # @return [Integer, nil] the watermark it was at or below, or (for
    #   windows) that every window holding it had closed under.
    attr_reader :watermark
    # @return [Object, nil] the event's key, for keyed trackers.
    attr_reader :key
  end

  # A fixed capacity would be exceeded: a 33rd session held for one tracker
  # or key, a total past `max_sessions`, a sliding configuration that puts
  # a timestamp in more than 32 windows, or a checkpoint with more sessions
  # than a tracker holds.
  class CapacityError < RangeError
    # @return [Integer, nil] the capacity that would have been exceeded (32
    #   sessions or sliding windows, `max_sessions`, ...).
    attr_reader :limit
    # @return [Integer, nil] the timestamp of the refused event, when an
    #   event was refused (not a configuration or a checkpoint).
    attr_reader :timestamp
    # @return [Integer, nil] the tracker's watermark when the event was
    #   refused (nil if it had none yet, or no event was refused).
    attr_reader :watermark
    # @return [Object, nil] the refused event's key, for keyed trackers.
    attr_reader :key
  end
end
