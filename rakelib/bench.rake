# frozen_string_literal: true

# Benchmarks, each against the freshly compiled extension.

namespace :bench do
  desc "Time each operation against Integer#divmod and plain Ruby"
  task(ops: :compile) { ruby "-Ilib", "bench/ops.rb" }

  desc "Report memory use and RSS across 10 million tracker cycles"
  task(memory: :compile) { ruby "-Ilib", "bench/memory.rb" }

  desc "KeyedSessions against a swept Hash of Sessions (PARTNERS=1000000)"
  task(keyed: :compile) { ruby "-Ilib", "bench/keyed.rb" }

  desc "KeyedSessions over a million release/re-hold cycles, and colliding keys against a Hash"
  task(churn: :compile) { ruby "-Ilib", "bench/churn.rb" }

  desc "Aggregating windows against KeyedSessions and plain Ruby (PARTNERS=1000000)"
  task(windows: :compile) { ruby "-Ilib", "bench/windows.rb" }

  desc "TumblingWindows#add_all against add per event (EVENTS=1000000, KEYS=10000)"
  task(batch: :compile) { ruby "-Ilib", "bench/batch.rb" }

  desc "VersionedTable against a Hash and a plain-Ruby versioned table (KEYS=1000000)"
  task(versioned: :compile) { ruby "-Ilib", "bench/versioned.rb" }

  desc "The window_machines command against DuckDB on a file (EVENTS=3000000, USERS=1000000, DUCKDB_PYTHON)"
  task(cli: :compile) do
    # DuckDB is only the benchmark's peer: without DUCKDB_PYTHON, a throwaway virtualenv.
    venv = "tmp/bench_cli/venv"
    unless ENV["DUCKDB_PYTHON"] || system("#{venv}/bin/python", "-c", "import duckdb", err: File::NULL)
      sh "python3 -m venv #{venv} && #{venv}/bin/python -m pip install --quiet duckdb" do |ok, _|
        warn "bench:cli: could not install duckdb into #{venv}; timing the command alone" unless ok
      end
    end
    ruby "-Ilib", "bench/cli.rb"
  end
end

desc "Run every benchmark"
task bench: %w[bench:ops bench:memory bench:keyed bench:churn bench:windows bench:batch]
