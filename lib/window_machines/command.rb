# frozen_string_literal: true

require "window_machines"
require_relative "command/options"

module WindowMachines
  # The `window_machines` command: sessions and windows per key over event
  # files, from the shell (`exe/window_machines`; README › From the shell).
  # Ruby reads the options into a job; the extension reads, windows and
  # writes every event ({.run_job}).
  #
  # @!method self.run_job(job)
  #   Runs a job built by {Options#parse}, defined by the extension. Signals
  #   that arrive meanwhile are raised once the state is saved (or, when the
  #   output is not being read, after two seconds, the state saved before
  #   standing).
  #   @param job [Hash]
  #   @return [Hash] the counts (`:events`, `:late`, `:outside`, `:bad`, `:results`,
  #     `:first_bad`, `:resumed`), or `{failure:, message:}` where failure
  #     is `:usage`, `:bad_input`, `:bad_line` (the state saved),
  #     `:output` or `:broken_pipe`
  module Command
    # The subcommands, one per kind of window.
    SUBCOMMANDS = Options::SUMMARIES.keys.freeze
    # What `window_machines --help` prints.
    USAGE = <<~TEXT
      Usage: window_machines SUBCOMMAND [options] [FILE...]

      Per key sessions and windows over JSON Lines or CSV event files, by each event's own time.

      Subcommands:
      #{Options::SUMMARIES.map { |name, summary| format("  %-10s %s", name, summary) }.join("\n")}

      window_machines SUBCOMMAND --help for its options; --version for the version.
    TEXT
    # Exit status of a finished run.
    SUCCESS = 0
    # Exit status when the input holds data the run cannot take.
    BAD_INPUT = 1
    # Exit status for a command line that does not make sense.
    USAGE_ERROR = 2

    # Runs the command line `argv`.
    # @param argv [Array<String>]
    # @return [Integer] the exit status
    def self.main(argv)
      # Names and paths are read as UTF-8 whatever the locale says: under
      # LANG=C Ruby hands them over as another encoding.
      argv = argv.map { |argument| String.new(argument, encoding: Encoding::UTF_8) }
      unreadable = argv.find { |argument| !argument.valid_encoding? }
      return usage_error("#{unreadable.inspect} is not valid UTF-8", USAGE) if unreadable

      subcommand, *rest = argv
      case subcommand
      when "--help", "-h" then say(USAGE)
      when "--version" then say("window_machines #{VERSION}")
      when *SUBCOMMANDS then run(subcommand, rest)
      else usage_error(subcommand ? "unknown subcommand #{subcommand}" : "no subcommand", USAGE)
      end
    end

    def self.run(subcommand, argv)
      options = Options.new(subcommand)
      begin
        job = options.parse(argv, terminal: $stdout.tty?, progress: $stderr.tty?)
      rescue OptionParser::ParseError => e
        return usage_error(e.message, options.usage)
      end
      return say(options.usage) if options.help
      return say("window_machines #{VERSION}") if options.version

      finish(job, run_job(job))
    rescue SignalException => e
      stopped(e, job)
    end

    def self.finish(job, outcome)
      case outcome[:failure]
      when nil then report(job, outcome)
      when :usage then usage_error(outcome[:message], "")
      when :broken_pipe then die_of_broken_pipe
      else
        warn "window_machines: #{outcome[:message]}"
        if job[:state] && outcome[:failure] == :bad_line
          warn "window_machines: state saved to #{job[:state]}; run again to resume (--skip-bad to skip the line)"
        end
        BAD_INPUT
      end
    end

    def self.report(job, outcome)
      late, outside, bad = outcome.values_at(:late, :outside, :bad)
      written = (" written to #{job[:late]}" if job[:late])
      warn "window_machines: #{plural(late, "late event")}#{written}" if late.positive?
      warn "window_machines: #{plural(outside, "event")} before the first window (--offset)#{written}" if outside.positive?
      if bad.positive?
        warn "window_machines: #{plural(bad, "bad line")} skipped (first: #{outcome[:first_bad]})" \
             "#{"; written to #{job[:bad]}" if job[:bad]}"
      end
      SUCCESS
    end

    # A run stopped while its output was not being read keeps the state
    # saved before, if there was one.
    def self.stopped(signal, job)
      state = job&.dig(:state)
      warn "window_machines: stopped by SIG#{Signal.signame(signal.signo)}" \
           "#{"; state saved to #{state}" if state && File.exist?(state)}"
      128 + signal.signo
    end

    def self.say(text)
      puts text
      SUCCESS
    end

    def self.usage_error(message, usage)
      warn "window_machines: #{message}"
      warn usage.lines.first unless usage.empty?
      USAGE_ERROR
    end

    # Ends the process as the tools of a pipeline do when their reader
    # leaves: killed by SIGPIPE.
    def self.die_of_broken_pipe
      Signal.trap("PIPE", "SYSTEM_DEFAULT")
      Process.kill("PIPE", Process.pid)
      BAD_INPUT
    end

    def self.plural(count, noun) = "#{count} #{noun}#{"s" unless count == 1}"

    private_class_method :run, :finish, :report, :stopped, :say, :usage_error, :die_of_broken_pipe, :plural
  end
end
