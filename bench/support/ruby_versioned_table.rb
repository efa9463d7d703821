# frozen_string_literal: true

require "window_machines"

# What a Ruby programmer writes for a versioned table, written well: a Hash
# from key to an Array of `[timestamp, value]` pairs in timestamp order,
# searched with `bsearch_index`, under the rules of
# WindowMachines::VersionedTable (README "Values as of a time"):
#
# - a put or delete below the cutoff (stream time minus the history
#   retention) is refused, as `on_late:` says;
# - `put` answers nil when the new version is its key's latest, else the
#   timestamp of the next newer version; `delete` writes a tombstone and
#   answers the version it ended, as `version` would have;
# - `get(key, ts)` answers the version at or before `ts`, nil before the
#   cutoff unless the latest version is at or before `ts`;
# - versions that no query at or after the cutoff can reach are dropped,
#   and a key left with only an expired tombstone is released.
#
# It answers every call as the gem does, but drops a key's expired versions
# only when that key is written: dropping every key's eagerly needs an index
# by expiry time, which the gem keeps and a Ruby programmer would not write
# for this. Arguments are not checked (the gem checks them all).
class RubyVersionedTable
  # A deleted value: a version in its own right, that every query reads as nil.
  TOMBSTONE = Object.new.freeze

  attr_reader :history_retention, :stream_time, :late_count

  def initialize(history_retention, on_late: :raise)
    @history_retention = history_retention
    @on_late = on_late
    @versions = {} # key => [[ts, value], ...], oldest first
    @stream_time = nil
    @late_count = 0
  end

  def put(key, value, ts)
    return false if refused?(key, value, ts)

    write(key, value, ts)
  end

  def delete(key, ts)
    return nil if refused?(key, nil, ts)

    prior = version(key, ts)
    write(key, TOMBSTONE, ts)
    prior
  end

  def get(key, ts = nil)
    versions = @versions[key]
    return nil unless versions

    latest_ts, latest = versions.last
    return visible(latest) if ts.nil? || latest_ts <= ts
    return nil if ts < cutoff

    index = versions.bsearch_index { |(at, _)| at > ts } # never nil: the latest is after ts
    index.zero? ? nil : visible(versions[index - 1][1])
  end

  # `[value, valid_from, valid_to]` (valid_to nil for the latest), or nil.
  def version(key, ts = nil)
    versions = @versions[key]
    return nil unless versions

    index = if ts.nil? || versions.last[0] <= ts
              versions.size
            elsif ts < cutoff
              0
            else
              versions.bsearch_index { |(at, _)| at > ts }
            end
    return nil if index.zero?

    at, value = versions[index - 1]
    value.equal?(TOMBSTONE) ? nil : [value, at, versions[index]&.first]
  end

  def size = @versions.size

  def version_count = @versions.sum { |_key, versions| versions.size }

  private

  def cutoff
    return 0 unless @stream_time

    at = @stream_time - @history_retention
    at.negative? ? 0 : at
  end

  def visible(value) = value.equal?(TOMBSTONE) ? nil : value

  def refused?(key, value, ts)
    return false unless @stream_time && ts < cutoff

    @late_count += 1
    case @on_late
    when :drop then nil
    when :raise then raise WindowMachines::LateEventError, "late event: timestamp #{ts} is at or below the watermark #{cutoff - 1}"
    else @on_late.call(key, value, ts, @stream_time)
    end
    true
  end

  def write(key, value, ts)
    @stream_time = ts if @stream_time.nil? || ts > @stream_time
    versions = @versions[key]
    unless versions
      @versions[key] = [[ts, value]]
      return nil
    end

    valid_to = nil
    if versions.last[0] < ts # in order: the common case
      versions << [ts, value]
    else
      index = versions.bsearch_index { |(at, _)| at >= ts }
      if versions[index][0] == ts
        versions[index] = [ts, value]
      else
        versions.insert(index, [ts, value])
      end
      valid_to = versions[index + 1]&.first
    end
    expire(key, versions)
    valid_to
  end

  # Drops the versions whose successor starts at or before the cutoff, and
  # the key itself when all it has left is a tombstone at or before it.
  def expire(key, versions)
    cutoff = self.cutoff
    versions.shift while versions.size > 1 && versions[1][0] <= cutoff
    first_ts, first = versions.first
    @versions.delete(key) if versions.size == 1 && first.equal?(TOMBSTONE) && first_ts <= cutoff
  end
end
