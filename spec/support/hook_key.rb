# frozen_string_literal: true

module WindowMachinesSpec
  # A key that runs a block from its `hash` (and `on_eql` from its `eql?`),
  # hashing and comparing by name otherwise: user code a tracker meets in
  # the middle of a call.
  class HookKey
    attr_reader :name

    def initialize(name, on_eql: nil, &on_hash)
      @name = name
      @on_hash = on_hash
      @on_eql = on_eql
    end

    def hash
      @on_hash&.call
      [self.class, @name].hash
    end

    def eql?(other)
      @on_eql&.call
      other.instance_of?(self.class) && other.name == @name
    end
    alias == eql?

    def inspect = "#<#{self.class.name.split('::').last} #{@name}>"
  end

  # A HookKey every other instance collides with, so a lookup runs eql?.
  class CollidingKey < HookKey
    def hash
      super
      42
    end
  end
end
