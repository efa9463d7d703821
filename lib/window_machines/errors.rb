# frozen_string_literal: true

module WindowMachines
  # Included by every error the gem raises on bad input, so that
  # `rescue WindowMachines::Error` catches them all while `rescue ArgumentError`
  # and friends keep working.
  module Error; end

  # A call's arguments contradict each other or its rules (a zero length,
  # a window that starts after it finishes).
  class ArgumentError < ::ArgumentError
    include Error
  end

  # An argument that is not an Integer.
  class TypeError < ::TypeError
    include Error
  end

  # An Integer outside 0..2**64-1, or a result that would not fit in it.
  class RangeError < ::RangeError
    include Error
  end

  # An event at or below the watermark: it may belong to a window that was
  # already reported, so it is refused rather than misfiled.
  class LateEventError < ArgumentError; end

  # A fixed capacity would be exceeded: a 33rd session, or a sliding
  # configuration that puts a timestamp in more than 32 windows.
  class CapacityError < RangeError; end
end
