# frozen_string_literal: true

# Every public method that takes Integers, against every kind of bad input:
# the error class (the Ruby class the README names, the gem's own subclass and
# WindowMachines::Error), a message naming the argument with its value and
# class, the check order, and a receiver left exactly as it was.
RSpec.describe "Refused calls", :mistyped do
  bad_types = WindowMachinesSpec::NOT_INTEGERS
  out_of_range = WindowMachinesSpec::OUT_OF_RANGE

  def type_message(param, value)
    "#{param} must be an Integer, got #{value.inspect} (#{value.class})"
  end

  def range_message(param, value)
    "#{param} must be in 0..2**64-1, got #{value}"
  end

  # Builds the receiver, calls with `args`, expects the error, and checks the
  # receiver's observable state did not change.
  def expect_refused(call, receiver_builder, args, klass, message, freeze: false)
    receiver = instance_exec(&receiver_builder)
    receiver.freeze if freeze
    before = observable_state(receiver)
    if klass == FrozenError
      expect_frozen_error(receiver) { call.invoke(receiver, args) }
    else
      expect_gem_error(klass, message) { call.invoke(receiver, args) }
    end
    expect(observable_state(receiver)).to eq(before)
  end

  def with_arg(args, index, value)
    args.dup.tap { |copy| copy[index] = value }
  end

  WindowMachinesSpec::CALLS.each_value do |call|
    describe call.label do
      it "accepts the valid arguments the matrix starts from" do
        receiver = instance_exec(&call.receiver)
        expect { call.invoke(receiver, call.valid) }.not_to raise_error
      end

      call.params.each_with_index do |param, index|
        describe "argument #{param}" do
          bad_types.each do |value|
            it "refuses #{value.inspect} (#{value.class}) with TypeError" do
              expect_refused(call, call.receiver, with_arg(call.valid, index, value),
                             WindowMachines::TypeError, type_message(param, value))
            end
          end

          out_of_range.each do |value|
            it "refuses #{value} with RangeError" do
              expect_refused(call, call.receiver, with_arg(call.valid, index, value),
                             WindowMachines::RangeError, range_message(param, value))
            end
          end

          it "does not truncate 1.9 to 1" do
            expect_refused(call, call.receiver, with_arg(call.valid, index, 1.9),
                           WindowMachines::TypeError, type_message(param, 1.9))
          end

          if call.lengths.include?(param)
            it "refuses 0 with ArgumentError" do
              expect_refused(call, call.receiver, with_arg(call.valid, index, 0),
                             WindowMachines::ArgumentError, /\A#{param}\b.*\b0\b/)
            end

            call.params.each_with_index do |other, other_index|
              next if other_index == index

              it "checks #{other}'s type and range before refusing a zero #{param}" do
                zero = with_arg(call.valid, index, 0)
                expect_refused(call, call.receiver, with_arg(zero, other_index, 1.5),
                               WindowMachines::TypeError, type_message(other, 1.5))
                expect_refused(call, call.receiver, with_arg(zero, other_index, -1),
                               WindowMachines::RangeError, range_message(other, -1))
              end
            end
          end

          call.params.each_with_index do |later, later_index|
            next unless later_index > index

            it "is checked (type, then range) before #{later}" do
              expect_refused(call, call.receiver, with_arg(with_arg(call.valid, index, 1.5), later_index, -1),
                             WindowMachines::TypeError, type_message(param, 1.5))
              expect_refused(call, call.receiver, with_arg(with_arg(call.valid, index, -1), later_index, 1.5),
                             WindowMachines::RangeError, range_message(param, -1))
              expect_refused(call, call.receiver, with_arg(with_arg(call.valid, index, 2**64), later_index, nil),
                             WindowMachines::RangeError, range_message(param, 2**64))
            end
          end
        end
      end

      if call.mutator
        describe "on a frozen receiver" do
          it "raises FrozenError with the receiver, even for valid arguments" do
            expect_refused(call, call.receiver, call.valid, FrozenError, nil, freeze: true)
          end

          call.params.each_with_index do |param, index|
            (bad_types + out_of_range).each do |value|
              it "raises FrozenError before looking at #{param} #{value.inspect}" do
                expect_refused(call, call.receiver, with_arg(call.valid, index, value), FrozenError, nil,
                               freeze: true)
              end
            end
          end
        end
      elsif call.label.include?("#")
        it "works on a frozen receiver" do
          receiver = instance_exec(&call.receiver)
          expected = call.invoke(receiver, call.valid)
          expect(call.invoke(receiver.freeze, call.valid)).to eq(expected)
        end
      end
    end
  end

  describe "the calls' own rules" do
    WindowMachinesSpec::RULES.each do |rule|
      call = rule.call
      describe "#{call.label} with #{rule.description}" do
        it "raises #{rule.error} and changes nothing" do
          expect_refused(call, rule.receiver, rule.args, rule.error, rule.message)
        end

        call.params.each_with_index do |param, index|
          it "checks #{param} first" do
            expect_refused(call, rule.receiver, with_arg(rule.args, index, :a),
                           WindowMachines::TypeError, type_message(param, :a))
            expect_refused(call, rule.receiver, with_arg(rule.args, index, 2**64),
                           WindowMachines::RangeError, range_message(param, 2**64))
          end
        end

        if call.mutator
          it "raises FrozenError first on a frozen receiver" do
            expect_refused(call, rule.receiver, rule.args, FrozenError, nil, freeze: true)
          end
        end
      end
    end
  end
end
