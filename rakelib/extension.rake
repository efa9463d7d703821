# frozen_string_literal: true

# The native extension: `compile`, and the `native` and `gem` packaging tasks.

require "rake/extensiontask"

# One directory per Ruby minor version (lib/window_machines/3.1/), as a
# precompiled gem ships it; lib/window_machines.rb looks there first.
Rake::ExtensionTask.new("window_machines", NATIVE_GEMSPEC) do |ext|
  ext.lib_dir = "lib/window_machines/#{RUBY_VERSION[/\A\d+\.\d+/]}"
  ext.source_pattern = "**/*.{rs,toml,lock}"
end
