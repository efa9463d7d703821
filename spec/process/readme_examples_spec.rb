# frozen_string_literal: true

require "open3"
require "rbconfig"

# Every example of the reference README, run as printed. Where the README
# names only the plain Ruby class (ArgumentError, RangeError), that is what
# these examples rescue, so `rescue ArgumentError` is shown to keep working.
RSpec.describe "README examples" do
  describe "Quick Start" do
    it "buckets, closes and sessionises with concrete values" do
      event_at = 1_000
      expect(WindowMachines.tumbling(event_at, 600)).to eq([600, 1_200])

      watermark = WindowMachines::Watermark.new
      latest_timestamp_seen = 1_320
      expect(watermark.advance(latest_timestamp_seen)).to be(true)
      expect(watermark.closes?(600, 1_200, 120)).to be(true)
      expect(watermark.closes?(600, 1_200, 121)).to be(false)

      sessions = WindowMachines::Sessions.new(300)
      expect(sessions.insert(event_at)).to eq([1_000, 1_000])
      sessions.advance_watermark(1_300)
      expect(sessions.take_closed).to eq([1_000, 1_000])
      expect(sessions.take_closed).to be_nil
    end
  end

  describe "the signup that flew in from a plane" do
    it "files 14:03 under 14:00-14:10 and closes that bucket once the watermark is at 16:40" do
      at = ->(hours, minutes) { (hours * 60 + minutes) * 60 }
      expect(WindowMachines.tumbling(at[14, 3], 600)).to eq([at[14, 0], at[14, 10]])

      watermark = WindowMachines::Watermark.new
      watermark.advance(at[16, 40])
      expect(watermark.closes?(at[14, 0], at[14, 10], 120)).to be(true)
    end
  end

  describe "Tumbling" do
    it "puts each timestamp in one half-open bucket" do
      expect(WindowMachines.tumbling(12, 10)).to eq([10, 20])
      expect(WindowMachines.tumbling(19, 10)).to eq([10, 20])
      expect(WindowMachines.tumbling(20, 10)).to eq([20, 30])
    end
  end

  describe "Sliding" do
    it "returns overlapping buckets newest first" do
      expect(WindowMachines.sliding(12, 10, 5)).to eq([[10, 20], [5, 15]])
      expect(WindowMachines.sliding(7, 10, 5)).to eq([[5, 15], [0, 10]])
    end

    it "returns an empty list for a timestamp in a hole" do
      expect(WindowMachines.sliding(12, 1, 5)).to eq([])
    end
  end

  describe "Watermarks" do
    it "starts at nil, advances, and never moves backwards" do
      watermark = WindowMachines::Watermark.new
      expect(watermark.value).to be_nil
      expect(watermark.advance(22)).to be(true)
      expect(watermark.advance(9)).to be(false)
      expect(watermark.value).to eq(22)
    end

    it "answers closes? with the allowed lateness" do
      watermark = WindowMachines::Watermark.new
      watermark.advance(22)
      watermark.advance(9)
      expect(watermark.closes?(10, 20, 2)).to be(true)
      expect(watermark.closes?(10, 20, 3)).to be(false)
      expect(watermark.closes?(20, 30, 0)).to be(false)
    end
  end

  describe "Sessions walkthrough" do
    it "runs from the first insert to the late one, exactly as printed" do
      sessions = WindowMachines::Sessions.new(5)
      expect(sessions.insert(10)).to eq([10, 10])
      expect(sessions.insert(15)).to eq([10, 15])
      expect(sessions.insert(30)).to eq([30, 30])
      expect(sessions.insert(21)).to eq([21, 21])

      expect(sessions.insert(26)).to eq([21, 30])

      sessions.advance_watermark(25)
      expect(sessions.take_closed).to eq([10, 15])
      expect(sessions.take_closed).to be_nil

      sessions.advance_watermark(40)
      expect(sessions.take_closed).to eq([21, 30])

      before = observable_state(sessions)
      expect { sessions.insert(40) }.to raise_error(ArgumentError)
      expect(observable_state(sessions)).to eq(before)
    end
  end

  describe "The Rules of the Survey" do
    it "raises TypeError for Floats, Strings and anything else that is not an Integer", :mistyped do
      expect { WindowMachines.tumbling(1.5, 10) }.to raise_error(TypeError)
      expect { WindowMachines.tumbling("12", 10) }.to raise_error(TypeError)
      expect { WindowMachines.sliding(12, 10.0, 5) }.to raise_error(TypeError)
      expect { WindowMachines::Sessions.new(:five) }.to raise_error(TypeError)
      expect { WindowMachines::Watermark.new.advance(nil) }.to raise_error(TypeError)
    end

    it "raises RangeError for negative or oversized Integers" do
      expect { WindowMachines.tumbling(-1, 10) }.to raise_error(RangeError)
      expect { WindowMachines.tumbling(2**64, 10) }.to raise_error(RangeError)
      expect { WindowMachines::Sessions.new(2**64) }.to raise_error(RangeError)
      expect { WindowMachines::Watermark.new.advance(-5) }.to raise_error(RangeError)
    end

    it "rejects zero widths, slides, sizes and gaps with ArgumentError" do
      expect { WindowMachines.tumbling(12, 0) }.to raise_error(ArgumentError)
      expect { WindowMachines.sliding(12, 0, 5) }.to raise_error(ArgumentError)
      expect { WindowMachines.sliding(12, 10, 0) }.to raise_error(ArgumentError)
      expect { WindowMachines::Sessions.new(0) }.to raise_error(ArgumentError)
    end

    it "caps sliding at 32 windows per timestamp with RangeError rather than truncating" do
      expect(WindowMachines.sliding(100, 32, 1).size).to eq(32)
      expect { WindowMachines.sliding(100, 33, 1) }.to raise_error(RangeError)
    end

    it "refuses a 33rd session with RangeError and drops nothing" do
      sessions = full_sessions
      before = sessions.to_a
      expect { sessions.insert(1_000) }.to raise_error(RangeError)
      expect(sessions.to_a).to eq(before)
      expect(sessions.size).to eq(32)
    end

    it "refuses an insert at or below the watermark" do
      sessions = sessions_with(5, 10, watermark: 12)
      expect { sessions.insert(12) }.to raise_error(ArgumentError)
      expect { sessions.insert(11) }.to raise_error(ArgumentError)
      expect(sessions.to_a).to eq([[10, 10]])
    end

    it "raises FrozenError for every mutation of a frozen watermark or sessions tracker" do
      watermark = WindowMachines::Watermark.new.freeze
      sessions = WindowMachines::Sessions.new(5).freeze
      expect { watermark.advance(1) }.to raise_error(FrozenError)
      expect { sessions.insert(1) }.to raise_error(FrozenError)
      expect { sessions.advance_watermark(1) }.to raise_error(FrozenError)
      expect { sessions.take_closed }.to raise_error(FrozenError)
    end
  end

  # rakelib/readme_check.rb runs the README's examples against an installed
  # gem (`rake install:verify`); here against this checkout's lib/.
  describe "rakelib/readme_check.rb" do
    it "passes against this checkout" do
      lib = File.dirname($LOADED_FEATURES.find { |feature| feature.end_with?("/window_machines.rb") })
      script = File.expand_path("../../rakelib/readme_check.rb", __dir__)
      output, status = Open3.capture2e({ "RUBYOPT" => nil }, RbConfig.ruby, "--disable-gems", "-I", lib, script)
      expect(status).to be_success, output
      expect(output).to start_with("README examples pass")
    end
  end
end
