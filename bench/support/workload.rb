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

# A batch call against the single call it replaces, over the same
# pre-generated events (`events` of them per iteration). `read` is the
# single-call loop with the call taken out: only the Arrays are read, the
# least any Ruby loop over the events costs. `single` makes one call per
# event, `batch` one call for them all; each returns what `same` needs to
# tell whether the two agree. `target` is the most batch/single may be.
BatchWorkload = Struct.new(:name, :events, :target, :read, :single, :batch, :same, keyword_init: true) do
  # Runs both loops once and refuses to go on unless they agree, so a batch
  # call that skips work cannot flatter itself.
  def check!
    raise "#{name}: the batch call and the single calls disagree" unless same.call(single.call, batch.call)
  end
end
