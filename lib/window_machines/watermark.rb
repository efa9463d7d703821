# frozen_string_literal: true

module WindowMachines
  # The caller's statement that no event at or below a timestamp will still
  # arrive. It starts unset (nil) or at a given timestamp and only ever moves
  # forward; {#closes?} says whether a window has waited long enough past its
  # end to be reported.
  #
  # Defined by the native extension; this file documents it. Watermarks
  # compare by value, can be frozen (then {#advance} raises `FrozenError`),
  # and survive a restart through {#to_h} / {.from_h} or `Marshal`. `dup`
  # copies the value into an unfrozen watermark; `clone` keeps the frozen
  # state too.
  #
  # @example
  #   watermark = WindowMachines::Watermark.new
  #   watermark.advance(22)            # => true
  #   watermark.advance(9)             # => false, ignored
  #   watermark.value                  # => 22
  #   watermark.closes?(10, 20, 2)     # => true: 20 + 2 is not past 22
  #   watermark.closes?(10, 20, 3)     # => false
  class Watermark
    # @!method self.from_h(checkpoint)
    #   A watermark restored from the Hash {#to_h} returns, read as untrusted
    #   input. Keys may be Symbols or Strings, so a JSON round trip works.
    #   @param checkpoint [Hash{Symbol, String => Integer, nil}] exactly one
    #     key, `value`, holding nil or an Integer in `0..2**64-1`.
    #   @return [Watermark] a new, unfrozen watermark.
    #   @raise [TypeError] if `checkpoint` is not a Hash, or the value is
    #     neither nil nor an Integer.
    #   @raise [RangeError] if the value is outside `0..2**64-1`.
    #   @raise [ArgumentError] if `value` is missing or given twice, or
    #     another key is present.
    #   @example
    #     WindowMachines::Watermark.from_h({ "value" => 22 }).value   # => 22

    # @!method initialize(timestamp = nil)
    #   @overload initialize
    #     A watermark that has seen nothing: {#value} is nil and {#closes?}
    #     is false for every window.
    #   @overload initialize(timestamp)
    #     A watermark that starts at `timestamp`.
    #     @param timestamp [Integer] in `0..2**64-1` (nil is refused: leave
    #       the argument out instead).
    #   @raise [TypeError] if `timestamp` is given and is not an Integer.
    #   @raise [RangeError] if `timestamp` is outside `0..2**64-1`.

    # @!method value
    #   @return [Integer, nil] the watermark, or nil if it has not been set.

    # @!method advance(timestamp)
    #   Moves the watermark to `timestamp` if that is forward. A timestamp at
    #   or below the current value is ignored.
    #   @param timestamp [Integer] in `0..2**64-1`.
    #   @return [Boolean] true if the watermark moved (it was nil, or
    #     `timestamp` is above it), false otherwise.
    #   @raise [FrozenError] if the watermark is frozen, even when it would
    #     not move.
    #   @raise [TypeError] if `timestamp` is not an Integer.
    #   @raise [RangeError] if `timestamp` is outside `0..2**64-1`.

    # @!method closes?(start, finish, lateness)
    #   Whether the window `[start, finish)` has waited `lateness` past its
    #   end: the watermark is set and `finish + lateness <= value`, where a
    #   sum past `2**64-1` counts as `2**64-1`. Works on a frozen watermark.
    #   @param start [Integer] the window's start, in `0..2**64-1`.
    #   @param finish [Integer] the window's end, in `0..2**64-1`, not below
    #     `start`.
    #   @param lateness [Integer] how long past `finish` to wait, in
    #     `0..2**64-1`.
    #   @return [Boolean]
    #   @raise [TypeError] if an argument is not an Integer.
    #   @raise [RangeError] if an argument is outside `0..2**64-1`.
    #   @raise [ArgumentError] if `start` is after `finish`.
    #   @example
    #     watermark = WindowMachines::Watermark.new(22)
    #     watermark.closes?(10, 20, 2)   # => true
    #     watermark.closes?(20, 30, 0)   # => false: still open

    # @!method to_h
    #   The watermark as a checkpoint that JSON, YAML or a database column can
    #   hold; {.from_h} reads it back.
    #   @return [Hash{Symbol => Integer, nil}] `{value: value}`, a new Hash.
    #   @example
    #     WindowMachines::Watermark.new(22).to_h   # => {value: 22}

    # @!method marshal_dump
    #   Called by `Marshal.dump`.
    #   @return [Hash{Symbol => Integer, nil}] the same Hash as {#to_h}.

    # @!method marshal_load(checkpoint)
    #   Called by `Marshal.load` on a new watermark, with the data
    #   {#marshal_dump} returned. The data is checked as {.from_h} checks it.
    #   @param checkpoint [Hash{Symbol, String => Integer, nil}]
    #   @return [void]
    #   @raise [FrozenError] if the watermark is frozen.
    #   @raise [TypeError, RangeError, ArgumentError] as {.from_h} does.

    # @!method ==(other)
    #   @param other [Object]
    #   @return [Boolean] true if `other` is a watermark of the same class
    #     with the same value.

    # @!method eql?(other)
    #   The same as {#==}, so watermarks work as Hash keys.
    #   @param other [Object]
    #   @return [Boolean]

    # @!method hash
    #   @return [Integer] a hash code consistent with {#eql?}.

    # @!method inspect
    #   @return [String] the class and the value, e.g.
    #     `#<WindowMachines::Watermark value=22>`.

    # The largest timestamp, where every window and session has closed: what
    # each tracker's `finish` moves its watermark to.
    END_OF_TIME = 2**64 - 1

    # Ends the input: advances to {END_OF_TIME}, where every window closes.
    # @return [Boolean] true if the watermark moved.
    # @raise [FrozenError] if the watermark is frozen.
    def finish
      advance(END_OF_TIME)
    end
  end
end
