# frozen_string_literal: true

# Results as a Markdown table.
module Table
  HEADER = ["operation", "divmod ns", "gem ns", "plain Ruby ns", "gem/divmod", "plain/gem", "target", "met?"].freeze

  module_function

  def render(results)
    lines = [HEADER, HEADER.map { "---" }] + results.map { |result| row(result) }
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
end
