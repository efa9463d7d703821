# frozen_string_literal: true

require "fileutils"
require "zlib"

# --state FILE (README › From the shell): checkpoints about every second and when
# the run stops (SIGINT, SIGTERM, bad input); a run given an existing state
# resumes, cutting --output, --late and --bad back to the recorded lengths, so
# that after any stop (SIGKILL included) and resume those files are exactly
# what an uninterrupted run writes. The state is removed on success and
# refused (exit 2) when written with other options.
RSpec.describe "window_machines --state" do
  include WindowMachinesSpec::Command

  def files(name)
    FileUtils.mkdir_p(File.join(@dir, name))
    WindowMachinesSpec::Command::RunFiles.new(File.join(@dir, name))
  end

  def file_args(files) = ["--output", files.output, "--late", files.late, "--bad", files.bad, "--state", files.state]

  describe "after a stop on bad input" do
    include_context "in a temporary directory"

    let(:bad_line_number) { 30 }

    # 60 events from three users (epoch seconds, gap 10, lag 5); every 7th is
    # 30 behind (late), and line 30 has a sum field that is not a number.
    let(:good_lines) do
      rng = Random.new(42)
      t = 1000
      (1..60).map do |n|
        t += rng.rand(0..8)
        %({"ts":#{(n % 7).zero? ? t - 30 : t},"user":"u#{rng.rand(3)}","amount":#{n}}\n)
      end
    end
    let(:lines) do
      good_lines.each_with_index.map do |line, index|
        index == bad_line_number - 1 ? line.sub(/"amount":\d+/, '"amount":"oops"') : line
      end
    end
    let(:options) { %w[sessions --quiet --gap 10 --lag 5 --key user --agg count,sum:amount,collect:amount] }
    let(:reference) do
      ref = files("reference")
      input = write_file(ref.dir, "in.jsonl", good_lines.join)
      result = run_cli(*options, "--output", ref.output, "--late", ref.late, input)
      expect(result).to be_success, result.describe
      ref
    end

    def stopped_run
      run = files("run")
      input = write_file(run.dir, "in.jsonl", lines.join)
      result = run_cli(*options, *file_args(run), input)
      expect(result.exitstatus).to eq(1), result.describe
      [run, input, result]
    end

    it "refuses a --late file the stopped run did not keep once late lines have gone by, and resumes without it" do
      run = files("run")
      input = write_file(run.dir, "in.jsonl", lines.join)
      stopped = run_cli(*options, "--output", run.output, "--state", run.state, input)
      expect(stopped.exitstatus).to eq(1), stopped.describe
      state = run.read(:state)
      again = run_cli(*options, "--skip-bad", "--output", run.output, "--state", run.state, "--late", run.late, input)
      expect(again.exitstatus).to eq(2), again.describe
      expect(again.stderr).to match(/--late .*: the run that saved the state kept no --late file, and \d+ late lines have gone by/)
      expect([run.read(:state), File.exist?(run.late)]).to eq([state, false])
      resumed = run_cli(*options, "--skip-bad", "--output", run.output, "--state", run.state, input)
      expect(resumed).to be_success, resumed.describe
    end

    it "refuses a --late or --bad file other than the one the stopped run kept, leaving that other file alone" do
      run, input, = stopped_run
      state = run.read(:state)
      unrelated = write_file(run.dir, "notes.txt", "#{(1..1000).to_a.join("\n")}\n")
      kept = File.read(unrelated)
      { "--late" => run.late, "--bad" => run.bad }.each do |option, kept_file|
        arguments = file_args(run).each_slice(2).map { |name, path| name == option ? [name, unrelated] : [name, path] }
        again = run_cli(*options, "--skip-bad", *arguments.flatten, input)
        expect(again.exitstatus).to eq(2), again.describe
        expect(again.stderr).to include("#{option} #{unrelated}: the run that saved the state wrote its " \
                                        "#{option.delete_prefix('--')} lines to #{File.expand_path(kept_file)}")
      end
      expect([File.read(unrelated), run.read(:state)]).to eq([kept, state])
      # The kept file, spelt another way, is the kept file.
      FileUtils.mkdir_p(File.join(File.dirname(run.late), "sub"))
      spelt = file_args(run).each_slice(2).flat_map do |name, path|
        name == "--late" ? [name, File.join(File.dirname(path), "sub", "..", File.basename(path))] : [name, path]
      end
      resumed = run_cli(*options, "--skip-bad", *spelt, input)
      expect(resumed).to be_success, resumed.describe
    end

    it "saves the state, having written what closed before the bad line" do
      run, input, result = stopped_run
      expect(result.stderr).to match(bad_input_report(input, bad_line_number))
      expect(File).to exist(run.state)
      expect(run.read(:output)).not_to be_empty
      expect(reference.read(:output)).to start_with(run.read(:output))
      expect(reference.read(:late)).to start_with(run.read(:late).to_s)
    end

    it "run again on the same input stops at the same line again, its output unchanged" do
      run, input, first = stopped_run
      output = run.read(:output)
      again = run_cli(*options, *file_args(run), input)
      expect(again.exitstatus).to eq(1), again.describe
      expect(again.stderr).to eq(first.stderr)
      expect(run.read(:output)).to eq(output)
      expect(File).to exist(run.state)
    end

    it "refuses to resume into an --output cut shorter than the state recorded, naming it once" do
      run, input, = stopped_run
      File.write(run.output, "")
      File.write(input, good_lines.join)
      result = run_cli(*options, *file_args(run), input)
      expect(result.exitstatus).to eq(1), result.describe
      expect(result.stderr).to include("#{run.output}: shorter than the state file says it was")
      expect(result.stderr.scan(run.output).size).to eq(1)
    end

    it "refuses to resume into an --output that is gone, without making it" do
      run, input, = stopped_run
      File.delete(run.output)
      File.write(input, good_lines.join)
      result = run_cli(*options, *file_args(run), input)
      expect(result.exitstatus).to eq(1), result.describe
      expect(result.stderr).to include("#{run.output}: shorter than the state file says it was")
      expect(File).not_to exist(run.output)
    end

    it "removes, once finished, a scratch file a run killed while writing a checkpoint left, and no other" do
      run, input, = stopped_run
      scratch = "#{run.state}.tmp"
      File.write(scratch, "#{run.read(:state)[0, 20]}, cut short")
      File.write(input, good_lines.join)
      result = run_cli(*options, *file_args(run), input)
      expect(result).to be_success, result.describe
      expect([run.state, scratch].select { |path| File.exist?(path) }).to eq([])
      File.write(scratch, "someone else's")
      again = run_cli(*options, *file_args(run), input)
      expect(again).to be_success, again.describe
      expect(File.read(scratch)).to eq("someone else's")
    end

    it "refuses to resume when an input read to its end before the stop has changed since (exit 1), and resumes once it is back" do
      run = files("run")
      first_lines = good_lines.first(20)
      earlier = write_file(run.dir, "earlier.jsonl", first_lines.join)
      input = write_file(run.dir, "in.jsonl", lines.join)
      stopped = run_cli(*options, *file_args(run), earlier, input)
      expect(stopped.exitstatus).to eq(1), stopped.describe
      state = run.read(:state)
      # Same length, one digit changed.
      File.write(earlier, first_lines.join.sub('"amount":1}', '"amount":2}'))
      File.write(input, good_lines.join)
      changed = run_cli(*options, *file_args(run), earlier, input)
      expect(changed.exitstatus).to eq(1), changed.describe
      expect(changed.stderr).to include("earlier.jsonl: not what the state file's run read to its end")
      expect(run.read(:state)).to eq(state)
      File.write(earlier, first_lines.join)
      resumed = run_cli(*options, *file_args(run), earlier, input)
      expect(resumed).to be_success, resumed.describe
      reference_of_both = run_cli(*options, earlier, input)
      expect(run.read(:output)).to eq(reference_of_both.stdout)
    end

    it "resumed once the line is fixed, cuts back what was written after the checkpoint and ends with the uninterrupted run's files" do
      run, input, = stopped_run
      # Whatever is past the recorded lengths must go.
      File.write(run.output, %({"junk":true}\n), mode: "a")
      File.write(run.late, "junk\n", mode: "a")
      File.write(input, good_lines.join)
      result = run_cli(*options, *file_args(run), input)
      expect(result).to be_success, result.describe
      expect(run.read(:output)).to eq(reference.read(:output))
      expect(run.read(:late)).to eq(reference.read(:late))
      expect(File).not_to exist(run.state)
    end

    {
      "another --gap" => [%w[sessions --quiet --gap 11 --lag 5 --key user --agg count,sum:amount,collect:amount],
                          "--gap"],
      "another --lag" => [%w[sessions --quiet --gap 10 --lag 6 --key user --agg count,sum:amount,collect:amount],
                          "--lag"],
      "another --agg" => [%w[sessions --quiet --gap 10 --lag 5 --key user --agg count], "--agg"],
      "another --key" => [%w[sessions --quiet --gap 10 --lag 5 --agg count,sum:amount,collect:amount], "--key"],
      "another subcommand" => [%w[tumbling --quiet --size 10 --lag 5 --key user --agg count,sum:amount,collect:amount],
                               "the subcommand, --grace, --offset, --size, --gap"]
    }.each do |what, (other_options, named)|
      it "refuses a state written with #{what}, naming what differs: exit 2, leaving the state and the output as they were" do
        run, input, = stopped_run
        File.write(input, good_lines.join)
        state = run.read(:state)
        output = run.read(:output)
        result = run_cli(*other_options, *file_args(run), input)
        expect(result.exitstatus).to eq(2), result.describe
        expect(result.stderr).to include("was written by a run with other options (this one differs in: #{named});")
        expect(run.read(:state)).to eq(state)
        expect(run.read(:output)).to eq(output)
      end
    end

    it "from standard input continues with what it is given next" do
      run = files("stdin")
      first = run_cli(*options, *file_args(run), stdin: lines[0, bad_line_number].join)
      expect(first.exitstatus).to eq(1), first.describe
      expect(File).to exist(run.state)
      rest = run_cli(*options, *file_args(run), stdin: good_lines[(bad_line_number - 1)..].join)
      expect(rest).to be_success, rest.describe
      expect(run.read(:output)).to eq(reference.read(:output))
      expect(run.read(:late)).to eq(reference.read(:late))
      expect(File).not_to exist(run.state)
    end
  end

  describe "stopped by a signal on a large input" do
    before(:context) do
      @dir = Dir.mktmpdir("window_machines-state-signals")
      @seed = RSpec.configuration.seed
      @inputs = write_large_input(@dir, Random.new(@seed))
      @reference = files("reference")
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      result = run_cli(*session_options, *file_args(@reference), *@inputs)
      @duration = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
      raise "the uninterrupted run failed:\n#{result.describe}" unless result.success?

      @reference_report = result.stderr
    end

    after(:context) { FileUtils.remove_entry(@dir) }

    let(:rng) { Random.new(@seed + (RSpec.current_example.description.sum * 7919)) }

    def session_options = %w[sessions --quiet --gap 10s --lag 1s --key user --agg count,sum:amount,max:amount --skip-bad]

    # About 300,000 events over three files (the second gzipped), epoch ms,
    # 500 users; a tenth out of order within the lag, one in 200 late and one
    # in 1000 with a sum field that is not a number.
    def write_large_input(dir, rng)
      t = 1_700_000_000_000
      %w[a.jsonl b.jsonl.gz c.jsonl].map do |name|
        text = +""
        100_000.times do
          t += rng.rand(0..40)
          roll = rng.rand(1000)
          ts = if roll < 100 then t - rng.rand(0..1000)
               elsif roll < 105 then t - rng.rand(1001..60_000)
               else t
               end
          amount = roll == 999 ? '"x"' : rng.rand(1..1000)
          text << %({"ts":#{ts},"user":"u#{rng.rand(500)}","amount":#{amount}}\n)
        end
        path = File.join(dir, name)
        name.end_with?(".gz") ? Zlib::GzipWriter.open(path) { |gz| gz.write(text) } : File.write(path, text)
        path
      end
    end

    # Size, time and inode of a file (nil when there is none), to see it change.
    def fingerprint(path)
      stat = File.stat(path)
      [stat.size, stat.mtime, stat.ino]
    rescue Errno::ENOENT
      nil
    end

    # Polls until the block is true; returns the run's status instead if it
    # exits first (nil otherwise).
    def wait_for(pid)
      until yield
        _, status = Process.wait2(pid, Process::WNOHANG)
        if status
          @log << "exited first: #{status.inspect.sub(/pid \d+ /, '')}"
          return status
        end

        sleep 0.002
      end
      nil
    end

    # Starts a run and stops it with `signal` after a random delay; returns
    # its Process::Status. SIGTERM and SIGINT wait until the run is under way
    # (it has written output or a checkpoint), so that the signal meets the
    # command's handler rather than Ruby's start-up. With `pause` the run is
    # first held with SIGSTOP for longer than the checkpoint interval (about
    # a second) and let go, and the signal waits for the checkpoint that
    # follows: the input is read in well under a second, so without this a
    # SIGKILL mostly lands before any periodic checkpoint.
    def interrupt(run, signal, options: session_options, pause: false)
      before = [fingerprint(run.output), fingerprint(run.state)]
      pid = spawn_cli(*options, *file_args(run), *@inputs, err: run.stderr)
      if signal != :KILL || pause
        status = wait_for(pid) do
          [fingerprint(run.output), fingerprint(run.state)] != before &&
            (File.size?(run.output) || File.exist?(run.state))
        end
        return status if status
      end
      if pause
        checkpoint = fingerprint(run.state)
        Process.kill(:STOP, pid)
        sleep 1.2
        Process.kill(:CONT, pid)
        status = wait_for(pid) { fingerprint(run.state) != checkpoint }
        return status if status

        @log << "paused, then checkpointed"
      end
      delay = rng.rand * @duration * (signal == :KILL && !pause ? 0.9 : 0.3)
      @log << "#{signal} after #{delay.round(3)} s"
      sleep delay
      begin
        Process.kill(signal, pid)
      rescue Errno::ESRCH
        nil # already gone: nothing to interrupt
      end
      Process.wait2(pid).last.tap { |status| @log << status.inspect.sub(/pid \d+ /, "") }
    end

    def resume(run, options: session_options)
      result = run_cli(*options, *file_args(run), *@inputs)
      expect(result).to be_success, "#{context_message}\n#{result.describe}"
      result
    end

    def context_message = "seed #{@seed}, reference run #{@duration.round(3)} s; #{@log.join(', ')}"

    def expect_same_files(run, reference = @reference)
      %i[output late bad].each do |name|
        expect(run.read(name)).to eq(reference.read(name)), "#{name} differs (#{context_message})"
      end
      expect(File).not_to exist(run.state)
    end

    def expect_killed_or_finished(status)
      expect(status.termsig == 9 || status.success?).to be(true), "#{status.inspect} (#{context_message})"
    end

    before { @log = [] }

    it "writes the reference files: records, late events and bad lines, and removes the state" do
      expect(File.size(@reference.output)).to be > 100_000
      expect(@reference.read(:late).lines.size).to be > 100
      expect(@reference.read(:bad).lines.size).to be > 100
      expect(File).not_to exist(@reference.state)
    end

    it "after a SIGKILL at a random moment, resumes to exactly the uninterrupted run's files" do
      run = files("kill-once")
      expect_killed_or_finished(interrupt(run, :KILL))
      resume(run)
      expect_same_files(run)
    end

    it "after a SIGKILL just past a periodic checkpoint, resumes to exactly the uninterrupted run's files" do
      run = files("kill-after-checkpoint")
      expect_killed_or_finished(interrupt(run, :KILL, pause: true))
      resume(run)
      expect_same_files(run)
    end

    it "after SIGKILL twice in a row (the second time while resuming), resumes to exactly the uninterrupted run's files" do
      run = files("kill-twice")
      expect_killed_or_finished(interrupt(run, :KILL, pause: true))
      expect_killed_or_finished(interrupt(run, :KILL, pause: rng.rand(2).zero?))
      resume(run)
      expect_same_files(run)
    end

    { TERM: 143, INT: 130 }.each do |signal, code|
      it "on SIG#{signal} saves the state and exits #{code}; resumed, ends with the uninterrupted run's files" do
        run = files("#{signal.downcase}-once")
        status = interrupt(run, signal)
        if status.success?
          @log << "finished before SIG#{signal}" # nothing to interrupt: the files must still be right
        else
          expect(status.exitstatus).to eq(code), "#{status.inspect} (#{context_message})\n#{File.read(run.stderr)}"
          expect(File).to exist(run.state)
          # The counts and the first bad line skipped are the whole run's.
          expect(resume(run).stderr).to eq(@reference_report.gsub(@reference.dir, run.dir)), context_message
        end
        expect_same_files(run)
      end
    end

    it "after SIGTERM and then a SIGKILL of the resumed run, resumes to exactly the uninterrupted run's files" do
      run = files("term-then-kill")
      status = interrupt(run, :TERM)
      expect(status.success? || status.exitstatus == 143).to be(true), "#{status.inspect} (#{context_message})"
      # The resumed run writes past the SIGTERM checkpoint before it is killed.
      expect_killed_or_finished(interrupt(run, :KILL))
      resume(run)
      expect_same_files(run)
    end

    it "started again after it finished (the state removed), writes what a fresh run writes" do
      run = files("finished")
      resume(run)
      expect(File).not_to exist(run.state)
      resume(run)
      expect_same_files(run)
    end

    it "resumes tumbling windows with grace exactly too" do
      options = %w[tumbling --quiet --size 10s --grace 2s --lag 1s --key user --agg count,sum:amount --skip-bad]
      reference = files("tumbling-reference")
      resume(reference, options: options)
      run = files("tumbling")
      status = interrupt(run, :TERM, options: options)
      expect(status.success? || status.exitstatus == 143).to be(true), "#{status.inspect} (#{context_message})"
      expect_killed_or_finished(interrupt(run, :KILL, options: options))
      resume(run, options: options)
      expect_same_files(run, reference)
    end
  end
end
