# frozen_string_literal: true

module WindowMachines
  # The native class gains Enumerable here: each yields the held sessions,
  # oldest first, as [first, last].
  class Sessions
    include Enumerable

    # Iterates over a snapshot taken when the call starts, so the block may
    # insert or take without disturbing the iteration.
    def each(&block)
      return enum_for(:each) { size } unless block

      to_a.each(&block)
      self
    end
  end
end
