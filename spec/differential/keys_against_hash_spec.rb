# frozen_string_literal: true

# KeyedSessions keys against Ruby's own Hash, the oracle: for random mixes of
# keys, a probe is held exactly when a Hash holding the same keys has it, and
# then under the same stored key (same sessions, same class, bytes and
# encoding). Ruby's Hash hashes every String, subclass or not, by its bytes
# and encoding (an overridden `hash` on a String subclass is not called),
# then asks the probe's `eql?`; whatever it decides is right here.
module KeysAgainstHashSpec
  class SubString < String; end

  # Hash ignores this `hash`: it hashes a String's bytes whatever its class.
  class HashOverridingString < String
    def hash = 7
  end

  # Two of these with the same bytes but different tags are different keys;
  # against a plain String it answers as String#eql? does.
  class TaggedString < String
    attr_reader :tag

    def initialize(string, tag)
      super(string)
      @tag = tag
    end

    def eql?(other)
      other.is_a?(TaggedString) ? other.tag == tag && super : super
    end
  end

  # Its own hash and eql?, with deliberate collisions between unequal points.
  class Point
    attr_reader :x, :y

    def initialize(x, y)
      @x = x
      @y = y
    end

    def hash = x.hash
    def eql?(other) = other.instance_of?(Point) && other.x.eql?(x) && other.y.eql?(y)
  end

  # A fresh object each call, so that probes are equal but never identical.
  STRING_TEXTS = ["a", "b", "\u00e9", "p1"].freeze
  UNTAGGED = [
    ->(text) { +text },
    ->(text) { text.dup.freeze },
    ->(text) { SubString.new(text) },
    ->(text) { SubString.new(text).freeze },
    ->(text) { HashOverridingString.new(text) },
    ->(text) { (+text).tap { |string| string.define_singleton_method(:shout) { upcase } } },
    ->(text) { (+text).tap { |string| string.define_singleton_method(:shout) { upcase } }.freeze },
    ->(text) { text.ascii_only? ? text.encode("US-ASCII") : text.encode("ISO-8859-1") },
    ->(text) { text.b },
    ->(text) { text.encode("UTF-16LE") }
  ].freeze
  TAGGED = [
    ->(text) { TaggedString.new(text, 1).freeze },
    ->(text) { TaggedString.new(text, 2).freeze }
  ].freeze
  GENERATORS = (UNTAGGED + TAGGED).freeze
  # Texts only TaggedStrings use in the random mixes. Against plain Strings
  # of the same bytes, two TaggedStrings of different tags would make eql?
  # intransitive, and which of several matching keys a Hash finds depends on
  # its table's layout.
  TAGGED_TEXTS = %w[t u].freeze
  OTHER_KEYS = [
    -> { "\xff".b },
    -> { (+"\xff").force_encoding(Encoding::UTF_8) },
    -> { "\xc3\xa9".b },
    -> { 1 }, -> { 2 }, -> { -1 }, -> { 2**64 }, -> { 2**64 + 1 }, -> { -(2**70) },
    -> { 1.0 }, -> { 0.0 }, -> { -0.0 }, -> { 2.5 }, -> { 1e300 }, -> { -1e300 },
    -> { :a }, -> { :"p1" }, -> { "dyn#{1 + 1}".to_sym }, -> { "dyn#{3}".to_sym },
    -> { nil }, -> { true }, -> { false },
    -> { ["a", 1] }, -> { [+"a", 1.0] }, -> { [SubString.new("a"), 1] }, -> { ["a", [1, +"b"]] },
    -> { ["a", [1, "b".encode("UTF-16LE")]] }, -> { [] }, -> { [[]] }, -> { [nil, [nil]] },
    -> { Point.new(1, 2) }, -> { Point.new(1, 3) }, -> { Point.new(2, 2) }, -> { Point.new(1.0, 2) }
  ].freeze

  module_function

  def any_key(rng)
    case rng.rand(6)
    when 0, 1 then OTHER_KEYS.sample(random: rng).call
    when 2 then TAGGED.sample(random: rng).call(TAGGED_TEXTS.sample(random: rng))
    else UNTAGGED.sample(random: rng).call(STRING_TEXTS.sample(random: rng))
    end
  end

  # What identifies a stored key across copies: class (singleton classes
  # aside), bytes, encoding and state. -0.0 and 0.0 are told apart.
  def fingerprint(key)
    case key
    when String then [key.class, key.b, key.encoding, key.instance_variable_get(:@tag)]
    when Array then [Array, key.map { |element| fingerprint(element) }]
    when Float then [Float, key.to_s]
    when Point then [Point, fingerprint(key.x), fingerprint(key.y)]
    else [key.class, key]
    end
  end
end

RSpec.describe "WindowMachines::KeyedSessions keys against a Hash" do
  let(:rng) { Random.new(RSpec.configuration.seed) }

  # The result of the block, or the class of the gem error it raised.
  def outcome
    [:ok, yield]
  rescue WindowMachines::Error => e
    [:error, e.class]
  end

  def described(key)
    encoding = key.respond_to?(:encoding) ? ", #{key.encoding}" : ""
    "#{key.inspect} (#{key.class}#{encoding})"
  end

  # Held keys as the model sees them: fingerprint => [[first, last], ...].
  def model_sessions(model)
    model.each_value.to_h { |entry| [entry[:fingerprint], entry[:sessions].to_a] }
  end

  def tracker_sessions(tracker)
    grouped = tracker.to_a.group_by { |key, _first, _last| KeysAgainstHashSpec.fingerprint(key) }
    grouped.transform_values { |triples| triples.map { |_key, first, last| [first, last] } }
  end

  it "holds, finds and hands over keys exactly as a Hash would", :mistyped do
    20.times do
      gap = [1, 5, 50].sample(random: rng)
      tracker = WindowMachines::KeyedSessions.new(gap)
      model = {}
      time = 0
      250.times do
        time += rng.rand(1..3)
        key = KeysAgainstHashSpec.any_key(rng)
        case rng.rand(12)
        when 0..5
          entry = (model[key] ||= { fingerprint: KeysAgainstHashSpec.fingerprint(key),
                                    sessions: WindowMachines::Sessions.new(gap) })
          entry[:sessions].advance_watermark(tracker.watermark) if tracker.watermark
          expected = outcome { entry[:sessions].insert(time) }
          model.delete(key) if entry[:sessions].size.zero? # a refused first event holds nothing
          got = outcome { tracker.insert(key, time) }
          expect(got).to eq(expected), "insert #{described(key)} at #{time}: #{got} instead of #{expected}"
        when 6..9
          expected = model.key?(key) ? model[key][:sessions].to_a : []
          got = tracker.sessions_for(key)
          expect(got).to eq(expected), "sessions_for #{described(key)}: #{got} instead of #{expected}"
        when 10
          tracker.advance_watermark([time - rng.rand(0..(2 * gap)), 0].max)
        else
          taken = tracker.each_closed.map { |held, first, last| [KeysAgainstHashSpec.fingerprint(held), first, last] }
          expected = model.flat_map do |_key, entry|
            entry[:sessions].advance_watermark(tracker.watermark) if tracker.watermark
            Array.new(entry[:sessions].size) { entry[:sessions].take_closed }.compact
                 .map { |first, last| [entry[:fingerprint], first, last] }
          end
          model.delete_if { |_key, entry| entry[:sessions].size.zero? }
          expect(taken).to match_array(expected)
        end
        expect(tracker.key_count).to eq(model.size)
      end
      expect(tracker_sessions(tracker)).to eq(model_sessions(model))
      # No two held keys are the same Hash key, each is a key of the model,
      # and every model key is held.
      held = tracker.to_a.to_h { |stored, _first, _last| [stored, true] }
      expect(held.size).to eq(tracker.key_count)
      held.each_key { |stored| expect(model).to have_key(stored), "#{described(stored)} held, not in the model" }
      model.each_key { |key| expect(tracker.sessions_for(key)).to eq(model[key][:sessions].to_a) }
    end
  end

  it "finds every String another String's class, singleton or encoding makes eql?" do
    texts = Array.new(50) { |n| "p#{n}" } + ["\u00e9t\u00e9", "", "a" * 300]
    KeysAgainstHashSpec::GENERATORS.each do |store|
      tracker = WindowMachines::KeyedSessions.new(5)
      model = {}
      texts.each_with_index do |text, n|
        key = store.call(text)
        model[key] = [[n, n]]
        tracker.insert(key, n)
      end
      KeysAgainstHashSpec::GENERATORS.each do |probe|
        texts.each do |text|
          key = probe.call(text)
          expect(tracker.sessions_for(key)).to eq(model.fetch(key, [])),
                                               "#{described(store.call(text))} held, #{described(key)} probed"
        end
      end
    end
  end

  it "tells Integers, Floats, Symbols and Arrays apart as a Hash does" do
    keys = KeysAgainstHashSpec::OTHER_KEYS
    tracker = WindowMachines::KeyedSessions.new(1)
    model = {}
    keys.each_with_index do |make, n|
      key = make.call
      (model[key] ||= []) << (n * 10)
      tracker.insert(key, n * 10)
    end
    expect(tracker.key_count).to eq(model.size)
    keys.each do |make|
      key = make.call
      expected = model.fetch(key, []).map { |at| [at, at] }
      expect(tracker.sessions_for(key)).to eq(expected), "sessions_for #{described(key)}"
    end
    expect(tracker.sessions_for(1.0)).not_to eq(tracker.sessions_for(1))
    expect(tracker.sessions_for(-0.0)).to eq(tracker.sessions_for(0.0))
  end
end
