//! Lines of one input, plain or gzip-compressed (told by its first bytes),
//! with where each ends, so a resumed run can skip what was consumed.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use flate2::Crc;

use crate::gzip_members::{GzipMembers, GZIP_MAGIC};

const CHUNK: usize = 1 << 20;
const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// A line as read: its text, its number (from 1), and the bytes of the
/// input consumed through it.
pub struct LineRead<'a> {
    pub text: &'a [u8],
    pub number: u64,
    pub offset: u64,
    /// The CRC-32 of the input through it.
    pub crc: u32,
}

/// Reads lines out of large chunks, without a copy per line.
pub struct Lines {
    reader: Box<dyn Read>,
    buffer: Vec<u8>,
    /// The unread part of `buffer`.
    start: usize,
    end: usize,
    eof: bool,
    /// Bytes of the (decompressed) input consumed through the last line.
    pub offset: u64,
    /// The number of the last line returned, from 1.
    pub line: u64,
    /// The buffer index of the next line break, once searched for.
    newline: Option<usize>,
    /// A CRC-32 of the bytes consumed, so a resumed run can tell whether
    /// what it skips is what was read before; `None` when no run will
    /// resume from this one.
    crc: Option<Crc>,
    /// Bytes read from the file itself, for progress.
    compressed: Option<Arc<AtomicU64>>,
}

/// Counts the bytes a reader has given, for a progress line.
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buffer)?;
        self.count.fetch_add(read as u64, Ordering::Relaxed);
        Ok(read)
    }
}

impl Lines {
    /// The file at `path`, or standard input for `None`.
    pub fn open(path: Option<&Path>) -> io::Result<Lines> {
        let count = Arc::new(AtomicU64::new(0));
        let raw: Box<dyn Read> = match path {
            Some(path) => Box::new(File::open(path)?),
            None => Box::new(io::stdin()),
        };
        let mut counting = Counting {
            inner: raw,
            count: Arc::clone(&count),
        };
        // A pipe may give the first bytes one at a time (a slow writer):
        // enough of them to tell gzip by its magic, whatever each read gives.
        let read = read_at_least(&mut counting, GZIP_MAGIC.len())?;
        if read.starts_with(&GZIP_MAGIC) {
            let whole = BufReader::with_capacity(CHUNK, io::Cursor::new(read).chain(counting));
            return Ok(Lines::reading(
                Box::new(GzipMembers::new(whole)),
                CHUNK,
                Some(count),
                Vec::new(),
            ));
        }
        // Plain text goes straight into the lines' buffer, starting with
        // what was read to look at it: a BufReader would copy every byte of
        // the input once more.
        Ok(Lines::reading(Box::new(counting), CHUNK, Some(count), read))
    }

    /// Lines from `reader`, which `read` was already read from: it becomes
    /// the start of the buffer.
    fn reading(
        reader: Box<dyn Read>,
        chunk: usize,
        compressed: Option<Arc<AtomicU64>>,
        read: Vec<u8>,
    ) -> Lines {
        let end = read.len();
        let mut buffer = read;
        buffer.resize(chunk.max(end), 0);
        Lines {
            reader,
            buffer,
            start: 0,
            end,
            eof: false,
            offset: 0,
            line: 0,
            newline: None,
            crc: Some(Crc::new()),
            compressed,
        }
    }

    /// Bytes read from the file so far (compressed, for a gzip file).
    #[must_use]
    pub fn bytes_read(&self) -> u64 {
        self.compressed
            .as_ref()
            .map_or(0, |count| count.load(Ordering::Relaxed))
    }

    /// Whether the next line is already read, so that getting it will not
    /// wait for the input.
    pub fn has_line_ready(&mut self) -> bool {
        self.next_newline().is_some()
    }

    /// Where the next line break is in the buffer, searched for once per
    /// line whoever asks first.
    fn next_newline(&mut self) -> Option<usize> {
        if self.newline.is_none() {
            self.newline =
                memchr::memchr(b'\n', &self.buffer[self.start..self.end]).map(|at| self.start + at);
        }
        self.newline
    }

    /// The next line, without its line break, with its number and where
    /// it ends; `None` at the end.
    pub fn next_line(&mut self) -> io::Result<Option<LineRead<'_>>> {
        loop {
            let line_end = match self.next_newline() {
                Some(newline) => Some((newline, newline + 1)),
                None if self.eof && self.start < self.end => Some((self.end, self.end)),
                None if self.eof => return Ok(None),
                None => None,
            };
            if let Some((end, next)) = line_end {
                let mut line_start = self.start;
                // A byte order mark some editors write is not part of the
                // first line.
                if self.offset == 0 && self.buffer[line_start..end].starts_with(BYTE_ORDER_MARK) {
                    line_start += BYTE_ORDER_MARK.len();
                }
                self.offset += (next - self.start) as u64;
                if let Some(crc) = &mut self.crc {
                    crc.update(&self.buffer[self.start..next]);
                }
                self.start = next;
                self.newline = None;
                self.line += 1;
                return Ok(Some(LineRead {
                    text: &self.buffer[line_start..end],
                    number: self.line,
                    offset: self.offset,
                    crc: self.crc(),
                }));
            }
            self.fill()?;
        }
    }

    /// Reads more, keeping the unread part; grows the buffer for a line
    /// longer than it.
    fn fill(&mut self) -> io::Result<()> {
        if self.start > 0 {
            self.buffer.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buffer.len() {
            self.buffer.resize(self.buffer.len() * 2, 0);
        }
        let read = loop {
            match self.reader.read(&mut self.buffer[self.end..]) {
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                result => break result?,
            }
        };
        if read == 0 {
            self.eof = true;
        }
        self.end += read;
        Ok(())
    }

    /// Skips to where a checkpoint says the input was consumed: `offset`
    /// bytes, the last of them ending line `line`.
    pub fn skip_to(&mut self, offset: u64, line: u64) -> io::Result<()> {
        while self.offset < offset {
            let wanted = offset - self.offset;
            let buffered = (self.end - self.start) as u64;
            if buffered == 0 {
                if self.eof {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the input is shorter than the state file says was read",
                    ));
                }
                self.fill()?;
                continue;
            }
            // At most what is buffered, which is a usize.
            let step = usize::try_from(wanted.min(buffered)).unwrap_or(usize::MAX);
            if let Some(crc) = &mut self.crc {
                crc.update(&self.buffer[self.start..self.start + step]);
            }
            self.start += step;
            self.newline = None;
            self.offset += step as u64;
        }
        self.line = line;
        Ok(())
    }

    /// The CRC-32 of what was consumed so far (0 without a checksum).
    #[must_use]
    pub fn crc(&self) -> u32 {
        self.crc.as_ref().map_or(0, Crc::sum)
    }

    /// The same lines without the checksum, which costs about a tenth of
    /// reading them, for a run no other will resume from.
    #[must_use]
    pub fn without_checksum(mut self) -> Lines {
        self.crc = None;
        self
    }
}

/// What `reader` gives until it has given `wanted` bytes or ended, read
/// in one chunk's room.
fn read_at_least(reader: &mut impl Read, wanted: usize) -> io::Result<Vec<u8>> {
    let mut read = vec![0; CHUNK];
    let mut len = 0;
    while len < wanted {
        match reader.read(&mut read[len..]) {
            Ok(0) => break,
            Ok(more) => len += more,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    read.truncate(len);
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(bytes: &[u8]) -> Lines {
        Lines::reading(
            Box::new(io::Cursor::new(bytes.to_vec())),
            4,
            None,
            Vec::new(),
        )
    }

    fn text(lines: &mut Lines) -> Option<Vec<u8>> {
        lines.next_line().unwrap().map(|line| line.text.to_vec())
    }

    #[test]
    fn splits_lines_longer_than_the_buffer() {
        let mut lines = lines_of(b"first line\n\nlast");
        assert_eq!(text(&mut lines), Some(b"first line".to_vec()));
        assert_eq!(text(&mut lines), Some(b"".to_vec()));
        assert_eq!(text(&mut lines), Some(b"last".to_vec()));
        assert_eq!((lines.offset, lines.line), (16, 3));
        assert_eq!(text(&mut lines), None);
    }

    #[test]
    fn drops_a_byte_order_mark() {
        let mut lines = lines_of(b"\xEF\xBB\xBFa,b\n\xEF\xBB\xBF");
        assert_eq!(text(&mut lines), Some(b"a,b".to_vec()));
        assert_eq!(text(&mut lines), Some(b"\xEF\xBB\xBF".to_vec()));
        assert_eq!(lines.offset, 10);
    }

    #[test]
    fn skips_to_a_recorded_offset() {
        let mut read = lines_of(b"one\ntwo\nthree\n");
        read.next_line().unwrap();
        let crc = read.next_line().unwrap().unwrap().crc;
        let mut lines = lines_of(b"one\ntwo\nthree\n");
        lines.skip_to(8, 2).unwrap();
        assert_eq!(lines.crc(), crc);
        assert_eq!(text(&mut lines), Some(b"three".to_vec()));
        assert_eq!(lines.line, 3);
        assert!(lines_of(b"one\n").skip_to(9, 1).is_err());
    }
}
