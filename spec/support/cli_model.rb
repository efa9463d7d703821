# frozen_string_literal: true

require "json"

module WindowMachinesSpec
  # What `window_machines` (README › From the shell) should write for a stream of
  # events, in plain Ruby and written for obviousness: every window or
  # session keeps its events and every aggregate is recomputed from them.
  #
  #   model = CliModel.new(:sessions, gap: 5, lag: 2, keys: ["user"], aggs: "count,sum:v")
  #   events.each { |event| model.add(event) } # parsed line (a Hash), its timestamp, the line as read
  #   model.finish
  #   model.records     # Hashes, as the JSONL output reads back, in closing order
  #   model.late_lines  # the late events' lines, in input order
  #
  # The rules, from the contract:
  # - stream time S is the largest timestamp seen so far, over all keys,
  #   this event's included (bad lines are never given to the model);
  # - sessions: an event is late iff ts < S - lag; an on-time event joins
  #   (and so merges) every open session of its key with
  #   first - gap <= ts <= last + gap (the gap is inclusive); a session closes
  #   once last + gap < S - lag;
  # - windows [start, end): a window closes once end + grace <= S - lag; an
  #   event is late iff every window it belongs to is closed by that rule, and
  #   otherwise goes into every one of its windows that is still open;
  # - records come out as they close, earliest end (sessions: last) first;
  #   what is still open at the end of input comes out then, in the same order.
  #   Records with equal ends are ordered by key here; the contract leaves
  #   that order open, so compare through Command.canonical.
  # - aggregates read a dotted field path (missing reads nil); count:F,
  #   sum, min, max and mean skip nil; first, last and collect keep it and
  #   order by timestamp, equal timestamps in arrival (line) order; mean is
  #   the exact sum over the count as a Float; min/max keep the earlier
  #   arrival on a tie (the command too, within a tumbling window; across
  #   merged sessions and a hopping window's panes it keeps the earlier
  #   session's or pane's, as the README says, so the random streams here
  #   never tie an Integer with an equal Float); sum of nothing is 0,
  #   mean/min/max of nothing nil.
  class CliModel
    attr_reader :records, :late_lines

    def initialize(kind, keys: [], aggs: "count", lag: 0, gap: nil, size: nil, advance: nil, grace: 0, offset: 0)
      raise ArgumentError, "unknown kind #{kind}" unless %i[sessions tumbling hopping].include?(kind)

      @kind = kind
      @keys = keys
      @aggs = aggs.split(",").map { |spec| spec.split(":", 2) }
      @lag = lag
      @gap = gap
      @size = size
      @advance = kind == :tumbling ? size : advance
      @grace = grace
      @offset = offset
      @stream_time = nil
      @arrivals = 0
      @open = {} # sessions: key => [{first:, last:, events:}]; windows: [key, start] => {start:, end:, events:}
      @records = []
      @late_lines = []
    end

    # One parsed event: `data` is the line's object, `ts` its timestamp in
    # ticks, `line` the line as read (for --late).
    def add(data, ts, line)
      @arrivals += 1
      @stream_time = [@stream_time, ts].compact.max
      key = @keys.map { |field| self.class.dig(data, field) }
      event = [ts, @arrivals, data]
      accepted = @kind == :sessions ? add_to_session(key, event) : add_to_windows(key, event)
      @late_lines << line unless accepted
      close(@stream_time - @lag)
      accepted
    end

    def finish
      close(nil)
      self
    end

    def self.dig(data, path)
      path.split(".").reduce(data) { |value, name| value.is_a?(Hash) ? value[name] : nil }
    end

    private

    def add_to_session(key, event)
      ts = event.first
      return false if ts < @stream_time - @lag

      sessions = (@open[key] ||= [])
      touching, others = sessions.partition { |session| ts.between?(session[:first] - @gap, session[:last] + @gap) }
      events = touching.flat_map { |session| session[:events] } + [event]
      times = events.map(&:first)
      @open[key] = others + [{ first: times.min, last: times.max, events: events }]
      true
    end

    def add_to_windows(key, event)
      ts = event.first
      open = windows_of(ts).reject { |_start, finish| closed?(finish, @stream_time - @lag) }
      return false if open.empty?

      open.each do |start, finish|
        window = (@open[[key, start]] ||= { key: key, start: start, end: finish, events: [] })
        window[:events] << event
      end
      true
    end

    # Every [start, end) holding ts: starts at offset + k * advance.
    def windows_of(ts)
      newest = ts - ((ts - @offset) % @advance)
      newest.step(by: -@advance).take_while { |start| start + @size > ts }.map { |start| [start, start + @size] }
    end

    def closed?(finish, threshold) = !threshold.nil? && finish + @grace <= threshold

    # Closes (all, when threshold is nil) what the threshold S - lag closes.
    def close(threshold)
      closing =
        if @kind == :sessions
          @open.flat_map do |key, sessions|
            done, kept = sessions.partition { |session| threshold.nil? || session[:last] + @gap < threshold }
            @open[key] = kept
            done.map { |session| [session[:last], key, session_record(key, session)] }
          end
        else
          done = @open.select { |_, window| threshold.nil? || closed?(window[:end], threshold) }
          done.each_key { |id| @open.delete(id) }
          done.values.map { |window| [window[:end], window[:key], window_record(window)] }
        end
      closing.sort_by { |finish, key, _| [finish, JSON.generate(key)] }.each { |*, record| @records << record }
    end

    def key_columns(key) = @keys.zip(key).to_h

    def session_record(key, session)
      key_columns(key).merge("first" => session[:first], "last" => session[:last]).merge(aggregates(session[:events]))
    end

    def window_record(window)
      key_columns(window[:key]).merge("start" => window[:start], "end" => window[:end]).merge(aggregates(window[:events]))
    end

    def aggregates(events)
      @aggs.to_h do |name, field|
        inputs = events.sort_by { |_, arrival, _| arrival }
                       .map { |ts, arrival, data| [ts, arrival, field && self.class.dig(data, field)] }
        [field ? "#{name}_#{field}" : name, aggregate(name, field, inputs)]
      end
    end

    def aggregate(name, field, inputs)
      values = inputs.map(&:last)
      in_time_order = inputs.sort_by { |ts, arrival, _| [ts, arrival] }.map(&:last)
      numbers = values.compact
      case name
      when "count" then field ? numbers.size : inputs.size
      when "sum" then numbers.reduce(0, :+)
      when "mean" then numbers.empty? ? nil : numbers.reduce(0, :+).fdiv(numbers.size)
      when "min" then numbers.reduce { |held, value| value < held ? value : held }
      when "max" then numbers.reduce { |held, value| value > held ? value : held }
      when "first" then in_time_order.first
      when "last" then in_time_order.last
      when "collect" then in_time_order
      else raise ArgumentError, "unknown aggregate #{name}"
      end
    end
  end
end
