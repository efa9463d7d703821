# frozen_string_literal: true

module WindowMachines
  # The gem's version, following Semantic Versioning.
  VERSION = "0.1.0"
end
