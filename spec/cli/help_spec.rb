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
