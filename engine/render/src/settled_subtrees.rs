//! Subtree records for the tree an in-place render left.
//!
//! A render that rewrites a subtree's files (a tree not yet in kpt's
//! format, as after a first render) leaves a tree whose subtree keys no
//! record has, so the next render would run every pipeline again, though
//! rendering that tree gives what this render gave: pipelines are
//! idempotent (the contract of the whole-render fixed point,
//! [`super::shortcut::record`]). So each subtree the render changed gets
//! its record again under the key of its files as written, when:
//!
//! - the render changed files in it but added or removed none (the record
//!   lists the files its resources came from);
//! - it changed no Kptfile's pipeline (a function that rewrites one makes
//!   another pipeline, whose log is not the record's);
//! - no file in it holds a comment kpt moves on every render
//!   (`render::unsettled`): such a subtree is no fixed point.
//!
//! The cli calls [`record`] where it records the whole render, so never
//! after a failure, with files kept because they changed during the
//! render, or with `--verify` finding a difference.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use rayon::prelude::*;

use krmgraph_cache::Store;

use super::shortcut::{is_kptfile, Entry, Identities, Snapshot};
use super::stepcache::{base_digest, file_keys, SubtreeKeys};
use super::unsettled::may_be_unsettled;
use crate::RenderOptions;

/// Records, for each package under `root` (absolute, cleaned) whose
/// subtree the render of `before` changed into `after` as the module doc
/// says, the record of its subtree in `before` under its key in `after`.
/// Returns how many it recorded.
pub fn record(
    store: &dyn Store,
    root: &Path,
    options: &RenderOptions,
    before: &Snapshot,
    after: &Snapshot,
) -> krmgraph_cache::Result<usize> {
    let runner = &options.runner;
    // The root is left out: a tree equal to `after` is the whole render's
    // fixed point already.
    let rewritten: Vec<String> = package_dirs(after)
        .into_iter()
        .filter(|rel| !rel.is_empty() && rewritten(before, after, rel))
        .collect();
    if rewritten.is_empty() {
        return Ok(0);
    }
    let unsettled = unsettled_under(after, &rewritten);
    let base = base_digest(options);
    let identities = Identities::new(runner);
    let (before_files, after_files) = (file_keys(before), file_keys(after));
    let was_keys = SubtreeKeys {
        base: &base,
        files: &before_files,
        snapshot: before,
        identities: &identities,
    };
    let now_keys = SubtreeKeys {
        files: &after_files,
        snapshot: after,
        ..was_keys
    };
    let root_parent = root.parent().unwrap_or(root);
    let mut recorded = 0;
    for rel in rewritten.iter().filter(|rel| !holds_any(&unsettled, rel)) {
        let display_path = krmgraph_package::display_path(&root.join(rel), root_parent);
        let (Some(was), Some(now)) = (
            was_keys.key(rel, &display_path),
            now_keys.key(rel, &display_path),
        ) else {
            continue;
        };
        if was == now || store.peek_step(&now)?.is_some() {
            continue;
        }
        if let Some(record) = store.peek_step(&was)? {
            store.put_step(&now, &record)?;
            recorded += 1;
        }
    }
    Ok(recorded)
}

/// The root-relative directories of the Kptfiles of `tree` (empty for the
/// root).
fn package_dirs(tree: &Snapshot) -> Vec<String> {
    tree.entries()
        .keys()
        .filter(|path| is_kptfile(path))
        .map(|path| match path.rsplit_once('/') {
            Some((dir, _)) => dir.to_string(),
            None => String::new(),
        })
        .collect()
}

/// Whether the render changed files of the subtree at `rel` (not the
/// root), but no Kptfile's pipeline, and added or removed none.
fn rewritten(before: &Snapshot, after: &Snapshot, rel: &str) -> bool {
    let prefix = format!("{rel}/");
    let (was, now) = (under(before, &prefix), under(after, &prefix));
    let same_files = was.len() == now.len() && was.iter().zip(&now).all(|(a, b)| a.0 == b.0);
    let same_kptfiles = was
        .iter()
        .zip(&now)
        .all(|(a, b)| !is_kptfile(a.0) || same_pipeline(a.1, b.1));
    same_files && same_kptfiles && was.iter().zip(&now).any(|(a, b)| a.1 != b.1)
}

/// Whether a Kptfile that was `was` and is `now` names the same pipeline:
/// both decode, to the same functions.
fn same_pipeline(was: &Entry, now: &Entry) -> bool {
    let pipeline = |entry: &Entry| match entry {
        Entry::File(bytes) => krmgraph_package::kptfile::parse(Path::new(""), bytes)
            .ok()
            .map(|k| k.pipeline),
        Entry::Link(_) => None,
    };
    was == now || pipeline(was).is_some_and(|p| Some(p) == pipeline(now))
}

/// The files of `tree` in the subtrees at `dirs` that may hold a comment
/// kpt moves ([`may_be_unsettled`]), each checked once, on the pool.
fn unsettled_under(tree: &Snapshot, dirs: &[String]) -> BTreeSet<String> {
    let dirs: HashSet<&str> = dirs.iter().map(String::as_str).collect();
    let in_dirs = |path: &str| {
        path.match_indices('/')
            .any(|(at, _)| dirs.contains(&path[..at]))
    };
    tree.entries()
        .par_iter()
        .filter(|(path, entry)| in_dirs(path) && may_be_unsettled(path, entry))
        .map(|(path, _)| path.clone())
        .collect()
}

/// Whether a path of `paths` is in the subtree at `rel` (not the root).
fn holds_any(paths: &BTreeSet<String>, rel: &str) -> bool {
    let prefix = format!("{rel}/");
    paths
        .range(prefix.clone()..)
        .next()
        .is_some_and(|path| path.starts_with(&prefix))
}

/// The entries of `tree` whose paths start with `prefix`.
fn under<'t>(tree: &'t Snapshot, prefix: &str) -> Vec<(&'t String, &'t Entry)> {
    tree.entries()
        .range(prefix.to_string()..)
        .take_while(|(path, _)| path.starts_with(prefix))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn tree(files: &[(&str, &str)]) -> Snapshot {
        Snapshot::new(
            files
                .iter()
                .map(|(path, text)| {
                    (
                        path.to_string(),
                        Entry::File(Arc::new(text.as_bytes().to_vec())),
                    )
                })
                .collect(),
        )
    }

    const KPTFILE_MARK: &str = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: k\npipeline:\n  mutators:\n    - exec: sed s/MARK/marked/\n";

    #[test]
    fn only_rewritten_settled_subtrees_with_the_same_files() {
        let before = tree(&[
            ("Kptfile", "k"),
            ("a/Kptfile", "k"),
            ("a/cm.yaml", "a:    1\n"),
            ("b/Kptfile", "k"),
            ("b/cm.yaml", "b: 1\n"),
            ("c/Kptfile", "k"),
            ("c/cm.yaml", "c:    1\n"),
            ("d/Kptfile", "k"),
            ("d/cm.yaml", "d:    1\n"),
            ("e/Kptfile", KPTFILE_MARK),
            ("e/cm.yaml", "e:    1\n"),
            ("f/Kptfile", KPTFILE_MARK),
            ("f/cm.yaml", "f:    1\n"),
        ]);
        let after = tree(&[
            ("Kptfile", "k"),
            ("a/Kptfile", "k"),
            // Rewritten: settled.
            ("a/cm.yaml", "a: 1\n"),
            ("b/Kptfile", "k"),
            // Not changed: its record's key is the same.
            ("b/cm.yaml", "b: 1\n"),
            ("c/Kptfile", "k"),
            // Rewritten, with a foot comment kpt moves on every render.
            ("c/cm.yaml", "c:\n  x: 1\n# foot\n"),
            ("d/Kptfile", "k"),
            // Rewritten, and a file added.
            ("d/cm.yaml", "d: 1\n"),
            ("d/more.yaml", "e: 1\n"),
            // Rewritten, its Kptfile's pipeline too.
            ("e/Kptfile", &KPTFILE_MARK.replace("MARK", "marked")),
            ("e/cm.yaml", "e: 1\n"),
            // Rewritten, its Kptfile's labels too (not its pipeline).
            (
                "f/Kptfile",
                &KPTFILE_MARK.replace("  name: k\n", "  name: k\n  labels: {a: b}\n"),
            ),
            ("f/cm.yaml", "f: 1\n"),
        ]);
        let dirs: Vec<String> = ["a", "b", "c", "d", "e", "f"].map(String::from).to_vec();
        let rewritten_at: Vec<&String> = dirs
            .iter()
            .filter(|d| rewritten(&before, &after, d))
            .collect();
        assert_eq!(rewritten_at, ["a", "c", "f"]);
        let unsettled = unsettled_under(&after, &dirs);
        assert_eq!(unsettled.iter().collect::<Vec<_>>(), ["c/cm.yaml"]);
        assert!(!holds_any(&unsettled, "a"));
        assert!(holds_any(&unsettled, "c"));
        assert!(unsettled_under(&after, &["a".to_string()]).is_empty());
        assert_eq!(package_dirs(&after), ["", "a", "b", "c", "d", "e", "f"]);
    }
}
