# frozen_string_literal: true

# Results as a Markdown table.
module Table
  HEADER = ["operation", "divmod ns", "gem ns", "plain Ruby ns", "gem/divmod", "plain/gem", "target", "met?"].freeze
  BATCH_HEADER = ["operation", "events", "loop reading only ns", "single calls ns", "batch call ns",
                  "batch/single", "target", "met?"].freeze

  module_function

  def render(results)
    markdown(HEADER, results.map { |result| row(result) })
  end

  # BatchResults, one row each.
  def render_batches(results)
    markdown(BATCH_HEADER, results.map { |result| batch_row(result) })
  end

  def markdown(header, rows)
    lines = [header, header.map { "---" }] + rows
    lines.map { |cells| "| #{cells.join(' | ')} |" }.join("\n")
  end

  def row(result)
    misses = result.misses
    [result.workload.name,
     *[result.divmod, result.gem, result.plain].map { |ns| format("%.1f", ns) },
     *[result.gem_over_divmod, result.plain_over_gem].map { |ratio| format("%.2fx", ratio) },
     result.target,
     misses.empty? ? "yes" : "no (#{misses.join(', ')})"]
  end

  def batch_row(result)
    [result.workload.name, result.workload.events.to_s.gsub(/\B(?=(\d{3})+\z)/, ","),
     *[result.read, result.single, result.batch].map { |ns| format("%.1f", ns) },
     format("%.2fx", result.batch_over_single), result.target, result.met? ? "met" : "NOT met"]
  end
end
