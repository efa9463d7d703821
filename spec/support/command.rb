# frozen_string_literal: true

require "json"
require "open3"
require "rbconfig"
require "tmpdir"

module WindowMachinesSpec
  # Runs the real `exe/window_machines` (README › From the shell) in a fresh Ruby
  # loading this checkout's lib/, the way a user's shell would, and hands back
  # what it wrote. RUBYOPT is cleared so that `rake spec:typecheck`'s RBS
  # hooks (and Bundler's) stay out of the child.
  module Command
    ROOT = File.expand_path("../..", __dir__)
    LIB = File.join(ROOT, "lib")
    EXE = File.join(ROOT, "exe", "window_machines")
    FIXTURES = File.join(ROOT, "spec", "fixtures", "cli")
    ENV_FOR_CHILD = { "RUBYOPT" => nil }.freeze

    # A run that takes longer than this is stopped and reported as a hang.
    TIMEOUT = 60

    # What a finished run wrote, and how it ended. Destructures like
    # Open3.capture3's result: `stdout, stderr, status = run_cli(...)`.
    Result = Struct.new(:stdout, :stderr, :status) do
      def exitstatus = status.exitstatus
      def success? = status.success?

      # Standard output read as JSON Lines.
      def records = Command.parse_jsonl(stdout)

      def stderr_lines = stderr.lines(chomp: true)

      # For failure messages.
      def describe
        "exit #{status.inspect}\n--- stderr\n#{stderr}--- stdout (first 2000 bytes)\n#{stdout[0, 2000]}"
      end
    end

    # The files of one run in `dir`: output, late, bad, state and standard error.
    RunFiles = Struct.new(:dir) do
      def output = File.join(dir, "out.jsonl")
      def late = File.join(dir, "late.jsonl")
      def bad = File.join(dir, "bad.jsonl")
      def state = File.join(dir, "state")
      def stderr = File.join(dir, "stderr")

      # The file's bytes, nil when it does not exist.
      def read(name) = File.exist?(public_send(name)) ? File.binread(public_send(name)) : nil
    end

    # Runs the command quietly and expects it to succeed and, unless it
    # may report late events, to say nothing on standard error.
    def run_ok(*args, stdin: nil, silent: true)
      result = run_cli(*args, "--quiet", stdin: stdin)
      expect(result).to be_success, result.describe
      expect(result.stderr).to eq(""), result.describe if silent
      result
    end

    module_function

    def command_line(*args)
      [RbConfig.ruby, "-I", LIB, EXE, *args.map(&:to_s)]
    end

    # Runs the command with `args` (and `stdin` as its whole standard input,
    # closed after; empty when nil) and returns a Result once it has exited.
    def run_cli(*args, stdin: nil, chdir: ROOT, env: {}, timeout: TIMEOUT)
      Open3.popen3(ENV_FOR_CHILD.merge(env), *command_line(*args), chdir: chdir) do |input, output, error, waiter|
        [input, output, error].each(&:binmode)
        writer = Thread.new do
          input.write(stdin) unless stdin.nil?
        rescue Errno::EPIPE
          nil # it stopped reading (a usage error, say): what it wrote still counts
        ensure
          input.close
        end
        readers = [output, error].map { |io| Thread.new { io.read } }
        unless waiter.join(timeout)
          Process.kill(:KILL, waiter.pid)
          waiter.join
          raise "window_machines #{args.join(' ')} did not finish within #{timeout} s"
        end
        writer.join
        stdout, stderr = readers.map { |reader| reader.value.force_encoding(Encoding::UTF_8) }
        Result.new(stdout, stderr, waiter.value)
      end
    end

    # Runs the command with pipes for the block to write to and read from
    # (`yield input, output`), to see output come before the input ends; closes
    # the input after the block and returns the Process::Status.
    def stream_cli(*args, timeout: TIMEOUT)
      Open3.popen3(ENV_FOR_CHILD, *command_line(*args), chdir: ROOT) do |input, output, error, waiter|
        error_reader = Thread.new { error.read }
        begin
          yield input, output
        ensure
          input.close unless input.closed?
          output_reader = Thread.new { output.read } # whatever the block left
          unless waiter.join(timeout)
            Process.kill(:KILL, waiter.pid)
            waiter.join
          end
          [error_reader, output_reader].each(&:join)
        end
        waiter.value
      end
    end

    # Runs the command as an unprivileged user (nobody, when the suite runs
    # as root, which every permission lets through) and returns its
    # standard error and Process::Status.
    def unprivileged_cli(*args, chdir:)
      reader, writer = IO.pipe
      pid = fork do
        reader.close
        if Process.uid.zero?
          Process::GID.change_privilege(65_534)
          Process::UID.change_privilege(65_534)
        end
        exec(ENV_FOR_CHILD, *command_line(*args), chdir: chdir, in: File::NULL, out: File::NULL, err: writer)
      end
      writer.close
      stderr = reader.read.force_encoding(Encoding::UTF_8)
      reader.close
      [stderr, Process.wait2(pid).last]
    end

    # Starts the command in the background with its output streams sent to
    # files (or File::NULL) and returns its pid; the caller waits for it.
    def spawn_cli(*args, out: File::NULL, err: File::NULL, stdin: File::NULL)
      Process.spawn(ENV_FOR_CHILD, *command_line(*args), chdir: ROOT, in: stdin, out: out, err: err)
    end

    # JSON Lines text as an Array of Hashes (blank lines are not records).
    def parse_jsonl(text)
      text.each_line.reject { |line| line.strip.empty? }.map { |line| JSON.parse(line) }
    end

    def fixture(name) = File.join(FIXTURES, name)

    def fixture_text(name) = File.binread(fixture(name))

    # Writes `content` to `name` under `dir` and returns the path.
    def write_file(dir, name, content)
      path = File.join(dir, name)
      File.binwrite(path, content)
      path
    end

    # The JSON Lines text of `records`, one compact object per line.
    def jsonl(*records) = records.flatten.map { |record| "#{JSON.generate(record)}\n" }.join

    # The summaries the contract prints at the end of a run (0 when absent).
    def late_count(stderr) = stderr[/^window_machines: (\d+) late events?\b/, 1].to_i
    def bad_count(stderr) = stderr[/^window_machines: (\d+) bad lines? skipped\b/, 1].to_i

    # The prefix of a bad-input report: `window_machines: FILE:LINE: `.
    def bad_input_report(path, line) = /^window_machines: #{Regexp.escape(path)}:#{line}: \S/

    # Records in a form where only what the contract fixes is compared:
    # closing order is earliest end first, but records with the same end
    # (different keys) may come in any order, so they are sorted by key.
    def canonical(records, end_column, key_columns)
      records.each_with_index.sort_by do |record, index|
        [record[end_column], JSON.generate(key_columns.map { |column| record[column] }), index]
      end.map(&:first)
    end
  end
end

# Each example in a directory of its own, `@dir`, removed after.
RSpec.shared_context "in a temporary directory" do
  around do |example|
    Dir.mktmpdir("window_machines-cli") do |dir|
      @dir = dir
      example.run
    end
  end
end
