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

  # The element a batch call refused. The batch calls
  # ({WindowMachines.tumbling_starts}, {Sessions#insert_all},
  # {KeyedSessions#insert_all}, {HoppingWindows#add_all} and
  # {SessionWindows#add_all}) apply their elements one by one, as the single
  # call would; when one is refused they raise the error the single call
  # would have raised, as a copy (same class, same readers) whose message
  # ends with " (at index N)" and which is extended with this module. The
  # elements before it stay applied, and none after it is, so a caller can
  # skip the refused element and go on from `index + 1`.
  #
  # Exceptions from Ruby code an element runs (a key's `hash` or `eql?`, a
  # custom aggregator, an `on_late` callable) are named the same way, when
  # they are StandardErrors. An exception raised by the block given to a
  # batch call is the block's own and passes through unchanged, as do
  # `break`, `throw` and exceptions that are no StandardError (an
  # `Interrupt` from Ctrl-C or `Thread#raise`, a `SystemExit`): those stop
  # the batch, they do not refuse an element. With a `clock:`, a time the
  # clock refuses is named by its index too, and is raised before any
  # element is applied.
  #
  # @example
  #   sessions = WindowMachines::Sessions.new(10)
  #   begin
  #     sessions.insert_all([5, 7, "8"])
  #   rescue WindowMachines::TypeError => e
  #     e.index       # => 2
  #     e.message     # => "timestamp must be an Integer, got \"8\" (String) (at index 2)"
  #     sessions.to_a # => [[5, 7]]
  #   end
  module BatchElement
    # @return [Integer] the refused element's position in the arrays given,
    #   from 0.
    attr_reader :index

    # `error`, named as refusing the element at `index`.
    # @param error [Exception]
    # @param index [Integer]
    # @return [Exception]
    # @!visibility private
    def self.named(error, index)
      # A frozen exception's clone is frozen too: copy an unfrozen one.
      source = error.frozen? ? error.dup : error
      source.exception("#{error.message} (at index #{index})").tap do |named|
        named.extend(self)
        named.instance_variable_set(:@index, index)
      end
    end
  end
end
