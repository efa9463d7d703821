# frozen_string_literal: true

# Nanoseconds per event of one workload, for divmod, the gem and plain Ruby.
class Result
  # The gem must beat plain Ruby by at least this much on every operation.
  PLAIN_OVER_GEM = 4.0

  attr_reader :workload, :divmod, :gem, :plain

  def initialize(workload, divmod:, gem:, plain:)
    @workload = workload
    @divmod = divmod
    @gem = gem
    @plain = plain
  end

  def gem_over_divmod
    gem / divmod
  end

  def plain_over_gem
    plain / gem
  end

  def target
    plain = "plain/gem >= #{PLAIN_OVER_GEM}"
    workload.target ? "gem/divmod <= #{workload.target}, #{plain}" : plain
  end

  def misses
    misses = []
    misses << "gem/divmod" if workload.target && gem_over_divmod > workload.target
    misses << "plain/gem" if plain_over_gem < PLAIN_OVER_GEM
    misses
  end
end

# Nanoseconds per event of one BatchWorkload: the loop that only reads the
# events, the single calls and the batch call.
class BatchResult
  attr_reader :workload, :read, :single, :batch

  def initialize(workload, read:, single:, batch:)
    @workload = workload
    @read = read
    @single = single
    @batch = batch
  end

  def batch_over_single
    batch / single
  end

  def target
    "batch/single <= #{workload.target}"
  end

  def met?
    batch_over_single <= workload.target
  end
end
