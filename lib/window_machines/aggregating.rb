# frozen_string_literal: true

module WindowMachines
  # What {HoppingWindows}, {TumblingWindows} and {SessionWindows} share
  # beyond their native methods: the hand-over enumerators, reading a
  # checkpoint back, and equality by value: the same class and checkpoint,
  # aggregators (built-ins compare by kind and field, custom ones as they
  # define `eql?`) and `on_late:` included.
  module Aggregating
    include SameCheckpoint
    # Gives an including class {ClassMethods}.
    # @param base [Class]
    # @return [void]
    def self.included(base)
      base.extend(ClassMethods)
    end

    # Reading checkpoints back.
    module ClassMethods
      # A tracker from a `to_h` checkpoint (or a JSON round trip of one).
      # Aggregators are code, not state, so they are given again; the
      # checkpoint is checked as untrusted input, against them too.
      # @param checkpoint [Hash]
      # @param aggregate [Aggregate::Builtin, #initial, Hash] the aggregators
      #   the checkpoint was made with, a Hash of them in the same order
      #   (aggregates are matched by position); a field read as a String
      #   after JSON is still the field you give here.
      # @param on_late [:raise, :drop, #call]
      # @return [self]
      # @raise [TypeError, ArgumentError, RangeError, CapacityError] for a
      #   malformed checkpoint, one that does not fit the aggregators, or
      #   windows and a clock no sequence of events could have made: windows
      #   out of place or order, one no event went into (a `Count` without a
      #   field at 0) or the stream time has not seen, late events with no
      #   watermark. The aggregates are not checked against each other.
      def from_h(checkpoint, aggregate:, on_late: :raise)
        checkpoint = checkpoint.merge(aggregate: aggregate, on_late: on_late) if checkpoint.is_a?(Hash)
        restore_checkpoint(checkpoint)
      end
    end

    # Hands over every closed window (or session), in closing order, and
    # frees its state.
    # @yieldparam key [Object]
    # @yieldparam start [Integer] window start, or a session's first event.
    # @yieldparam finish [Integer] window end, or a session's last event.
    # @yieldparam result [Object] the aggregate.
    # @return [self, Enumerator] self; an Enumerator without a block.
    # @raise [FrozenError] if the tracker is frozen.
    def each_closed(&block)
      return enum_for(:each_closed) unless block

      hand_over_each(true, &block)
    end

    # Hands over everything still held, closed or not, in closing order:
    # for the end of input.
    # @yieldparam key [Object]
    # @yieldparam start [Integer]
    # @yieldparam finish [Integer]
    # @yieldparam result [Object]
    # @return [self, Enumerator] self; an Enumerator without a block.
    # @raise [FrozenError] if the tracker is frozen.
    def flush(&block)
      return enum_for(:flush) unless block

      hand_over_each(false, &block)
    end

    # Ends the input: the watermark moves to 2**64-1 ({Watermark::END_OF_TIME})
    # whatever the `watermark:` mode, so every window (or session) held has
    # closed, and each is handed over in closing order. The tracker is then
    # empty, and an event added after it is late.
    # @yieldparam key [Object]
    # @yieldparam start [Integer]
    # @yieldparam finish [Integer]
    # @yieldparam result [Object]
    # @return [self, Enumerator] self; an Enumerator without a block, which
    #   ends the input when it is iterated.
    # @raise [FrozenError] if the tracker is frozen.
    def finish(&block)
      return enum_for(:finish) unless block

      end_input
      hand_over_each(true, &block)
    end
  end
end
