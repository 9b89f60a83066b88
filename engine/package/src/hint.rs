//! What krmgraph adds after kpt's text when something fails: a [`Hint`]
//! says what is wrong in a few words, where (a file, line and column the
//! CLI shows as a source snippet), and what to do. kpt's own message is
//! printed first and unchanged, so scripts written for kpt still match it;
//! the hint is krmgraph's.
//!
//! [`closest`] finds the "did you mean" of a misspelt word (a Kptfile
//! field, a built-in's image name).

use crate::SourcePosition;

/// krmgraph's account of an error, shown after kpt's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hint {
    /// What is wrong, one line, e.g. ``unknown field `mutator` in `pipeline` ``.
    pub message: String,
    /// Where it is; `None` when it cannot be located.
    pub position: Option<SourcePosition>,
    /// How many characters from `position` the label underlines (0: a
    /// caret at the position).
    pub length: usize,
    /// The label at `position`, e.g. `not a field of pipeline`.
    pub label: String,
    /// What to do, e.g. `did you mean "mutators"?`.
    pub help: Option<String>,
}

/// The word of `candidates` nearest to `word` by edit distance (ignoring
/// case), if it is near enough to be a likely misspelling: at most one
/// edit per three characters (at least one), and fewer edits than `word`
/// has characters. The first of equally near candidates wins.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word_lower = word.to_lowercase();
    let length = word.chars().count();
    let limit = (length / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let distance = edit_distance(&word_lower, &candidate.to_lowercase());
        if distance <= limit && distance < length && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("mutator", "mutators"), 1);
        assert_eq!(edit_distance("set-namspace", "set-namespace"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("é", "e"), 1);
    }

    #[test]
    fn suggests_only_near_words() {
        let fields = ["mutators", "validators"];
        assert_eq!(closest("mutator", fields), Some("mutators"));
        assert_eq!(closest("Validators", fields), Some("validators"));
        assert_eq!(closest("mutatrs", fields), Some("mutators"));
        assert_eq!(closest("image", fields), None);
        assert_eq!(
            closest("x", ["y", "xy"]),
            None,
            "one edit is the whole word"
        );
        assert_eq!(closest("", fields), None);
        assert_eq!(
            closest("configmap", ["configPath", "configMap"]),
            Some("configMap")
        );
        assert_eq!(closest("exclusions", ["exclude"]), None);
    }
}
