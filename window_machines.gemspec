# frozen_string_literal: true

require_relative "lib/window_machines/version"

Gem::Specification.new do |spec|
  spec.name = "window_machines"
  spec.version = WindowMachines::VERSION
  spec.authors = ["WindowMachines contributors"]
  spec.license = "MIT"

  spec.summary = "Event-time windows, watermarks and sessions for Ruby stream consumers, with a Rust core."
  spec.description = <<~TEXT.tr("\n", " ").strip
    Bucket events by when they happened rather than when they arrived. Tumbling
    and sliding windows for any timestamp; a watermark that says when a window
    has waited long enough for stragglers; session tracking, per key if you
    like, that merges bursts when a late event bridges them and hands over
    finished sessions in order. Late events are refused loudly, never
    misfiled. Boundaries only: the gem keeps no payloads and reads no clock.
  TEXT

  spec.homepage = "https://github.com/window-machines/window_machines"
  spec.metadata = {
    "homepage_uri" => spec.homepage,
    "source_code_uri" => spec.homepage,
    "changelog_uri" => "#{spec.homepage}/blob/main/CHANGELOG.md",
    "bug_tracker_uri" => "#{spec.homepage}/issues",
    "rubygems_mfa_required" => "true"
  }

  # Tested on Ruby 3.1; the binding (magnus 0.8) supports 3.0 to 3.4.
  spec.required_ruby_version = ">= 3.1"

  spec.files = Dir[
    "lib/**/*.rb",
    "exe/*",
    "sig/**/*.rbs",
    "ext/*/Cargo.toml",
    "ext/*/extconf.rb",
    "ext/*/src/**/*.rs",
    "Cargo.toml",
    "Cargo.lock",
    "README.md",
    "LICENSE.txt",
    "CHANGELOG.md"
  ]
  spec.bindir = "exe"
  spec.executables = ["window_machines"]
  spec.require_paths = ["lib"]
  spec.extensions = ["ext/window_machines/extconf.rb"]
end
