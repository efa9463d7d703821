# frozen_string_literal: true

require "json"

module VersionedTableSpec
  # Equal to a plain String of the same bytes, as a Hash key; named, so that
  # Marshal can write it.
  class SubString < String; end

  # A key whose hash raises: looking it up fails after the arguments are
  # checked.
  class BrokenKey
    def hash = raise(IOError, "no hash today")
    def eql?(_other) = raise(IOError, "no eql? today")
  end
end

# Every VersionedTable method against bad input: the error class (the gem's
# own, also the Ruby class and a WindowMachines::Error), the message where
# the rest of the gem fixes it, the check order (frozen receiver, then
# timestamp, then key lookup), and a table left exactly as it was.
RSpec.describe "WindowMachines::VersionedTable refusals", :mistyped do
  klass = WindowMachines::VersionedTable
  max = WindowMachinesSpec::MAX
  bad_types = WindowMachinesSpec::NOT_INTEGERS
  out_of_range = WindowMachinesSpec::OUT_OF_RANGE
  type_message = ->(param, value) { "#{param} must be an Integer, got #{value.inspect} (#{value.class})" }
  range_message = ->(param, value) { "#{param} must be in 0..2**64-1, got #{value}" }

  # cutoff 100: a's version at 100 is still reachable, b holds a tombstone.
  let(:table) do
    klass.new(10).tap do |table|
      table.put("a", 1, 100)
      table.put("a", 2, 110)
      table.delete("b", 105)
      table.put(3, nil, 108)
    end
  end

  def snapshot(table)
    [table.to_h, table.marshal_dump, table.to_a, table.size, table.version_count, table.stream_time,
     table.late_count, table.frozen?]
  end

  # Runs the block (which expects a refusal) and checks the table is
  # exactly as it was.
  def expect_unchanged(table, &block)
    before = snapshot(table)
    block.call
    expect(snapshot(table)).to eq(before)
  end


  timestamped = {
    "put" => [->(table, key, timestamp) { table.put(key, :value, timestamp) }, true],
    "delete" => [->(table, key, timestamp) { table.delete(key, timestamp) }, true],
    "get" => [->(table, key, timestamp) { table.get(key, timestamp) }, false],
    "version" => [->(table, key, timestamp) { table.version(key, timestamp) }, false]
  }

  timestamped.each do |name, (call, mutator)|
    describe "##{name}" do
      # A query's nil timestamp asks for the latest version (see #version).
      (mutator ? bad_types : bad_types.reject(&:nil?)).each do |value|
        it "refuses a #{value.class} timestamp (#{value.inspect}) with TypeError" do
          expect_unchanged(table) do
            expect_gem_error(WindowMachines::TypeError, type_message.call("timestamp", value)) do
              call.call(table, "a", value)
            end
          end
        end
      end

      out_of_range.each do |value|
        it "refuses #{value} with RangeError" do
          expect_unchanged(table) do
            expect_gem_error(WindowMachines::RangeError, range_message.call("timestamp", value)) do
              call.call(table, "a", value)
            end
          end
        end
      end

      it "does not truncate 100.9 to 100, nor take a Rational" do
        [100.9, 100r].each do |value|
          expect_unchanged(table) do
            expect_gem_error(WindowMachines::TypeError, type_message.call("timestamp", value)) do
              call.call(table, "a", value)
            end
          end
        end
      end

      it "takes 0 and 2**64-1" do
        expect { call.call(table, "a", max) }.not_to raise_error
        expect { call.call(klass.new(max), "a", 0) }.not_to raise_error
      end

      it "checks the timestamp before looking the key up, then lets the key's error through, changing nothing" do
        key = VersionedTableSpec::BrokenKey.new
        expect_unchanged(table) do
          expect_gem_error(WindowMachines::TypeError, type_message.call("timestamp", 1.5)) do
            call.call(table, key, 1.5)
          end
          expect_gem_error(WindowMachines::RangeError, range_message.call("timestamp", -1)) do
            call.call(table, key, -1)
          end
          expect { call.call(table, key, 110) }.to raise_error(IOError, "no hash today")
        end
      end

      if mutator
        describe "on a frozen table" do
          it "raises FrozenError for valid arguments" do
            table.freeze
            expect_unchanged(table) { expect_frozen_error(table) { call.call(table, "a", 120) } }
          end

          (bad_types + out_of_range + [89]).each do |value|
            it "raises FrozenError before looking at the timestamp #{value.inspect}" do
              table.freeze
              expect_unchanged(table) { expect_frozen_error(table) { call.call(table, "a", value) } }
            end
          end

          it "raises FrozenError before looking the key up" do
            table.freeze
            key = VersionedTableSpec::BrokenKey.new
            expect_unchanged(table) { expect_frozen_error(table) { call.call(table, key, 120) } }
          end
        end

        it "refuses a late timestamp under :raise with the error's readers set, changing nothing but late_count" do
          before = table.marshal_dump
          expect { call.call(table, "a", 99) }.to raise_error(WindowMachines::LateEventError) { |error|
            expect(error.message).to eq("late event: timestamp 99 is at or below the watermark 99")
            expect([error.timestamp, error.watermark, error.key]).to eq([99, 99, "a"])
          }
          expect(table.marshal_dump).to eq(before.merge(late_count: 1))
        end
      else
        it "works on a frozen table" do
          expected = call.call(table, "a", 105)
          expect(call.call(table.freeze, "a", 105)).to eq(expected)
        end
      end
    end
  end

  describe "#history" do
    it "lets the key's error through and changes nothing" do
      expect_unchanged(table) do
        expect { table.history(VersionedTableSpec::BrokenKey.new) }.to raise_error(IOError, "no hash today")
      end
    end

    it "takes exactly one key" do
      expect_unchanged(table) do
        expect { table.history }.to raise_error(ArgumentError)
        expect { table.history("a", 105) }.to raise_error(ArgumentError)
      end
    end

    it "works on a frozen table" do
      expect(table.freeze.history("a")).to eq([[1, 100, 110], [2, 110, nil]])
    end
  end

  describe ".new" do
    bad_types.each do |value|
      it "refuses a #{value.class} history_retention (#{value.inspect}) with TypeError" do
        expect_gem_error(WindowMachines::TypeError, type_message.call("history_retention", value)) { klass.new(value) }
      end
    end

    out_of_range.each do |value|
      it "refuses a history_retention of #{value} with RangeError" do
        expect_gem_error(WindowMachines::RangeError, range_message.call("history_retention", value)) do
          klass.new(value)
        end
      end
    end

    [:foo, "raise", :call, 42, Object.new, [:raise]].each do |on_late|
      it "refuses on_late: #{on_late.inspect} with ArgumentError" do
        expect_gem_error(WindowMachines::ArgumentError, /on_late/) { klass.new(10, on_late: on_late) }
      end
    end

    it "refuses other keywords and arities with Ruby's ArgumentError" do
      expect { klass.new(10, retention: 3) }.to raise_error(ArgumentError, /unknown keyword: :retention/)
      expect { klass.new }.to raise_error(ArgumentError)
      expect { klass.new(1, 2) }.to raise_error(ArgumentError)
    end
  end

  describe "checkpoints" do
    sub = VersionedTableSpec::SubString

    # Valid: cutoff 100; a's version at 100 is reachable until 110.
    valid = {
      history_retention: 10, stream_time: 110, late_count: 2,
      versions: [["a", 100, 1], ["a", 110, 2], ["b", 105], [3, 108, nil]]
    }.freeze
    with = ->(**changes) { valid.merge(changes) }
    versions = ->(*extra) { valid[:versions] + extra }

    refused = {
      "an Array" => [[], WindowMachines::TypeError, /checkpoint must be a Hash/],
      "nil" => [nil, WindowMachines::TypeError, /checkpoint must be a Hash/],
      "a String" => ["{}", WindowMachines::TypeError, /checkpoint must be a Hash/],
      "an unknown field" => [with.call(extra: 1), WindowMachines::ArgumentError, /unknown key :extra/],
      "a field named by an Integer" => [valid.merge(1 => 2), WindowMachines::ArgumentError, /unknown key 1/],
      "versions that are a Hash" => [with.call(versions: {}), WindowMachines::TypeError, /versions/],
      "versions that are nil" => [with.call(versions: nil), WindowMachines::TypeError, /versions/],
      "a version that is not an Array" => [with.call(versions: versions.call("c")), WindowMachines::TypeError,
                                           /versions\[4\]/],
      "a version of one element" => [with.call(versions: versions.call(["c"])), WindowMachines::TypeError,
                                     /versions\[4\]/],
      "a version of four elements" => [with.call(versions: versions.call(["c", 100, 1, 2])), WindowMachines::TypeError,
                                       /versions\[4\]/],
      "an empty version" => [with.call(versions: versions.call([])), WindowMachines::TypeError, /versions\[4\]/],
      "versions of a key out of order" => [with.call(versions: [["a", 110, 2], ["a", 100, 1]]),
                                           WindowMachines::ArgumentError, nil],
      "two versions of a key at one timestamp" => [with.call(versions: [["a", 100, 1], ["a", 100, 2]]),
                                                   WindowMachines::ArgumentError, nil],
      "a tombstone and a value at one timestamp" => [with.call(versions: [["a", 100], ["a", 100, 2]]),
                                                     WindowMachines::ArgumentError, nil],
      "a key given twice, apart" => [with.call(versions: [["a", 100, 1], ["b", 105], ["a", 110, 2]]),
                                     WindowMachines::ArgumentError, nil],
      "an equal String subclass key given apart" => [
        with.call(versions: [["a", 100, 1], ["b", 105], [sub.new("a"), 110, 2]]), WindowMachines::ArgumentError, nil
      ],
      "a version above the stream time" => [with.call(stream_time: 109), WindowMachines::ArgumentError, nil],
      "a nil stream time with versions" => [with.call(stream_time: nil), WindowMachines::ArgumentError, nil],
      "a version whose valid_to is the cutoff" => [
        with.call(history_retention: 5, versions: [["a", 100, 1], ["a", 105, 2]]), WindowMachines::ArgumentError, nil
      ],
      "a version whose valid_to is below the cutoff" => [with.call(versions: [["a", 90, 1], ["a", 95, 2]]),
                                                         WindowMachines::ArgumentError, nil],
      "a latest tombstone at the cutoff" => [with.call(versions: versions.call(["c", 100])),
                                             WindowMachines::ArgumentError, nil],
      "a latest tombstone below the cutoff" => [with.call(versions: versions.call(["c", 0])),
                                                WindowMachines::ArgumentError, nil],
      "a value and then a tombstone at the cutoff" => [with.call(versions: versions.call(["c", 50, 1], ["c", 100])),
                                                       WindowMachines::ArgumentError, nil],
      "late puts counted with no stream time" => [with.call(stream_time: nil, versions: [], late_count: 2),
                                                  WindowMachines::ArgumentError,
                                                  /2 late events are counted but there is no stream time/]
    }
    %w[history_retention stream_time late_count versions].each do |field|
      refused["no #{field}"] = [valid.except(field.to_sym), WindowMachines::ArgumentError, /missing #{field}/]
      refused["#{field} given as :#{field} and \"#{field}\""] =
        [valid.merge(field => valid[field.to_sym]), WindowMachines::ArgumentError, /#{field}.* twice/]
    end
    { "history_retention" => [1.5, "10", nil, 10r], "stream_time" => [1.5, "110", 110r],
      "late_count" => [nil, 2.0, "2"], "versions[4] timestamp" => [1.5, nil, "100", 100r] }.each do |field, values|
      values.each do |value|
        input = if field.start_with?("versions")
                  with.call(versions: versions.call(["c", value, 1]))
                else
                  with.call(field.to_sym => value)
                end
        refused["#{field} #{value.inspect}"] = [input, WindowMachines::TypeError, type_message.call(field, value)]
      end
    end
    { "history_retention" => out_of_range, "stream_time" => out_of_range, "late_count" => out_of_range,
      "versions[4] timestamp" => out_of_range }.each do |field, values|
      values.each do |value|
        input = if field.start_with?("versions")
                  with.call(versions: versions.call(["c", value, 1]))
                else
                  with.call(field.to_sym => value)
                end
        refused["#{field} #{value}"] = [input, WindowMachines::RangeError, range_message.call(field, value)]
      end
    end

    refused.each do |problem, (input, error, message)|
      describe "with #{problem}" do
        it "is refused by from_h with #{error}" do
          expect_gem_error(error, message) { klass.from_h(input) }
        end

        it "is refused by marshal_load with #{error}, changing nothing" do
          dumped = input.is_a?(Hash) ? input.merge(on_late: :drop) : input
          expect_unchanged(table) { expect_gem_error(error, message) { table.marshal_load(dumped) } }
        end
      end
    end

    # Everything the rules allow, right at their edges.
    {
      "the valid checkpoint" => valid,
      "its JSON round trip" => JSON.parse(JSON.generate(valid)),
      "no versions and no stream time" => with.call(stream_time: nil, versions: [], late_count: 0),
      "no versions under a stream time" => with.call(versions: []),
      "a version whose valid_to is one past the cutoff" => with.call(versions: [["a", 90, 1], ["a", 101, 2]]),
      "a latest tombstone one past the cutoff" => with.call(versions: versions.call(["c", 101])),
      "a tombstone in the history" => with.call(versions: [["a", 100], ["a", 101], ["a", 102, 3]]),
      "a latest value far below the cutoff" => with.call(stream_time: max, versions: [["a", 0, 1], ["z", max, 2]]),
      "a zero retention with only latest versions" => with.call(history_retention: 0,
                                                                versions: [["a", 110, 2], [3, 108, nil]]),
      "1 and 1.0 apart, as different keys" => with.call(versions: [[1, 100, :i], ["b", 105], [1.0, 100, :f]]),
      "a maximal retention and late_count" => with.call(history_retention: max, late_count: max),
      "nil values" => with.call(versions: [["a", 100, nil], ["a", 101, nil]])
    }.each do |description, input|
      it "takes #{description}" do
        restored = klass.from_h(input)
        expect(restored.marshal_dump).to eql(PlainRuby::VersionedTable.from_h(input).marshal_dump)
        table.marshal_load(input.merge(on_late: :drop))
        expect(table.marshal_dump).to eql(restored.marshal_dump.merge(on_late: :drop))
      end
    end

    it "refuses a bad on_late in from_h and in marshal_load" do
      expect_gem_error(WindowMachines::ArgumentError, /on_late/) { klass.from_h(valid, on_late: :foo) }
      expect_unchanged(table) do
        expect_gem_error(WindowMachines::ArgumentError, /on_late/) { table.marshal_load(valid.merge(on_late: 42)) }
        expect_gem_error(WindowMachines::ArgumentError, /missing on_late/) { table.marshal_load(valid) }
      end
    end

    it "refuses marshal_load on a frozen table first" do
      table.freeze
      expect_unchanged(table) do
        expect_frozen_error(table) { table.marshal_load(valid.merge(on_late: :raise)) }
        expect_frozen_error(table) { table.marshal_load(nil) }
      end
    end

    it "refuses or restores mutated checkpoints exactly as the plain-Ruby model does" do
      rng = Random.new(RSpec.configuration.seed)
      odd = [-1, 2**64, 1.5, nil, "x", [], ["a"], ["a", 1], ["a", 1, 2], ["b", 200], { a: 1 }, :a, 0, 101, 111, max]
      outcomes = Hash.new(0)
      1_500.times do
        input = JSON.parse(JSON.generate(valid))
        entries = input["versions"]
        case rng.rand(6)
        when 0 then input[input.keys.sample(random: rng)] = odd.sample(random: rng)
        when 1 then entries[rng.rand(entries.size)] = odd.sample(random: rng)
        when 2 then entries.shuffle!(random: rng)
        when 3 then entries.sample(random: rng)[rng.rand(3)] = odd.sample(random: rng)
        when 4 then entries.insert(rng.rand(entries.size + 1), [%w[a b c].sample(random: rng), rng.rand(85..115), 0])
        else input[%w[stream_time history_retention].sample(random: rng)] = rng.rand(0..130)
        end
        # Which check refuses a checkpoint with several problems is not
        # specified, so a refusal is only that (but a clean one).
        expected, actual = [PlainRuby::VersionedTable, klass].map do |restorer|
          restorer.from_h(input).marshal_dump
        rescue WindowMachines::Error
          :refused
        end
        outcomes[expected == :refused ? :refused : :restored] += 1
        expect(actual).to eql(expected), "checkpoint #{input.inspect}"
      end
      expect(outcomes[:restored]).to be > 50
      expect(outcomes[:refused]).to be > 500
    end
  end
end
