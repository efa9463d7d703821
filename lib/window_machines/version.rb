# frozen_string_literal: true

module WindowMachines
  VERSION = "0.1.0"
end
