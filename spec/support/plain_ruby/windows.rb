# frozen_string_literal: true

module PlainRuby
  module_function

  def tumbling(timestamp, size)
    Check.integer("timestamp", timestamp)
    Check.integer("size", size)
    Check.positive("size", size)
    start = timestamp - (timestamp % size)
    [start, window_end(start, size)]
  end

  def sliding(timestamp, width, slide)
    Check.integer("timestamp", timestamp)
    Check.integer("width", width)
    Check.integer("slide", slide)
    Check.positive("width", width)
    Check.positive("slide", slide)
    if width > slide * MAX_SLIDING_WINDOWS
      raise WindowMachines::CapacityError,
            "width #{width} with slide #{slide} puts a timestamp in up to #{(width + slide - 1) / slide} windows, " \
            "more than #{MAX_SLIDING_WINDOWS}"
    end

    newest = timestamp - (timestamp % slide)
    # The oldest start still reaching timestamp, rounded up to a multiple of slide.
    oldest = [timestamp - width + 1, 0].max
    oldest += -oldest % slide
    return [] if newest < oldest

    # The newest window has the largest end: if it fits, they all do.
    window_end(newest, width)
    newest.step(oldest, -slide).map { |start| [start, start + width] }
  end

  def window_end(start, length)
    finish = start + length
    raise WindowMachines::RangeError, "window end #{start} + #{length} is past 2**64-1" if finish > MAX

    finish
  end
  private_class_method :window_end
end
