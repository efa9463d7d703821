# frozen_string_literal: true

require "csv"
require "pty"
require "stringio"
require "zlib"

# Input and output formats of `window_machines` (README › From the shell): JSONL
# and CSV in, plain or gzipped, from files or standard input; epoch times in
# every unit and ISO 8601 with offsets; durations; JSONL, CSV and table out.
RSpec.describe "window_machines input and output formats" do
  include WindowMachinesSpec::Command

  include_context "in a temporary directory"

  def gzip(text)
    io = StringIO.new(+"", "wb")
    writer = Zlib::GzipWriter.new(io)
    writer.write(text)
    writer.finish
    io.string
  end

  # sessions_ms.jsonl --gap 30s --key user --agg count,sum:amount, worked out in sessions_spec.rb.
  let(:sessions_ms_output) do
    <<~JSONL
      {"user":"u2","first":1700000010000,"last":1700000010000,"count":1,"sum_amount":5}
      {"user":"u1","first":1700000000000,"last":1700000030000,"count":2,"sum_amount":30}
      {"user":"u2","first":1700000045000,"last":1700000045000,"count":1,"sum_amount":7}
      {"user":"u1","first":1700000061000,"last":1700000061000,"count":1,"sum_amount":1}
      {"user":"u2","first":1700000200000,"last":1700000200000,"count":1,"sum_amount":3}
    JSONL
  end
  let(:sessions_ms_args) { %w[sessions --gap 30s --key user --agg count,sum:amount] }

  # orders.csv with the same options: CSV cells are strings, so the keys are.
  let(:orders_output) do
    <<~JSONL
      {"user":"Smith, J","first":1700000010000,"last":1700000010000,"count":1,"sum_amount":5}
      {"user":"u1","first":1700000000000,"last":1700000030000,"count":2,"sum_amount":30}
      {"user":"Smith, J","first":1700000045000,"last":1700000045000,"count":1,"sum_amount":7}
      {"user":"42","first":1700000050000,"last":1700000050000,"count":1,"sum_amount":1}
    JSONL
  end

  describe "epoch times" do
    # Events at base, base + 1 s and base + 3 s with a 1 s gap: two sessions
    # when the unit is right, one when it is taken too fine, three too coarse.
    def unit_probe(base, ticks_per_second, quote: false)
      [base, base + ticks_per_second, base + (3 * ticks_per_second)]
        .map { |ts| quote ? %({"ts":"#{ts}"}\n) : %({"ts":#{ts}}\n) }.join
    end

    def probe_output(base, ticks_per_second)
      jsonl({ "first" => base, "last" => base + ticks_per_second, "count" => 2 },
            { "first" => base + (3 * ticks_per_second), "last" => base + (3 * ticks_per_second), "count" => 1 })
    end

    {
      "seconds" => [1_700_000_000, 1],
      "milliseconds" => [1_700_000_000_000, 1_000],
      "microseconds" => [1_700_000_000_000_000, 1_000_000],
      "nanoseconds" => [1_700_000_000_000_000_000, 1_000_000_000]
    }.each do |unit, (base, ticks)|
      it "detects #{unit} from the first event's size and writes times back as integers in that unit" do
        result = run_ok("sessions", "--gap", "1s", stdin: unit_probe(base, ticks))
        expect(result.stdout).to eq(probe_output(base, ticks))
      end

      it "reads a string of digits as #{unit} and writes it back as a number" do
        result = run_ok("sessions", "--gap", "1s", stdin: unit_probe(base, ticks, quote: true))
        expect(result.stdout).to eq(probe_output(base, ticks))
      end
    end

    {
      18_446_744_069 => 1,
      100_000_000_000 => 1_000,
      99_999_999_999_999 => 1_000,
      100_000_000_000_000 => 1_000_000,
      99_999_999_999_999_999 => 1_000_000,
      100_000_000_000_000_000 => 1_000_000_000
    }.each do |base, ticks|
      it "takes a first timestamp of #{base} as #{ticks} ticks per second" do
        expect(run_ok("sessions", "--gap", "1s", stdin: unit_probe(base, ticks)).stdout).to eq(probe_output(base, ticks))
      end
    end

    {
      "ms" => 1_000, "milliseconds" => 1_000, "us" => 1_000_000,
      "microseconds" => 1_000_000, "ns" => 1_000_000_000, "nanoseconds" => 1_000_000_000
    }.each do |name, ticks|
      it "with --time-format #{name} reads epoch times in that unit whatever their size" do
        base = 1_700_000_000_000
        result = run_ok("sessions", "--gap", "1s", "--time-format", name, stdin: unit_probe(base, ticks))
        expect(result.stdout).to eq(probe_output(base, ticks))
      end
    end

    %w[s seconds].each do |name|
      it "with --time-format #{name} reads epoch times as seconds whatever their size, up to 2**64-1 nanoseconds" do
        expect(run_ok("sessions", "--gap", "1s", "--time-format", name, stdin: unit_probe(1_000, 1)).stdout)
          .to eq(probe_output(1_000, 1))
        result = run_cli("sessions", "--gap", "1s", "--time-format", name, stdin: unit_probe(1_700_000_000_000, 1))
        expect(result.exitstatus).to eq(1), result.describe
        expect(result.stderr).to include(
          %(-:1: time "1700000000000" is past 18446744073.709551615 seconds (2**64-1 nanoseconds))
        )
      end
    end

    it "refuses epoch seconds past 2**64-1 nanoseconds, as it refuses ISO times past them" do
      result = run_cli("sessions", "--gap", "1s", stdin: %({"ts":99999999999}\n))
      expect(result.exitstatus).to eq(1), result.describe
      expect(result.stderr).to include(%(time "99999999999" is past 18446744073.709551615 seconds))
    end

    describe "epoch seconds with a fraction" do
      it "reads up to nine decimal places, from a number or a string, and writes 3, 6 or 9 back as ISO does" do
        input = %({"ts":1764500000.25}\n{"ts":"1764500000.617300"}\n{"ts":1764500001}\n{"ts":1764500009.000000001}\n)
        expect(run_ok("sessions", "--gap", "1s", stdin: input).stdout).to eq(
          %({"first":1764500000.250,"last":1764500001,"count":3}\n) +
          %({"first":1764500009.000000001,"last":1764500009.000000001,"count":1}\n)
        )
      end

      it "detects seconds from a first event that has no fraction and still reads later ones that do" do
        input = %({"ts":1764500000}\n{"ts":1764500000.5}\n{"ts":1764500002}\n)
        expect(run_ok("sessions", "--gap", "1s", stdin: input).stdout).to eq(
          %({"first":1764500000,"last":1764500000.500,"count":2}\n{"first":1764500002,"last":1764500002,"count":1}\n)
        )
      end

      it "takes durations finer than a second, and a bare number as seconds" do
        input = %({"ts":1764500000.2}\n{"ts":1764500000.7}\n{"ts":1764500001.2}\n)
        expect(run_ok("tumbling", "--size", "500ms", stdin: input).stdout).to eq(
          %({"start":1764500000,"end":1764500000.500,"count":1}\n) +
          %({"start":1764500000.500,"end":1764500001,"count":1}\n) +
          %({"start":1764500001,"end":1764500001.500,"count":1}\n)
        )
        expect(run_ok("tumbling", "--size", "1", stdin: input).stdout).to eq(
          %({"start":1764500000,"end":1764500001,"count":2}\n{"start":1764500001,"end":1764500002,"count":1}\n)
        )
      end

      it "writes CSV times the same way" do
        input = "ts,user\n1764500000.125,ana\n1764500000.5,ana\n"
        result = run_ok("sessions", "--gap", "1s", "--key", "user", "--input-format", "csv",
                        "--output-format", "csv", stdin: input)
        expect(result.stdout).to eq("user,first,last,count\nana,1764500000.125,1764500000.500,2\n")
      end

      it "refuses more than nine decimal places, as finer than it holds" do
        result = run_cli("sessions", "--gap", "1s", stdin: %({"ts":1764500000.1234567891}\n))
        expect(result.exitstatus).to eq(1), result.describe
        expect(result.stderr).to include(
          %(-:1: time "1764500000.1234567891" has more than nine decimal places, finer than the nanoseconds held)
        )
      end
    end

    it "reads the time from --time, a dotted path" do
      input = %({"at":{"when":100},"ts":5}\n{"at":{"when":150},"ts":6}\n)
      expect(run_ok("sessions", "--gap", "10", "--time", "at.when", stdin: input).records)
        .to eq([{ "first" => 100, "last" => 100, "count" => 1 }, { "first" => 150, "last" => 150, "count" => 1 }])
    end
  end

  describe "ISO 8601 times" do
    let(:iso_output) do
      <<~JSONL
        {"user":"ben","first":"2026-11-30T10:00:20Z","last":"2026-11-30T10:00:20Z","count":1}
        {"user":"ana","first":"2026-11-30T10:00:00Z","last":"2026-11-30T10:00:40.000001Z","count":3}
        {"user":"ben","first":"2026-11-30T10:05:00.123456789Z","last":"2026-11-30T10:05:00.123456789Z","count":1}
        {"user":"ana","first":"2026-11-30T10:06:00.500Z","last":"2026-11-30T10:06:00.500Z","count":1}
      JSONL
    end

    it "reads offsets (+01:00, -05:00, +0530, z), a space or t for T, and writes UTC with 3, 6 or 9 fraction digits as needed" do
      result = run_ok("sessions", "--gap", "1m", "--key", "user", fixture("iso_offsets.jsonl"))
      expect(result.stdout).to eq(iso_output)
    end

    %w[iso iso8601 rfc3339].each do |name|
      it "reads the same with --time-format #{name}" do
        result = run_ok("sessions", "--gap", "1m", "--key", "user", "--time-format", name, fixture("iso_offsets.jsonl"))
        expect(result.stdout).to eq(iso_output)
      end
    end

    it "takes every duration unit, and a bare integer as nanoseconds" do
      outputs = %w[1m 60s 60000ms 60000000us 60000000000ns 60000000000].to_h do |gap|
        [gap, run_ok("sessions", "--gap", gap, "--key", "user", fixture("iso_offsets.jsonl")).stdout]
      end
      expect(outputs).to eq(outputs.transform_values { iso_output })
    end

    it "takes hours and days" do
      input = <<~JSONL
        {"ts":"2026-11-29T23:59:59.999Z"}
        {"ts":"2026-11-30T00:00:00Z"}
        {"ts":"2026-11-30T23:59:59Z"}
        {"ts":"2026-12-01T00:00:00+01:00"}
      JSONL
      expected = jsonl({ "start" => "2026-11-29T00:00:00Z", "end" => "2026-11-30T00:00:00Z", "count" => 1 },
                       { "start" => "2026-11-30T00:00:00Z", "end" => "2026-12-01T00:00:00Z", "count" => 3 })
      expect(run_ok("tumbling", "--size", "1d", stdin: input).stdout).to eq(expected)
      expect(run_ok("tumbling", "--size", "24h", stdin: input).stdout).to eq(expected)
    end
  end

  describe "values" do
    it "passes numbers on to first, last and collect as written, however many digits, and adds them as numbers" do
      big = 2**130
      input = write_file(@dir, "values.jsonl", <<~JSONL)
        {"ts":1,"v":#{big}}
        {"ts":2,"v":1.50}
        {"ts":3,"v":-0}
        {"ts":4,"v":#{2**127}}
      JSONL
      result = run_ok("tumbling", "--size", "10", "--agg", "collect:v,first:v,last:v,max:v,sum:v", input)
      expect(result.stdout)
        .to start_with(%({"start":0,"end":10,"collect_v":[#{big},1.50,-0,#{2**127}],"first_v":#{big},"last_v":#{2**127},))
      # Past 128 bits an Integer is a Float to the aggregators that add or compare.
      expect(JSON.parse(result.stdout).values_at("max_v", "sum_v")).to eq([big.to_f, big.to_f + 1.5 + 0 + (2**127).to_f])
    end

    it "passes small integers on to first, last and collect digit for digit, -0 included" do
      input = write_file(@dir, "small.jsonl", %({"ts":1,"v":-0}\n{"ts":2,"v":7}\n{"ts":3,"v":-12}\n{"ts":4,"v":-0}\n))
      result = run_ok("tumbling", "--size", "10", "--agg", "collect:v,first:v,last:v", input)
      expect(result.stdout).to eq(%({"start":0,"end":10,"collect_v":[-0,7,-12,-0],"first_v":-0,"last_v":-0}\n))
    end
  end

  describe "a field several options name" do
    let(:rows) { [[1_700_000_001, "a", 5], [1_700_000_002, "a", 7], [1_700_000_003, "b", 7]] }
    let(:args) do
      ["tumbling", "--size", "1m", "--key", "amount", "--agg", "count,sum:amount,max:amount,first:amount,max:ts"]
    end

    def records(key_a, key_b)
      [{ "amount" => key_a, "start" => 1_699_999_980, "end" => 1_700_000_040, "count" => 1, "sum_amount" => 5,
         "max_amount" => 5, "first_amount" => 5, "max_ts" => 1_700_000_001 },
       { "amount" => key_b, "start" => 1_699_999_980, "end" => 1_700_000_040, "count" => 2, "sum_amount" => 14,
         "max_amount" => 7, "first_amount" => 7, "max_ts" => 1_700_000_003 }]
    end

    it "gives each of them the field's value, read from JSONL" do
      input = write_file(@dir, "shared.jsonl",
                         rows.map { |ts, user, amount| %({"ts":#{ts},"user":"#{user}","amount":#{amount}}\n) }.join)
      result = run_ok(*args, input)
      expect(result.stdout.lines.map { |line| JSON.parse(line) }).to eq(records(5, 7))
    end

    it "gives each of them the field's value, read from CSV (keys as strings)" do
      input = write_file(@dir, "shared.csv", "ts,user,amount\n#{rows.map { |row| "#{row.join(",")}\n" }.join}")
      result = run_ok(*args, input)
      expect(result.stdout.lines.map { |line| JSON.parse(line) }).to eq(records("5", "7"))
    end

    it "refuses a line whose field one of them cannot take, and takes the lines after it" do
      input = write_file(@dir, "shared_bad.jsonl",
                         %({"ts":1,"amount":5}\n{"ts":2,"amount":"x"}\n{"ts":3,"amount":7}\n))
      result = run_cli("tumbling", "--size", "10", "--agg", "first:amount,sum:amount,count", "--skip-bad", input)
      expect(result.status.exitstatus).to eq(0)
      expect(result.stdout).to eq(%({"start":0,"end":10,"first_amount":5,"sum_amount":12,"count":2}\n))
      expect(result.stderr).to include("shared_bad.jsonl:2: field \"amount\" is not a number, which sum needs")
    end
  end

  describe "CSV input" do
    it "reads a CSV file by its header, with RFC 4180 quoting, keys as strings and sum fields as numbers" do
      result = run_ok(*sessions_ms_args, fixture("orders.csv"))
      expect(result.stdout).to eq(orders_output)
    end

    it "reads each CSV file's own header when several are given" do
      rows = fixture_text("orders.csv").lines.drop(1).map { |line| CSV.parse_line(line) }
      one = write_file(@dir, "one.csv", "ts,user,amount\n#{rows[0, 3].map(&:to_csv).join}")
      two = write_file(@dir, "two.csv", "amount,ts,user\n#{rows[3..].map { |ts, user, amount| [amount, ts, user].to_csv }.join}")
      expect(run_ok(*sessions_ms_args, one, two).stdout).to eq(orders_output)
    end

    it "passes a cell on to first, last and collect as written: a JSON number as a number, any other as text" do
      input = write_file(@dir, "values.csv", "ts,v\n1,1.50\n2,\"007\"\n3,\"12345\"\n4,1e3\n5,-0\n6,1.\n")
      result = run_ok("tumbling", "--size", "10", "--agg", "collect:v,first:v,last:v", input)
      expect(result.stdout).to eq(<<~JSONL)
        {"start":0,"end":10,"collect_v":[1.50,"007",12345,1e3,-0,"1."],"first_v":1.50,"last_v":"1."}
      JSONL
    end

    it "reads CSV under any name with --input-format csv, standard input included" do
      renamed = write_file(@dir, "orders.txt", fixture_text("orders.csv"))
      expect(run_ok(*sessions_ms_args, "--input-format", "csv", renamed).stdout).to eq(orders_output)
      expect(run_ok(*sessions_ms_args, "--input-format", "csv", stdin: fixture_text("orders.csv")).stdout)
        .to eq(orders_output)
    end

    it "reads a file named .CSV, or .Csv.GZ gzipped, as CSV: the name's case does not matter" do
      upper = write_file(@dir, "ORDERS.CSV", fixture_text("orders.csv"))
      mixed = write_file(@dir, "orders.Csv.GZ", gzip(fixture_text("orders.csv")))
      expect(run_ok(*sessions_ms_args, upper).stdout).to eq(orders_output)
      expect(run_ok(*sessions_ms_args, mixed).stdout).to eq(orders_output)
    end

    it "reads JSONL from a file named .csv with --input-format jsonl" do
      misnamed = write_file(@dir, "events.csv", fixture_text("sessions_ms.jsonl"))
      expect(run_ok(*sessions_ms_args, "--input-format", "jsonl", misnamed).stdout).to eq(sessions_ms_output)
    end
  end

  describe "gzip" do
    it "reads a .csv.gz file as gzipped CSV" do
      path = write_file(@dir, "orders.csv.gz", gzip(fixture_text("orders.csv")))
      expect(run_ok(*sessions_ms_args, path).stdout).to eq(orders_output)
    end

    it "recognises gzip by its magic bytes whatever the file is called" do
      plain_name = write_file(@dir, "events.jsonl", gzip(fixture_text("sessions_ms.jsonl")))
      gz_name = write_file(@dir, "events.jsonl.gz", gzip(fixture_text("sessions_ms.jsonl")))
      expect(run_ok(*sessions_ms_args, plain_name).stdout).to eq(sessions_ms_output)
      expect(run_ok(*sessions_ms_args, gz_name).stdout).to eq(sessions_ms_output)
    end

    it "reads members one after another, takes zero padding after the last as the end, and names other trailing data" do
      lines = fixture_text("sessions_ms.jsonl").lines
      padded = write_file(@dir, "padded.jsonl.gz", gzip(lines[0, 3].join) + gzip(lines[3..].join) + ("\0" * 512))
      expect(run_ok(*sessions_ms_args, padded).stdout).to eq(sessions_ms_output)
      trailing = write_file(@dir, "trailing.jsonl.gz", "#{gzip(fixture_text('sessions_ms.jsonl'))}junk")
      result = run_cli(*sessions_ms_args, trailing)
      expect(result.exitstatus).to eq(1), result.describe
      expect(result.stderr).to include("#{trailing}: data after the last gzip member that is not gzip")
    end

    it "recognises gzipped standard input" do
      expect(run_ok(*sessions_ms_args, stdin: gzip(fixture_text("sessions_ms.jsonl"))).stdout).to eq(sessions_ms_output)
    end

    it "recognises gzip on a pipe that gives its first byte alone (a slow writer)" do
      bytes = gzip(fixture_text("sessions_ms.jsonl"))
      written = +""
      status = stream_cli(*sessions_ms_args) do |input, output|
        input.binmode
        input.write(bytes[0])
        input.flush
        sleep 0.3 # the command reads that byte alone
        input.write(bytes[1..])
        input.close
        written << output.read
      end
      expect(status).to be_success
      expect(written).to eq(sessions_ms_output)
    end
  end

  describe "standard input and several files" do
    it "reads standard input as JSONL when no file is given, or for the file -" do
      expect(run_ok(*sessions_ms_args, stdin: fixture_text("sessions_ms.jsonl")).stdout).to eq(sessions_ms_output)
      expect(run_ok(*sessions_ms_args, "-", stdin: fixture_text("sessions_ms.jsonl")).stdout).to eq(sessions_ms_output)
    end

    it "reads - among files in the order given" do
      lines = fixture_text("sessions_ms.jsonl").lines
      one = write_file(@dir, "one.jsonl", lines[0, 2].join)
      three = write_file(@dir, "three.jsonl", lines[4..].join)
      result = run_ok(*sessions_ms_args, one, "-", three, stdin: lines[2, 2].join)
      expect(result.stdout).to eq(sessions_ms_output)
    end

    it "mixes a gzipped JSONL file and a CSV file in one stream" do
      lines = fixture_text("sessions_ms.jsonl").lines
      one = write_file(@dir, "one.jsonl", gzip(lines[0, 3].join))
      two = write_file(@dir, "two.csv", "ts,user,amount\n#{lines[3..].map do |line|
        event = JSON.parse(line)
        "#{event['ts']},#{event['user']},#{event['amount']}\n"
      end.join}")
      expect(run_ok(*sessions_ms_args, one, two).stdout).to eq(sessions_ms_output)
    end

    it "skips empty lines silently" do
      input = fixture_text("sessions_ms.jsonl").lines.flat_map { |line| ["\n", line] }.join + "\n\n"
      expect(run_ok(*sessions_ms_args, stdin: input).stdout).to eq(sessions_ms_output)
    end
  end

  describe "output" do
    it "writes JSONL to --output FILE and nothing to standard output" do
      path = File.join(@dir, "out.jsonl")
      result = run_ok(*sessions_ms_args, "--output", path, fixture("sessions_ms.jsonl"))
      expect(result.stdout).to eq("")
      expect(File.read(path)).to eq(sessions_ms_output)
    end

    it "writes CSV with --output-format csv: a header, then one quoted-as-needed row per record" do
      result = run_ok(*sessions_ms_args, "--output-format", "csv", fixture("orders.csv"))
      expect(CSV.parse(result.stdout)).to eq(
        [%w[user first last count sum_amount],
         ["Smith, J", "1700000010000", "1700000010000", "1", "5"],
         %w[u1 1700000000000 1700000030000 2 30],
         ["Smith, J", "1700000045000", "1700000045000", "1", "7"],
         %w[42 1700000050000 1700000050000 1 1]]
      )
    end

    it "tells a null from an empty string in CSV and in a table, as Ruby's CSV reads them" do
      input = write_file(@dir, "blank.jsonl", %({"ts":1,"u":null,"p":""}\n{"ts":2,"u":"","p":null}\n))
      args = ["tumbling", "--quiet", "--size", "10", "--key", "u", "--agg", "count,last:p", input]
      csv = run_ok(*args, "--output-format", "csv").stdout
      expect(CSV.parse(csv)).to eq([%w[u start end count last_p], [nil, "0", "10", "1", ""], ["", "0", "10", "1", nil]])
      expect(run_ok(*args, "--output-format", "table").stdout).to eq(<<~'TABLE')
        u   start  end  count  last_p
            0      10   1      ""
        ""  0      10   1
      TABLE
    end

    it "reads an empty cell as null and a quoted empty one as an empty string, as Ruby's CSV does" do
      input = write_file(@dir, "blank.csv", %(ts,k,v\n1,,x\n2,"",""\n3,a,\n))
      args = ["tumbling", "--quiet", "--size", "10", "--key", "k", input]
      expect(run_ok(*args, "--agg", "count,count:v,collect:v").stdout.lines.map { |line| JSON.parse(line) }).to eq(
        [{ "k" => nil, "start" => 0, "end" => 10, "count" => 1, "count_v" => 1, "collect_v" => ["x"] },
         { "k" => "", "start" => 0, "end" => 10, "count" => 1, "count_v" => 1, "collect_v" => [""] },
         { "k" => "a", "start" => 0, "end" => 10, "count" => 1, "count_v" => 0, "collect_v" => [nil] }]
      )
      summed = run_cli(*args, "--agg", "sum:v")
      expect(summed.exitstatus).to eq(1), summed.describe
      expect(summed.stderr).to include("blank.csv:2: field \"v\" is not a number, which sum needs")
      times = write_file(@dir, "times.csv", %(ts,k\n1,a\n"",a\n,a\n))
      skipped = run_cli("tumbling", "--size", "10", "--key", "k", "--skip-bad", times)
      expect(skipped).to be_success, skipped.describe
      expect(skipped.stderr).to include("2 bad lines skipped (first: #{times}:3: time \"\" is not a number")
      stopped = run_cli("tumbling", "--size", "10", "--key", "k", write_file(@dir, "null.csv", "ts,k\n,a\n"))
      expect(stopped.stderr).to include(%(null.csv:2: time field "ts" is missing))
    end

    it "reads back the CSV it writes: a null key and an empty one stay two keys" do
      input = write_file(@dir, "blank.jsonl", %({"ts":1,"u":null}\n{"ts":2,"u":""}\n{"ts":3}\n))
      args = ["tumbling", "--quiet", "--size", "10", "--key", "u", "--agg", "count"]
      written = write_file(@dir, "written.csv", run_ok(*args, "--output-format", "csv", input).stdout)
      again = run_ok(*args, "--time", "start", "--output-format", "csv", written).stdout
      expect(CSV.parse(again)).to eq([%w[u start end count], [nil, "0", "10", "1"], ["", "0", "10", "1"]])
    end

    it "writes CSV to a file too" do
      path = File.join(@dir, "out.csv")
      run_ok(*sessions_ms_args, "--output", path, "--output-format", "csv", fixture("orders.csv"))
      expect(CSV.read(path).first).to eq(%w[user first last count sum_amount])
      expect(CSV.read(path).size).to eq(5)
    end

    it "writes a table with --output-format table: the column names, then one row per record" do
      result = run_ok(*sessions_ms_args, "--output-format", "table", fixture("sessions_ms.jsonl"))
      lines = result.stdout.lines.map(&:chomp).reject { |line| line.strip.empty? }
      header = lines.index { |line| line.include?("sum_amount") }
      expect(header).not_to be_nil, result.stdout
      expect(lines[header]).to match(/user.*first.*last.*count.*sum_amount/)
      rows = lines[(header + 1)..].grep(/1700000/)
      expect(rows.size).to eq(5), result.stdout
      expect(rows[0]).to match(/u2\D+1700000010000\D+1700000010000\D+1\D+5\b/)
      expect(rows[1]).to match(/u1\D+1700000000000\D+1700000030000\D+2\D+30\b/)
      expect(rows[4]).to match(/u2\D+1700000200000\D+1700000200000\D+1\D+3\b/)
    end

    it "escapes control characters in a table, so that data cannot break a row or command the terminal" do
      input = write_file(@dir, "sly.jsonl", %({"ts":1,"user":"a\\u001b]0;pwned\\u0007\\nb"}\n))
      result = run_ok("sessions", "--quiet", "--gap", "5", "--key", "user", "--output-format", "table", input)
      expect(result.stdout).to eq(<<~'TABLE')
        user                     first  last  count
        a\u{1b}]0;pwned\u{7}\nb  1      1     1
      TABLE
    end

    it "defaults to JSONL when standard output is not a terminal" do
      expect(run_ok(*sessions_ms_args, fixture("sessions_ms.jsonl")).stdout).to eq(sessions_ms_output)
    end

    it "defaults to a table when standard output is a terminal" do
      output = +""
      PTY.spawn(WindowMachinesSpec::Command::ENV_FOR_CHILD,
                *command_line(*sessions_ms_args, "--quiet", fixture("sessions_ms.jsonl"))) do |reader, _writer, pid|
        begin
          reader.each_line { |line| output << line }
        rescue Errno::EIO
          nil # the terminal closed: the command is done
        end
        Process.wait(pid)
      end
      expect($?).to be_success, output
      expect(output).to match(/user.*first.*last.*count.*sum_amount/)
      expect(output).not_to include('{"user"')
    end
  end
end
