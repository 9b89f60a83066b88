//! The memos a render learns as it goes — items' texts and echoes
//! ([`ItemMemo`]), files' bytes ([`FileMemo`]), per-item built-ins' fixed
//! points ([`FixedPoints`]) — held in one value that whoever renders owns
//! and passes down: a `render` makes one, a `watch` session keeps one
//! across its renders, a test takes a fresh one. None of them changes what
//! a render writes; they only save work (`KRMGRAPH_CHECK_DIRECT=1` checks
//! each against the slow path).

use krmgraph_kyaml::file_memo::FileMemo;
use krmgraph_kyaml::item_memo::ItemMemo;

use crate::builtin::fixed_point::FixedPoints;

/// The memos of one render or one `watch` session.
#[derive(Debug, Default)]
pub struct Memos {
    /// Items' texts in ResourceLists, and how their echoes read back.
    pub items: ItemMemo,
    /// The bytes files were written as.
    pub files: FileMemo,
    /// What per-item built-ins give back unchanged.
    pub fixed_points: FixedPoints,
}

impl Memos {
    /// How many entries the memos learnt that their imports did not give
    /// them (what an export would add).
    pub fn learnt(&self) -> usize {
        self.items.learnt() + self.fixed_points.learnt() + self.files.learnt()
    }
}
