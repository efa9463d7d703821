# frozen_string_literal: true

# One pass of a Sessions scenario with the GC running at every allocation, so
# that any Ruby object the extension holds without the GC seeing it (a
# returned array, a Bignum, an error message, a copied tracker) is collected
# under it. Timestamps sit above 2**63 so every returned Integer is a Bignum,
# a heap object of its own.
#
# The scenario (spec/fixtures/gc_stress_scenario.rb) runs in a process of
# its own; see WindowMachinesSpec::FixtureProcess.
RSpec.describe "Sessions under GC.stress" do
  include WindowMachinesSpec::FixtureProcess

  it "returns the documented results while the GC runs at every allocation" do
    results = run_fixture("gc_stress_scenario.rb")
    b = 2**63

    expect(results[:stressed]).to be(true)
    expect(results[:restored]).to be(false)
    expect(results[:inserts]).to eq([[b + 10, b + 10], [b + 10, b + 15], [b + 30, b + 30], [b + 21, b + 21],
                                     [b + 21, b + 30]])
    expect(results[:to_a]).to eq([[b + 10, b + 15], [b + 21, b + 30]])
    expect(results[:type_error]).to eq([WindowMachines::TypeError, "timestamp must be an Integer, got 1.5 (Float)"])
    expect(results[:range_error]).to eq([WindowMachines::RangeError, "timestamp must be in 0..2**64-1, got -1"])
    expect(results[:advanced]).to be(true)
    expect(results[:taken]).to eq([[b + 10, b + 15], nil])
    expect(results[:late].first).to be(WindowMachines::LateEventError)
    expect(results[:late].last).to include((b + 25).to_s)
    expect(results[:copy]).to eq([[[b + 10, b + 15], [b + 21, b + 30]], nil,
                                  "#<WindowMachines::Sessions gap=5 watermark=nil sessions=[[#{b + 10}, #{b + 15}], " \
                                  "[#{b + 21}, #{b + 30}]]>"])
    expect(results[:inspect])
      .to eq("#<WindowMachines::Sessions gap=5 watermark=#{b + 25} sessions=[[#{b + 21}, #{b + 30}]]>")
    expect(results[:capacity].first).to be(WindowMachines::CapacityError)
    expect(results[:full]).to eq((0...32).map { |n| [b + 100 + n * 10] * 2 })
    expect(results[:sliding]).to eq((0...32).map { |k| [b + 1_000 - k, b + 1_032 - k] })
    expect(results[:frozen]).to eq([FrozenError, true])
  end
end
