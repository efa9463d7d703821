# frozen_string_literal: true

module WindowMachines
  # Equality for the classes whose whole state is their checkpoint
  # ({KeyedSessions}, {VersionedTable} and the {Aggregating} windows): the
  # same class, and checkpoints
  # (`marshal_dump`) that are `eql?`, so keys and values compare as Hash
  # keys do: a table holding the key `1` and one holding `1.0` differ, as
  # they would file later calls differently.
  module SameCheckpoint
    # @param other [Object]
    # @return [Boolean] true if `other` is of the same class with an `eql?`
    #   checkpoint.
    def ==(other)
      # Itself first, as an Array does: a NaN aggregate is a new Float in
      # each checkpoint, and NaN is not eql? to NaN.
      equal?(other) || (other.instance_of?(self.class) && other.marshal_dump.eql?(marshal_dump))
    end
    alias eql? ==

    # @return [Integer] a hash code consistent with {#eql?}.
    def hash
      [self.class, marshal_dump].hash
    end
  end
end
