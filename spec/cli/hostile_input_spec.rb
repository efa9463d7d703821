# frozen_string_literal: true

# What an adversarial run of the command found: files that are the same
# file, names that collide, lengths and arguments past what fits, text that
# is not text, damaged state, outputs that are devices, inputs that are
# pipes, several CSV inputs with different headers.
RSpec.describe "window_machines against hostile input" do
  include WindowMachinesSpec::Command

  include_context "in a temporary directory"

  def path(name) = File.join(@dir, name)

  def write(name, text)
    File.binwrite(path(name), text)
    path(name)
  end

  let(:events) { write("events.jsonl", %({"ts":1,"k":"a"}\n{"ts":5,"k":"a"}\n{"ts":40,"k":"b"}\n)) }

  describe "files written over files in use" do
    it "refuses an output that is an input, and leaves the input alone" do
      before = File.binread(events)
      %w[--output --late].each do |option|
        result = run_cli("sessions", "--gap", "10", option, events, events)
        expect(result.exitstatus).to eq(2), result.describe
        expect(result.stderr).to include("are the same file")
      end
      result = run_cli("sessions", "--gap", "10", "--skip-bad", "--bad", events, events)
      expect(result.exitstatus).to eq(2), result.describe
      expect(File.binread(events)).to eq(before)
    end

    it "refuses a state file that is also the output, and two outputs in one file" do
      output = path("out.jsonl")
      [["--output", output, "--state", output], ["--output", output, "--late", output]].each do |options|
        result = run_cli("sessions", "--gap", "10", *options, events)
        expect(result.exitstatus).to eq(2), result.describe
      end
    end

    it "reads the same input twice when asked to" do
      result = run_cli("tumbling", "--size", "100", events, events)
      expect(result.exitstatus).to eq(0), result.describe
      # The window [0, 100) is still open when the second reading starts.
      expect(result.records).to eq([{ "start" => 0, "end" => 100, "count" => 6 }])
    end
  end

  it "refuses two columns of one name" do
    [%w[--key k --key k], %w[--key first], %w[--agg count,count]].each do |options|
      result = run_cli("sessions", "--gap", "10", *options, events)
      expect(result.exitstatus).to eq(2), result.describe
      expect(result.stderr).to include("two columns named")
    end
  end

  it "refuses lengths past 2**64-1 ticks, or seconds, as usage errors" do
    ["18446744073709551616", "#{"9" * 40}d"].each do |length|
      result = run_cli("sessions", "--gap", length, events)
      expect(result.exitstatus).to eq(2), result.describe
      expect(result.stderr).to include("too long")
      expect(result.stderr).not_to include("from ")
    end
  end

  it "refuses an argument that is not UTF-8 without a backtrace" do
    result = run_cli("sessions", "--gap", "10", "--key", "\xFF".b, events)
    expect(result.exitstatus).to eq(2), result.describe
    expect(result.stderr).to include("not valid UTF-8")
  end

  it "reads UTF-8 names and paths whatever the locale, LANG=C included, where Ruby hands them over as another encoding" do
    dir = Dir.mktmpdir
    input = File.join(dir, "données.jsonl")
    File.write(input, %({"ts":1,"clé":"a","é":2}\n))
    c_locale = { "LANG" => "C", "LC_ALL" => nil, "LC_CTYPE" => nil }
    result = run_cli("tumbling", "--size", "10", "--key", "clé", "--agg", "sum:é", input,
                     "--output", File.join(dir, "résultat.jsonl"), env: c_locale)
    expect(result).to be_success, result.describe
    expect(File.read(File.join(dir, "résultat.jsonl"))).to eq(%({"clé":"a","start":0,"end":10,"sum_é":2}\n))
    refused = run_cli("sessions", "--gap", "10", "--key", "\xFF".b, input, env: c_locale)
    expect(refused.exitstatus).to eq(2), refused.describe
    expect(refused.stderr).to include("not valid UTF-8")
  ensure
    FileUtils.rm_rf(dir)
  end

  describe "lines that are not text" do
    {
      "invalid UTF-8" => %({"ts":1,"x":"\xFF\xFE"}\n).b,
      "an unknown escape" => %({"ts":1,"x":"\\q"}\n),
      "a short unicode escape" => %({"ts":1,"x":"\\u12"}\n)
    }.each do |what, line|
      it "stops at a line with #{what}, as bad input, and never copies it out" do
        input = write("bad.jsonl", line)
        result = run_cli("sessions", "--gap", "10", "--agg", "collect:x", input)
        expect(result.exitstatus).to eq(1), result.describe
        expect(result.stderr).to include("bad.jsonl:1:")
        expect(result.stdout).to eq("")
      end
    end

    it "stops at a CSV cell that is not UTF-8, saying at which byte" do
      input = write("bad.csv", "ts,k\n1,\xFF\n".b)
      result = run_cli("sessions", "--gap", "10", "--key", "k", input)
      expect(result.exitstatus).to eq(1), result.describe
      expect(result.stderr).to include("bad.csv:2: the line is not valid UTF-8 at column 3")
    end

    it "stops at a lone surrogate in a field it reads, at the escape's column, and steps over one in a name" do
      input = write("surrogates.jsonl", %({"ts":1,"k\\ud800":1,"k":"a"}\n{"ts":2,"k":"ab\\ud800"}\n))
      result = run_cli("sessions", "--gap", "10", "--key", "k", input)
      expect(result.exitstatus).to eq(1), result.describe
      expect(result.stderr).to include("surrogates.jsonl:2: malformed JSON at column 16: unpaired surrogate \\ud800")
      expect(result.stdout).to eq("")
      skipped = run_cli("sessions", "--gap", "10", "--key", "k", "--skip-bad", input)
      expect(skipped).to be_success, skipped.describe
      expect(skipped.stdout).to eq(%({"k":"a","first":1,"last":1,"count":1}\n))
    end
  end

  it "says an epoch number with an exponent is not written in digits, not that it is not ISO, in JSON and CSV" do
    { "exponent.jsonl" => %({"ts":1e3}\n), "exponent.csv" => "k,ts\na,1e3\n" }.each do |name, text|
      result = run_cli("sessions", "--gap", "10", "--key", "k", write(name, text))
      expect(result.exitstatus).to eq(1), result.describe
      line = name.end_with?(".csv") ? 2 : 1
      expect(result.stderr).to include(%(#{name}:#{line}: time "1e3" is not a number of seconds written in digits))
    end
  end

  it "reads an epoch millisecond written with a fraction of zeros, as floats are, as whole" do
    result = run_cli("sessions", "--gap", "1s", stdin: %({"ts":1764500000000.0}\n{"ts":"1764500000500.00"}\n))
    expect(result.exitstatus).to eq(0), result.describe
    expect(result.stdout).to eq(%({"first":1764500000000,"last":1764500000500,"count":2}\n))
  end

  it "says a time string with a minus sign is before 1970, not that it is not ISO" do
    result = run_cli("sessions", "--gap", "1s", stdin: %({"ts":"-1764500000"}\n))
    expect(result.exitstatus).to eq(1), result.describe
    expect(result.stderr).to include(%(-:1: time "-1764500000" is before 1970 (below 0 seconds)))
  end

  it "says a fraction of an epoch millisecond is not whole" do
    input = write("fraction.jsonl", %({"ts":1764500000000.5}\n))
    result = run_cli("sessions", "--gap", "10", input)
    expect(result.exitstatus).to eq(1), result.describe
    expect(result.stderr).to include(%(time "1764500000000.5" is not a whole number of milliseconds written in digits))
  end

  it "counts events before the first window apart from late ones" do
    input = write("early.jsonl", %({"ts":1}\n{"ts":2}\n{"ts":20}\n))
    late = path("late.jsonl")
    result = run_cli("tumbling", "--size", "10", "--offset", "3", "--late", late, input)
    expect(result.exitstatus).to eq(0), result.describe
    expect(result.records).to eq([{ "start" => 13, "end" => 23, "count" => 1 }])
    expect(result.stderr).to eq("window_machines: 2 events before the first window (--offset) written to #{late}\n")
    expect(File.read(late)).to eq(%({"ts":1}\n{"ts":2}\n))
  end

  it "writes to a device as it is" do
    result = run_cli("sessions", "--gap", "10", "--output", "/dev/null", events)
    expect(result.exitstatus).to eq(0), result.describe
  end

  it "reads a named pipe" do
    fifo = path("events.fifo")
    File.mkfifo(fifo)
    writer = Thread.new { File.binwrite(fifo, File.binread(events)) }
    result = run_cli("tumbling", "--size", "100", "--input-format", "jsonl", fifo)
    writer.join
    expect(result.exitstatus).to eq(0), result.describe
    expect(result.records).to eq([{ "start" => 0, "end" => 100, "count" => 3 }])
  end

  describe "CSV headers" do
    it "refuses a header without the time column at the header's line" do
      input = write("no_time.csv", "\nwhen,k\n1,a\n")
      result = run_cli("sessions", "--gap", "10", input)
      expect(result.exitstatus).to eq(1), result.describe
      expect(result.stderr).to include("no_time.csv:2: the header has no time column \"ts\"")
    end

    it "refuses a header that names a wanted column twice" do
      input = write("twice.csv", "ts,k,k\n1,a,b\n")
      result = run_cli("sessions", "--gap", "10", "--key", "k", input)
      expect(result.exitstatus).to eq(1), result.describe
      expect(result.stderr).to include(%(twice.csv:1: the header names the column "k" twice))
    end

    {
      "--key" => [%w[--key user], "user"],
      "--agg" => [%w[--key k --agg count,sum:amout], "amout"]
    }.each do |option, (arguments, column)|
      it "refuses a header without a column #{option} names, rather than read it as null throughout" do
        input = write("typo.csv", "ts,k,amount\n1,a,5\n")
        result = run_cli("sessions", "--gap", "10", *arguments, input)
        expect(result.exitstatus).to eq(1), result.describe
        expect(result.stderr).to include(%(typo.csv:1: the header has no column "#{column}" for #{option}))
        expect(result.stdout).to eq("")
      end
    end

    it "writes each input's header above its late rows" do
      first = write("one.csv", "ts,k\n10,a\n1,b\n")
      second = write("two.csv", "k,ts,extra\nc,2,x\n")
      late = path("late.csv")
      result = run_cli("sessions", "--gap", "3", "--late", late, first, second)
      expect(result.exitstatus).to eq(0), result.describe
      expect(File.read(late)).to eq("ts,k\n1,b\nk,ts,extra\nc,2,x\n")
    end

    it "writes a CSV input's header again after late lines of a JSON Lines input, resumed or not" do
      inputs = [
        write("a.jsonl", %({"k":"a","ts":10}\n{"k":"a","ts":5}\n)),
        write("b.csv", "k,ts\nb,20\nb,6\nb,soon\nb,7\n"),
        write("c.csv", "ts,k\n30,c\n7,c\n")
      ]
      expected = %({"k":"a","ts":5}\nk,ts\nb,6\nb,7\nts,k\n7,c\n)
      whole = run_cli("sessions", "--gap", "1", "--key", "k", "--skip-bad", "--late", path("whole.txt"), *inputs)
      expect(whole.exitstatus).to eq(0), whole.describe
      expect(File.read(path("whole.txt"))).to eq(expected)

      # Stopped at the bad line, its header written above the rows before
      # it; the resumed run goes on under it.
      options = ["sessions", "--gap", "1", "--key", "k", "--state", path("state"), "--late", path("late.txt")]
      stopped = run_cli(*options, *inputs)
      expect(stopped.exitstatus).to eq(1), stopped.describe
      expect(File.read(path("late.txt"))).to eq(%({"k":"a","ts":5}\nk,ts\nb,6\n))
      resumed = run_cli(*options, "--skip-bad", *inputs)
      expect(resumed.exitstatus).to eq(0), resumed.describe
      expect(File.read(path("late.txt"))).to eq(expected)
    end
  end

  it "refuses to resume over an input whose lines already read have changed" do
    input = write("edited.jsonl", %({"ts":1,"k":"a"}\n{"ts":2,"k":"b"}\nnot json\n{"ts":3,"k":"c"}\n))
    options = ["sessions", "--gap", "10", "--key", "k", "--state", path("state"), "--output", path("out.jsonl")]
    expect(run_cli(*options, input).exitstatus).to eq(1)
    File.binwrite(input, File.binread(input).sub('"k":"a"', '"k":"z"'))
    result = run_cli(*options, "--skip-bad", input)
    expect(result.exitstatus).to eq(1), result.describe
    expect(result.stderr).to include("are not what the state file's run read")
  end

  it "refuses a state file that was damaged, and says nothing was saved" do
    input = write("bad_line.jsonl", %({"ts":1}\n{"ts":2}\nnot json\n{"ts":3}\n))
    state = path("state")
    output = path("out.jsonl")
    first = run_cli("sessions", "--gap", "10", "--state", state, "--output", output, input)
    expect(first.exitstatus).to eq(1), first.describe
    expect(first.stderr).to include("state saved")
    bytes = File.binread(state)
    bytes.setbyte(bytes.bytesize / 2, bytes.getbyte(bytes.bytesize / 2) ^ 1)
    File.binwrite(state, bytes)
    again = run_cli("sessions", "--gap", "10", "--state", state, "--output", output, "--skip-bad", input)
    expect(again.exitstatus).to eq(1), again.describe
    expect(again.stderr).to include("the state file is damaged")
    expect(again.stderr).not_to include("state saved")
  end
end
