# frozen_string_literal: true

require "window_machines/errors"

# The WindowMachines API in plain Ruby, with the same validation, messages and
# error classes, written as a Ruby developer would write it for production:
# Integer arithmetic, a sorted Array of [first, last] spans searched with
# bsearch_index. bench/ops.rb times the gem against all of it; the
# differential spec checks the gem's Sessions against PlainRuby::Sessions.
# (WindowMachinesSpec::Model, written for obviousness over speed, is the
# reference for the rest.)
module PlainRuby
  MAX = 2**64 - 1
  MAX_SLIDING_WINDOWS = 32
  MAX_SESSIONS = 32
end

require_relative "plain_ruby/check"
require_relative "plain_ruby/windows"
require_relative "plain_ruby/watermark"
require_relative "plain_ruby/sessions"
require_relative "plain_ruby/versioned_table"
