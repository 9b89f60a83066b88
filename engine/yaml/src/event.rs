//! Marks, styles and events: the vocabulary shared by the parser (which
//! produces events) and the emitter (which consumes them). A port of the
//! event half of go-yaml v3's `yamlh.go`; field names follow the Go source so
//! the ported state machines read line for line against it.
//!
//! Two event types: [`Event`] owns its payloads (the parser makes them, and
//! they outlive the input), and [`EventRef`] borrows them (the emitter
//! consumes these: the encoder points them into the `Node` tree it walks,
//! so writing a node costs no copy of its text, comments or anchor).

use std::borrow::Cow;

/// A position in the input: byte offset, 0-based line and 0-based column
/// (columns count characters, as go-yaml does).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mark {
    /// Offset from the start of the input in characters (go-yaml counts
    /// characters, not bytes; comment attribution compares these).
    pub index: usize,
    /// 0-based line.
    pub line: usize,
    /// 0-based column, in characters.
    pub column: usize,
}

/// `%YAML major.minor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VersionDirective {
    /// Major version.
    pub major: i8,
    /// Minor version.
    pub minor: i8,
}

/// `%TAG handle prefix`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TagDirective {
    /// The tag handle, e.g. `!e!`.
    pub handle: Vec<u8>,
    /// The tag prefix, e.g. `tag:example.com,2000:`.
    pub prefix: Vec<u8>,
}

/// Scalar styles (`yaml_scalar_style_t`): bit values as in go-yaml.
pub mod scalar_style {
    /// Let the emitter choose.
    pub const ANY: u8 = 0;
    /// Plain.
    pub const PLAIN: u8 = 1 << 1;
    /// `'single quoted'`.
    pub const SINGLE_QUOTED: u8 = 1 << 2;
    /// `"double quoted"`.
    pub const DOUBLE_QUOTED: u8 = 1 << 3;
    /// `|` literal block.
    pub const LITERAL: u8 = 1 << 4;
    /// `>` folded block.
    pub const FOLDED: u8 = 1 << 5;
}

/// Sequence and mapping styles (`yaml_sequence_style_t`,
/// `yaml_mapping_style_t`; both use the same values).
pub mod collection_style {
    /// Let the emitter choose.
    pub const ANY: u8 = 0;
    /// Block (indented) style.
    pub const BLOCK: u8 = 1;
    /// Flow (`[...]`, `{...}`) style.
    pub const FLOW: u8 = 2;
}

/// Event types (`yaml_event_type_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EventType {
    /// No event.
    #[default]
    None,
    /// Stream start.
    StreamStart,
    /// Stream end.
    StreamEnd,
    /// Document start.
    DocumentStart,
    /// Document end.
    DocumentEnd,
    /// Alias (`*name`).
    Alias,
    /// Scalar.
    Scalar,
    /// Sequence start.
    SequenceStart,
    /// Sequence end.
    SequenceEnd,
    /// Mapping start.
    MappingStart,
    /// Mapping end.
    MappingEnd,
    /// A foot comment at the end of a block (go-yaml's TAIL_COMMENT event).
    TailComment,
}

impl EventType {
    /// The name go-yaml prints for the event type.
    pub fn name(self) -> &'static str {
        match self {
            EventType::None => "none",
            EventType::StreamStart => "stream start",
            EventType::StreamEnd => "stream end",
            EventType::DocumentStart => "document start",
            EventType::DocumentEnd => "document end",
            EventType::Alias => "alias",
            EventType::Scalar => "scalar",
            EventType::SequenceStart => "sequence start",
            EventType::SequenceEnd => "sequence end",
            EventType::MappingStart => "mapping start",
            EventType::MappingEnd => "mapping end",
            EventType::TailComment => "tail comment",
        }
    }
}

/// One parser/emitter event (`yaml_event_t`). Which fields are meaningful
/// depends on `typ`, exactly as in go-yaml.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Event {
    /// The event type.
    pub typ: EventType,
    /// Where the event starts in the input.
    pub start_mark: Mark,
    /// Where the event ends in the input.
    pub end_mark: Mark,
    /// `%YAML` directive (document start).
    pub version_directive: Option<VersionDirective>,
    /// `%TAG` directives (document start).
    pub tag_directives: Vec<TagDirective>,
    /// Comment lines above the node.
    pub head_comment: Vec<u8>,
    /// Comment at the end of the node's line.
    pub line_comment: Vec<u8>,
    /// Comment lines below the node.
    pub foot_comment: Vec<u8>,
    /// Foot comment at the end of a block.
    pub tail_comment: Vec<u8>,
    /// Anchor name (scalar, collection start, alias).
    pub anchor: Vec<u8>,
    /// Tag (scalar, collection start).
    pub tag: Vec<u8>,
    /// Scalar value.
    pub value: Vec<u8>,
    /// Document start/end indicator implicit, or tag optional.
    pub implicit: bool,
    /// Tag optional for non-plain scalar styles.
    pub quoted_implicit: bool,
    /// Scalar style (`scalar_style::*`) or collection style
    /// (`collection_style::*`).
    pub style: u8,
}

impl Event {
    /// The event with its payloads borrowed, as the emitter reads it.
    pub fn borrowed(&self) -> EventRef<'_> {
        EventRef {
            typ: self.typ,
            version_directive: self.version_directive,
            tag_directives: &self.tag_directives,
            head_comment: &self.head_comment,
            line_comment: &self.line_comment,
            foot_comment: &self.foot_comment,
            tail_comment: &self.tail_comment,
            anchor: &self.anchor,
            tag: Cow::Borrowed(&self.tag),
            value: &self.value,
            implicit: self.implicit,
            quoted_implicit: self.quoted_implicit,
            style: self.style,
        }
    }
}

/// An emitter event whose payloads borrow from the caller: what
/// [`Event`] carries minus the marks, which the emitter never reads. Go
/// passes slices too; an owned event per node would cost an allocation per
/// comment and a few hundred bytes of moves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventRef<'a> {
    /// The event type.
    pub typ: EventType,
    /// `%YAML` directive (document start).
    pub version_directive: Option<VersionDirective>,
    /// `%TAG` directives (document start).
    pub tag_directives: &'a [TagDirective],
    /// Comment lines above the node.
    pub head_comment: &'a [u8],
    /// Comment at the end of the node's line.
    pub line_comment: &'a [u8],
    /// Comment lines below the node.
    pub foot_comment: &'a [u8],
    /// Foot comment at the end of a block.
    pub tail_comment: &'a [u8],
    /// Anchor name (scalar, collection start, alias).
    pub anchor: &'a [u8],
    /// Tag (scalar, collection start). Owned only when the encoder had to
    /// spell a short tag out (`!!int` is written as its long form).
    pub tag: Cow<'a, [u8]>,
    /// Scalar value.
    pub value: &'a [u8],
    /// Document start/end indicator implicit, or tag optional.
    pub implicit: bool,
    /// Tag optional for non-plain scalar styles.
    pub quoted_implicit: bool,
    /// Scalar style (`scalar_style::*`) or collection style
    /// (`collection_style::*`).
    pub style: u8,
}
