# frozen_string_literal: true

require "json"

module WindowMachinesSpec
  # Random trackers and operations for the checkpoint specs.
  module Checkpoints
    MAX = WindowMachinesSpec::MAX

    module_function

    # A tracker built by random inserts, advances and takes.
    def random_sessions(rng)
      sessions = WindowMachines::Sessions.new([1, 3, 10, MAX].sample(random: rng))
      base = [0, 1_000, MAX - 500].sample(random: rng)
      rng.rand(0..60).times { apply(sessions, random_operation(rng, base)) }
      sessions
    end

    def random_operation(rng, base)
      timestamp = (base + rng.rand(0..500)).clamp(0, MAX)
      case rng.rand(10)
      when 0 then [:advance_watermark, timestamp]
      when 1 then [:take_closed]
      else [:insert, timestamp]
      end
    end

    # The outcome of one operation: its result, or its error class.
    def apply(sessions, operation)
      sessions.public_send(*operation)
    rescue WindowMachines::Error => e
      e.class
    end

    def via_json(hash)
      JSON.parse(JSON.generate(hash))
    end
  end
end
