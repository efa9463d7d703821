# frozen_string_literal: true

require_relative "helpers"

module WindowMachinesSpec
  # One public method that takes Integer arguments, described for the
  # table-driven error specs.
  #
  # receiver: builds the object the method is called on (run with
  #   instance_exec inside an example, so helpers are available); nil for
  #   module functions and constructors.
  # call: invokes the method on that receiver with the given arguments.
  # mutator: whether the method must refuse a frozen receiver.
  Call = Struct.new(:label, :params, :valid, :lengths, :receiver, :call, :mutator, keyword_init: true) do
    def invoke(receiver, args)
      call.call(receiver, *args)
    end
  end

  # A call that breaks the method's own rules, with valid argument types.
  Rule = Struct.new(:call, :description, :receiver, :args, :error, :message, keyword_init: true)

  TRACKER = -> { sessions_with(5, 10, 15, 30, watermark: 12) }

  CALLS = {
    tumbling: Call.new(
      label: "WindowMachines.tumbling", params: %w[timestamp size], valid: [12, 10], lengths: %w[size],
      receiver: -> {}, call: ->(_, *args) { WindowMachines.tumbling(*args) }, mutator: false
    ),
    sliding: Call.new(
      label: "WindowMachines.sliding", params: %w[timestamp width slide], valid: [12, 10, 5],
      lengths: %w[width slide],
      receiver: -> {}, call: ->(_, *args) { WindowMachines.sliding(*args) }, mutator: false
    ),
    watermark_new: Call.new(
      label: "WindowMachines::Watermark.new", params: %w[timestamp], valid: [5], lengths: [],
      receiver: -> {}, call: ->(_, *args) { WindowMachines::Watermark.new(*args) }, mutator: false
    ),
    advance: Call.new(
      label: "WindowMachines::Watermark#advance", params: %w[timestamp], valid: [30], lengths: [],
      receiver: -> { WindowMachines::Watermark.new(22) },
      call: ->(watermark, *args) { watermark.advance(*args) }, mutator: true
    ),
    closes: Call.new(
      label: "WindowMachines::Watermark#closes?", params: %w[start finish lateness], valid: [10, 20, 2],
      lengths: [],
      receiver: -> { WindowMachines::Watermark.new(22) },
      call: ->(watermark, *args) { watermark.closes?(*args) }, mutator: false
    ),
    sessions_new: Call.new(
      label: "WindowMachines::Sessions.new", params: %w[gap], valid: [5], lengths: %w[gap],
      receiver: -> {}, call: ->(_, *args) { WindowMachines::Sessions.new(*args) }, mutator: false
    ),
    insert: Call.new(
      label: "WindowMachines::Sessions#insert", params: %w[timestamp], valid: [40], lengths: [],
      receiver: TRACKER, call: ->(sessions, *args) { sessions.insert(*args) }, mutator: true
    ),
    advance_watermark: Call.new(
      label: "WindowMachines::Sessions#advance_watermark", params: %w[timestamp], valid: [40], lengths: [],
      receiver: TRACKER, call: ->(sessions, *args) { sessions.advance_watermark(*args) }, mutator: true
    ),
    take_closed: Call.new(
      label: "WindowMachines::Sessions#take_closed", params: [], valid: [], lengths: [],
      receiver: -> { sessions_with(5, 10, 15, 30, watermark: 20) },
      call: ->(sessions) { sessions.take_closed }, mutator: true
    )
  }.freeze

  RULES = [
    Rule.new(call: CALLS[:tumbling], description: "a window ending past 2**64-1",
             receiver: -> {}, args: [MAX, 1], error: WindowMachines::RangeError, message: /2\*\*64-1/),
    Rule.new(call: CALLS[:sliding], description: "a ratio over 32",
             receiver: -> {}, args: [0, 33, 1], error: WindowMachines::CapacityError, message: /33/),
    Rule.new(call: CALLS[:sliding], description: "a window ending past 2**64-1",
             receiver: -> {}, args: [MAX, 2, 1], error: WindowMachines::RangeError, message: /2\*\*64-1/),
    Rule.new(call: CALLS[:sliding], description: "a zero width with a ratio over 32",
             receiver: -> {}, args: [0, 0, 0], error: WindowMachines::ArgumentError, message: /\Awidth\b/),
    Rule.new(call: CALLS[:sliding], description: "a zero slide, which would be an infinite ratio",
             receiver: -> {}, args: [0, 33, 0], error: WindowMachines::ArgumentError, message: /\Aslide\b/),
    Rule.new(call: CALLS[:closes], description: "a start after the finish",
             receiver: -> { WindowMachines::Watermark.new(22) }, args: [3, 2, 0],
             error: WindowMachines::ArgumentError, message: /\bstart\b.*\bfinish\b/),
    Rule.new(call: CALLS[:insert], description: "a timestamp equal to the watermark",
             receiver: TRACKER, args: [12], error: WindowMachines::LateEventError, message: /\b12\b.*watermark/),
    Rule.new(call: CALLS[:insert], description: "a timestamp below the watermark",
             receiver: TRACKER, args: [0], error: WindowMachines::LateEventError, message: /\b0\b.*watermark/),
    Rule.new(call: CALLS[:insert], description: "a 33rd session",
             receiver: -> { full_sessions }, args: [1_000], error: WindowMachines::CapacityError, message: /32/),
    Rule.new(call: CALLS[:insert], description: "a late 33rd session (lateness comes before capacity)",
             receiver: -> { full_sessions(watermark: 500) }, args: [400],
             error: WindowMachines::LateEventError, message: /\b400\b/)
  ].freeze
end
