# frozen_string_literal: true

# One pass of a Sessions scenario with the GC running at every allocation, so
# that any Ruby object the extension holds without the GC seeing it (a
# returned array, a Bignum, an error message, a copied tracker) is collected
# under it. Timestamps sit above 2**63 so every returned Integer is a Bignum,
# a heap object of its own. Results are gathered under GC.stress and checked
# after it is restored (GC.stress makes every allocation a full GC, so the
# expectations themselves run without it).
RSpec.describe "Sessions under GC.stress" do
  base = 2**63

  # The result of the block, or [error class, message, receiver if any].
  def attempt
    yield
  rescue StandardError => e
    [e.class, e.message, e.respond_to?(:receiver) ? e.receiver : nil]
  end

  def run_scenario(base)
    results = {}
    sessions = WindowMachines::Sessions.new(5)
    results[:inserts] = [10, 15, 30, 21, 26].map { |offset| sessions.insert(base + offset) }
    copy = sessions.dup
    results[:to_a] = sessions.to_a
    results[:type_error] = attempt { sessions.insert(1.5) }
    results[:range_error] = attempt { sessions.insert(-1) }
    results[:advanced] = sessions.advance_watermark(base + 25)
    results[:taken] = [sessions.take_closed, sessions.take_closed]
    results[:late] = attempt { sessions.insert(base + 25) }
    results[:filled] = (0...31).map { |n| sessions.insert(base + 100 + n * 10) }
    results[:size] = sessions.size
    results[:capacity] = attempt { sessions.insert(base + 1_000) }
    results[:after_capacity] = sessions.to_a
    results[:copy] = [copy.to_a, copy.watermark, copy.inspect]
    results[:inspect] = sessions.inspect
    sessions.freeze
    results[:frozen] = attempt { sessions.take_closed }
    results[:frozen_sessions] = sessions
    results
  end

  it "returns the documented results while the GC runs at every allocation" do
    previous = GC.stress
    begin
      GC.stress = true
      results = run_scenario(base)
    ensure
      GC.stress = previous
    end

    b = base
    expect(results[:inserts]).to eq([[b + 10, b + 10], [b + 10, b + 15], [b + 30, b + 30], [b + 21, b + 21],
                                     [b + 21, b + 30]])
    expect(results[:to_a]).to eq([[b + 10, b + 15], [b + 21, b + 30]])
    expect(results[:type_error]).to eq([WindowMachines::TypeError, "timestamp must be an Integer, got 1.5 (Float)", nil])
    expect(results[:range_error]).to eq([WindowMachines::RangeError, "timestamp must be in 0..2**64-1, got -1", nil])
    expect(results[:advanced]).to be(true)
    expect(results[:taken]).to eq([[b + 10, b + 15], nil])
    expect(results[:late].first).to be(WindowMachines::LateEventError)
    expect(results[:late][1]).to include((b + 25).to_s)
    expect(results[:filled]).to eq((0...31).map { |n| [b + 100 + n * 10] * 2 })
    expect(results[:size]).to eq(32)
    expect(results[:capacity].first).to be(WindowMachines::CapacityError)
    expect(results[:after_capacity]).to eq([[b + 21, b + 30]] + results[:filled])
    expect(results[:copy]).to eq([[[b + 10, b + 15], [b + 21, b + 30]], nil,
                                  "#<WindowMachines::Sessions gap=5 watermark=nil sessions=[[#{b + 10}, #{b + 15}], " \
                                  "[#{b + 21}, #{b + 30}]]>"])
    expect(results[:inspect]).to start_with(
      "#<WindowMachines::Sessions gap=5 watermark=#{b + 25} sessions=[[#{b + 21}, #{b + 30}], [#{b + 100}, #{b + 100}], "
    )
    expect(results[:frozen].first).to be(FrozenError)
    expect(results[:frozen].last).to be(results[:frozen_sessions])
  end
end
