# frozen_string_literal: true

require_relative "window_machines/version"
require_relative "window_machines/errors"

begin
  # A precompiled gem ships one extension per Ruby minor version.
  require "window_machines/#{RUBY_VERSION[/\A\d+\.\d+/]}/window_machines"
rescue LoadError
  require "window_machines/window_machines"
end

require_relative "window_machines/sessions"
require_relative "window_machines/keyed_sessions"
