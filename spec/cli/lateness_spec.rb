# frozen_string_literal: true

# Out-of-order and late events (README › From the shell): with stream time S
# (the largest timestamp seen), a session event is late iff ts < S - lag, and
# a window event iff every window holding it has end + grace <= S - lag. Late
# events are counted, reported on standard error and written to --late FILE
# as read; never silently dropped. Times here are small epoch seconds.

require "csv"

RSpec.describe "window_machines late events" do
  include WindowMachinesSpec::Command

  include_context "in a temporary directory"

  # Late events are reported on standard error.
  def run_ok(*args, stdin: nil) = super(*args, stdin: stdin, silent: false)

  def late_lines(*numbers, from: "late.jsonl") = numbers.map { |number| fixture_text(from).lines[number - 1] }.join

  describe "sessions" do
    # --gap 5 --lag 10 over late.jsonl (ts/id): 1000/1 1020/2 1010/3 1009/4 1030/5 1025/6 1016/7 1050/8.
    # 1010 is exactly lag behind 1020: on time. 1009 is one tick more: late.
    # 1025 joins 1020 and 1030 (each exactly one gap away) into one session;
    # 1016 would fit that session too but is 14 behind 1030: late.
    let(:expected) do
      <<~JSONL
        {"first":1000,"last":1000,"count":1,"collect_id":[1]}
        {"first":1010,"last":1010,"count":1,"collect_id":[3]}
        {"first":1020,"last":1030,"count":3,"collect_id":[2,6,5]}
        {"first":1050,"last":1050,"count":1,"collect_id":[8]}
      JSONL
    end

    it "keeps events up to --lag behind the stream time and reports the later ones on standard error" do
      result = run_ok("sessions", "--gap", "5", "--lag", "10", "--agg", "count,collect:id", fixture("late.jsonl"))
      expect(result.stdout).to eq(expected)
      expect(result.stderr_lines).to eq(["window_machines: 2 late events"])
    end

    it "writes every late event's line, as read, to --late FILE and names the file in the report" do
      late = File.join(@dir, "late.jsonl")
      result = run_ok("sessions", "--gap", "5", "--lag", "10", "--agg", "count,collect:id", "--late", late,
                      fixture("late.jsonl"))
      expect(result.stdout).to eq(expected)
      expect(File.binread(late)).to eq(late_lines(4, 7))
      expect(result.stderr_lines).to eq(["window_machines: 2 late events written to #{late}"])
    end

    it "without --lag counts every event behind the stream time as late" do
      late = File.join(@dir, "late.jsonl")
      result = run_ok("sessions", "--gap", "5", "--agg", "count,collect:id", "--late", late, fixture("late.jsonl"))
      expect(result.stdout).to eq(jsonl([1000, 1020, 1030, 1050].each_with_index.map do |ts, index|
        { "first" => ts, "last" => ts, "count" => 1, "collect_id" => [[1, 2, 5, 8][index]] }
      end))
      expect(File.binread(late)).to eq(late_lines(3, 4, 6, 7))
      expect(late_count(result.stderr)).to eq(4)
    end

    it "decides lateness by time alone: exactly lag behind joins an open session, one tick more is late though the session is open" do
      input = <<~JSONL
        {"ts":1000,"id":1}
        {"ts":1015,"id":2}
        {"ts":1005,"id":3}
        {"ts":1016,"id":4}
        {"ts":1006,"id":5}
        {"ts":1005,"id":6}
      JSONL
      late = File.join(@dir, "late.jsonl")
      result = run_ok("sessions", "--gap", "5", "--lag", "10", "--agg", "count,collect:id", "--late", late, stdin: input)
      expect(result.stdout).to eq(<<~JSONL)
        {"first":1000,"last":1006,"count":3,"collect_id":[1,3,5]}
        {"first":1015,"last":1016,"count":2,"collect_id":[2,4]}
      JSONL
      expect(File.binread(late)).to eq(%({"ts":1005,"id":6}\n))
      expect(result.stderr).to match(/\Awindow_machines: 1 late events? written to #{Regexp.escape(late)}\n\z/)
    end

    it "closes a session once last + gap < stream time - lag, not before" do
      status = stream_cli("sessions", "--quiet", "--gap", "5", "--lag", "10") do |input, output|
        # Session [1000, 1000] may close once 1005 < S - 10, that is at S = 1016.
        input.write(%({"ts":1000}\n{"ts":1015}\n))
        input.flush
        early = IO.select([output], nil, nil, 0.5)
        input.write(%({"ts":1016}\n))
        input.flush
        ready = IO.select([output], nil, nil, 5)
        line = ready && output.gets
        input.close
        expect(early).to be_nil
        expect(line).to eq(%({"first":1000,"last":1000,"count":1}\n))
        expect(output.read).to eq(%({"first":1015,"last":1016,"count":2}\n))
      end
      expect(status).to be_success
    end

    it "keeps stream time across files: an event in the second file can be late for the first" do
      one = write_file(@dir, "one.jsonl", %({"ts":1000}\n{"ts":1050}\n))
      two = write_file(@dir, "two.jsonl", %({"ts":1045}\n{"ts":1020}\n))
      result = run_ok("sessions", "--gap", "5", "--lag", "10", one, two)
      expect(result.stdout).to eq(<<~JSONL)
        {"first":1000,"last":1000,"count":1}
        {"first":1045,"last":1050,"count":2}
      JSONL
      expect(late_count(result.stderr)).to eq(1)
    end

    it "writes late CSV rows to --late FILE after the header, as read" do
      late = File.join(@dir, "late.csv")
      result = run_ok("sessions", "--gap", "5", "--lag", "10", "--late", late, fixture("late.csv"))
      expect(result.records.map { |record| record["count"] }).to eq([1, 1, 3, 1])
      expect(File.binread(late)).to eq("ts,id\n1009,4\n1016,7\n")
      expect(late_count(result.stderr)).to eq(2)
    end

    it "ends a late CSV row as its header ends, whatever its own line ending, or none, was" do
      input = write_file(@dir, "crlf.csv", "ts\r\n5\r\n1")
      late = File.join(@dir, "late.csv")
      result = run_ok("tumbling", "--size", "2", "--late", late, input)
      expect(result.records).to eq([{ "start" => 4, "end" => 6, "count" => 1 }])
      expect(File.binread(late)).to eq("ts\r\n1\r\n")
      expect(CSV.read(late)).to eq([["ts"], ["1"]])
      mixed = write_file(@dir, "mixed.csv", "ts\n5\n1\r\n0\n")
      run_ok("tumbling", "--size", "2", "--late", late, mixed)
      expect(File.binread(late)).to eq("ts\n1\n0\n")
    end

    it "reports nothing when no event is late" do
      result = run_ok("sessions", "--gap", "30s", fixture("sessions_ms.jsonl"))
      expect(result.stderr).to eq("")
    end
  end

  describe "tumbling" do
    it "takes an event while its window is open, with --grace and --lag adding up, and reports the rest" do
      late = File.join(@dir, "late.jsonl")
      result = run_ok("tumbling", "--size", "10", "--grace", "3", "--lag", "2", "--agg", "count,collect:id",
                      "--late", late, fixture("late.jsonl"))
      # A window closes once end + 3 <= S - 2: [1000, 1010) at S = 1015, [1010, 1020) at 1025.
      expect(result.stdout).to eq(<<~JSONL)
        {"start":1000,"end":1010,"count":1,"collect_id":[1]}
        {"start":1010,"end":1020,"count":1,"collect_id":[3]}
        {"start":1020,"end":1030,"count":2,"collect_id":[2,6]}
        {"start":1030,"end":1040,"count":1,"collect_id":[5]}
        {"start":1050,"end":1060,"count":1,"collect_id":[8]}
      JSONL
      expect(File.binread(late)).to eq(late_lines(4, 7))
      expect(result.stderr_lines).to eq(["window_machines: 2 late events written to #{late}"])
    end

    it "closes a window exactly when end + grace <= stream time - lag" do
      input = <<~JSONL
        {"ts":1000,"id":1}
        {"ts":1014,"id":2}
        {"ts":1005,"id":3}
        {"ts":1015,"id":4}
        {"ts":1006,"id":5}
      JSONL
      late = File.join(@dir, "late.jsonl")
      result = run_ok("tumbling", "--size", "10", "--grace", "3", "--lag", "2", "--agg", "count,collect:id",
                      "--late", late, stdin: input)
      expect(result.stdout).to eq(<<~JSONL)
        {"start":1000,"end":1010,"count":2,"collect_id":[1,3]}
        {"start":1010,"end":1020,"count":2,"collect_id":[2,4]}
      JSONL
      expect(File.binread(late)).to eq(%({"ts":1006,"id":5}\n))
    end

    it "with no grace and no lag takes nothing behind a window's end" do
      input = %({"ts":1000}\n{"ts":1010}\n{"ts":1009}\n{"ts":1010}\n)
      result = run_ok("tumbling", "--size", "10", stdin: input)
      expect(result.stdout).to eq(%({"start":1000,"end":1010,"count":1}\n{"start":1010,"end":1020,"count":2}\n))
      expect(late_count(result.stderr)).to eq(1)
    end
  end

  describe "hopping" do
    it "calls an event late only when every window holding it has closed, and adds it to the open ones only" do
      input = <<~JSONL
        {"ts":1000,"id":1}
        {"ts":1012,"id":2}
        {"ts":1004,"id":3}
        {"ts":1007,"id":4}
      JSONL
      late = File.join(@dir, "late.jsonl")
      result = run_ok("hopping", "--size", "10", "--advance", "5", "--agg", "count,collect:id", "--late", late,
                      stdin: input)
      # At S = 1012 windows ending at 1005 and 1010 have closed: 1004 is in
      # those two only (late); 1007 is also in [1005, 1015), still open.
      expect(result.stdout).to eq(<<~JSONL)
        {"start":995,"end":1005,"count":1,"collect_id":[1]}
        {"start":1000,"end":1010,"count":1,"collect_id":[1]}
        {"start":1005,"end":1015,"count":2,"collect_id":[4,2]}
        {"start":1010,"end":1020,"count":1,"collect_id":[2]}
      JSONL
      expect(File.binread(late)).to eq(%({"ts":1004,"id":3}\n))
    end
  end
end
