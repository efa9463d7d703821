# frozen_string_literal: true

require "json"

module VersionedTableSpec
  # Equal to a plain String of the same bytes, as a Hash key; named, so that
  # Marshal can write it.
  class SubString < String; end
end

RSpec.describe WindowMachines::VersionedTable do
  max = WindowMachinesSpec::MAX

  subject(:table) { described_class.new(10) }

  # A table holding `changes`: [key, value, timestamp] puts and [key,
  # timestamp] deletes, in order.
  def table_with(retention, *changes, on_late: :raise)
    described_class.new(retention, on_late: on_late).tap do |table|
      changes.each { |change| change.size == 3 ? table.put(*change) : table.delete(*change) }
    end
  end

  def counts(table)
    { size: table.size, version_count: table.version_count, stream_time: table.stream_time,
      late_count: table.late_count }
  end

  describe ".new" do
    it "starts empty, with no stream time" do
      expect(table.history_retention).to eq(10)
      expect(counts(table)).to eq(size: 0, version_count: 0, stream_time: nil, late_count: 0)
      expect(table.get("a")).to be_nil
      expect(table.version("a", 5)).to be_nil
      expect(table.history("a")).to eq([])
      expect(table.to_a).to eq([])
    end

    it "takes a retention from 0 to 2**64-1 and on_late :raise, :drop or anything that responds to call" do
      expect(described_class.new(0).history_retention).to eq(0)
      expect(described_class.new(max).history_retention).to eq(max)
      [:raise, :drop, proc {}, ->(*) {}, method(:puts), Class.new { def call(*) = nil }.new].each do |on_late|
        expect(described_class.new(1, on_late: on_late).size).to eq(0)
      end
    end
  end

  describe "#put" do
    it "returns nil for a new latest version and moves the stream time to the largest timestamp" do
      expect(table.put("a", 1, 100)).to be_nil
      expect(table.put("a", 2, 105)).to be_nil
      expect(table.put("b", 1, 103)).to be_nil # b's latest, though not the stream's
      expect(table.stream_time).to eq(105)
      expect(table.history("a")).to eq([[1, 100, 105], [2, 105, nil]])
    end

    it "returns valid_to, the next newer version's timestamp, for a version that went into history" do
      table.put("a", :new, 110)
      table.put("a", :newest, 118)
      expect(table.put("a", :old, 109)).to eq(110)
      expect(table.put("a", :middle, 115)).to eq(118)
      expect(table.history("a")).to eq([[:old, 109, 110], [:new, 110, 115], [:middle, 115, 118], [:newest, 118, nil]])
      expect(table.stream_time).to eq(118)
    end

    it "counts a tombstone as the next newer version" do
      table.put("a", 1, 100)
      table.delete("a", 108)
      expect(table.put("a", 0, 104)).to eq(108)
      expect(table.history("a")).to eq([[1, 100, 104], [0, 104, 108]])
    end

    it "replaces the version (or tombstone) at the same timestamp" do
      table.put("a", 1, 100)
      table.put("a", 2, 110)
      expect(table.put("a", 22, 110)).to be_nil
      expect(table.put("a", 11, 100)).to eq(110)
      expect(table.history("a")).to eq([[11, 100, 110], [22, 110, nil]])
      expect(table.version_count).to eq(2)
      table.delete("a", 105)
      expect(table.put("a", 5, 105)).to eq(110)
      expect(table.history("a")).to eq([[11, 100, 105], [5, 105, 110], [22, 110, nil]])
      expect(table.version_count).to eq(3)
    end

    it "stores nil as a value like any other" do
      table.put("a", 1, 100)
      expect(table.put("a", nil, 105)).to be_nil
      expect(table.get("a")).to be_nil
      expect(table.version("a")).to eq([nil, 105, nil])
      expect(table.history("a")).to eq([[1, 100, 105], [nil, 105, nil]])
      expect(table.to_h[:versions]).to eq([["a", 100, 1], ["a", 105, nil]])
    end

    it "accepts a timestamp exactly stream_time - history_retention old" do
      table.put("a", 1, 100)
      expect(table.put("b", 1, 90)).to be_nil
      expect(table.put("a", 0, 90)).to eq(100)
      expect(table.late_count).to eq(0)
    end
  end

  describe "late changes" do
    it "refuses one older than stream_time - history_retention with LateEventError, counted, changing nothing else" do
      table.put("a", 1, 100)
      before = table.marshal_dump
      message = "late event: timestamp 89 is at or below the watermark 89"
      expect { table.put("a", 0, 89) }.to raise_error(WindowMachines::LateEventError, message) { |error|
        expect([error.timestamp, error.watermark, error.key]).to eq([89, 89, "a"])
        expect(error).to be_a(WindowMachines::Error)
        expect(error).to be_an(ArgumentError)
      }
      expect { table.delete(:b, 3) }.to raise_error(WindowMachines::LateEventError,
                                                    "late event: timestamp 3 is at or below the watermark 89") { |error|
        expect([error.timestamp, error.watermark, error.key]).to eq([3, 89, :b])
      }
      expect(table.late_count).to eq(2)
      expect(table.marshal_dump).to eq(before.merge(late_count: 2))
    end

    it "takes nothing as late before the first change, nor while the cutoff saturates at 0" do
      big = described_class.new(1_000)
      expect(big.put("a", 1, 500)).to be_nil
      expect(big.put("a", 0, 0)).to eq(500)
      expect(big.late_count).to eq(0)
      expect(described_class.new(0).put("a", 1, 0)).to be_nil
    end

    it "drops them under on_late: :drop: put returns false, delete nil" do
      dropping = table_with(10, ["a", 1, 100], on_late: :drop)
      before = dropping.marshal_dump
      expect(dropping.put("a", 0, 89)).to be(false)
      expect(dropping.delete("a", 50)).to be_nil
      expect(dropping.late_count).to eq(2)
      expect(dropping.marshal_dump).to eq(before.merge(late_count: 2))
    end

    it "hands them to a callable as (key, value, timestamp, stream_time), value nil for a delete" do
      calls = []
      calling = table_with(10, ["a", 1, 100], on_late: ->(*args) { calls << args })
      expect(calling.put("a", :x, 89)).to be(false)
      expect(calling.delete("b", 7)).to be_nil
      expect(calls).to eq([["a", :x, 89, 100], ["b", nil, 7, 100]])
      expect(calling.late_count).to eq(2)
      expect(calling.history("a")).to eq([[1, 100, nil]])
      expect(calling.size).to eq(1)
    end

    it "ignores what the callable returns" do
      calling = table_with(0, ["a", 1, 100], on_late: ->(*) { true })
      expect(calling.put("a", 2, 99)).to be(false)
      expect(calling.delete("a", 99)).to be_nil
    end
  end

  describe "#delete" do
    before do
      table.put("a", :one, 104)
      table.put("a", :two, 110)
    end

    it "returns the version valid at the timestamp, as version answered before the delete" do
      expect(table.delete("a", 105)).to eq([:one, 104, 110])
      expect(table.get("a", 105)).to be_nil
      expect(table.get("a", 104)).to eq(:one)
      expect(table.get("a", 110)).to eq(:two)
      expect(table.history("a")).to eq([[:one, 104, 105], [:two, 110, nil]])
      expect(table.version_count).to eq(3)
    end

    it "turns the latest value into a tombstone" do
      expect(table.delete("a", 112)).to eq([:two, 110, nil])
      expect(table.get("a")).to be_nil
      expect(table.version("a")).to be_nil
      expect(table.get("a", 111)).to eq(:two)
      expect(table.stream_time).to eq(112)
    end

    it "replaces a version at the same timestamp" do
      expect(table.delete("a", 110)).to eq([:two, 110, nil])
      expect(table.history("a")).to eq([[:one, 104, 110]])
      expect(table.version_count).to eq(2)
    end

    it "returns nil when there was no value: before the first version, at a tombstone, for an unknown key" do
      expect(table.delete("a", 101)).to be_nil
      expect(table.delete("a", 104)).to eq([:one, 104, 110])
      expect(table.delete("a", 106)).to be_nil
      expect(table.delete("nobody", 106)).to be_nil
    end

    it "holds a key with only a tombstone until the tombstone expires" do
      expect(table.delete("b", 111)).to be_nil
      expect([table.size, table.version_count]).to eq([2, 3])
      expect(table.history("b")).to eq([])
      expect(table.get("b", 111)).to be_nil
      expect(table.put("b", :early, 105)).to eq(111)
      expect(table.history("b")).to eq([[:early, 105, 111]])
    end
  end

  describe "#get and #version" do
    subject(:table) { described_class.new(100) }

    before do
      table.put("a", :one, 100)
      table.put("a", :two, 110)
      table.put("a", :three, 120)
    end

    it "answer with the latest version for a nil timestamp, as for none" do
      expect([table.get("a", nil), table.version("a", nil)]).to eq([:three, [:three, 120, nil]])
      expect(table.version("a", nil)).to eq(table.version("a"))
    end

    it "answer with the version of the largest timestamp at or before the one asked for" do
      expect([99, 100, 109, 110, 119, 120, max].map { |at| table.get("a", at) })
        .to eq([nil, :one, :one, :two, :two, :three, :three])
      expect(table.version("a", 115)).to eq([:two, 110, 120])
      expect(table.version("a", 120)).to eq([:three, 120, nil])
    end

    it "answer with the latest version without a timestamp" do
      expect(table.get("a")).to eq(:three)
      expect(table.version("a")).to eq([:three, 120, nil])
      expect(table.get("nobody")).to be_nil
      expect(table.version("nobody")).to be_nil
    end

    it "answer below the cutoff only with the latest version, when it is at or before the timestamp" do
      short = table_with(10, ["b", :old, 0], ["a", :one, 100], ["a", :two, 110], ["c", :latest, 115]) # cutoff 105
      expect(short.history("a")).to eq([[:one, 100, 110], [:two, 110, nil]])
      expect(short.get("a", 104)).to be_nil # :one is held, but 104 is below the cutoff
      expect(short.version("a", 104)).to be_nil
      expect(short.version("a", 105)).to eq([:one, 100, 110])
      expect(short.get("a", 112)).to eq(:two)
      expect(short.get("b", 3)).to eq(:old)
      expect(short.version("b", 3)).to eq([:old, 0, nil])
      expect(short.get("b", 0)).to eq(:old)
      expect(short.get("c", 104)).to be_nil
    end

    it "see nothing where the key's version is a tombstone" do
      table.delete("a", 115)
      expect(table.get("a", 115)).to be_nil
      expect(table.version("a", 117)).to be_nil
      expect(table.get("a", 120)).to eq(:three)
    end
  end

  describe "expiry" do
    it "drops a version once its valid_to is at or below stream_time - history_retention" do
      table.put("a", :one, 100)
      table.put("a", :two, 110)
      table.put("x", 0, 119) # cutoff 109: :one is still reachable at 109
      expect(table.history("a")).to eq([[:one, 100, 110], [:two, 110, nil]])
      table.put("x", 0, 120) # cutoff 110
      expect(table.history("a")).to eq([[:two, 110, nil]])
      expect(table.version_count).to eq(3)
    end

    it "drops an older version when an out-of-order put ends it at the cutoff" do
      table.put("a", :one, 100)
      table.put("a", :three, 130)
      expect(table.version_count).to eq(2)
      expect(table.put("a", :two, 120)).to eq(130) # cutoff 120
      expect(table.history("a")).to eq([[:two, 120, 130], [:three, 130, nil]])
    end

    it "keeps the latest value forever" do
      table.put("a", :only, 5)
      table.put("b", 1, max)
      expect(table.history("a")).to eq([[:only, 5, nil]])
      expect(table.get("a", 6)).to eq(:only)
      expect(table.size).to eq(2)
    end

    it "drops a latest tombstone at or below the cutoff, with the versions before it, and releases the key" do
      table.put("a", :one, 100)
      table.delete("a", 105)
      table.put("x", 0, 114)
      expect([table.size, table.version_count]).to eq([2, 3])
      table.put("x", 0, 115) # cutoff 105
      expect([table.size, table.version_count]).to eq([1, 2])
      expect(table.history("a")).to eq([])
      expect(table.to_h[:versions]).to eq([["x", 114, 0], ["x", 115, 0]])
    end

    it "drops a tombstone written exactly at the cutoff at once" do
      table.put("a", :one, 100)
      table.put("x", 0, 120)
      expect(table.delete("a", 110)).to eq([:one, 100, nil])
      expect([table.size, table.version_count]).to eq([1, 1])
      expect(table.get("a", 115)).to be_nil
    end

    it "releases a key and holds it again as the newest when it comes back" do
      table.put("a", 1, 100)
      table.put("b", 1, 101)
      table.delete("a", 102)
      table.put("x", 1, 112)
      expect(table.map { |key, *| key }).to eq(%w[b x])
      table.put("a", 2, 113)
      expect(table.map { |key, *| key }).to eq(%w[b x a])
    end
  end

  describe "a zero retention" do
    subject(:table) { described_class.new(0, on_late: :drop) }

    it "keeps only the latest version of each key and drops changes older than the stream time" do
      table.put("a", 1, 10)
      table.put("a", 2, 20)
      expect(table.history("a")).to eq([[2, 20, nil]])
      expect(table.put("a", 3, 19)).to be(false)
      expect(table.put("b", 3, 20)).to be_nil
      expect(table.put("a", 4, 20)).to be_nil
      expect(table.get("a", 19)).to be_nil
      expect(table.get("a", 20)).to eq(4)
      expect([table.version_count, table.late_count]).to eq([2, 1])
    end

    it "releases a key deleted at the stream time" do
      table.put("a", 1, 10)
      expect(table.delete("a", 10)).to eq([1, 10, nil])
      expect([table.size, table.version_count]).to eq([0, 0])
    end
  end

  describe "keys" do
    it "match as Hash keys do: String subclasses equal Strings, 1 and 1.0 differ" do
      table.put("k", :plain, 1)
      expect(table.get(VersionedTableSpec::SubString.new("k"))).to eq(:plain)
      expect(table.put(VersionedTableSpec::SubString.new("k"), :sub, 2)).to be_nil
      expect(table.history(+"k")).to eq([[:plain, 1, 2], [:sub, 2, nil]])
      table.put(1, :int, 1)
      expect(table.get(1.0)).to be_nil
      table.put(1.0, :float, 1)
      expect([table.get(1), table.get(1.0)]).to eq(%i[int float])
      table.put([1, "x"], :array, 1)
      expect(table.get([1, +"x"])).to eq(:array)
      expect(table.size).to eq(4)
    end

    it "stores an unfrozen String key as a frozen copy, and a frozen one as it is" do
      name = +"acme"
      table.put(name, 1, 1)
      name << " corp"
      expect(table.get("acme")).to eq(1)
      stored = table.first.first
      expect(stored).to eq("acme")
      expect(stored).to be_frozen
      frozen = "frozen"
      table.put(frozen, 1, 1)
      expect(table.map { |key, *| key }.last).to be(frozen)
    end

    it "keeps the key first given for equal keys" do
      sub = VersionedTableSpec::SubString.new("k")
      table.put(sub, 1, 1)
      table.put("k", 2, 2)
      expect(table.map { |key, *| key }).to all(be(sub))
    end
  end

  describe "#each and Enumerable" do
    before do
      table.put("b", :b1, 100)
      table.put("a", :a1, 101)
      table.put("b", :b2, 102)
      table.delete("a", 103)
      table.delete("c", 103)
    end

    it "yields key, value, valid_from and valid_to of every history entry, keys in the order first held" do
      yielded = []
      returned = table.each { |key, value, valid_from, valid_to| yielded << [key, value, valid_from, valid_to] }
      expect(returned).to be(table)
      expect(yielded).to eq([["b", :b1, 100, 102], ["b", :b2, 102, nil], ["a", :a1, 101, 103]])
    end

    it "returns an Enumerator without a block, and is Enumerable" do
      expect(table.each).to be_an(Enumerator)
      expect(table.each.to_a).to eq(table.to_a)
      expect(table.to_a).to eq([["b", :b1, 100, 102], ["b", :b2, 102, nil], ["a", :a1, 101, 103]])
      expect(table.map { |key, value, _from, _to| "#{key}:#{value}" }).to eq(%w[b:b1 b:b2 a:a1])
      expect(table.count).to eq(3)
      expect(table.select { |_key, _value, _from, valid_to| valid_to.nil? }.map(&:first)).to eq(["b"])
    end

    it "counts tombstones in version_count and their keys in size, but yields neither" do
      expect([table.size, table.version_count]).to eq([3, 5])
      expect(table.history("c")).to eq([])
    end
  end

  describe "freeze, dup, clone and ==" do
    before do
      table.put("a", 1, 10)
      table.delete("b", 12)
    end

    it "refuses put and delete on a frozen table, and still reads" do
      table.freeze
      expect_frozen_error(table) { table.put("a", 2, 11) }
      expect_frozen_error(table) { table.delete("a", 11) }
      expect_frozen_error(table) { table.marshal_load(table.marshal_dump) }
      expect(table.get("a")).to eq(1)
      expect(table.to_a).to eq([["a", 1, 10, nil]])
      expect(counts(table)).to eq(size: 2, version_count: 2, stream_time: 12, late_count: 0)
    end

    it "copies all state into an independent table" do
      copy = table.dup
      expect(copy).to eq(table)
      copy.put("a", 2, 11)
      copy.put("c", 3, 20)
      expect(table.to_a).to eq([["a", 1, 10, nil]])
      expect(table.stream_time).to eq(12)
      expect(copy.to_a).to eq([["a", 1, 10, 11], ["a", 2, 11, nil], ["c", 3, 20, nil]])
      expect(copy).not_to eq(table)
    end

    it "keeps the frozen state in clone, not in dup" do
      table.freeze
      expect(table.clone).to be_frozen
      expect(table.dup).not_to be_frozen
      expect(table.dup.put("a", 2, 11)).to be_nil
    end

    it "compares retention, stream time, late count, on_late, keys and versions with eql?" do
      same = table_with(10, ["a", 1, 10], ["b", 12])
      expect([same == table, same.eql?(table), same.hash == table.hash]).to eq([true, true, true])
      expect(table_with(10, ["a", 1.0, 10], ["b", 12])).not_to eq(table)
      expect(table_with(11, ["a", 1, 10], ["b", 12])).not_to eq(table)
      expect(table_with(10, ["b", 12], ["a", 1, 10])).not_to eq(table)
      expect(table_with(10, ["a", 1, 10], ["b", 12], on_late: :drop)).not_to eq(table)
      expect(table).not_to eq(table.to_h)
    end
  end

  describe "values" do
    it "are held as they are, surviving garbage collection and compaction, as keys do" do
      values = Array.new(200) { |n| "value #{n}" * 3 }
      values.each_with_index { |value, n| table.put(+"key #{n}", value.dup, 1) }
      GC.start
      GC.compact if GC.respond_to?(:compact)
      expect(Array.new(200) { |n| table.get("key #{n}") }).to eq(values)
      expect(table.map { |key, *| key }).to eq(Array.new(200) { |n| "key #{n}" })
    end

    it "are the objects given, never copied" do
      value = +"mutable"
      table.put("a", value, 1)
      expect(table.get("a")).to be(value)
      expect(table.version("a").first).to be(value)
    end
  end

  describe "checkpoints" do
    before do
      table.put("b", :ignored, 90)
      table.put("b", [1, "x"], 100)
      table.put("a", nil, 95)
      table.delete("a", 98)
      table.put(7, "seven", 99)
    end

    it "describes itself as a Hash, versions grouped by key in the order first held, tombstones as pairs" do
      expect(table.to_h).to eq(
        history_retention: 10, stream_time: 100, late_count: 0,
        versions: [["b", 90, :ignored], ["b", 100, [1, "x"]], ["a", 95, nil], ["a", 98], [7, 99, "seven"]]
      )
    end

    it "comes back equal through to_h / from_h and Marshal, and goes on alike" do
      copies = [described_class.from_h(table.to_h), Marshal.load(Marshal.dump(table))]
      copies.each do |copy|
        expect(copy).to eq(table)
        expect(copy.put("a", 1, 96)).to eq(98)
        expect { copy.put("z", 1, 89) }.to raise_error(WindowMachines::LateEventError)
        expect([copy.late_count, copy.history("a")]).to eq([1, [[nil, 95, 96], [1, 96, 98]]])
      end
      expect(table.history("a")).to eq([[nil, 95, 98]])
    end

    it "comes back from JSON, with String field names" do
      parsed = JSON.parse(JSON.generate(table.to_h))
      expect(parsed.keys).to eq(%w[history_retention stream_time late_count versions])
      restored = described_class.from_h(parsed)
      expect(restored.history("b")).to eq([["ignored", 90, 100], [[1, "x"], 100, nil]])
      expect(restored.version("a", 96)).to eq([nil, 95, 98])
      expect(restored.get(7)).to eq("seven")
      expect(restored.version_count).to eq(5)
    end

    it "takes on_late in from_h, and keeps it through Marshal" do
      dropping = described_class.from_h(table.to_h, on_late: :drop)
      expect(dropping.put("a", 1, 3)).to be(false)
      expect(Marshal.load(Marshal.dump(dropping)).delete("a", 3)).to be_nil
      expect(Marshal.load(Marshal.dump(table)).marshal_dump[:on_late]).to eq(:raise)
    end

    it "cannot Marshal a table whose on_late is a Proc, but can to_h it" do
      calling = described_class.from_h(table.to_h, on_late: ->(*) {})
      expect { Marshal.dump(calling) }.to raise_error(TypeError)
      expect(calling.to_h).to eq(table.to_h)
    end

    it "refuses to_h for keys without an exact JSON form, while Marshal keeps them" do
      table.put(:symbol, 1, 100)
      expect_gem_error(WindowMachines::TypeError, /:symbol.*use Marshal/m) { table.to_h }
      expect(Marshal.load(Marshal.dump(table)).get(:symbol)).to eq(1)
    end

    it "replaces a live table's whole state with marshal_load, expiring from then on by the new versions" do
      other = table_with(10, ["x", 1, 500], ["x", 2, 505])
      table.marshal_load(other.marshal_dump)
      expect(table).to eq(other)
      expect([table.get("a"), table.size]).to eq([nil, 1])
      expect(table.put("x", 3, 516)).to be_nil # cutoff 506
      expect(table.history("x")).to eq([[2, 505, 516], [3, 516, nil]])
      expect(table.version_count).to eq(2)
    end

    it "restores an unfrozen table from a frozen one" do
      expect(Marshal.load(Marshal.dump(table.freeze))).not_to be_frozen
      expect(described_class.from_h(table.to_h)).not_to be_frozen
    end
  end
end
