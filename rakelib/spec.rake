# frozen_string_literal: true

# The specs, plain and under RBS's runtime type checker.

require "rspec/core/rake_task"
require_relative "support/window_machines_tasks"

RSpec::Core::RakeTask.new(:spec)
task spec: :compile

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
    # See spec/spec_helper.rb for what these tags mark. The command's specs
    # run it in child processes the type checks do not reach.
    WindowMachinesTasks.run_gem_executable "rspec-core", "rspec", "--tag", "~mistyped", "--tag", "~ractor",
                                           "--exclude-pattern", "spec/cli/**/*_spec.rb", env: env
  end
end
