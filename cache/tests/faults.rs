//! A damaged, foreign or shared cache directory (issue 27 items 6–8 and
//! 10), at the store's level: open errors name their cause, the repairing
//! open, gc, verify and clear deal with what is in the way, blobs are read
//! only at their recorded size and hashed as streams, and a read-only view
//! counts a cache without writing it. `cli/tests/it/cache_faults.rs` runs
//! the same faults through the binary.

use std::fs;
use std::path::{Path, PathBuf};

use krmgraph_cache::{Digest, Error, ReadOnlyView, SledStore, StepRecord, Store};

fn key(n: u32) -> Digest {
    Digest::of(format!("step {n}").as_bytes())
}

fn blob_path(dir: &Path, digest: &Digest) -> PathBuf {
    let hex = digest.to_hex();
    dir.join("blobs").join(&hex[..2]).join(&hex[2..])
}

fn record(store: &dyn Store, n: u32) -> StepRecord {
    let bytes = format!("kind: ConfigMap # {n}\n");
    store
        .record(
            &key(n),
            &krmgraph_cache::RecordKind::new("test", 1),
            &[("resources", bytes.as_bytes())],
            b"",
        )
        .unwrap()
}

/// A closed store in a fresh directory holding `steps` records.
fn filled(steps: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    for n in 0..steps {
        record(&store, n);
    }
    store.mark(&key(0)).unwrap();
    dir
}

/// A damage, what it does to a directory, and the cause its error names
/// (`{D}` is the directory).
type Case = (&'static str, fn(&Path), String);

/// The OS's message for `code`, as std prints it.
fn os(code: i32) -> String {
    std::io::Error::from_raw_os_error(code).to_string()
}

/// Removes whatever is at `path`, not following a symlink.
fn remove(path: &Path) {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path).unwrap(),
        Ok(_) => fs::remove_file(path).unwrap(),
        Err(_) => {}
    }
}

/// A new, closed, empty cache at `<tmp>/cache`.
fn new_cache(tmp: &Path) -> PathBuf {
    let dir = tmp.join("cache");
    drop(SledStore::open(&dir).unwrap());
    dir
}

#[test]
fn an_open_error_names_the_path_and_the_cause() {
    let cases: [Case; 6] = [
        (
            "blobs",
            |d| {
                remove(&d.join("blobs"));
                fs::write(d.join("blobs"), b"").unwrap()
            },
            "cannot create `{D}/blobs`: a file is in the way, not a directory \
             (`krmgraph cache verify` removes it)"
                .to_owned(),
        ),
        (
            "tmp",
            |d| {
                remove(&d.join("tmp"));
                fs::write(d.join("tmp"), b"").unwrap()
            },
            "cannot create `{D}/tmp`: a file is in the way".to_owned(),
        ),
        (
            "blobs a symlink to a directory",
            |d| {
                remove(&d.join("blobs"));
                fs::create_dir(d.with_extension("elsewhere")).unwrap();
                std::os::unix::fs::symlink(d.with_extension("elsewhere"), d.join("blobs")).unwrap();
            },
            "cannot create `{D}/blobs`: a symbolic link to `{D}.elsewhere` is in the way: \
             the cache follows no links \
             (`krmgraph cache verify` removes the link, not what it leads to)"
                .to_owned(),
        ),
        (
            "lock",
            |d| {
                remove(&d.join("lock"));
                fs::create_dir(d.join("lock")).unwrap()
            },
            "cannot open for writing `{D}/lock`: a directory is in the way, \
             not a regular file (`krmgraph cache verify` removes it)"
                .to_owned(),
        ),
        (
            "lock a symlink to a file",
            |d| {
                remove(&d.join("lock"));
                fs::write(d.with_extension("lock"), b"").unwrap();
                std::os::unix::fs::symlink(d.with_extension("lock"), d.join("lock")).unwrap();
            },
            "cannot open for writing `{D}/lock`: a symbolic link to `{D}.lock` is in the way"
                .to_owned(),
        ),
        (
            "the directory a symlink loop",
            |d| {
                fs::remove_dir_all(d).unwrap();
                std::os::unix::fs::symlink(d, d).unwrap();
            },
            format!("cannot create `{{D}}`: {}", os(40)),
        ),
    ];
    for (what, damage, want) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let dir = new_cache(tmp.path());
        damage(&dir);
        let err = SledStore::open(&dir).unwrap_err();
        assert!(matches!(err, Error::Open { .. }), "{what}: {err:?}");
        let want = want.replace("{D}", &dir.display().to_string());
        let prefix = format!("failed to open the cache `{}`: ", dir.display());
        let message = err.to_string();
        assert!(message.starts_with(&prefix), "{what}: {message}");
        assert!(message.contains(&want), "{what}: {message}\nwanted: {want}");
    }
}

#[test]
fn the_repairing_open_removes_what_is_in_the_way_and_gc_reports_it() {
    let dir = filled(3);
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("precious"), b"keep").unwrap();
    fs::remove_dir_all(dir.path().join("tmp")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("tmp")).unwrap();
    fs::remove_file(dir.path().join("lock")).unwrap();
    fs::create_dir(dir.path().join("lock")).unwrap();
    assert!(
        SledStore::open(dir.path()).is_err(),
        "a render does not repair"
    );

    let store = SledStore::open_repairing(dir.path()).unwrap();
    let report = store.gc(u64::MAX).unwrap();
    let said: Vec<String> = report.repaired.iter().map(|r| r.to_string()).collect();
    let (d, o) = (dir.path().display(), outside.path().display());
    assert_eq!(
        said,
        [
            format!("removed a directory where the lock file belongs: `{d}/lock`"),
            format!(
                "removed a symbolic link to `{o}` where the `tmp` directory belongs: `{d}/tmp`"
            ),
        ]
    );
    assert_eq!(report.records_removed, 0, "the records survive the repair");
    assert!(store.lookup(&key(2)).unwrap().is_some());
    assert!(outside.path().join("precious").exists(), "never followed");
    assert!(dir.path().join("tmp").is_dir() && !dir.path().join("tmp").is_symlink());
    // Reported once.
    assert!(store.gc(u64::MAX).unwrap().repaired.is_empty());
}

/// Every path under `dir` (not following symlinks) with its kind, size
/// and contents (files), sorted.
fn listing(dir: &Path) -> Vec<(PathBuf, String, Vec<u8>)> {
    let mut all = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let kind = format!("{:?}", meta.file_type());
            let bytes = if meta.is_file() {
                fs::read(&path).unwrap()
            } else {
                Vec::new()
            };
            if meta.is_dir() {
                stack.push(path.clone());
            }
            all.push((path, kind, bytes));
        }
    }
    all.sort();
    all
}

/// Review finding: the repairing open removed what was in the way before
/// it took the store's lock, so gc, verify and clear changed a cache
/// another process had open before failing with `Locked`.
#[test]
fn the_repairing_open_of_a_cache_in_use_changes_nothing() {
    let dir = filled(2);
    let outside = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    // Damage made while the store is open (by hand, say).
    remove(&dir.path().join("tmp"));
    fs::write(dir.path().join("tmp"), b"in the way").unwrap();
    let blobs = dir.path().join("blobs");
    fs::rename(&blobs, outside.path().join("blobs")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("blobs"), &blobs).unwrap();
    let before = (listing(dir.path()), listing(outside.path()));

    let err = SledStore::open_repairing(dir.path()).unwrap_err();
    assert!(matches!(err, Error::Locked { .. }), "{err:?}");
    let after = (listing(dir.path()), listing(outside.path()));
    assert!(after == before, "a cache in use is left as it is");

    drop(store);
    let store = SledStore::open_repairing(dir.path()).unwrap();
    let repaired = store.verify().unwrap().repaired;
    assert_eq!(repaired.len(), 2, "{repaired:?}");
}

/// Review finding: a render worked through a symlinked `blobs/` (writing
/// blobs outside the cache) that gc and verify then removed, orphaning
/// them. The store follows no link in its directory, in every path.
#[test]
fn symlinks_in_the_stores_places_are_refused_by_a_render_too() {
    let dir = filled(2);
    let outside = tempfile::tempdir().unwrap();
    let o = outside.path();
    let d = dir.path();
    // The user moved the blobs to another disk and linked them back.
    fs::rename(d.join("blobs"), o.join("blobs")).unwrap();
    std::os::unix::fs::symlink(o.join("blobs"), d.join("blobs")).unwrap();
    fs::create_dir(o.join("tmp")).unwrap();
    remove(&d.join("tmp"));
    std::os::unix::fs::symlink(o.join("tmp"), d.join("tmp")).unwrap();
    fs::write(o.join("lock"), b"").unwrap();
    remove(&d.join("lock"));
    std::os::unix::fs::symlink(o.join("lock"), d.join("lock")).unwrap();
    let before = listing(o);

    for name in ["lock", "blobs", "tmp"] {
        let err = SledStore::open(d).unwrap_err();
        let message = err.to_string();
        let want = format!(
            "`{}/{name}`: a symbolic link to `{}/{name}` is in the way: the cache follows no links",
            d.display(),
            o.display()
        );
        assert!(message.contains(&want), "{message}\nwanted: {want}");
        assert!(err.is_unavailable());
        // The lock was not taken through the link.
        let target = fs::File::open(o.join(name));
        if name == "lock" {
            target.unwrap().try_lock().unwrap();
        }
        assert_eq!(listing(o), before, "nothing written outside");
        // Let the next open get past this one.
        let kept = d.join(format!("{name}.kept"));
        fs::rename(d.join(name), &kept).unwrap();
        if name != "lock" {
            fs::create_dir(d.join(name)).unwrap();
        }
        if name == "tmp" {
            // Put the links back for the repairing open.
            for name in ["lock", "blobs", "tmp"] {
                remove(&d.join(name));
                fs::rename(d.join(format!("{name}.kept")), d.join(name)).unwrap();
            }
        }
    }

    let store = SledStore::open_repairing(d).unwrap();
    let report = store.verify().unwrap();
    let said: Vec<String> = report.repaired.iter().map(|r| r.reason.clone()).collect();
    let link = |name: &str| format!("a symbolic link to `{}/{name}`", o.display());
    assert_eq!(
        said,
        [
            format!("{} where the lock file belongs", link("lock")),
            format!("{} where the `blobs` directory belongs", link("blobs")),
            format!("{} where the `tmp` directory belongs", link("tmp")),
        ]
    );
    assert_eq!(
        listing(o),
        before,
        "the links' targets are left as they are"
    );
    assert_eq!(
        report.dangling_records.len(),
        2,
        "their blobs are elsewhere"
    );

    // A fan-out directory that is a link is not written through either.
    let content = b"kind: ConfigMap # fan\n";
    let hex = Digest::of(content).to_hex();
    fs::create_dir(o.join("fan")).unwrap();
    std::os::unix::fs::symlink(o.join("fan"), d.join("blobs").join(&hex[..2])).unwrap();
    let err = store.put_blob(content).unwrap_err();
    assert!(
        err.to_string().contains("the cache follows no links"),
        "{err}"
    );
    assert_eq!(fs::read_dir(o.join("fan")).unwrap().count(), 0);
}

/// Review finding: `krmgraph cache verify --cache-dir ~/proj` removed
/// `~/proj/lock` (a directory), and clear emptied `~/proj/tmp` and
/// `~/proj/blobs`; a render filled the directory with a cache and could
/// delete an `index/` it took for a broken index.
#[test]
fn a_directory_that_is_not_a_cache_is_not_used_repaired_or_cleared() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    for sub in ["lock", "tmp", "blobs", "index"] {
        fs::create_dir_all(proj.join(sub)).unwrap();
        fs::write(proj.join(sub).join("notes"), b"the user's").unwrap();
    }
    fs::write(proj.join("marks"), b"the user's").unwrap();
    let before = listing(&proj);
    let want = format!(
        "failed to open the cache `{p}`: `{p}` is not a krmgraph cache: it is not empty \
         and has no `CACHEDIR.TAG` written by krmgraph",
        p = proj.display()
    );
    for tag in [None, Some("cargo")] {
        if let Some(tool) = tag {
            let foreign = format!(
                "Signature: 8a477f597d28d172789f06886806bc55\n\
                 # This file is a cache directory tag created by {tool}.\n"
            );
            fs::write(proj.join("CACHEDIR.TAG"), foreign).unwrap();
        }
        let before = listing(&proj);
        for open in [SledStore::open, SledStore::open_repairing] {
            let err = open(&proj).unwrap_err();
            assert!(err.is_unavailable(), "{err:?}");
            assert!(err.to_string().starts_with(&want), "{err}");
            assert!(listing(&proj) == before, "nothing changed ({tag:?})");
        }
    }
    fs::remove_file(proj.join("CACHEDIR.TAG")).unwrap();
    assert!(listing(&proj) == before);

    // A new or empty directory becomes a cache; then it is one.
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    for dir in [empty, tmp.path().join("new/cache")] {
        let store = SledStore::open_repairing(&dir).unwrap();
        record(&store, 1);
        drop(store);
        let tag = fs::read_to_string(dir.join("CACHEDIR.TAG")).unwrap();
        assert!(tag.starts_with("Signature: 8a477f597d28d172789f06886806bc55\n"));
        let store = SledStore::open(&dir).unwrap();
        assert!(store.lookup(&key(1)).unwrap().is_some());
        store.clear().unwrap();
    }
}

/// Review finding: the read-only view's temp copy guard was made before
/// its directory, so a name already taken (`EEXIST`) had the guard remove
/// a directory the view never made. The names it used then were
/// `krmgraph-index-<pid>-<n>`; they are all taken here, with something in
/// them.
#[test]
fn a_read_only_view_removes_no_temp_directory_it_did_not_make() {
    struct Taken(Vec<PathBuf>);
    impl Drop for Taken {
        fn drop(&mut self) {
            for dir in &self.0 {
                let _ = fs::remove_dir_all(dir);
            }
        }
    }
    let pid = std::process::id();
    let taken = Taken(
        (0..64)
            .map(|n| std::env::temp_dir().join(format!("krmgraph-index-{pid}-{n}")))
            .collect(),
    );
    for dir in &taken.0 {
        fs::create_dir_all(dir).unwrap();
        fs::write(dir.join("someone-elses"), b"keep").unwrap();
    }
    let dir = filled(3);
    for _ in 0..4 {
        let view = ReadOnlyView::open(dir.path()).unwrap();
        assert_eq!(view.records_unread(), None);
        assert_eq!(view.stats().unwrap().records, 3);
    }
    for dir in &taken.0 {
        assert!(dir.join("someone-elses").exists(), "{}", dir.display());
    }
}

#[test]
fn a_marks_directory_fails_marking_with_its_cause_and_verify_and_gc_remove_it() {
    let dir = filled(3);
    let marks = dir.path().join("marks");
    let in_marks = || {
        fs::remove_file(&marks).ok();
        fs::create_dir_all(marks.join("sub")).unwrap();
        fs::write(marks.join("sub/file"), b"x").unwrap();
    };
    in_marks();
    let store = SledStore::open(dir.path()).unwrap();
    let err = store.mark(&key(1)).unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("cache I/O failed on `{}`: ", marks.display())),
        "{message}"
    );
    assert!(message.contains("a directory is in the way"), "{message}");
    // Everything else still works.
    assert!(store.lookup(&key(1)).unwrap().is_some());

    let report = store.verify().unwrap();
    let said: Vec<String> = report.repaired.iter().map(|r| r.reason.clone()).collect();
    assert_eq!(said, ["a directory where the marks file belongs"]);
    assert!(report.bad_blobs.is_empty() && report.dangling_records.is_empty());
    store.mark(&key(1)).unwrap();
    assert!(krmgraph_cache::is_marked(dir.path(), &key(1)));

    in_marks();
    let report = store.gc(u64::MAX).unwrap();
    assert_eq!(report.repaired.len(), 1, "{report:?}");
    assert_eq!((report.records_removed, report.blobs_removed), (0, 0));
    assert!(!marks.exists());
}

#[test]
fn clear_empties_the_cache_whatever_is_in_it() {
    let dir = filled(45);
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("precious"), b"keep").unwrap();
    // The case: a directory named `marks` stopped clear half way.
    fs::remove_file(dir.path().join("marks")).unwrap();
    fs::create_dir_all(dir.path().join("marks/deep")).unwrap();
    fs::write(dir.path().join("marks.tmp.4242"), b"left by a crash").unwrap();
    fs::write(dir.path().join("blobs/README"), b"foreign").unwrap();
    fs::create_dir_all(dir.path().join("blobs/zz/deeper")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("blobs/ab")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("tmp/link")).unwrap();
    fs::write(dir.path().join("notes.txt"), b"the user's").unwrap();

    let store = SledStore::open_repairing(dir.path()).unwrap();
    store.clear().unwrap();
    assert_eq!(store.stats().unwrap(), Default::default());
    for sub in ["blobs", "tmp"] {
        let left = fs::read_dir(dir.path().join(sub)).unwrap().count();
        assert_eq!(left, 0, "{sub} is empty");
    }
    assert!(!dir.path().join("marks").exists());
    assert!(!dir.path().join("marks.tmp.4242").exists());
    assert!(
        outside.path().join("precious").exists(),
        "links not followed"
    );
    // Not the store's: a directory pointed at by mistake keeps its files.
    assert!(dir.path().join("notes.txt").exists());
    assert_eq!(store.size_estimate(), None, "the old size is gone too");
    record(&store, 1);
    assert!(store.lookup(&key(1)).unwrap().is_some());
}

/// Peak resident memory of this process, in KiB.
fn peak_kib() -> u64 {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_huge_file_in_a_blobs_place_is_a_miss_in_bounded_memory() {
    let dir = filled(2);
    let store = SledStore::open(dir.path()).unwrap();
    let hit = store.lookup(&key(1)).unwrap().unwrap();
    let path = blob_path(dir.path(), &hit.record.outputs[0].digest);
    let huge = 1u64 << 30;
    let before = peak_kib();
    // Sparse: costs no disk, and reads as a gigabyte of zeros.
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(huge)
        .unwrap();
    assert_eq!(store.lookup(&key(1)).unwrap(), None);
    assert!(!path.exists(), "the bad blob is removed");
    assert_eq!(store.peek_step(&key(1)).unwrap(), None, "and its record");

    // verify hashes a foreign file of any size as a stream.
    let other = store.lookup(&key(0)).unwrap().unwrap();
    let path = blob_path(dir.path(), &other.record.outputs[0].digest);
    let file = fs::File::options().write(true).open(&path).unwrap();
    file.set_len(huge).unwrap();
    let report = store.verify().unwrap();
    assert_eq!(report.bad_blobs, [other.record.outputs[0].digest]);
    assert_eq!(report.dangling_records, [key(0)]);
    let grew = peak_kib().saturating_sub(before);
    assert!(grew < 256 << 10, "peak memory grew by {grew} KiB");
}

#[test]
fn a_blob_of_another_size_than_its_record_is_a_miss() {
    let dir = filled(1);
    let store = SledStore::open(dir.path()).unwrap();
    let output = store.lookup(&key(0)).unwrap().unwrap().record.outputs[0].clone();
    assert_eq!(
        store.get_blob(&output.digest, output.size + 1).unwrap(),
        None
    );
    assert!(!store.contains_blob(&output.digest).unwrap(), "removed");
}

#[test]
fn special_files_in_a_blobs_place_are_misses_not_hangs() {
    let dir = filled(1);
    let store = SledStore::open(dir.path()).unwrap();
    let output = store.lookup(&key(0)).unwrap().unwrap().record.outputs[0].clone();
    let path = blob_path(dir.path(), &output.digest);
    fs::remove_file(&path).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&path).status();
    assert!(made.unwrap().success(), "mkfifo");
    // Reading the FIFO would block this test forever.
    assert_eq!(store.lookup(&key(0)).unwrap(), None);
    assert!(fs::symlink_metadata(&path).is_err(), "removed");
}

#[test]
fn a_read_only_view_counts_without_writing() {
    let dir = filled(5);
    let want = SledStore::open(dir.path()).unwrap().stats().unwrap();
    let listing = |d: &Path| -> Vec<(PathBuf, u64, std::time::SystemTime)> {
        let mut all = Vec::new();
        let mut stack = vec![d.to_path_buf()];
        while let Some(d) = stack.pop() {
            for entry in fs::read_dir(&d).unwrap() {
                let entry = entry.unwrap();
                let meta = entry.metadata().unwrap();
                if meta.is_dir() {
                    stack.push(entry.path());
                }
                all.push((entry.path(), meta.len(), meta.modified().unwrap()));
            }
        }
        all.sort();
        all
    };
    let before = listing(dir.path());
    let view = ReadOnlyView::open(dir.path()).unwrap();
    assert_eq!(view.records_unread(), None);
    assert_eq!(view.stats().unwrap(), want);
    assert!(view.verify().unwrap().is_clean());
    assert_eq!(listing(dir.path()), before, "nothing written");

    // A damaged blob is reported, not removed.
    let hit = SledStore::open(dir.path())
        .unwrap()
        .lookup(&key(3))
        .unwrap()
        .unwrap();
    let path = blob_path(dir.path(), &hit.record.outputs[0].digest);
    fs::write(&path, b"other bytes").unwrap();
    let report = ReadOnlyView::open(dir.path()).unwrap().verify().unwrap();
    assert_eq!(report.bad_blobs, [hit.record.outputs[0].digest]);
    assert_eq!(report.dangling_records, [key(3)]);
    assert!(path.exists());
}

#[test]
fn a_read_only_view_of_a_cache_in_use_counts_the_blobs_and_says_why_not_the_records() {
    let dir = filled(5);
    let store = SledStore::open(dir.path()).unwrap();
    let want = store.stats().unwrap();
    let view = ReadOnlyView::open(dir.path()).unwrap();
    assert_eq!(
        view.records_unread(),
        Some("the cache is in use by another krmgraph process")
    );
    let stats = view.stats().unwrap();
    assert_eq!((stats.records, stats.blobs), (0, want.blobs));
    assert_eq!(stats.blob_bytes, want.blob_bytes);
}
