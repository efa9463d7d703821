//! An event's key as bytes the tracker holds: each key field as a tag, a
//! length and its bytes, so that the text "1" and the number 1 differ and
//! no two keys run together. Hashed here; the core only indexes.

use crate::json_fields::write_string;

const NULL: u8 = 0;
const TEXT: u8 = 1;
const JSON: u8 = 2;

/// Builds one event's key, reusing its buffer.
#[derive(Debug, Default)]
pub struct KeyWriter {
    bytes: Vec<u8>,
}

impl KeyWriter {
    pub fn clear(&mut self) {
        self.bytes.clear();
    }

    /// A field that is absent or null.
    pub fn null(&mut self) {
        self.bytes.push(NULL);
    }

    /// A text field, decoded.
    pub fn text(&mut self, text: &[u8]) {
        self.part(TEXT, text);
    }

    /// Any other JSON value, as written.
    pub fn json(&mut self, json: &[u8]) {
        self.part(JSON, json);
    }

    fn part(&mut self, tag: u8, bytes: &[u8]) {
        self.bytes.push(tag);
        // A line longer than 4 GiB is not read, so a field fits.
        let length = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        self.bytes.extend_from_slice(&length.to_le_bytes());
        self.bytes.extend_from_slice(bytes);
    }

    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// A key's fields, each its tag and bytes.
pub struct Fields<'a> {
    rest: &'a [u8],
}

/// Reads `key`'s fields; [`is_key`] says whether it is one.
#[must_use]
pub fn fields(key: &[u8]) -> Fields<'_> {
    Fields { rest: key }
}

impl<'a> Iterator for Fields<'a> {
    type Item = (u8, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let (&tag, after) = self.rest.split_first()?;
        if tag == NULL {
            self.rest = after;
            return Some((NULL, &after[..0]));
        }
        let parsed = (|| {
            if tag != TEXT && tag != JSON {
                return None;
            }
            let length =
                usize::try_from(u32::from_le_bytes(after.get(..4)?.try_into().ok()?)).ok()?;
            Some((after.get(4..4 + length)?, &after[4 + length..]))
        })();
        match parsed {
            Some((bytes, rest)) => {
                self.rest = rest;
                Some((tag, bytes))
            }
            None => {
                // Not a key: stop, and leave the rest for is_key to see.
                None
            }
        }
    }
}

/// Whether `key` is `count` well-formed fields (a checkpoint is untrusted).
#[must_use]
pub fn is_key(key: &[u8], count: usize) -> bool {
    let mut fields = fields(key);
    fields.by_ref().count() == count && fields.rest.is_empty()
}

/// Writes a key field as JSON.
pub fn write_json(field: (u8, &[u8]), out: &mut Vec<u8>) {
    match field {
        (TEXT, text) => write_string(text, out),
        (JSON, json) => out.extend_from_slice(json),
        _ => out.extend_from_slice(b"null"),
    }
}

/// A key field as text: text as it is, JSON as written; `None` for null.
#[must_use]
pub fn text(field: (u8, &[u8])) -> Option<&[u8]> {
    match field {
        (TEXT | JSON, bytes) => Some(bytes),
        _ => None,
    }
}

/// A 64-bit hash of `bytes` whose top bits are as good as its bottom ones
/// (the core's index files by the top bits).
#[must_use]
pub fn hash(bytes: &[u8]) -> u64 {
    const MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut state = 0x243F_6A88_85A3_08D3_u64 ^ (bytes.len() as u64).wrapping_mul(MULTIPLIER);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        state = (state ^ u64::from_le_bytes(word))
            .wrapping_mul(MULTIPLIER)
            .rotate_left(29);
    }
    let mut tail = [0; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    state = (state ^ u64::from_le_bytes(tail)).wrapping_mul(MULTIPLIER);
    // Murmur3's finalizer: every input bit reaches every output bit.
    state ^= state >> 33;
    state = state.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    state ^= state >> 33;
    state = state.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    state ^ (state >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_back_field_by_field() {
        let mut key = KeyWriter::default();
        key.text(b"u1");
        key.null();
        key.json(b"17");
        assert_eq!(
            fields(key.bytes()).collect::<Vec<_>>(),
            vec![(TEXT, &b"u1"[..]), (NULL, &b""[..]), (JSON, &b"17"[..])]
        );
        assert!(is_key(key.bytes(), 3));
        assert!(!is_key(key.bytes(), 2));
        assert!(!is_key(&[TEXT, 9, 0, 0, 0, b'x'], 1));
        assert!(!is_key(&[7], 1));
    }

    #[test]
    fn text_and_numbers_are_different_keys() {
        let (mut text, mut number) = (KeyWriter::default(), KeyWriter::default());
        text.text(b"1");
        number.json(b"1");
        assert_ne!(text.bytes(), number.bytes());
    }

    #[test]
    fn hashes_spread_into_the_top_bits() {
        let tops: std::collections::HashSet<u64> = (0..10_000)
            .map(|n| hash(format!("u{n}").as_bytes()) >> 48)
            .collect();
        assert!(tops.len() > 8_000, "{}", tops.len());
    }
}
