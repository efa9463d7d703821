# frozen_string_literal: true

RSpec.describe "WindowMachines in a Ractor", :ractor do
  around do |example|
    experimental = Warning[:experimental]
    Warning[:experimental] = false
    example.run
  ensure
    Warning[:experimental] = experimental
  end

  it "works outside the main Ractor, refusals included" do
    ractor = Ractor.new do
      sessions = WindowMachines::Sessions.new(5)
      sessions.insert(1)
      sessions.insert(3)
      keyed = WindowMachines::KeyedSessions.new(5)
      keyed.insert("a", 1)
      late = begin
        sessions.advance_watermark(10)
        sessions.insert(2)
      rescue WindowMachines::LateEventError => e
        e.class
      end
      [WindowMachines.tumbling(12, 10), sessions.to_a, keyed.to_a, late]
    end
    expect(ractor.take).to eq([[10, 20], [[1, 3]], [["a", 1, 1]], WindowMachines::LateEventError])
  end
end
