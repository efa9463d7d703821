# frozen_string_literal: true

require "rake"

# Helpers for the tasks in rakelib/*.rake. They live in a module because a
# method defined at the top level of a Rakefile, or inside a `namespace`
# block, becomes a private method of every object.
module WindowMachinesTasks
  extend Rake::FileUtilsExt

  module_function

  # Runs a gem's executable with this Ruby. The executables are not always on
  # PATH (Debian's Ruby ships rbs without one), so they are found through
  # RubyGems, which Bundler points at the bundle.
  def run_gem_executable(gem_name, executable, *args, env: {})
    sh env, Gem.ruby, Gem.bin_path(gem_name, executable), *args
  end

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
        sh env, Gem.ruby, File.expand_path("../readme_check.rb", __dir__)
        check_command(env, File.join(home, "bin", "window_machines"))
      end
    end
  end

  # Runs the installed `window_machines` on the README's shell example.
  def check_command(env, command)
    signups = File.expand_path("../../examples/signups.csv", __dir__)
    arguments = %w[sessions --gap 5m --lag 3h --key source --time happened --agg count --output-format csv]
    output = IO.popen(env, [command, *arguments, signups], &:read)
    first = output.lines[1]
    abort "the installed window_machines command failed: #{output.inspect}" unless $?.success? && first == "mobile,14:02:00,14:04:00,3\n"
    puts "the installed window_machines command sessionizes #{output.lines.size - 1} sessions"
  end
end
