# frozen_string_literal: true

# The Rust crates' own tests and lints.

namespace :cargo do
  desc "Run the Rust core's tests"
  task(:test) { sh "cargo test --locked --workspace --exclude window_machines" }

  desc "Lint the Rust crates"
  task :lint do
    sh "cargo fmt --all -- --check"
    sh "cargo clippy --locked --workspace --all-targets -- -D warnings"
  end
end
