# frozen_string_literal: true

require "rbconfig"
require "tmpdir"

namespace :install do
  # PATH without the directories that hold cargo or rustc.
  def path_without_rust
    ENV.fetch("PATH").split(File::PATH_SEPARATOR).reject do |dir|
      %w[cargo rustc].any? { |tool| File.executable?(File.join(dir, tool)) }
    end.join(File::PATH_SEPARATOR)
  end

  # Installs `gem_file` into the empty `home` and runs the README examples
  # from outside the checkout, with nothing of Bundler's around.
  def install_and_check(gem_file, home, path: ENV.fetch("PATH"))
    Bundler.with_unbundled_env do
      env = { "GEM_HOME" => home, "GEM_PATH" => home, "PATH" => path }
      sh env, Gem.ruby, "-S", "gem", "install", "--local", "--no-document", gem_file
      leftovers = Dir.glob(File.join(home, "gems", "*", "ext", "**", "{target,*.so}"))
      abort "the installed gem kept cargo output: #{leftovers.join(', ')}" unless leftovers.empty?
      Dir.chdir(home) do
        sh env, Gem.ruby, File.expand_path("readme_check.rb", __dir__)
      end
    end
  end

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
      install_and_check(source_gem, File.join(dir, "from-source"))

      native_gem = "pkg/window_machines-#{GEMSPEC.version}-#{Gem::Platform.local}.gem"
      install_and_check(File.expand_path(native_gem), File.join(dir, "precompiled"), path: path_without_rust)
    end
  end
end
