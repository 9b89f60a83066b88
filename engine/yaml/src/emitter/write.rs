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

//! The writers of go-yaml v3's `emitterc.go`: indentation, indicators,
//! anchors, tags, the five scalar styles (plain, single and double quoted,
//! literal and folded, with go-yaml's exact folding) and comments (the
//! head, line and foot comment steps and `yaml_emitter_write_comment`).
//!
//! With go-yaml v3's infinite `best_width` the line-folding branches
//! (`column > best_width`) never run, but they are kept as in Go. Runs of
//! ordinary characters are copied in one go where Go copies them one by
//! one; the bytes and the column count are the same.

use super::{
    at, is_ascii, is_blank, is_blankz, is_bom, is_break, is_printable, is_space, width, Emitter,
};

/// Whether the byte needs the per-character path of the plain, single
/// quoted and literal writers (space, line break, quote, or non-ASCII that
/// could be NEL, LS or PS).
#[inline(always)]
fn special(c: u8) -> bool {
    SPECIAL[c as usize]
}

/// The bytes [`comment_special`] picks.
static COMMENT_SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = c == b'\n' as usize || c == b'\r' as usize || c >= 0x80;
        c += 1;
    }
    t
};

/// Whether the byte needs the per-character path of the comment writer
/// (a line break, or non-ASCII that could be NEL, LS or PS).
#[inline(always)]
fn comment_special(c: u8) -> bool {
    COMMENT_SPECIAL[c as usize]
}

/// The bytes [`special`] picks.
static SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = c == b' ' as usize
            || c == b'\n' as usize
            || c == b'\r' as usize
            || c == b'\'' as usize
            || c >= 0x80;
        c += 1;
    }
    t
};

impl Emitter {
    /// Copy the run of ordinary ASCII characters at `i` (a fast path of
    /// `write` for each of them).
    #[inline(always)]
    fn write_run(&mut self, value: &[u8], i: &mut usize) {
        self.write_run_until(value, i, special);
    }

    /// Copy the run of characters at `i` up to the first that `stop`
    /// picks, or the next character if it is one.
    #[inline(always)]
    fn write_run_until(&mut self, value: &[u8], i: &mut usize, stop: fn(u8) -> bool) {
        let start = *i;
        let mut j = start;
        while j < value.len() && !stop(value[j]) {
            j += 1;
        }
        if j == start {
            self.write(value, i);
        } else {
            self.out.extend_from_slice(&value[start..j]);
            self.column += (j - start) as isize;
            *i = j;
        }
    }

    /// `yaml_emitter_write_indent`.
    pub(crate) fn write_indent(&mut self) {
        let mut indent = self.indent;
        if indent < 0 {
            indent = 0;
        }
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        if self.foot_indent == indent {
            self.put_break();
        }
        if self.column < indent {
            let n = (indent - self.column) as usize;
            self.out.resize(self.out.len() + n, b' ');
            self.column = indent;
        }
        self.whitespace = true;
        //emitter.indention = true
        self.space_above = false;
        self.foot_indent = -1;
    }

    /// `yaml_emitter_write_indicator`.
    pub(crate) fn write_indicator(
        &mut self,
        indicator: &[u8],
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(b' ');
        }
        self.write_all(indicator);
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
        self.open_ended = false;
    }

    /// `yaml_emitter_write_anchor`.
    pub(crate) fn write_anchor(&mut self, value: &[u8]) {
        self.write_all(value);
        self.whitespace = false;
        self.indention = false;
    }

    /// `yaml_emitter_write_tag_handle`.
    pub(crate) fn write_tag_handle(&mut self, value: &[u8]) {
        if !self.whitespace {
            self.put(b' ');
        }
        self.write_all(value);
        self.whitespace = false;
        self.indention = false;
    }

    /// `yaml_emitter_write_tag_content`: URI characters as they are, the
    /// rest %-escaped byte by byte.
    pub(crate) fn write_tag_content(&mut self, value: &[u8], need_whitespace: bool) {
        if need_whitespace && !self.whitespace {
            self.put(b' ');
        }
        let mut i = 0;
        while i < value.len() {
            let must_write = match value[i] {
                b';' | b'/' | b'?' | b':' | b'@' | b'&' | b'=' | b'+' | b'$' | b',' | b'_'
                | b'.' | b'~' | b'*' | b'\'' | b'(' | b')' | b'[' | b']' => true,
                _ => super::is_alpha(value, i),
            };
            if must_write {
                self.write(value, &mut i);
            } else {
                let w = width(value[i]).max(1);
                for _ in 0..w {
                    if i >= value.len() {
                        break;
                    }
                    let octet = value[i];
                    i += 1;
                    self.put(b'%');
                    self.put(hex_digit(octet >> 4));
                    self.put(hex_digit(octet & 0x0f));
                }
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    /// `yaml_emitter_write_plain_scalar`.
    pub(crate) fn write_plain_scalar(&mut self, value: &[u8], allow_breaks: bool) {
        if !value.is_empty() && !self.whitespace {
            self.put(b' ');
        }

        let mut spaces = false;
        let mut breaks = false;
        let mut i = 0;
        while i < value.len() {
            if is_space(value, i) {
                if allow_breaks
                    && !spaces
                    && self.column > self.best_width
                    && !is_space(value, i + 1)
                {
                    self.write_indent();
                    i += width(value[i]);
                } else {
                    self.write(value, &mut i);
                }
                spaces = true;
            } else if is_break(value, i) {
                if !breaks && value[i] == b'\n' {
                    self.put_break();
                }
                self.write_break(value, &mut i);
                //emitter.indention = true
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.write_run(value, &mut i);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }

        if !value.is_empty() {
            self.whitespace = false;
        }
        self.indention = false;
        if self.root_context {
            self.open_ended = true;
        }
    }

    /// `yaml_emitter_write_single_quoted_scalar`.
    pub(crate) fn write_single_quoted_scalar(&mut self, value: &[u8], allow_breaks: bool) {
        self.write_indicator(b"'", true, false, false);

        let mut spaces = false;
        let mut breaks = false;
        let mut i = 0;
        while i < value.len() {
            if is_space(value, i) {
                if allow_breaks
                    && !spaces
                    && self.column > self.best_width
                    && i > 0
                    && i < value.len() - 1
                    && !is_space(value, i + 1)
                {
                    self.write_indent();
                    i += width(value[i]);
                } else {
                    self.write(value, &mut i);
                }
                spaces = true;
            } else if is_break(value, i) {
                if !breaks && value[i] == b'\n' {
                    self.put_break();
                }
                self.write_break(value, &mut i);
                //emitter.indention = true
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if value[i] == b'\'' {
                    self.put(b'\'');
                    self.write(value, &mut i);
                } else {
                    self.write_run(value, &mut i);
                }
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator(b"'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    /// `yaml_emitter_write_double_quoted_scalar`.
    pub(crate) fn write_double_quoted_scalar(&mut self, value: &[u8], allow_breaks: bool) {
        let mut spaces = false;
        self.write_indicator(b"\"", true, false, false);

        let mut i = 0;
        while i < value.len() {
            if !is_printable(value, i)
                || (!self.unicode && !is_ascii(value, i))
                || is_bom(value, i)
                || is_break(value, i)
                || value[i] == b'"'
                || value[i] == b'\\'
            {
                let mut octet = value[i];

                let (mut w, mut v): (usize, u32) = if octet & 0x80 == 0x00 {
                    (1, (octet & 0x7F) as u32)
                } else if octet & 0xE0 == 0xC0 {
                    (2, (octet & 0x1F) as u32)
                } else if octet & 0xF0 == 0xE0 {
                    (3, (octet & 0x0F) as u32)
                } else if octet & 0xF8 == 0xF0 {
                    (4, (octet & 0x07) as u32)
                } else {
                    // Go leaves w at 0 and loops forever; take the byte.
                    (1, octet as u32)
                };
                for k in 1..w {
                    octet = at(value, i + k);
                    v = (v << 6) + (octet as u32 & 0x3F);
                }
                i += w;

                self.put(b'\\');

                match v {
                    0x00 => self.put(b'0'),
                    0x07 => self.put(b'a'),
                    0x08 => self.put(b'b'),
                    0x09 => self.put(b't'),
                    0x0A => self.put(b'n'),
                    0x0b => self.put(b'v'),
                    0x0c => self.put(b'f'),
                    0x0d => self.put(b'r'),
                    0x1b => self.put(b'e'),
                    0x22 => self.put(b'"'),
                    0x5c => self.put(b'\\'),
                    0x85 => self.put(b'N'),
                    0xA0 => self.put(b'_'),
                    0x2028 => self.put(b'L'),
                    0x2029 => self.put(b'P'),
                    _ => {
                        if v <= 0xFF {
                            self.put(b'x');
                            w = 2;
                        } else if v <= 0xFFFF {
                            self.put(b'u');
                            w = 4;
                        } else {
                            self.put(b'U');
                            w = 8;
                        }
                        let mut k = (w as i32 - 1) * 4;
                        while k >= 0 {
                            let digit = ((v >> k as u32) & 0x0F) as u8;
                            self.put(hex_digit(digit));
                            k -= 4;
                        }
                    }
                }
                spaces = false;
            } else if is_space(value, i) {
                if allow_breaks
                    && !spaces
                    && self.column > self.best_width
                    && i > 0
                    && i < value.len() - 1
                {
                    self.write_indent();
                    if is_space(value, i + 1) {
                        self.put(b'\\');
                    }
                    i += width(value[i]);
                } else {
                    self.write(value, &mut i);
                }
                spaces = true;
            } else {
                self.write(value, &mut i);
                spaces = false;
            }
        }
        self.write_indicator(b"\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    /// `yaml_emitter_write_block_scalar_hints`: the indentation indicator
    /// when the text starts with a space or break, and the chomping
    /// indicator (`-` no final break, `+` more than one, none for one).
    fn write_block_scalar_hints(&mut self, value: &[u8]) {
        if is_space(value, 0) || is_break(value, 0) {
            let indent_hint = [b'0' + self.best_indent as u8];
            self.write_indicator(&indent_hint, false, false, false);
        }

        self.open_ended = false;

        let mut chomp_hint = 0u8;
        if value.is_empty() {
            chomp_hint = b'-';
        } else {
            let mut i = value.len() - 1;
            while value[i] & 0xC0 == 0x80 && i > 0 {
                i -= 1;
            }
            if !is_break(value, i) {
                chomp_hint = b'-';
            } else if i == 0 {
                chomp_hint = b'+';
                self.open_ended = true;
            } else {
                i -= 1;
                while value[i] & 0xC0 == 0x80 && i > 0 {
                    i -= 1;
                }
                if is_break(value, i) {
                    chomp_hint = b'+';
                    self.open_ended = true;
                }
            }
        }
        if chomp_hint != 0 {
            self.write_indicator(&[chomp_hint], false, false, false);
        }
    }

    /// `yaml_emitter_write_literal_scalar`.
    pub(crate) fn write_literal_scalar(&mut self, value: &[u8]) {
        self.write_indicator(b"|", true, false, false);
        self.write_block_scalar_hints(value);
        self.process_line_comment_linebreak();
        //emitter.indention = true
        self.whitespace = true;
        let mut breaks = true;
        let mut i = 0;
        while i < value.len() {
            if is_break(value, i) {
                self.write_break(value, &mut i);
                //emitter.indention = true
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.write_run(value, &mut i);
                self.indention = false;
                breaks = false;
            }
        }
    }

    /// `yaml_emitter_write_folded_scalar`. go-yaml checks for a blank line
    /// start from index 0 (`k := 0`), not from the break: every break
    /// after a line that does not start with a blank gets an extra line
    /// break unless the whole text starts with breaks and a blank. Kept.
    pub(crate) fn write_folded_scalar(&mut self, value: &[u8]) {
        self.write_indicator(b">", true, false, false);
        self.write_block_scalar_hints(value);
        self.process_line_comment_linebreak();

        //emitter.indention = true
        self.whitespace = true;

        let mut breaks = true;
        let mut leading_spaces = true;
        let mut i = 0;
        while i < value.len() {
            if is_break(value, i) {
                if !breaks && !leading_spaces && value[i] == b'\n' {
                    let mut k = 0;
                    while is_break(value, k) {
                        k += width(value[k]);
                    }
                    if !is_blankz(value, k) {
                        self.put_break();
                    }
                }
                self.write_break(value, &mut i);
                //emitter.indention = true
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                    leading_spaces = is_blank(value, i);
                }
                if !breaks
                    && is_space(value, i)
                    && !is_space(value, i + 1)
                    && self.column > self.best_width
                {
                    self.write_indent();
                    i += width(value[i]);
                } else {
                    self.write(value, &mut i);
                }
                self.indention = false;
                breaks = false;
            }
        }
    }

    /// Write a head comment.
    #[inline]
    pub(super) fn process_head_comment(&mut self) {
        if !self.tail_comment.is_empty() || !self.head_comment.is_empty() {
            self.write_head_comment();
        }
    }

    /// The rest of [`process_head_comment`](Emitter::process_head_comment).
    fn write_head_comment(&mut self) {
        if !self.tail_comment.is_empty() {
            self.write_indent();
            let comment = std::mem::take(&mut self.tail_comment);
            self.write_comment(&comment);
            self.tail_comment = comment;
            self.tail_comment.clear();
            self.foot_indent = self.indent;
            if self.foot_indent < 0 {
                self.foot_indent = 0;
            }
        }

        if self.head_comment.is_empty() {
            return;
        }
        self.write_indent();
        let comment = std::mem::take(&mut self.head_comment);
        self.write_comment(&comment);
        self.head_comment = comment;
        self.head_comment.clear();
    }

    /// Write an line comment.
    #[inline]
    pub(super) fn process_line_comment(&mut self) {
        if !self.line_comment.is_empty() {
            self.write_line_comment();
        }
    }

    /// `yaml_emitter_process_line_comment_linebreak(emitter, true)` of
    /// kyaml's go-yaml (after go-yaml issue 755, not in the v3.0.1 tag):
    /// after a block scalar's header, a line break even without a comment,
    /// so that a value starting with a line break keeps it (`|2` then an
    /// empty line); before, the value's first break ended the header line.
    pub(super) fn process_line_comment_linebreak(&mut self) {
        if self.line_comment.is_empty() {
            self.put_break();
        } else {
            self.write_line_comment();
        }
    }

    /// The rest of [`process_line_comment`](Emitter::process_line_comment).
    fn write_line_comment(&mut self) {
        if !self.whitespace {
            self.put(b' ');
        }
        let comment = std::mem::take(&mut self.line_comment);
        self.write_comment(&comment);
        self.line_comment = comment;
        self.line_comment.clear();
    }

    /// Write a foot comment.
    #[inline]
    pub(super) fn process_foot_comment(&mut self) {
        if !self.foot_comment.is_empty() {
            self.write_foot_comment();
        }
    }

    /// The rest of [`process_foot_comment`](Emitter::process_foot_comment).
    fn write_foot_comment(&mut self) {
        self.write_indent();
        let comment = std::mem::take(&mut self.foot_comment);
        self.write_comment(&comment);
        self.foot_comment = comment;
        self.foot_comment.clear();
        self.foot_indent = self.indent;
        if self.foot_indent < 0 {
            self.foot_indent = 0;
        }
    }

    /// `yaml_emitter_write_comment`: each line gets `# ` unless it starts
    /// with `#`; the comment ends with a line break.
    pub(crate) fn write_comment(&mut self, comment: &[u8]) {
        let mut breaks = false;
        let mut pound = false;
        let mut i = 0;
        while i < comment.len() {
            if is_break(comment, i) {
                self.write_break(comment, &mut i);
                //emitter.indention = true
                breaks = true;
                pound = false;
            } else {
                if breaks {
                    self.write_indent();
                }
                if !pound {
                    if comment[i] != b'#' {
                        self.put(b'#');
                        self.put(b' ');
                    }
                    pound = true;
                }
                self.write_run_until(comment, &mut i, comment_special);
                self.indention = false;
                breaks = false;
            }
        }
        if !breaks {
            self.put_break();
        }

        self.whitespace = true;
        //emitter.indention = true
    }
}

/// An uppercase hex digit.
#[inline(always)]
fn hex_digit(d: u8) -> u8 {
    if d < 10 {
        d + b'0'
    } else {
        d + b'A' - 10
    }
}
