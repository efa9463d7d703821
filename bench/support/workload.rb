# frozen_string_literal: true

# One benchmarked operation. Each iteration handles `events` events: `floor`
# calls Integer#divmod once per event in the same loop, and `bind.call(api)`
# builds (untimed) the loop that runs the operation on `api`, WindowMachines or
# PlainRuby, and returns what it produced. `target` is the most gem/divmod may
# be, or nil.
Workload = Struct.new(:name, :events, :target, :floor, :bind, keyword_init: true) do
  def for(api)
    bind.call(api)
  end

  # Runs the loop once on each implementation and refuses to go on unless
  # both produced the same, so a wrong baseline cannot flatter the gem.
  def check!
    gem = self.for(WindowMachines).call
    plain = self.for(PlainRuby).call
    raise "#{name}: plain Ruby and the gem disagree" unless gem == plain
  end
end
