# frozen_string_literal: true

require "open3"
require "rbconfig"

module WindowMachinesSpec
  # Runs a script from spec/fixtures in a fresh Ruby loading this same lib/,
  # without Bundler or RubyGems, and returns what it wrote with Marshal.
  # GC.stress runs a full GC at every allocation: seconds with RSpec's heap
  # loaded, a fraction of one in a small process.
  module FixtureProcess
    def run_fixture(name)
      lib = File.dirname($LOADED_FEATURES.find { |feature| feature.end_with?("/window_machines.rb") })
      script = File.expand_path("../fixtures/#{name}", __dir__)
      stdout, stderr, status = Open3.capture3({ "RUBYOPT" => nil }, RbConfig.ruby, "--disable-gems", "-I", lib, script,
                                              binmode: true)
      expect(status).to be_success, "#{name} failed (#{status.inspect}):\n#{stderr}"
      Marshal.load(stdout) # our own child process wrote it
    end
  end
end
