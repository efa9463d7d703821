# frozen_string_literal: true

RSpec.describe WindowMachines::KeyedSessions do
  subject(:keyed) { described_class.new(5) }

  describe ".new" do
    it "takes a gap and an optional max_sessions" do
      expect(keyed.gap).to eq(5)
      expect(keyed.max_sessions).to be_nil
      expect(described_class.new(5, max_sessions: 10).max_sessions).to eq(10)
      expect(described_class.new(5, max_sessions: nil).max_sessions).to be_nil
    end

    it "refuses zero lengths and bad types", :mistyped do
      expect_gem_error(WindowMachines::ArgumentError, "gap must be positive, got 0") { described_class.new(0) }
      expect_gem_error(WindowMachines::ArgumentError, "max_sessions must be positive, got 0") do
        described_class.new(1, max_sessions: 0)
      end
      expect_gem_error(WindowMachines::TypeError, "max_sessions must be an Integer, got 1.5 (Float)") do
        described_class.new(1, max_sessions: 1.5)
      end
      expect_gem_error(WindowMachines::RangeError, "gap must be in 0..2**64-1, got -1") { described_class.new(-1) }
      expect { described_class.new(1, limit: 3) }.to raise_error(ArgumentError, /unknown keyword: :limit/)
    end

    it "cannot be allocated without initialize" do
      expect { described_class.allocate }.to raise_error(NoMethodError)
    end
  end

  describe "#insert" do
    it "keeps each key's sessions apart under the same rules as Sessions" do
      expect(keyed.insert("a", 10)).to eq([10, 10])
      expect(keyed.insert("b", 12)).to eq([12, 12])
      expect(keyed.insert("a", 15)).to eq([10, 15])
      expect(keyed.insert("a", 21)).to eq([21, 21])
      expect(keyed.insert("a", 18)).to eq([10, 21])
      expect(keyed.sessions_for("a")).to eq([[10, 21]])
      expect(keyed.sessions_for("b")).to eq([[12, 12]])
      expect(keyed.sessions_for("nobody")).to eq([])
    end

    it "yields replaced spans as Sessions#insert does" do
      keyed.insert(:k, 10)
      keyed.insert(:k, 20)
      yielded = []
      keyed.insert(:k, 15) { |old_span, new_span| yielded << [old_span, new_span] }
      expect(yielded).to eq([[[10, 10], [10, 20]], [[20, 20], [10, 20]]])
      keyed.insert(:other, 15) { raise "a new session yields nothing" }
    end

    it "refuses events at or below the shared watermark for every key" do
      keyed.insert("a", 10)
      keyed.advance_watermark(10)
      expect_gem_error(WindowMachines::LateEventError,
                       "late event: timestamp 10 is at or below the watermark 10") { keyed.insert("new", 10) }
      expect(keyed.key_count).to eq(1)
      expect(keyed.insert("new", 11)).to eq([11, 11])
    end

    it "allows 32 sessions per key and refuses a 33rd, changing nothing" do
      32.times { |n| keyed.insert("a", n * 10) }
      before = keyed.to_a
      expect_gem_error(WindowMachines::CapacityError, /32 sessions/) { keyed.insert("a", 1_000) }
      expect(keyed.to_a).to eq(before)
      expect(keyed.insert("a", 3)).to eq([0, 3])
      expect(keyed.insert("b", 1_000)).to eq([1_000, 1_000])
    end

    it "bounds the total with max_sessions, dropping nothing" do
      bounded = described_class.new(5, max_sessions: 2)
      bounded.insert("a", 10)
      bounded.insert("b", 10)
      expect_gem_error(WindowMachines::CapacityError, /the 2 sessions/) { bounded.insert("c", 10) }
      expect_gem_error(WindowMachines::CapacityError, /the 2 sessions/) { bounded.insert("a", 100) }
      expect(bounded.insert("a", 12)).to eq([10, 12])
      expect(bounded.key_count).to eq(2)
    end

    it "checks the receiver, then the timestamp, then the rules", :mistyped do
      expect_gem_error(WindowMachines::TypeError, "timestamp must be an Integer, got nil (NilClass)") do
        keyed.insert("a", nil)
      end
      keyed.freeze
      expect_frozen_error(keyed) { keyed.insert("a", nil) }
    end
  end

  describe "keys" do
    it "match as Hash keys do: by eql? and hash, not identity" do
      keyed.insert(+"partner", 10)
      expect(keyed.insert(+"partner", 12)).to eq([10, 12])
      keyed.insert([1, "x"], 10)
      expect(keyed.insert([1, "x"], 11)).to eq([10, 11])
      keyed.insert(1, 10)
      expect(keyed.insert(1.0, 11)).to eq([11, 11]) # 1.eql?(1.0) is false, as in a Hash
      expect(keyed.key_count).to eq(4)
    end

    it "accepts any object a Hash accepts, including nil, Symbols and custom objects" do
      point = Struct.new(:x, :y)
      keyed.insert(nil, 1)
      keyed.insert(:sym, 1)
      keyed.insert(point.new(1, 2), 1)
      expect(keyed.insert(point.new(1, 2), 3)).to eq([1, 3])
      expect(keyed.sessions_for(nil)).to eq([[1, 1]])
      expect(keyed.key_count).to eq(3)
    end

    it "stores an unfrozen String key as a frozen copy, as a Hash does" do
      name = +"acme"
      keyed.insert(name, 10)
      name << " corp"
      expect(keyed.sessions_for("acme")).to eq([[10, 10]])
      stored = keyed.to_a.first.first
      expect(stored).to eq("acme")
      expect(stored).to be_frozen
      frozen = "frozen"
      keyed.insert(frozen, 1)
      expect(keyed.to_a.map(&:first)).to include(be(frozen))
    end

    it "survive keys whose hash methods collide" do
      colliding = Class.new do
        attr_reader :id

        def initialize(id) = @id = id
        def hash = 42
        def eql?(other) = other.is_a?(self.class) && other.id == id
      end
      20.times { |n| keyed.insert(colliding.new(n), n * 100) }
      20.times { |n| expect(keyed.insert(colliding.new(n), (n * 100) + 1)).to eq([n * 100, (n * 100) + 1]) }
      expect(keyed.key_count).to eq(20)
    end

    it "propagates an exception from a key's hash method and changes nothing" do
      broken = Object.new
      def broken.hash = raise(IOError, "no hash today")
      expect { keyed.insert(broken, 1) }.to raise_error(IOError, "no hash today")
      expect(keyed.size).to eq(0)
    end
  end

  describe "#take_closed and #each_closed" do
    before do
      [["b", 10], ["a", 10], ["a", 40], ["c", 8], ["c", 10], ["d", 30]].each { |key, at| keyed.insert(key, at) }
    end

    it "hands over by last, then first, then the key held longest" do
      keyed.advance_watermark(100)
      expect(Array.new(6) { keyed.take_closed })
        .to eq([["c", 8, 10], ["b", 10, 10], ["a", 10, 10], ["d", 30, 30], ["a", 40, 40], nil])
    end

    it "hands over only closed sessions" do
      keyed.advance_watermark(15)
      expect(keyed.each_closed.to_a).to eq([["c", 8, 10], ["b", 10, 10], ["a", 10, 10]])
      expect(keyed.take_closed).to be_nil
      expect(keyed.size).to eq(2)
    end

    it "yields key, first and last and returns self" do
      keyed.advance_watermark(35)
      yielded = []
      expect(keyed.each_closed { |key, first, last| yielded << [key, first, last] }).to be(keyed)
      expect(yielded.map(&:first)).to eq(%w[c b a d])
    end

    it "releases a key with its last session" do
      keyed.advance_watermark(15)
      keyed.each_closed { nil }
      expect(keyed.key_count).to eq(2)
      expect(keyed.sessions_for("b")).to eq([])
      expect(keyed.sessions_for("a")).to eq([[40, 40]])
    end
  end

  describe "looking without changing" do
    before { [["b", 10], ["a", 3], ["a", 30]].each { |key, at| keyed.insert(key, at) } }

    it "reports sizes, sessions in closing order, and is Enumerable" do
      expect(keyed.size).to eq(3)
      expect(keyed.key_count).to eq(2)
      expect(keyed.to_a).to eq([["a", 3, 3], ["b", 10, 10], ["a", 30, 30]])
      expect(keyed.each.size).to eq(3)
      expect(keyed.map { |key, first, _last| "#{key}#{first}" }).to eq(%w[a3 b10 a30])
      expect(keyed.inspect).to eq("#<WindowMachines::KeyedSessions gap=5 watermark=nil sessions=3 keys=2>")
    end
  end

  describe "freeze, dup and clone" do
    before { keyed.insert("a", 10) }

    it "refuses every mutator on a frozen tracker and still reads" do
      keyed.freeze
      expect_frozen_error(keyed) { keyed.insert("a", 11) }
      expect_frozen_error(keyed) { keyed.advance_watermark(11) }
      expect_frozen_error(keyed) { keyed.take_closed }
      expect_frozen_error(keyed) { keyed.each_closed.to_a }
      expect(keyed.to_a).to eq([["a", 10, 10]])
    end

    it "copies all state into an independent tracker" do
      copy = keyed.dup
      copy.insert("a", 12)
      copy.insert("b", 1)
      expect(keyed.to_a).to eq([["a", 10, 10]])
      expect(copy.to_a).to eq([["b", 1, 1], ["a", 10, 12]])
      expect(keyed.freeze.clone).to be_frozen
      expect(keyed.dup).not_to be_frozen
      expect(keyed.dup).to eq(keyed)
    end
  end
end
