//! The document model: an owned tree of YAML nodes that keeps everything kpt
//! keeps — head, line and foot comments, scalar style, block/flow style, tags,
//! anchors and aliases, and source positions. It is go-yaml v3's `Node`, so
//! that the parser and emitter ported from go-yaml produce and consume exactly
//! what kyaml (and therefore kpt) sees.

use compact_str::CompactString;

/// What a node is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A document: one child, the root value.
    #[default]
    Document,
    /// A sequence: children are the items.
    Sequence,
    /// A mapping: children alternate key, value.
    Mapping,
    /// A scalar: `value` holds the unquoted, unescaped text.
    Scalar,
    /// An alias (`*name`): `value` holds the anchor name it refers to.
    Alias,
}

/// Presentation flags (go-yaml's `Style`), combined as a bit set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Style(pub u8);

impl Style {
    /// No flag: plain scalar, block collection.
    pub const NONE: Style = Style(0);
    /// The tag is written explicitly (`!!str 123`).
    pub const TAGGED: Style = Style(1);
    /// `"double quoted"`.
    pub const DOUBLE_QUOTED: Style = Style(1 << 1);
    /// `'single quoted'`.
    pub const SINGLE_QUOTED: Style = Style(1 << 2);
    /// `|` literal block scalar.
    pub const LITERAL: Style = Style(1 << 3);
    /// `>` folded block scalar.
    pub const FOLDED: Style = Style(1 << 4);
    /// Flow collection (`[..]`, `{..}`).
    pub const FLOW: Style = Style(1 << 5);

    /// Whether any flag of `other` is set.
    pub fn has(self, other: Style) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether the scalar is quoted or a block scalar (any non-plain style).
    pub fn is_non_plain_scalar(self) -> bool {
        self.has(Style(
            Style::DOUBLE_QUOTED.0 | Style::SINGLE_QUOTED.0 | Style::LITERAL.0 | Style::FOLDED.0,
        ))
    }
}

impl std::ops::BitOr for Style {
    type Output = Style;
    fn bitor(self, rhs: Style) -> Style {
        Style(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for Style {
    fn bitor_assign(&mut self, rhs: Style) {
        self.0 |= rhs.0;
    }
}

/// Short tags go-yaml uses.
pub mod tag {
    /// `!!null`.
    pub const NULL: &str = "!!null";
    /// `!!bool`.
    pub const BOOL: &str = "!!bool";
    /// `!!str`.
    pub const STR: &str = "!!str";
    /// `!!int`.
    pub const INT: &str = "!!int";
    /// `!!float`.
    pub const FLOAT: &str = "!!float";
    /// `!!timestamp`.
    pub const TIMESTAMP: &str = "!!timestamp";
    /// `!!seq`.
    pub const SEQ: &str = "!!seq";
    /// `!!map`.
    pub const MAP: &str = "!!map";
    /// `!!binary`.
    pub const BINARY: &str = "!!binary";
    /// `!!merge` (the `<<` key).
    pub const MERGE: &str = "!!merge";
}

/// One node of a YAML document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Node {
    /// What the node is.
    pub kind: Kind,
    /// Presentation flags.
    pub style: Style,
    /// Short tag (`!!str`, `!!map`, `!custom`). After parsing it is always
    /// the resolved tag, even when the source had none.
    pub tag: CompactString,
    /// Scalar text, or the anchor name an alias refers to.
    pub value: CompactString,
    /// Anchor defined on this node (`&name`), empty if none.
    pub anchor: CompactString,
    /// Children: the root of a document, the items of a sequence, or keys
    /// and values alternating in a mapping.
    pub content: Vec<Node>,
    /// Comment lines directly above the node, with their `#`.
    pub head_comment: CompactString,
    /// Comment at the end of the node's line, with its `#`.
    pub line_comment: CompactString,
    /// Comment lines below the node, with their `#`.
    pub foot_comment: CompactString,
    /// 1-based line in the source, 0 for nodes built in memory.
    pub line: usize,
    /// 1-based column in the source, 0 for nodes built in memory.
    pub column: usize,
}

impl Node {
    /// A node of `kind` with everything else empty.
    pub fn new(kind: Kind) -> Node {
        Node {
            kind,
            ..Node::default()
        }
    }

    /// A plain `!!str` scalar.
    pub fn string(value: impl Into<CompactString>) -> Node {
        Node {
            kind: Kind::Scalar,
            tag: tag::STR.into(),
            value: value.into(),
            ..Node::default()
        }
    }

    /// An empty block mapping.
    pub fn mapping() -> Node {
        Node {
            kind: Kind::Mapping,
            tag: tag::MAP.into(),
            ..Node::default()
        }
    }

    /// An empty block sequence.
    pub fn sequence() -> Node {
        Node {
            kind: Kind::Sequence,
            tag: tag::SEQ.into(),
            ..Node::default()
        }
    }

    /// A document wrapping `root`.
    pub fn document(root: Node) -> Node {
        Node {
            kind: Kind::Document,
            content: vec![root],
            ..Node::default()
        }
    }

    /// Whether the scalar is a string by tag or by its quoting
    /// (go-yaml's `indicatedString`).
    pub fn indicated_string(&self) -> bool {
        self.kind == Kind::Scalar
            && (short_tag(&self.tag) == tag::STR
                || ((self.tag.is_empty() || self.tag == "!") && self.style.is_non_plain_scalar()))
    }
}

/// The short form of a tag: `tag:yaml.org,2002:str` becomes `!!str`.
pub fn short_tag(tag: &str) -> std::borrow::Cow<'_, str> {
    const LONG_PREFIX: &str = "tag:yaml.org,2002:";
    match tag.strip_prefix(LONG_PREFIX) {
        Some(rest) => std::borrow::Cow::Owned(format!("!!{rest}")),
        None => std::borrow::Cow::Borrowed(tag),
    }
}

/// The long form of a tag: `!!str` becomes `tag:yaml.org,2002:str`.
pub fn long_tag(tag: &str) -> std::borrow::Cow<'_, str> {
    match tag.strip_prefix("!!") {
        Some(rest) => std::borrow::Cow::Owned(format!("tag:yaml.org,2002:{rest}")),
        None => std::borrow::Cow::Borrowed(tag),
    }
}
