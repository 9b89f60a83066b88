//! `Digest`: the 32-byte blake3 value that names both step keys and blobs.
//!
//! One type for both keeps the store ignorant of how the engine builds its
//! keys: a step key is whatever 32 bytes the engine hashed, a blob is named by
//! the blake3 of its content.

use std::fmt;
use std::str::FromStr;

/// A 32-byte blake3 digest, shown as 64 lowercase hex characters.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 32]);

impl Digest {
    /// The digest's length in bytes.
    pub const LEN: usize = 32;

    /// Wraps 32 raw bytes (for example a step key the engine computed).
    pub const fn from_bytes(bytes: [u8; 32]) -> Digest {
        Digest(bytes)
    }

    /// The blake3 digest of `content`: the name of a blob.
    pub fn of(content: &[u8]) -> Digest {
        Digest(*blake3::hash(content).as_bytes())
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The full 64-character lowercase hex form.
    pub fn to_hex(&self) -> String {
        self.to_string()
    }

    /// The first `n` hex characters, for messages (`n` is capped at 64).
    pub fn short_hex(&self, n: usize) -> String {
        let mut hex = self.to_hex();
        hex.truncate(n);
        hex
    }
}

impl From<blake3::Hash> for Digest {
    fn from(hash: blake3::Hash) -> Digest {
        Digest(*hash.as_bytes())
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

/// The error of parsing a [`Digest`] from hex.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a 64-character lowercase hex digest: `{0}`")]
pub struct ParseDigestError(String);

impl FromStr for Digest {
    type Err = ParseDigestError;

    /// Parses exactly 64 lowercase hex characters. Uppercase is refused so
    /// that one digest has one file name in the blob store.
    fn from_str(s: &str) -> Result<Digest, ParseDigestError> {
        let bad = || ParseDigestError(s.to_owned());
        if s.len() != 64 {
            return Err(bad());
        }
        let mut bytes = [0u8; 32];
        for (i, pair) in s.as_bytes().chunks_exact(2).enumerate() {
            bytes[i] = (nibble(pair[0]).ok_or_else(bad)? << 4) | nibble(pair[1]).ok_or_else(bad)?;
        }
        Ok(Digest(bytes))
    }
}

fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        let d = Digest::of(b"hello");
        let hex = d.to_hex();
        assert_eq!(hex.len(), 64);
        assert_eq!(hex, blake3::hash(b"hello").to_hex().as_str());
        assert_eq!(hex.parse::<Digest>().unwrap(), d);
        assert_eq!(d.short_hex(12), &hex[..12]);
    }

    #[test]
    fn parse_refuses_bad_hex() {
        let hex = Digest::of(b"x").to_hex();
        assert!(hex[..63].parse::<Digest>().is_err());
        assert!(hex.to_uppercase().parse::<Digest>().is_err());
        assert!(format!("{}g", &hex[..63]).parse::<Digest>().is_err());
    }
}
