# frozen_string_literal: true

# The window_machines command against DuckDB, end to end, on a file. The
# input (bench/support/cli_stream.rb, written once into tmp/bench_cli/):
# EVENTS purchases (default 3,000,000) from USERS users (default 1,000,000)
# over an 8-hour day as JSON lines, out of order by up to 5 minutes. The
# command, `window_machines sessions --gap 30m --lag 5m --key user --time ts
# --agg count,sum:amount`, writes each user's sessions to a JSON lines file;
# DuckDB (bench/support/duckdb_sessions.py) runs the same sessionization in
# SQL, from read_json to a CSV file. Then the same for one-minute tumbling
# windows, counted per user. Each run is a process of its own, timed from
# start to exit, its peak RSS read from getrusage by a small Python parent;
# the command runs as an installed gem's would (`ruby -Ilib exe/...`, without
# Bundler). Best time and largest peak of ROUNDS (default 3) alternating runs
# each; then both outputs must hold the same windows. Last, the sessions
# command's events per second from CSV and from gzipped JSON lines, and one
# key holding about 4,000 sessions open at once against holding one. The
# target: at least 2x faster than DuckDB, with a smaller peak. DuckDB comes
# from the Python named by DUCKDB_PYTHON (bench:cli makes a throwaway
# virtualenv for it under tmp/bench_cli/); without it only the command is
# measured. Run: bundle exec rake bench:cli (EVENTS=30000 USERS=10000 for a
# quick look).

require "fileutils"
require "json"
require "open3"
require "rbconfig"
require_relative "support/cli_stream"

EVENTS = Integer(ENV.fetch("EVENTS", 3_000_000))
USERS = Integer(ENV.fetch("USERS", 1_000_000))
ROUNDS = Integer(ENV.fetch("ROUNDS", 3))
TARGET = 2.0
BUSY_EVENTS = 300_000
BUSY_TARGET = 2.0
ROOT = File.expand_path("..", __dir__)
DIR = File.join(ROOT, "tmp/bench_cli")
COMMAND = [RbConfig.ruby, "-I", File.join(ROOT, "lib"), File.join(ROOT, "exe/window_machines")].freeze
VENV_PYTHON = File.join(DIR, "venv/bin/python")
DUCKDB_PYTHON = ENV.fetch("DUCKDB_PYTHON") { File.exist?(VENV_PYTHON) ? VENV_PYTHON : "python3" }
DUCKDB = [DUCKDB_PYTHON, File.join(__dir__, "support/duckdb_sessions.py")].freeze

# Runs the command given as arguments and prints its wall-clock time and peak
# RSS (the largest of the children it waited for, in KiB on Linux) as JSON.
MEASURE = <<~PYTHON
  import json, resource, subprocess, sys, time
  started = time.perf_counter()
  done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, text=True)
  print(json.dumps({"status": done.returncode, "seconds": time.perf_counter() - started,
                    "peak_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                    "stdout": done.stdout}))
PYTHON

Run = Struct.new(:seconds, :peak_kib, :stdout) do
  def peak_mib = peak_kib / 1024.0
end

# One kind of window: the command's arguments, its output's fields, DuckDB's.
Workload = Struct.new(:name, :arguments, :fields, :duckdb, keyword_init: true)

WORKLOADS = [
  Workload.new(name: "sessions", arguments: %w[sessions --gap 30m --agg count,sum:amount],
               fields: %w[user first last count sum_amount], duckdb: %w[sessions 1800000]),
  Workload.new(name: "tumbling", arguments: %w[tumbling --size 1m --agg count],
               fields: %w[user start end count], duckdb: %w[tumbling 60000])
].freeze

def verdict(met) = met ? "met" : "NOT met"

def measure(*argv)
  out, status = Open3.capture2({ "RUBYOPT" => nil }, "python3", "-c", MEASURE, *argv)
  abort "could not run #{argv.first} under python3" unless status.success?
  result = JSON.parse(out)
  abort "#{argv.join(' ')} exited with #{result['status']}" unless result["status"].zero?
  Run.new(result["seconds"], result["peak_kib"], result["stdout"])
end

# The fastest run's time and output, with the largest peak of all.
def best(runs)
  fastest = runs.min_by(&:seconds)
  Run.new(fastest.seconds, runs.map(&:peak_kib).max, fastest.stdout)
end

def window_machines(workload, input, output)
  [*COMMAND, *workload.arguments, "--lag", "5m", "--key", "user", "--time", "ts",
   "--output", output, "--output-format", "jsonl", "--quiet", input]
end

def output(name) = File.join(DIR, "out", name)

# Each window as one "field,field,..." String.
def command_rows(path, fields) = File.foreach(path).map { |line| JSON.parse(line).values_at(*fields).join(",") }
def duckdb_rows(path) = File.foreach(path, chomp: true).drop(1)

def differences(ours, theirs)
  return if ours.size == theirs.size && ours.sort == theirs.sort

  only_ours = ours - theirs
  only_theirs = theirs - ours
  format("DIFFER: %d from window_machines, %d from DuckDB; %d only in window_machines' (%s), %d only in DuckDB's (%s)",
         ours.size, theirs.size, only_ours.size, only_ours.first(2).join("; "),
         only_theirs.size, only_theirs.first(2).join("; "))
end

def compare(workload, ours, duck)
  ours_rows = command_rows(output("#{workload.name}.jsonl"), workload.fields)
  base = "#{workload.name}: window_machines #{seconds_and_peak(ours)} (#{ours_rows.size} windows)"
  return puts("#{base}; DuckDB not available") unless duck

  duck_rows = duckdb_rows(output("#{workload.name}-duckdb.csv"))
  difference = differences(ours_rows, duck_rows)
  speedup = duck.seconds / ours.seconds
  memory = ours.peak_kib.fdiv(duck.peak_kib)
  puts format("%s; DuckDB %.2f s (%.2f s in the engine), %.0f MiB peak; %.2fx faster (target >= %.1fx: %s), " \
              "%.2fx DuckDB's peak (target < 1x: %s); %s",
              base, duck.seconds, JSON.parse(duck.stdout)["engine_seconds"], duck.peak_mib, speedup, TARGET,
              verdict(speedup >= TARGET), memory, verdict(memory < 1), difference || "#{workload.name} identical")
end

def seconds_and_peak(run) = format("%.2f s, %.0f MiB peak", run.seconds, run.peak_mib)

abort "bench:cli needs exe/window_machines" unless File.exist?(COMMAND.last)
FileUtils.mkdir_p(File.join(DIR, "out"))
files = CliStream.files(EVENTS, USERS, dir: DIR)
made = if CliStream.written?(files)
         "written before"
       else
         started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
         CliStream.write(files, EVENTS, USERS)
         format("written in %.1f s", Process.clock_gettime(Process::CLOCK_MONOTONIC) - started)
       end
duckdb = system(DUCKDB_PYTHON, "-c", "import duckdb", err: File::NULL) &&
         Open3.capture2(DUCKDB_PYTHON, "-c", "import duckdb; print(duckdb.__version__)").first.strip

puts RUBY_DESCRIPTION
puts format("%d events from %d users over %d h as JSON lines (%.0f MB), out of order by up to %d min; %s",
            EVENTS, USERS, CliStream::DAY / 3_600_000, File.size(files.jsonl) / 1e6, CliStream::LATE / 60_000,
            made)
puts duckdb ? "DuckDB #{duckdb} (#{DUCKDB_PYTHON})" : "DuckDB not available: #{DUCKDB_PYTHON} cannot import duckdb"
puts "best time and largest peak of #{ROUNDS} runs each, alternating"
puts

fastest = WORKLOADS.to_h do |workload|
  runs = Array.new(ROUNDS) do
    [measure(*window_machines(workload, files.jsonl, output("#{workload.name}.jsonl"))),
     (measure(*DUCKDB, *workload.duckdb, files.jsonl, output("#{workload.name}-duckdb.csv")) if duckdb)]
  end
  ours, duck = runs.transpose
  compare(workload, best(ours), duckdb && best(duck))
  [workload.name, best(ours)]
end

puts
sessions = WORKLOADS.first
from_json = output("sessions.jsonl")
puts format("sessions from JSON lines: %.2f M events/s", EVENTS / fastest["sessions"].seconds / 1e6)
{ "CSV" => files.csv, "gzipped JSON lines" => files.gzip }.each do |label, input|
  run = best(Array.new(ROUNDS) { measure(*window_machines(sessions, input, output("sessions-other.jsonl"))) })
  same = FileUtils.compare_file(output("sessions-other.jsonl"), from_json) ||
         !differences(*[output("sessions-other.jsonl"), from_json].map { |path| command_rows(path, sessions.fields) })
  puts format("sessions from %s: %.2f M events/s (%s); %s", label, EVENTS / run.seconds / 1e6, seconds_and_peak(run),
              same ? "the same sessions as from JSON lines" : "sessions DIFFER from JSON lines'")
end

# One key holding about 4,000 sessions open at once (a 1 s gap under an
# 8,000 s lag) against one at a time: handing over the oldest of them must
# not shift the rest, so an event costs about the same.
busy = File.join(DIR, "busy-key-#{BUSY_EVENTS}.jsonl")
File.write(busy, Array.new(BUSY_EVENTS) { |n| %({"ts":#{n * 2},"k":"a"}\n) }.join) unless File.exist?(busy)
busy_seconds = lambda do |lag|
  arguments = ["sessions", "--gap", "1", "--lag", lag.to_s, "--key", "k", "--time-format", "s", "--quiet",
               "--output", output("busy.jsonl"), busy]
  best(Array.new(ROUNDS) { measure(*COMMAND, *arguments) }).seconds
end
one, many = [0, 8_000].map { |lag| busy_seconds.call(lag) }
puts format("one key, %d events: %.2f s with about 4,000 sessions open at once against %.2f s with one: " \
            "%.2fx (target <= %.1fx: %s)", BUSY_EVENTS, many, one, many / one, BUSY_TARGET,
            verdict(many / one <= BUSY_TARGET))
