# frozen_string_literal: true

# Checks that the source gem and the precompiled gem install and work.

require "tmpdir"
require_relative "support/window_machines_tasks"

namespace :install do
  desc "Install the source gem and the precompiled gem into empty GEM_HOMEs and run the README examples"
  task :verify do
    # A package directory left from an earlier build would be reused as it is.
    rm_rf "pkg"
    # `native` defines the `gem` packaging task for this platform as it runs.
    Rake::Task["native"].invoke
    Rake::Task["gem"].invoke
    Dir.mktmpdir("window_machines-install") do |dir|
      source_gem = File.join(dir, "window_machines-#{GEMSPEC.version}.gem")
      sh Gem.ruby, "-S", "gem", "build", "window_machines.gemspec", "--output", source_gem
      WindowMachinesTasks.install_and_check(source_gem, File.join(dir, "from-source"))

      native_gem = "pkg/window_machines-#{GEMSPEC.version}-#{Gem::Platform.local}.gem"
      WindowMachinesTasks.install_and_check(File.expand_path(native_gem), File.join(dir, "precompiled"),
                                            path: WindowMachinesTasks.path_without_rust)
    end
  end
end
