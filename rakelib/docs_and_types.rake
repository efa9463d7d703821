# frozen_string_literal: true

# Type signatures (sig/) and API documentation (YARD).

require "rake/clean"
require_relative "support/window_machines_tasks"

CLOBBER.include("doc", ".yardoc")

namespace :rbs do
  desc "Validate the RBS signatures in sig/ (rbs -I sig validate)"
  task :validate do
    WindowMachinesTasks.run_gem_executable "rbs", "rbs", "-I", "sig", "validate", "--silent"
  end
end

desc "Build the API documentation into doc/; fail on YARD warnings or anything undocumented"
task :doc do
  WindowMachinesTasks.run_gem_executable "yard", "yard", "doc", "--fail-on-warning", "--no-stats"

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
