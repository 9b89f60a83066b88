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

//! The emitter: events to bytes. A port of go-yaml v3's `emitterc.go` and
//! `writerc.go`, the emitter half of `apic.go` and the emitter struct of
//! `yamlh.go`, with kyaml's compact-sequence-indent patch
//! (`compact_sequence_indent`, `yaml_emitter_increase_indent_compact`).
//!
//! This module owns [`Emitter`] (`yaml_emitter_t`), its states, the event
//! queue, the state dispatcher and the stream and document states; the
//! submodules hold the node states (`nodes`), event analysis and style
//! selection (`analyze`) and the writers: indicators, tags, the five scalar
//! styles and comments (`write`).
//!
//! Naming: Go's `yaml_emitter_X(emitter, ...)` is `Emitter::X(&mut self, ...)`
//! here, and the `put`/`write`/`write_break` helpers keep their names, so the
//! code reads line by line against the Go. Go's `bool` results (false after
//! `yaml_emitter_set_emitter_error`) are `EmitResult`s. Output goes
//! into one `Vec<u8>`; writing to it cannot fail, so the writer functions
//! return nothing and `yaml_emitter_flush` is a no-op.
//!
//! Events come in two forms: owned [`Event`]s ([`Emitter::emit`], queued
//! as Go queues them) and borrowed [`EventRef`]s (`Emitter::emit_ref`, the
//! encoder's path: they borrow from the `Node` tree, and at most one waits
//! for look-ahead, in a slot the encoder keeps). The states read
//! [`EventRef`]s either way; what they keep between events (comments, the
//! anchor) is copied into buffers the emitter reuses.

mod analyze;
pub(crate) use analyze::analyze_scalar;
mod nodes;
mod write;

use std::borrow::Cow;
use std::collections::VecDeque;

use super::event::{Event, EventRef, EventType, VersionDirective};

/// An error from the emitter or the encoder. `problem` is go-yaml's message
/// (`expected STREAM-START`); `Display` prefixes `yaml: ` as go-yaml's
/// `Encoder` errors do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("yaml: {problem}")]
pub struct EmitError {
    /// go-yaml's problem text.
    pub problem: String,
}

/// Result of the emitter functions (Go's `bool`). The error is boxed so
/// that the result is one word, returned in a register by the dozen
/// functions an event passes through; errors are rare.
pub(crate) type EmitResult = Result<(), Box<EmitError>>;

/// `yaml_emitter_set_emitter_error`: the error go-yaml would record.
pub(crate) fn yaml_emitter_set_emitter_error(problem: impl Into<String>) -> EmitResult {
    Err(Box::new(EmitError {
        problem: problem.into(),
    }))
}

/// Line break styles (`yaml_break_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LineBreak {
    /// Let the emitter choose (LF).
    #[default]
    Any,
    /// `\r`.
    Cr,
    /// `\n`.
    Ln,
    /// `\r\n`.
    CrLn,
}

/// Emitter states (`yaml_emitter_state_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    StreamStart,
    FirstDocumentStart,
    DocumentStart,
    DocumentContent,
    DocumentEnd,
    FlowSequenceFirstItem,
    FlowSequenceTrailItem,
    FlowSequenceItem,
    FlowMappingFirstKey,
    FlowMappingTrailKey,
    FlowMappingKey,
    FlowMappingSimpleValue,
    FlowMappingValue,
    BlockSequenceFirstItem,
    BlockSequenceItem,
    BlockMappingFirstKey,
    BlockMappingKey,
    BlockMappingSimpleValue,
    BlockMappingValue,
    End,
}

/// Anchor analysis (`anchor_data`).
#[derive(Default)]
pub(crate) struct AnchorData {
    /// The anchor value; empty is Go's nil.
    pub(crate) anchor: Vec<u8>,
    /// Is it an alias?
    pub(crate) alias: bool,
}

/// Tag analysis (`tag_data`).
#[derive(Default)]
pub(crate) struct TagData {
    /// The tag handle.
    pub(crate) handle: Vec<u8>,
    /// The tag suffix.
    pub(crate) suffix: Vec<u8>,
}

/// Scalar analysis (`scalar_data`). Go keeps the value here; it is read
/// from the event being processed instead, so only its length is kept.
#[derive(Default)]
pub(crate) struct ScalarData {
    /// The length of the scalar value.
    pub(crate) length: usize,
    /// Does the scalar contain line breaks?
    pub(crate) multiline: bool,
    /// Can the scalar be expressed in the flow plain style?
    pub(crate) flow_plain_allowed: bool,
    /// Can the scalar be expressed in the block plain style?
    pub(crate) block_plain_allowed: bool,
    /// Can the scalar be expressed in the single quoted style?
    pub(crate) single_quoted_allowed: bool,
    /// Can the scalar be expressed in the literal or folded styles?
    pub(crate) block_allowed: bool,
    /// The output style.
    pub(crate) style: u8,
}

/// A `%TAG` directive in effect: Go's `yaml_tag_directive_t`, with the
/// default directives borrowed.
pub(crate) struct TagDirectiveData {
    pub(crate) handle: Cow<'static, [u8]>,
    pub(crate) prefix: Cow<'static, [u8]>,
}

/// go-yaml's `default_tag_directives` (from `parserc.go`).
const DEFAULT_TAG_DIRECTIVES: [(&[u8], &[u8]); 2] = [(b"!", b"!"), (b"!!", b"tag:yaml.org,2002:")];

/// The YAML emitter (`yaml_emitter_t`): feed it events with
/// [`Emitter::emit`], read the bytes with [`Emitter::output`].
pub struct Emitter {
    /// kyaml's patch: sequences inside mappings are not indented.
    pub(crate) compact_sequence_indent: bool,

    /// The error that stopped the emitter (Go's `error` and `problem`).
    pub(crate) error: Option<EmitError>,

    /// The output (Go's `output_buffer`; the working buffer is gone).
    pub(crate) out: Vec<u8>,

    pub(crate) canonical: bool,
    pub(crate) best_indent: isize,
    pub(crate) best_width: isize,
    pub(crate) unicode: bool,
    pub(crate) line_break: LineBreak,

    pub(crate) state: State,
    pub(crate) states: Vec<State>,

    /// The events waiting to be processed ([`Emitter::emit`]): `events[0]`
    /// is Go's `events[events_head+1]` while an event is processed, and
    /// Go's `events[events_head]` between events.
    pub(crate) events: VecDeque<Event>,
    /// The type of the event being processed (Go's
    /// `events[events_head].typ`), which Go keeps at the queue head.
    pub(crate) head: EventType,
    /// The type of the event queued behind it (Go's
    /// `events[events_head+1].typ`), `None` if none is: all the look-ahead
    /// the states do.
    pub(crate) next: EventType,

    pub(crate) indents: Vec<isize>,

    /// The document's `%TAG` directives, then go-yaml's defaults. Cleared
    /// at document end, keeping its allocation; the defaults are borrowed,
    /// so a document costs no allocation here.
    pub(crate) tag_directives: Vec<TagDirectiveData>,

    pub(crate) indent: isize,

    pub(crate) flow_level: isize,

    pub(crate) root_context: bool,
    pub(crate) sequence_context: bool,
    pub(crate) mapping_context: bool,
    pub(crate) simple_key_context: bool,

    pub(crate) line: isize,
    pub(crate) column: isize,
    pub(crate) whitespace: bool,
    pub(crate) indention: bool,
    pub(crate) open_ended: bool,

    pub(crate) space_above: bool,
    pub(crate) foot_indent: isize,

    pub(crate) anchor_data: AnchorData,
    pub(crate) tag_data: TagData,
    pub(crate) scalar_data: ScalarData,

    pub(crate) head_comment: Vec<u8>,
    pub(crate) line_comment: Vec<u8>,
    pub(crate) foot_comment: Vec<u8>,
    pub(crate) tail_comment: Vec<u8>,

    pub(crate) key_line_comment: Vec<u8>,
}

impl Default for Emitter {
    fn default() -> Self {
        Emitter::new()
    }
}

impl Emitter {
    /// `yaml_emitter_initialize`: a new emitter writing into an empty
    /// buffer, with `best_width` -1 (infinite, as go-yaml v3 leaves it).
    pub fn new() -> Emitter {
        Emitter {
            compact_sequence_indent: false,
            error: None,
            out: Vec::new(),
            canonical: false,
            best_indent: 0,
            best_width: -1,
            unicode: false,
            line_break: LineBreak::Any,
            state: State::StreamStart,
            states: Vec::with_capacity(16),
            events: VecDeque::with_capacity(16),
            head: EventType::None,
            next: EventType::None,
            indents: Vec::with_capacity(16),
            tag_directives: Vec::new(),
            indent: 0,
            flow_level: 0,
            root_context: false,
            sequence_context: false,
            mapping_context: false,
            simple_key_context: false,
            line: 0,
            column: 0,
            whitespace: false,
            indention: false,
            open_ended: false,
            space_above: false,
            foot_indent: 0,
            anchor_data: AnchorData::default(),
            tag_data: TagData::default(),
            scalar_data: ScalarData::default(),
            head_comment: Vec::new(),
            line_comment: Vec::new(),
            foot_comment: Vec::new(),
            tail_comment: Vec::new(),
            key_line_comment: Vec::new(),
        }
    }

    /// `yaml_emitter_set_canonical`.
    pub fn set_canonical(&mut self, canonical: bool) {
        self.canonical = canonical;
    }

    /// `yaml_emitter_set_indent`: the indentation increment, 2 to 9.
    pub fn set_indent(&mut self, indent: isize) {
        self.best_indent = if !(2..=9).contains(&indent) {
            2
        } else {
            indent
        };
    }

    /// `yaml_emitter_set_width`: the preferred line width, negative for
    /// infinite.
    pub fn set_width(&mut self, width: isize) {
        self.best_width = if width < 0 { -1 } else { width };
    }

    /// `yaml_emitter_set_unicode`: write non-ASCII characters unescaped.
    pub fn set_unicode(&mut self, unicode: bool) {
        self.unicode = unicode;
    }

    /// `yaml_emitter_set_break`.
    pub fn set_break(&mut self, line_break: LineBreak) {
        self.line_break = line_break;
    }

    /// kyaml's `CompactSeqIndent()` (true) / `DefaultSeqIndent()` (false).
    pub fn set_compact_sequence_indent(&mut self, compact: bool) {
        self.compact_sequence_indent = compact;
    }

    /// The bytes written so far.
    pub fn output(&self) -> &[u8] {
        &self.out
    }

    /// The bytes written, consuming the emitter.
    pub fn into_output(self) -> Vec<u8> {
        self.out
    }

    // ---- writerc.go and the output helpers of emitterc.go ----

    /// `yaml_emitter_flush`: the output is a `Vec`, nothing to flush.
    #[inline]
    pub(crate) fn flush(&mut self) -> EmitResult {
        Ok(())
    }

    /// Put a character to the output buffer.
    #[inline]
    pub(crate) fn put(&mut self, value: u8) {
        self.out.push(value);
        self.column += 1;
    }

    /// Put a line break to the output buffer.
    #[inline]
    pub(crate) fn put_break(&mut self) {
        match self.line_break {
            LineBreak::Cr => self.out.push(b'\r'),
            // Go panics on ANY; stream start replaces it with LN.
            LineBreak::Ln | LineBreak::Any => self.out.push(b'\n'),
            LineBreak::CrLn => self.out.extend_from_slice(b"\r\n"),
        }
        if self.column == 0 {
            self.space_above = true;
        }
        self.column = 0;
        self.line += 1;
        // [Go] Do this here and below and drop from everywhere else (see commented lines).
        self.indention = true;
    }

    /// Copy a character from a string into buffer.
    #[inline]
    pub(crate) fn write(&mut self, s: &[u8], i: &mut usize) {
        // Go panics on a width of 0 (a stray continuation byte): copy it
        // alone instead.
        let w = width(s[*i]).max(1).min(s.len() - *i);
        self.out.extend_from_slice(&s[*i..*i + w]);
        self.column += 1;
        *i += w;
    }

    /// Write a whole string into buffer.
    #[inline]
    pub(crate) fn write_all(&mut self, s: &[u8]) {
        // Same as writing character by character: one column per
        // character start.
        self.out.extend_from_slice(s);
        self.column += s.iter().filter(|&&b| b & 0xC0 != 0x80).count() as isize;
    }

    /// Copy a line break character from a string into buffer.
    #[inline]
    pub(crate) fn write_break(&mut self, s: &[u8], i: &mut usize) {
        if s[*i] == b'\n' {
            self.put_break();
            *i += 1;
        } else {
            self.write(s, i);
            if self.column == 0 {
                self.space_above = true;
            }
            self.column = 0;
            self.line += 1;
            // [Go] Do this here and above and drop from everywhere else (see commented lines).
            self.indention = true;
        }
    }

    // ---- the event queue ----

    /// `yaml_emitter_emit`: queue an event and process what can be. After
    /// an error every call fails with it again (go-yaml keeps the failed
    /// event at the head of its queue and fails on it again).
    pub fn emit(&mut self, event: Event) -> Result<(), EmitError> {
        self.sticky(|e| e.emit_event(event)).map_err(|err| *err)
    }

    /// [`emit`](Emitter::emit) for the encoder's borrowed events, with the
    /// least look-ahead that gives the same bytes: a SEQUENCE-START or
    /// MAPPING-START waits in `pending` for the next event, everything
    /// else is processed at once. Go accumulates up to three events, but
    /// the states only ever look at the type of the event after a
    /// collection start (`check_empty_sequence`, `check_empty_mapping`),
    /// so the events are processed in the same order with the same
    /// look-ahead; only when an error surfaces can differ, and the encoder
    /// shows no bytes once one has. DOCUMENT-END is never left pending.
    ///
    /// Inlined into the encoder so that the event, built in the encoder's
    /// frame, is read in place rather than copied (it is ~150 bytes).
    #[inline(always)]
    pub(crate) fn emit_ref<'a>(
        &mut self,
        pending: &mut Option<EventRef<'a>>,
        event: EventRef<'a>,
    ) -> EmitResult {
        if let Some(start) = pending {
            let result = self.process_sticky(start, event.typ);
            *pending = None;
            result?;
        }
        if matches!(
            event.typ,
            EventType::SequenceStart | EventType::MappingStart
        ) {
            *pending = Some(event);
            return self.sticky(|_| Ok(()));
        }
        self.process_sticky(&event, EventType::None)
    }

    /// Process `event`, followed by an event of type `next`, unless an
    /// earlier event failed; remember the error.
    fn process_sticky(&mut self, event: &EventRef<'_>, next: EventType) -> EmitResult {
        self.sticky(|e| {
            e.next = next;
            e.process_event(event)
        })
    }

    /// Run `f` unless an earlier event failed; remember its error.
    #[inline]
    fn sticky(&mut self, f: impl FnOnce(&mut Emitter) -> EmitResult) -> EmitResult {
        if let Some(err) = &self.error {
            return Err(Box::new(err.clone()));
        }
        let result = f(self);
        if let Err(err) = &result {
            self.error = Some((**err).clone());
        }
        result
    }

    /// `yaml_emitter_emit` proper.
    fn emit_event(&mut self, event: Event) -> EmitResult {
        if self.events.is_empty()
            && !matches!(
                event.typ,
                EventType::DocumentStart | EventType::SequenceStart | EventType::MappingStart
            )
        {
            // Go queues it and `need_more_events` lets it through at once.
            self.next = EventType::None;
            return self.process_event(&event.borrowed());
        }
        self.events.push_back(event);
        while !self.need_more_events() {
            let Some(event) = self.events.pop_front() else {
                break;
            };
            self.next = self.events.front().map_or(EventType::None, |e| e.typ);
            self.process_event(&event.borrowed())?;
        }
        Ok(())
    }

    /// The body of Go's `yaml_emitter_emit` loop for the head event, taken
    /// off the queue (its type stays in `head` for the look-ahead checks).
    #[inline]
    fn process_event(&mut self, event: &EventRef<'_>) -> EmitResult {
        self.head = event.typ;
        self.analyze_event(event)?;
        self.state_machine(event)?;
        self.head = EventType::None;
        Ok(())
    }

    /// Check if we need to accumulate more events before emitting.
    ///
    /// We accumulate extra
    ///  - 1 event for DOCUMENT-START
    ///  - 2 events for SEQUENCE-START
    ///  - 3 events for MAPPING-START
    fn need_more_events(&self) -> bool {
        let Some(head) = self.events.front() else {
            return true;
        };
        let accumulate = match head.typ {
            EventType::DocumentStart => 1,
            EventType::SequenceStart => 2,
            EventType::MappingStart => 3,
            _ => return false,
        };
        if self.events.len() > accumulate {
            return false;
        }
        let mut level = 0i32;
        for event in &self.events {
            match event.typ {
                EventType::StreamStart
                | EventType::DocumentStart
                | EventType::SequenceStart
                | EventType::MappingStart => level += 1,
                EventType::StreamEnd
                | EventType::DocumentEnd
                | EventType::SequenceEnd
                | EventType::MappingEnd => level -= 1,
                _ => {}
            }
            if level == 0 {
                return false;
            }
        }
        true
    }

    /// Append a directive to the directives stack.
    fn append_tag_directive(
        &mut self,
        handle: Cow<'static, [u8]>,
        prefix: Cow<'static, [u8]>,
        allow_duplicates: bool,
    ) -> EmitResult {
        for td in &self.tag_directives {
            if td.handle == handle {
                if allow_duplicates {
                    return Ok(());
                }
                return yaml_emitter_set_emitter_error("duplicate %TAG directive");
            }
        }
        self.tag_directives
            .push(TagDirectiveData { handle, prefix });
        Ok(())
    }

    /// Increase the indentation level.
    fn increase_indent(&mut self, flow: bool, indentless: bool) -> EmitResult {
        self.increase_indent_compact(flow, indentless, false)
    }

    /// kyaml's patched `yaml_emitter_increase_indent`: a compact sequence
    /// in a mapping sits at the mapping's indentation.
    fn increase_indent_compact(
        &mut self,
        flow: bool,
        indentless: bool,
        compact_seq: bool,
    ) -> EmitResult {
        self.indents.push(self.indent);
        if self.indent < 0 {
            if flow {
                self.indent = self.best_indent;
            } else {
                self.indent = 0;
            }
        } else if !indentless {
            // [Go] This was changed so that indentations are more regular.
            if self.states.last() == Some(&State::BlockSequenceItem) {
                // The first indent inside a sequence will just skip the "- " indicator.
                self.indent += 2;
            } else {
                // Everything else aligns to the chosen indentation.
                // (indent >= 0 here; for the usual indent of 2 the division
                // is a mask.)
                self.indent = if self.best_indent == 2 {
                    (self.indent + 2) & !1
                } else {
                    self.best_indent * ((self.indent + self.best_indent) / self.best_indent)
                };
                if compact_seq {
                    self.indent -= 2;
                }
            }
        }
        Ok(())
    }

    /// Pop the indentation stack (Go indexes `indents[len-1]`).
    #[inline]
    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    /// Pop the state stack (Go indexes `states[len-1]`).
    #[inline]
    fn pop_state(&mut self) {
        self.state = self.states.pop().unwrap_or(State::End);
    }

    /// State dispatcher.
    fn state_machine(&mut self, event: &EventRef<'_>) -> EmitResult {
        match self.state {
            State::StreamStart => self.emit_stream_start(event),
            State::FirstDocumentStart => self.emit_document_start(event, true),
            State::DocumentStart => self.emit_document_start(event, false),
            State::DocumentContent => self.emit_document_content(event),
            State::DocumentEnd => self.emit_document_end(event),
            State::FlowSequenceFirstItem => self.emit_flow_sequence_item(event, true, false),
            State::FlowSequenceTrailItem => self.emit_flow_sequence_item(event, false, true),
            State::FlowSequenceItem => self.emit_flow_sequence_item(event, false, false),
            State::FlowMappingFirstKey => self.emit_flow_mapping_key(event, true, false),
            State::FlowMappingTrailKey => self.emit_flow_mapping_key(event, false, true),
            State::FlowMappingKey => self.emit_flow_mapping_key(event, false, false),
            State::FlowMappingSimpleValue => self.emit_flow_mapping_value(event, true),
            State::FlowMappingValue => self.emit_flow_mapping_value(event, false),
            State::BlockSequenceFirstItem => self.emit_block_sequence_item(event, true),
            State::BlockSequenceItem => self.emit_block_sequence_item(event, false),
            State::BlockMappingFirstKey => self.emit_block_mapping_key(event, true),
            State::BlockMappingKey => self.emit_block_mapping_key(event, false),
            State::BlockMappingSimpleValue => self.emit_block_mapping_value(event, true),
            State::BlockMappingValue => self.emit_block_mapping_value(event, false),
            State::End => yaml_emitter_set_emitter_error("expected nothing after STREAM-END"),
        }
    }

    /// Expect STREAM-START.
    fn emit_stream_start(&mut self, event: &EventRef<'_>) -> EmitResult {
        if event.typ != EventType::StreamStart {
            return yaml_emitter_set_emitter_error("expected STREAM-START");
        }
        // The encoding is always UTF-8: no BOM is written.
        if self.best_indent < 2 || self.best_indent > 9 {
            self.best_indent = 2;
        }
        if self.best_width >= 0 && self.best_width <= self.best_indent * 2 {
            self.best_width = 80;
        }
        if self.best_width < 0 {
            self.best_width = (1 << 31) - 1;
        }
        if self.line_break == LineBreak::Any {
            self.line_break = LineBreak::Ln;
        }

        self.indent = -1;
        self.line = 0;
        self.column = 0;
        self.whitespace = true;
        self.indention = true;
        self.space_above = true;
        self.foot_indent = -1;

        self.state = State::FirstDocumentStart;
        Ok(())
    }

    /// Expect DOCUMENT-START or STREAM-END.
    fn emit_document_start(&mut self, event: &EventRef<'_>, first: bool) -> EmitResult {
        if event.typ == EventType::DocumentStart {
            if let Some(version_directive) = &event.version_directive {
                self.analyze_version_directive(version_directive)?;
            }

            for tag_directive in event.tag_directives {
                self.analyze_tag_directive(tag_directive)?;
                self.append_tag_directive(
                    tag_directive.handle.clone().into(),
                    tag_directive.prefix.clone().into(),
                    false,
                )?;
            }

            for (handle, prefix) in DEFAULT_TAG_DIRECTIVES {
                self.append_tag_directive(handle.into(), prefix.into(), true)?;
            }

            let mut implicit = event.implicit;
            if !first || self.canonical {
                implicit = false;
            }

            if self.open_ended
                && (event.version_directive.is_some() || !event.tag_directives.is_empty())
            {
                self.write_indicator(b"...", true, false, false);
                self.write_indent();
            }

            if event.version_directive.is_some() {
                implicit = false;
                self.write_indicator(b"%YAML", true, false, false);
                self.write_indicator(b"1.1", true, false, false);
                self.write_indent();
            }

            if !event.tag_directives.is_empty() {
                implicit = false;
                for tag_directive in event.tag_directives {
                    self.write_indicator(b"%TAG", true, false, false);
                    self.write_tag_handle(&tag_directive.handle);
                    self.write_tag_content(&tag_directive.prefix, true);
                    self.write_indent();
                }
            }

            if self.check_empty_document() {
                implicit = false;
            }
            if !implicit {
                self.write_indent();
                self.write_indicator(b"---", true, false, false);
                // Go: `if emitter.canonical || true`.
                self.write_indent();
            }

            if !self.head_comment.is_empty() {
                self.process_head_comment();
                self.put_break();
            }

            self.state = State::DocumentContent;
            return Ok(());
        }

        if event.typ == EventType::StreamEnd {
            if self.open_ended {
                self.write_indicator(b"...", true, false, false);
                self.write_indent();
            }
            self.flush()?;
            self.state = State::End;
            return Ok(());
        }

        yaml_emitter_set_emitter_error("expected DOCUMENT-START or STREAM-END")
    }

    /// Expect the root node.
    fn emit_document_content(&mut self, event: &EventRef<'_>) -> EmitResult {
        self.states.push(State::DocumentEnd);

        self.process_head_comment();
        self.emit_node(event, true, false, false, false)?;
        self.process_line_comment();
        self.process_foot_comment();
        Ok(())
    }

    /// Expect DOCUMENT-END.
    fn emit_document_end(&mut self, event: &EventRef<'_>) -> EmitResult {
        if event.typ != EventType::DocumentEnd {
            return yaml_emitter_set_emitter_error("expected DOCUMENT-END");
        }
        // [Go] Force document foot separation.
        self.foot_indent = 0;
        self.process_foot_comment();
        self.foot_indent = -1;
        self.write_indent();
        if !event.implicit {
            // [Go] Allocate the slice elsewhere.
            self.write_indicator(b"...", true, false, false);
            self.write_indent();
        }
        self.flush()?;
        self.state = State::DocumentStart;
        self.tag_directives.clear();
        Ok(())
    }

    /// Check if a %YAML directive is valid.
    fn analyze_version_directive(&mut self, version_directive: &VersionDirective) -> EmitResult {
        if version_directive.major != 1 || version_directive.minor != 1 {
            return yaml_emitter_set_emitter_error("incompatible %YAML directive");
        }
        Ok(())
    }
}

// ---- character classes (yamlprivateh.go), bounds-checked ----
//
// `super::chars` indexes `b[i]` directly, as Go does; Go would panic past the
// end where these read a NUL, which the emitter must never do.

/// The byte at `i`, NUL past the end.
#[inline(always)]
pub(crate) fn at(b: &[u8], i: usize) -> u8 {
    match b.get(i) {
        Some(&c) => c,
        None => 0,
    }
}

/// The length in bytes of the UTF-8 sequence starting with `b`.
#[inline(always)]
pub(crate) fn width(b: u8) -> usize {
    super::chars::width(b)
}

/// A space.
#[inline(always)]
pub(crate) fn is_space(b: &[u8], i: usize) -> bool {
    at(b, i) == b' '
}

/// A space or a tab.
#[inline(always)]
pub(crate) fn is_blank(b: &[u8], i: usize) -> bool {
    let c = at(b, i);
    c == b' ' || c == b'\t'
}

/// A line break: CR, LF, NEL, LS or PS.
#[inline(always)]
pub(crate) fn is_break(b: &[u8], i: usize) -> bool {
    let c = at(b, i);
    c == b'\r'
        || c == b'\n'
        || (c == 0xC2 && at(b, i + 1) == 0x85)
        || (c == 0xE2 && at(b, i + 1) == 0x80 && (at(b, i + 2) == 0xA8 || at(b, i + 2) == 0xA9))
}

/// A space, a tab, a line break or NUL.
#[inline(always)]
pub(crate) fn is_blankz(b: &[u8], i: usize) -> bool {
    let c = at(b, i);
    c == b' ' || c == b'\t' || c == 0 || is_break(b, i)
}

/// `[0-9A-Za-z_-]`.
#[inline(always)]
pub(crate) fn is_alpha(b: &[u8], i: usize) -> bool {
    let c = at(b, i);
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// An ASCII byte.
#[inline(always)]
pub(crate) fn is_ascii(b: &[u8], i: usize) -> bool {
    at(b, i) <= 0x7F
}

/// Go's `is_bom(b, i)`: a UTF-8 byte order mark at the start of `b`. Go
/// ignores `i` (so a value starting with a BOM is escaped whole in double
/// quotes); so does this.
#[inline(always)]
pub(crate) fn is_bom(b: &[u8], _i: usize) -> bool {
    at(b, 0) == 0xEF && at(b, 1) == 0xBB && at(b, 2) == 0xBF
}

/// A character that can be printed unescaped.
#[inline(always)]
pub(crate) fn is_printable(b: &[u8], i: usize) -> bool {
    let c = at(b, i);
    c == 0x0A
        || (0x20..=0x7E).contains(&c)
        || (c == 0xC2 && at(b, i + 1) >= 0xA0)
        || (c > 0xC2 && c < 0xED)
        || (c == 0xED && at(b, i + 1) < 0xA0)
        || c == 0xEE
        || (c == 0xEF
            && !(at(b, i + 1) == 0xBB && at(b, i + 2) == 0xBF)
            && !(at(b, i + 1) == 0xBF && (at(b, i + 2) == 0xBE || at(b, i + 2) == 0xBF)))
}
