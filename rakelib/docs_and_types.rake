# frozen_string_literal: true

# Type signatures (sig/) and API documentation (YARD). Rake loads this file
# from rakelib/ by itself.

require "rake/clean"

CLOBBER.include("doc", ".yardoc")

# Runs a gem's executable with this Ruby. The executables are not always on
# PATH (Debian's Ruby ships rbs without one), so they are found through
# RubyGems, which Bundler points at the bundle.
def run_gem_executable(gem_name, executable, *args, env: {})
  sh env, Gem.ruby, Gem.bin_path(gem_name, executable), *args
end

namespace :rbs do
  desc "Validate the RBS signatures in sig/ (rbs -I sig validate)"
  task :validate do
    run_gem_executable "rbs", "rbs", "-I", "sig", "validate", "--silent"
  end
end

namespace :spec do
  desc "Run the specs under RBS's runtime type checker, failing on any mismatch with sig/"
  task typecheck: :compile do
    env = {
      "RBS_TEST_TARGET" => "WindowMachines::*",
      "RBS_TEST_OPT" => "-I sig",
      # Check every element of a returned Array, not a sample of 100.
      "RBS_TEST_SAMPLE_SIZE" => "ALL",
      "RBS_TEST_DOUBLE_SUITE" => "rspec",
      "RBS_TEST_LOGLEVEL" => "warn",
      "RUBYOPT" => [ENV.fetch("RUBYOPT", nil), "-rrbs/test/setup"].compact.join(" ")
    }
    # See spec/spec_helper.rb for what these tags mark.
    run_gem_executable "rspec-core", "rspec", "--tag", "~mistyped", "--tag", "~ractor", env: env
  end
end

desc "Build the API documentation into doc/; fail on YARD warnings or anything undocumented"
task :doc do
  run_gem_executable "yard", "yard", "doc", "--fail-on-warning", "--no-stats"

  stats = IO.popen([Gem.ruby, Gem.bin_path("yard", "yard"), "stats", "--list-undoc"], &:read)
  puts stats
  abort "yard stats failed" unless $?.success?
  abort "Undocumented objects (see above)" if stats.include?("Undocumented Objects") || !stats.include?("100.00% documented")

  # A directive in a class body without code is filed under the namespace of
  # the statement after the body; catch anything that landed at the top.
  listed = IO.popen([Gem.ruby, Gem.bin_path("yard", "yard"), "list", "--query", "namespace.root?"], &:read)
  stray = listed.lines.reject { |line| line.split.last == "WindowMachines" }
  abort "Documented outside WindowMachines:\n#{stray.join}" unless stray.empty?
end
