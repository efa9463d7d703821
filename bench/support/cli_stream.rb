# frozen_string_literal: true

require "fileutils"
require "zlib"

# The input of bench/cli.rb: `events` purchases from `users` users over an
# 8-hour day, as JSON lines like
# `{"user":"u123456","ts":1764489600123,"amount":1234}` (ts in epoch
# milliseconds, amount in integer cents), the same as CSV (header
# user,ts,amount), and the JSON lines gzipped. Event n is user
# n % users's, so each user has events / users of them (3 by default), at
# random within SPREAD of a start drawn at random over the day: with a
# 30-minute gap about three users in four have one session and the rest two.
# Lines are in arrival order: one event in ten arrives up to LATE late, so
# the file is out of order by at most LATE (nothing is late for a lag of
# LATE). Fixed seed; the file names tell the sizes and the seed, so files
# once written can be reused.
module CliStream
  DAY_START = 1_764_489_600_000 # 2025-11-30T08:00:00Z
  DAY = 8 * 3_600_000
  SPREAD = 60 * 60_000
  LATE = 5 * 60_000
  LATE_SHARE = 0.1
  SEED = 20_261_213
  CHUNK = 100_000

  Files = Struct.new(:jsonl, :csv, :gzip, keyword_init: true)

  module_function

  def files(events, users, dir:)
    stem = File.join(dir, "events-#{events}-#{users}-#{SEED}")
    Files.new(jsonl: "#{stem}.jsonl", csv: "#{stem}.csv", gzip: "#{stem}.jsonl.gz")
  end

  def written?(files) = files.to_a.all? { |path| File.exist?(path) }

  def write(files, events, users)
    FileUtils.mkdir_p(File.dirname(files.jsonl))
    parts = files.to_a.map { |path| "#{path}.part" }
    jsonl, csv, gzip = parts.map { |path| File.open(path, "wb") }
    gzip = Zlib::GzipWriter.new(gzip)
    csv.write("user,ts,amount\n")
    each_chunk(events, users) do |chunk|
      lines = chunk.map { |user, ts, amount| %({"user":"u#{user}","ts":#{ts},"amount":#{amount}}\n) }.join
      jsonl.write(lines)
      gzip.write(lines)
      csv.write(chunk.map { |user, ts, amount| "u#{user},#{ts},#{amount}\n" }.join)
    end
    [jsonl, csv, gzip].each(&:close)
    parts.zip(files.to_a).each { |part, path| File.rename(part, path) }
  end

  # Yields [user, ts, amount] rows in arrival order, CHUNK at a time.
  def each_chunk(events, users)
    random = Random.new(SEED)
    starts = Array.new(users) { random.rand(DAY) }
    times = Array.new(events) { |n| starts[n % users] + random.rand(SPREAD) }
    amounts = Array.new(events) { random.rand(100..99_999) }
    # Arrival offset and event number in one Integer, so a plain sort orders them.
    bits = events.bit_length
    order = times.each_with_index.map do |at, n|
      delay = random.rand < LATE_SHARE ? random.rand(0..LATE) : 0
      ((at + delay) << bits) | n
    end
    order.sort!
    mask = (1 << bits) - 1
    order.each_slice(CHUNK) do |slice|
      yield(slice.map do |sorted|
        n = sorted & mask
        [n % users, DAY_START + times[n], amounts[n]]
      end)
    end
  end
end
