# frozen_string_literal: true

# `window_machines tumbling` and `hopping` on small hand-checked inputs
# (README › From the shell). Windows are [start, end); records with the same end
# but different keys may come in any order, so those are compared through
# `canonical` (sorted by end, then key) after checking the ends are in order.
RSpec.describe "window_machines tumbling and hopping" do
  include WindowMachinesSpec::Command

  # Runs the command with `arguments`, its standard input closed and its
  # standard output never read; yields its standard error and waiter.
  def running(arguments)
    command = WindowMachinesSpec::Command
    Open3.popen3(command::ENV_FOR_CHILD, *arguments, chdir: command::ROOT) do |stdin, _output, error, waiter|
      stdin.close
      yield error, waiter
    end
  end

  # Runs the command as `running` does, sends it SIGTERM after `seconds`,
  # expects it to end within 10 s with 128 + 15, as a stopped run does
  # (killed with SIGKILL otherwise), and returns its standard error.
  def stopped_by_sigterm(arguments, after:)
    running(arguments) do |error, waiter|
      sleep after
      Process.kill(:TERM, waiter.pid)
      finished = waiter.join(10)
      Process.kill(:KILL, waiter.pid) unless finished
      expect(finished).to be_truthy, "still running 10 s after SIGTERM"
      expect(waiter.value.exitstatus).to eq(128 + Signal.list.fetch("TERM"))
      error.read
    end
  end

  def expect_windows(records, expected, keys)
    ends = records.map { |record| record["end"] }
    expect(ends).to eq(ends.sort), "not in closing order (earliest end first):\n#{records.map(&:inspect).join("\n")}"
    expect(canonical(records, "end", keys)).to eq(canonical(expected, "end", keys))
  end

  describe "tumbling" do
    it "puts each event in [start, end) of its key, an event at a window's end in the next window" do
      result = run_ok("tumbling", "--size", "10", "--key", "k", "--agg", "count,sum:v", fixture("windows.jsonl"))
      expect_windows(result.records, [
                       { "k" => "a", "start" => 1000, "end" => 1010, "count" => 2, "sum_v" => 4 },
                       { "k" => "b", "start" => 1000, "end" => 1010, "count" => 1, "sum_v" => 2 },
                       { "k" => "a", "start" => 1010, "end" => 1020, "count" => 1, "sum_v" => 4 },
                       { "k" => "b", "start" => 1010, "end" => 1020, "count" => 1, "sum_v" => 5 },
                       { "k" => "a", "start" => 1020, "end" => 1030, "count" => 1, "sum_v" => 6 }
                     ], ["k"])
      expect(result.records.first.keys).to eq(%w[k start end count sum_v])
    end

    it "writes each window as soon as the stream reaches its end, before the input ends" do
      status = stream_cli("tumbling", "--quiet", "--size", "10") do |input, output|
        input.write(%({"ts":1003}\n{"ts":1010}\n))
        input.flush
        ready = IO.select([output], nil, nil, 5)
        line = ready && output.gets
        input.close
        expect(line).to eq(%({"start":1000,"end":1010,"count":1}\n))
        expect(output.read).to eq(%({"start":1010,"end":1020,"count":1}\n))
      end
      expect(status).to be_success
    end

    it "ends as a pipeline's tools do once its reader leaves, though its input stays open" do
      command = WindowMachinesSpec::Command
      Open3.popen3(command::ENV_FOR_CHILD, *command_line("tumbling", "--quiet", "--size", "10"),
                   chdir: command::ROOT) do |input, output, error, waiter|
        input.write(%({"ts":1003}\n{"ts":1010}\n))
        input.flush
        expect(IO.select([output], nil, nil, 5) && output.gets).to eq(%({"start":1000,"end":1010,"count":1}\n))
        output.close
        # Closes [1010, 1020), which has nowhere to go; nothing more comes.
        input.write(%({"ts":1020}\n))
        input.flush
        finished = waiter.join(10)
        Process.kill(:KILL, waiter.pid) unless finished
        expect(finished).to be_truthy, "still running 10 s after its reader left"
        expect(waiter.value.termsig).to eq(Signal.list.fetch("PIPE"))
        input.close
        error.read
      end
    end

    it "stops on SIGTERM while its reader reads nothing, claiming a saved state only when there is one" do
      Dir.mktmpdir do |dir|
        # 100,000 one-second windows: megabytes of output, far past what a
        # pipe holds.
        input = File.join(dir, "events.jsonl")
        File.write(input, Array.new(100_000) { |n| %({"k":"k#{n}","ts":#{n}}\n) }.join)
        state = File.join(dir, "run.state")
        arguments = command_line("tumbling", "--quiet", "--size", "1", "--key", "k", "--state", state, input)
        # Past the first checkpoint, which the full pipe may have held up.
        message = stopped_by_sigterm(arguments, after: 1.5)
        expect(message).to start_with("window_machines: stopped by SIGTERM")
        expect(message.include?("state saved")).to eq(File.exist?(state))
      end
    end

    it "writes into a FIFO once its reader opens it, and stops on SIGTERM while none has" do
      Dir.mktmpdir do |dir|
        fifo = File.join(dir, "results")
        File.mkfifo(fifo)
        arguments = command_line("tumbling", "--quiet", "--size", "10", "--output", fifo, fixture("windows.jsonl"))
        running(arguments) do |error, waiter|
          sleep 0.5 # the run waits for a reader
          expect(File.read(fifo).lines.size).to eq(3)
          expect(waiter.value).to be_success, error.read
        end
        expect(stopped_by_sigterm(arguments, after: 0.5)).to eq("window_machines: stopped by SIGTERM\n")
      end
    end

    it "stops on SIGTERM while its --late FIFO's reader reads nothing" do
      Dir.mktmpdir do |dir|
        # One event, then 100,000 late ones: megabytes of late lines.
        input = File.join(dir, "events.jsonl")
        File.write(input, %({"ts":1000000}\n) + (%({"ts":1,"pad":"#{"x" * 40}"}\n) * 100_000))
        late = File.join(dir, "late")
        File.mkfifo(late)
        File.open(late, File::RDONLY | File::NONBLOCK) do |_never_read|
          arguments = command_line("tumbling", "--quiet", "--size", "10", "--late", late, input)
          expect(stopped_by_sigterm(arguments, after: 1)).to eq("window_machines: stopped by SIGTERM\n")
        end
      end
    end

    it "moves window starts by --offset" do
      result = run_ok("tumbling", "--size", "10", "--offset", "5", "--key", "k", "--agg", "count,sum:v",
                      fixture("windows.jsonl"))
      expect_windows(result.records, [
                       { "k" => "a", "start" => 995, "end" => 1005, "count" => 1, "sum_v" => 1 },
                       { "k" => "b", "start" => 995, "end" => 1005, "count" => 1, "sum_v" => 2 },
                       { "k" => "a", "start" => 1005, "end" => 1015, "count" => 2, "sum_v" => 7 },
                       { "k" => "a", "start" => 1015, "end" => 1025, "count" => 1, "sum_v" => 6 },
                       { "k" => "b", "start" => 1015, "end" => 1025, "count" => 1, "sum_v" => 5 }
                     ], ["k"])
    end

    it "without --key counts everything in one window per interval and writes no key column" do
      result = run_ok("tumbling", "--size", "10", fixture("windows.jsonl"))
      expect(result.stdout).to eq(<<~JSONL)
        {"start":1000,"end":1010,"count":3}
        {"start":1010,"end":1020,"count":2}
        {"start":1020,"end":1030,"count":1}
      JSONL
    end

    it "keys by several nested fields, records closing at the same moment in any order of keys" do
      result = run_ok("tumbling", "--size", "1m", "--time", "meta.at", "--key", "user.plan", "--key", "user.id",
                      fixture("nested.jsonl"))
      # 1699999980 and 1700000100 are multiples of 60.
      expect_windows(result.records, [
                       { "user.plan" => "pro", "user.id" => "u1", "start" => 1_699_999_980, "end" => 1_700_000_040, "count" => 2 },
                       { "user.plan" => "free", "user.id" => "u2", "start" => 1_699_999_980, "end" => 1_700_000_040, "count" => 1 },
                       { "user.plan" => "free", "user.id" => "u1", "start" => 1_699_999_980, "end" => 1_700_000_040, "count" => 1 },
                       { "user.plan" => "pro", "user.id" => nil, "start" => 1_699_999_980, "end" => 1_700_000_040, "count" => 1 },
                       { "user.plan" => "pro", "user.id" => "u2", "start" => 1_700_000_100, "end" => 1_700_000_160, "count" => 1 }
                     ], ["user.plan", "user.id"])
      expect(result.records.first.keys).to eq(["user.plan", "user.id", "start", "end", "count"])
    end

    it "writes ISO 8601 window bounds in UTC for ISO input" do
      result = run_ok("tumbling", "--size", "5m", "--key", "user", fixture("iso_offsets.jsonl"))
      expect_windows(result.records, [
                       { "user" => "ana", "start" => "2026-11-30T10:00:00Z", "end" => "2026-11-30T10:05:00Z", "count" => 3 },
                       { "user" => "ben", "start" => "2026-11-30T10:00:00Z", "end" => "2026-11-30T10:05:00Z", "count" => 1 },
                       { "user" => "ana", "start" => "2026-11-30T10:05:00Z", "end" => "2026-11-30T10:10:00Z", "count" => 1 },
                       { "user" => "ben", "start" => "2026-11-30T10:05:00Z", "end" => "2026-11-30T10:10:00Z", "count" => 1 }
                     ], ["user"])
    end

    it "aggregates per window: sum, min, max, mean, first, last and collect" do
      result = run_ok("tumbling", "--size", "10", "--key", "k",
                      "--agg", "sum:v,min:v,max:v,mean:v,first:v,last:v,collect:v", fixture("windows.jsonl"))
      a = result.records.find { |record| record["k"] == "a" && record["start"] == 1000 }
      expect(a).to eq("k" => "a", "start" => 1000, "end" => 1010, "sum_v" => 4, "min_v" => 1, "max_v" => 3,
                      "mean_v" => 2.0, "first_v" => 1, "last_v" => 3, "collect_v" => [1, 3])
    end
  end

  describe "hopping" do
    it "puts each event in every window of --size starting at a multiple of --advance that holds it" do
      result = run_ok("hopping", "--size", "10", "--advance", "5", "--agg", "count,sum:v", fixture("windows.jsonl"))
      expect(result.stdout).to eq(<<~JSONL)
        {"start":995,"end":1005,"count":2,"sum_v":3}
        {"start":1000,"end":1010,"count":3,"sum_v":6}
        {"start":1005,"end":1015,"count":2,"sum_v":7}
        {"start":1010,"end":1020,"count":2,"sum_v":9}
        {"start":1015,"end":1025,"count":2,"sum_v":11}
        {"start":1020,"end":1030,"count":1,"sum_v":6}
      JSONL
    end

    it "with an advance that does not divide the size still holds exactly the events in [start, end)" do
      result = run_ok("hopping", "--size", "10", "--advance", "4", "--agg", "collect:v", fixture("windows.jsonl"))
      # Starts at multiples of 4 from 992 to 1020; ts 1000 1004 1009 1010 1017 1021 hold v 1..6.
      expect(result.records).to eq(
        [{ "start" => 992, "end" => 1002, "collect_v" => [1] },
         { "start" => 996, "end" => 1006, "collect_v" => [1, 2] },
         { "start" => 1000, "end" => 1010, "collect_v" => [1, 2, 3] },
         { "start" => 1004, "end" => 1014, "collect_v" => [2, 3, 4] },
         { "start" => 1008, "end" => 1018, "collect_v" => [3, 4, 5] },
         { "start" => 1012, "end" => 1022, "collect_v" => [5, 6] },
         { "start" => 1016, "end" => 1026, "collect_v" => [5, 6] },
         { "start" => 1020, "end" => 1030, "collect_v" => [6] }]
      )
    end

    it "with --advance equal to --size writes what tumbling writes" do
      hopping = run_ok("hopping", "--size", "10", "--advance", "10", "--key", "k", "--agg", "count,sum:v",
                       fixture("windows.jsonl"))
      tumbling = run_ok("tumbling", "--size", "10", "--key", "k", "--agg", "count,sum:v", fixture("windows.jsonl"))
      expect(canonical(hopping.records, "end", ["k"])).to eq(canonical(tumbling.records, "end", ["k"]))
    end

    it "honours --offset" do
      result = run_ok("hopping", "--size", "10", "--advance", "5", "--offset", "2", fixture("windows.jsonl"))
      # Starts at 2 mod 5: ts 1000 1004 1009 1010 1017 1021.
      expect(result.records).to eq(
        [{ "start" => 992, "end" => 1002, "count" => 1 },
         { "start" => 997, "end" => 1007, "count" => 2 },
         { "start" => 1002, "end" => 1012, "count" => 3 },
         { "start" => 1007, "end" => 1017, "count" => 2 },
         { "start" => 1012, "end" => 1022, "count" => 2 },
         { "start" => 1017, "end" => 1027, "count" => 2 }]
      )
    end
  end
end
