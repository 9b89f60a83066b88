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

//! Event analysis and style selection, from go-yaml v3's `emitterc.go`:
//! `yaml_emitter_analyze_event` and the anchor, tag, directive and scalar
//! analyses it runs, `yaml_emitter_select_scalar_style`, and the
//! `process_anchor`/`process_tag`/`process_scalar` steps that write what the
//! analysis chose.

use super::{
    is_alpha, is_ascii, is_blank, is_blankz, is_break, is_printable, is_space, width,
    yaml_emitter_set_emitter_error, EmitResult, Emitter, ScalarData,
};
use crate::event::{scalar_style, EventRef, EventType, TagDirective};

/// Printable ASCII that, past the first character, neither is an indicator
/// (`, ? [ ] { } : #`) nor a space: the scalar analysis only notes that the
/// previous character was not a blank or a break.
static PLAIN_TAIL: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0x21;
    while c <= 0x7E {
        t[c] = !matches!(
            c as u8,
            b',' | b'?' | b'[' | b']' | b'{' | b'}' | b':' | b'#'
        );
        c += 1;
    }
    t
};

impl Emitter {
    /// Check if a %TAG directive is valid.
    pub(super) fn analyze_tag_directive(&mut self, tag_directive: &TagDirective) -> EmitResult {
        let handle = &tag_directive.handle;
        let prefix = &tag_directive.prefix;
        if handle.is_empty() {
            return yaml_emitter_set_emitter_error("tag handle must not be empty");
        }
        if handle[0] != b'!' {
            return yaml_emitter_set_emitter_error("tag handle must start with '!'");
        }
        if handle[handle.len() - 1] != b'!' {
            return yaml_emitter_set_emitter_error("tag handle must end with '!'");
        }
        let mut i = 1;
        while i + 1 < handle.len() {
            if !is_alpha(handle, i) {
                return yaml_emitter_set_emitter_error(
                    "tag handle must contain alphanumerical characters only",
                );
            }
            i += width(handle[i]).max(1);
        }
        if prefix.is_empty() {
            return yaml_emitter_set_emitter_error("tag prefix must not be empty");
        }
        Ok(())
    }

    /// Check if an anchor is valid.
    fn analyze_anchor(&mut self, anchor: &[u8], alias: bool) -> EmitResult {
        if anchor.is_empty() {
            let problem = if alias {
                "alias value must not be empty"
            } else {
                "anchor value must not be empty"
            };
            return yaml_emitter_set_emitter_error(problem);
        }
        let mut i = 0;
        while i < anchor.len() {
            if !is_alpha(anchor, i) {
                let problem = if alias {
                    "alias value must contain alphanumerical characters only"
                } else {
                    "anchor value must contain alphanumerical characters only"
                };
                return yaml_emitter_set_emitter_error(problem);
            }
            i += width(anchor[i]).max(1);
        }
        set(&mut self.anchor_data.anchor, anchor);
        self.anchor_data.alias = alias;
        Ok(())
    }

    /// Check if a tag is valid.
    fn analyze_tag(&mut self, tag: &[u8]) -> EmitResult {
        if tag.is_empty() {
            return yaml_emitter_set_emitter_error("tag value must not be empty");
        }
        for tag_directive in &self.tag_directives {
            if tag.starts_with(&tag_directive.prefix) {
                self.tag_data.handle.clear();
                self.tag_data
                    .handle
                    .extend_from_slice(&tag_directive.handle);
                self.tag_data.suffix.clear();
                self.tag_data
                    .suffix
                    .extend_from_slice(&tag[tag_directive.prefix.len()..]);
                return Ok(());
            }
        }
        self.tag_data.suffix.clear();
        self.tag_data.suffix.extend_from_slice(tag);
        Ok(())
    }

    /// Check if a scalar is valid.
    fn analyze_scalar(&mut self, value: &[u8]) -> EmitResult {
        self.scalar_data = analyze_scalar(value, self.unicode);
        Ok(())
    }

    /// Check if the event data is valid. The comments and the anchor are
    /// copied into the emitter's buffers (Go shares the slices; these
    /// outlive the borrowed event).
    pub(super) fn analyze_event(&mut self, event: &EventRef<'_>) -> EmitResult {
        self.anchor_data.anchor.clear();
        self.tag_data.handle.clear();
        self.tag_data.suffix.clear();
        self.scalar_data.length = 0;

        if !event.head_comment.is_empty() {
            set(&mut self.head_comment, event.head_comment);
        }
        if !event.line_comment.is_empty() {
            set(&mut self.line_comment, event.line_comment);
        }
        if !event.foot_comment.is_empty() {
            set(&mut self.foot_comment, event.foot_comment);
        }
        if !event.tail_comment.is_empty() {
            set(&mut self.tail_comment, event.tail_comment);
        }

        match event.typ {
            EventType::Alias => {
                self.analyze_anchor(event.anchor, true)?;
            }
            EventType::Scalar => {
                if !event.anchor.is_empty() {
                    self.analyze_anchor(event.anchor, false)?;
                }
                if !event.tag.is_empty()
                    && (self.canonical || (!event.implicit && !event.quoted_implicit))
                {
                    self.analyze_tag(&event.tag)?;
                }
                self.analyze_scalar(event.value)?;
            }
            EventType::SequenceStart | EventType::MappingStart => {
                if !event.anchor.is_empty() {
                    self.analyze_anchor(event.anchor, false)?;
                }
                if !event.tag.is_empty() && (self.canonical || !event.implicit) {
                    self.analyze_tag(&event.tag)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Determine an acceptable scalar style.
    pub(super) fn select_scalar_style(&mut self, event: &EventRef<'_>) -> EmitResult {
        let no_tag = self.tag_data.handle.is_empty() && self.tag_data.suffix.is_empty();
        if no_tag && !event.implicit && !event.quoted_implicit {
            return yaml_emitter_set_emitter_error("neither tag nor implicit flags are specified");
        }

        let mut style = event.style;
        if style == scalar_style::ANY {
            style = scalar_style::PLAIN;
        }
        if self.canonical {
            style = scalar_style::DOUBLE_QUOTED;
        }
        if self.simple_key_context && self.scalar_data.multiline {
            style = scalar_style::DOUBLE_QUOTED;
        }

        if style == scalar_style::PLAIN {
            if self.flow_level > 0 && !self.scalar_data.flow_plain_allowed
                || self.flow_level == 0 && !self.scalar_data.block_plain_allowed
            {
                style = scalar_style::SINGLE_QUOTED;
            }
            if self.scalar_data.length == 0 && (self.flow_level > 0 || self.simple_key_context) {
                style = scalar_style::SINGLE_QUOTED;
            }
            if no_tag && !event.implicit {
                style = scalar_style::SINGLE_QUOTED;
            }
        }
        if style == scalar_style::SINGLE_QUOTED && !self.scalar_data.single_quoted_allowed {
            style = scalar_style::DOUBLE_QUOTED;
        }
        if (style == scalar_style::LITERAL || style == scalar_style::FOLDED)
            && (!self.scalar_data.block_allowed || self.flow_level > 0 || self.simple_key_context)
        {
            style = scalar_style::DOUBLE_QUOTED;
        }

        if no_tag && !event.quoted_implicit && style != scalar_style::PLAIN {
            self.tag_data.handle.clear();
            self.tag_data.handle.push(b'!');
        }
        self.scalar_data.style = style;
        Ok(())
    }

    /// Write an anchor. (The checks for nothing to do, here and in the
    /// other `process_*` steps, are inlined: most nodes have no anchor,
    /// tag or comment.)
    #[inline]
    pub(super) fn process_anchor(&mut self) {
        if self.anchor_data.anchor.is_empty() {
            return;
        }
        self.write_anchor_data();
    }

    /// The rest of [`process_anchor`](Emitter::process_anchor).
    fn write_anchor_data(&mut self) {
        let c: &[u8] = if self.anchor_data.alias { b"*" } else { b"&" };
        self.write_indicator(c, true, false, false);
        let anchor = std::mem::take(&mut self.anchor_data.anchor);
        self.write_anchor(&anchor);
        self.anchor_data.anchor = anchor;
    }

    /// Write a tag.
    #[inline]
    pub(super) fn process_tag(&mut self) {
        if self.tag_data.handle.is_empty() && self.tag_data.suffix.is_empty() {
            return;
        }
        self.write_tag_data();
    }

    /// The rest of [`process_tag`](Emitter::process_tag).
    fn write_tag_data(&mut self) {
        let handle = std::mem::take(&mut self.tag_data.handle);
        let suffix = std::mem::take(&mut self.tag_data.suffix);
        if !handle.is_empty() {
            self.write_tag_handle(&handle);
            if !suffix.is_empty() {
                self.write_tag_content(&suffix, false);
            }
        } else {
            // [Go] Allocate these slices elsewhere.
            self.write_indicator(b"!<", true, false, false);
            self.write_tag_content(&suffix, false);
            self.write_indicator(b">", false, false, false);
        }
        self.tag_data.handle = handle;
        self.tag_data.suffix = suffix;
    }

    /// Write a scalar: `value`, the event's (Go reads
    /// `emitter.scalar_data.value`, the same slice).
    pub(super) fn process_scalar(&mut self, value: &[u8]) -> EmitResult {
        let allow_breaks = !self.simple_key_context;
        match self.scalar_data.style {
            scalar_style::PLAIN => self.write_plain_scalar(value, allow_breaks),
            scalar_style::SINGLE_QUOTED => self.write_single_quoted_scalar(value, allow_breaks),
            scalar_style::DOUBLE_QUOTED => self.write_double_quoted_scalar(value, allow_breaks),
            scalar_style::LITERAL => self.write_literal_scalar(value),
            scalar_style::FOLDED => self.write_folded_scalar(value),
            // Go panics.
            _ => return yaml_emitter_set_emitter_error("unknown scalar style"),
        }
        Ok(())
    }
}

/// Replace the contents of `buffer` with `bytes`, keeping its allocation.
#[inline]
/// The scalar analysis of `value` (`yaml_emitter_analyze_scalar`): which
/// styles can represent it. `unicode` is the emitter's setting (non-ASCII
/// written unescaped). Also used without an emitter, by
/// [`crate::reparse`].
pub(crate) fn analyze_scalar(value: &[u8], unicode: bool) -> ScalarData {
    let mut block_indicators = false;
    let mut flow_indicators = false;
    let mut line_breaks = false;
    let mut special_characters = false;
    let mut tab_characters = false;

    let mut leading_space = false;
    let mut leading_break = false;
    let mut trailing_space = false;
    let mut trailing_break = false;
    let mut break_space = false;
    let mut space_break = false;

    let mut previous_space = false;
    let mut previous_break = false;

    let mut data = ScalarData {
        length: value.len(),
        ..ScalarData::default()
    };

    if value.is_empty() {
        data.multiline = false;
        data.flow_plain_allowed = false;
        data.block_plain_allowed = true;
        data.single_quoted_allowed = true;
        data.block_allowed = false;
        return data;
    }

    if value.starts_with(b"---") || value.starts_with(b"...") {
        block_indicators = true;
        flow_indicators = true;
    }

    let mut preceded_by_whitespace = true;
    let mut i = 0;
    while i < value.len() {
        let c = value[i];
        if i > 0 && PLAIN_TAIL[c as usize] {
            // Fast path: a run of characters that, after the first
            // position, only clear the previous-character flags.
            while i < value.len() && PLAIN_TAIL[value[i] as usize] {
                i += 1;
            }
            previous_space = false;
            previous_break = false;
            preceded_by_whitespace = false;
            continue;
        }
        // Go panics on a stray continuation byte; step over it.
        let w = width(c).max(1);
        let followed_by_whitespace = i + w >= value.len() || is_blank(value, i + w);

        if i == 0 {
            match c {
                b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>'
                | b'\'' | b'"' | b'%' | b'@' | b'`' => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                b'?' | b':' => {
                    flow_indicators = true;
                    if followed_by_whitespace {
                        block_indicators = true;
                    }
                }
                b'-' if followed_by_whitespace => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                _ => {}
            }
        } else {
            match c {
                b',' | b'?' | b'[' | b']' | b'{' | b'}' => {
                    flow_indicators = true;
                }
                b':' => {
                    flow_indicators = true;
                    if followed_by_whitespace {
                        block_indicators = true;
                    }
                }
                b'#' if preceded_by_whitespace => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                _ => {}
            }
        }

        if c == b'\t' {
            tab_characters = true;
        } else if !is_printable(value, i) || !is_ascii(value, i) && !unicode {
            special_characters = true;
        }
        if is_space(value, i) {
            if i == 0 {
                leading_space = true;
            }
            if i + w == value.len() {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if is_break(value, i) {
            line_breaks = true;
            if i == 0 {
                leading_break = true;
            }
            if i + w == value.len() {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }

        // [Go]: Why 'z'? Couldn't be the end of the string as that's the loop condition.
        preceded_by_whitespace = is_blankz(value, i);
        i += w;
    }

    data.multiline = line_breaks;
    data.flow_plain_allowed = true;
    data.block_plain_allowed = true;
    data.single_quoted_allowed = true;
    data.block_allowed = true;

    if leading_space || leading_break || trailing_space || trailing_break {
        data.flow_plain_allowed = false;
        data.block_plain_allowed = false;
    }
    if trailing_space {
        data.block_allowed = false;
    }
    if break_space {
        data.flow_plain_allowed = false;
        data.block_plain_allowed = false;
        data.single_quoted_allowed = false;
    }
    if space_break || tab_characters || special_characters {
        data.flow_plain_allowed = false;
        data.block_plain_allowed = false;
        data.single_quoted_allowed = false;
    }
    if space_break || special_characters {
        data.block_allowed = false;
    }
    if line_breaks {
        data.flow_plain_allowed = false;
        data.block_plain_allowed = false;
    }
    if flow_indicators {
        data.flow_plain_allowed = false;
    }
    if block_indicators {
        data.block_plain_allowed = false;
    }
    data
}

fn set(buffer: &mut Vec<u8>, bytes: &[u8]) {
    buffer.clear();
    buffer.extend_from_slice(bytes);
}
