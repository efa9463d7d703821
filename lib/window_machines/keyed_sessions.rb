# frozen_string_literal: true

module WindowMachines
  # The native class gains its iteration and value equality here.
  class KeyedSessions
    include Enumerable

    # Yields key, first and last of every held session, in the order they
    # close, over a snapshot taken when the call starts.
    def each(&block)
      return enum_for(:each) { size } unless block

      to_a.each { |key, first, last| yield key, first, last }
      self
    end

    # Hands over every closed session, in the order they closed, removing
    # each from the tracker as it is yielded.
    def each_closed
      return enum_for(:each_closed) unless block_given?

      while (closed = take_closed)
        yield(*closed)
      end
      self
    end

    def ==(other)
      other.instance_of?(self.class) && other.marshal_dump == marshal_dump
    end
    alias eql? ==

    def hash
      [self.class, marshal_dump].hash
    end
  end
end
