# frozen_string_literal: true

# KeyedSessions against what users write today: a Hash of Sessions swept on
# every watermark advance. Same spans, and the documented hand-over order.
RSpec.describe "WindowMachines::KeyedSessions against a Hash of Sessions" do
  let(:rng) { Random.new(RSpec.configuration.seed) }
  let(:keys) { ["a", "b", :c, 1, [2, "x"], nil, 3.5, "partner-7"] }

  it "holds the same spans and hands over the same sessions" do
    50.times do
      gap = [1, 3, 10].sample(random: rng)
      keyed = WindowMachines::KeyedSessions.new(gap)
      reference = Hash.new { |hash, key| hash[key] = WindowMachines::Sessions.new(gap) }
      watermark = nil
      300.times do
        case rng.rand(10)
        when 0..6
          key = keys.sample(random: rng)
          timestamp = rng.rand(0..400)
          expected = begin
            reference[key].insert(timestamp)
          rescue WindowMachines::Error => e
            reference.delete(key) if reference[key].size.zero?
            e.class
          end
          got = begin
            keyed.insert(key, timestamp)
          rescue WindowMachines::Error => e
            e.class
          end
          expect(got).to eq(expected)
        when 7
          timestamp = rng.rand(0..400)
          moved = keyed.advance_watermark(timestamp)
          expect(moved).to eq(watermark.nil? || timestamp > watermark)
          watermark = timestamp if moved
          reference.each_value { |sessions| sessions.advance_watermark(timestamp) }
          reference.default_proc = proc do |hash, key|
            hash[key] = WindowMachines::Sessions.new(gap).tap { |s| s.advance_watermark(watermark) }
          end
        else
          taken = keyed.each_closed.to_a
          expected = reference.flat_map do |key, sessions|
            spans = []
            while (span = sessions.take_closed)
              spans << [key, *span]
            end
            spans
          end
          # The reference knows no order across keys; compare as sets, and
          # check the documented order on the gem's side.
          expect(taken).to match_array(expected)
          expect(taken.map { |_, first, last| [last, first] }).to eq(taken.map { |_, first, last| [last, first] }.sort)
          reference.delete_if { |_, sessions| sessions.size.zero? }
        end
        expect(keyed.size).to eq(reference.values.sum(&:size))
        expect(keyed.key_count).to eq(reference.count { |_, sessions| sessions.size.positive? })
        reference.each { |key, sessions| expect(keyed.sessions_for(key)).to eq(sessions.to_a) }
      end
    end
  end
end
