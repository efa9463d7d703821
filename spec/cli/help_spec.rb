# frozen_string_literal: true

# `window_machines --help`, `--version` and `SUBCOMMAND --help`
# (README › From the shell): help goes to standard output with exit 0.
RSpec.describe "window_machines help and version" do
  include WindowMachinesSpec::Command

  common = %w[--key --time --time-format --lag --agg --input-format --output --output-format --late --skip-bad --bad
              --state --quiet --help].freeze

  %w[--help -h].each do |flag|
    it "#{flag} names every subcommand and exits 0" do
      result = run_cli(flag)
      expect(result).to be_success, result.describe
      expect(result.stdout).to include("sessions", "tumbling", "hopping", "--version")
    end
  end

  it "--version prints the gem's version and exits 0" do
    result = run_cli("--version")
    expect(result).to be_success, result.describe
    expect(result.stdout).to include(WindowMachines::VERSION)
  end

  it "SUBCOMMAND --version prints the version too, and an empty --key or --time is bad usage" do
    result = run_cli("sessions", "--gap", "5", "--version")
    expect(result).to be_success, result.describe
    expect(result.stdout).to eq("window_machines #{WindowMachines::VERSION}\n")
    %w[--key --time].each do |option|
      result = run_cli("sessions", "--gap", "5", option, "", stdin: %({"ts":1}\n))
      expect(result.exitstatus).to eq(2), result.describe
      expect(result.stderr).to include("invalid argument: #{option} (an empty field name)")
    end
  end

  it "stops quietly with 128 + N on a signal that comes while Ruby loads the command" do
    Dir.mktmpdir do |dir|
      # Loaded in place of the command, it interrupts its own loading.
      FileUtils.mkdir_p(File.join(dir, "window_machines"))
      stand_in = File.join(dir, "window_machines/command.rb")
      File.write(stand_in, %(Process.kill("INT", Process.pid)\nsleep 5\n))
      _, stderr, status = Open3.capture3(RbConfig.ruby, "-I", dir, WindowMachinesSpec::Command::EXE, "--version")
      expect([status.exitstatus, stderr]).to eq([130, "window_machines: stopped by SIGINT\n"])
      # RubyGems' require, interrupted, may raise an error of its own caused by the signal.
      File.write(stand_in, %(begin\n  Process.kill("TERM", Process.pid)\n  sleep 5\nensure\n  raise "CRITICAL"\nend\n))
      _, stderr, status = Open3.capture3(RbConfig.ruby, "-I", dir, WindowMachinesSpec::Command::EXE, "--version")
      expect([status.exitstatus, stderr]).to eq([143, "window_machines: stopped by SIGTERM\n"])
    end
  end

  {
    "sessions" => %w[--gap],
    "tumbling" => %w[--size --grace --offset],
    "hopping" => %w[--size --advance --grace --offset]
  }.each do |subcommand, own|
    it "#{subcommand} --help lists its own options and every common one, and exits 0" do
      result = run_cli(subcommand, "--help")
      expect(result).to be_success, result.describe
      expect(result.stdout).to include(subcommand, *own, *common)
    end

    it "#{subcommand} -h reads no input, even with a required option missing" do
      result = run_cli(subcommand, "-h", stdin: %({"ts":1}\n))
      expect(result).to be_success, result.describe
      expect(result.stdout).to include(*own)
      expect(result.stdout).not_to include('"count"')
    end
  end
end
