//! Where results, late lines and bad lines go: a file or standard output,
//! counting what it wrote so a checkpoint can record where the file ends.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A buffered output that knows its length.
pub struct Sink {
    writer: BufWriter<Box<dyn Write + Send>>,
    written: u64,
    path: Option<PathBuf>,
    /// For files of input lines: the CSV header the rows at the end are
    /// under (`None`: empty, or a JSON line last).
    csv_header: Option<Vec<u8>>,
}

impl Sink {
    /// Standard output.
    #[must_use]
    pub fn stdout() -> Sink {
        Sink {
            writer: BufWriter::with_capacity(1 << 16, Box::new(io::stdout())),
            written: 0,
            path: None,
            csv_header: None,
        }
    }

    /// The file at `path`, cut back to `length` bytes (a checkpoint's), or
    /// emptied when there is none.
    pub fn file(path: &Path, length: Option<u64>) -> io::Result<Sink> {
        let mut options = OpenOptions::new();
        options.write(true).create(true);
        let mut file: File = options.open(path)?;
        let length = length.unwrap_or(0);
        let metadata = file.metadata()?;
        // A device or a pipe (/dev/null, /dev/stdout) is written as it is.
        if metadata.is_file() {
            if metadata.len() < length {
                // The caller names the file.
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "shorter than the state file says it was; remove the state file to start \
                     over",
                ));
            }
            file.set_len(length)?;
            io::Seek::seek(&mut file, io::SeekFrom::Start(length))?;
        }
        Ok(Sink {
            writer: BufWriter::with_capacity(1 << 16, Box::new(file)),
            written: length,
            path: Some(path.to_path_buf()),
            csv_header: None,
        })
    }

    pub fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.writer
            .write_all(bytes)
            .map_err(|error| self.named(&error))?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// `error` with the name of the output it happened on, of the same kind
    /// (a closed pipe is still told apart).
    fn named(&self, error: &io::Error) -> io::Error {
        let name = self.path.as_ref().map_or_else(
            || "standard output".into(),
            |path| path.display().to_string(),
        );
        io::Error::new(error.kind(), format!("{name}: {error}"))
    }

    /// Bytes in the file so far; `None` for standard output, whose length
    /// means nothing to a resumed run.
    #[must_use]
    pub fn length(&self) -> Option<u64> {
        self.path.as_ref().map(|_| self.written)
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.written == 0
    }

    #[must_use]
    pub fn csv_header(&self) -> Option<&[u8]> {
        self.csv_header.as_deref()
    }

    pub fn set_csv_header(&mut self, header: Option<&[u8]>) {
        self.csv_header = header.map(<[u8]>::to_vec);
    }

    /// Hands what is buffered to the operating system, so it survives the
    /// process being killed.
    pub fn flush(&mut self) -> io::Result<()> {
        self.writer.flush().map_err(|error| self.named(&error))
    }
}
