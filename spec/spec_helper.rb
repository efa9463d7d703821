# frozen_string_literal: true

require "window_machines"

Dir[File.join(__dir__, "support", "**", "*.rb")].sort.each { |file| require file }

RSpec.configure do |config|
  config.expect_with(:rspec) { |c| c.syntax = :expect }
  config.disable_monkey_patching!
  config.order = :random
  Kernel.srand config.seed
end

# Examples tagged :mistyped pass arguments outside the signatures in sig/ on
# purpose (to see them refused) or change what a block was given. RBS's
# runtime checker reports those calls even though the gem raised, so
# `rake spec:typecheck` leaves them out; the plain `rake spec` runs them. It
# leaves out :ractor examples too: the checker's hooks cannot run inside a
# Ractor.
