# frozen_string_literal: true

module PlainRuby
  # WindowMachines::VersionedTable in plain Ruby, written to be obviously
  # right rather than fast: a Hash of key => Array of [timestamp, value]
  # sorted by timestamp, where a deleted version holds TOMBSTONE. Expiry is
  # recomputed from scratch over every key after each accepted put or
  # delete. The differential spec checks the gem against it.
  #
  # Rules (Kafka Streams' versioned store, KIP-889 / KIP-914), with
  # cutoff = stream_time - history_retention, saturating at 0:
  # - a put or delete with timestamp < cutoff is late: counted, then raised,
  #   dropped or handed to the on_late callable;
  # - a version whose valid_to (the next version's timestamp) is <= cutoff
  #   is dropped, and so is a latest tombstone at or below cutoff; a key
  #   with nothing left is released;
  # - a lookup below cutoff sees only the latest version.
  class VersionedTable
    include Enumerable

    # Stands for a deleted version; no caller can pass it as a value.
    TOMBSTONE = Object.new
    def TOMBSTONE.inspect = "TOMBSTONE"
    TOMBSTONE.freeze

    CHECKPOINT_FIELDS = %w[history_retention stream_time late_count versions].freeze
    MARSHAL_FIELDS = (CHECKPOINT_FIELDS + %w[on_late]).freeze

    attr_reader :history_retention, :stream_time, :late_count, :on_late

    def self.from_h(checkpoint, on_late: :raise)
      table = allocate
      table.send(:restore, checkpoint, CHECKPOINT_FIELDS, on_late)
      table
    end

    def self.check_on_late(on_late)
      return on_late if %i[raise drop].include?(on_late)
      return on_late if !on_late.is_a?(Symbol) && on_late.respond_to?(:call)

      raise WindowMachines::ArgumentError, "on_late must be :raise, :drop or respond to call, got #{on_late.inspect}"
    end

    def initialize(history_retention, on_late: :raise)
      @history_retention = Check.integer("history_retention", history_retention)
      @on_late = self.class.check_on_late(on_late)
      @stream_time = nil
      @late_count = 0
      @versions = {}
    end

    def initialize_copy(other)
      super
      @versions = @versions.transform_values { |list| list.map(&:dup) }
    end

    # stream_time - history_retention, at least 0; nil with no stream time.
    def cutoff
      @stream_time && [@stream_time - @history_retention, 0].max
    end

    def put(key, value, timestamp)
      Check.not_frozen(self)
      Check.integer("timestamp", timestamp)
      if late?(timestamp)
        refuse_late(key, value, timestamp)
        return false
      end

      store(key, timestamp, value)
      list = @versions.fetch(key)
      newer = list.find { |at, _| at > timestamp }
      newer&.first
    end

    def delete(key, timestamp)
      Check.not_frozen(self)
      Check.integer("timestamp", timestamp)
      if late?(timestamp)
        refuse_late(key, nil, timestamp)
        return nil
      end

      before = version(key, timestamp)
      store(key, timestamp, TOMBSTONE)
      before
    end

    def get(key, timestamp = nil)
      version(key, timestamp)&.first
    end

    # A nil timestamp (or none) asks for the latest version.
    def version(key, timestamp = nil)
      Check.integer("timestamp", timestamp) unless timestamp.nil?
      list = @versions[key]
      return nil if list.nil?

      index =
        if timestamp.nil?
          list.size - 1
        elsif timestamp < cutoff
          list.size - 1 if list.last.first <= timestamp
        else
          list.rindex { |at, _| at <= timestamp }
        end
      return nil if index.nil? || TOMBSTONE.equal?(list[index][1])

      [list[index][1], list[index][0], list[index + 1]&.first]
    end

    def history(key)
      entries(@versions[key] || [])
    end

    def each(&block)
      return enum_for(:each) unless block

      snapshot = @versions.flat_map { |key, list| entries(list).map { |entry| [key, *entry] } }
      snapshot.each { |key, value, valid_from, valid_to| yield key, value, valid_from, valid_to }
      self
    end

    def size
      @versions.size
    end

    def version_count
      @versions.each_value.sum(&:size)
    end

    def to_h
      @versions.each_key do |key|
        problem = json_problem(key)
        next if problem.nil?

        raise WindowMachines::TypeError,
              "key #{key.inspect} (#{key.class}) has no exact JSON form (#{problem}); use Marshal"
      end
      checkpoint
    end

    def marshal_dump
      checkpoint.merge(on_late: @on_late)
    end

    def marshal_load(data)
      Check.not_frozen(self)
      restore(data, MARSHAL_FIELDS, nil)
    end

    def ==(other)
      other.instance_of?(self.class) && other.marshal_dump.eql?(marshal_dump)
    end
    alias eql? ==

    def hash
      [self.class, marshal_dump].hash
    end

    def inspect
      "#<#{self.class} history_retention=#{@history_retention} stream_time=#{@stream_time.inspect} " \
        "keys=#{size} versions=#{version_count}>"
    end

    private

    def late?(timestamp)
      !@stream_time.nil? && timestamp < cutoff
    end

    def refuse_late(key, value, timestamp)
      @late_count += 1
      case @on_late
      when :raise
        watermark = cutoff - 1
        error = WindowMachines::LateEventError.new(
          "late event: timestamp #{timestamp} is at or below the watermark #{watermark}"
        )
        error.instance_variable_set(:@timestamp, timestamp)
        error.instance_variable_set(:@watermark, watermark)
        error.instance_variable_set(:@key, key)
        raise error
      when :drop then nil
      else @on_late.call(key, value, timestamp, @stream_time)
      end
    end

    # Puts [timestamp, value] in the key's list (replacing one at the same
    # timestamp), moves the stream time, then expires.
    def store(key, timestamp, value)
      list = (@versions[key] ||= [])
      index = list.index { |at, _| at >= timestamp } || list.size
      if list[index]&.first == timestamp
        list[index] = [timestamp, value]
      else
        list.insert(index, [timestamp, value])
      end
      @stream_time = [@stream_time, timestamp].compact.max
      expire
    end

    def expire
      limit = cutoff
      @versions.each_value { |list| list.replace(list.reject.with_index { |entry, i| expired?(list, i, limit) }) }
      @versions.delete_if { |_, list| list.empty? }
    end

    def expired?(list, index, limit)
      at, value = list[index]
      newer = list[index + 1]
      newer ? newer.first <= limit : TOMBSTONE.equal?(value) && at <= limit
    end

    def entries(list)
      list.each_with_index.filter_map do |(at, value), index|
        [value, at, list[index + 1]&.first] unless TOMBSTONE.equal?(value)
      end
    end

    def checkpoint
      versions = @versions.flat_map do |key, list|
        list.map { |at, value| TOMBSTONE.equal?(value) ? [key, at] : [key, at, value] }
      end
      { history_retention: @history_retention, stream_time: @stream_time, late_count: @late_count,
        versions: versions }
    end

    # Why `key` would not come back from JSON as an equal key, or nil.
    def json_problem(key, depth = 64)
      case key
      when nil, true, false, Integer then nil
      else
        if key.instance_of?(String)
          exact = key.ascii_only? || (key.encoding == Encoding::UTF_8 && key.valid_encoding?)
          exact ? nil : "not valid UTF-8 nor ASCII"
        elsif key.instance_of?(Array)
          return "its Arrays nest too deep or contain themselves" if depth.zero?

          key.each { |entry| (problem = json_problem(entry, depth - 1)) and return problem }
          nil
        else
          "not a String, Integer, true, false, nil or Array of them"
        end
      end
    end

    # Reads a checkpoint as untrusted input; changes nothing unless all of
    # it is valid. on_late: nil takes it from the checkpoint (marshal_load).
    def restore(input, names, on_late)
      fields = read_fields(input, names)
      retention = Check.integer("history_retention", fields["history_retention"])
      stream_time = fields["stream_time"].nil? ? nil : Check.integer("stream_time", fields["stream_time"])
      late_count = Check.integer("late_count", fields["late_count"])
      on_late = self.class.check_on_late(on_late.nil? ? fields["on_late"] : on_late)
      versions = read_versions(fields["versions"])
      check_versions(versions, retention, stream_time)

      @history_retention = retention
      @stream_time = stream_time
      @late_count = late_count
      @on_late = on_late
      @versions = versions
    end

    def read_fields(input, names)
      unless input.is_a?(Hash)
        raise WindowMachines::TypeError, "checkpoint must be a Hash, got #{input.inspect} (#{input.class})"
      end

      fields = {}
      input.each do |name, value|
        text = name.to_s if name.is_a?(Symbol) || name.is_a?(String)
        raise WindowMachines::ArgumentError, "checkpoint has an unknown key #{name.inspect}" unless names.include?(text)
        raise WindowMachines::ArgumentError, "checkpoint gives #{name.inspect} twice" if fields.key?(text)

        fields[text] = value
      end
      missing = names.find { |name| !fields.key?(name) }
      raise WindowMachines::ArgumentError, "checkpoint is missing #{missing}" if missing

      fields
    end

    def read_versions(versions)
      unless versions.is_a?(Array)
        raise WindowMachines::TypeError, "versions must be an Array, got #{versions.inspect} (#{versions.class})"
      end

      table = {}
      previous = nil
      versions.each_with_index do |entry, index|
        unless entry.is_a?(Array) && [2, 3].include?(entry.size)
          raise WindowMachines::TypeError,
                "versions[#{index}] must be [key, timestamp, value] or [key, timestamp], got #{entry.inspect}"
        end

        key, at = entry
        Check.integer("versions[#{index}] timestamp", at)
        value = entry.size == 3 ? entry[2] : TOMBSTONE
        list = table[key]
        if list.nil?
          list = (table[key] = [])
        elsif !list.equal?(previous)
          raise WindowMachines::ArgumentError, "versions of key #{key.inspect} are not given together"
        elsif at <= list.last.first
          raise WindowMachines::ArgumentError, "versions of key #{key.inspect} must have increasing timestamps"
        end
        list << [at, value]
        previous = list
      end
      table
    end

    def check_versions(table, retention, stream_time)
      return if table.empty?
      raise WindowMachines::ArgumentError, "stream_time is nil but versions are given" if stream_time.nil?

      limit = [stream_time - retention, 0].max
      table.each do |key, list|
        if list.last.first > stream_time
          raise WindowMachines::ArgumentError, "a version of key #{key.inspect} is above the stream_time"
        end
        if list.each_index.any? { |index| expired?(list, index, limit) }
          raise WindowMachines::ArgumentError, "a version of key #{key.inspect} has already expired"
        end
      end
    end
  end
end
