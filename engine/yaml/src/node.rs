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
#[derive(Clone, Debug, Default)]
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
    /// Children: the root of a document, the items of a sequence, or keys
    /// and values alternating in a mapping.
    pub content: Vec<Node>,
    /// 1-based line in the source, 0 for nodes built in memory.
    pub line: u32,
    /// 1-based column in the source, 0 for nodes built in memory.
    pub column: u32,
    /// The anchor and comments, read and set through the accessors. Most
    /// nodes have none, and a render holds millions of nodes: apart, they
    /// keep a node at half the size. Public only so that other crates can
    /// build a node with `..Node::default()`.
    pub extras: Option<Box<Extras>>,
}

/// What few nodes have (see [`Node`]'s accessors).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extras {
    anchor: CompactString,
    head_comment: CompactString,
    line_comment: CompactString,
    foot_comment: CompactString,
}

static NO_EXTRAS: Extras = Extras {
    anchor: CompactString::const_new(""),
    head_comment: CompactString::const_new(""),
    line_comment: CompactString::const_new(""),
    foot_comment: CompactString::const_new(""),
};

/// Equal nodes hold the same things; an empty extra and none are alike.
impl PartialEq for Node {
    fn eq(&self, other: &Node) -> bool {
        self.kind == other.kind
            && self.style == other.style
            && self.tag == other.tag
            && self.value == other.value
            && self.line == other.line
            && self.column == other.column
            && self.extras() == other.extras()
            && self.content == other.content
    }
}

impl Eq for Node {}

// What the extras are apart for (and u32 positions): a node of 96 bytes, not 192.
const _: () = assert!(std::mem::size_of::<Node>() <= 96);

/// The getter, mutable getter, setter and taker of one of [`Extras`]' strings.
macro_rules! extra {
    ($field:ident, $mut:ident, $set:ident, $take:ident, $doc:literal) => {
        #[doc = $doc]
        pub fn $field(&self) -> &CompactString {
            &self.extras().$field
        }

        #[doc = concat!("Mutable [`Node::", stringify!($field), "`].")]
        pub fn $mut(&mut self) -> &mut CompactString {
            &mut self.extras.get_or_insert_with(Box::default).$field
        }

        #[doc = concat!("Sets [`Node::", stringify!($field), "`].")]
        pub fn $set(&mut self, value: impl Into<CompactString>) {
            let value = value.into();
            if !value.is_empty() || self.extras.is_some() {
                *self.$mut() = value;
            }
        }

        #[doc = concat!("Takes [`Node::", stringify!($field), "`], leaving it empty.")]
        pub fn $take(&mut self) -> CompactString {
            match &mut self.extras {
                Some(extras) => std::mem::take(&mut extras.$field),
                None => CompactString::default(),
            }
        }
    };
}

impl Node {
    /// Whether the node may have an anchor or a comment: `false` is
    /// certain, and spares reading the four of them.
    pub fn has_extras(&self) -> bool {
        self.extras.is_some()
    }

    fn extras(&self) -> &Extras {
        self.extras.as_deref().unwrap_or(&NO_EXTRAS)
    }

    extra!(
        anchor,
        anchor_mut,
        set_anchor,
        take_anchor,
        "Anchor defined on this node (`&name`), empty if none."
    );
    extra!(
        head_comment,
        head_comment_mut,
        set_head_comment,
        take_head_comment,
        "Comment lines directly above the node, with their `#`."
    );
    extra!(
        line_comment,
        line_comment_mut,
        set_line_comment,
        take_line_comment,
        "Comment at the end of the node's line, with its `#`."
    );
    extra!(
        foot_comment,
        foot_comment_mut,
        set_foot_comment,
        take_foot_comment,
        "Comment lines below the node, with their `#`."
    );
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
