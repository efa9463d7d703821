# frozen_string_literal: true

require "json"

# Flink's own expectations for event-time windows, translated to
# TumblingWindows, HoppingWindows, SessionWindows, Sessions and
# WatermarkStrategy. Sources (apache/flink):
# flink-streaming-java/src/test/java/org/apache/flink/streaming/runtime/operators/windowing/
#   WindowOperatorTest.java@6da38a6aa24b44272e977aba91258693d437875b,
#   TumblingEventTimeWindowsTest.java@067bc18341a987c27906cda3492164142d828ea7,
#   SlidingEventTimeWindowsTest.java@162894c661bde30e162d35bd3278c876700d3408,
#   EventTimeSessionWindowsTest.java@fca52d8a7c7cb68384fa6b6ecf0082d16c8a3a4f;
# flink-core/src/test/java/org/apache/flink/api/common/eventtime/
#   BoundedOutOfOrdernessWatermarksTest.java@0420837af03dbd9005b8bcc4093acdd86fb04df0.
#
# Flink's test harness calls processElement(key, value, ts) and
# processWatermark(W); here that is add(key, ts, value) and
# advance_watermark on a tracker built with watermark: :manual and Sum
# (Flink's SumReducer), reading what closed with each_closed after every
# watermark. Flink's W is passed as W + 1 to TumblingWindows and
# HoppingWindows (Flink fires a window at W >= end - 1 and an element at W is
# late; here a window closes at end <= watermark and an event at the
# watermark is on time), and as given to SessionWindows. A time-window
# output is compared as [key, sum, end - 1] (Flink's record carries the
# window's maxTimestamp), a session as [key, first, last + gap, sum] (Flink's
# TimeWindow(start, end)); both sorted. Flink's snapshot, close and restore
# is a JSON round trip through to_h and from_h.
#
# Semantic differences:
# 1. Sessions close one tick later: a session closes once last + gap is at
#    or below the watermark; Flink fires [first, last + gap) once W >=
#    last + gap - 1 (its maxTimestamp).
# 2. Session lateness is stricter: any event at or below the watermark
#    (less grace) is late, even when it falls inside or next to a session
#    that is still open. Flink drops an element only if its own window
#    [ts, ts + gap) is already past W + allowedLateness, and merges the
#    rest (4500 at W4998, 7000 at W7400, 14500 at W14600 in
#    testSideOutputDueToLatenessSessionZeroLateness). No grace gives both
#    Flink's admissions and its firing times.
# 3. No window starts below 0, nor before the offset: Flink's sliding
#    windows [-2000, 1000) and [-1000, 2000), and the first windows of a
#    negative offset, do not exist here. An event before the offset is in no
#    window: add returns false and it is not counted late. Offsets are not
#    negative, so Flink's -100 is 4900 (tumbling 5000) or 900 (slide 1000).
# 4. Grace (Flink's allowedLateness) delays the single hand-over to the end
#    of grace; Flink fires on time, then again for each late element until
#    then. The result handed over is Flink's last firing (accumulating
#    trigger) or the sum of its firings (purging trigger), only later.
# 5. Triggers (count, continuous, purging, processing time), evictors,
#    dynamic gaps and GlobalWindows have no counterpart: the count-trigger
#    test compares the merged sessions, and the end-of-stream trigger is
#    finish over one window that holds every element.
# 6. WatermarkStrategy.bounded(lag).value is largest - lag, Flink's
#    max - lag - 1 plus one: the W + 1 the window trackers take, which is
#    what WatermarkStrategy#advance gives them (a Watermark and the session
#    trackers get one less, Flink's own). Before any event the value is nil;
#    Flink emits Long.MIN_VALUE.
RSpec.describe "Peers: Flink window operator" do
  let(:late) { [] }

  def late_handler
    ->(key, ts, value, _watermark) { late << [key, value, ts] }
  end

  def operator(klass, *args, **opts)
    klass.new(*args, **opts, aggregate: WindowMachines::Aggregate::Sum.new, watermark: :manual, on_late: late_handler)
  end

  # Flink's snapshot, close and restore.
  def restore(tracker)
    checkpoint = JSON.parse(JSON.generate(tracker.to_h))
    tracker.class.from_h(checkpoint, aggregate: WindowMachines::Aggregate::Sum.new, on_late: late_handler)
  end

  def windows_closed(tracker, flink_watermark)
    tracker.advance_watermark(flink_watermark + 1)
    tracker.each_closed.map { |key, _start, finish, sum| [key, sum, finish - 1] }.sort
  end

  def sessions_closed(tracker, flink_watermark, gap)
    tracker.advance_watermark(flink_watermark)
    tracker.each_closed.map { |key, first, last, sum| [key, first, last + gap, sum] }.sort
  end

  def feed(tracker, records)
    records.each { |key, value, at| tracker.add(key, at, value) }
    tracker
  end

  # The elements of testTumblingEventTimeWindows and testSlidingEventTimeWindows, out of order.
  out_of_order = [["key2", 1, 3999], ["key2", 1, 3000], ["key1", 1, 20], ["key1", 1, 0], ["key1", 1, 999],
                  ["key2", 1, 1998], ["key2", 1, 1999], ["key2", 1, 1000]].freeze

  describe "WindowOperatorTest, time windows" do
    it "testTumblingEventTimeWindowsReduce / testTumblingEventTimeWindowsApply: 3 s, restored after W1999" do
      tracker = feed(operator(WindowMachines::TumblingWindows, 3000), out_of_order)
      fired = [999, 1999].to_h { |w| [w, windows_closed(tracker, w)] }
      tracker = restore(tracker)
      [2999, 3999, 4999, 5999, 6999, 7999].each { |w| fired[w] = windows_closed(tracker, w) }
      expect(fired).to eq(999 => [], 1999 => [], 2999 => [["key1", 3, 2999], ["key2", 3, 2999]], 3999 => [],
                          4999 => [], 5999 => [["key2", 2, 5999]], 6999 => [], 7999 => [])
    end

    it "testSlidingEventTimeWindowsReduce / testSlidingEventTimeWindowsApply: differs, no window below 0 " \
       "(difference 3)" do
      tracker = feed(operator(WindowMachines::HoppingWindows, 3000, 1000), out_of_order)
      fired = [999, 1999, 2999].to_h { |w| [w, windows_closed(tracker, w)] }
      tracker = restore(tracker)
      [3999, 4999, 5999, 6999, 7999].each { |w| fired[w] = windows_closed(tracker, w) }
      # Flink: 999 => [["key1", 3, 999]], 1999 => [["key1", 3, 1999], ["key2", 3, 1999]]
      # from [-2000, 1000) and [-1000, 2000); every other firing is the same.
      expect(fired).to eq(999 => [], 1999 => [], 2999 => [["key1", 3, 2999], ["key2", 3, 2999]],
                          3999 => [["key2", 5, 3999]], 4999 => [["key2", 2, 4999]], 5999 => [["key2", 2, 5999]],
                          6999 => [], 7999 => [])
    end

    it "testSideOutputDueToLatenessTumbling: 1980 lands at W1985, 1998 is late at W1999" do
      tracker = operator(WindowMachines::TumblingWindows, 2000)
      fired = {}
      tracker.add("key2", 1000, 1)
      fired[1985] = windows_closed(tracker, 1985)
      expect(tracker.add("key2", 1980, 1)).to be(true)
      fired[1999] = windows_closed(tracker, 1999)
      expect(tracker.add("key2", 1998, 1)).to be(false)
      tracker.add("key2", 2001, 1)
      fired[2999] = windows_closed(tracker, 2999)
      fired[3999] = windows_closed(tracker, 3999)
      expect(fired).to eq(1985 => [], 1999 => [["key2", 2, 1999]], 2999 => [], 3999 => [["key2", 1, 3999]])
      expect(late).to eq([["key2", 1, 1998]])
    end

    it "testSideOutputDueToLatenessSliding: differs, [-1000, 2000) does not fire at W1999 (difference 3)" do
      tracker = operator(WindowMachines::HoppingWindows, 3000, 1000)
      fired = {}
      tracker.add("key2", 1000, 1)
      fired[1999] = windows_closed(tracker, 1999)
      tracker.add("key2", 2000, 1)
      fired[3000] = windows_closed(tracker, 3000)
      feed(tracker, [["key1", 1, 3001], ["key2", 1, 2400], ["key2", 1, 2400], ["key1", 1, 3001], ["key2", 1, 3900]])
      fired[6000] = windows_closed(tracker, 6000)
      expect(tracker.add("key1", 3001, 1)).to be(false)
      fired[25_000] = windows_closed(tracker, 25_000)
      # Flink: 1999 => [["key2", 1, 1999]]; the rest, and the side output, are the same.
      expect(fired).to eq(1999 => [], 3000 => [["key2", 2, 2999]],
                          6000 => [["key1", 2, 3999], ["key1", 2, 4999], ["key1", 2, 5999],
                                   ["key2", 1, 5999], ["key2", 4, 4999], ["key2", 5, 3999]],
                          25_000 => [])
      expect(late).to eq([["key1", 1, 3001]])
      expect(tracker.late_count).to eq(1)
    end

    it "testLateness: differs, grace 500 delays one hand-over of 3 to W6000 (difference 4)" do
      tracker = operator(WindowMachines::TumblingWindows, 2000, grace: 500)
      fired = {}
      tracker.add("key2", 500, 1)
      fired[1500] = windows_closed(tracker, 1500)
      tracker.add("key2", 1300, 1)
      fired[2300] = windows_closed(tracker, 2300)
      expect(tracker.add("key2", 1997, 1)).to be(true)
      fired[6000] = windows_closed(tracker, 6000)
      expect(tracker.add("key2", 1998, 1)).to be(false)
      fired[7000] = windows_closed(tracker, 7000)
      # Flink (PurgingTrigger): 2300 => [["key2", 2, 1999]], 6000 => [["key2", 1, 1999]];
      # the side output is the same.
      expect(fired).to eq(1500 => [], 2300 => [], 6000 => [["key2", 3, 1999]], 7000 => [])
      expect(late).to eq([["key2", 1, 1998]])
    end

    it "testCleanupTimerWithEmptyReduceStateForTumblingWindows / ...ListState...: differs, at W2000 not W1999 " \
       "(difference 4)" do
      tracker = operator(WindowMachines::TumblingWindows, 2000, grace: 1)
      tracker.add("key2", 1000, 1)
      fired = [1599, 1999, 2000, 5000].to_h { |w| [w, windows_closed(tracker, w)] }
      # Flink: 1999 => [["key2", 1, 1999]] (fire and purge), 2000 => [] (the cleanup timer).
      expect(fired).to eq(1599 => [], 1999 => [], 2000 => [["key2", 1, 1999]], 5000 => [])
    end

    it "testCleanupTimeOverflow: differs, handed over after the lateness, not at maxTimestamp (difference 4)" do
      long_max = (2**63) - 1
      timestamp = long_max - 1750
      max_timestamp = timestamp - (timestamp % 1000) + 999
      tracker = operator(WindowMachines::TumblingWindows, 1000, grace: 2000)
      tracker.add("key2", timestamp, 1)
      # Flink: nothing at Long.MAX_VALUE - 1500 (no wrap-around), then
      # [["key2", 1, max_timestamp]] at W = max_timestamp.
      expect(windows_closed(tracker, long_max - 1500)).to eq([])
      expect(windows_closed(tracker, max_timestamp)).to eq([])
      expect(windows_closed(tracker, max_timestamp + 2000)).to eq([["key2", 1, max_timestamp]])
    end

    it "testEndOfStreamTrigger: finish hands over the one window holding everything (difference 5)" do
      tracker = feed(operator(WindowMachines::TumblingWindows, 10_000), out_of_order)
      expect(tracker.each_closed.to_a).to eq([])
      expect(tracker.finish.map { |key, _start, _finish, sum| [key, sum] }.sort).to eq([["key1", 3], ["key2", 5]])
    end
  end

  describe "WindowOperatorTest, sessions (gap 3 s)" do
    gap = 3000

    it "testSessionWindows / testSessionWindowsWithProcessFunction / testReduceSessionWindows" \
       "(WithProcessFunction): differs, [15000, 18000) closes at W18000, not W17999 (difference 1)" do
      tracker = feed(operator(WindowMachines::SessionWindows, gap),
                     [["key2", 1, 0], ["key2", 2, 1000], ["key2", 3, 2500], ["key1", 1, 10], ["key1", 2, 1000]])
      tracker = restore(tracker)
      feed(tracker, [["key1", 3, 2500], ["key2", 4, 5501], ["key2", 5, 6000], ["key2", 5, 6000], ["key2", 6, 6050]])
      expect(sessions_closed(tracker, 12_000, gap))
        .to eq([["key1", 10, 5500, 6], ["key2", 0, 5500, 6], ["key2", 5501, 9050, 20]])
      feed(tracker, [["key2", 10, 15_000], ["key2", 20, 15_000]])
      # Flink: [["key2", 15000, 18000, 30]] at W17999.
      expect(sessions_closed(tracker, 17_999, gap)).to eq([])
      expect(sessions_closed(tracker, 18_000, gap)).to eq([["key2", 15_000, 18_000, 30]])
    end

    it "testSessionWindowsWithCountTrigger: the bridging element merges key1's sessions (difference 5)" do
      tracker = feed(operator(WindowMachines::SessionWindows, gap),
                     [["key2", 1, 0], ["key2", 2, 1000], ["key2", 3, 2500], ["key2", 4, 3500],
                      ["key1", 1, 10], ["key1", 2, 1000]])
      tracker = restore(tracker)
      feed(tracker, [["key1", 3, 2500], ["key1", 1, 6000], ["key1", 2, 6500], ["key1", 3, 7000]])
      expect(tracker.current("key1")).to eq([[10, 2500, 6], [6000, 7000, 6]])
      tracker.add("key1", 4500, 10)
      # Flink's count trigger fires key2-10 (0, 6500) and, after the merge, key1-22 (10, 10000).
      expect(tracker.flush.map { |key, first, last, sum| [key, first, last + gap, sum] }.sort)
        .to eq([["key1", 10, 10_000, 22], ["key2", 0, 6500, 10]])
    end

    it "testCleanupTimerWithEmptyReduceStateForSessionWindows / ...ListState... (lateness 10)" do
      tracker = operator(WindowMachines::SessionWindows, gap, grace: 10)
      tracker.add("key2", 1000, 1)
      expect(sessions_closed(tracker, 4998, gap)).to eq([["key2", 1000, 4000, 1]])
      expect(sessions_closed(tracker, 14_600, gap)).to eq([])
    end

    # The input shared by the lateness tests on sessions: elements, and Flink watermarks as Integers.
    def lateness_run(tracker, gap, extra_late: false)
      fired = {}
      steps = [[:add, 1000], 1999, [:add, 2000], 4998, [:add, 4500], [:add, 8500], 7400, [:add, 7000], 11_501,
               [:add, 11_600], 14_600, [:add, 10_000]]
      steps << [:add, 10_100] if extra_late
      steps += [[:add, 14_500], 20_000, 100_000]
      steps.each do |step|
        step.is_a?(Array) ? tracker.add("key2", step.last, 1) : fired[step] = sessions_closed(tracker, step, gap)
      end
      fired
    end

    [false, true].each do |purging|
      name = "testSideOutputDueToLatenessSessionZeroLateness#{"PurgingTrigger" if purging}"
      it "#{name}: differs, 4500, 7000 and 14500 are late too (difference 2)" do
        fired = lateness_run(operator(WindowMachines::SessionWindows, gap), gap, extra_late: purging)
        # Flink: 11501 => [["key2", 1000, 11500, 5]], 14600 => [["key2", 11600, 14600, 1]],
        # 20000 => [["key2", 14500, 17500, 1]], nothing else; side output 10000 (and 10100) only.
        expect(fired).to eq(1999 => [], 4998 => [], 7400 => [["key2", 1000, 5000, 2]],
                            11_501 => [["key2", 8500, 11_500, 1]], 14_600 => [["key2", 11_600, 14_600, 1]],
                            20_000 => [], 100_000 => [])
        expect(late.map(&:last)).to eq(purging ? [4500, 7000, 10_000, 10_100, 14_500] : [4500, 7000, 10_000, 14_500])
      end
    end

    it "testDropDueToLatenessSessionWithLatenessPurgingTrigger / testNotSideOutputDueToLatenessSessionWithLateness " \
       "(lateness 10): differs (differences 2 and 4)" do
      fired = lateness_run(operator(WindowMachines::SessionWindows, gap, grace: 10), gap)
      # Flink: 11501 => [["key2", 1000, 11500, 5]], 14600 => [["key2", 11600, 14600, 1]], then 10000
      # merges into (10000, 14600) and fires at once, and (10000, 17500) fires at W20000 (1 each
      # with the purging trigger, 2 and 3 with the accumulating one); nothing is late.
      expect(fired).to eq(1999 => [], 4998 => [], 7400 => [["key2", 1000, 5000, 2]], 11_501 => [],
                          14_600 => [["key2", 8500, 11_500, 1]], 20_000 => [["key2", 11_600, 14_600, 1]],
                          100_000 => [])
      expect(late.map(&:last)).to eq([4500, 7000, 10_000, 14_500])
    end

    it "testNotSideOutputDueToLatenessSessionWithHugeLateness(PurgingTrigger) (lateness 10000): differs, " \
       "one hand-over at W100000 (difference 4)" do
      fired = lateness_run(operator(WindowMachines::SessionWindows, gap, grace: 10_000), gap)
      # Flink (accumulating): key2-5 (1000, 11500) at W11501, key2-1 (11600, 14600) at W14600,
      # key2-7 (1000, 14600) when 10000 bridges them, key2-8 (1000, 17500) at W20000.
      expect(fired).to eq(1999 => [], 4998 => [], 7400 => [], 11_501 => [], 14_600 => [], 20_000 => [],
                          100_000 => [["key2", 1000, 17_500, 8]])
      expect(late).to eq([])
    end
  end

  describe "EventTimeSessionWindowsTest" do
    it "testMergeConsecutiveWindows: touching windows (events one gap apart) merge" do
      sessions = WindowMachines::Sessions.new(1)
      [0, 1, 2, 4, 5].each { |at| sessions.insert(at) }
      expect(sessions.to_a.map { |first, last| [first, last + 1] }).to eq([[0, 3], [4, 6]])
    end

    it "testInvalidParameters: a gap of 0 or below is refused" do
      sum = WindowMachines::Aggregate::Sum.new
      expect { WindowMachines::SessionWindows.new(0, aggregate: sum) }.to raise_error(WindowMachines::ArgumentError)
      expect { WindowMachines::SessionWindows.new(-1, aggregate: sum) }.to raise_error(WindowMachines::RangeError)
    end
  end

  describe "TumblingEventTimeWindowsTest (5000)" do
    def assigned(at, size, advance: nil, offset: 0)
      args = advance ? [WindowMachines::HoppingWindows, size, advance] : [WindowMachines::TumblingWindows, size]
      tracker = args.first.new(*args.drop(1), offset: offset, aggregate: WindowMachines::Aggregate::Count.new)
      [tracker.add("k", at), tracker.current("k").map { |start, finish, _count| [start, finish] }, tracker.late_count]
    end

    it "testWindowAssignment" do
      expect([0, 4999, 5000].map { |at| WindowMachines.tumbling(at, 5000) })
        .to eq([[0, 5000], [0, 5000], [5000, 10_000]])
    end

    it "testWindowAssignmentWithGlobalOffset (100)" do
      expect([100, 5099, 5100].map { |at| assigned(at, 5000, offset: 100) })
        .to eq([[true, [[100, 5100]], 0], [true, [[100, 5100]], 0], [true, [[5100, 10_100]], 0]])
    end

    it "testWindowAssignmentWithNegativeGlobalOffset: differs, -100 as 4900 puts 0 and 4899 in no window " \
       "(difference 3)" do
      # Flink: 0 and 4899 in (-100, 4900), 4900 in (4900, 9900).
      expect([0, 4899, 4900].map { |at| assigned(at, 5000, offset: 4900) })
        .to eq([[false, [], 0], [false, [], 0], [true, [[4900, 9900]], 0]])
    end

    it "testTimeUnits (5 s, offset 1 s)" do
      expect([1000, 5999, 6000].map { |at| assigned(at, 5000, offset: 1000) })
        .to eq([[true, [[1000, 6000]], 0], [true, [[1000, 6000]], 0], [true, [[6000, 11_000]], 0]])
    end

    it "testInvalidParameters: abs(offset) < size" do
      sum = WindowMachines::Aggregate::Sum.new
      expect { WindowMachines::TumblingWindows.new(-1000, aggregate: sum) }.to raise_error(WindowMachines::RangeError)
      expect { WindowMachines::TumblingWindows.new(10, offset: 20, aggregate: sum) }
        .to raise_error(WindowMachines::ArgumentError)
      # Flink's offset -11: offsets are not negative here (difference 3).
      expect { WindowMachines::TumblingWindows.new(10, offset: -11, aggregate: sum) }
        .to raise_error(WindowMachines::RangeError)
    end
  end

  describe "SlidingEventTimeWindowsTest (5000, 1000)" do
    def five(first)
      (0..4).map { |i| [first + (i * 1000), first + (i * 1000) + 5000] }
    end

    def assigned(at, offset: 0)
      tracker = WindowMachines::HoppingWindows.new(5000, 1000, offset: offset,
                                                              aggregate: WindowMachines::Aggregate::Count.new)
      [tracker.add("k", at), tracker.current("k").map { |start, finish, _count| [start, finish] }, tracker.late_count]
    end

    it "testWindowAssignment: 4999 and 5000" do
      expect(WindowMachines.sliding(4999, 5000, 1000).sort).to eq(five(0))
      expect(WindowMachines.sliding(5000, 5000, 1000).sort).to eq(five(1000))
    end

    it "testWindowAssignment: differs, 0 is only in (0, 5000) (difference 3)" do
      # Flink: (-4000, 1000), (-3000, 2000), (-2000, 3000), (-1000, 4000), (0, 5000).
      expect(WindowMachines.sliding(0, 5000, 1000)).to eq([[0, 5000]])
    end

    it "testWindowAssignmentWithOffset (100): 5099 and 5100" do
      expect([5099, 5100].map { |at| assigned(at, offset: 100) }).to eq([[true, five(100), 0], [true, five(1100), 0]])
    end

    it "testWindowAssignmentWithOffset (100): differs, 100 is only in (100, 5100) (difference 3)" do
      # Flink: five(-3900), from (-3900, 1100) to (100, 5100).
      expect(assigned(100, offset: 100)).to eq([true, [[100, 5100]], 0])
    end

    it "testWindowAssignmentWithNegativeOffset: differs, -100 as 900 (difference 3)" do
      # Flink: 0 in five(-4100), 4899 in five(-100), 4900 in five(900).
      expect([0, 4899, 4900].map { |at| assigned(at, offset: 900) })
        .to eq([[false, [], 0], [true, five(-100).drop(1), 0], [true, five(900), 0]])
    end

    it "testTimeUnits (5 s, 1 s, offset 500 ms): 5499 and 5100" do
      expect([5499, 5100].map { |at| assigned(at, offset: 500) }).to eq([[true, five(500), 0], [true, five(500), 0]])
    end

    it "testTimeUnits (5 s, 1 s, offset 500 ms): differs, 100 is before the offset (difference 3)" do
      # Flink: five(-4500), from (-4500, 500) to (-500, 4500).
      expect(assigned(100, offset: 500)).to eq([false, [], 0])
    end

    it "testInvalidParameters: abs(offset) < slide and size > 0" do
      sum = WindowMachines::Aggregate::Sum.new
      expect { WindowMachines::HoppingWindows.new(-2000, 1000, aggregate: sum) }
        .to raise_error(WindowMachines::RangeError)
      expect { WindowMachines::HoppingWindows.new(2000, -1000, aggregate: sum) }
        .to raise_error(WindowMachines::RangeError)
      expect { WindowMachines::HoppingWindows.new(20, 10, offset: 11, aggregate: sum) }
        .to raise_error(WindowMachines::ArgumentError)
      # Flink's offset -11 (and -1): offsets are not negative here (difference 3).
      expect { WindowMachines::HoppingWindows.new(20, 10, offset: -11, aggregate: sum) }
        .to raise_error(WindowMachines::RangeError)
    end
  end

  describe "BoundedOutOfOrdernessWatermarksTest (10 ms)" do
    def strategy(*timestamps)
      strategy = WindowMachines::WatermarkStrategy.bounded(10)
      timestamps.each { |at| strategy.observe(at) }
      strategy
    end

    it "testWatermarkBeforeRecords: differs, nil rather than Long.MIN_VALUE (difference 6)" do
      expect(strategy.value).to be_nil
    end

    it "testWatermarkAfterEvent: differs, 1327 is Flink's 1326 plus one (difference 6)" do
      expect(strategy(1337).value).to eq(1327)
    end

    it "testWatermarkAfterNonMonotonousEvents: differs, 12335 is Flink's 12334 plus one (difference 6)" do
      expect(strategy(12_345, 12_300, 12_340, 12_280).value).to eq(12_335)
    end

    it "testRepeatedProbe: differs, 723446 twice is Flink's 723445 plus one (difference 6)" do
      probed = strategy(723_456)
      expect([probed.value, probed.value]).to eq([723_446, 723_446])
    end

    it "testWatermarkAfterEvent with WindowOperatorTest's 3 s tumbling window: advance fires it when Flink does " \
       "(difference 6)" do
      tracker = WindowMachines::TumblingWindows.new(3000, aggregate: WindowMachines::Aggregate::Sum.new,
                                                          watermark: :manual)
      tracker.add("key1", 20, 1)
      watermarks = strategy(3009) # Flink's watermark 2998: [0, 3000) does not fire
      watermarks.advance(tracker)
      expect(tracker.each_closed.to_a).to eq([])
      watermarks.observe(3010) # Flink's 2999 = maxTimestamp: it fires
      watermarks.advance(tracker)
      expect(tracker.each_closed.to_a).to eq([["key1", 0, 3000, 1]])
    end

    it "testWatermarkAfterEvent and testWatermarkAfterNonMonotonousEvents through advance: a Watermark and " \
       "the session trackers get Flink's own watermark" do
      [[[1337], 1326], [[12_345, 12_300, 12_340, 12_280], 12_334]].each do |timestamps, flinks|
        watermark = WindowMachines::Watermark.new
        sessions = WindowMachines::KeyedSessions.new(3000)
        strategy(*timestamps).advance(watermark)
        strategy(*timestamps).advance(sessions)
        expect([watermark.value, sessions.watermark]).to eq([flinks, flinks])
      end
    end
  end
end
