# frozen_string_literal: true

require_relative "window_machines/version"
require_relative "window_machines/errors"
require_relative "window_machines/aggregate"
require_relative "window_machines/same_checkpoint"
require_relative "window_machines/clock"

begin
  # A precompiled gem ships one extension per Ruby minor version.
  require "window_machines/#{RUBY_VERSION[/\A\d+\.\d+/]}/window_machines"
rescue LoadError
  require "window_machines/window_machines"
end

# Documentation for the native classes, and their parts written in Ruby.
require_relative "window_machines/watermark"
require_relative "window_machines/sessions"
require_relative "window_machines/keyed_sessions"
require_relative "window_machines/aggregating"
require_relative "window_machines/hopping_windows"
require_relative "window_machines/tumbling_windows"
require_relative "window_machines/session_windows"
require_relative "window_machines/versioned_table"
require_relative "window_machines/clocked"
require_relative "window_machines/watermark_strategy"

# Event-time windowing: which windows a timestamp belongs to, when a window
# may close, and sessions of activity separated by a gap of silence.
#
# Timestamps, sizes, widths, slides, gaps and lateness are Integers in
# `0..2**64-1`, in whatever unit the caller chooses; the gem never reads a
# clock and never stores payloads. Any other value raises {TypeError}, an
# Integer outside the range raises {RangeError}, and every error raised for
# bad input includes {Error}. A refused call changes nothing (a batch call,
# below, keeps the elements before the one refused).
#
# The extension defines {tumbling}, {tumbling_starts}, {sliding},
# {Watermark}, {Sessions}, {KeyedSessions} and the aggregating windows
# natively; the files under `lib/` document them and add the parts written
# in Ruby.
#
# The batch calls ({tumbling_starts}, {Sessions#insert_all},
# {KeyedSessions#insert_all} and the aggregating windows' `add_all`) take
# many events at once, as Arrays, and apply each exactly as the single call
# would, in order. They exist because a single call's cost is mostly Ruby's
# method dispatch and the Array it returns; a batch call reads the Arrays in
# Rust and returns no Ruby object per event. An element that is refused
# raises the single call's error, named with its index (see
# {BatchElement}); the elements before it stay applied.
#
# @example Buckets for one event, and when one may close
#   WindowMachines.tumbling(12, 10)       # => [10, 20]
#   WindowMachines.sliding(12, 10, 5)     # => [[10, 20], [5, 15]]
#   watermark = WindowMachines::Watermark.new(22)
#   watermark.closes?(10, 20, 2)          # => true
module WindowMachines
  # Only directives in here, and nothing after this module: YARD files the
  # directives of a body without code under the namespace of the statement
  # that follows it.

  # @!method self.tumbling(timestamp, size)
  #   The tumbling window of `size` that holds `timestamp`. Windows are back
  #   to back and half-open: `start` is a multiple of `size` and is inside,
  #   `end` is `start + size` and is not.
  #   @param timestamp [Integer] in `0..2**64-1`.
  #   @param size [Integer] the window length, positive.
  #   @return [Array(Integer, Integer)] `[start, end]`, a new Array.
  #   @raise [TypeError] if an argument is not an Integer.
  #   @raise [RangeError] if an argument is outside `0..2**64-1`, or the
  #     window's end would be past `2**64-1`.
  #   @raise [ArgumentError] if `size` is 0.
  #   @example
  #     WindowMachines.tumbling(19, 10)   # => [10, 20]
  #     WindowMachines.tumbling(20, 10)   # => [20, 30]

  # @!method self.tumbling_starts(timestamps, size)
  #   The start of each timestamp's tumbling window of `size`, in order:
  #   for each, what `tumbling(timestamp, size)[0]` is. One Array of
  #   Integers comes back, with no window Array made per timestamp, so a
  #   batch of events can be bucketed (grouped by start, say) at a fraction
  #   of the cost of calling {tumbling} for each.
  #
  #   `size` is checked once, before any timestamp, so a zero size is
  #   refused even for an empty Array. `timestamps` is copied when the call
  #   starts. Interrupts (Ctrl-C, `Thread#raise`) are checked every 16,384
  #   timestamps, so even a huge batch stops promptly.
  #   @param timestamps [Array<Integer>, #to_ary] each in `0..2**64-1`.
  #   @param size [Integer] the window length, positive.
  #   @return [Array<Integer>] one start per timestamp, in the same order; a
  #     new Array.
  #   @raise [TypeError] if `timestamps` is neither an Array nor converts
  #     to one with `to_ary`, or `size` is not an Integer; or, extended with
  #     {BatchElement}, if a timestamp is not an Integer.
  #   @raise [RangeError] if `size` is outside `0..2**64-1`; or, extended
  #     with {BatchElement}, if a timestamp is, or its window's end would be
  #     past `2**64-1`.
  #   @raise [ArgumentError] if `size` is 0.
  #   @example
  #     WindowMachines.tumbling_starts([12, 19, 20, 7], 10)   # => [10, 10, 20, 0]
  #     WindowMachines.tumbling_starts([], 10)                # => []
  #   @example A refused timestamp is named by its index
  #     begin
  #       WindowMachines.tumbling_starts([12, -1], 10)
  #     rescue WindowMachines::RangeError => e
  #       e.index     # => 1
  #       e.message   # => "timestamp must be in 0..2**64-1, got -1 (at index 1)"
  #     end

  # @!method self.sliding(timestamp, width, slide)
  #   Every window of `width` that starts at a multiple of `slide` and holds
  #   `timestamp`, newest (largest start) first. Windows never start below 0;
  #   a timestamp that falls between windows (`slide` wider than `width`)
  #   gets an empty Array.
  #
  #   A `width` and `slide` with `ceil(width / slide) > 32` are refused for
  #   every timestamp, so a configuration is valid or not regardless of the
  #   data.
  #   @param timestamp [Integer] in `0..2**64-1`.
  #   @param width [Integer] the window length, positive.
  #   @param slide [Integer] the distance between window starts, positive.
  #   @return [Array<Array(Integer, Integer)>] `[[start, end], ...]`, at most
  #     32 windows, each a new Array.
  #   @raise [TypeError] if an argument is not an Integer.
  #   @raise [RangeError] if an argument is outside `0..2**64-1`, or a
  #     window's end would be past `2**64-1`.
  #   @raise [ArgumentError] if `width` or `slide` is 0.
  #   @raise [CapacityError] if `ceil(width / slide)` is over 32.
  #   @example
  #     WindowMachines.sliding(12, 10, 5)   # => [[10, 20], [5, 15]]
  #     WindowMachines.sliding(3, 10, 5)    # => [[0, 10]]
  #     WindowMachines.sliding(12, 1, 5)    # => []
end
