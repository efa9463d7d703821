# frozen_string_literal: true

# The `clock:` keyword: a tracker built with a Clock takes Times where it
# takes timestamps and Durations where it takes lengths, answers in ticks,
# and keeps its clock through copies and checkpoints. One built without a
# clock is untouched.
RSpec.describe "clock: on every class" do
  let(:clock) { WindowMachines::Clock.new(:ms) }
  let(:nine) { Time.utc(2026, 12, 1, 9, 0, 0) }
  let(:nine_ms) { 1_796_115_600_000 }
  let(:count) { WindowMachines::Aggregate::Count.new }

  # A length as ActiveSupport::Duration answers it, without ActiveSupport.
  let(:minute) do
    Struct.new(:value, :parts) { def since(time = nil) = time }.new(60, { minutes: 1 })
  end

  it "files Times as ticks in the aggregating windows and answers in ticks" do
    windows = WindowMachines::TumblingWindows.new(60_000, grace: 120_000, aggregate: count, clock: clock)
    expect([windows.add("shop", nine), windows.add("shop", nine + 30), windows.add("shop", nine_ms + 1)]).to all(be(true))
    expect(windows.current("shop")).to eq([[nine_ms, nine_ms + 60_000, 3]])
    expect(windows.finish.to_a).to eq([["shop", nine_ms, nine_ms + 60_000, 3]])
    expect(clock.time(nine_ms + 60_000)).to eq(nine + 60)
  end

  it "works in a user's subclass, which takes its class's conversions" do
    shop_windows = Class.new(WindowMachines::TumblingWindows)
    windows = shop_windows.new(60_000, aggregate: count, clock: clock)
    expect(windows.add("shop", nine)).to be(true)
    expect(windows.finish.to_a).to eq([["shop", nine_ms, nine_ms + 60_000, 1]])
    sessions = Class.new(WindowMachines::Sessions).new(minute, clock: clock)
    expect(sessions.insert(nine)).to eq([nine_ms, nine_ms])
  end

  it "takes a Clock subclass, and a tracker with one equals its copies" do
    my_clock = Class.new(WindowMachines::Clock).new(:ms)
    watermark = WindowMachines::Watermark.new(nine, clock: my_clock)
    expect([watermark.value, watermark == watermark.dup, watermark.eql?(watermark.clone)]).to eq([nine_ms, true, true])
    expect(my_clock).not_to eq(clock)
  end

  it "converts every length given to new, positional or keyword" do
    hopping = WindowMachines::HoppingWindows.new(minute, 15_000, grace: minute, offset: 5_000, aggregate: count, clock: clock)
    expect([hopping.window_size, hopping.advance, hopping.grace, hopping.offset]).to eq([60_000, 15_000, 60_000, 5_000])
    expect(WindowMachines::Sessions.new(minute, clock: clock).gap).to eq(60_000)
    expect(WindowMachines::KeyedSessions.new(minute, clock: clock).gap).to eq(60_000)
    expect(WindowMachines::SessionWindows.new(minute, grace: minute, aggregate: count, clock: clock).grace).to eq(60_000)
    expect(WindowMachines::VersionedTable.new(minute, clock: clock).history_retention).to eq(60_000)
  end

  it "takes Times in Watermark, Sessions, KeyedSessions and VersionedTable" do
    watermark = WindowMachines::Watermark.new(nine, clock: clock)
    expect(watermark.value).to eq(nine_ms)
    expect(watermark.closes?(nine - 60, nine - 1, minute)).to be(false)
    expect(watermark.advance(nine + 120)).to be(true)
    sessions = WindowMachines::Sessions.new(30_000, clock: clock)
    expect(sessions.insert(nine)).to eq([nine_ms, nine_ms])
    merged = []
    sessions.insert(nine + 40)
    expect(sessions.insert(nine + 20) { |old, new| merged << [old, new] }).to eq([nine_ms, nine_ms + 40_000])
    expect(merged.size).to eq(2)
    keyed = WindowMachines::KeyedSessions.new(30_000, clock: clock)
    expect(keyed.insert("a", nine)).to eq([nine_ms, nine_ms])
    expect(keyed.advance_watermark(nine + 60)).to be(true)
    table = WindowMachines::VersionedTable.new(3_600_000, clock: clock)
    expect(table.put("EUR", 1.1, nine)).to be_nil
    expect(table.put("EUR", 1.0, nine - 60)).to eq(nine_ms)
    expect([table.get("EUR", nine - 1), table.get("EUR"), table.version("EUR", nine + 1)])
      .to eq([1.0, 1.1, [1.1, nine_ms, nil]])
    expect(table.delete("EUR", nine + 5)).to eq([1.1, nine_ms, nil])
  end

  it "refuses a change to a frozen tracker before converting its arguments, and still converts for readers", :mistyped do
    converted = []
    noted = Struct.new(:log) do
      def to_time
        log << :converted
        Time.at(1)
      end
    end.new(converted)
    table = WindowMachines::VersionedTable.new(5, clock: clock)
    table.put("a", 1, Time.at(1))
    watermark = WindowMachines::Watermark.new(1, clock: clock)
    trackers = [[table, :put, ["a", 2, noted]], [table, :delete, ["a", noted]], [watermark, :advance, [noted]],
                [WindowMachines::Sessions.new(5, clock: clock), :insert, [noted]],
                [WindowMachines::KeyedSessions.new(5, clock: clock), :insert_all, [["a"], [noted]]],
                [WindowMachines::TumblingWindows.new(5, aggregate: count, clock: clock), :add, ["a", noted]]]
    trackers.each do |tracker, call, arguments|
      tracker.freeze
      expect { tracker.public_send(call, *arguments) }.to raise_error(FrozenError) { |error| expect(error.receiver).to be(tracker) }
    end
    expect(converted).to be_empty
    expect(table.get("a", noted)).to eq(1)
    watermark.closes?(noted, noted, 1)
    expect(converted.size).to eq(3)
  end

  it "still takes Integers as ticks" do
    sessions = WindowMachines::Sessions.new(5, clock: clock)
    expect(sessions.insert(7)).to eq([7, 7])
    expect { sessions.insert(-1) }.to raise_error(WindowMachines::RangeError)
    expect { WindowMachines::Sessions.new(5, clock: :ms) }.to raise_error(TypeError, /must be a WindowMachines::Clock/)
  end

  it "refuses what the clock refuses", :mistyped do
    sessions = WindowMachines::Sessions.new(5, clock: clock)
    expect { sessions.insert(1.5) }.to raise_error(WindowMachines::TypeError)
    expect(sessions.size).to eq(0)
  end

  it "keeps the clock through dup, clone, Marshal and from_h(clock:)" do
    windows = WindowMachines::TumblingWindows.new(60_000, aggregate: count, clock: clock)
    windows.add("a", nine)
    copies = [windows.dup, windows.clone, Marshal.load(Marshal.dump(windows)),
              WindowMachines::TumblingWindows.from_h(windows.to_h, aggregate: count, clock: clock)]
    copies.each do |copy|
      expect(copy.clock).to eq(clock)
      expect(copy.add("a", nine + 1)).to be(true)
      expect(copy.current("a")).to eq([[nine_ms, nine_ms + 60_000, 2]])
    end
    sessions = WindowMachines::Sessions.new(5, clock: clock)
    restored = WindowMachines::Sessions.from_h(sessions.to_h, clock: clock)
    expect(restored.insert(nine)).to eq([nine_ms, nine_ms])
    expect(WindowMachines::Sessions.from_h(sessions.to_h).clock).to be_nil
  end

  it "refuses a Marshal dump whose clock is not a Clock before loading any of it", :mistyped do
    windows = WindowMachines::TumblingWindows.new(10, aggregate: count)
    windows.add("a", 1)
    before = windows.marshal_dump
    other = WindowMachines::TumblingWindows.new(10, aggregate: count, clock: clock)
    other.add("b", nine)
    dump = other.marshal_dump.merge(clock: :not_a_clock)
    expect { windows.marshal_load(dump) }.to raise_error(TypeError, /clock must be a WindowMachines::Clock/)
    expect(windows.marshal_dump).to eq(before)
    expect(windows.clock).to be_nil
  end

  it "leaves a tracker built without a clock untouched: strict Integers, no conversion in its calls", :mistyped do
    sessions = WindowMachines::Sessions.new(5)
    expect(sessions.clock).to be_nil
    expect(sessions.singleton_class.include?(WindowMachines::Sessions::ClockedCalls)).to be(false)
    expect { sessions.insert(nine) }.to raise_error(WindowMachines::TypeError, /must be an Integer/)
    expect(sessions.dup.clock).to be_nil
    expect(Marshal.load(Marshal.dump(sessions)).marshal_dump).not_to include(:clock)
  end

  it "gives WatermarkStrategy a clock for its lag and its events" do
    strategy = WindowMachines::WatermarkStrategy.bounded(minute, clock: clock)
    expect(strategy.lag).to eq(60_000)
    expect(strategy.observe(nine)).to eq(nine_ms - 60_000)
    expect(strategy.clock).to eq(clock)
  end

  it "makes trackers with different clocks, or none, unequal" do
    one = WindowMachines::Sessions.new(5, clock: clock)
    expect(one).to eq(WindowMachines::Sessions.new(5, clock: WindowMachines::Clock.new(:ms)))
    expect(one).not_to eq(WindowMachines::Sessions.new(5, clock: WindowMachines::Clock.new(:s)))
    expect(one).not_to eq(WindowMachines::Sessions.new(5))
  end
end
