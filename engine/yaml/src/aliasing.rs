//! go-yaml v3's guard against alias bombs ("billion laughs"): a decoder
//! that expands aliases counts every node it decodes and every one it
//! decodes inside an alias, and gives up with `document contains excessive
//! aliasing` once aliases make up too large a share (`decode.go`,
//! `allowedAliasRatio`). A 420-byte document of nine anchors, each a list
//! of nine aliases to the one before, expands to 387 million nodes; this
//! stops it after a few hundred.

/// The error go-yaml gives (its `failf` adds the `yaml: ` prefix).
pub const EXCESSIVE_ALIASING: &str = "yaml: document contains excessive aliasing";

/// The error when expanded aliases nest deeper than [`MAX_DEPTH`].
pub const TOO_DEEP: &str = "yaml: aliases expand to more than 25000 nested levels";

/// How deep an expansion may nest. A parsed tree nests at most 10,000
/// flow levels inside 10,000 block indents (the scanner's limits), so only
/// aliases placed inside deep anchors reach this; Go's growable stack
/// follows them, a thread's fixed stack could not (`par::stack_size`).
pub const MAX_DEPTH: u32 = 25_000;

const RATIO_RANGE_LOW: u64 = 400_000;
const RATIO_RANGE_HIGH: u64 = 4_000_000;

/// One decode's counts: nodes decoded, and nodes decoded inside an alias.
#[derive(Debug, Default)]
pub struct AliasBudget {
    decoded: u64,
    aliased: u64,
    depth: u32,
    nesting: u32,
}

impl AliasBudget {
    /// Counts one node decoded (go-yaml's `d.unmarshal`); the error once
    /// aliases take too large a share.
    pub fn decode(&mut self) -> Result<(), &'static str> {
        self.decoded += 1;
        if self.depth > 0 {
            self.aliased += 1;
        }
        let excessive = self.aliased > 100
            && self.decoded > 1000
            && self.aliased as f64 / self.decoded as f64 > allowed_ratio(self.decoded);
        if excessive {
            return Err(EXCESSIVE_ALIASING);
        }
        Ok(())
    }

    /// The decode goes one level deeper; the error past [`MAX_DEPTH`].
    pub fn descend(&mut self) -> Result<(), &'static str> {
        self.nesting += 1;
        if self.nesting > MAX_DEPTH {
            return Err(TOO_DEEP);
        }
        Ok(())
    }

    /// The decode comes back up a level.
    pub fn ascend(&mut self) {
        self.nesting = self.nesting.saturating_sub(1);
    }

    /// An alias is being followed (go-yaml's `d.aliasDepth++`).
    pub fn enter(&mut self) {
        self.depth += 1;
    }

    /// The alias followed last is done.
    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}

/// go-yaml's `allowedAliasRatio`: 99 % of a small document may come from
/// aliases, 10 % of a very large one, scaled between.
fn allowed_ratio(decoded: u64) -> f64 {
    if decoded <= RATIO_RANGE_LOW {
        0.99
    } else if decoded >= RATIO_RANGE_HIGH {
        0.10
    } else {
        let range = (RATIO_RANGE_HIGH - RATIO_RANGE_LOW) as f64;
        0.99 - 0.89 * ((decoded - RATIO_RANGE_LOW) as f64 / range)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A decode of `nodes` nodes, `aliased` of them inside aliases.
    fn run(nodes: u64, aliased: u64) -> Result<(), &'static str> {
        let mut budget = AliasBudget::default();
        for i in 0..nodes {
            if i == nodes - aliased {
                budget.enter();
            }
            budget.decode()?;
        }
        Ok(())
    }

    #[test]
    fn small_documents_may_be_mostly_aliases() {
        assert!(run(1000, 990).is_ok());
        assert!(
            run(500, 499).is_ok(),
            "1000 nodes at least before the check"
        );
    }

    #[test]
    fn a_bomb_is_stopped_early() {
        let mut budget = AliasBudget::default();
        budget.enter();
        let stopped = (0..u64::MAX).find(|_| budget.decode().is_err());
        assert_eq!(stopped, Some(1000), "the first count past 1000 nodes");
    }

    #[test]
    fn nesting_is_bounded() {
        let mut budget = AliasBudget::default();
        for _ in 0..MAX_DEPTH {
            budget.descend().unwrap();
        }
        assert_eq!(budget.descend(), Err(TOO_DEEP));
        budget.ascend();
        budget.ascend();
        assert_eq!(budget.descend(), Ok(()));
    }

    #[test]
    fn large_documents_may_be_a_tenth_aliases() {
        assert!(run(5_000_000, 400_000).is_ok());
        assert_eq!(run(5_000_000, 600_000), Err(EXCESSIVE_ALIASING));
    }
}
