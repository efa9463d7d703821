# frozen_string_literal: true

require "objspace"

# User code that runs while a WindowMachines::VersionedTable is in the middle
# of a call: a key's hash and eql?, an on_late callable, each's block. It may
# re-enter the table, raise, freeze it or switch Fibers. Whatever the
# outcome (the call completes, or raises), every value stays filed under the
# key it was put under, a frozen table never changes, and a call that raises
# leaves the table as it was before it (a late event is still counted).
# Every call that returned is replayed, in the order it returned, on a
# plain-Ruby model of the rules (PlainRuby::VersionedTable); its answers and the table's
# whole state (marshal_dump) must be the model's. Values are never asked
# anything: the table holds them as they are. Memory and version_count
# depend on what the table holds now, never on how much it has released.
module VersionedTableHostileSpec
  # A key whose hash and eql? run a hook before answering (on_match: only
  # before answering true). A hook runs once, then is cleared, unless
  # every_time is set. Every HookKey has the same hash, so eql? is called
  # against each held one; a fresh HookKey is never the held object, so no
  # identity shortcut skips it.
  class HookKey
    class << self
      attr_accessor :on_hash, :on_eql, :on_match, :every_time

      def fire(name)
        hook = public_send(name)
        return unless hook

        public_send(:"#{name}=", nil) unless every_time
        hook.call
      end

      def disarm
        self.on_hash = self.on_eql = self.on_match = nil
        self.every_time = false
      end
    end

    attr_reader :id

    def initialize(id)
      @id = id
    end

    def hash
      self.class.fire(:on_hash)
      0
    end

    def eql?(other)
      self.class.fire(:on_eql)
      same = other.instance_of?(HookKey) && other.id == id
      self.class.fire(:on_match) if same
      same
    end
    alias == eql?

    def inspect = "#<HookKey #{id}>"
  end

  # Every one has the same hash: eql? alone tells them apart.
  class CollidingKey
    attr_reader :id

    def initialize(id)
      @id = id
    end

    def hash = 42
    def eql?(other) = CollidingKey === other && other.id == @id
    alias == eql?
  end

  # Calls made on trap values while armed.
  module Calls
    class << self
      attr_accessor :armed

      def log = (@log ||= [])
    end
  end

  # Records (while armed) any method called on it that Object has: hash,
  # eql?, ==, dup, frozen?, respond_to?, to_ary, marshal_dump, inspect...
  class TrapValue
    attr_reader :name

    def initialize(name)
      @name = name
    end

    probed = Object.public_instance_methods - %i[__id__ __send__ instance_variable_get equal? instance_eval instance_exec]
    private_probed = %i[initialize_copy initialize_dup initialize_clone respond_to_missing? method_missing]
    (probed + private_probed).each do |probed_method|
      define_method(probed_method) do |*args, **options, &block|
        Calls.log << [@name, probed_method] if Calls.armed
        super(*args, **options, &block)
      end
    end
    private(*private_probed)
  end

  # Answers nothing at all: a call other than BasicObject's own is recorded
  # (while armed) and raises NoMethodError.
  class BasicTrap < BasicObject
    def initialize(name)
      @name = name
    end

    %i[== != ! equal?].each do |basic|
      define_method(basic) do |*args|
        ::VersionedTableHostileSpec::Calls.log << [@name, basic] if ::VersionedTableHostileSpec::Calls.armed
        super(*args)
      end
    end

    def method_missing(name, *args)
      ::VersionedTableHostileSpec::Calls.log << [@name, name] if ::VersionedTableHostileSpec::Calls.armed
      super
    end

    def respond_to_missing?(*) = false
  end

  # Raised by a hook that ran far more often than a lookup that gives up
  # after a few tries would run it.
  class RetriedForever < StandardError; end

  # Runs calls on a table and records, in the order they returned, those
  # that did (a LateEventError as :late_error), to be replayed on the model.
  class Session
    attr_reader :table, :log

    def initialize(table)
      @table = table
      @log = []
    end

    def call(operation, *args)
      result = @table.public_send(operation, *args)
      @log << [operation, args, result]
      result
    rescue WindowMachines::LateEventError
      @log << [operation, args, :late_error]
      raise
    end
  end

  module_function

  # A key as the model holds it.
  def plain(key) = key.instance_of?(HookKey) ? [:hook, key.id] : key

  # A fresh key equal to a model's key.
  def lookup(key) = key.is_a?(Array) && key.first == :hook ? HookKey.new(key.last) : key

  # The plain-Ruby model, refusing late changes as `on_late` says
  # (:drop unless told).
  def model(retention, on_late: :drop) = PlainRuby::VersionedTable.new(retention, on_late: on_late)

  # The model's whole state, as marshal_dump shows the table's.
  def state(model) = model.marshal_dump.slice(:history_retention, :stream_time, :late_count, :versions)

  # Every key the model holds, tombstoned ones included.
  def keys(model) = model.marshal_dump.fetch(:versions).map(&:first).uniq
end

RSpec.describe "WindowMachines::VersionedTable and hostile user code" do
  include WindowMachinesSpec::FixtureProcess

  after do
    hook.disarm
    VersionedTableHostileSpec::Calls.armed = false
    VersionedTableHostileSpec::Calls.log.clear
  end

  def table_class = WindowMachines::VersionedTable
  def hook = VersionedTableHostileSpec::HookKey

  def key(id) = VersionedTableHostileSpec::HookKey.new(id)

  # A value that names the key it belongs under and its timestamp.
  def val(name, ts) = "#{name}@#{ts}"

  # [:ok, result], or [:raised, error] for a RuntimeError (FrozenError and
  # the gem's "changed during each try" are ones).
  def attempt
    [:ok, yield]
  rescue RuntimeError => e
    [:raised, e]
  end

  # Replays the calls that returned on a model, checking each answer.
  def replay(session, on_late: :drop)
    model = VersionedTableHostileSpec.model(session.table.history_retention, on_late: on_late)
    session.log.each do |operation, args, result|
      key, *rest = args
      expected = begin
        model.public_send(operation, VersionedTableHostileSpec.plain(key), *rest)
      rescue WindowMachines::LateEventError
        :late_error
      end
      expect(result).to eq(expected), "#{operation}#{args.inspect} answered #{result.inspect}, the model #{expected.inspect}"
    end
    model
  end

  # The table's whole state is the model's, and every key answers as the
  # model's does when looked up by a fresh equal key.
  def expect_like(table, model)
    hook.disarm
    dump = table.marshal_dump
    got = dump.slice(:history_retention, :stream_time, :late_count)
              .merge(versions: dump.fetch(:versions).map { |key, *rest| [VersionedTableHostileSpec.plain(key), *rest] })
    expect(got).to eq(VersionedTableHostileSpec.state(model))
    expect([table.size, table.version_count]).to eq([model.size, model.version_count])
    VersionedTableHostileSpec.keys(model).each do |key|
      found = VersionedTableHostileSpec.lookup(key)
      expect(table.history(found)).to eq(model.history(key)), "history of #{key.inspect}"
      expect(table.version(found)).to eq(model.version(key)), "version of #{key.inspect}"
    end
    expect(table.each.map { |key, *rest| [VersionedTableHostileSpec.plain(key), *rest] }).to eq(model.each.to_a)
  end

  # Every value is "name@ts" of the key it is held under.
  def expect_filed_rightly(table)
    hook.disarm
    table.each do |key, value, from, _to|
      name = key.instance_of?(VersionedTableHostileSpec::HookKey) ? "h#{key.id}" : key.to_s
      expect(value).to start_with("#{name}@"), "#{value.inspect} is held under #{key.inspect} (from #{from})"
    end
  end

  # The state marshal_dump shows, for a table that must not change.
  def frozen_state(table) = table.marshal_dump.merge(size: table.size, version_count: table.version_count)

  def expect_unchangeable(table, state)
    expect(table).to be_frozen
    expect_frozen_error(table) { table.put("another", "another@1000", 1_000) }
    expect_frozen_error(table) { table.delete("another", 1_000) }
    expect(frozen_state(table)).to eq(state)
  end

  # Releases a held key: a tombstone, then a put of "clock" that moves the
  # stream time by the retention, so both the key's versions expire.
  def release(session, held, at)
    session.call(:delete, held, at)
    session.call(:put, "clock", val("clock", at + session.table.history_retention), at + session.table.history_retention)
  end

  describe "a key whose hash or eql? re-enters the table" do
    let(:table) { table_class.new(5, on_late: :drop) }
    let(:session) { VersionedTableHostileSpec::Session.new(table) }

    before do
      session.call(:put, key(1), val("h1", 10), 10)
      session.call(:put, "a", val("a", 10), 10)
    end

    def finish(outcome)
      expect(outcome.first).to eq(:ok).or eq(:raised)
      expect(outcome.last).to be_a(RuntimeError) if outcome.first == :raised
      model = replay(session)
      expect_like(table, model)
      expect_filed_rightly(table)
      model
    end

    it "files the put and a put that hash made before it, each under its own key" do
      hook.on_hash = -> { session.call(:put, "b", val("b", 12), 12) }
      outcome = attempt { session.call(:put, key(1), val("h1", 14), 14) }
      model = finish(outcome)
      expect(model.get("b")).to eq("b@12")
      expect(outcome).to eq([:ok, nil])
    end

    it "files both versions when hash puts the same key at another time" do
      hook.on_hash = -> { session.call(:put, key(1), val("h1", 12), 12) }
      outcome = attempt { session.call(:put, key(1), val("h1", 11), 11) }
      model = finish(outcome)
      expect(outcome).to eq([:ok, 12])
      expect(model.history([:hook, 1]).map(&:first)).to eq(%w[h1@10 h1@11 h1@12])
    end

    it "files the put into history when hash deleted the key at a later time" do
      hook.on_hash = -> { session.call(:delete, key(1), 13) }
      outcome = attempt { session.call(:put, key(1), val("h1", 12), 12) }
      finish(outcome)
      expect(outcome).to eq([:ok, 13])
      expect(table.get(key(1))).to be_nil
      expect(table.get(key(1), 12)).to eq("h1@12")
    end

    it "files nothing under another key when eql? releases the key being compared and another takes its place" do
      hook.on_eql = lambda do
        release(session, key(1), 20)
        session.call(:put, key(2), val("h2", 25), 25)
      end
      outcome = attempt { session.call(:put, key(1), val("h1", 30), 30) }
      model = finish(outcome)
      expect(model.get([:hook, 2])).to eq("h2@25")
      expect(table.size).to eq(outcome.first == :ok ? 4 : 3)
    end

    it "files nothing under another key when eql? of the matching key releases it and many keys arrive" do
      10.times { |n| session.call(:put, key(100 + n), val("h#{100 + n}", 10), 10) }
      hook.on_match = lambda do
        release(session, key(1), 20)
        40.times { |n| session.call(:put, key(200 + n), val("h#{200 + n}", 25), 25) }
        40.times { |n| session.call(:put, "s#{n}", val("s#{n}", 25), 25) }
      end
      outcome = attempt { session.call(:put, key(1), val("h1", 30), 30) }
      finish(outcome)
      expect(table.size).to eq(1 + 10 + 1 + 40 + 40 + (outcome.first == :ok ? 1 : 0))
    end

    it "files the put after hash moved the stream time past it, as a late put" do
      hook.on_hash = -> { session.call(:put, "b", val("b", 40), 40) }
      outcome = attempt { session.call(:put, key(1), val("h1", 12), 12) }
      finish(outcome)
      expect(outcome).to eq([:ok, false])
      expect(table.late_count).to eq(1)
      expect(table.history(key(1))).to eq([["h1@10", 10, nil]])
    end

    it "raises LateEventError under on_late: :raise when hash moved the stream time past the put" do
      strict = table_class.new(5)
      strict_session = VersionedTableHostileSpec::Session.new(strict)
      strict_session.call(:put, key(1), val("h1", 10), 10)
      hook.on_hash = -> { strict_session.call(:put, "b", val("b", 40), 40) }
      expect { strict_session.call(:put, key(1), val("h1", 12), 12) }.to raise_error(WindowMachines::LateEventError)
      expect_like(strict, replay(strict_session, on_late: :raise))
    end

    it "answers reads made from hash and eql? as of their own time, and completes the put" do
      reads = []
      hook.on_hash = lambda do
        reads << [session.call(:get, key(1)), session.call(:history, "a"), table.size]
        hook.on_eql = -> { reads << [session.call(:version, key(1), 10), table.each.to_a.size, table.version_count] }
      end
      outcome = attempt { session.call(:put, key(1), val("h1", 12), 12) }
      finish(outcome)
      expect(reads).to eq([["h1@10", [["a@10", 10, nil]], 2], [["h1@10", 10, nil], 2, 2]])
    end

    it "ends, filing or refusing the put, when hash changes the table every time it runs" do
      runs = 0
      hook.every_time = true
      hook.on_hash = lambda do
        runs += 1
        raise VersionedTableHostileSpec::RetriedForever if runs > 1_000

        session.call(:put, "b", val("b", 10 + runs), 10 + runs)
      end
      outcome = attempt { session.call(:put, key(1), val("h1", 12), 12) }
      hook.disarm
      finish(outcome)
    end

    it "ends, filing or refusing the put, when eql? changes the table every time it runs" do
      runs = 0
      hook.every_time = true
      hook.on_eql = lambda do
        runs += 1
        raise VersionedTableHostileSpec::RetriedForever if runs > 1_000

        session.call(:put, "b#{runs}", val("b#{runs}", 10), 10)
      end
      outcome = attempt { session.call(:put, key(1), val("h1", 12), 12) }
      hook.disarm
      finish(outcome)
      expect(runs).to be > 1
    end

    it "answers a delete as of the table it deletes from when eql? releases the key and another takes its place" do
      hook.on_eql = lambda do
        release(session, key(1), 20)
        session.call(:put, key(2), val("h2", 25), 25)
      end
      outcome = attempt { session.call(:delete, key(1), 26) }
      finish(outcome)
      expect(outcome.last).to be_nil if outcome.first == :ok
      expect(table.get(key(2))).to eq("h2@25")
    end

    it "never answers a get with another key's value when eql? releases the key and another takes its place" do
      hook.on_match = lambda do
        release(session, key(1), 20)
        session.call(:put, key(2), val("h2", 25), 25)
      end
      outcome = attempt { table.get(key(1)) }
      expect(outcome).to eq([:ok, "h1@10"]).or eq([:ok, nil]).or match([:raised, a_kind_of(RuntimeError)])
      outcome = attempt { table.version(key(1), 10) }
      expect(outcome).to eq([:ok, nil])
      finish([:ok, nil])
    end

    it "never answers history with another key's versions when hash releases the key and another takes its place" do
      session.call(:put, key(1), val("h1", 12), 12)
      hook.on_hash = lambda do
        release(session, key(1), 20)
        session.call(:put, key(2), val("h2", 25), 25)
      end
      outcome = attempt { table.history(key(1)) }
      expect(outcome).to eq([:ok, [["h1@10", 10, 12], ["h1@12", 12, nil]]]).or eq([:ok, []])
        .or match([:raised, a_kind_of(RuntimeError)])
      finish([:ok, nil])
    end
  end

  describe "a key whose hash or eql? raises" do
    let(:table) { table_class.new(5, on_late: :drop) }

    before do
      table.put(key(1), val("h1", 10), 10)
      table.put(key(2), val("h2", 11), 11)
      table.put("a", val("a", 11), 11)
    end

    {
      "put of a new key" => ->(table, k) { table.put(k.call(3), "h3@12", 12) },
      "put of a held key" => ->(table, k) { table.put(k.call(1), "h1@12", 12) },
      "put into history" => ->(table, k) { table.put(k.call(1), "h1@9", 9) },
      "late put" => ->(table, k) { table.put(k.call(1), "h1@1", 1) },
      "delete" => ->(table, k) { table.delete(k.call(1), 12) },
      "delete of a new key" => ->(table, k) { table.delete(k.call(3), 12) },
      "get" => ->(table, k) { table.get(k.call(1)) },
      "version" => ->(table, k) { table.version(k.call(1), 10) },
      "history" => ->(table, k) { table.history(k.call(2)) }
    }.each do |call_name, call|
      %i[on_hash on_eql on_match].each do |where|
        it "leaves the table as it was when #{where.to_s.delete_prefix('on_')} raises in #{call_name}" do
          before = frozen_state(table)
          hook.public_send(:"#{where}=", -> { raise IOError, "refused" })
          outcome = begin
            call.call(table, method(:key))
          rescue IOError => e
            e
          end
          fired = hook.public_send(where).nil?
          hook.disarm
          # on_match runs only for a held key; a late put may be refused
          # before any lookup.
          if fired
            expect(outcome).to be_a(IOError)
            expect(frozen_state(table).reject { |name, _| name == :late_count })
              .to eq(before.reject { |name, _| name == :late_count })
            late = before[:late_count]
            expect(table.late_count).to eq(late).or eq(call_name == "late put" ? late + 1 : late)
          else
            expect(outcome).not_to be_a(Exception)
          end
          expect_filed_rightly(table)
        end
      end
    end

    it "keeps a put that hash made before raising, and files nothing for the put that raised" do
      session = VersionedTableHostileSpec::Session.new(table_class.new(5, on_late: :drop))
      session.call(:put, key(1), val("h1", 10), 10)
      hook.on_hash = lambda do
        session.call(:put, "b", val("b", 12), 12)
        raise IOError, "refused"
      end
      expect { session.call(:put, key(1), val("h1", 13), 13) }.to raise_error(IOError, "refused")
      expect_like(session.table, replay(session))
    end

    it "files a key whose hash is a Bignum or negative, and refuses one whose hash is not an Integer, as a Hash does" do
      hashes = [2**100, -(2**100), -1, 2**64, -(2**63), 2**62, 1.5, "text", nil, :sym]
      hashes.each_with_index do |answer, n|
        weird = Object.new
        weird.define_singleton_method(:hash) { answer }
        expected = begin
          { weird => 1 }.fetch(weird)
          :ok
        rescue StandardError => e
          e.class
        end
        before = frozen_state(table)
        outcome = begin
          table.put(weird, "weird#{n}@20", 20)
          :ok
        rescue StandardError
          :raised
        end
        expect(outcome).to eq(expected == :ok ? :ok : :raised), "hash answering #{answer.inspect}"
        if outcome == :ok
          expect(table.get(weird)).to eq("weird#{n}@20")
        else
          expect(frozen_state(table)).to eq(before)
        end
      end
    end
  end

  describe "a key whose hash or eql? freezes the table" do
    let(:table) { table_class.new(5, on_late: :drop) }

    before do
      table.put(key(1), val("h1", 10), 10)
      table.put("a", val("a", 11), 11)
    end

    {
      "put of a new key" => ->(table, k) { table.put(k.call(3), "h3@12", 12) },
      "put of a held key" => ->(table, k) { table.put(k.call(1), "h1@12", 12) },
      "put into history" => ->(table, k) { table.put(k.call(1), "h1@9", 9) },
      "delete" => ->(table, k) { table.delete(k.call(1), 12) },
      "delete of a new key" => ->(table, k) { table.delete(k.call(3), 12) }
    }.each do |call_name, call|
      %i[on_hash on_eql on_match].each do |where|
        it "changes nothing after #{where.to_s.delete_prefix('on_')} freezes it in #{call_name}" do
          at_freeze = nil
          hook.public_send(:"#{where}=", lambda do
            table.freeze
            at_freeze = frozen_state(table)
          end)
          outcome = attempt { call.call(table, method(:key)) }
          hook.disarm
          next expect(outcome.first).to eq(:ok) if at_freeze.nil? # the hook never ran: on_match for a new key

          expect(outcome.first).to eq(:raised)
          expect(outcome.last).to be_a(FrozenError)
          expect_unchangeable(table, at_freeze)
          expect(table.get(key(1))).to eq("h1@10")
          expect_filed_rightly(table)
        end
      end
    end

    it "keeps a put that hash made before freezing, and changes nothing afterwards" do
      at_freeze = nil
      hook.on_hash = lambda do
        table.put("b", "b@12", 12)
        table.freeze
        at_freeze = frozen_state(table)
      end
      expect_frozen_error(table) { table.put(key(1), "h1@13", 13) }
      expect_unchangeable(table, at_freeze)
      expect(table.get("b")).to eq("b@12")
      expect(table.history(key(1))).to eq([["h1@10", 10, nil]])
    end

    it "answers reads on a table that hash froze" do
      hook.on_hash = -> { table.freeze }
      expect(table.get(key(1))).to eq("h1@10")
      expect(table).to be_frozen
    end
  end

  describe "a key whose eql? switches Fiber or Thread" do
    let(:table) { table_class.new(5, on_late: :drop) }
    let(:session) { VersionedTableHostileSpec::Session.new(table) }

    before { session.call(:put, key(1), val("h1", 10), 10) }

    it "files nothing under another key when eql? yields to a Fiber that releases the key and fills its place" do
      hook.on_eql = -> { Fiber.yield :suspended }
      putting = Fiber.new { attempt { session.call(:put, key(1), val("h1", 30), 30) } }
      expect(putting.resume).to eq(:suspended)
      release(session, key(1), 20)
      session.call(:put, key(2), val("h2", 25), 25)
      outcome = putting.resume
      expect(putting).not_to be_alive
      expect(outcome.first).to eq(:ok).or eq(:raised)
      expect_like(table, replay(session))
      expect_filed_rightly(table)
    end

    it "files both puts of one key made by two Fibers, one suspended in eql? meanwhile" do
      hook.on_eql = -> { Fiber.yield :suspended }
      putting = Fiber.new { attempt { session.call(:put, key(1), val("h1", 12), 12) } }
      expect(putting.resume).to eq(:suspended)
      session.call(:put, key(1), val("h1", 14), 14)
      outcome = putting.resume
      expect(outcome).to eq([:ok, 14])
      expect_like(table, replay(session))
    end

    it "changes nothing when eql? yields to a Fiber that freezes the table" do
      hook.on_eql = -> { Fiber.yield :suspended }
      putting = Fiber.new { attempt { table.put(key(1), val("h1", 12), 12) } }
      expect(putting.resume).to eq(:suspended)
      table.freeze
      at_freeze = frozen_state(table)
      outcome = putting.resume
      expect(outcome.first).to eq(:raised)
      expect(outcome.last).to be_a(FrozenError)
      expect_unchangeable(table, at_freeze)
    end

    it "files nothing under another key when eql? blocks while another Thread releases the key and fills its place" do
      reached = Queue.new
      proceed = Queue.new
      hook.on_eql = lambda do
        reached << true
        proceed.pop
      end
      putting = Thread.new { attempt { session.call(:put, key(1), val("h1", 30), 30) } }
      reached.pop
      release(session, key(1), 20)
      session.call(:put, key(2), val("h2", 25), 25)
      proceed << true
      expect(putting.value.first).to eq(:ok).or eq(:raised)
      expect_like(table, replay(session))
      expect_filed_rightly(table)
    end
  end

  describe "a key whose hash copies, restores or compacts the table" do
    it "leaves a dup made from hash as the table was before the put" do
      table = table_class.new(5)
      table.put("a", "a@10", 10)
      before = frozen_state(table)
      copies = []
      hook.on_hash = -> { copies << table.dup << table.clone(freeze: true) }
      expect(table.put(key(1), "h1@11", 11)).to be_nil
      expect(copies.map { |copy| frozen_state(copy).merge(frozen: copy.frozen?) })
        .to eq([before.merge(frozen: false), before.merge(frozen: true)])
      expect(table.get(key(1))).to eq("h1@11")
      expect(copies.first.get(key(1))).to be_nil
    end

    it "files the put into the state hash swapped in with marshal_load, compacting meanwhile" do
      other = table_class.new(5)
      other.put("x", "x@50", 50)
      other.put(key(7), "h7@50", 50)
      checkpoint = other.marshal_dump
      table = table_class.new(5)
      table.put("a", "a@10", 10)
      swapped = nil
      hook.on_hash = lambda do
        swapped = begin
          table.marshal_load(checkpoint)
          true
        rescue StandardError => e
          e
        end
        GC.start
        GC.compact if GC.respond_to?(:compact)
      end
      outcome = attempt { table.put(key(1), "h1@48", 48) }
      hook.disarm
      expect(outcome.first).to eq(:ok).or eq(:raised)
      if swapped == true
        expect(table.get("a")).to be_nil
        expect(table.get("x")).to eq("x@50")
        expect(table.get(key(7))).to eq("h7@50")
        expect(table.get(key(1))).to eq(outcome.first == :ok ? "h1@48" : nil)
      else
        expect(table.get("a")).to eq("a@10")
        expect(table.get(key(1))).to eq(outcome.first == :ok ? "h1@48" : nil)
      end
      expect_filed_rightly(table)
    end

    it "files the put into the state hash made by calling initialize again, or refuses it there" do
      table = table_class.new(5)
      table.put(key(1), "h1@10", 10)
      hook.on_hash = lambda do
        table.send(:initialize, 100, on_late: :drop)
        GC.compact if GC.respond_to?(:compact)
      end
      expect(table.put(key(1), "h1@3", 3)).to be_nil
      expect(table.history_retention).to eq(100)
      expect(table.each.map { |held, *rest| [held.id, *rest] }).to eq([[1, "h1@3", 3, nil]])
      late = table_class.new(1)
      late.put(key(9), "h9@500", 500)
      hook.on_hash = -> { table.send(:initialize_copy, late) }
      expect { table.put(key(1), "h1@4", 4) }.to raise_error(WindowMachines::LateEventError)
      expect(table.each.map { |held, *rest| [held.id, *rest] }).to eq([[9, "h9@500", 500, nil]])
      expect(table.late_count).to eq(1)
    end

    it "keeps values only it references when hash runs the GC and compacts" do
      table = table_class.new(100)
      hook.every_time = true
      hook.on_hash = lambda do
        GC.start
        GC.compact if GC.respond_to?(:compact)
      end
      3.times { |n| table.put(key(n), ["h#{n}@#{n}", +"fresh-#{n}", { n => [n.to_s] }], n) }
      hook.disarm
      GC.compact if GC.respond_to?(:compact)
      3.times do |n|
        expect(table.get(key(n))).to eq(["h#{n}@#{n}", "fresh-#{n}", { n => [n.to_s] }])
      end
    end
  end

  describe "an on_late callable" do
    def table_with(on_late, retention: 5)
      table = table_class.new(retention, on_late: on_late)
      [table, VersionedTableHostileSpec::Session.new(table)]
    end

    it "is called with the key, value, timestamp and stream time, and a put it makes is filed" do
      calls = []
      session = nil
      on_late = lambda do |*args|
        calls << args
        session.call(:put, "redirected", val("redirected", args[3]), args[3])
      end
      table, session = table_with(on_late)
      session.call(:put, "a", val("a", 20), 20)
      expect(session.call(:put, "a", val("a", 3), 3)).to be(false)
      expect(session.call(:delete, "a", 4)).to be_nil
      expect(calls).to eq([["a", "a@3", 3, 20], ["a", nil, 4, 20]])
      # The model's callable does nothing: the put the table's callable made
      # is in the session's log, replayed before the late call it came from.
      expect_like(table, replay(session, on_late: ->(*) {}))
      expect(table.late_count).to eq(2)
    end

    it "files the late key at the stream time when the callable puts it there" do
      session = nil
      on_late = ->(key, value, _ts, now) { session.call(:put, key, value.sub(/@\d+/, "@#{now}"), now) }
      table, session = table_with(on_late)
      session.call(:put, key(1), val("h1", 20), 20)
      expect(session.call(:put, key(1), val("h1", 2), 2)).to be(false)
      expect_like(table, replay(session, on_late: ->(*) {}))
      expect(table.history(key(1))).to eq([["h1@20", 20, nil]])
      expect_filed_rightly(table)
    end

    it "releases the late key when the callable deletes it and moves the stream time" do
      session = nil
      on_late = ->(key, *) { release(session, key, 20) }
      table, session = table_with(on_late)
      session.call(:put, key(1), val("h1", 20), 20)
      session.call(:put, key(2), val("h2", 20), 20)
      expect(session.call(:put, key(1), val("h1", 2), 2)).to be(false)
      expect_like(table, replay(session, on_late: ->(*) {}))
      expect(table.get(key(1))).to be_nil
      expect(table.get(key(2))).to eq("h2@20")
      expect(table.size).to eq(2)
    end

    it "counts each late put when the callable makes another late put" do
      depth = 0
      table = nil
      on_late = lambda do |key, _value, ts, _now|
        depth += 1
        table.put(key, val("nested", ts - 1), ts - 1) if depth < 3
      end
      table = table_class.new(5, on_late: on_late)
      table.put("a", val("a", 20), 20)
      before = frozen_state(table)
      expect(table.put("a", val("a", 5), 5)).to be(false)
      expect(depth).to eq(3)
      expect(frozen_state(table)).to eq(before.merge(late_count: 3))
    end

    it "lets the callable's error through, counting the late event and changing nothing else" do
      table, = table_with(->(*) { raise IOError, "late!" })
      table.put("a", val("a", 20), 20)
      before = frozen_state(table)
      expect { table.put("a", val("a", 2), 2) }.to raise_error(IOError, "late!")
      expect { table.delete("a", 2) }.to raise_error(IOError, "late!")
      expect(frozen_state(table)).to eq(before.merge(late_count: 2))
      expect(table.get("a")).to eq("a@20")
    end

    it "keeps a put the callable made before raising" do
      session = nil
      on_late = lambda do |*|
        session.call(:put, "b", val("b", 21), 21)
        raise IOError, "late!"
      end
      table, session = table_with(on_late)
      session.call(:put, "a", val("a", 20), 20)
      expect { table.put("a", val("a", 2), 2) }.to raise_error(IOError, "late!")
      model = replay(session)
      model.put("a", "a@2", 2) # the late event the error came out of: counted
      expect_like(table, model)
    end

    %i[put delete].each do |operation|
      it "changes nothing after the callable freezes the table in a late #{operation}" do
        at_freeze = nil
        table = nil
        on_late = lambda do |*|
          table.freeze
          at_freeze = frozen_state(table)
        end
        table = table_class.new(5, on_late: on_late)
        table.put("a", val("a", 20), 20)
        outcome = attempt { operation == :put ? table.put("a", val("a", 2), 2) : table.delete("a", 2) }
        expect(at_freeze).not_to be_nil
        expect(outcome).to eq([:ok, operation == :put ? false : nil])
          .or match([:raised, an_instance_of(FrozenError)])
        expect_unchangeable(table, at_freeze)
        expect(table.late_count).to eq(1)
      end
    end

    it "refuses the late put when the callable swaps the whole state with marshal_load" do
      swapped = table_class.new(1, on_late: :drop)
      swapped.put("s", "s@1000", 1_000)
      table = nil
      table = table_class.new(5, on_late: lambda do |*|
        table.marshal_load(swapped.marshal_dump)
        GC.compact if GC.respond_to?(:compact)
      end)
      table.put("a", "a@100", 100)
      expect(table.put("a", "a@2", 2)).to be(false)
      expect(frozen_state(table)).to eq(frozen_state(swapped))
      expect(table.put("b", "b@3", 3)).to be(false) # now :drop
      expect(table.late_count).to eq(1)
    end

    it "finishes a late put whose callable yields to a Fiber that moves the stream time on" do
      on_late = ->(*) { Fiber.yield :suspended }
      table, session = table_with(on_late)
      session.call(:put, "a", val("a", 20), 20)
      putting = Fiber.new { session.call(:put, "a", val("a", 2), 2) }
      expect(putting.resume).to eq(:suspended)
      session.call(:put, "a", val("a", 40), 40)
      expect(putting.resume).to be(false)
      model = replay(session, on_late: ->(*) {})
      expect_like(table, model)
      expect(table.late_count).to eq(1)
    end
  end

  describe "each's block" do
    it "yields only what is filed under each key, however the block changes the table" do
      table = table_class.new(5, on_late: :drop)
      10.times { |n| table.put("k#{n}", val("k#{n}", 10), 10) }
      seen = []
      outcome = attempt do
        table.each do |key, value, from, to|
          seen << [key, value, from, to]
          table.delete(key, 11)
          table.put("new#{seen.size}", val("new#{seen.size}", 12), 12)
          table.put("k0", val("k0", 13), 13)
        end
      end
      expect(outcome.first).to eq(:ok).or eq(:raised)
      expect(seen).not_to be_empty
      seen.each { |key, value, *| expect(value).to start_with("#{key}@") }
      expect_filed_rightly(table)
    end

    it "stops changing the table once the block freezes it" do
      table = table_class.new(5)
      3.times { |n| table.put("k#{n}", val("k#{n}", 10), 10) }
      at_freeze = nil
      outcome = attempt do
        table.each do |key, *|
          table.freeze if at_freeze.nil?
          at_freeze ||= frozen_state(table)
          table.put(key, "#{key}@12", 12)
        end
      end
      expect(outcome.first).to eq(:raised)
      expect_unchangeable(table, at_freeze)
    end
  end

  describe "values" do
    let(:traps) { Array.new(6) { |n| VersionedTableHostileSpec::TrapValue.new(:"trap#{n}") } }
    let(:basic) { VersionedTableHostileSpec::BasicTrap.new(:basic) }

    def armed
      VersionedTableHostileSpec::Calls.armed = true
      yield
    ensure
      VersionedTableHostileSpec::Calls.armed = false
    end

    it "never calls a method on a value, whatever the table is asked" do
      late = []
      table = table_class.new(10, on_late: ->(*args) { late << args })
      answers = armed do
        table.put("a", traps[0], 10)
        table.put("a", traps[1], 12)
        table.put("a", traps[2], 11)
        table.put(%w[b c], basic, 12)
        table.put("d", traps[3], 12)
        table.put("d", traps[4], 12) # replaces
        table.put("late", traps[5], 1)
        copy = table.dup
        copy.put("e", traps[0], 13)
        frozen = table.clone.freeze
        restored = table_class.from_h(table_class.new(10).tap { |plain| plain.put("a", traps[0], 10) }.to_h)
        # What Marshal.load does, without Marshal asking the values anything.
        loaded = table_class.send(:allocate).tap { |fresh| fresh.marshal_load(table.marshal_dump.merge(on_late: :drop)) }
        [table.get("a"), table.get("a", 11), table.version("a", 10), table.history("a"), table.get(%w[b c]),
         table.each.to_a, table.to_a, table.to_h, table.marshal_dump, table.delete("d", 13), table.delete("a", 12),
         frozen.size, frozen.version_count, copy.get("e"), restored.get("a"), loaded.get(%w[b c]),
         table.size, table.version_count]
      end
      expect(VersionedTableHostileSpec::Calls.log).to eq([])
      expect(answers[0]).to be(traps[1])
      expect(answers[1]).to be(traps[2])
      expect(answers[2].first).to be(traps[0])
      expect(answers[3].map(&:first).map(&:__id__)).to eq([traps[0], traps[2], traps[1]].map(&:__id__))
      expect(answers[4].__id__).to eq(basic.__id__)
      expect(answers[9].first).to be(traps[4])
      expect(answers[10].first).to be(traps[1])
      expect([answers[13], answers[14]]).to all(be(traps[0]))
      expect(answers[15].__id__).to eq(basic.__id__)
      expect(late.map { |key, value, ts, now| [key, value.__id__, ts, now] }).to eq([["late", traps[5].__id__, 1, 12]])
    end

    it "holds nil, false, the table itself and mutable objects as they are" do
      table = table_class.new(10)
      mutable = +"mutable"
      list = [1, 2]
      table.put("nil", nil, 1)
      table.put("false", false, 1)
      table.put("self", table, 1)
      table.put("mutable", mutable, 1)
      table.put("list", list, 1)
      mutable << "!"
      list << 3
      expect(table.version("nil")).to eq([nil, 1, nil])
      expect(table.version("false")).to eq([false, 1, nil])
      expect(table.get("self")).to be(table)
      expect(table.get("mutable")).to be(mutable)
      expect(table.get("mutable")).to eq("mutable!")
      expect(table.get("mutable")).not_to be_frozen
      expect(table.get("list")).to eq([1, 2, 3])
      expect(table.history("self").map { |value, *rest| [value.equal?(table), *rest] }).to eq([[true, 1, nil]])
      expect(table.dup.get("self")).to be(table)
      expect(table.size).to eq(5)
      expect(table.each.map { |key, value, *| [key, value.equal?(table) ? :self : value] })
        .to eq([["nil", nil], ["false", false], ["self", :self], ["mutable", "mutable!"], ["list", [1, 2, 3]]])
      expect(table.delete("nil", 2)).to eq([nil, 1, nil])
      expect(table.get("nil", 1)).to be_nil
      expect(table.version("nil", 1)).to eq([nil, 1, 2])
    end

    it "keeps values whose ==, hash and inspect raise" do
      hostile = Object.new
      %i[== eql? hash inspect to_s frozen? dup clone respond_to?].each do |name|
        hostile.define_singleton_method(name) { |*| raise IOError, "#{name} called" }
      end
      later = +"later"
      table = table_class.new(10)
      table.put("h", hostile, 1)
      table.put("h", later, 3)
      expect(table.get("h", 2)).to be(hostile)
      expect(table.delete("h", 2).first).to be(hostile)
      expect(table.history("h").map { |value, *rest| [value.__id__, *rest] }).to eq([[hostile.__id__, 1, 2], [later.__id__, 3, nil]])
      expect(table.dup.get("h", 1)).to be(hostile)
      expect(table.each.map { |_key, value, *| value.__id__ }).to eq([hostile.__id__, later.__id__])
    end
  end

  describe "keys sharing one hash value" do
    it "finds each of 4,000 keys, keeps their versions apart and releases them" do
      colliding = VersionedTableHostileSpec::CollidingKey
      table = table_class.new(10)
      4_000.times { |n| table.put(colliding.new(n), n, 100) }
      expect([table.size, table.version_count]).to eq([4_000, 4_000])
      found = Array.new(4_000) { |n| table.get(colliding.new(n)) }
      expect(found).to eq(Array.new(4_000) { |n| n })
      # Every tenth key gets a second version; odd keys are deleted.
      (0...4_000).step(10) { |n| expect(table.put(colliding.new(n), -n, 105)).to be_nil }
      (1...4_000).step(2) { |n| expect(table.delete(colliding.new(n), 106)).to eq([n, 100, nil]) }
      table.put("clock", :clock, 116) # the cutoff reaches 106: the odd keys go
      expect(table.size).to eq(2_001)
      expect(table.version_count).to eq(2_001)
      # New colliding keys, maybe in the places the odd ones left.
      500.times { |n| expect(table.put(colliding.new(10_000 + n), 10_000 + n, 116)).to be_nil }
      expect(table.size).to eq(2_501)
      wrong = (0...4_000).step(7).reject do |n|
        expected = if n.odd? then nil
                   elsif (n % 10).zero? then -n
                   else n
                   end
        table.get(colliding.new(n)) == expected
      end
      expect(wrong).to eq([])
      expect(Array.new(500) { |n| table.get(colliding.new(10_000 + n)) }).to eq(Array.new(500) { |n| 10_000 + n })
      expect(table.history(colliding.new(10))).to eq([[-10, 105, nil]])
      expect(table.each.count).to eq(2_501)
    end
  end

  describe "memory and version counts under churn" do
    it "takes no more memory after 1,000,000 cycles of put, delete and expiry of the same few keys" do
      sizes = Array.new(10) { |n| table_class.new(3).tap { |t| (n * 1_000).times { |k| t.put(k, k, 0) } } }
      expect(ObjectSpace.memsize_of(sizes.last)).to be > ObjectSpace.memsize_of(sizes.first) + (9_000 * 8)

      churned = run_fixture("versioned_table_churn.rb")
      expect(churned[:wrong]).to eq([])
      samples = churned[:samples]
      early_memory, early_size, early_count = samples.fetch(2_000)
      late_memory, late_size, late_count = samples.fetch(902_000)
      expect([late_size, late_count]).to eq([early_size, early_count])
      expect([late_size, late_count]).to eq([3, 5]) # the resident, and the last two keys' put and tombstone
      expect(late_memory).to be <= early_memory + 256
      expect(samples.values.map(&:first).max).to be <= early_memory + 256
      expect(churned[:final_memory]).to be <= early_memory + 256
      expect(churned[:after_resident]).to eq(
        [1, 2, [["resident@0", 0, 3_000_000], ["resident@end", 3_000_000, nil]]]
      )
    end

    it "holds a bounded number of versions, exactly those the model holds, over 11 retentions of a steady stream" do
      rng = Random.new(RSpec.configuration.seed)
      retention = 1_000
      table = table_class.new(retention, on_late: :drop)
      model = VersionedTableHostileSpec.model(retention)
      keys = Array.new(50) { |n| "key-#{n}" }
      counts = []
      memory = {}
      mismatches = []
      (0...11_000).each do |now|
        name = keys[now % 50]
        table.put(name, now, now)
        model.put(name, now, now)
        if (now % 7).zero?
          back = [now - rng.rand(0..retention + 20), 0].max # now and then too old: refused
          other = keys.sample(random: rng)
          mismatches << [now, :put] unless table.put(other, -back, back) == model.put(other, -back, back)
        end
        if (now % 13).zero?
          other = keys.sample(random: rng)
          mismatches << [now, :delete] unless table.delete(other, now) == model.delete(other, now)
        end
        next unless (now % 100) == 99

        counts << table.version_count
        mismatches << [now, :count, table.version_count, model.version_count] unless table.version_count == model.version_count
        memory[now / 1_000] = ObjectSpace.memsize_of(table) if (now % 1_000) == 999
      end
      expect(mismatches.first(5)).to eq([])
      expect(counts.max).to be <= 1_400
      expect(memory.fetch(10)).to be <= memory.fetch(2) * 1.25
      expect_like(table, model)
    end

    it "files every value under its own key through 20,000 random calls with releases, collisions and late events" do
      rng = Random.new(RSpec.configuration.seed + 1)
      colliding = VersionedTableHostileSpec::CollidingKey
      keys = ["a", "b", +"c", :a, 1, 1.0, 2**70, [1, "a"], [1.0, "a"], nil, 0.0] + Array.new(8) { |n| colliding.new(n) }
      table = table_class.new(20, on_late: :drop)
      model = VersionedTableHostileSpec.model(20)
      mismatches = []
      now = 0
      20_000.times do |step|
        key = keys.sample(random: rng)
        ts = [now - rng.rand(-3..24), 0].max
        call = case rng.rand(10)
               when 0..4 then [:put, key, [key, ts, step], ts]
               when 5..6 then [:delete, key, ts]
               when 7 then [:get, key, *[ts].first(rng.rand(2))]
               when 8 then [:version, key, *[ts].first(rng.rand(2))]
               else [:history, key]
               end
        got = table.public_send(*call)
        expected = model.public_send(*call)
        mismatches << [step, call, got, expected] unless got == expected
        now = model.stream_time || 0
        next unless (step % 500) == 499

        mismatches << [step, :size] unless [table.size, table.version_count] == [model.size, model.version_count]
      end
      expect(mismatches.first(3)).to eq([])
      expect_like(table, model)
    end
  end
end
