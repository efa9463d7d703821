# frozen_string_literal: true

# VersionedTable against a Hash and against a versioned table written well
# in plain Ruby (bench/support/ruby_versioned_table.rb: a Hash of sorted
# Arrays of [ts, value], searched with bsearch), in one process, with KEYS
# String keys (default 1,000,000) holding VERSIONS versions each:
#   (a) get(key, ts), each ts inside one of the key's versions, all versions
#       alike, against Hash#[] on the same keys (the Hash holds the latest
#       values) and against the plain-Ruby table's get(key, ts), checking
#       the two tables give identical answers;
#   (b) put, the whole stream in time order, against Hash#[]= of the same
#       keys and values (and the plain-Ruby table's put);
#   (c) RSS per version held, beyond the values (made beforehand);
#   (d) RSS of a table fed for 10 times its history retention with the same
#       KEYS keys throughout (Integer values, so only the table allocates),
#       read at 1x, 2x and 10x the retention;
#   (e) one busy key put every tick, in order, so each put expires its
#       oldest version: a put among 160,000 versions against one among
#       10,000 (a cost in proportion to the history would read 16x).
# Times are the best of a few runs, alternating between the contenders, and
# ratios are measured in this process. Lookups at these sizes wait on
# memory, so on a machine whose cache other work shares they move by 20% or
# more between runs. Run: bundle exec rake bench:versioned (KEYS=100000 for
# a quick run).

require "objspace"
require "window_machines"
require_relative "support/ruby_versioned_table"

KEYS = Integer(ENV.fetch("KEYS", 1_000_000))
VERSIONS = 4
PUTS = KEYS * VERSIONS
# Every version stays reachable in (a) and (b): nothing is older than the
# retention.
RETENTION = PUTS
# (d): the history kept is FLAT_ROUNDS rounds of one put per key, and the
# stream runs for 10 times that.
FLAT_ROUNDS = 4
FLAT_RETENTION = FLAT_ROUNDS * KEYS
# (d): one put in this many is followed by a late one for the same key, half
# a round old, which goes into the key's history.
LATE_EVERY = 10
GET_RUNS = 3
PUT_RUNS = 2
WARMUP_KEYS = [KEYS / 10, 10_000].min

GET_OVER_HASH_TARGET = 2.0
RUBY_OVER_GEM_TARGET = 2.0
PUT_OVER_HASH_TARGET = 1.5
RSS_TARGET = 48
FLAT_TARGET = 1.1
BUSY_TARGET = 1.5

def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

def rss_bytes
  GC.start
  File.read("/proc/self/status")[/^VmRSS:\s+(\d+) kB/, 1].to_i * 1024
end

def verdict(met) = met ? "met" : "NOT met"

def at_most(ratio, target) = format("%.2fx (target <= %.1fx: %s)", ratio, target, verdict(ratio <= target))

def at_least(ratio, target) = format("%.2fx (target >= %.1fx: %s)", ratio, target, verdict(ratio >= target))

def mb(bytes) = format("%.1f MB", bytes / 1e6)

# Nanoseconds per operation of the block, which runs `count` operations.
def timed(count)
  GC.start
  started = now
  yield
  (now - started) * 1e9 / count
end

# The workload, made before anything is measured: keys, one value object
# per put, the put stream (round by round, each round every key once in a
# new order, the timestamp of put i being i) and one query per key.
Workload = Struct.new(:keys, :values, :put_keys, :query_keys, :query_times, keyword_init: true)

def workload(key_count, seed: 20_261_201)
  random = Random.new(seed)
  keys = Array.new(key_count) { |n| "account-#{n}".freeze }
  puts_total = key_count * VERSIONS
  values = Array.new(puts_total) { |n| "value-#{n}" }
  put_keys = Array.new(VERSIONS) { keys.shuffle(random: random) }.flatten!
  # The put that ends each version (the next one for the same key), or the
  # end of the stream for the latest.
  ends = Array.new(puts_total)
  next_put = {}
  (puts_total - 1).downto(0) do |index|
    key = put_keys[index]
    ends[index] = next_put.fetch(key, puts_total + key_count)
    next_put[key] = index
  end
  picks = Array.new(key_count) { random.rand(puts_total) }
  Workload.new(keys: keys, values: values, put_keys: put_keys,
               query_keys: picks.map { |index| put_keys[index] },
               query_times: picks.map { |index| index + random.rand(ends[index] - index) })
end

def gem_puts(work, table = WindowMachines::VersionedTable.new(RETENTION))
  keys = work.put_keys
  values = work.values
  index = 0
  while index < keys.size
    table.put(keys[index], values[index], index)
    index += 1
  end
  table
end

def ruby_puts(work, table = RubyVersionedTable.new(RETENTION))
  keys = work.put_keys
  values = work.values
  index = 0
  while index < keys.size
    table.put(keys[index], values[index], index)
    index += 1
  end
  table
end

def hash_puts(work, hash = {})
  keys = work.put_keys
  values = work.values
  index = 0
  while index < keys.size
    hash[keys[index]] = values[index]
    index += 1
  end
  hash
end

def gem_gets(work, table)
  keys = work.query_keys
  times = work.query_times
  index = 0
  while index < keys.size
    table.get(keys[index], times[index])
    index += 1
  end
end

def gem_latest_gets(work, table)
  keys = work.query_keys
  index = 0
  while index < keys.size
    table.get(keys[index])
    index += 1
  end
end

def ruby_gets(work, table)
  keys = work.query_keys
  times = work.query_times
  index = 0
  while index < keys.size
    table.get(keys[index], times[index])
    index += 1
  end
end

def hash_gets(work, hash)
  keys = work.query_keys
  index = 0
  while index < keys.size
    hash[keys[index]]
    index += 1
  end
end

# (d): KEYS keys, one put each per round in a fixed order, the timestamp
# going up by one per put, for 10 times the retention; after every
# LATE_EVERY-th put the same key gets a put half a round older, which lands
# between its last two versions. Returns the readings at 1x, 2x and 10x.
def flat_stream(keys)
  order = keys.shuffle(random: Random.new(7))
  base = rss_bytes
  table = WindowMachines::VersionedTable.new(FLAT_RETENTION)
  readings = []
  late_into_history = 0
  tick = 0
  (10 * FLAT_ROUNDS).times do |round|
    order.each_with_index do |key, position|
      table.put(key, tick, tick)
      if round.positive? && (position % LATE_EVERY).zero?
        late = tick - KEYS / 2
        late_into_history += 1 if table.put(key, late, late).is_a?(Integer)
      end
      tick += 1
    end
    multiple = (round + 1) / FLAT_ROUNDS.to_f
    next unless [1.0, 2.0, 10.0].include?(multiple)

    readings << [multiple, table.stream_time, table.version_count, rss_bytes - base]
  end
  raise "#{table.size} keys held, not #{keys.size}" unless table.size == keys.size

  [readings, late_into_history]
end

# (e): ns per put of one key put every tick for `history` ticks beyond a
# retention of `history`, so that it always holds `history` versions.
def busy_key_puts(history)
  table = WindowMachines::VersionedTable.new(history)
  history.times { |at| table.put("busy", at, at) }
  timed(history) { history.step(2 * history - 1) { |at| table.put("busy", at, at) } }
end

work = workload(KEYS)
warmup = workload(WARMUP_KEYS, seed: 1)
puts RUBY_DESCRIPTION
puts "#{KEYS} String keys x #{VERSIONS} versions (#{PUTS} puts, in time order, one value object each), " \
     "history retention #{RETENTION} (every version stays reachable); #{KEYS} queries, each inside one version"

# (c) first, before anything has been freed that the table could reuse.
before = rss_bytes
measured = gem_puts(work)
rss_per_version = (rss_bytes - before).to_f / measured.version_count
memsize_per_version = ObjectSpace.memsize_of(measured).to_f / measured.version_count
held = [measured.version_count, measured.size]
raise "#{held[0]} versions held, not #{PUTS}" unless held[0] == PUTS

# (d) while (c)'s table is still held, so that nothing freed is reused.
flat, late_into_history = flat_stream(work.keys)
measured = nil

gem_puts(warmup)
ruby_puts(warmup)
hash_puts(warmup)

puts
puts "(b) put, ns per put, best of #{PUT_RUNS}"
put_times = Hash.new { |times, name| times[name] = [] }
# The last run's tables answer (a): all three built at the same point.
gem_table = ruby_table = hash = nil
PUT_RUNS.times do
  # Each run starts with the previous run's structure let go.
  gem_table = nil
  put_times[:gem] << timed(PUTS) { gem_table = gem_puts(work) }
  hash = nil
  put_times[:hash] << timed(PUTS) { hash = hash_puts(work) }
  ruby_table = nil
  put_times[:ruby] << timed(PUTS) { ruby_table = ruby_puts(work) }
end
put_ns = put_times.transform_values(&:min)
puts format("  %-52s %8.0f", "VersionedTable#put", put_ns[:gem])
puts format("  %-52s %8.0f", "Hash#[]=", put_ns[:hash])
puts format("  %-52s %8.0f", "plain-Ruby versioned table #put", put_ns[:ruby])

# The same answers from both tables, and the same latest values as the Hash.
gem_answers = work.query_keys.zip(work.query_times).map { |key, at| gem_table.get(key, at) }
ruby_answers = work.query_keys.zip(work.query_times).map { |key, at| ruby_table.get(key, at) }
identical = gem_answers == ruby_answers && gem_answers.none?(&:nil?) &&
            work.keys.all? { |key| gem_table.get(key).equal?(hash[key]) }
gem_answers = ruby_answers = nil

puts "(a) get, ns per get, best of #{GET_RUNS}; the tables' answers #{identical ? 'identical' : 'DIFFER'}"
get_times = Hash.new { |times, name| times[name] = [] }
GET_RUNS.times do
  get_times[:gem] << timed(KEYS) { gem_gets(work, gem_table) }
  get_times[:hash] << timed(KEYS) { hash_gets(work, hash) }
  get_times[:ruby] << timed(KEYS) { ruby_gets(work, ruby_table) }
  get_times[:latest] << timed(KEYS) { gem_latest_gets(work, gem_table) }
end
get_ns = get_times.transform_values(&:min)
puts format("  %-52s %8.0f", "VersionedTable#get(key, ts)", get_ns[:gem])
puts format("  %-52s %8.0f", "Hash#[]", get_ns[:hash])
puts format("  %-52s %8.0f", "plain-Ruby versioned table #get(key, ts)", get_ns[:ruby])
puts format("  %-52s %8.0f", "VersionedTable#get(key), the latest", get_ns[:latest])

puts "(c) #{held[0]} versions held by #{held[1]} keys"
puts "(d) a table fed for 10x its retention of #{FLAT_ROUNDS} rounds (a round: one put per key, #{KEYS} keys " \
     "throughout, Integer values), every #{LATE_EVERY}th put followed by a late one into history " \
     "(#{late_into_history} of them):"
flat.each do |multiple, stream_time, versions, bytes|
  puts format("  at %4.0fx (stream time %10d): %9d versions held, table RSS %10s, %5.1f bytes a version",
              multiple, stream_time, versions, mb(bytes), bytes.to_f / versions)
end

few, many = Array.new(3) { [busy_key_puts(10_000), busy_key_puts(160_000)] }.transpose.map(&:min)
puts format("(e) one key put every tick: %.0f ns a put among 160,000 versions, %.0f among 10,000", many, few)

puts
puts format("(a) VersionedTable#get(key, ts) / Hash#[] at %d keys: %s", KEYS, at_most(get_ns[:gem] / get_ns[:hash], GET_OVER_HASH_TARGET))
puts format("(a) plain-Ruby versioned table #get(key, ts) / VersionedTable#get(key, ts): %s%s",
            at_least(get_ns[:ruby] / get_ns[:gem], RUBY_OVER_GEM_TARGET), identical ? "" : ", answers DIFFER")
puts format("(b) VersionedTable#put in order / Hash#[]=: %s; plain-Ruby versioned table #put / VersionedTable#put: %.2fx",
            at_most(put_ns[:gem] / put_ns[:hash], PUT_OVER_HASH_TARGET), put_ns[:ruby] / put_ns[:gem])
puts format("(c) RSS per version held: %.0f bytes beyond the values (memsize_of says %.0f; target <= %d: %s)",
            rss_per_version, memsize_per_version, RSS_TARGET, verdict(rss_per_version <= RSS_TARGET))
(_, _, versions1, rss1), (_, _, _, rss2), (_, _, versions10, rss10) = flat
puts format("(d) table RSS at 10x the retention / at 1x: %.2fx, holding %.2fx the versions (nothing has expired at 1x); " \
            "at 10x / at 2x: %s", rss10.to_f / rss1, versions10.to_f / versions1,
            at_most(rss10.to_f / rss2, FLAT_TARGET))
puts format("(e) a put expiring its key's oldest version, among 160,000 / among 10,000: %s",
            at_most(many / few, BUSY_TARGET))
