# frozen_string_literal: true

require_relative "helpers"

module WindowMachinesSpec
  # Helpers for the randomized differential spec.
  module Differential
    MAX = WindowMachinesSpec::MAX

    # Values that divide 2**64-1, so that 2**64-1 itself starts a window.
    DIVISORS_OF_MAX = [3, 5, 17, 257, 641, 65_537, 6_700_417].freeze

    # Occasionally-used arguments that must be refused, by type or range.
    INVALID = [-1, 2**64, 1.5, nil, "7"].freeze

    # The result of a block, or the class of the error it raised, so that the
    # gem and the model can be compared by outcome.
    def outcome
      [:ok, yield]
    rescue StandardError => e
      [:error, e.class]
    end

    def clamp(value)
      value.clamp(0, MAX)
    end

    # A timestamp from everywhere that matters: near 0, near 2**64-1, around
    # the Fixnum/Bignum boundary (2**62) and 2**63, and anywhere at all.
    def any_timestamp(rng)
      case rng.rand(6)
      when 0 then rng.rand(0..200)
      when 1 then MAX - rng.rand(0..200)
      when 2 then clamp(2**62 + rng.rand(-100..100))
      when 3 then clamp(2**63 + rng.rand(-100..100))
      else rng.rand(0..MAX)
      end
    end

    # A positive length: small, a divisor of 2**64-1, a power of two, huge,
    # or (now and then) zero.
    def any_length(rng)
      case rng.rand(10)
      when 0..3 then rng.rand(1..20)
      when 4 then DIVISORS_OF_MAX.sample(random: rng)
      when 5 then 2**rng.rand(0..63)
      when 6 then MAX - rng.rand(0..3)
      when 7 then rng.rand(1..MAX)
      when 8 then rng.rand(21..10_000)
      else 0
      end
    end

    # Now and then an invalid argument instead of `value`.
    def sometimes_invalid(rng, value, odds: 40)
      rng.rand(odds).zero? ? INVALID.sample(random: rng) : value
    end

    # Structural invariants of a tracker's sessions, as a list of violations.
    def session_violations(spans, gap)
      violations = []
      violations << "more than 32 sessions: #{spans.size}" if spans.size > 32
      spans.each do |first, last|
        violations << "bad span #{[first, last].inspect}" unless first.is_a?(Integer) && last.is_a?(Integer) &&
                                                                  first.between?(0, MAX) && last.between?(first, MAX)
      end
      spans.each_cons(2) do |(_, older_last), (newer_first, _)|
        unless newer_first - older_last > gap
          violations << "sessions not sorted, disjoint and more than gap apart: #{spans.inspect}"
        end
      end
      violations
    end

    # A message that says how to reproduce a failure.
    def reproduce(seed, label, history)
      "#{label}\nseed: #{seed} (rerun with `rspec --seed #{seed}`)\nlast operations:\n  " +
        history.last(25).map(&:inspect).join("\n  ")
    end
  end
end
