# frozen_string_literal: true

require "json"
require "optparse"
require_relative "duration"

module WindowMachines
  module Command
    # Reads a subcommand's arguments into the job the native engine runs.
    class Options
      # What each subcommand windows by, for its help.
      SUMMARIES = {
        "sessions" => "per key sessions: bursts of events no more than --gap apart",
        "tumbling" => "per key windows of --size, one after another",
        "hopping" => "per key windows of --size starting every --advance"
      }.freeze
      # Aggregators `--agg` takes, and whether each needs a field.
      AGGREGATORS = {
        "count" => :optional, "sum" => :required, "min" => :required, "max" => :required,
        "mean" => :required, "first" => :required, "last" => :required, "collect" => :required
      }.freeze
      # Names `--time-format` takes, and the format each means.
      TIME_FORMATS = {
        "s" => "s", "seconds" => "s", "ms" => "ms", "milliseconds" => "ms", "us" => "us",
        "microseconds" => "us", "ns" => "ns", "nanoseconds" => "ns", "iso" => "iso",
        "iso8601" => "iso", "rfc3339" => "iso", "clock" => "clock"
      }.freeze
      # The options a resumed run must be given as the stopped one was (the
      # others only say where to write, or whether to skip bad lines), each
      # by its name in messages.
      RESUMED_WITH = {
        windows: "the subcommand", keys: "--key", time: "--time", time_format: "--time-format", lag: "--lag",
        aggregates: "--agg", grace: "--grace", offset: "--offset", gap: "--gap", size: "--size",
        advance: "--advance", sources: "the input files", output: "--output", output_format: "--output-format"
      }.freeze
      # The lengths each subcommand takes.
      LENGTHS = { "sessions" => %i[gap], "tumbling" => %i[size grace offset],
                  "hopping" => %i[size advance grace offset] }.freeze
      # The lengths any subcommand takes.
      ALL_LENGTHS = LENGTHS.values.flatten.uniq.freeze
      # A length of zero, for the ones not given.
      NO_TIME = ["units", 0].freeze
      # Links followed from one path before giving up, as the kernel does
      # (Linux's MAXSYMLINKS).
      MAX_LINKS = 40
      # The longest name a directory entry holds (Linux, and most others).
      NAME_MAX = 255

      # @return [Boolean] whether `--help` was asked for
      attr_reader :help
      # @return [Boolean] whether `--version` was asked for
      attr_reader :version
      # @return [String] the subcommand's help text
      attr_reader :usage

      # @param subcommand [String] sessions, tumbling or hopping
      def initialize(subcommand)
        @subcommand = subcommand
        @job = { windows: subcommand.to_sym, keys: [], time: "ts", time_format: nil, lag: NO_TIME,
                 aggregates: [["count", nil, "count"]], output: nil, late: nil, bad: nil,
                 skip_bad: false, state: nil, state_scratch: nil, grace: NO_TIME, offset: NO_TIME }
        @quiet = false
        @formats = {}
        @help = false
        @version = false
        @parser = build_parser
        @usage = @parser.help
      end

      # @param argv [Array<String>] the arguments after the subcommand
      # @param terminal [Boolean] whether standard output is a terminal
      # @param progress [Boolean] whether standard error is a terminal
      # @return [Hash] the job for {Command.run_job}
      # @raise [OptionParser::ParseError] on bad usage
      def parse(argv, terminal:, progress:)
        files = @parser.parse(argv)
        return if @help || @version

        require_lengths
        @job[:sources] = sources(files.empty? ? ["-"] : files)
        check_files
        check_writable
        check_columns
        @job[:output_format] = @formats[:output] || (terminal && @job[:output].nil? ? "table" : "jsonl")
        check_resumable_format
        @job[:progress] = progress && !@quiet && @job[:sources].all?(&:first)
        @job.merge(fingerprint: fingerprint)
      end

      private

      def build_parser
        OptionParser.new do |parser|
          parser.banner = "Usage: window_machines #{@subcommand} #{length_synopsis} [options] [FILE...]\n\n" \
                          "#{SUMMARIES.fetch(@subcommand).capitalize}, from JSON Lines or CSV event files (gzip " \
                          "too) or standard input,\nwritten out as each closes.\n"
          parser.separator ""
          parser.separator "Windows:"
          length_options(parser)
          parser.on("--lag DURATION", "Watermark = newest time seen - lag (default 0): " \
                                      "an event up to lag behind is on time") { |text| @job[:lag] = Duration.parse(text) }
          parser.separator ""
          parser.separator "Events:"
          event_options(parser)
          parser.separator ""
          parser.separator "Output:"
          output_options(parser)
          parser.separator ""
          parser.separator <<~NOTES
            Durations: 500ms, 30s, 30m, 2h, 1d, or a bare number in the time field's unit
            (seconds for epoch seconds, nanoseconds for ISO times and times of day).
            Times: epoch seconds (with up to nine decimal places), milliseconds, microseconds
            or nanoseconds, ISO 8601 with an offset, or a time of day (14:01) for one day's log;
            detected from the first event unless --time-format says. Results keep the input's
            form (ISO in UTC).
            --state: a run stopped by a signal, a crash or bad input resumes where its last
            checkpoint (taken about every second) left off when started again with the same
            options. Into an --output file the result is exactly an uninterrupted run's output;
            into standard output or a pipe (a FIFO), what closed after the last checkpoint may
            be written twice. From standard input or a pipe, a resumed run carries on with what
            it is given next.
            Exit status: 0 done, 1 bad input data or output that cannot be written, 2 bad usage,
            128+N stopped by signal N.
          NOTES
        end
      end

      def length_synopsis
        { "sessions" => "--gap DURATION", "tumbling" => "--size DURATION",
          "hopping" => "--size DURATION --advance DURATION" }.fetch(@subcommand)
      end

      def length_options(parser)
        if @subcommand == "sessions"
          parser.on("--gap DURATION", "Longest silence inside a session (inclusive)") do |text|
            @job[:gap] = Duration.parse(text)
          end
          return
        end
        parser.on("--size DURATION", "Window length") { |text| @job[:size] = Duration.parse(text) }
        if @subcommand == "hopping"
          parser.on("--advance DURATION", "Time between window starts") { |text| @job[:advance] = Duration.parse(text) }
        end
        parser.on("--grace DURATION", "How long past its end a window waits (default 0)") do |text|
          @job[:grace] = Duration.parse(text)
        end
        parser.on("--offset DURATION", "Windows start at offset + k * step (default 0)") do |text|
          @job[:offset] = Duration.parse(text)
        end
      end

      def event_options(parser)
        parser.on("--key FIELD", "Key field; repeatable; a.b reads nested objects (default: one key)") do |field|
          @job[:keys] << field_name(field)
        end
        parser.on("--time FIELD", "Time field (default ts)") { |field| @job[:time] = field_name(field) }
        parser.on("--time-format FORMAT", TIME_FORMATS, "s, ms, us, ns, iso or clock (14:01) (default: detected)") do |format|
          @job[:time_format] = format
        end
        parser.on("--agg LIST", "Comma-separated: count, count:F, sum:F, min:F, max:F, mean:F,",
                  "first:F, last:F, collect:F (default count)") { |list| @job[:aggregates] = aggregates(list) }
        parser.on("--input-format FORMAT", %w[jsonl csv], "jsonl or csv (default: from the file name)") do |format|
          @formats[:input] = format
        end
        parser.on("--skip-bad", "Count and skip bad lines instead of stopping") { @job[:skip_bad] = true }
        parser.on("--bad FILE", "Write the bad lines --skip-bad skips there (given now, or when a run",
                  "stopped by one resumes)") { |path| @job[:bad] = side_file(path) }
        parser.on("--late FILE", "Write late events' lines there") { |path| @job[:late] = side_file(path) }
      end

      def output_options(parser)
        parser.on("--output FILE", "-o", "Write results there (default or -: standard output)") do |path|
          @job[:output] = file_name(path) unless path == "-"
        end
        parser.on("--output-format FORMAT", %w[jsonl csv table],
                  "jsonl, csv or table (default: table on a terminal, else jsonl)") do |format|
          @formats[:output] = format
        end
        parser.on("--state FILE", "Checkpoint there, and resume from it") do |path|
          # Each checkpoint is written beside it first, then renamed over it.
          @job[:state] = side_file(path)
          @job[:state_scratch] = "#{path}.tmp"
        end
        parser.on("--quiet", "-q", "No progress line") { @quiet = true }
        parser.on("--help", "-h", "This help") { @help = true }
        parser.on("--version", "The version") { @version = true }
      end

      # A file written beside the results (late or bad lines, the state):
      # standard output carries the results.
      def side_file(path)
        raise OptionParser::InvalidArgument, "#{path} (standard output is for the results; name a file)" if path == "-"

        file_name(path)
      end

      # A file the run writes: an empty name names none (and --state '' would
      # otherwise pass as the current directory's parent, writable).
      def file_name(path)
        raise OptionParser::InvalidArgument, "(an empty name: name a file)" if path.empty?

        path
      end

      # A field to read: every event has a name, so an empty one is a slip.
      def field_name(name)
        raise OptionParser::InvalidArgument, "(an empty field name)" if name.empty?

        name
      end

      def aggregates(list)
        raise OptionParser::InvalidArgument, "(an empty list: give at least one aggregator)" if list.empty?

        list.split(",", -1).map do |item|
          kind, field = item.strip.split(":", 2)
          need = AGGREGATORS[kind] or
            raise OptionParser::InvalidArgument, "#{item} (aggregators: #{AGGREGATORS.keys.join(", ")})"
          raise OptionParser::InvalidArgument, "#{item} (#{kind} needs a field: #{kind}:FIELD)" if need == :required && !field
          raise OptionParser::InvalidArgument, "#{item} (empty field)" if field && field.empty?

          [kind, field, field ? "#{kind}_#{field}" : kind]
        end
      end

      def require_lengths
        required = { "sessions" => %i[gap], "tumbling" => %i[size], "hopping" => %i[size advance] }
        missing = required.fetch(@subcommand).reject { |name| @job.key?(name) }
        raise OptionParser::MissingArgument, missing.map { |name| "--#{name}" }.join(" ") unless missing.empty?

        @job[:advance] = @job[:size] if @subcommand == "tumbling"
        @job[:gap] ||= NO_TIME
        @job[:size] ||= NO_TIME
        @job[:advance] ||= NO_TIME
        check_lengths
      end

      # What can be told before the time field's unit is known: lengths in
      # the same kind of unit compare directly.
      def check_lengths
        lengths = @subcommand == "sessions" ? %i[gap] : %i[size advance]
        lengths.each { |name| raise OptionParser::InvalidArgument, "--#{name} must be positive" if @job[name].last.zero? }
        return if @subcommand == "sessions"

        size, advance, offset = @job.values_at(:size, :advance, :offset)
        raise OptionParser::InvalidArgument, "--advance is longer than --size" if comparable(advance, size) && advance.last > size.last
        return unless comparable(offset, advance) && offset.last >= advance.last

        raise OptionParser::InvalidArgument, "--offset must be shorter than #{@subcommand == "tumbling" ? "--size" : "--advance"}"
      end

      def comparable(one, other) = one.first == other.first

      def sources(files)
        files.map do |file|
          next [nil, @formats[:input] || "jsonl"] if file == "-"
          raise OptionParser::InvalidArgument, "#{file} (cannot read it)" if File.directory?(file) || !File.readable?(file)

          [file, @formats[:input] || format_named_by(file)]
        end
      end

      # CSV for a name ending in `.csv`, gzipped or not, in either case.
      def format_named_by(file)
        File.basename(file).downcase.delete_suffix(".gz").end_with?(".csv") ? "csv" : "jsonl"
      end

      # Refuses a file written to that is also read or written otherwise: an
      # output would empty an input before it is read, and two writers would
      # interleave.
      def check_files
        files = @job[:sources].map { |path, _format| path ? [path, path, false] : [$stdin, "standard input", false] }
        @job.values_at(:output, :late, :bad, :state).compact.each { |path| files << [path, path, true] }
        if (scratch = @job[:state_scratch])
          files << [scratch, "#{scratch} (where --state #{@job[:state]} is written first)", true]
        end
        files.combination(2) do |(one, one_named, one_written), (other, other_named, other_written)|
          next unless (one_written || other_written) && same_file?(one, other)

          raise OptionParser::InvalidArgument, "#{one_named} and #{other_named} are the same file"
        end
      end

      # Refuses a file the run could not write, found out before any input
      # is read rather than when the run first writes it (the state, a
      # second in).
      def check_writable
        @job.values_at(:output, :late, :bad, :state).compact.each do |path|
          next if writable?(path, replaced: path == @job[:state])

          raise OptionParser::InvalidArgument, "#{path} (cannot write there)"
        end
      end

      # Whether `path` can be written: a file that exists, in place; a new
      # one where its links lead; one replaced by renaming another over it
      # (as the state is) beside the name as given, since a rename replaces
      # a link rather than write through it. The kernel is asked about the
      # directory as the path names it, so that one it cannot enter
      # (`missing/../x`, or no search permission) is refused here, as
      # opening the file would be, not midway through the run; so is a name
      # ending in a slash, which only a directory has, or one longer than a
      # directory entry holds.
      def writable?(path, replaced:)
        return false if File.directory?(path)
        return File.writable?(path) if File.exist?(path) && !replaced

        target = followed(path)
        return false if target.nil? || target.end_with?(File::SEPARATOR)
        return false if File.basename(target).bytesize > NAME_MAX

        directory = File.dirname(replaced ? path : target)
        File.directory?(directory) && File.writable?(directory) && File.executable?(directory)
      rescue SystemCallError
        false
      end

      # Whether two paths (or standard input, an IO) name one file, made yet
      # or not.
      def same_file?(one, other)
        return stdin_file?(one) && File.identical?(one, other) if one.is_a?(IO)
        return same_file?(other, one) if other.is_a?(IO)
        return true if resolved(one) == resolved(other)

        File.exist?(one) && File.exist?(other) && File.identical?(one, other)
      end

      # Where `path` leads once links are followed as the kernel follows
      # them (`..` after a link goes up from where the link leads), for a
      # file not made yet too: its directory's real path, and its name after
      # the links the name itself leads through (one may lead nowhere yet).
      # Bytes, since a directory's name need not be UTF-8. A directory that
      # cannot be resolved (missing, a loop, not to be entered) leaves the
      # path as written, made absolute.
      def resolved(path)
        path = followed(path) || path
        File.join(File.realpath(File.dirname(path)).b, File.basename(path).b)
      rescue SystemCallError
        File.absolute_path(path.b, Dir.pwd.b)
      end

      # `path` after the links its name leads through, each target read
      # from the link's directory as written; nil past MAX_LINKS, where the
      # kernel gives up too (a loop).
      def followed(path)
        MAX_LINKS.times do
          return path unless File.symlink?(path)

          target = File.readlink(path)
          path = target.start_with?("/") ? target : File.join(File.dirname(path), target)
        end
        path unless File.symlink?(path)
      end

      # Whether standard input is read from a file (`< file`) rather than a
      # pipe or a terminal.
      def stdin_file?(io)
        io.stat.file?
      rescue IOError, SystemCallError
        false
      end

      # Refuses a table kept in a file a resumed run must continue exactly: a
      # table sizes its columns by its first rows.
      def check_resumable_format
        return unless @job[:output_format] == "table" && @job[:state] && @job[:output]

        raise OptionParser::InvalidArgument,
              "--output-format table with --state and --output (a resumed run could not go on with a table's " \
              "columns exactly; use jsonl or csv)"
      end

      # Refuses two columns of one name, which a JSON object cannot hold.
      def check_columns
        times = @subcommand == "sessions" ? %w[first last] : %w[start end]
        columns = @job[:keys] + times + @job[:aggregates].map(&:last)
        repeated = columns.tally.select { |_, count| count > 1 }.keys
        raise OptionParser::InvalidArgument, "two columns named #{repeated.join(", ")}" unless repeated.empty?
      end

      # What a resumed run must share with the run that saved its state: a
      # line per option the subcommand takes, under the name the command
      # line gives it, so that a refused resume can say which differ. Files
      # are compared as absolute paths, however they were written.
      def fingerprint
        resumed = @job.slice(*RESUMED_WITH.keys).except(*(ALL_LENGTHS - LENGTHS.fetch(@subcommand)))
        resumed[:sources] = resumed[:sources].map { |path, format| [path && File.absolute_path(path), format] }
        resumed[:output] &&= File.absolute_path(resumed[:output])
        resumed.map { |name, value| "#{RESUMED_WITH.fetch(name)}=#{JSON.generate(value)}" }.join("\n")
      end
    end
  end
end
