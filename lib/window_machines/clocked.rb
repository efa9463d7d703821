# frozen_string_literal: true

module WindowMachines
  # The `clock:` keyword every class takes at construction. A tracker built
  # with a {Clock} accepts Times (and Time-like objects) wherever it takes a
  # timestamp, and Durations wherever it takes a length, converting each
  # with {Clock#ticks} and {Clock#length}; Integers pass through as ticks.
  # It still answers in Integers, which {Clock#time} turns back into Times.
  #
  # A tracker built without a clock is untouched: the conversion lives in a
  # module that only clocked trackers are extended with, so an Integer call
  # costs exactly what it did. The clock is kept in `@clock` (the {#clock}
  # reader) and travels with `dup`, `clone` and Marshal; `from_h` takes it
  # again as `clock:`, since a checkpoint holds no code.
  module Clocked
    # @return [Clock, nil] the clock the tracker was built with.
    def clock
      @clock if instance_variable_defined?(:@clock)
    end

    # @param other [Object]
    # @return [Boolean] what the class's own `==` says, and the same clock
    #   (or none on both).
    def ==(other)
      super && other.respond_to?(:clock) && other.clock == clock
    end

    # @param other [Object]
    # @return [Boolean] what the class's own `eql?` says, and the same clock.
    def eql?(other)
      super && other.respond_to?(:clock) && other.clock.eql?(clock)
    end

    # @return [Integer] a hash code consistent with {#eql?}.
    def hash
      clock ? [super, clock].hash : super
    end

    # @!visibility private
    def initialize_copy(other)
      super
      Clocked.attach(self, clock) if clock
    end

    # @!visibility private
    def marshal_dump
      clock ? super.merge(clock: clock) : super
    end

    # @!visibility private
    def marshal_load(checkpoint)
      return super unless checkpoint.is_a?(Hash) && (checkpoint.key?(:clock) || checkpoint.key?("clock"))

      checkpoint = checkpoint.dup
      # Checked first: a refused load changes nothing.
      clock = Clocked.checked(checkpoint.delete(:clock) || checkpoint.delete("clock"))
      super(checkpoint)
      Clocked.attach(self, clock)
    end

    class << self
      # Gives `klass` the `clock:` keyword: `new` and `from_h` take it, and
      # the methods named in `calls` convert the arguments whose position
      # names a kind (`:ticks` for a timestamp, `:length` for a length).
      # @param klass [Class]
      # @param arguments [Array<Symbol, nil>] kinds of `new`'s positional
      #   arguments, by position.
      # @param keywords [Hash{Symbol => Symbol}] kinds of `new`'s keywords.
      # @param calls [Hash{Symbol => Array<Symbol, nil>}] kinds of each
      #   method's positional arguments, by position, for the methods that
      #   change the tracker.
      # @param reads [Hash{Symbol => Array<Symbol, nil>}] the same for the
      #   methods that only read it.
      # @return [void]
      # @!visibility private
      def install(klass, arguments:, calls:, reads: {}, keywords: {})
        klass.const_set(:ClockedCalls, converting(calls, reads))
        # Once in a class's ancestors: a subclass of a clocked class
        # (TumblingWindows) inherits it rather than wrapping it twice.
        klass.prepend(self) unless klass.include?(self)
        klass.singleton_class.prepend(constructing(arguments, keywords))
      end

      # Keeps `clock` in `tracker` and makes its calls convert.
      # @return [Object] the tracker.
      # @!visibility private
      def attach(tracker, clock)
        clock = checked(clock)
        # The nearest class installed (a user's subclass has none of its
        # own), found before anything changes and by Kernel's `class`, not
        # the tracker's.
        installed = ::Kernel.instance_method(:class).bind_call(tracker).ancestors
                            .find { |ancestor| ancestor.const_defined?(:ClockedCalls, false) }
        tracker.instance_variable_set(:@clock, clock)
        tracker.extend(installed.const_get(:ClockedCalls, false))
      end

      # @return [Clock] `clock`, if it is one.
      # @raise [TypeError] otherwise.
      # @!visibility private
      def checked(clock)
        # Clock's ===, not the object's is_a?: no code of the object runs.
        return clock if Clock === clock

        raise TypeError, "clock must be a WindowMachines::Clock, got #{clock.inspect}"
      end

      # `values`, each converted as `kinds` says at its position.
      # @!visibility private
      def convert(clock, values, kinds)
        values.each_with_index.map { |value, index| converted(clock, value, kinds[index]) }
      end

      # `value` as ticks (`:ticks`), a length (`:length`) or an Array of
      # ticks (`:each_ticks`, a batch call's timestamps); nil, or a value of
      # no kind, as it is.
      # @!visibility private
      def converted(clock, value, kind)
        return value if kind.nil? || value.nil?
        return each_ticks(clock, value) if kind == :each_ticks

        clock.public_send(kind, value)
      end

      # A batch's times as ticks, converted before the batch starts: a time
      # the clock refuses stops the batch before anything is applied, with
      # the error naming its index. Anything but an Array goes on as it is,
      # for the batch call to refuse.
      # @!visibility private
      def each_ticks(clock, values)
        return values unless values.respond_to?(:to_ary)

        values.to_ary.each_with_index.map do |value, index|
          clock.ticks(value)
        rescue ::TypeError, ::RangeError, ::ArgumentError => e
          raise BatchElement.named(e, index)
        end
      end

      private

      # Method bodies are shareable procs (self is this module, what they
      # read is frozen), so trackers work in any Ractor.
      def shareable(&body) = Ractor.make_shareable(body)

      def converting(calls, reads)
        Module.new.tap do |calls_module|
          calls.merge(reads).each do |name, kinds|
            kinds = Ractor.make_shareable(kinds)
            changes = calls.key?(name)
            calls_module.define_method(name, &shareable do |*args, **options, &block|
              # A frozen tracker refuses a change before its arguments are
              # looked at, as without a clock: no argument's conversion
              # (its to_time, its to_r) runs for a call that cannot happen.
              args = Clocked.convert(@clock, args, kinds) unless changes && frozen?
              super(*args, **options, &block)
            end)
          end
        end
      end

      def constructing(arguments, keywords)
        arguments = Ractor.make_shareable(arguments)
        keywords = Ractor.make_shareable(keywords)
        Module.new.tap do |constructing|
          constructing.define_method(:new, &shareable do |*args, clock: nil, **options, &block|
            return super(*args, **options, &block) if clock.nil?

            args = Clocked.convert(Clocked.checked(clock), args, arguments)
            options = options.to_h { |name, value| [name, Clocked.converted(clock, value, keywords[name])] }
            Clocked.attach(super(*args, **options, &block), clock)
          end)
          # A checkpoint may come as bare keywords, which a native from_h
          # takes as its one Hash: passed on the same way.
          constructing.define_method(:from_h, &shareable do |*args, **options|
            clock = options.delete(:clock)
            restored = options.empty? ? super(*args) : super(*args, **options)
            clock.nil? ? restored : Clocked.attach(restored, clock)
          end)
        end
      end
    end
  end

  Clocked.install(Watermark, arguments: %i[ticks], calls: { advance: %i[ticks] },
                             reads: { closes?: %i[ticks ticks length] })
  Clocked.install(Sessions, arguments: %i[length],
                            calls: { insert: %i[ticks], insert_all: %i[each_ticks], advance_watermark: %i[ticks] })
  Clocked.install(KeyedSessions, arguments: %i[length],
                                 calls: { insert: [nil, :ticks], insert_all: [nil, :each_ticks],
                                          advance_watermark: %i[ticks] })
  aggregating = { add: [nil, :ticks], add_all: [nil, :each_ticks], advance_watermark: %i[ticks] }
  Clocked.install(HoppingWindows, arguments: %i[length length], keywords: { grace: :length, offset: :length },
                                  calls: aggregating)
  Clocked.install(TumblingWindows, arguments: %i[length], keywords: { grace: :length, offset: :length },
                                   calls: aggregating)
  Clocked.install(SessionWindows, arguments: %i[length], keywords: { grace: :length }, calls: aggregating)
  Clocked.install(VersionedTable, arguments: %i[length], calls: { put: [nil, nil, :ticks], delete: [nil, :ticks] },
                                  reads: { get: [nil, :ticks], version: [nil, :ticks] })
end
