//
// Copyright (c) 2011-2019 Canonical Ltd
// Copyright (c) 2006-2010 Kirill Simonov
//
// Permission is hereby granted, free of charge, to any person obtaining a copy of
// this software and associated documentation files (the "Software"), to deal in
// the Software without restriction, including without limitation the rights to
// use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
// of the Software, and to permit persons to whom the Software is furnished to do
// so, subject to the following conditions:
//
// The above copyright notice and this permission notice shall be included in all
// copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
// IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
// FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
// AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
// LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
// OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
// SOFTWARE.

//! The reader: input bytes to the UTF-8 character buffer the scanner reads,
//! with go-yaml's BOM/encoding detection and its exact UTF-8/UTF-16
//! validation errors ("invalid leading UTF-8 octet", "control characters are
//! not allowed", ...). A port of go-yaml v3's `readerc.go` (MIT/Apache-2.0,
//! Canonical Ltd / Kirill Simonov).
//!
//! go-yaml decodes its input lazily, 512 raw bytes at a time, into a working
//! buffer it shifts on every refill. Two observable behaviours depend on
//! that: a decoding error surfaces only when the scanner asks for a
//! character of the chunk that contains it (so a bad byte in a later
//! document does not fail an earlier one), and go-yaml's `is_bom` looks at
//! the start of the working buffer, i.e. at the character where the last
//! refill happened. This port decodes the whole input up front (followed by
//! zero padding, so `buffer[pos + k]` lookahead is always in bounds and reads
//! NUL past the end, as go-yaml's EOF handling does) and emulates go-yaml's
//! decode frontier chunk by chunk, so errors and refill points happen at
//! exactly the same scanner positions.

use super::parser::Parser;
use super::token::{Encoding, ErrorType};

/// go-yaml's `input_raw_buffer_size`: the raw input is read in chunks of
/// this many bytes.
const INPUT_RAW_BUFFER_SIZE: usize = 512;

/// Zero bytes after the decoded input. The scanner looks at most 512 bytes
/// (comment lookahead) plus one character past its position.
pub(crate) const BUFFER_PADDING: usize = 1024;

/// A decoding error and where go-yaml would report it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReaderError {
    /// The problem text.
    pub(crate) problem: &'static str,
    /// Byte offset in the raw input.
    pub(crate) offset: usize,
    /// The offending value, or -1.
    pub(crate) value: i64,
    /// Characters decoded before the bad character.
    pub(crate) chars_before: usize,
}

/// The decoded input and go-yaml's chunking of it.
struct Decoded {
    /// Decoded UTF-8 followed by zero padding.
    buffer: Vec<u8>,
    /// Cumulative character counts at the end of each raw chunk that
    /// decodes cleanly.
    chunk_ends: Vec<usize>,
    /// The error in the chunk after the last clean one, if any.
    error: Option<ReaderError>,
}

// Byte order marks.
const BOM_UTF8: &[u8] = b"\xef\xbb\xbf";
const BOM_UTF16LE: &[u8] = b"\xff\xfe";
const BOM_UTF16BE: &[u8] = b"\xfe\xff";

impl Parser {
    /// Set the reader error and return false.
    pub(crate) fn yaml_parser_set_reader_error(
        &mut self,
        problem: &'static str,
        offset: usize,
        value: i64,
    ) -> bool {
        self.error = ErrorType::Reader;
        self.problem = problem.into();
        self.problem_offset = offset;
        self.problem_value = value;
        false
    }

    /// Set the input (`yaml_parser_set_input_string`) and decode it
    /// (`yaml_parser_determine_encoding` and the decoding half of
    /// `yaml_parser_update_buffer`, run over the whole input at once).
    pub(crate) fn set_input(&mut self, input: &[u8]) {
        // Determine the encoding.
        let (encoding, bom_len) = if input.starts_with(BOM_UTF16LE) {
            (Encoding::Utf16Le, 2)
        } else if input.starts_with(BOM_UTF16BE) {
            (Encoding::Utf16Be, 2)
        } else if input.starts_with(BOM_UTF8) {
            (Encoding::Utf8, 3)
        } else {
            (Encoding::Utf8, 0)
        };
        self.encoding = encoding;

        // Fast path: valid UTF-8 with only allowed characters decodes to
        // itself.
        let decoded = if encoding == Encoding::Utf8 && utf8_all_allowed(&input[bom_len..]) {
            decode_valid_utf8(input, bom_len)
        } else {
            decode_chunked(input, encoding, bom_len)
        };
        self.buffer = decoded.buffer;
        self.chunk_ends = decoded.chunk_ends;
        self.reader_error = decoded.error;
        // yaml_parser_determine_encoding reads until it has 3 bytes or EOF.
        self.eof_early = input.len() < 3;
        self.next_chunk = 0;
        self.frontier = 0;
        self.refill_pos = 0;
    }

    /// Ensure that the buffer contains at least `length` characters
    /// (`yaml_parser_update_buffer`, with the `unread < length` check of its
    /// callers folded in).
    #[inline]
    pub(crate) fn yaml_parser_update_buffer(&mut self, length: usize) -> bool {
        if self.mark.index + length <= self.frontier {
            return true;
        }
        self.yaml_parser_refill_buffer(length)
    }

    /// The refilling half of `yaml_parser_update_buffer`: advance go-yaml's
    /// decode frontier by whole raw chunks until `length` characters are
    /// unread, appending one NUL at EOF.
    #[cold]
    fn yaml_parser_refill_buffer(&mut self, length: usize) -> bool {
        // Move the unread characters to the beginning of the buffer.
        self.refill_pos = self.buffer_pos;
        loop {
            if self.next_chunk < self.chunk_ends.len() {
                // Decode the raw buffer.
                self.frontier = self.chunk_ends[self.next_chunk];
                self.next_chunk += 1;
                if self.eof_early && self.next_chunk == self.chunk_ends.len() {
                    // On EOF, put NUL into the buffer and return.
                    self.frontier += 1;
                    return true;
                }
            } else if let Some(err) = self.reader_error {
                // go-yaml has decoded the chunk up to the bad character;
                // later requests that stay before it succeed.
                self.frontier = err.chars_before;
                return self.yaml_parser_set_reader_error(err.problem, err.offset, err.value);
            } else {
                // On EOF, put NUL into the buffer and return.
                self.frontier += 1;
                return true;
            }
            if self.mark.index + length <= self.frontier {
                return true;
            }
        }
    }

    /// go-yaml's `is_bom(parser.buffer, parser.buffer_pos)`, which (a bug
    /// kept for fidelity) looks at the start of the working buffer: the
    /// character where the last refill happened.
    #[inline]
    pub(crate) fn is_bom_at_buffer_start(&self) -> bool {
        super::chars::is_bom(&self.buffer[self.refill_pos..])
    }
}

/// The fast path: `input[bom_len..]` is valid, allowed UTF-8, so the buffer
/// is a copy; only go-yaml's chunk boundaries need computing.
fn decode_valid_utf8(input: &[u8], bom_len: usize) -> Decoded {
    let len = input.len();
    let raw = &input[bom_len..];
    let mut buffer = Vec::with_capacity(raw.len() + BUFFER_PADDING);
    buffer.extend_from_slice(raw);
    buffer.resize(raw.len() + BUFFER_PADDING, 0);

    let mut chunk_ends = Vec::with_capacity(len / INPUT_RAW_BUFFER_SIZE + 2);
    let mut pos = bom_len;
    let mut end = len.min(INPUT_RAW_BUFFER_SIZE);
    let mut chars = 0usize;
    if len > 0 {
        loop {
            // Complete characters only: leave a split one for the next chunk.
            let mut q = end;
            if q < len {
                while q > pos && input[q] & 0xC0 == 0x80 {
                    q -= 1;
                }
            }
            chars += input[pos..q].iter().filter(|&&b| b & 0xC0 != 0x80).count();
            chunk_ends.push(chars);
            pos = q;
            if end == len {
                break;
            }
            end = len.min(pos + INPUT_RAW_BUFFER_SIZE);
        }
    }
    Decoded {
        buffer,
        chunk_ends,
        error: None,
    }
}

/// Whether `raw` is valid UTF-8 made only of characters go-yaml's reader
/// accepts (#x9 | #xA | #xD | [#x20-#x7E] | #x85 | [#xA0-#xD7FF] |
/// [#xE000-#xFFFD] | [#x10000-#x10FFFF]).
fn utf8_all_allowed(raw: &[u8]) -> bool {
    if std::str::from_utf8(raw).is_err() {
        return false;
    }
    let n = raw.len();
    let mut i = ascii_allowed_prefix(raw);
    while i < n {
        let c = raw[i];
        if c < 0x80 {
            if (c < 0x20 && c != b'\t' && c != b'\n' && c != b'\r') || c == 0x7F {
                return false;
            }
            i += 1;
            continue;
        }
        if c == 0xC2 {
            let d = raw[i + 1];
            if (0x80..=0x9F).contains(&d) && d != 0x85 {
                return false;
            }
        } else if c == 0xEF && raw[i + 1] == 0xBF && (raw[i + 2] == 0xBE || raw[i + 2] == 0xBF) {
            return false;
        }
        i += super::chars::width(c);
    }
    true
}

/// The length of the longest prefix of whole 32-byte blocks holding only
/// printable ASCII, tab, line feed and carriage return: nearly every KRM
/// file is all of that, and a block checked without branching per byte
/// vectorizes.
fn ascii_allowed_prefix(raw: &[u8]) -> usize {
    const BLOCK: usize = 32;
    let disallowed = |b: u8| b >= 0x7F || (b < 0x20 && b != b'\t' && b != b'\n' && b != b'\r');
    raw.chunks_exact(BLOCK)
        .take_while(|block| !block.iter().fold(false, |bad, &b| bad | disallowed(b)))
        .count()
        * BLOCK
}

/// Decode the whole input exactly as go-yaml's reader would, chunk by chunk,
/// up to the first error.
fn decode_chunked(input: &[u8], encoding: Encoding, bom_len: usize) -> Decoded {
    let len = input.len();
    let mut buffer: Vec<u8> = Vec::with_capacity(len + BUFFER_PADDING);
    // The raw buffer holds input[pos..chunk_end].
    let mut pos = bom_len;
    let mut chunk_end = len.min(INPUT_RAW_BUFFER_SIZE);
    // yaml_parser_determine_encoding reads until it has 3 bytes or EOF.
    let mut eof = len < 3;
    let mut chunk_ends = Vec::new();
    let mut chars = 0usize;

    let error = 'outer: loop {
        // Decode the raw buffer.
        while pos != chunk_end {
            let raw_unread = chunk_end - pos;
            let value: u32;
            let width: usize;
            let fail = |problem, offset, value| ReaderError {
                problem,
                offset,
                value,
                chars_before: chars,
            };
            match encoding {
                Encoding::Utf16Le | Encoding::Utf16Be => {
                    let (low, high) = if encoding == Encoding::Utf16Le {
                        (0, 1)
                    } else {
                        (1, 0)
                    };
                    if raw_unread < 2 {
                        if eof {
                            break 'outer Some(fail("incomplete UTF-16 character", pos, -1));
                        }
                        break;
                    }
                    let mut v = input[pos + low] as u32 + ((input[pos + high] as u32) << 8);
                    if v & 0xFC00 == 0xDC00 {
                        break 'outer Some(fail("unexpected low surrogate area", pos, v as i64));
                    }
                    if v & 0xFC00 == 0xD800 {
                        width = 4;
                        if raw_unread < 4 {
                            if eof {
                                break 'outer Some(fail(
                                    "incomplete UTF-16 surrogate pair",
                                    pos,
                                    -1,
                                ));
                            }
                            break;
                        }
                        let v2 =
                            input[pos + low + 2] as u32 + ((input[pos + high + 2] as u32) << 8);
                        if v2 & 0xFC00 != 0xDC00 {
                            break 'outer Some(fail(
                                "expected low surrogate area",
                                pos + 2,
                                v2 as i64,
                            ));
                        }
                        v = 0x10000 + ((v & 0x3FF) << 10) + (v2 & 0x3FF);
                    } else {
                        width = 2;
                    }
                    value = v;
                }
                _ => {
                    let octet = input[pos];
                    width = super::chars::width(octet);
                    if width == 0 {
                        break 'outer Some(fail("invalid leading UTF-8 octet", pos, octet as i64));
                    }
                    if width > raw_unread {
                        if eof {
                            break 'outer Some(fail("incomplete UTF-8 octet sequence", pos, -1));
                        }
                        break;
                    }
                    let mut v: u32 = match width {
                        1 => (octet & 0x7F) as u32,
                        2 => (octet & 0x1F) as u32,
                        3 => (octet & 0x0F) as u32,
                        _ => (octet & 0x07) as u32,
                    };
                    for k in 1..width {
                        let octet = input[pos + k];
                        if octet & 0xC0 != 0x80 {
                            break 'outer Some(fail(
                                "invalid trailing UTF-8 octet",
                                pos + k,
                                octet as i64,
                            ));
                        }
                        v = (v << 6) + (octet & 0x3F) as u32;
                    }
                    let ok_len = match width {
                        1 => true,
                        2 => v >= 0x80,
                        3 => v >= 0x800,
                        _ => v >= 0x10000,
                    };
                    if !ok_len {
                        break 'outer Some(fail("invalid length of a UTF-8 sequence", pos, -1));
                    }
                    if (0xD800..=0xDFFF).contains(&v) || v > 0x10FFFF {
                        break 'outer Some(fail("invalid Unicode character", pos, v as i64));
                    }
                    value = v;
                }
            }
            let allowed = value == 0x09
                || value == 0x0A
                || value == 0x0D
                || (0x20..=0x7E).contains(&value)
                || value == 0x85
                || (0xA0..=0xD7FF).contains(&value)
                || (0xE000..=0xFFFD).contains(&value)
                || (0x10000..=0x10FFFF).contains(&value);
            if !allowed {
                break 'outer Some(fail(
                    "control characters are not allowed",
                    pos,
                    value as i64,
                ));
            }
            pos += width;
            // Finally put the character into the buffer.
            if let Some(c) = char::from_u32(value) {
                let mut tmp = [0u8; 4];
                buffer.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
            }
            chars += 1;
        }

        // The chunk decoded cleanly.
        chunk_ends.push(chars);

        // Refill the raw buffer (yaml_parser_update_raw_buffer).
        if chunk_end == len {
            if eof || pos == len {
                // The next read reports EOF; nothing is left to decode.
                break None;
            }
            // An incomplete character is left over; the next read hits EOF
            // and decoding it again fails.
            eof = true;
        } else {
            chunk_end = len.min(pos + INPUT_RAW_BUFFER_SIZE);
        }
    };

    let decoded = buffer.len();
    buffer.resize(decoded + BUFFER_PADDING, 0);
    Decoded {
        buffer,
        chunk_ends,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disallowed_byte_anywhere_is_found() {
        let clean = "key: value # comment\r\n\t- item\n".repeat(4);
        assert!(utf8_all_allowed(clean.as_bytes()));
        for bad in [0x00u8, 0x01, 0x1B, 0x7F] {
            for at in 0..clean.len() {
                let mut bytes = clean.clone().into_bytes();
                bytes[at] = bad;
                assert!(!utf8_all_allowed(&bytes), "byte {bad:#x} at {at}");
            }
        }
        let non_ascii = format!("{clean}é ü\n{clean}");
        assert!(utf8_all_allowed(non_ascii.as_bytes()));
        assert!(!utf8_all_allowed(format!("{clean}\u{FFFE}").as_bytes()));
    }
}
