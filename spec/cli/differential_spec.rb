# frozen_string_literal: true

# `window_machines` against the plain-Ruby model in spec/support/cli_model.rb
# over random streams: a few hundred events from several keys (a missing key
# field and an explicit null being the same key), out of order within and
# beyond --lag, split over one to three files, with empty lines and (now and
# then) bad lines under --skip-bad. The command must write the model's
# records, in closing order (records with equal ends in any order of keys),
# the model's late lines to --late and the bad lines to --bad, and report
# both counts.
#
# Inputs keep clear of what the contract leaves open: values are small
# Integers and halves (exact sums and means in any order; an Integer never
# ties a Float in min/max), no timestamp is below the window offset, the
# first line is always a good one (it fixes the time unit), and a line with a
# bad aggregate value is never late.
RSpec.describe "window_machines against the plain-Ruby model" do
  include WindowMachinesSpec::Command

  aggregates = "count,count:v,sum:v,min:v,max:v,mean:v,first:v,last:v,collect:v"
  rounds = 5

  include_context "in a temporary directory"

  def key_fields(style)
    { none: [], one: ["user"], nested: ["u.id"], two: %w[user region] }.fetch(style)
  end

  # The key part of an event for `style`, leaving fields out now and then.
  def key_part(rng, style)
    pick = ->(values) { values.sample(random: rng) }
    case style
    when :none then {}
    when :one then pick.(["a", "b", "c", 7, :missing, nil]).then { |user| user == :missing ? {} : { "user" => user } }
    when :nested then pick.([{ "u" => { "id" => "p" } }, { "u" => { "id" => "q" } }, { "u" => { "id" => 3 } }, { "u" => {} }, {}])
    else { "user" => pick.(%w[a b]), "region" => pick.(["x", "y", nil]) }
    end
  end

  def value_part(rng)
    case rng.rand(10)
    when 0 then {}
    when 1 then { "v" => nil }
    when 2, 3 then { "v" => rng.rand(-20..20) + 0.5 }
    else { "v" => rng.rand(-20..20) }
    end
  end

  # [lines, events]: every line of the stream (empty and bad ones included)
  # and, for each good line, [data, ts, line] in stream order.
  def random_stream(rng, style, lag:, bad:)
    t = 1_000_000
    lines = []
    events = []
    bad_lines = []
    rng.rand(250..400).times do |index|
      t += rng.rand(12).zero? ? rng.rand(10..40) : rng.rand(0..3)
      lines << "\n" if rng.rand(50).zero?
      if bad && index.positive? && rng.rand(30).zero?
        line = [
          %({"ts":#{t},"user":\n),
          %({"user":"a","v":1}\n),
          %({"ts":"zzz","v":1}\n),
          %([#{t},1]\n),
          %({"ts":#{t + 1000},"user":"a","v":"x"}\n) # far ahead: must not move the stream time
        ].sample(random: rng)
        lines << line
        bad_lines << line
        next
      end
      ts = case rng.rand(10)
           when 0, 1 then t - rng.rand(0..lag)
           when 2 then t - lag - rng.rand(1..30)
           else t
           end
      data = { "ts" => ts }.merge(key_part(rng, style)).merge(value_part(rng))
      # Field order varies too: the command reads fields by name.
      data = data.to_a.shuffle(random: rng).to_h if rng.rand(4).zero?
      line = "#{JSON.generate(data)}\n"
      lines << line
      events << [data, ts, line]
    end
    [lines, events, bad_lines]
  end

  # The lines over one to three files, cut anywhere between lines.
  def write_files(rng, lines)
    cuts = Array.new(rng.rand(0..2)) { rng.rand(1...lines.size) }.uniq.sort
    [0, *cuts, lines.size].each_cons(2).each_with_index.map do |(from, to), index|
      write_file(@dir, "part#{index}.jsonl", lines[from...to].join)
    end
  end

  def options_for(kind, rng, lag)
    case kind
    when :sessions
      { gap: [1, 2, 3, 5, 10].sample(random: rng) }
    when :tumbling
      size = [1, 3, 5, 10, 20].sample(random: rng)
      { size: size, grace: [0, 0, 2, 5].sample(random: rng), offset: rng.rand(2).zero? ? 0 : rng.rand(size) }
    else
      size, advance = [[10, 5], [10, 4], [9, 6], [6, 4], [7, 7], [12, 8], [5, 1], [15, 10]].sample(random: rng)
      { size: size, advance: advance, grace: [0, 0, 2, 5].sample(random: rng),
        offset: rng.rand(2).zero? ? 0 : rng.rand(advance) }
    end.merge(lag: lag)
  end

  def read_if_any(path) = File.exist?(path) ? File.binread(path) : ""

  def first_difference(actual, expected)
    index = (0...[actual.size, expected.size].max).find { |i| actual[i] != expected[i] }
    return nil if index.nil?

    "#{actual.size} records, the model #{expected.size}; first difference at #{index}:\n" \
      "  command: #{actual[index].inspect}\n  model:   #{expected[index].inspect}"
  end

  %i[sessions tumbling hopping].each_with_index do |kind, kind_index|
    rounds.times do |round|
      it "#{kind} (round #{round + 1}) writes the model's records in closing order, its late lines and the bad lines" do
        seed = RSpec.configuration.seed * 1000 + (kind_index * 100) + round
        rng = Random.new(seed)
        style = %i[none one one nested two].sample(random: rng)
        lag = [0, 0, 1, 3, 8, 20].sample(random: rng)
        bad = rng.rand(2).zero?
        options = options_for(kind, rng, lag)
        lines, events, bad_lines = random_stream(rng, style, lag: lag, bad: bad)
        paths = write_files(rng, lines)
        keys = key_fields(style)

        model = WindowMachinesSpec::CliModel.new(kind, keys: keys, aggs: aggregates, **options)
        events.each { |data, ts, line| model.add(data, ts, line) }
        model.finish

        late = File.join(@dir, "late.jsonl")
        bad_file = File.join(@dir, "bad.jsonl")
        args = [kind.to_s, "--quiet", *options.flat_map { |name, value| ["--#{name}", value.to_s] },
                *keys.flat_map { |key| ["--key", key] }, "--agg", aggregates, "--late", late,
                *(bad ? ["--skip-bad", "--bad", bad_file] : []), *paths]
        reproduce = "seed #{seed}: window_machines #{args.join(' ')}"
        result = run_cli(*args)
        expect(result).to be_success, "#{reproduce}\n#{result.describe}"

        end_column = kind == :sessions ? "last" : "end"
        actual = result.records
        ends = actual.map { |record| record[end_column] }
        expect(ends).to eq(ends.sort), "#{reproduce}\nnot in closing order (earliest end first)"
        difference = first_difference(canonical(actual, end_column, keys), canonical(model.records, end_column, keys))
        expect(difference).to be_nil, "#{reproduce}\n#{difference}"
        expect(actual.first&.keys).to eq(model.records.first&.keys), reproduce

        # With nothing late (or bad) the file may be empty or not written at all.
        expect(read_if_any(late)).to eq(model.late_lines.join), reproduce
        expect(late_count(result.stderr)).to eq(model.late_lines.size), "#{reproduce}\n#{result.stderr}"
        if bad
          expect(read_if_any(bad_file)).to eq(bad_lines.join), reproduce
          expect(bad_count(result.stderr)).to eq(bad_lines.size), "#{reproduce}\n#{result.stderr}"
        end
      end
    end
  end
end
