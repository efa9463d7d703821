# frozen_string_literal: true

# The batch calls: WindowMachines.tumbling_starts, Sessions#insert_all,
# KeyedSessions#insert_all and the aggregating windows' add_all. Each applies
# its elements as the single call would, in order; a refused element raises
# the single call's error as a copy named with its index (BatchElement), the
# elements before it applied and none after. Here: the documented examples,
# frozen receivers, blocks and keys that run Ruby code in the middle of a
# batch (re-entering, freezing, raising, breaking, switching Fibers,
# changing the caller's Arrays), interrupts during a long batch, batches
# converted by a clock, and the readers a named error keeps.
# spec/differential/batch_against_single_calls_spec.rb checks random batches
# against the same single calls.
module BatchCallsSpec
  # Raised into a batch by another thread or a trap handler.
  class Stop < StandardError; end

  # The first timestamp of the long batches: a Bignum.
  BIG = 2**63

  # A custom aggregator collecting its values, which runs a block from add.
  class Hooked
    def initialize(&on_add) = @on_add = on_add
    def initial = []

    def add(acc, value)
      @on_add&.call(value)
      acc + [value]
    end

    def merge(earlier, later) = earlier + later
  end
end

RSpec.describe "Batch calls" do
  aggregate = WindowMachines::Aggregate
  max = WindowMachinesSpec::MAX

  # An object that is no Array but converts to one with to_ary.
  let(:listed) { Struct.new(:to_ary) }
  let(:count) { aggregate::Count.new }

  # Expects the block to raise `klass` with the single call's `message`,
  # named as refusing the element at `index`, and the readers given.
  def expect_refused_at(index, klass, message, **readers, &block)
    expect(&block).to raise_error(klass, "#{message} (at index #{index})") { |error|
      expect(error).to be_an_instance_of(klass)
      expect(error).to be_a(WindowMachines::BatchElement)
      expect(error.index).to eq(index)
      readers.each { |reader, value| expect(error.public_send(reader)).to eq(value), "#{reader}" }
    }
  end

  # Expects Ruby's FrozenError for `receiver` named with `index`.
  def expect_frozen_at(index, receiver, &block)
    expect(&block).to raise_error(FrozenError, / \(at index #{index}\)\z/) { |error|
      expect(error).to be_an_instance_of(FrozenError)
      expect(error.receiver).to be(receiver)
      expect(error.index).to eq(index)
      expect(error.message).to start_with("can't modify frozen #{receiver.class}: ")
    }
  end

  # The error the block raised.
  def raised
    yield
  rescue StandardError => e
    e
  else
    raise "expected an error"
  end

  describe "WindowMachines.tumbling_starts" do
    it "returns the start of each timestamp's window, in order, as the documentation shows" do
      expect(WindowMachines.tumbling_starts([12, 19, 20, 7], 10)).to eq([10, 10, 20, 0])
      expect(WindowMachines.tumbling_starts([], 10)).to eq([])
      expect(WindowMachines.tumbling_starts([9], 10)).to eq([0])
    end

    it "answers what tumbling(timestamp, size)[0] answers, across the whole domain" do
      timestamps = [0, 1, 2**62 - 1, 2**62, 2**63 + 7, max - 100, max - 6]
      [1, 5, 7, 1_000, 2**63].each do |size|
        fitting = timestamps.select { |timestamp| timestamp - (timestamp % size) + size <= max }
        expect(WindowMachines.tumbling_starts(fitting, size))
          .to eq(fitting.map { |timestamp| WindowMachines.tumbling(timestamp, size)[0] }), "size #{size}"
      end
    end

    it "returns a new Array and reads an object that converts with to_ary" do
      timestamps = [12, 19]
      starts = WindowMachines.tumbling_starts(timestamps, 10)
      expect(starts).not_to be(timestamps)
      expect(timestamps).to eq([12, 19])
      expect(WindowMachines.tumbling_starts(listed.new([31, 45]), 10)).to eq([30, 40])
    end

    it "checks the size once, before any timestamp, even with none" do
      expect_gem_error(WindowMachines::ArgumentError, "size must be positive, got 0") do
        WindowMachines.tumbling_starts([], 0)
      end
      expect_gem_error(WindowMachines::ArgumentError, "size must be positive, got 0") do
        WindowMachines.tumbling_starts([-5, 2**64], 0)
      end
      expect_gem_error(WindowMachines::RangeError, "size must be in 0..2**64-1, got -1") do
        WindowMachines.tumbling_starts([1, -1], -1)
      end
    end

    it "refuses sizes and elements of the wrong type", :mistyped do
      expect_gem_error(WindowMachines::TypeError, "size must be an Integer, got 1.5 (Float)") do
        WindowMachines.tumbling_starts(["x"], 1.5)
      end
      expect_refused_at(2, WindowMachines::TypeError, 'timestamp must be an Integer, got "8" (String)') do
        WindowMachines.tumbling_starts([5, 7, "8"], 10)
      end
    end

    it "names a refused timestamp by its index, with the message tumbling would raise" do
      expect_refused_at(1, WindowMachines::RangeError, "timestamp must be in 0..2**64-1, got -1") do
        WindowMachines.tumbling_starts([12, -1], 10)
      end
      single = raised { WindowMachines.tumbling(max, 10) }
      expect_refused_at(2, WindowMachines::RangeError, single.message) do
        WindowMachines.tumbling_starts([1, 2, max, 3], 10)
      end
      expect_refused_at(0, WindowMachines::RangeError, "timestamp must be in 0..2**64-1, got #{2**64}") do
        WindowMachines.tumbling_starts([2**64], 10)
      end
    end

    it "refuses what neither is an Array nor converts to one", :mistyped do
      expect_gem_error(WindowMachines::TypeError, "timestamps must be an Array, got nil (NilClass)") do
        WindowMachines.tumbling_starts(nil, 10)
      end
      expect_gem_error(WindowMachines::TypeError, "timestamps must be an Array, got 1..3 (Range)") do
        WindowMachines.tumbling_starts(1..3, 10)
      end
      expect_gem_error(WindowMachines::TypeError, /\Atimestamps must be an Array, got #<struct to_ary="not an Array">/) do
        WindowMachines.tumbling_starts(listed.new("not an Array"), 10)
      end
    end
  end

  describe "WindowMachines::Sessions#insert_all" do
    subject(:sessions) { WindowMachines::Sessions.new(5) }

    it "inserts each timestamp and yields each merge in event order, as the documentation shows" do
      merges = []
      applied = sessions.insert_all([10, 15, 30, 21, 26]) { |old_span, new_span| merges << [old_span, new_span] }
      expect(applied).to eq(5)
      expect(merges).to eq([[[10, 10], [10, 15]], [[21, 21], [21, 30]], [[30, 30], [21, 30]]])
      expect(sessions.to_a).to eq([[10, 15], [21, 30]])
    end

    it "returns 0 for no timestamps, 1 for one, and inserts without a block" do
      expect(sessions.insert_all([])).to eq(0)
      expect(sessions.insert_all([7]) { raise "a new session yields nothing" }).to eq(1)
      expect(sessions.insert_all(listed.new([9, 30]))).to eq(2)
      expect(sessions.to_a).to eq([[7, 9], [30, 30]])
    end

    it "stops at a late timestamp, keeping the ones before and trying none after" do
      sessions.advance_watermark(25)
      expect_refused_at(1, WindowMachines::LateEventError, "late event: timestamp 20 is at or below the watermark 25",
                        timestamp: 20, watermark: 25, key: nil) do
        sessions.insert_all([31, 20, 40])
      end
      expect(sessions.to_a).to eq([[31, 31]])
    end

    it "names a timestamp of the wrong type, as the BatchElement documentation shows", :mistyped do
      sessions = WindowMachines::Sessions.new(10)
      error = raised { sessions.insert_all([5, 7, "8"]) }
      expect(error).to be_a(WindowMachines::TypeError).and be_a(WindowMachines::BatchElement)
      expect(error.index).to eq(2)
      expect(error.message).to eq('timestamp must be an Integer, got "8" (String) (at index 2)')
      expect(sessions.to_a).to eq([[5, 7]])
    end

    it "names a 33rd session with the CapacityError's limit, timestamp and watermark" do
      full = full_sessions(watermark: 2)
      expect_refused_at(1, WindowMachines::CapacityError, raised { full.dup.insert(1_000) }.message,
                        limit: 32, timestamp: 1_000, watermark: 2) do
        full.insert_all([3, 1_000, 4])
      end
      expect(full.to_a.first).to eq([0, 3])
      expect(full.size).to eq(32)
    end

    it "refuses Arrays of the wrong kind before inserting anything", :mistyped do
      expect_gem_error(WindowMachines::TypeError, "timestamps must be an Array, got 5 (Integer)") do
        sessions.insert_all(5)
      end
      expect(sessions.size).to eq(0)
    end
  end

  describe "WindowMachines::KeyedSessions#insert_all" do
    subject(:keyed) { WindowMachines::KeyedSessions.new(1_800) }

    it "yields the key after the two spans, as the documentation shows" do
      merges = []
      applied = keyed.insert_all(["ACME", "Borealis", "ACME"], [100, 150, 900]) do |old_span, new_span, key|
        merges << [old_span, new_span, key]
      end
      expect(applied).to eq(3)
      expect(merges).to eq([[[100, 100], [100, 900], "ACME"]])
      keyed.advance_watermark(2_000)
      expect(keyed.take_closed).to eq(["Borealis", 150, 150])
    end

    it "yields the key given in the batch, not the frozen copy it holds" do
      given = [+"acme", +"acme"]
      yielded = []
      keyed.insert_all(given, [1, 2]) { |_, _, key| yielded << key }
      expect(yielded).to contain_exactly(be(given[1]))
      expect(keyed.to_a.first.first).to be_frozen.and eq("acme")
      expect(given.first).not_to be_frozen
    end

    it "names a refusal with the key it was for, keeping the elements before it" do
      bounded = WindowMachines::KeyedSessions.new(5, max_sessions: 2)
      single = WindowMachines::KeyedSessions.new(5, max_sessions: 2)
      %w[a b a].zip([1, 2, 4]) { |key, timestamp| single.insert(key, timestamp) }
      expect_refused_at(3, WindowMachines::CapacityError, raised { single.insert("c", 3) }.message,
                        limit: 2, timestamp: 3, key: "c", watermark: nil) do
        bounded.insert_all(%w[a b a c a], [1, 2, 4, 3, 5])
      end
      expect(bounded.to_a).to eq([["b", 2, 2], ["a", 1, 4]])
      bounded.advance_watermark(2)
      expect_refused_at(0, WindowMachines::LateEventError, "late event: timestamp 2 is at or below the watermark 2",
                        timestamp: 2, watermark: 2, key: [:k]) do
        bounded.insert_all([[:k], "a"], [2, 5])
      end
      expect(bounded.to_a).to eq([["b", 2, 2], ["a", 1, 4]])
    end

    it "refuses Arrays of different lengths before inserting anything" do
      expect_gem_error(WindowMachines::ArgumentError,
                       "a batch needs Arrays of one length, but keys has 2, timestamps has 1") do
        keyed.insert_all(%w[a b], [1])
      end
      expect_gem_error(WindowMachines::ArgumentError,
                       "a batch needs Arrays of one length, but keys has 0, timestamps has 3") do
        keyed.insert_all(listed.new([]), [1, 2, 3])
      end
      expect(keyed.size).to eq(0)
    end

    it "refuses keys that are not an Array, naming the argument", :mistyped do
      expect_gem_error(WindowMachines::TypeError, 'keys must be an Array, got "a" (String)') do
        keyed.insert_all("a", [1])
      end
      expect_gem_error(WindowMachines::TypeError, "timestamps must be an Array, got 1 (Integer)") do
        keyed.insert_all(["a"], 1)
      end
    end
  end

  describe "add_all" do
    it "counts the events that entered a window, as the TumblingWindows documentation shows" do
      views = WindowMachines::TumblingWindows.new(60, grace: 10, aggregate: count)
      expect(views.add_all(%w[ana ben ana ana ben], [5, 30, 65, 50, 75])).to eq(5)
      expect(views.each_closed.to_a).to eq([["ana", 0, 60, 2], ["ben", 0, 60, 1]])
    end

    it "drops late events under on_late: :drop, counting them out" do
      totals = WindowMachines::TumblingWindows.new(60, on_late: :drop, aggregate: aggregate::Sum.new(:amount))
      expect(totals.add_all(%w[a a a], [100, 10, 110], [{ amount: 5 }, { amount: 7 }, { amount: 1 }])).to eq(2)
      expect(totals.late_count).to eq(1)
      expect(totals.current("a")).to eq([[60, 120, 6]])
    end

    it "sums per session, as the SessionWindows documentation shows" do
      spend = WindowMachines::SessionWindows.new(10, aggregate: aggregate::Sum.new(:amount))
      expect(spend.add_all(%w[ann bob ann], [1, 2, 5], [{ amount: 1 }, { amount: 2 }, { amount: 3 }])).to eq(3)
      expect(spend.flush.to_a).to eq([["bob", 2, 2, 2], ["ann", 1, 5, 4]])
    end

    it "files each event in every hopping window that holds it" do
      hopping = WindowMachines::HoppingWindows.new(10, 5, aggregate: aggregate::Collect.new)
      expect(hopping.add_all(%w[a a b], [1, 7, 12], %w[x y z])).to eq(3)
      expect(hopping.flush.to_a).to eq([["a", 0, 10, %w[x y]], ["a", 5, 15, ["y"]], ["b", 5, 15, ["z"]],
                                        ["b", 10, 20, ["z"]]])
    end

    it "takes nil or no values as every value nil" do
      collect = aggregate::Collect.new
      with_nil = WindowMachines::TumblingWindows.new(10, aggregate: collect)
      without = WindowMachines::TumblingWindows.new(10, aggregate: collect)
      expect(with_nil.add_all(%w[a a], [1, 2], nil)).to eq(2)
      expect(without.add_all(%w[a a], [1, 2])).to eq(2)
      expect([with_nil.current("a"), without.current("a")]).to all(eq([[0, 10, [nil, nil]]]))
    end

    it "does not count an event before the offset, which enters no window" do
      offset = WindowMachines::TumblingWindows.new(10, offset: 5, aggregate: count)
      expect(offset.add("a", 2)).to be(false)
      expect(offset.add_all(%w[a a b], [2, 7, 3])).to eq(1)
      expect(offset.current("a")).to eq([[5, 15, 1]])
    end

    it "hands an on_late callable what add hands it, and goes on" do
      batch_calls = []
      single_calls = []
      late = WindowMachines::TumblingWindows.new(10, aggregate: count, on_late: ->(*args) { batch_calls << args })
      twin = WindowMachines::TumblingWindows.new(10, aggregate: count, on_late: ->(*args) { single_calls << args })
      expect(late.add_all(%w[a b a c], [50, 3, 60, 49], %i[x y z w])).to eq(2)
      expect([twin.add("a", 50, :x), twin.add("b", 3, :y), twin.add("a", 60, :z), twin.add("c", 49, :w)])
        .to eq([true, false, true, false])
      expect(batch_calls).to eq(single_calls)
      expect(batch_calls.map { |args| args.first(3) }).to eq([["b", 3, :y], ["c", 49, :w]])
      expect([late.late_count, late.current("a")]).to eq([2, twin.current("a")])
    end

    it "names a late event under on_late: :raise with its timestamp, watermark and key" do
      windows = WindowMachines::TumblingWindows.new(10, aggregate: count)
      expect_refused_at(1, WindowMachines::LateEventError, "late event: timestamp 3 is at or below the watermark 50",
                        timestamp: 3, watermark: 50, key: "b") do
        windows.add_all(%w[a b a], [50, 3, 60])
      end
      expect(windows.current("a")).to eq([[50, 60, 1]])
      expect(windows.late_count).to eq(1)
    end

    it "names a value Sum cannot add, keeping the events before it" do
      sums = WindowMachines::TumblingWindows.new(10, aggregate: aggregate::Sum.new(:amount))
      expect_refused_at(1, WindowMachines::TypeError, "sum takes Numeric values (or nil)") do
        sums.add_all(%w[a a a], [1, 2, 3], [{ amount: 1 }, { amount: "x" }, { amount: 2 }])
      end
      expect(sums.current("a")).to eq([[0, 10, 1]])
    end

    it "names a session past max_sessions with its CapacityError readers" do
      sessions = WindowMachines::SessionWindows.new(5, max_sessions: 1, grace: 100, aggregate: count)
      single = WindowMachines::SessionWindows.new(5, max_sessions: 1, grace: 100, aggregate: count)
      single.add("a", 1)
      message = raised { single.add("b", 20) }.message
      expect_refused_at(2, WindowMachines::CapacityError, message, limit: 1, timestamp: 20, key: "b") do
        sessions.add_all(%w[a a b], [1, 3, 20])
      end
      expect(sessions.current("a")).to eq([[1, 3, 2]])
    end

    it "refuses Arrays of different lengths before adding anything" do
      windows = WindowMachines::TumblingWindows.new(10, aggregate: count)
      expect_gem_error(WindowMachines::ArgumentError,
                       "a batch needs Arrays of one length, but keys has 2, timestamps has 2, values has 1") do
        windows.add_all(%w[a b], [1, 2], [:v])
      end
      expect_gem_error(WindowMachines::ArgumentError, "a batch needs Arrays of one length, but keys has 1, timestamps has 2") do
        windows.add_all(["a"], listed.new([1, 2]), nil)
      end
      expect(windows.size).to eq(0)
    end

    it "refuses values of the wrong kind and a missing argument before adding anything", :mistyped do
      windows = WindowMachines::TumblingWindows.new(10, aggregate: count)
      expect_gem_error(WindowMachines::TypeError, "values must be an Array, got 5 (Integer)") do
        windows.add_all(%w[a b], [1, 2], 5)
      end
      expect { windows.add_all(%w[a b]) }.to raise_error(ArgumentError, "wrong number of arguments (given 1, expected 2..3)")
      expect(windows.size).to eq(0)
    end
  end

  describe "a frozen receiver" do
    trackers = {
      "Sessions" => -> { WindowMachines::Sessions.new(5) },
      "KeyedSessions" => -> { WindowMachines::KeyedSessions.new(5) },
      "TumblingWindows" => -> { WindowMachines::TumblingWindows.new(10, aggregate: WindowMachines::Aggregate::Count.new) },
      "HoppingWindows" => -> { WindowMachines::HoppingWindows.new(10, 5, aggregate: WindowMachines::Aggregate::Count.new) },
      "SessionWindows" => -> { WindowMachines::SessionWindows.new(5, aggregate: WindowMachines::Aggregate::Count.new) }
    }
    batch = lambda do |tracker, keys, timestamps|
      case tracker
      when WindowMachines::Sessions then tracker.insert_all(timestamps)
      when WindowMachines::KeyedSessions then tracker.insert_all(keys, timestamps)
      else tracker.add_all(keys, timestamps)
      end
    end

    trackers.each do |name, build|
      it "raises Ruby's FrozenError for #{name}, unnamed, even for empty or mismatched Arrays" do
        tracker = build.call
        batch.call(tracker, ["a"], [1])
        before = tracker.inspect
        tracker.freeze
        [[[], []], [["a"], [2]], [%w[a b], [3]]].each do |keys, timestamps|
          expect_frozen_error(tracker) { batch.call(tracker, keys, timestamps) }
          error = raised { batch.call(tracker, keys, timestamps) }
          expect(error).not_to be_a(WindowMachines::BatchElement)
          expect(error.message).not_to include("at index")
        end
        expect(tracker.inspect).to eq(before)
      end
    end
  end

  describe "a block that runs Ruby code in the middle of a batch" do
    let(:sessions) { sessions_with(5, 10) }
    let(:keyed) { WindowMachines::KeyedSessions.new(5) }

    it "may call insert_all and insert on the same tracker, which apply at once" do
      merges = []
      applied = sessions.insert_all([12, 30, 33]) do |old_span, new_span|
        merges << [old_span, new_span]
        sessions.insert_all([100, 101]) if new_span == [10, 12]
      end
      expect(applied).to eq(3)
      expect(merges).to eq([[[10, 10], [10, 12]], [[30, 30], [30, 33]]])
      expect(sessions.to_a).to eq([[10, 12], [30, 33], [100, 101]])

      inner = []
      keyed.insert_all(%w[a a b b], [1, 2, 10, 11]) do |_, _, key|
        inner << keyed.insert("in-#{key}", 50) { raise "a new session yields nothing" }
      end
      expect(inner).to eq([[50, 50], [50, 50]])
      expect(keyed.to_a.map(&:first)).to eq(["a", "b", "in-a", "in-b"])
    end

    it "lets a block freeze the tracker, refusing the next element with FrozenError named by its index" do
      expect_frozen_at(2, sessions) do
        sessions.insert_all([40, 11, 50, 12]) { sessions.freeze }
      end
      expect(sessions.to_a).to eq([[10, 11], [40, 40]])

      expect_frozen_at(2, keyed) do
        keyed.insert_all(%w[a a b], [1, 2, 3]) { keyed.freeze }
      end
      expect(keyed.to_a).to eq([["a", 1, 2]])
    end

    it "returns normally when the block freezes the tracker at the last element" do
      expect(sessions.insert_all([40, 11]) { sessions.freeze }).to eq(2)
      expect(sessions).to be_frozen
      expect(sessions.to_a).to eq([[10, 11], [40, 40]])
    end

    it "passes the block's exception through as it is, after its own element was applied" do
      boom = IOError.new("boom")
      expect { sessions.insert_all([40, 12, 50]) { raise boom } }.to raise_error { |error|
        expect(error).to be(boom)
        expect(error.message).to eq("boom")
        expect(error).not_to be_a(WindowMachines::BatchElement)
      }
      expect(sessions.to_a).to eq([[10, 12], [40, 40]])

      expect { keyed.insert_all(%w[a a b], [1, 2, 3]) { raise boom } }.to raise_error(be(boom))
      expect(keyed.to_a).to eq([["a", 1, 2]])
    end

    it "returns what break gives, with the elements so far applied" do
      expect(sessions.insert_all([40, 12, 50, 13]) { break :stopped }).to eq(:stopped)
      expect(sessions.to_a).to eq([[10, 12], [40, 40]])
      expect(keyed.insert_all(%w[a a b b], [1, 2, 3, 4]) { |_, new_span, key| break [key, new_span] }).to eq(["a", [1, 2]])
      expect(keyed.to_a).to eq([["a", 1, 2]])
    end

    it "cannot change what the batch applies by changing the caller's Arrays" do
      timestamps = [11, 12, 13]
      expect(sessions.insert_all(timestamps) { timestamps.replace([999]) }).to eq(3)
      expect(sessions.to_a).to eq([[10, 13]])
      expect(timestamps).to eq([999])

      keys = %w[a a b]
      times = [1, 2, 3]
      keyed.insert_all(keys, times) do
        keys.clear
        times.map! { |time| time + 100 }
      end
      expect(keyed.to_a).to eq([["a", 1, 2], ["b", 3, 3]])
    end

    it "reads a to_ary conversion once, at the start" do
      source = listed.new([11, 12, 13])
      expect(sessions.insert_all(source) { source.to_ary = [500] }).to eq(3)
      expect(sessions.to_a).to eq([[10, 13]])
    end

    it "may switch Fibers, the batch going on where it was when resumed" do
      batch = Fiber.new do
        sessions.insert_all([11, 12, 40]) { |old_span, new_span| Fiber.yield([old_span, new_span]) }
      end
      expect(batch.resume).to eq([[10, 10], [10, 11]])
      expect(sessions.to_a).to eq([[10, 11]])
      expect(sessions.insert_all([100])).to eq(1) # the tracker is free meanwhile
      expect(batch.resume).to eq([[10, 11], [10, 12]])
      expect(batch.resume).to eq(3)
      expect(sessions.to_a).to eq([[10, 12], [40, 40], [100, 100]])
      expect(batch).not_to be_alive
    end

    it "leaves the tracker usable when the Fiber of a suspended batch is never resumed" do
      batch = Fiber.new { sessions.insert_all([11, 12, 40]) { Fiber.yield } }
      batch.resume
      expect(sessions.to_a).to eq([[10, 11]])
      expect(sessions.insert_all([13, 60])).to eq(2)
      expect(sessions.to_a).to eq([[10, 13], [60, 60]])
    end
  end

  describe "a key whose hash or eql? runs Ruby code" do
    let(:keyed) { WindowMachines::KeyedSessions.new(5) }

    it "names an exception from hash by the key's index, keeping the elements before it" do
      broken = WindowMachinesSpec::HookKey.new("broken") { raise IOError, "no hash today" }
      expect_refused_at(1, IOError, "no hash today") { keyed.insert_all(["a", broken, "c"], [1, 2, 3]) }
      expect(keyed.to_a).to eq([["a", 1, 1]])
    end

    it "runs each key's hash at its element's turn, after the block's calls for the elements before it" do
      log = []
      keys = Array.new(6) { |n| WindowMachinesSpec::HookKey.new(n % 2) { log << [:hash, n] } }
      keyed.insert_all(keys, [1, 2, 3, 4, 10, 11]) { |_, new_span, key| log << [:merge, key.name, new_span] }
      twin = WindowMachines::KeyedSessions.new(5)
      single_log = []
      keys = Array.new(6) { |n| WindowMachinesSpec::HookKey.new(n % 2) { single_log << [:hash, n] } }
      keys.zip([1, 2, 3, 4, 10, 11]) do |key, timestamp|
        twin.insert(key, timestamp) { |_, new_span| single_log << [:merge, key.name, new_span] }
      end
      expect(log).to eq(single_log)
      expect(log.first(4)).to eq([[:hash, 0], [:hash, 1], [:hash, 2], [:merge, 0, [1, 3]]])
    end

    it "lets throw from a key's hash pass through, keeping the elements before it" do
      thrower = WindowMachinesSpec::HookKey.new("thrower") { throw :out, :thrown }
      expect(catch(:out) { keyed.insert_all(["a", thrower, "c"], [1, 2, 3]) }).to eq(:thrown)
      expect(keyed.to_a).to eq([["a", 1, 1]])
    end

    it "lets an exception that is no StandardError (Interrupt, SystemExit) pass through as it is" do
      [Interrupt.new, SystemExit.new(3)].each_with_index do |stop, n|
        stopper = WindowMachinesSpec::HookKey.new("stopper") { raise stop }
        expect { keyed.insert_all(["k#{n}", stopper], [n * 10, (n * 10) + 1]) }.to raise_error(be(stop)) { |error|
          expect(error).not_to be_a(WindowMachines::BatchElement)
        }
      end
      expect(keyed.to_a).to eq([["k0", 0, 0], ["k1", 10, 10]])
    end

    # A frozen exception (a constant some libraries raise) cannot be given a
    # new message by Exception#exception, which clones it frozen.
    it "names a frozen exception raised by a key's hash as the single call raises it" do
      frozen = IOError.new("no hash today").freeze
      single = raised { WindowMachines::KeyedSessions.new(5).insert(WindowMachinesSpec::HookKey.new("x") { raise frozen }, 1) }
      expect(single).to be(frozen)
      broken = WindowMachinesSpec::HookKey.new("broken") { raise frozen }
      expect_refused_at(1, IOError, "no hash today") { keyed.insert_all(["a", broken], [1, 2]) }
      expect(keyed.to_a).to eq([["a", 1, 1]])
    end

    it "names an exception from eql? by the key's index" do
      keyed.insert(WindowMachinesSpec::CollidingKey.new("held"), 1)
      picky = WindowMachinesSpec::CollidingKey.new("picky", on_eql: -> { raise KeyError, "cannot compare" })
      expect_refused_at(2, KeyError, "cannot compare") do
        keyed.insert_all(%w[a b] + [picky, "c"], [1, 2, 3, 4])
      end
      expect(keyed.key_count).to eq(3)
    end

    it "files the events of a batch that hash started from inside the batch" do
      entered = false
      reentering = WindowMachinesSpec::HookKey.new("outer") do
        next if entered

        entered = true
        keyed.insert_all(%w[inner inner], [50, 51])
      end
      expect(keyed.insert_all(["a", reentering, "c"], [1, 2, 3])).to eq(3)
      expect(keyed.sessions_for("inner")).to eq([[50, 51]])
      expect(keyed.sessions_for(WindowMachinesSpec::HookKey.new("outer"))).to eq([[2, 2]])
      expect(keyed.key_count).to eq(4)
    end

    it "refuses the element whose hash froze the tracker with FrozenError named by its index" do
      freezing = WindowMachinesSpec::HookKey.new("freezer") { keyed.freeze }
      expect_frozen_at(1, keyed) { keyed.insert_all(["a", freezing, "c"], [1, 2, 3]) }
      expect(keyed.to_a).to eq([["a", 1, 1]])
    end

    it "names the RuntimeError of a key whose eql? changes the tracker on every try" do
      keyed.insert(WindowMachinesSpec::CollidingKey.new("held"), 1)
      changes = 0
      target = keyed.dup
      busy = WindowMachinesSpec::CollidingKey.new("busy", on_eql: -> { target.insert("x#{changes += 1}", 100 + changes) })
      single = raised { target.insert(busy, 2) }
      expect(single.message).to start_with("the tracker changed during each of 8 tries to look a key up")
      target = keyed
      expect_refused_at(1, RuntimeError, single.message) { keyed.insert_all(["a", busy, "c"], [1, 2, 3]) }
      expect(keyed.sessions_for("a")).to eq([[1, 1]])
      expect(keyed.sessions_for("c")).to eq([])
    end

    it "cannot change what the batch applies by changing the caller's Arrays" do
      keys = ["a", nil, "c"]
      timestamps = [1, 2, 3]
      keys[1] = WindowMachinesSpec::HookKey.new("meddler") do
        keys.fill("z")
        timestamps.fill(40)
      end
      expect(keyed.insert_all(keys, timestamps)).to eq(3)
      expect(keyed.to_a.map { |key, first, last| [key.is_a?(String) ? key : key.name, first, last] })
        .to eq([["a", 1, 1], ["meddler", 2, 2], ["c", 3, 3]])
    end

    describe "in add_all, with a custom aggregator and an on_late callable" do
      it "names an exception from a key's hash, a custom aggregator or an on_late callable by its index" do
        broken = WindowMachinesSpec::HookKey.new("broken") { raise IOError, "no hash" }
        collect = WindowMachines::TumblingWindows.new(10, aggregate: aggregate::Collect.new)
        expect_refused_at(1, IOError, "no hash") { collect.add_all(["a", broken, "a"], [1, 2, 3], %i[x y z]) }
        expect(collect.current("a")).to eq([[0, 10, [:x]]])

        unlucky = BatchCallsSpec::Hooked.new { |value| raise ArgumentError, "unlucky" if value == 13 }
        custom = WindowMachines::TumblingWindows.new(10, aggregate: unlucky)
        expect_refused_at(2, ArgumentError, "unlucky") { custom.add_all(%w[a b a a], [1, 2, 3, 4], [1, 2, 13, 4]) }
        expect(custom.current("a")).to eq([[0, 10, [1]]])
        expect(custom.current("b")).to eq([[0, 10, [2]]])

        calls = 0
        raising = WindowMachines::TumblingWindows.new(10, aggregate: count, on_late: ->(*) { raise KeyError, "late #{calls += 1}" })
        expect_refused_at(1, KeyError, "late 1") { raising.add_all(%w[a a a], [50, 3, 60]) }
        expect([raising.late_count, raising.current("a")]).to eq([1, [[50, 60, 1]]])
      end

      it "refuses the element after one whose aggregator or on_late callable froze the tracker" do
        tracker = nil
        freezer = BatchCallsSpec::Hooked.new { |value| tracker.freeze if value == :freeze }
        tracker = WindowMachines::TumblingWindows.new(10, aggregate: freezer)
        expect_frozen_at(1, tracker) { tracker.add_all(%w[a a a], [1, 2, 3], %i[x freeze y]) }
        expect(tracker.current("a")).to eq([[0, 10, [:x]]])

        late = nil
        late = WindowMachines::TumblingWindows.new(10, aggregate: count, on_late: ->(*) { late.freeze })
        expect_frozen_at(2, late) { late.add_all(%w[a a a], [50, 3, 60]) }
        expect([late.late_count, late.current("a")]).to eq([1, [[50, 60, 1]]])
      end

      it "cannot change what the batch adds when a key's hash changes the caller's Arrays" do
        keys = ["a", nil, "a"]
        values = %i[x y z]
        keys[1] = WindowMachinesSpec::HookKey.new("meddler") do
          keys.fill("z")
          values.fill(:changed)
        end
        windows = WindowMachines::TumblingWindows.new(10, aggregate: aggregate::Collect.new)
        expect(windows.add_all(keys, [1, 2, 3], values)).to eq(3)
        expect(windows.current("a")).to eq([[0, 10, %i[x z]]])
        expect(windows.current(WindowMachinesSpec::HookKey.new("meddler"))).to eq([[0, 10, [:y]]])
        expect(windows.key_count).to eq(2)
      end
    end
  end

  describe "interrupts" do
    big = BatchCallsSpec::BIG
    # 5,000,000 Bignum timestamps (each slower to read than a Fixnum, so
    # the batch runs well past the 100 ms after which Ruby lets a waiting
    # thread run), in runs of 1,024 equal ones: cheap to make, and 16 runs
    # make the 16,384 elements between two checks for interrupts. Made once
    # for the group (a batch copies what it is given).
    before(:context) do
      @long_batch = Array.new(4_883) { |run| Array.new(1_024, big + run) }.flatten(1).first(5_000_000).freeze
    end

    after(:context) { @long_batch = nil }

    attr_reader :long_batch

    # Runs the batch the block starts, with the timestamps behind an object
    # whose to_ary tells another thread the batch has begun; that thread
    # then raises Stop in this one (or sends it a signal, with `signal`).
    # Returns the exception that stopped the batch, or :finished.
    def interrupted(timestamps, signal: nil)
      main = Thread.current
      started = false
      argument = Object.new
      argument.define_singleton_method(:to_ary) do
        started = true
        timestamps
      end
      interrupter = Thread.new do
        Thread.pass until started
        signal ? Process.kill(signal, Process.pid) : main.raise(BatchCallsSpec::Stop, "stop the batch")
      end
      outcome = begin
        yield argument
        :finished
      rescue BatchCallsSpec::Stop => e
        e
      end
      begin
        interrupter.join
      rescue BatchCallsSpec::Stop
        outcome = :finished # it came after the batch
      end
      outcome
    end

    # The batch stopped partway, at a check for interrupts: every element
    # before it applied (16,384 of them, 16 runs, between two checks).
    def expect_stopped_partway(sessions, outcome)
      big = BatchCallsSpec::BIG
      expect(outcome).to be_a(BatchCallsSpec::Stop)
      expect(outcome).not_to be_a(WindowMachines::BatchElement)
      expect(sessions.size).to eq(1)
      first, last = sessions.to_a.first
      expect(first).to eq(big)
      runs = last - big + 1
      expect(runs).to be < 4_883
      expect(runs % 16).to eq(0), "stopped after #{runs} runs of 1,024, not at a check for interrupts"
      expect(sessions.insert(last + 1)).to eq([big, last + 1]) # and is usable
    end

    it "lets Thread#raise from another thread stop a 5,000,000-element Sessions#insert_all partway" do
      sessions = WindowMachines::Sessions.new(1)
      outcome = interrupted(long_batch) { |timestamps| sessions.insert_all(timestamps) }
      expect_stopped_partway(sessions, outcome)
    end

    it "lets Thread#raise from another thread stop a 5,000,000-element tumbling_starts before it returns" do
      returned = nil
      outcome = interrupted(long_batch) { |timestamps| returned = WindowMachines.tumbling_starts(timestamps, 10) }
      expect(outcome).to be_a(BatchCallsSpec::Stop)
      expect(returned).to be_nil
      # Raised inside tumbling_starts, not after it returned.
      expect(outcome.backtrace_locations.first.label).to start_with("tumbling_starts")
    end

    it "runs a trap handler during a long batch, whose exception stops it partway" do
      previous = trap("USR2") { raise BatchCallsSpec::Stop, "trapped" }
      sessions = WindowMachines::Sessions.new(1)
      outcome = interrupted(long_batch, signal: "USR2") { |timestamps| sessions.insert_all(timestamps) }
      expect_stopped_partway(sessions, outcome)
      expect(outcome.message).to eq("trapped")
    ensure
      trap("USR2", previous || "DEFAULT")
    end
  end

  describe "with a clock:" do
    let(:clock) { WindowMachines::Clock.new(:ms) }
    let(:nine) { Time.utc(2026, 12, 1, 9, 0, 0) }
    let(:nine_ms) { 1_796_115_600_000 }
    let(:times) { [nine, nine + 10, 5, nine + 3, nine + 120] }

    it "converts a Sessions batch of Times as single inserts convert them" do
      batch = WindowMachines::Sessions.new(30_000, clock: clock)
      single = WindowMachines::Sessions.new(30_000, clock: clock)
      batch_merges = []
      single_merges = []
      expect(batch.insert_all(times) { |*spans| batch_merges << spans }).to eq(5)
      times.each { |time| single.insert(time) { |*spans| single_merges << spans } }
      expect(batch).to eq(single)
      expect(batch.to_a).to eq([[5, 5], [nine_ms, nine_ms + 10_000], [nine_ms + 120_000, nine_ms + 120_000]])
      expect(batch_merges).to eq(single_merges)
      expect(batch_merges).to eq([[[nine_ms, nine_ms], [nine_ms, nine_ms + 10_000]]])
    end

    it "converts KeyedSessions and add_all batches of Times as single calls do" do
      keys = %w[a b a a b]
      keyed = WindowMachines::KeyedSessions.new(30_000, clock: clock)
      single_keyed = WindowMachines::KeyedSessions.new(30_000, clock: clock)
      expect(keyed.insert_all(keys, times)).to eq(5)
      keys.zip(times) { |key, time| single_keyed.insert(key, time) }
      expect(keyed.to_a).to eq(single_keyed.to_a)

      times = [nine + 59, nine + 10, nine + 61, nine + 3, nine + 120]
      windows = WindowMachines::TumblingWindows.new(60_000, aggregate: aggregate::Collect.new, grace: 300_000, clock: clock)
      single_windows = WindowMachines::TumblingWindows.new(60_000, aggregate: aggregate::Collect.new, grace: 300_000, clock: clock)
      expect(windows.add_all(keys, times, %w[v w x y z])).to eq(5)
      expect(keys.zip(times, %w[v w x y z]).map { |key, time, value| single_windows.add(key, time, value) }).to all(be(true))
      expect(windows.current("a")).to eq([[nine_ms, nine_ms + 60_000, %w[y v]], [nine_ms + 60_000, nine_ms + 120_000, ["x"]]])
      expect(windows.flush.to_a).to eq(single_windows.flush.to_a)
      expect(clock.tumbling_starts([nine + 65, 130], 60_000)).to eq([nine_ms + 60_000, 0])
    end

    it "refuses a time the clock refuses before applying anything, naming its index", :mistyped do
      sessions = WindowMachines::Sessions.new(30_000, clock: clock)
      sessions.insert(nine)
      expect_refused_at(2, WindowMachines::TypeError, raised { clock.ticks(1.5) }.message) do
        sessions.insert_all([nine + 1, nine + 2, 1.5, nine + 3])
      end
      expect_refused_at(1, WindowMachines::RangeError, raised { clock.ticks(-1) }.message) do
        sessions.insert_all([nine + 1, -1])
      end
      expect(sessions.to_a).to eq([[nine_ms, nine_ms]])
      windows = WindowMachines::TumblingWindows.new(60_000, aggregate: count, clock: clock)
      expect_refused_at(1, WindowMachines::TypeError, raised { clock.ticks("9:00") }.message) do
        windows.add_all(%w[a b], [nine, "9:00"])
      end
      expect(windows.size).to eq(0)
    end

    it "names a converted time the tracker refuses, keeping the ones before it" do
      sessions = WindowMachines::Sessions.new(30_000, clock: clock)
      sessions.advance_watermark(nine)
      expect_refused_at(1, WindowMachines::LateEventError,
                        "late event: timestamp #{nine_ms - 1_000} is at or below the watermark #{nine_ms}",
                        timestamp: nine_ms - 1_000, watermark: nine_ms) do
        sessions.insert_all([nine + 1, nine - 1, nine + 2])
      end
      expect(sessions.to_a).to eq([[nine_ms + 1_000, nine_ms + 1_000]])
    end
  end

  describe "the error named for an element" do
    it "is a copy: the single call's class and readers, the message named, the index kept" do
      windows = WindowMachines::SessionWindows.new(5, aggregate: count)
      windows.add("k", 100)
      twin = windows.dup
      named = raised { windows.add_all(%w[k j k], [101, 102, 50]) }
      single = raised { [twin.add("k", 101), twin.add("j", 102), twin.add("k", 50)] }
      expect(named.class).to be(single.class)
      expect(named).not_to be(single)
      expect([named.timestamp, named.watermark, named.key]).to eq([single.timestamp, single.watermark, single.key])
      expect(named.message).to eq("#{single.message} (at index 2)")
      expect(named.index).to eq(2)
      expect(named).to be_a(WindowMachines::Error)
      expect(single).not_to be_a(WindowMachines::BatchElement)
      expect(named.backtrace).to be_an(Array)
    end

    it "can be rescued by the element's index to go on with the rest" do
      sessions = WindowMachines::Sessions.new(5)
      sessions.advance_watermark(20)
      timestamps = [21, 3, 22, 4, 40]
      from = 0
      skipped = []
      begin
        sessions.insert_all(timestamps[from..])
      rescue WindowMachines::LateEventError => e
        skipped << timestamps[from + e.index]
        from += e.index + 1
        retry
      end
      expect(skipped).to eq([3, 4])
      expect(sessions.to_a).to eq([[21, 22], [40, 40]])
    end
  end

  # add_all, and KeyedSessions#insert_all without a block, apply the
  # elements they can without running any Ruby code in runs, under one
  # borrow of the state, and hand any other element (a late one, a key
  # needing eql?, a key to copy, a refused value) to the single call.
  describe "runs of a batch between elements that run Ruby code" do
    it "lets KeyedSessions#insert_all without a block refuse a late element by its index, " \
       "keeping the runs before it" do
      keyed = WindowMachines::KeyedSessions.new(5)
      subclass = Class.new(String)
      keyed.insert_all([String.new("a"), "b", subclass.new("a"), :c], [10, 11, 12, 13])
      keyed.advance_watermark(9)
      message = "late event: timestamp 8 is at or below the watermark 9"
      expect_refused_at(2, WindowMachines::LateEventError, message, timestamp: 8, watermark: 9) do
        keyed.insert_all(%w[a b a a], [14, 15, 8, 16])
      end
      expect(keyed.to_a).to eq([[:c, 13, 13], ["a", 10, 14], ["b", 11, 15]])
    end

    let(:windows) { WindowMachines::TumblingWindows.new(10, aggregate: count) }

    it "refuses the element after an on_late callable froze the tracker, keeping those before it" do
      tracker = WindowMachines::TumblingWindows.new(10, aggregate: count, on_late: ->(*) { tracker.freeze })
      expect_frozen_at(3, tracker) { tracker.add_all(%w[a b a a], [25, 26, 3, 27]) }
      expect(tracker.current("a")).to eq([[20, 30, 1]])
      expect(tracker.late_count).to eq(1)
    end

    it "goes on from where an on_late callable that adds to the tracker left it" do
      twin_calls = []
      twin = WindowMachines::TumblingWindows.new(10, aggregate: count,
                                                   on_late: ->(key, *) { twin_calls << twin.add("late-#{key}", 29) })
      calls = []
      tracker = WindowMachines::TumblingWindows.new(10, aggregate: count,
                                                      on_late: ->(key, *) { calls << tracker.add("late-#{key}", 29) })
      keys = %w[a b c a b c]
      timestamps = [25, 26, 3, 27, 4, 28]
      expect(tracker.add_all(keys, timestamps)).to eq(4)
      keys.zip(timestamps) { |key, timestamp| twin.add(key, timestamp) }
      expect([tracker.to_h, tracker.late_count, calls]).to eq([twin.to_h, twin.late_count, twin_calls])
      expect(calls).to eq([true, true])
      expect(tracker.current("late-c")).to eq([[20, 30, 1]])
      expect(tracker.current("c")).to eq([[20, 30, 1]])
    end

    it "files a String subclass under the equal String it holds, and the String under the subclass" do
      subclass = Class.new(String)
      windows.add_all(["a", subclass.new("a"), "a", subclass.new("b"), "b"], [1, 2, 3, 4, 5])
      expect(windows.key_count).to eq(2)
      expect(windows.current("a")).to eq([[0, 10, 3]])
      expect(windows.current("b")).to eq([[0, 10, 2]])
    end

    it "files a String key that an on_late callable changed under what it says at its turn" do
      held = %w[m1 m2]
      key = String.new("m1")
      tracker = WindowMachines::TumblingWindows.new(10, aggregate: count, on_late: ->(*) { key.replace("m2") })
      tracker.add_all(held, [20, 20])
      keys = ["a", "b", *Array.new(7, "a"), key]
      tracker.add_all(keys, [25, 3, *Array.new(7, 26), 27])
      expect(tracker.current("m1")).to eq([[20, 30, 1]])
      expect(tracker.current("m2")).to eq([[20, 30, 2]])
      expect(tracker.current("a")).to eq([[20, 30, 8]])
    end

    it "holds a frozen copy of a new unfrozen String key, and finds it again by its bytes" do
      key = String.new("acme")
      windows.add_all([key, String.new("acme"), "acme"], [1, 2, 3])
      key << "-changed"
      expect(windows.key_count).to eq(1)
      expect(windows.current("acme")).to eq([[0, 10, 3]])
      expect(windows.flush.to_a.first.first).to be_frozen
    end
  end
end
