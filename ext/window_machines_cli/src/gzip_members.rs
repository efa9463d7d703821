//! A gzip file's members one after another, as `gzip -d` reads them: zero
//! bytes after the last member (padding from tape or `dd`) end the file,
//! and anything else after it is named for what it is.

use std::io::{self, BufRead, Read};

use flate2::bufread::GzDecoder;

pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

pub struct GzipMembers<R: BufRead> {
    /// The member being read; `None` once the file has ended.
    member: Option<GzDecoder<R>>,
}

impl<R: BufRead> GzipMembers<R> {
    /// Reads `file`, which starts with a gzip member.
    pub fn new(file: R) -> Self {
        GzipMembers {
            member: Some(GzDecoder::new(file)),
        }
    }
}

impl<R: BufRead> Read for GzipMembers<R> {
    fn read(&mut self, into: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(member) = self.member.as_mut() else {
                return Ok(0);
            };
            let read = member.read(into)?;
            if read > 0 || into.is_empty() {
                return Ok(read);
            }
            let Some(member) = self.member.take() else {
                return Ok(0);
            };
            let mut rest = member.into_inner();
            let padded = skip_zeros(&mut rest)?;
            let next = rest.fill_buf()?;
            if next.is_empty() {
                return Ok(0);
            }
            if padded || !next.starts_with(&GZIP_MAGIC[..next.len().min(2)]) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "data after the last gzip member that is not gzip",
                ));
            }
            self.member = Some(GzDecoder::new(rest));
        }
    }
}

/// Consumes the zero bytes at the front of `reader`: whether there were any.
fn skip_zeros(reader: &mut impl BufRead) -> io::Result<bool> {
    let mut skipped = false;
    loop {
        let bytes = reader.fill_buf()?;
        let zeros = bytes.iter().take_while(|&&byte| byte == 0).count();
        if zeros == 0 {
            return Ok(skipped);
        }
        reader.consume(zeros);
        skipped = true;
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::write::GzEncoder;
    use flate2::Compression;

    use super::*;

    fn gzip(text: &str) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(text.as_bytes()).unwrap();
        encoder.finish().unwrap()
    }

    fn read(file: &[u8]) -> io::Result<String> {
        let mut text = String::new();
        GzipMembers::new(file).read_to_string(&mut text)?;
        Ok(text)
    }

    #[test]
    fn members_follow_each_other_and_zero_padding_ends_the_file() {
        let mut file = [gzip("a\n"), gzip("b\n")].concat();
        assert_eq!(read(&file).unwrap(), "a\nb\n");
        file.extend([0; 700]);
        assert_eq!(read(&file).unwrap(), "a\nb\n");
    }

    #[test]
    fn anything_else_after_the_last_member_is_refused_as_such() {
        for tail in [&b"x"[..], b"\0\0x", b"\0\0\x1f\x8b"] {
            let file = [gzip("a\n"), tail.to_vec()].concat();
            let refused = read(&file).unwrap_err();
            assert!(
                refused.to_string().contains("not gzip"),
                "{tail:?}: {refused}"
            );
        }
        let cut = gzip("a\n");
        assert!(read(&cut[..cut.len() - 1]).is_err());
    }
}
