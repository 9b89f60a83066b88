//! The memos are state a render's owner passes down
//! (`RunnerOptions::memos`), not the process's: renders with memos of
//! their own learn the same things in one process, a render given memos
//! that already know a tree learns nothing, and none of that changes a
//! byte of the output.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use krmgraph_cache::MemoryStore;
use krmgraph_fn::event::RecordingReporter;
use krmgraph_render::{render, Memos, RenderCache, RenderOptions};

use crate::step_cache::{copy_tree, read_tree};

fn tree() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/memos/pkg")
}

/// Renders a fresh copy of the tree in place with `memos` (and a store of
/// its own, so nothing comes from a record); the files it left.
fn render_with(memos: &Arc<Memos>, at: &Path) -> BTreeMap<String, Vec<u8>> {
    copy_tree(&tree(), at);
    let mut options = RenderOptions::default();
    options.runner.allow_exec = true;
    options.runner.memos = Arc::clone(memos);
    // One package at a time, so that no two threads learn the same entry.
    options.jobs = 1;
    options.cache = Some(RenderCache {
        store: Arc::new(MemoryStore::new()),
        snapshot: None,
        verify: false,
        memos: Default::default(),
    });
    let mut reporter = RecordingReporter::default();
    render(at, &options, &mut reporter).unwrap_or_else(|f| panic!("render failed: {}", f.error));
    read_tree(at)
}

#[test]
fn each_render_owns_its_memos() {
    let tmp = tempfile::tempdir().unwrap();
    let first = Arc::new(Memos::default());
    let one = render_with(&first, &tmp.path().join("one"));
    let learnt = first.learnt();
    assert!(
        first.items.learnt() > 0 && first.fixed_points.learnt() > 0 && first.files.learnt() > 0,
        "the tree exercises every memo: {first:?}"
    );

    let second = Arc::new(Memos::default());
    let two = render_with(&second, &tmp.path().join("two"));
    assert_eq!(
        second.learnt(),
        learnt,
        "fresh memos learn what the first render's did: nothing is shared"
    );

    // Memos that know the tree learn nothing more from it where it is (an
    // item's absolute package path, kpt's `package-path` annotation, is
    // part of what they key, so the tree is rendered at one place).
    let three = render_with(&first, &tmp.path().join("three"));
    let settled = first.learnt();
    std::fs::remove_dir_all(tmp.path().join("three")).unwrap();
    let four = render_with(&first, &tmp.path().join("three"));
    assert_eq!(
        first.learnt(),
        settled,
        "memos that know the tree learn nothing more from it: {first:?}"
    );
    assert_eq!(one, four);
    assert_eq!(one, two);
    assert_eq!(one, three);
}
