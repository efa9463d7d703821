# frozen_string_literal: true

# `window_machines sessions` on small hand-checked inputs (README › From the shell).
RSpec.describe "window_machines sessions" do
  include WindowMachinesSpec::Command

  include_context "in a temporary directory"

  def sessions(*args, stdin: nil)
    result = run_cli("sessions", "--quiet", *args, stdin: stdin)
    expect(result).to be_success, result.describe
    expect(result.stderr).to eq(""), result.describe
    result
  end

  it "writes each user's sessions as they close, earliest last event first, joining events exactly one gap apart" do
    result = sessions("--gap", "30s", "--key", "user", "--agg", "count,sum:amount", fixture("sessions_ms.jsonl"))
    # u1 at +0s and +30s (exactly the gap) is one session, +61s is 31s on: a new one.
    # u2 at +10s and +45s are 35s apart: two sessions. The last event (+200s) closes
    # everything before it; only u2's last session waits for the end of input.
    expect(result.stdout).to eq(<<~JSONL)
      {"user":"u2","first":1700000010000,"last":1700000010000,"count":1,"sum_amount":5}
      {"user":"u1","first":1700000000000,"last":1700000030000,"count":2,"sum_amount":30}
      {"user":"u2","first":1700000045000,"last":1700000045000,"count":1,"sum_amount":7}
      {"user":"u1","first":1700000061000,"last":1700000061000,"count":1,"sum_amount":1}
      {"user":"u2","first":1700000200000,"last":1700000200000,"count":1,"sum_amount":3}
    JSONL
  end

  it "without --key puts every event under one key and writes no key column" do
    result = sessions("--gap", "30s", "--agg", "count,sum:amount", fixture("sessions_ms.jsonl"))
    expect(result.stdout).to eq(<<~JSONL)
      {"first":1700000000000,"last":1700000061000,"count":5,"sum_amount":43}
      {"first":1700000200000,"last":1700000200000,"count":1,"sum_amount":3}
    JSONL
  end

  it "counts events by default" do
    result = sessions("--gap", "30s", fixture("sessions_ms.jsonl"))
    expect(result.records).to eq(
      [{ "first" => 1_700_000_000_000, "last" => 1_700_000_061_000, "count" => 5 },
       { "first" => 1_700_000_200_000, "last" => 1_700_000_200_000, "count" => 1 }]
    )
  end

  it "reads a bare integer duration in the time field's own ticks (here milliseconds)" do
    with_unit = sessions("--gap", "30s", "--key", "user", fixture("sessions_ms.jsonl"))
    bare = sessions("--gap", "30000", "--key", "user", fixture("sessions_ms.jsonl"))
    one_tick_less = sessions("--gap", "29999", "--key", "user", fixture("sessions_ms.jsonl"))
    expect(bare.stdout).to eq(with_unit.stdout)
    # One tick less and u1's +0s and +30s no longer share a session.
    expect(one_tick_less.records.count { |record| record["user"] == "u1" }).to eq(3)
  end

  it "follows dotted paths for the key, the time and aggregate fields; an event without the key field has key null" do
    result = sessions("--gap", "15s", "--time", "meta.at", "--key", "user.id",
                      "--agg", "count,count:order.total,sum:order.total,max:order.total", fixture("nested.jsonl"))
    expect(result.records).to eq(
      [{ "user.id" => "u2", "first" => 1_700_000_005, "last" => 1_700_000_005,
         "count" => 1, "count_order.total" => 1, "sum_order.total" => 3, "max_order.total" => 3 },
       { "user.id" => "u1", "first" => 1_700_000_000, "last" => 1_700_000_020,
         "count" => 3, "count_order.total" => 2, "sum_order.total" => 20, "max_order.total" => 12 },
       { "user.id" => nil, "first" => 1_700_000_030, "last" => 1_700_000_030,
         "count" => 1, "count_order.total" => 1, "sum_order.total" => 1, "max_order.total" => 1 },
       { "user.id" => "u2", "first" => 1_700_000_100, "last" => 1_700_000_100,
         "count" => 1, "count_order.total" => 1, "sum_order.total" => 5, "max_order.total" => 5 }]
    )
    expect(result.records.first.keys).to eq(["user.id", "first", "last", "count", "count_order.total",
                                             "sum_order.total", "max_order.total"])
  end

  it "with several --key options keys by all of them, one column each, in the order given" do
    result = sessions("--gap", "15s", "--time", "meta.at", "--key", "user.plan", "--key", "user.id",
                      fixture("nested.jsonl"))
    expect(result.stdout).to eq(<<~JSONL)
      {"user.plan":"free","user.id":"u2","first":1700000005,"last":1700000005,"count":1}
      {"user.plan":"pro","user.id":"u1","first":1700000000,"last":1700000010,"count":2}
      {"user.plan":"free","user.id":"u1","first":1700000020,"last":1700000020,"count":1}
      {"user.plan":"pro","user.id":null,"first":1700000030,"last":1700000030,"count":1}
      {"user.plan":"pro","user.id":"u2","first":1700000100,"last":1700000100,"count":1}
    JSONL
  end

  it "keeps key values as they are in the input: the string \"7\", the number 7, a missing field and null" do
    input = <<~JSONL
      {"ts":100,"k":"7"}
      {"ts":101,"k":7}
      {"ts":102}
      {"ts":103,"k":null}
    JSONL
    result = sessions("--gap", "10", "--key", "k", stdin: input)
    expect(canonical(result.records, "last", ["k"])).to eq(
      [{ "k" => "7", "first" => 100, "last" => 100, "count" => 1 },
       { "k" => 7, "first" => 101, "last" => 101, "count" => 1 },
       { "k" => nil, "first" => 102, "last" => 103, "count" => 2 }]
    )
  end

  it "merges two open sessions when an out-of-order event falls within the gap of both" do
    input = <<~JSONL
      {"ts":1000,"id":1}
      {"ts":1020,"id":2}
      {"ts":1010,"id":3}
      {"ts":1031,"id":4}
    JSONL
    result = sessions("--gap", "10", "--lag", "100", "--agg", "count,collect:id", stdin: input)
    expect(result.records).to eq(
      [{ "first" => 1000, "last" => 1020, "count" => 3, "collect_id" => [1, 3, 2] },
       { "first" => 1031, "last" => 1031, "count" => 1, "collect_id" => [4] }]
    )
  end

  it "computes every aggregate: nulls and missing fields are skipped by count:F, sum, min, max and mean, kept by first, last and collect" do
    input = <<~JSONL
      {"ts":100,"v":4}
      {"ts":103,"v":null}
      {"ts":101,"v":2.5}
      {"ts":102}
      {"ts":104,"v":-1}
    JSONL
    result = sessions("--gap", "10", "--lag", "10",
                      "--agg", "count,count:v,sum:v,min:v,max:v,mean:v,first:v,last:v,collect:v", stdin: input)
    expect(result.records).to eq(
      [{ "first" => 100, "last" => 104, "count" => 5, "count_v" => 3, "sum_v" => 5.5, "min_v" => -1, "max_v" => 4,
         "mean_v" => 5.5 / 3, "first_v" => 4, "last_v" => -1, "collect_v" => [4, 2.5, nil, nil, -1] }]
    )
    expect(result.records.first.keys).to eq(%w[first last count count_v sum_v min_v max_v mean_v first_v last_v collect_v])
  end

  it "gives sum 0, and null for mean, min, max, first and last, when no event has the field" do
    result = sessions("--gap", "10", "--agg", "sum:v,mean:v,min:v,max:v,first:v,last:v,count:v",
                      stdin: %({"ts":100}\n{"ts":101,"v":null}\n))
    expect(result.stdout).to eq(
      %({"first":100,"last":101,"sum_v":0,"mean_v":null,"min_v":null,"max_v":null,"first_v":null,"last_v":null,"count_v":0}\n)
    )
  end

  it "writes integer sums exactly, past 2**64, and a float sum or mean with a decimal point" do
    input = <<~JSONL
      {"ts":100,"v":9000000000000000000,"w":1,"x":1.5}
      {"ts":101,"v":9000000000000000000,"w":3,"x":1.5}
      {"ts":102,"v":9000000000000000000,"w":2,"x":2}
    JSONL
    result = sessions("--gap", "10", "--agg", "sum:v,sum:w,mean:w,sum:x", stdin: input)
    expect(result.stdout).to eq(%({"first":100,"last":102,"sum_v":27000000000000000000,"sum_w":6,"mean_w":2.0,"sum_x":5.0}\n))
  end

  it "compares integers past 64 bits with floats exactly, and divides a mean's exact sum, as Ruby does" do
    values = [2**64, 2**64 + 1, 250_831_712_069_219_644]
    input = <<~JSONL
      {"ts":1,"k":"max","v":18446744073709551616.0}
      {"ts":2,"k":"max","v":#{values[1]}}
      {"ts":3,"k":"min","v":#{values[1]}}
      {"ts":4,"k":"min","v":18446744073709551616.0}
      {"ts":5,"k":"mean","v":#{values[2]}}
      {"ts":6,"k":"mean","v":#{values[2]}}
      {"ts":7,"k":"mean","v":#{values[2]}}
    JSONL
    result = sessions("--gap", "10", "--key", "k", "--agg", "min:v,max:v,mean:v", stdin: input)
    rows = result.stdout.lines.to_h { |line| JSON.parse(line).then { |row| [row["k"], row] } }
    expect(rows["max"]["max_v"]).to eq(values[1])
    expect(rows["min"]["min_v"]).to eql(18_446_744_073_709_551_616.0)
    expect(rows["mean"]["mean_v"]).to eql((values[2] * 3).fdiv(3))
  end

  it "takes first and last by timestamp, equal timestamps in the order they were read" do
    input = <<~JSONL
      {"ts":105,"v":"b"}
      {"ts":100,"v":"a1"}
      {"ts":100,"v":"a2"}
      {"ts":105,"v":"c"}
    JSONL
    result = sessions("--gap", "10", "--lag", "10", "--agg", "first:v,last:v,collect:v", stdin: input)
    expect(result.records).to eq(
      [{ "first" => 100, "last" => 105, "first_v" => "a1", "last_v" => "c", "collect_v" => %w[a1 a2 b c] }]
    )
  end

  it "treats several files as one stream, in the order given" do
    lines = fixture_text("sessions_ms.jsonl").lines
    one = write_file(@dir, "one.jsonl", lines[0, 3].join)
    two = write_file(@dir, "two.jsonl", lines[3..].join)
    whole = sessions("--gap", "30s", "--key", "user", "--agg", "count,sum:amount", fixture("sessions_ms.jsonl"))
    split = sessions("--gap", "30s", "--key", "user", "--agg", "count,sum:amount", one, two)
    expect(split.stdout).to eq(whole.stdout)
  end

  # The Ruby classes hold at most 32 sessions a key; the command holds up to
  # 4096, and a state file keeps them.
  it "holds far more than 32 of one key's sessions open, through a stop and a resume" do
    lines = (0...100).map { |n| %({"ts":#{1000 + (n * 90)},"user":"amara"}\n) }
    options = %w[--gap 60 --lag 10000 --key user]
    whole = sessions(*options, write_file(@dir, "whole.jsonl", lines.join))
    expect(whole.records.map { |record| record["first"] }).to eq((0...100).map { |n| 1000 + (n * 90) })

    # Stopped by a bad line with 50 sessions open, then resumed with it mended.
    input = write_file(@dir, "in.jsonl", (lines[0, 50] + [%({"ts":"soon"}\n)] + lines[50..]).join)
    output = File.join(@dir, "out.jsonl")
    state = File.join(@dir, "state")
    stopped = run_cli("sessions", "--quiet", *options, "--output", output, "--state", state, input)
    expect(stopped.exitstatus).to eq(1), stopped.describe
    expect(File.size(output)).to eq(0)
    File.binwrite(input, (lines[0, 50] + [lines[49]] + lines[50..]).join)
    resumed = run_cli("sessions", "--quiet", *options, "--output", output, "--state", state, input)
    expect(resumed).to be_success, resumed.describe
    expect(File.read(output)).to eq(whole.stdout.sub(%("last":5410,"count":1}), %("last":5410,"count":2})))
  end

  it "refuses an event that would give a key a 4097th open session, as bad input" do
    lines = (0..4096).map { |n| %({"ts":#{n * 2}}\n) }
    path = write_file(@dir, "busy.jsonl", lines.join)
    result = run_cli("sessions", "--quiet", "--gap", "1", "--lag", "100000", path)
    expect(result.exitstatus).to eq(1), result.describe
    expect(result.stderr).to include("#{path}:4097: a key would hold more than 4096 sessions open at once")
    skipped = run_cli("sessions", "--quiet", "--gap", "1", "--lag", "100000", "--skip-bad", path)
    expect(skipped).to be_success, skipped.describe
    expect(skipped.records.size).to eq(4096)
  end

  it "takes an event that opens a key's 4097th session while closing older ones: they are not open" do
    lines = (0..4095).map { |n| %({"ts":#{n * 2}}\n) } << %({"ts":108190}\n)
    path = write_file(@dir, "closing.jsonl", lines.join)
    result = run_cli("sessions", "--quiet", "--gap", "1", "--lag", "100000", path)
    expect(result).to be_success, result.describe
    # The watermark, 108190 - 100000 - 1, closes every session but the one at 8190.
    expect(result.records.size).to eq(4097)
    expect(result.records.last(2).map { |record| record["first"] }).to eq([8190, 108_190])
  end

  it "writes a session as soon as it closes, before the input ends" do
    status = stream_cli("sessions", "--quiet", "--gap", "10", "--output-format", "jsonl") do |input, output|
      input.write(%({"ts":100}\n{"ts":200}\n))
      input.flush
      ready = IO.select([output], nil, nil, 5)
      line = ready && output.gets
      input.close
      expect(line).to eq(%({"first":100,"last":100,"count":1}\n))
      expect(output.read).to eq(%({"first":200,"last":200,"count":1}\n))
    end
    expect(status).to be_success
  end
end
