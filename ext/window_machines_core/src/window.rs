use crate::error::{Error, Result};

/// The most windows [`sliding`] will place one timestamp in.
pub const MAX_SLIDING_WINDOWS: usize = 32;

/// [`MAX_SLIDING_WINDOWS`] for arithmetic on timestamps.
const SLIDING_CAP: u64 = MAX_SLIDING_WINDOWS as u64;

/// A half-open window of event time: `start` is inside, `end` is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Window {
    pub start: u64,
    pub end: u64,
}

impl Window {
    /// The window `[start, start + length)`, refused when its end does not fit.
    fn starting_at(start: u64, length: u64) -> Result<Window> {
        let end = start
            .checked_add(length)
            .ok_or(Error::EndOverflow { start, length })?;
        Ok(Window { start, end })
    }
}

/// The one tumbling window of `size` that holds `timestamp`.
pub fn tumbling(timestamp: u64, size: u64) -> Result<Window> {
    Tumbling::new(size)?.window(timestamp)
}

/// Tumbling windows of one size, checked once, for cutting many timestamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tumbling {
    size: u64,
}

impl Tumbling {
    /// Windows of `size`, which must be positive.
    pub fn new(size: u64) -> Result<Tumbling> {
        if size == 0 {
            return Err(Error::ZeroLength { name: "size" });
        }
        Ok(Tumbling { size })
    }

    /// The window that holds `timestamp`; its end must fit.
    pub fn window(self, timestamp: u64) -> Result<Window> {
        Window::starting_at(timestamp - timestamp % self.size, self.size)
    }
}

/// Every sliding window of `width`, started at each multiple of `slide`, that
/// holds `timestamp`, newest (largest start) first.
///
/// The ratio `ceil(width / slide)` is checked for every timestamp, even one
/// near zero that sits in fewer windows, so that a configuration is either
/// valid or not, independent of the data.
pub fn sliding(timestamp: u64, width: u64, slide: u64) -> Result<SlidingWindows> {
    if width == 0 {
        return Err(Error::ZeroLength { name: "width" });
    }
    if slide == 0 {
        return Err(Error::ZeroLength { name: "slide" });
    }
    // ceil(width / slide) > 32 exactly when width > 32 * slide; a product
    // past u64::MAX means the ratio is small. No division on the hot path.
    if slide
        .checked_mul(SLIDING_CAP)
        .is_some_and(|limit| width > limit)
    {
        return Err(Error::TooManyWindows { width, slide });
    }
    let newest = timestamp / slide;
    let newest_start = newest * slide;
    let offset = timestamp - newest_start;
    let remaining = if offset < width {
        // Starts newest_start, newest_start - slide, ... while the window
        // still reaches past timestamp and the start does not go below zero.
        let older_by_width = (width - offset - 1) / slide;
        older_by_width.min(newest) + 1
    } else {
        // A timestamp in a hole between windows (slide wider than width).
        0
    };
    if remaining > 0 {
        // The newest window has the largest end: if it fits, they all do.
        Window::starting_at(newest_start, width)?;
    }
    Ok(SlidingWindows {
        next_start: newest_start,
        width,
        slide,
        // At most ceil(width / slide), checked above to be at most 32.
        remaining: usize::try_from(remaining).unwrap_or(MAX_SLIDING_WINDOWS),
    })
}

/// The windows [`sliding`] found, newest first; computed lazily, allocates nothing.
#[derive(Debug, Clone)]
pub struct SlidingWindows {
    next_start: u64,
    width: u64,
    slide: u64,
    remaining: usize,
}

impl Iterator for SlidingWindows {
    type Item = Window;

    fn next(&mut self) -> Option<Window> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let window = Window {
            start: self.next_start,
            end: self.next_start + self.width,
        };
        // Wraps only after the last window, when next_start is never read again.
        self.next_start = self.next_start.wrapping_sub(self.slide);
        Some(window)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for SlidingWindows {}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: u64 = u64::MAX;

    fn w(start: u64, end: u64) -> Window {
        Window { start, end }
    }

    fn all(timestamp: u64, width: u64, slide: u64) -> Vec<Window> {
        sliding(timestamp, width, slide).unwrap().collect()
    }

    #[test]
    fn tumbling_is_half_open() {
        assert_eq!(tumbling(12, 10), Ok(w(10, 20)));
        assert_eq!(tumbling(19, 10), Ok(w(10, 20)));
        assert_eq!(tumbling(20, 10), Ok(w(20, 30)));
        assert_eq!(tumbling(0, 10), Ok(w(0, 10)));
    }

    #[test]
    fn tumbling_rejects_zero_size() {
        assert_eq!(tumbling(5, 0), Err(Error::ZeroLength { name: "size" }));
    }

    #[test]
    fn tumbling_at_the_top_of_the_domain() {
        assert_eq!(
            tumbling(MAX, 1),
            Err(Error::EndOverflow {
                start: MAX,
                length: 1
            })
        );
        assert_eq!(tumbling(MAX - 1, 1), Ok(w(MAX - 1, MAX)));
        assert_eq!(tumbling(MAX - 1, MAX), Ok(w(0, MAX)));
        assert!(tumbling(MAX, MAX).is_err());
        // 2**64-1 is divisible by 5, so the top timestamp starts a window
        // of 5 that cannot end; one below it sits in a window that can.
        assert!(tumbling(MAX, 5).is_err());
        assert_eq!(tumbling(MAX - 1, 5), Ok(w(MAX - 5, MAX)));
        assert!(tumbling(MAX - 1, 2).is_err());
    }

    #[test]
    fn sliding_examples_newest_first() {
        assert_eq!(all(12, 10, 5), vec![w(10, 20), w(5, 15)]);
        assert_eq!(all(7, 10, 5), vec![w(5, 15), w(0, 10)]);
    }

    #[test]
    fn sliding_hole_is_empty() {
        assert_eq!(all(12, 1, 5), vec![]);
        assert_eq!(all(10, 1, 5), vec![w(10, 11)]);
    }

    #[test]
    fn sliding_never_starts_below_zero() {
        assert_eq!(all(0, 10, 5), vec![w(0, 10)]);
        assert_eq!(all(3, 32, 1).len(), 4);
    }

    #[test]
    fn sliding_width_not_a_multiple_of_slide() {
        assert_eq!(all(20, 7, 3), vec![w(18, 25), w(15, 22)]);
        assert_eq!(all(21, 7, 3), vec![w(21, 28), w(18, 25), w(15, 22)]);
    }

    #[test]
    fn sliding_rejects_zero_lengths_width_first() {
        assert_eq!(
            sliding(1, 0, 0).unwrap_err(),
            Error::ZeroLength { name: "width" }
        );
        assert_eq!(
            sliding(1, 5, 0).unwrap_err(),
            Error::ZeroLength { name: "slide" }
        );
    }

    #[test]
    fn sliding_caps_the_ratio_for_every_timestamp() {
        assert_eq!(all(1000, 32, 1).len(), 32);
        assert_eq!(all(1000, 320, 10).len(), 32);
        assert_eq!(all(1000, 311, 10).len(), 32);
        let refused = Error::TooManyWindows {
            width: 33,
            slide: 1,
        };
        assert_eq!(sliding(0, 33, 1).unwrap_err(), refused);
        assert_eq!(sliding(1000, 33, 1).unwrap_err(), refused);
        assert!(sliding(0, 321, 10).is_err());
        assert!(sliding(0, MAX, 1).is_err());
        assert_eq!(all(MAX - 1, MAX, MAX), vec![w(0, MAX)]);
    }

    #[test]
    fn sliding_refuses_windows_ending_past_the_domain() {
        assert_eq!(
            sliding(MAX, 2, 1).unwrap_err(),
            Error::EndOverflow {
                start: MAX,
                length: 2
            }
        );
        assert_eq!(all(MAX - 1, 1, 1), vec![w(MAX - 1, MAX)]);
        // In a hole nothing is returned, so nothing can overflow.
        let slide = (MAX - 1) / 2;
        assert_eq!(all(MAX, 1, slide), vec![]);
    }
}
