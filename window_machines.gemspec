# frozen_string_literal: true

require_relative "lib/window_machines/version"

Gem::Specification.new do |spec|
  spec.name = "window_machines"
  spec.version = WindowMachines::VERSION
  spec.authors = ["WindowMachines contributors"]
  spec.license = "MIT"

  spec.summary = "Event-time windows, watermarks and sessions for Ruby, with a Rust core."
  spec.description = <<~TEXT.tr("\n", " ").strip
    Bucket events by when they happened, not when they arrived: tumbling and
    sliding windows, a watermark that says when a window may close, and session
    tracking that merges bursts when a late event bridges them. Late events are
    refused loudly; the gem never stores payloads and never reads a clock.
  TEXT

  spec.required_ruby_version = ">= 3.0"

  spec.files = Dir[
    "lib/**/*.rb",
    "ext/*/Cargo.toml",
    "ext/*/extconf.rb",
    "ext/*/src/**/*.rs",
    "Cargo.toml",
    "Cargo.lock",
    "README.md",
    "LICENSE.txt",
    "CHANGELOG.md"
  ]
  spec.require_paths = ["lib"]
  spec.extensions = ["ext/window_machines/extconf.rb"]
end
