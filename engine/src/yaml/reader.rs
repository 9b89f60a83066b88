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
//! go-yaml decodes its input lazily, 512 raw bytes at a time, and reports a
//! decoding error only when the scanner asks for a character from the chunk
//! that contains it. This port decodes the whole input up front (followed by
//! zero padding, so `buffer[pos + k]` lookahead is always in bounds and reads
//! NUL past the end, as go-yaml's EOF handling does) but remembers how many
//! characters go-yaml would have decoded before reaching the bad chunk, so
//! `update_buffer` fails at exactly the same scanner position: a bad byte in
//! a later document does not fail an earlier one.

use super::parser::Parser;
use super::token::{Encoding, ErrorType};

/// go-yaml's `input_raw_buffer_size`: the raw input is read in chunks of
/// this many bytes, which decides when a decoding error surfaces.
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
        let raw = &input[bom_len..];

        // Fast path: valid UTF-8 with only allowed characters decodes to
        // itself.
        if encoding == Encoding::Utf8 && utf8_all_allowed(raw) {
            let mut buffer = Vec::with_capacity(raw.len() + BUFFER_PADDING);
            buffer.extend_from_slice(raw);
            buffer.resize(raw.len() + BUFFER_PADDING, 0);
            self.buffer = buffer;
            self.reader_limit = usize::MAX;
            self.reader_error = None;
            return;
        }

        let (buffer, limit, error) = decode_chunked(input, encoding, bom_len);
        self.buffer = buffer;
        self.reader_limit = limit;
        self.reader_error = error;
    }

    /// Ensure that the buffer contains at least `length` characters
    /// (`yaml_parser_update_buffer`). Everything is decoded already, so this
    /// only fails where go-yaml's lazy decoding would have hit a bad byte.
    #[inline]
    pub(crate) fn yaml_parser_update_buffer(&mut self, length: usize) -> bool {
        if self.mark.index.saturating_add(length) <= self.reader_limit {
            return true;
        }
        self.update_buffer_error()
    }

    #[cold]
    fn update_buffer_error(&mut self) -> bool {
        let Some(err) = self.reader_error else {
            return true;
        };
        // go-yaml has now decoded the chunk up to the bad character; later
        // requests that stay before it succeed.
        self.reader_limit = err.chars_before;
        self.yaml_parser_set_reader_error(err.problem, err.offset, err.value)
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
    let mut i = 0;
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

/// Decode the whole input exactly as go-yaml's reader would, chunk by chunk.
/// Returns the decoded buffer (padded), the number of characters the
/// scanner may request before the error surfaces, and the error.
fn decode_chunked(
    input: &[u8],
    encoding: Encoding,
    bom_len: usize,
) -> (Vec<u8>, usize, Option<ReaderError>) {
    let len = input.len();
    let mut buffer: Vec<u8> = Vec::with_capacity(len + BUFFER_PADDING);
    // The raw buffer holds input[pos..chunk_end].
    let mut pos = bom_len;
    let mut chunk_end = len.min(INPUT_RAW_BUFFER_SIZE);
    // yaml_parser_determine_encoding reads until it has 3 bytes or EOF.
    let mut eof = len < 3;
    let mut chunk_start_chars = 0usize;
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
        chunk_start_chars = chars;
    };

    let decoded = buffer.len();
    buffer.resize(decoded + BUFFER_PADDING, 0);
    match error {
        None => (buffer, usize::MAX, None),
        Some(err) => (buffer, chunk_start_chars, Some(err)),
    }
}
