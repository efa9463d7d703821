# frozen_string_literal: true

# `finish` ends the input on every tracker: the watermark moves to
# 2**64-1, everything held is handed over in closing order, the tracker is
# left empty, and an event after it is late.
RSpec.describe "finish, the end of input" do
  let(:end_of_time) { WindowMachines::Watermark::END_OF_TIME }
  let(:count) { WindowMachines::Aggregate::Count.new }

  it "is 2**64-1" do
    expect(end_of_time).to eq(2**64 - 1)
  end

  it "moves a Watermark to the end of time" do
    watermark = WindowMachines::Watermark.new(3)
    expect(watermark.finish).to be(true)
    expect(watermark.value).to eq(end_of_time)
    expect(watermark.finish).to be(false)
    expect(watermark.closes?(2**63, 2**64 - 2, 1)).to be(true)
  end

  it "hands over every session of Sessions oldest first, even one at 2**64-1" do
    sessions = WindowMachines::Sessions.new(10)
    [50, 5, 2**64 - 1, 12].each { |at| sessions.insert(at) }
    expect(sessions.finish.to_a).to eq([[5, 12], [50, 50], [2**64 - 1, 2**64 - 1]])
    expect([sessions.size, sessions.watermark]).to eq([0, end_of_time])
    expect { sessions.insert(7) }.to raise_error(WindowMachines::LateEventError)
  end

  it "hands over KeyedSessions in closing order, releasing every key" do
    keyed = WindowMachines::KeyedSessions.new(10)
    keyed.insert("b", 40)
    keyed.insert("a", 3)
    keyed.insert("a", 8)
    handed = []
    expect(keyed.finish { |*session| handed << session }).to be(keyed)
    expect(handed).to eq([["a", 3, 8], ["b", 40, 40]])
    expect([keyed.size, keyed.key_count, keyed.watermark]).to eq([0, 0, end_of_time])
  end

  {
    "TumblingWindows" => -> (count, mode) { WindowMachines::TumblingWindows.new(60, grace: 30, aggregate: count, watermark: mode) },
    "HoppingWindows" => -> (count, mode) { WindowMachines::HoppingWindows.new(60, 20, grace: 30, aggregate: count, watermark: mode) },
    "SessionWindows" => -> (count, mode) { WindowMachines::SessionWindows.new(60, grace: 30, aggregate: count, watermark: mode) }
  }.each do |name, make|
    %i[stream manual].each do |mode|
      it "hands over everything #{name} holds (watermark: :#{mode}), as flush does, then refuses events as late" do
        events = [["a", 10], ["a", 30], ["b", 70], ["c", 95], ["a", 110]]
        finished = make.call(count, mode)
        flushed = make.call(count, mode)
        events.each do |key, at|
          finished.add(key, at)
          flushed.add(key, at)
        end
        expect(finished.finish.to_a).to eq(flushed.flush.to_a)
        expect([finished.size, finished.key_count, finished.watermark]).to eq([0, 0, end_of_time])
        expect { finished.add("a", 300) }.to raise_error(WindowMachines::LateEventError) { |error|
          expect([error.timestamp, error.watermark, error.key]).to eq([300, end_of_time, "a"])
        }
        expect(finished.late_count).to eq(1)
      end
    end
  end

  it "is refused on a frozen tracker, which keeps what it holds" do
    windows = WindowMachines::TumblingWindows.new(60, aggregate: count)
    windows.add("a", 1)
    sessions = WindowMachines::Sessions.new(5)
    sessions.insert(1)
    [windows, sessions].each(&:freeze)
    expect { windows.finish { nil } }.to raise_error(FrozenError)
    expect { sessions.finish { nil } }.to raise_error(FrozenError)
    expect([windows.size, sessions.size]).to eq([1, 1])
  end

  it "ends the input only when its Enumerator is iterated" do
    windows = WindowMachines::TumblingWindows.new(60, aggregate: count)
    windows.add("a", 1)
    enumerator = windows.finish
    expect(windows.size).to eq(1)
    expect(enumerator.to_a).to eq([["a", 0, 60, 1]])
  end

  it "is carried by dup, Marshal and a checkpoint (ended: true), so a restored tracker refuses events too" do
    [WindowMachines::TumblingWindows.new(60, aggregate: count),
     WindowMachines::SessionWindows.new(60, aggregate: count, watermark: :manual)].each do |tracker|
      tracker.add("a", 1)
      tracker.finish { nil }
      expect(tracker.to_h).to include(ended: true, windows: [])
      from_json = tracker.class.from_h(JSON.parse(JSON.generate(tracker.to_h)), aggregate: count)
      [tracker.dup, Marshal.load(Marshal.dump(tracker)), from_json].each do |copy|
        expect([copy.size, copy.watermark]).to eq([0, end_of_time])
        expect(copy).to eq(tracker)
        expect { copy.add("a", 4) }.to raise_error(WindowMachines::LateEventError)
      end
    end
  end

  it "is absent from the checkpoint of a tracker whose input has not ended, which still reads without it" do
    windows = WindowMachines::TumblingWindows.new(60, aggregate: count)
    windows.add("a", 1)
    expect(windows.to_h).not_to include(:ended)
    restored = WindowMachines::TumblingWindows.from_h(windows.to_h.merge(ended: false), aggregate: count)
    expect(restored.add("a", 2)).to be(true)
  end

  it "refuses a checkpoint of ended input that holds windows, or whose ended is not true or false" do
    windows = WindowMachines::TumblingWindows.new(60, aggregate: count)
    windows.add("a", 1)
    expect { WindowMachines::TumblingWindows.from_h(windows.to_h.merge(ended: true), aggregate: count) }
      .to raise_error(WindowMachines::ArgumentError, "checkpoint of ended input holds windows")
    sessions = WindowMachines::SessionWindows.new(5, aggregate: count)
    sessions.add("a", 1)
    expect { WindowMachines::SessionWindows.from_h(sessions.to_h.merge(ended: true), aggregate: count) }
      .to raise_error(WindowMachines::ArgumentError, "checkpoint of ended input holds windows")
    windows.finish { nil }
    expect { WindowMachines::TumblingWindows.from_h(windows.to_h.merge(ended: "yes"), aggregate: count) }
      .to raise_error(WindowMachines::TypeError, 'ended must be true or false, got "yes" (String)')
  end
end

RSpec.describe "CapacityError readers" do
  it "name the limit, the refused event's timestamp, its key and the watermark then" do
    keyed = WindowMachines::KeyedSessions.new(5, max_sessions: 1)
    keyed.insert("a", 1)
    expect { keyed.insert("b", 100) }.to raise_error(WindowMachines::CapacityError) { |error|
      expect([error.limit, error.timestamp, error.key, error.watermark]).to eq([1, 100, "b", nil])
    }
    keyed.advance_watermark(50)
    expect { keyed.insert("b", 100) }.to raise_error(WindowMachines::CapacityError) { |error|
      expect(error.watermark).to eq(50)
    }
    sessions = WindowMachines::Sessions.new(5)
    32.times { |n| sessions.insert(n * 10) }
    expect { sessions.insert(1_000) }.to raise_error(WindowMachines::CapacityError) { |error|
      expect([error.limit, error.timestamp, error.key]).to eq([32, 1_000, nil])
    }
    windows = WindowMachines::SessionWindows.new(5, aggregate: WindowMachines::Aggregate::Count.new, max_sessions: 1)
    windows.add(:x, 1)
    expect { windows.add(:y, 50) }.to raise_error(WindowMachines::CapacityError) { |error|
      expect([error.limit, error.timestamp, error.key, error.watermark]).to eq([1, 50, :y, 0])
    }
  end

  it "name only the limit for a configuration refused whatever the events" do
    expect { WindowMachines.sliding(1, 100, 1) }.to raise_error(WindowMachines::CapacityError) { |error|
      expect([error.limit, error.timestamp, error.key, error.watermark]).to eq([32, nil, nil, nil])
    }
  end
end
