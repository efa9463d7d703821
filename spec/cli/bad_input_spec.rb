# frozen_string_literal: true

# Bad input and bad usage (README › From the shell). Bad input stops the run
# with `window_machines: FILE:LINE: REASON` and exit 1; with --skip-bad the
# line is counted, reported at the end, written to --bad FILE as read, and the
# run goes on (exit 0). Bad usage exits 2. Line numbers are physical lines of
# each file, from 1, empty lines and a CSV header included.
RSpec.describe "window_machines bad input and bad usage" do
  include WindowMachinesSpec::Command

  include_context "in a temporary directory"

  options = %w[sessions --quiet --gap 10s --key user --agg count,sum:amount].freeze

  epoch_skipped = <<~JSONL
    {"user":"u2","first":1700000001000,"last":1700000001000,"count":1,"sum_amount":2}
    {"user":"u1","first":1700000000000,"last":1700000003000,"count":2,"sum_amount":5}
  JSONL
  iso_skipped = <<~JSONL
    {"user":"u2","first":"2026-11-30T10:00:01Z","last":"2026-11-30T10:00:01Z","count":1,"sum_amount":2}
    {"user":"u1","first":"2026-11-30T10:00:00Z","last":"2026-11-30T10:00:03Z","count":2,"sum_amount":5}
  JSONL
  csv_skipped = <<~JSONL
    {"user":"u1","first":1700000000000,"last":1700000003000,"count":2,"sum_amount":5}
  JSONL

  # Each fixture has its bad line at line 3 (a CSV file's header is line 1).
  {
    "a malformed JSON line" => ["bad_malformed_json.jsonl", epoch_skipped],
    "a JSON line that is not an object" => ["bad_not_object.jsonl", epoch_skipped],
    "a CSV row with too many cells" => ["bad_too_many_cells.csv", csv_skipped],
    "a CSV row with too few cells" => ["bad_too_few_cells.csv", csv_skipped],
    "a missing time" => ["bad_missing_time.jsonl", epoch_skipped],
    "a null time" => ["bad_null_time.jsonl", epoch_skipped],
    "an epoch time that is not a number" => ["bad_unparseable_time.jsonl", epoch_skipped],
    "a fractional epoch time" => ["bad_fractional_time.jsonl", epoch_skipped],
    "a negative epoch time" => ["bad_negative_time.jsonl", epoch_skipped],
    "an epoch time of 2**64 ticks" => ["bad_time_too_large.jsonl", epoch_skipped],
    "an ISO time without a zone" => ["bad_iso_time.jsonl", iso_skipped],
    "an ISO time before 1970" => ["bad_iso_before_1970.jsonl", iso_skipped],
    "an ISO time past 2**64 nanoseconds (in 2600)" => ["bad_iso_after_2554.jsonl", iso_skipped],
    "a non-number for sum" => ["bad_non_number.jsonl", epoch_skipped]
  }.each do |kind, (name, skipped)|
    describe kind do
      it "stops the run with exit 1 and FILE:LINE: REASON on standard error" do
        result = run_cli(*options, fixture(name))
        expect(result.exitstatus).to eq(1), result.describe
        expect(result.stderr).to match(bad_input_report(fixture(name), 3)), result.describe
      end

      it "with --skip-bad skips the line, reports the count and writes the line as read to --bad FILE" do
        bad = File.join(@dir, "bad")
        result = run_cli(*options, "--skip-bad", "--bad", bad, fixture(name))
        expect(result).to be_success, result.describe
        expect(result.stdout).to eq(skipped)
        expect(bad_count(result.stderr)).to eq(1), result.describe
        bad_line = fixture_text(name).lines[2]
        # The contract does not say whether a CSV --bad file starts with the header, as --late's does.
        header = name.end_with?(".csv") ? fixture_text(name).lines.first : ""
        expect([bad_line, header + bad_line]).to include(File.binread(bad))
      end
    end
  end

  it "skips and reports every kind of bad line in one file, without letting any of them move the stream time" do
    bad = File.join(@dir, "bad")
    result = run_cli(*options, "--skip-bad", "--bad", bad, fixture("bad_mixed.jsonl"))
    expect(result).to be_success, result.describe
    # Had line 9 (2**64) or line 10 (a bad sum, far ahead) moved the stream
    # time, lines 12 and 13 would be late.
    expect(result.stdout).to eq(<<~JSONL)
      {"user":"u1","first":1700000000000,"last":1700000005000,"count":2,"sum_amount":4}
      {"user":"u1","first":1700000999000,"last":1700000999000,"count":1,"sum_amount":4}
    JSONL
    expect(result.stderr).to match(/^window_machines: 9 bad lines skipped/)
    expect(late_count(result.stderr)).to eq(0)
    expect(File.binread(bad)).to eq(fixture_text("bad_mixed.jsonl").lines[1, 9].join)
  end

  it "without --skip-bad stops at the first bad line of the mixed file" do
    result = run_cli(*options, fixture("bad_mixed.jsonl"))
    expect(result.exitstatus).to eq(1), result.describe
    expect(result.stderr).to match(bad_input_report(fixture("bad_mixed.jsonl"), 2))
  end

  ["42", '"text"', "null", "true", "[]"].each do |line|
    it "calls the JSON line #{line} bad: not an object" do
      result = run_cli(*options, stdin: %({"ts":1700000000000,"user":"u1"}\n#{line}\n))
      expect(result.exitstatus).to eq(1), result.describe
      expect(result.stderr).to match(/^window_machines: .+:2: \S/)
    end
  end

  %w[sum mean min max].each do |aggregate|
    it "calls a non-number bad input for #{aggregate}:F" do
      result = run_cli("sessions", "--quiet", "--gap", "10s", "--agg", "#{aggregate}:amount", fixture("bad_non_number.jsonl"))
      expect(result.exitstatus).to eq(1), result.describe
      expect(result.stderr).to match(bad_input_report(fixture("bad_non_number.jsonl"), 3))
    end
  end

  ['true', '{"n":1}', "[1]"].each do |value|
    it "calls #{value} bad input for sum:F" do
      input = %({"ts":1700000000000,"amount":1}\n{"ts":1700000001000,"amount":#{value}}\n)
      result = run_cli("sessions", "--quiet", "--gap", "10s", "--agg", "sum:amount", stdin: input)
      expect(result.exitstatus).to eq(1), result.describe
    end
  end

  it "takes a non-number for count, count:F, first, last and collect" do
    result = run_cli("sessions", "--quiet", "--gap", "10s", "--agg", "count,count:amount,first:amount,last:amount,collect:amount",
                     fixture("bad_non_number.jsonl"))
    expect(result).to be_success, result.describe
    expect(result.records).to eq(
      [{ "first" => 1_700_000_000_000, "last" => 1_700_000_003_000, "count" => 4, "count_amount" => 4,
         "first_amount" => 1, "last_amount" => 4, "collect_amount" => [1, 2, "three", 4] }]
    )
  end

  it "counts empty lines in line numbers" do
    input = %({"ts":1700000000000}\n\n\n{"ts":"soon"}\n)
    path = write_file(@dir, "blank.jsonl", input)
    result = run_cli(*options, path)
    expect(result.exitstatus).to eq(1), result.describe
    expect(result.stderr).to match(bad_input_report(path, 4))
  end

  it "skips only empty CSV lines: a line of spaces is a row, as Ruby's CSV reads it, and is refused or counted" do
    path = write_file(@dir, "spaces.csv", "ts\n1\n\r\n  \n2\n")
    result = run_cli("sessions", "--quiet", "--gap", "100", path)
    expect(result.exitstatus).to eq(1), result.describe
    expect(result.stderr).to include("#{path}:4: ")
    skipped = run_cli("sessions", "--quiet", "--gap", "100", "--skip-bad", path)
    expect(skipped).to be_success, skipped.describe
    expect(skipped.records).to eq([{ "first" => 1, "last" => 2, "count" => 2 }])
    expect(skipped.stderr).to include("1 bad line")
  end

  it "refuses a CSV file whose lines end with a lone carriage return, which would otherwise read as one header" do
    path = write_file(@dir, "old_mac.csv", "ts,user\r1700000000000,u1\r1700000001000,u2\r")
    result = run_cli("tumbling", "--quiet", "--size", "1m", "--key", "user", path)
    expect(result.exitstatus).to eq(1), result.describe
    expect(result.stderr).to include("#{path}:1: a carriage return inside an unquoted cell")
    expect(result.stdout).to eq("")
  end

  it "numbers lines per file and names the file the bad line is in" do
    one = write_file(@dir, "one.jsonl", %({"ts":1700000000000}\n{"ts":1700000001000}\n{"ts":1700000002000}\n))
    two = write_file(@dir, "two.jsonl", %({"ts":1700000003000}\n{"ts":null}\n))
    result = run_cli(*options, one, two)
    expect(result.exitstatus).to eq(1), result.describe
    expect(result.stderr).to match(bad_input_report(two, 2))
  end

  it "reports a bad line on standard input with its line number" do
    result = run_cli(*options, stdin: %({"ts":1700000000000}\n{"ts":1700000001000}\n{"ts":\n))
    expect(result.exitstatus).to eq(1), result.describe
    expect(result.stderr).to match(/^window_machines: .+:3: \S/)
  end

  it "has already written what closed before the bad line" do
    input = %({"ts":1000,"user":"u1","amount":1}\n{"ts":2000,"user":"u1","amount":2}\n{"ts":2001,"user":"u1"\n)
    result = run_cli(*options, stdin: input)
    expect(result.exitstatus).to eq(1), result.describe
    expect(result.records.first).to eq("user" => "u1", "first" => 1000, "last" => 1000, "count" => 1, "sum_amount" => 1)
  end

  describe "bad usage" do
    file = WindowMachinesSpec::Command.fixture("windows.jsonl") # epoch seconds
    {
      "no arguments" => [],
      "an unknown subcommand" => ["frobnicate", file],
      "an unknown option" => ["sessions", "--gap", "10", "--frobnicate", file],
      "sessions without --gap" => ["sessions", file],
      "tumbling without --size" => ["tumbling", file],
      "hopping without --advance" => ["hopping", "--size", "10", file],
      "hopping without --size" => ["hopping", "--advance", "5", file],
      "a duration with an unknown unit" => ["sessions", "--gap", "10x", file],
      "a fractional duration" => ["sessions", "--gap", "1.5s", file],
      "a negative duration" => ["sessions", "--gap", "-5s", file],
      "a unit without a number" => ["sessions", "--gap", "s", file],
      "an empty duration" => ["sessions", "--gap", "", file],
      "a bad --lag" => ["sessions", "--gap", "10", "--lag", "soon", file],
      "a bad --grace" => ["tumbling", "--size", "10", "--grace", "2 minutes", file],
      "a bad --offset" => ["tumbling", "--size", "10", "--offset", "x", file],
      "a zero --gap" => ["sessions", "--gap", "0", file],
      "a zero --size" => ["tumbling", "--size", "0", file],
      "a zero --advance" => ["hopping", "--size", "10", "--advance", "0", file],
      "500us with epoch milliseconds" => ["sessions", "--gap", "500us", WindowMachinesSpec::Command.fixture("sessions_ms.jsonl")],
      "1500us with --time-format ms" => ["tumbling", "--size", "1500us", "--time-format", "ms",
                                         WindowMachinesSpec::Command.fixture("sessions_ms.jsonl")],
      "1us with epoch milliseconds" => ["sessions", "--gap", "1us", WindowMachinesSpec::Command.fixture("sessions_ms.jsonl")],
      "an unknown --time-format" => ["sessions", "--gap", "10", "--time-format", "hours", file],
      "an unknown --output-format" => ["sessions", "--gap", "10", "--output-format", "xml", file],
      "an unknown --input-format" => ["sessions", "--gap", "10", "--input-format", "parquet", file],
      "an unknown aggregate" => ["sessions", "--gap", "10", "--agg", "median:v", file],
      "sum without a field" => ["sessions", "--gap", "10", "--agg", "sum", file],
      "an input file that does not exist" => ["sessions", "--gap", "10",
                                              WindowMachinesSpec::Command.fixture("no-such-file.jsonl")],
      "an input file that is a directory" => ["sessions", "--gap", "10", WindowMachinesSpec::Command::FIXTURES],
      "--output in a directory that does not exist" => ["sessions", "--gap", "10", "--output", "/no-such-dir/out", file],
      "--output that is a directory" => ["sessions", "--gap", "10", "--output", WindowMachinesSpec::Command::FIXTURES, file],
      "--state in a directory that does not exist" => ["sessions", "--gap", "10", "--state", "/no-such-dir/state", file],
      "--late in a directory that does not exist" => ["sessions", "--gap", "10", "--late", "/no-such-dir/late", file],
      "--late - (standard output is for the results)" => ["sessions", "--gap", "10", "--late", "-", file],
      "--bad - (standard output is for the results)" => ["sessions", "--gap", "10", "--skip-bad", "--bad", "-", file],
      "an empty --output" => ["sessions", "--gap", "10", "--output", "", file],
      "an empty --late" => ["sessions", "--gap", "10", "--late", "", file],
      "an empty --bad" => ["sessions", "--gap", "10", "--skip-bad", "--bad", "", file],
      "an empty --state" => ["sessions", "--gap", "10", "--state", "", file],
      "--state - (standard output is for the results)" => ["sessions", "--gap", "10", "--state", "-", file]
    }.each do |what, args|
      it "exits 2 on #{what}, with a message on standard error and no records" do
        result = run_cli(*args)
        expect(result.exitstatus).to eq(2), result.describe
        expect(result.stderr).not_to be_empty
        expect(result.stdout).to eq("")
      end
    end

    it "keeps the file each checkpoint is written to first apart from the inputs and outputs" do
      input = write_file(@dir, "events.tmp", File.read(file))
      state = File.join(@dir, "events")
      [[input], ["--output", "#{state}.tmp", file]].each do |args|
        result = run_cli("sessions", "--quiet", "--gap", "10", "--state", state, *args)
        expect(result.exitstatus).to eq(2), result.describe
        expect(result.stderr).to include("#{state}.tmp (where --state #{state} is written first)")
      end
      expect(File.read(input)).to eq(File.read(file))
      expect(Dir.children(@dir)).to eq(["events.tmp"])
    end

    it "refuses a table in an --output file a resumed run must go on with exactly, and takes one without --state" do
      output = File.join(@dir, "out")
      table = ["sessions", "--quiet", "--gap", "10", "--output-format", "table", "--output", output, file]
      result = run_cli(*table, "--state", File.join(@dir, "state"))
      expect(result.exitstatus).to eq(2), result.describe
      expect(result.stderr).to include("--output-format table with --state and --output")
      expect(Dir.children(@dir)).to eq([])
      expect(run_cli(*table)).to be_success
      expect(File.read(output)).to start_with("first  last  count\n")
    end

    it "refuses an --output file standard input is read from (-o f < f), leaving it whole, and takes a pipe" do
      input = write_file(@dir, "in.jsonl", File.read(file))
      args = command_line("sessions", "--quiet", "--gap", "10", "--output", input)
      said = IO.popen(WindowMachinesSpec::Command::ENV_FOR_CHILD, args, in: input, err: %i[child out], &:read)
      expect(Process.last_status.exitstatus).to eq(2), said
      expect(said).to include("standard input and #{input} are the same file")
      expect(File.read(input)).to eq(File.read(file))
      piped = run_cli("sessions", "--quiet", "--gap", "10", "--output", input, stdin: File.read(file))
      expect(piped).to be_success, piped.describe
    end

    it "refuses an empty --agg list" do
      result = run_cli("sessions", "--quiet", "--gap", "10", "--agg", "", file)
      expect(result.exitstatus).to eq(2), result.describe
      expect(result.stderr).to include("give at least one aggregator")
    end

    it "refuses a --state that is not a regular file before reading it (a device gives bytes without end)" do
      fifo = File.join(@dir, "fifo")
      File.mkfifo(fifo)
      ["/dev/zero", fifo].each do |state|
        result = run_cli("sessions", "--quiet", "--gap", "10", "--state", state, file)
        expect(result.exitstatus).to eq(1), result.describe
        expect(result.stderr).to include("#{state}: not a regular file")
      end
    end

    it "names the file it cannot write, before reading any input" do
      result = run_cli("sessions", "--gap", "10", "--state", "/no-such-dir/state", file)
      expect(result.stderr).to include("/no-such-dir/state (cannot write there)")
    end

    it "refuses as bad usage, before any input, a name the kernel would not open: a missing directory before .., " \
       "a trailing slash, a link loop or a link to a name with a slash" do
      File.symlink("loop", File.join(@dir, "loop"))
      File.symlink("new/", File.join(@dir, "to-slash"))
      Dir.mkdir(File.join(@dir, "d"))
      %w[missing/../out.jsonl new/ loop to-slash].product(%w[--output --late --state]).each do |path, option|
        result = run_cli("sessions", "--quiet", "--gap", "10", option, path, file, chdir: @dir)
        expect(result.exitstatus).to eq(2), result.describe
        expect(result.stderr).to include("#{path} (cannot write there)")
        expect(Dir.children(@dir).sort).to eq(%w[d loop to-slash])
      end
      result = run_cli("sessions", "--quiet", "--gap", "10", "--output", "d/../out.jsonl", file, chdir: @dir)
      expect(result).to be_success, result.describe
      expect(File).to exist(File.join(@dir, "out.jsonl"))
    end

    it "refuses as bad usage a name longer than a directory entry holds" do
      long = "x" * 256
      result = run_cli("sessions", "--quiet", "--gap", "10", "--output", long, file, chdir: @dir)
      expect(result.exitstatus).to eq(2), result.describe
      expect(result.stderr).to include("#{long} (cannot write there)")
      expect(Dir.children(@dir)).to eq([])
    end

    it "refuses, as a user without the permissions, a directory it may write but not search, and a state link " \
       "in a directory it may not write (a rename replaces the link, beside it)" do
      File.chmod(0o777, @dir)
      File.write(File.join(@dir, "in.jsonl"), File.read(file))
      %w[nox ro w].each { |name| Dir.mkdir(File.join(@dir, name)) }
      File.symlink("../w/st", File.join(@dir, "ro/st"))
      { "nox" => 0o222, "ro" => 0o555, "w" => 0o777 }.each { |name, mode| File.chmod(mode, File.join(@dir, name)) }
      [%w[--late nox/late.jsonl], %w[--state ro/st]].each do |option, path|
        stderr, status = unprivileged_cli("sessions", "--quiet", "--gap", "10", "--output", "out.jsonl",
                                          option, path, "in.jsonl", chdir: @dir)
        expect(status.exitstatus).to eq(2), "#{status.inspect} #{stderr}"
        expect(stderr).to include("#{path} (cannot write there)")
        expect(File).not_to exist(File.join(@dir, "out.jsonl"))
      end
    ensure
      %w[nox ro].each { |name| File.chmod(0o755, File.join(@dir, name)) if File.directory?(File.join(@dir, name)) }
    end

    it "refuses two names of one file not made yet: through a linked directory, or a link that leads nowhere yet" do
      File.symlink(".", File.join(@dir, "here"))
      File.symlink("out.jsonl", File.join(@dir, "link"))
      FileUtils.mkdir_p(File.join(@dir, "sub/deeper"))
      File.symlink("sub/deeper", File.join(@dir, "down"))
      # `..` after a link goes up from where the link leads: down/.. is sub.
      [%w[--state here/out.jsonl], %w[--late here/out.jsonl], %w[--late link], %w[--late down/../../out.jsonl],
       %w[--state down/../../out.jsonl]].each do |option, path|
        result = run_cli("sessions", "--quiet", "--gap", "10", "--output", "out.jsonl", option, path, file, chdir: @dir)
        expect(result.exitstatus).to eq(2), result.describe
        expect(result.stderr).to include("out.jsonl and #{path}")
        expect(result.stderr).to include("are the same file")
        expect(File).not_to exist(File.join(@dir, "out.jsonl"))
      end
    end

    it "compares paths through a directory whose name is not UTF-8" do
      Dir.mkdir(File.join(@dir, "v\xFF".b))
      File.symlink("v\xFF".b, File.join(@dir, "link"))
      result = run_cli("sessions", "--quiet", "--gap", "10", "--output", "link/é.jsonl", file, chdir: @dir)
      expect(result).to be_success, result.describe
      expect(File.read(File.join(@dir, "v\xFF/é.jsonl".b))).to eq(run_cli("sessions", "--quiet", "--gap", "10", file).stdout)
    end

    it "reads a path beginning with ~ as a directory of that name, as the files are opened, not as a home" do
      result = run_cli("sessions", "--quiet", "--gap", "10", "--output", "~nouser/out.jsonl", file, chdir: @dir)
      expect(result.exitstatus).to eq(2), result.describe
      expect(result.stderr).to include("~nouser/out.jsonl (cannot write there)")
      Dir.mkdir(File.join(@dir, "~"))
      result = run_cli("sessions", "--quiet", "--gap", "10", "--output", "~/out.jsonl", "--state", "~/state",
                       file, chdir: @dir)
      expect(result).to be_success, result.describe
      expect(File.read(File.join(@dir, "~/out.jsonl"))).to eq(run_cli("sessions", "--quiet", "--gap", "10", file).stdout)
    end

    it "writes to standard output given --output -" do
      result = run_cli("sessions", "--quiet", "--gap", "10", "--output", "-", file, chdir: @dir)
      expect(result).to be_success, result.describe
      expect(result.stdout).to eq(run_cli("sessions", "--quiet", "--gap", "10", file).stdout)
      expect(Dir.children(@dir)).to eq([])
    end

    it "takes a duration in a larger unit that is a whole number of ticks (2000ms with epoch seconds)" do
      result = run_cli("sessions", "--quiet", "--gap", "2000ms", file)
      expect(result).to be_success, result.describe
      expect(result.stdout).to eq(run_cli("sessions", "--quiet", "--gap", "2", file).stdout)
    end
  end

  describe "lengths that fit only once the time field's unit is known" do
    {
      %w[tumbling --size 1 --offset 1500ms] => "--offset (1500ms) must be shorter than the step windows start at (1s)",
      %w[hopping --size 1 --advance 1500ms] => "--advance (1500ms) is longer than --size (1s)",
      %w[hopping --size 2h --advance 1] => "--size (2h) over --advance (1s) puts an event in up to 7200 windows, " \
                                           "more than 4096"
    }.each do |arguments, message|
      it "exits 2 on #{arguments.join(" ")} over epoch seconds, in the options' terms" do
        result = run_cli(*arguments, stdin: %({"ts":1}\n))
        expect(result.exitstatus).to eq(2), result.describe
        expect(result.stderr).to eq("window_machines: #{message}\n")
      end
    end
  end
end
