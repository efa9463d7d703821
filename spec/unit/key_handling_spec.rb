# frozen_string_literal: true

require "json"
require "objspace"

# Keys of KeyedSessions behave as Hash keys do, whatever the key's class,
# however many keys share a hash, whatever a key's hash or eql? does to the
# tracker meanwhile; checkpoints and errors stay exact and small.
module KeyHandlingSpec
  class SubString < String; end

  # A typed id: equal only to its own class, while String#eql? takes it
  # as equal to a plain String of the same bytes.
  class Token < String
    def eql?(other) = other.instance_of?(Token) && super
  end

  # Every key shares one hash, so eql? decides between all of them.
  class CollidingKey
    attr_reader :id

    def initialize(id)
      @id = id
    end

    def hash = 42
    def eql?(other) = other.instance_of?(CollidingKey) && other.id == @id
  end

  # Its own hash and eql?, but no ==: two equal accounts are not ==.
  # Named, so that Marshal can write it.
  class Account
    attr_reader :number

    def initialize(number)
      @number = number
    end

    def hash = number.hash
    def eql?(other) = other.instance_of?(Account) && other.number == number
  end

  # A key whose hash and eql? run a hook, once, before answering (on_match:
  # only before answering true). Every HookKey has the same hash, so eql? is
  # called against each held one.
  class HookKey
    class << self
      attr_accessor :on_hash, :on_eql, :on_match, :pass_in_eql

      def run(name)
        hook = public_send(name)
        return unless hook

        public_send(:"#{name}=", nil)
        hook.call
      end
    end

    attr_reader :id

    def initialize(id)
      @id = id
    end

    def hash
      self.class.run(:on_hash)
      0
    end

    def eql?(other)
      self.class.run(:on_eql)
      Thread.pass if self.class.pass_in_eql
      same = other.instance_of?(HookKey) && other.id == id
      self.class.run(:on_match) if same
      same
    end

    def inspect = "#<HookKey #{id}>"
  end
end

RSpec.describe "WindowMachines::KeyedSessions key handling" do
  let(:keyed) { WindowMachines::KeyedSessions.new(5) }

  describe "Strings of other classes" do
    let(:subclass) { KeyHandlingSpec::SubString }

    def with_singleton(text)
      (+text).tap { |string| string.define_singleton_method(:shout) { upcase } }
    end

    it "finds a plain String key from an equal String subclass or String with a singleton method" do
      200.times { |n| keyed.insert("p#{n}", 10) }
      expect(200.times.count { |n| keyed.sessions_for(subclass.new("p#{n}")).empty? }).to eq(0)
      expect(200.times.count { |n| keyed.sessions_for(with_singleton("p#{n}")).empty? }).to eq(0)
      expect(200.times.count { |n| keyed.sessions_for(with_singleton("p#{n}").freeze).empty? }).to eq(0)
    end

    it "finds a String subclass key from an equal plain String" do
      200.times { |n| keyed.insert(subclass.new("p#{n}"), 10) }
      200.times { |n| keyed.insert(with_singleton("q#{n}").freeze, 10) }
      expect(200.times.count { |n| keyed.sessions_for("p#{n}").empty? }).to eq(0)
      expect(200.times.count { |n| keyed.sessions_for("q#{n}").empty? }).to eq(0)
    end

    it "tries held keys oldest first, as a Hash does, when two take a lookup (an eql? that is not symmetric)" do
      events = [["abc", 0], [KeyHandlingSpec::Token.new("abc"), 10], ["abc", 20], [KeyHandlingSpec::Token.new("abc"), 30]]
      by_hash = Hash.new { |hash, key| hash[key] = [] }
      events.each { |key, ts| by_hash[key] << ts }
      expect(by_hash.map { |key, times| [key.class, times] }).to eq([[String, [0, 20]], [KeyHandlingSpec::Token, [10, 30]]])

      windows = WindowMachines::TumblingWindows.new(100, aggregate: WindowMachines::Aggregate::Collect.new)
      table = WindowMachines::VersionedTable.new(100)
      events.each do |key, ts|
        keyed.insert(key, ts)
        windows.add(key, ts, ts)
        table.put(key, ts, ts)
      end
      expect(keyed.sessions_for("abc")).to eq([[0, 0], [20, 20]])
      expect(windows.flush.map { |key, _, _, times| [key.class, times] }).to eq(by_hash.map { |key, times| [key.class, times] })
      expect(table.get("abc")).to eq(20)
      expect(table.get(KeyHandlingSpec::Token.new("abc"))).to eq(30)
    end

    it "files events for equal Strings of any class under one key" do
      200.times do |n|
        keyed.insert("p#{n}", 10)
        keyed.insert(subclass.new("p#{n}"), 12)
        keyed.insert(with_singleton("p#{n}"), 14)
      end
      expect(keyed.key_count).to eq(200)
      expect(keyed.size).to eq(200)
      expect(keyed.to_a).to all(match([an_instance_of(String), 10, 14]))
    end
  end

  describe "keys sharing one hash value" do
    it "holds 4,000 of them apart and finds each", :mistyped do
      keys = Array.new(4_000) { |n| KeyHandlingSpec::CollidingKey.new(n) }
      keys.each_with_index { |key, n| expect(keyed.insert(key, n * 10)).to eq([n * 10, n * 10]) }
      expect(keyed.key_count).to eq(4_000)
      expect(keyed.to_a.map { |key, first, last| [key.id, first, last] })
        .to eq(Array.new(4_000) { |n| [n, n * 10, n * 10] })
      [*0..50, *3_950..3_999, *(0...4_000).step(97)].each do |n|
        expect(keyed.sessions_for(KeyHandlingSpec::CollidingKey.new(n))).to eq([[n * 10, n * 10]])
      end
      expect(keyed.insert(KeyHandlingSpec::CollidingKey.new(3_999), 39_992)).to eq([39_990, 39_992])
      expect(keyed.key_count).to eq(4_000)
    end
  end

  describe "memory after many releases" do
    # As small as a fresh tracker holding the same, give or take a constant.
    def expect_no_bigger_than_fresh(churned, fresh)
      limit = [ObjectSpace.memsize_of(fresh) * 2, ObjectSpace.memsize_of(fresh) + 1_024].max
      expect(ObjectSpace.memsize_of(churned)).to be <= limit
    end

    it "stays small when one key is held and released 3,000 times" do
      churned = WindowMachines::KeyedSessions.new(1)
      3_000.times do |n|
        churned.insert("user", n * 10)
        churned.advance_watermark((n * 10) + 1)
        expect(churned.take_closed).to eq(["user", n * 10, n * 10])
      end
      churned.insert("user", 100_000)
      fresh = WindowMachines::KeyedSessions.new(1)
      fresh.insert("user", 100_000)
      expect(churned.key_count).to eq(1)
      expect_no_bigger_than_fresh(churned, fresh)
    end

    it "stays small when 20 keys are held and released 3,000 times in a fixed order" do
      keys = Array.new(20) { |n| "user-#{n}" }
      churned = WindowMachines::KeyedSessions.new(1)
      3_000.times do |n|
        keys.each { |key| churned.insert(key, n * 10) }
        churned.advance_watermark((n * 10) + 1)
        expect(churned.each_closed.count).to eq(20)
      end
      fresh = WindowMachines::KeyedSessions.new(1)
      [churned, fresh].each { |tracker| keys.each { |key| tracker.insert(key, 100_000) } }
      expect(churned.key_count).to eq(20)
      expect_no_bigger_than_fresh(churned, fresh)
    end
  end

  describe "a key whose hash or eql? changes the tracker" do
    let(:hook) { KeyHandlingSpec::HookKey }
    let(:keyed) { WindowMachines::KeyedSessions.new(1) }

    after do
      hook.on_hash = nil
      hook.on_eql = nil
      hook.on_match = nil
      hook.pass_in_eql = nil
    end

    def key(id) = hook.new(id)

    # The insert whose callback changed the tracker either went through or
    # raised a RuntimeError (FrozenError is one); :ok or the error.
    def attempt
      yield
      :ok
    rescue RuntimeError => e
      e
    end

    # {id => [[first, last], ...]}, after checking that no two held keys
    # are the same key and that each is found again.
    def held_by_id(tracker)
      keys = tracker.to_a.map(&:first).uniq(&:object_id)
      expect(keys.map(&:id).uniq.size).to eq(keys.size), "two held keys are eql?: #{keys.inspect}"
      expect(tracker.key_count).to eq(keys.size)
      held = tracker.to_a.group_by { |held_key, _first, _last| held_key.id }
                    .transform_values { |triples| triples.map { |_key, first, last| [first, last] }.sort }
      held.each { |id, spans| expect(tracker.sessions_for(key(id))).to eq(spans) }
      held
    end

    # Key 1's only session is closed; the callback takes it (releasing key
    # 1) and key 2 starts being held, maybe in key 1's old place.
    def release_and_replace(tracker, taken)
      taken << tracker.take_closed
      tracker.insert(key(2), 20)
    end

    def expect_released_and_replaced(outcome, taken)
      expect(outcome).to eq(:ok).or be_a(RuntimeError)
      expect(taken.map { |held, first, last| [held.id, first, last] }).to eq([[1, 10, 10]])
      expected = { 2 => [[20, 20]] }
      expected[1] = [[30, 30]] if outcome == :ok
      expect(held_by_id(keyed)).to eq(expected)
    end

    before do
      keyed.insert(key(1), 10)
      keyed.advance_watermark(11)
    end

    it "files nothing under another key when eql? releases the key being compared", :mistyped do
      taken = []
      hook.on_eql = -> { release_and_replace(keyed, taken) }
      outcome = attempt { keyed.insert(key(1), 30) }
      expect_released_and_replaced(outcome, taken)
    end

    it "files nothing under another key when eql? releases the matching key among many", :mistyped do
      10.times { |n| keyed.insert(key(100 + n), 12 + (n * 3)) }
      taken = []
      hook.on_match = lambda do
        taken << keyed.take_closed
        10.times { |n| keyed.insert(key(200 + n), 50 + (n * 3)) }
      end
      outcome = attempt { keyed.insert(key(1), 30) }
      expect(outcome).to eq(:ok).or be_a(RuntimeError)
      expect(taken.map { |held, first, last| [held.id, first, last] }).to eq([[1, 10, 10]])
      expected = Array.new(10) { |n| [100 + n, [[12 + (n * 3), 12 + (n * 3)]]] }.to_h
      10.times { |n| expected[200 + n] = [[50 + (n * 3), 50 + (n * 3)]] }
      expected[1] = [[30, 30]] if outcome == :ok
      expect(held_by_id(keyed)).to eq(expected)
    end

    it "files nothing under another key when hash releases the key", :mistyped do
      taken = []
      hook.on_hash = -> { release_and_replace(keyed, taken) }
      outcome = attempt { keyed.insert(key(1), 30) }
      expect_released_and_replaced(outcome, taken)
    end

    it "holds one key when eql? starts holding the key being inserted", :mistyped do
      keyed.insert(key(3), 15)
      hook.on_eql = -> { keyed.insert(key(4), 40) }
      outcome = attempt { keyed.insert(key(4), 50) }
      expect(outcome).to eq(:ok).or be_a(RuntimeError)
      expect(held_by_id(keyed)).to eq(1 => [[10, 10]], 3 => [[15, 15]], 4 => outcome == :ok ? [[40, 40], [50, 50]] : [[40, 40]])
    end

    it "files nothing under another key when eql? takes and inserts many keys", :mistyped do
      20.times { |n| keyed.insert(key(100 + n), 12 + (n * 3)) }
      taken = []
      hook.on_match = lambda do
        keyed.advance_watermark(1_000)
        keyed.each_closed { |held, first, last| taken << [held.id, first, last] }
        20.times { |n| keyed.insert(key(200 + n), 2_000 + (n * 3)) }
      end
      outcome = attempt { keyed.insert(key(110), 1_500) }
      expect(outcome).to eq(:ok).or be_a(RuntimeError)
      expect(taken).to match_array([[1, 10, 10], *Array.new(20) { |n| [100 + n, 12 + (n * 3), 12 + (n * 3)] }])
      expected = Array.new(20) { |n| [200 + n, [[2_000 + (n * 3), 2_000 + (n * 3)]]] }.to_h
      expected[110] = [[1_500, 1_500]] if outcome == :ok
      expect(held_by_id(keyed)).to eq(expected)
    end

    %i[on_hash on_eql].each do |callback|
      it "changes nothing and raises FrozenError when #{callback.to_s.delete_prefix('on_')} freezes it", :mistyped do
        keyed.insert(key(3), 15)
        before = keyed.to_a
        hook.public_send(:"#{callback}=", -> { keyed.freeze })
        expect_frozen_error(keyed) { keyed.insert(key(4), 50) }
        expect(keyed).to be_frozen
        expect(keyed.to_a).to eq(before)
        expect(keyed.size).to eq(2)
        expect(held_by_id(keyed)).to eq(1 => [[10, 10]], 3 => [[15, 15]])
      end
    end

    it "files nothing under another key when eql? yields to a Fiber that changes the tracker", :mistyped do
      hook.on_eql = -> { Fiber.yield }
      inserting = Fiber.new { attempt { keyed.insert(key(1), 30) } }
      expect(inserting.resume).to be_nil # suspended inside eql?
      taken = []
      release_and_replace(keyed, taken)
      outcome = inserting.resume
      expect_released_and_replaced(outcome, taken)
    end

    it "changes nothing when eql? yields to a Fiber that freezes the tracker", :mistyped do
      hook.on_eql = -> { Fiber.yield }
      inserting = Fiber.new { attempt { keyed.insert(key(3), 30) } }
      inserting.resume
      before = keyed.to_a
      keyed.freeze
      expect(inserting.resume).to be_a(FrozenError)
      expect(keyed.to_a).to eq(before)
    end

    it "files nothing under another key when eql? lets a thread change the tracker", :mistyped do
      reached = Queue.new
      proceed = Queue.new
      hook.on_eql = lambda do
        reached << true
        proceed.pop # blocks, releasing the GVL
      end
      inserting = Thread.new { attempt { keyed.insert(key(1), 30) } }
      reached.pop
      taken = []
      release_and_replace(keyed, taken)
      proceed << true
      expect_released_and_replaced(inserting.value, taken)
    end

    it "files every event under its own key while threads insert and eql? passes the GVL", :mistyped do
      hook.pass_in_eql = true
      rng = Random.new(RSpec.configuration.seed)
      events = (0...12).to_a.product((0...24).to_a).shuffle(random: rng)
      outcomes = Array.new(2) do |half|
        mine = events.select { |_id, step| step % 2 == half }
        Thread.new do
          mine.map { |id, step| [id, step, attempt { keyed.insert(key(id), 1_000 + (id * 1_000) + (step * 3)) }] }
        end
      end.flat_map(&:value)
      outcomes.each { |_id, _step, outcome| expect(outcome).to eq(:ok).or be_a(RuntimeError) }
      expected = outcomes.select { |*, outcome| outcome == :ok }.group_by(&:first).transform_values do |inserted|
        session = WindowMachines::Sessions.new(1)
        inserted.each { |id, step, _| session.insert(1_000 + (id * 1_000) + (step * 3)) }
        session.to_a
      end
      expected[1] = [[10, 10]] + expected.fetch(1, [])
      expect(held_by_id(keyed)).to eq(expected.transform_values(&:sort))
    end
  end

  describe "checkpoints" do
    {
      "a UTF-16LE String" => "a".encode("UTF-16LE"),
      "a binary String with high bytes" => "\xff".b,
      "an invalid UTF-8 String" => (+"\xff").force_encoding(Encoding::UTF_8),
      "an ISO-8859-1 String with high bytes" => "\u00e9".encode("ISO-8859-1"),
      "an Array holding a binary String with high bytes" => [1, ["\xff".b]]
    }.each do |description, key|
      it "refuses to_h for #{description}, which JSON cannot carry exactly", :mistyped do
        keyed.insert("a", 1)
        keyed.insert(key, 3)
        expect { keyed.to_h }.to raise_error(WindowMachines::TypeError)
        expect(Marshal.load(Marshal.dump(keyed))).to eq(keyed)
      end
    end

    it "refuses to_h for \"a\" held next to a UTF-16LE \"a\", rather than write what from_h refuses", :mistyped do
      keyed.insert("a", 1)
      keyed.insert("a".encode("UTF-16LE"), 3)
      expect(keyed.key_count).to eq(2)
      expect { keyed.to_h }.to raise_error(WindowMachines::TypeError)
    end

    it "writes ASCII-only Strings of ASCII-compatible encodings, and UTF-8, and reads them back" do
      ["abc".encode("US-ASCII"), "abd".b, "\u00e9t\u00e9", ["x".b, "y".encode("US-ASCII")]].each_with_index do |key, n|
        keyed.insert(key, n * 10)
      end
      restored = WindowMachines::KeyedSessions.from_h(JSON.parse(JSON.generate(keyed.to_h)))
      expect(restored).to eq(keyed)
      expect(restored.to_a.map { |_key, first, last| [first, last] }).to eq(keyed.to_a.map { |_key, f, l| [f, l] })
      expect(restored.sessions_for("abc")).to eq([[0, 0]])
      expect(restored.sessions_for(%w[x y])).to eq([[30, 30]])
    end

    it "refuses to_h for an Array that contains itself with a clear error", :mistyped do
      looped = []
      looped << looped
      keyed.insert(looped, 1)
      expect { keyed.to_h }.to raise_error(WindowMachines::TypeError)
    end
  end

  describe "==, eql? and hash" do
    def tracker_with(*keys)
      WindowMachines::KeyedSessions.new(5).tap do |tracker|
        keys.each_with_index { |key, n| tracker.insert(key, n * 10) }
      end
    end

    it "tells apart trackers whose keys are == but not eql?" do
      [[1, 1.0], [[1], [1.0]], [2**64, (2**64).to_f]].each do |a, b|
        one = tracker_with("x", a)
        other = tracker_with("x", b)
        expect(one).not_to eq(other)
        expect(one).not_to eql(other)
        expect({ one => true }.key?(other)).to be(false)
      end
    end

    it "has equal hashes whenever trackers are eql?, so a Hash finds one by the other" do
      pairs = [[1, 1.0], [0.0, -0.0], ["abc", "abc".b], ["abc", KeyHandlingSpec::SubString.new("abc")],
               [[1, "a"], [1, +"a"]], [:k, :k], [KeyHandlingSpec::Account.new(1), KeyHandlingSpec::Account.new(1)]]
      pairs.each do |a, b|
        one = tracker_with(:k, a)
        other = tracker_with(:k, b)
        expect(one.hash).to eq(other.hash), "#{a.inspect} and #{b.inspect}" if one.eql?(other)
        expect({ one => true }.key?(other)).to eq(one.eql?(other)), "#{a.inspect} and #{b.inspect}"
      end
      expect(tracker_with(:k, [1, "a"])).to eql(tracker_with(:k, [1, +"a"]))
    end

    it "comes back == through Marshal with keys that define hash and eql? but not ==" do
      [KeyHandlingSpec::Account.new(7), KeyHandlingSpec::Account.new(8)].each_with_index { |key, n| keyed.insert(key, n) }
      copy = Marshal.load(Marshal.dump(keyed))
      expect(copy.sessions_for(KeyHandlingSpec::Account.new(7))).to eq([[0, 0]])
      expect(copy).to eq(keyed)
      expect(copy).to eql(keyed)
      expect(copy.hash).to eq(keyed.hash)
      expect(keyed.dup).to eq(keyed)
    end
  end

  describe "error messages" do
    let(:huge) { "x" * 1_000_000 }
    let(:big) { 2**100_000 }

    def expect_short_message(klass)
      expect { yield }.to raise_error(klass) { |error| expect(error.message.size).to be < 200 }
    end

    it "shows a short inspect of a 50 MB String given as a gap", :mistyped do
      expect_short_message(WindowMachines::TypeError) { WindowMachines::KeyedSessions.new("x" * 50_000_000) }
    end

    {
      "KeyedSessions.new max_sessions" => ->(huge) { WindowMachines::KeyedSessions.new(1, max_sessions: huge) },
      "KeyedSessions#insert" => ->(huge) { WindowMachines::KeyedSessions.new(1).insert("k", huge) },
      "KeyedSessions#advance_watermark" => ->(huge) { WindowMachines::KeyedSessions.new(1).advance_watermark(huge) },
      "Sessions.new" => ->(huge) { WindowMachines::Sessions.new(huge) },
      "Sessions#insert" => ->(huge) { WindowMachines::Sessions.new(1).insert(huge) },
      "Watermark.new" => ->(huge) { WindowMachines::Watermark.new(huge) },
      "tumbling's timestamp" => ->(huge) { WindowMachines.tumbling(huge, 10) },
      "tumbling's size" => ->(huge) { WindowMachines.tumbling(10, huge) },
      "sliding" => ->(huge) { WindowMachines.sliding(10, huge, 1) },
      "from_h instead of a Hash" => ->(huge) { WindowMachines::KeyedSessions.from_h(huge) },
      "from_h's gap" => lambda { |huge|
        WindowMachines::KeyedSessions.from_h(gap: huge, max_sessions: nil, watermark: nil, sessions: [])
      },
      "from_h's sessions" => lambda { |huge|
        WindowMachines::KeyedSessions.from_h(gap: 1, max_sessions: nil, watermark: nil, sessions: huge)
      },
      "from_h's session" => lambda { |huge|
        WindowMachines::KeyedSessions.from_h(gap: 1, max_sessions: nil, watermark: nil, sessions: [huge])
      },
      "from_h's first" => lambda { |huge|
        WindowMachines::KeyedSessions.from_h(gap: 1, max_sessions: nil, watermark: nil, sessions: [["k", huge, 1]])
      },
      "Sessions.from_h's last" => ->(huge) { WindowMachines::Sessions.from_h(gap: 1, watermark: nil, sessions: [[1, huge]]) }
    }.each do |where, call|
      it "shows a short inspect of a 1 MB String given to #{where}", :mistyped do
        expect_short_message(WindowMachines::TypeError) { call.call(huge) }
      end
    end

    it "shows a short inspect of a 1 MB unknown checkpoint key", :mistyped do
      expect_short_message(WindowMachines::ArgumentError) do
        WindowMachines::KeyedSessions.from_h(gap: 1, max_sessions: nil, watermark: nil, sessions: [], huge => 1)
      end
    end

    it "shows a short inspect of a huge key to_h refuses", :mistyped do
      keyed.insert("\xff".b * 1_000_000, 1)
      expect_short_message(WindowMachines::TypeError) { keyed.to_h }
    end

    it "shows a short inspect of 2**100_000", :mistyped do
      expect_short_message(WindowMachines::RangeError) { WindowMachines::KeyedSessions.new(big) }
      expect_short_message(WindowMachines::RangeError) { WindowMachines::KeyedSessions.new(-big) }
      expect_short_message(WindowMachines::RangeError) { WindowMachines::Sessions.new(1).insert(big) }
      expect_short_message(WindowMachines::RangeError) { WindowMachines.tumbling(big, 10) }
      expect_short_message(WindowMachines::RangeError) do
        WindowMachines::KeyedSessions.from_h(gap: 1, max_sessions: nil, watermark: big, sessions: [])
      end
    end
  end
end
