//! Where results, late lines and bad lines go: a file or standard output,
//! counting what it wrote so a checkpoint can record where the file ends.

use std::error::Error;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;

/// How often an output that takes nothing (a FIFO with no reader yet)
/// is tried again.
const RETRY: Duration = Duration::from_millis(20);

/// Asked while waiting on an output: whether the wait may go on (for a run
/// asked to stop, not for long).
pub type MayWait<'a> = &'a mut dyn FnMut() -> bool;

/// The error of a wait on an output given up on: it was not taking what it
/// was given, and the run was asked to stop.
#[derive(Debug)]
struct GaveUp;

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("stopped while the output was not being read")
    }
}

impl Error for GaveUp {}

/// The error of a wait given up on.
#[must_use]
pub fn gave_up() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, GaveUp)
}

/// Whether `error` is a wait on an output given up on.
#[must_use]
pub fn is_gave_up(error: &io::Error) -> bool {
    error.get_ref().is_some_and(|inner| inner.is::<GaveUp>())
}

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
    /// emptied when there is none. A FIFO waits for its reader while
    /// `may_wait` allows.
    pub fn file(path: &Path, length: Option<u64>, may_wait: MayWait) -> io::Result<Sink> {
        let length = length.unwrap_or(0);
        // The caller names the file.
        let shorter = || {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "shorter than the state file says it was; remove the state file to start over",
            )
        };
        // A file a checkpoint says held something is not made anew, to be
        // refused and left behind empty.
        let mut file = open_for_writing(path, length == 0, may_wait).map_err(|error| {
            if error.kind() == io::ErrorKind::NotFound && length > 0 {
                shorter()
            } else {
                error
            }
        })?;
        let metadata = file.metadata()?;
        // A device or a pipe (/dev/null, /dev/stdout) is written as it is.
        if metadata.is_file() {
            if metadata.len() < length {
                return Err(shorter());
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

/// Opens `path` for writing, made if missing. Opening a FIFO blocks until a
/// reader opens it, and a signal does not end that wait (the call is made
/// again): a FIFO is opened without blocking, tried again until it has a
/// reader or `may_wait` says no, then written to as any file is.
fn open_for_writing(path: &Path, create: bool, may_wait: MayWait) -> io::Result<File> {
    let fifo = fs::metadata(path).is_ok_and(|metadata| metadata.file_type().is_fifo());
    if !fifo {
        // Cut back to the checkpoint's length by the caller, not emptied.
        return OpenOptions::new()
            .write(true)
            .create(create)
            .truncate(false)
            .open(path);
    }
    loop {
        match OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
        {
            Ok(file) => {
                blocking(&file)?;
                return Ok(file);
            }
            // No reader yet.
            Err(error) if error.raw_os_error() == Some(libc::ENXIO) => {
                if !may_wait() {
                    return Err(gave_up());
                }
                thread::sleep(RETRY);
            }
            Err(error) => return Err(error),
        }
    }
}

/// Makes writes to `file` wait again (as the other outputs' do) once its
/// reader is there.
fn blocking(file: &File) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is `file`'s open descriptor, which `file` keeps open
    // for both calls; F_GETFL and F_SETFL read and set its status flags
    // and touch no memory of ours.
    let changed = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
    };
    if changed {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
