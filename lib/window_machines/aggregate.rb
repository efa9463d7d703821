# frozen_string_literal: true

module WindowMachines
  # Aggregators for {HoppingWindows}, {TumblingWindows} and their kin: what a
  # window carries for the events it took in. The built-ins run natively,
  # without a Ruby call per event for Integer and Float inputs. Each reads
  # `value[field]` when given a field (a nil value reads as nil), the value
  # itself otherwise.
  #
  # A custom aggregator is any object with `initial`, `add(acc, value)` and,
  # where windows are merged (hopping windows, sessions), `merge(a, b)`; it
  # gets the whole value, and its accumulator is the window's result.
  #
  # @example Views and money spent per window
  #   aggregate = { views: WindowMachines::Aggregate::Count.new,
  #                 spent: WindowMachines::Aggregate::Sum.new(:amount) }
  module Aggregate
    # A Hash result from `template` (each name to its index) and the values
    # by index: `transform_values` copies the template's table, so no name's
    # `hash` or `eql?` runs while a window is being handed over.
    # @param template [Hash{Object => Integer}]
    # @param values [Array]
    # @return [Hash]
    # @!visibility private
    def self.named_results(template, values) = template.transform_values { |index| values.fetch(index) }
    private_class_method :named_results

    # The built-ins' common part: a field to read, and the kind the
    # extension runs.
    class Builtin
      # @return [Object, nil] the key read from each value, or nil to use
      #   the value itself.
      attr_reader :field

      # @param field [Object, nil] the key to read from each value with `[]`.
      def initialize(field = nil)
        @field = field
        freeze
      end

      # @return [Symbol] the aggregator's name, as checkpoints write it.
      def kind = self.class::KIND

      # @param other [Object]
      # @return [Boolean] true for the same aggregator reading the same field.
      def ==(other) = other.instance_of?(self.class) && other.field.eql?(field)
      alias eql? ==

      # @return [Integer]
      def hash = [self.class, field].hash

      # @return [String]
      def inspect = field.nil? ? "#<#{self.class}>" : "#<#{self.class} #{field.inspect}>"
    end

    # The number of events; with a field, of events whose field is not nil.
    class Count < Builtin
      # The name the extension knows this aggregator by.
      KIND = :count
    end

    # The sum of the inputs, nils skipped; 0 for none. Integer sums are
    # exact at any size; a Float input makes the sum a Float, as Ruby's
    # Integer#+ does; other Numerics are added with their own `+`. Anything
    # else raises {TypeError} and the event changes nothing.
    class Sum < Builtin
      # The name the extension knows this aggregator by.
      KIND = :sum
    end

    # The smallest input, nils skipped; nil for none. Equal inputs keep the
    # earlier arrival; objects other than Integers and Floats compare with
    # `<=>`.
    class Min < Builtin
      # The name the extension knows this aggregator by.
      KIND = :min
    end

    # The largest input, as {Min} finds the smallest.
    class Max < Builtin
      # The name the extension knows this aggregator by.
      KIND = :max
    end

    # The mean of the inputs as a Float (the sum's `fdiv` of the count: an
    # Integer sum is exact, Floats add as Floats do), nils skipped; nil for
    # none.
    class Mean < Builtin
      # The name the extension knows this aggregator by.
      KIND = :mean
    end

    # Every input (nils too) in event-time order; equal timestamps in
    # arrival order.
    class Collect < Builtin
      # The name the extension knows this aggregator by.
      KIND = :collect
    end

    # The input of the earliest event; among equal timestamps, the first to
    # arrive. nil for no events.
    class First < Builtin
      # The name the extension knows this aggregator by.
      KIND = :first
    end

    # The input of the latest event; among equal timestamps, the last to
    # arrive. nil for no events.
    class Last < Builtin
      # The name the extension knows this aggregator by.
      KIND = :last
    end
  end
end
