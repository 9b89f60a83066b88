//! The stores against real files, real sled and a real second process: round
//! trips, every kind of damaged entry, a broken index, a locked store, gc,
//! verify and concurrent writers.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use krmgraph_cache::{Digest, Error, MemoryStore, SledStore, StepRecord, Store};

/// A named way of damaging a file or directory of a closed store.
type Damage = (&'static str, fn(&Path));

fn key(n: u32) -> Digest {
    Digest::of(format!("step {n}").as_bytes())
}

fn blob_path(dir: &Path, digest: &Digest) -> PathBuf {
    let hex = digest.to_hex();
    dir.join("blobs").join(&hex[..2]).join(&hex[2..])
}

/// Records step `key` with two outputs and returns the record.
fn record_two(store: &dyn Store, key: &Digest, tag: &str) -> StepRecord {
    let resources = format!("kind: ConfigMap # {tag}\n");
    let results = format!("results for {tag}\n");
    store
        .record(
            key,
            &krmgraph_cache::RecordKind::new("test", 1),
            &[
                ("resources", resources.as_bytes()),
                ("results", results.as_bytes()),
            ],
            b"meta",
        )
        .unwrap()
}

fn round_trip(store: &dyn Store) {
    let k = key(1);
    assert_eq!(store.lookup(&k).unwrap(), None);
    assert!(!store.contains(&k).unwrap());
    let record = record_two(store, &k, "one");
    assert!(store.contains(&k).unwrap());
    let hit = store.lookup(&k).unwrap().expect("hit");
    assert_eq!(hit.record.outputs, record.outputs);
    assert_eq!(hit.record.meta, b"meta");
    assert_eq!(hit.outputs[0], b"kind: ConfigMap # one\n");
    assert_eq!(hit.outputs[1], b"results for one\n");
    let stats = store.stats().unwrap();
    assert_eq!((stats.records, stats.blobs), (1, 2));
    assert_eq!(stats.blob_bytes, record.output_bytes());
}

#[test]
fn round_trip_memory() {
    round_trip(&MemoryStore::new());
}

#[test]
fn round_trip_sled_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    round_trip(&SledStore::open(dir.path()).unwrap());
    let store = SledStore::open(dir.path()).unwrap();
    let hit = store.lookup(&key(1)).unwrap().expect("hit after reopen");
    assert_eq!(hit.outputs[1], b"results for one\n");
    assert!(dir.path().join("CACHEDIR.TAG").is_file());
    assert_eq!(store.location(), Some(dir.path()));
}

#[test]
fn the_size_estimate_covers_what_was_added_until_counted_again() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = SledStore::open(dir.path()).unwrap();
        assert_eq!(store.size_estimate(), None, "nothing saved yet");
        record_two(&store, &key(1), "one");
        let counted = store.stats().unwrap().total_bytes();
        store.save_size_estimate(counted, true).unwrap();
        assert_eq!(store.size_estimate(), Some(counted));
    }
    let store = SledStore::open(dir.path()).unwrap();
    let before = store.size_estimate().expect("saved across processes");
    record_two(&store, &key(2), "two");
    let estimate = store.size_estimate().unwrap();
    let actual = store.stats().unwrap().total_bytes();
    assert!(estimate >= actual, "{estimate} < {actual}");
    assert!(estimate > before);
    // An estimate saved again and again is counted again in the end.
    let saves = (0..100)
        .take_while(|_| {
            let estimate = store.size_estimate();
            if let Some(size) = estimate {
                store.save_size_estimate(size, false).unwrap();
            }
            estimate.is_some()
        })
        .count();
    assert!((1..100).contains(&saves), "{saves}");
}

#[test]
fn lookup_marks_the_record_used() {
    let store = MemoryStore::new();
    let k = key(1);
    let record = record_two(&store, &k, "x");
    thread::sleep(Duration::from_millis(5));
    assert!(store.contains(&k).unwrap());
    assert_eq!(store.peek_step(&k).unwrap().unwrap(), record);
    store.lookup(&k).unwrap().unwrap();
    let after = store.peek_step(&k).unwrap().unwrap();
    assert!(after.last_used_ms > record.last_used_ms);
    assert_eq!(after.created_ms, record.created_ms);
}

#[test]
fn flipped_byte_in_a_blob_is_a_miss_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let k = key(1);
    let record = record_two(&store, &k, "flip");
    let path = blob_path(dir.path(), &record.outputs[0].digest);
    let mut bytes = fs::read(&path).unwrap();
    bytes[3] ^= 0x01;
    fs::write(&path, bytes).unwrap();

    assert_eq!(store.lookup(&k).unwrap(), None);
    assert!(!path.exists(), "the bad blob is removed");
    assert_eq!(store.peek_step(&k).unwrap(), None, "its record too");
    // The untouched output is still there; re-recording restores the step.
    assert!(store.contains_blob(&record.outputs[1].digest).unwrap());
    record_two(&store, &k, "flip");
    assert!(store.lookup(&k).unwrap().is_some());
}

#[test]
fn truncated_missing_and_replaced_blobs_are_misses() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let damage: [Damage; 4] = [
        ("truncated", |p| {
            let len = fs::metadata(p).unwrap().len();
            fs::OpenOptions::new()
                .write(true)
                .open(p)
                .unwrap()
                .set_len(len / 2)
                .unwrap();
        }),
        ("empty", |p| fs::write(p, b"").unwrap()),
        ("missing", |p| fs::remove_file(p).unwrap()),
        ("a directory", |p| {
            fs::remove_file(p).unwrap();
            fs::create_dir(p).unwrap();
        }),
    ];
    for (n, (what, damage)) in damage.into_iter().enumerate() {
        let k = key(n as u32);
        let record = record_two(&store, &k, what);
        damage(&blob_path(dir.path(), &record.outputs[1].digest));
        assert_eq!(store.lookup(&k).unwrap(), None, "{what}");
        assert_eq!(store.peek_step(&k).unwrap(), None, "{what}");
        // The damage is gone with the miss: recording again restores a hit.
        record_two(&store, &k, what);
        assert!(store.lookup(&k).unwrap().is_some(), "{what}");
    }
}

/// Writes raw bytes into the index of the (closed) store in `dir`.
fn poke_index(dir: &Path, key: &[u8], value: &[u8]) {
    let db = sled::open(dir.join("index")).unwrap();
    db.open_tree("steps-v1")
        .unwrap()
        .insert(key, value)
        .unwrap();
    db.flush().unwrap();
}

#[test]
fn undecodable_records_are_misses_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let k = key(1);
    {
        let store = SledStore::open(dir.path()).unwrap();
        record_two(&store, &k, "old");
    }
    let mut future = StepRecord::new(
        krmgraph_cache::RecordKind::new("test", 1),
        Vec::new(),
        Vec::new(),
    )
    .encode();
    future[0] = 99;
    poke_index(dir.path(), key(2).as_bytes(), &future);
    poke_index(dir.path(), key(3).as_bytes(), b"\x01garbage");
    poke_index(dir.path(), b"short key", b"whatever");

    let store = SledStore::open(dir.path()).unwrap();
    assert!(
        store.lookup(&k).unwrap().is_some(),
        "good record still read"
    );
    assert_eq!(store.lookup(&key(2)).unwrap(), None);
    assert_eq!(store.stats().unwrap().records, 1);
    let report = store.verify().unwrap();
    assert_eq!(report.bad_records, vec![key(3)]);
    let keys: Vec<_> = store.steps().unwrap().into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, vec![k]);
}

/// Damage done to the index directory of a closed store.
fn damaged_index_cases() -> Vec<Damage> {
    vec![
        ("every file truncated", |index| {
            for entry in walk(index) {
                let len = fs::metadata(&entry).unwrap().len();
                let file = fs::OpenOptions::new().write(true).open(&entry).unwrap();
                file.set_len(len / 3).unwrap();
            }
        }),
        ("every file garbage", |index| {
            for entry in walk(index) {
                let len = fs::metadata(&entry).unwrap().len().max(64) as usize;
                let garbage: Vec<u8> = (0..len).map(|i| (i * 7 + 13) as u8).collect();
                fs::write(&entry, garbage).unwrap();
            }
        }),
        ("every file empty", |index| {
            for entry in walk(index) {
                fs::write(&entry, b"").unwrap();
            }
        }),
        ("index is a file", |index| {
            fs::remove_dir_all(index).unwrap();
            fs::write(index, b"not a directory").unwrap();
        }),
    ]
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn broken_index_opens_fresh_and_keeps_blobs() {
    for (what, damage) in damaged_index_cases() {
        let dir = tempfile::tempdir().unwrap();
        let record = {
            let store = SledStore::open(dir.path()).unwrap();
            for n in 0..50 {
                record_two(&store, &key(n), "many");
            }
            store.flush().unwrap();
            record_two(&store, &key(1), "kept")
        };
        damage(&dir.path().join("index"));
        let store = match SledStore::open(dir.path()) {
            Ok(store) => store,
            // Allowed by the contract, but with this damage a fresh index
            // is expected; say which case did not get one.
            Err(e) => panic!("{what}: {e:?}"),
        };
        // Whatever survived must read back right; a miss is fine.
        if let Some(hit) = store.lookup(&key(1)).unwrap() {
            assert_eq!(hit.outputs[0], b"kind: ConfigMap # kept\n", "{what}");
        }
        assert!(
            store.contains_blob(&record.outputs[0].digest).unwrap(),
            "{what}"
        );
        record_two(&store, &key(2), "after");
        assert!(store.lookup(&key(2)).unwrap().is_some(), "{what}");
    }
}

#[test]
fn unusable_directory_is_an_open_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    fs::write(&file, b"").unwrap();
    let err = SledStore::open(&file.join("cache")).unwrap_err();
    assert!(matches!(err, Error::Open { .. }), "{err:?}");
    assert!(err.is_unavailable());
}

#[test]
fn second_open_in_the_same_process_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    let _first = SledStore::open(dir.path()).unwrap();
    let err = SledStore::open(dir.path()).unwrap_err();
    assert!(matches!(err, Error::Locked { .. }), "{err:?}");
    assert!(err.is_unavailable());
}

#[test]
fn index_held_by_sled_itself_is_locked_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = SledStore::open(dir.path()).unwrap();
        record_two(&store, &key(1), "live");
    }
    // A process that opened the index without taking `<dir>/lock`.
    let held = sled::open(dir.path().join("index")).unwrap();
    let err = SledStore::open(dir.path()).unwrap_err();
    assert!(matches!(err, Error::Locked { .. }), "{err:?}");
    drop(held);
    let store = SledStore::open(dir.path()).unwrap();
    assert!(
        store.lookup(&key(1)).unwrap().is_some(),
        "index not discarded"
    );
}

const CHILD_DIR: &str = "KRMGRAPH_CACHE_TEST_CHILD_DIR";

/// Not a test on its own: the child process of
/// `second_process_gets_locked_promptly`, which sets `CHILD_DIR`.
#[test]
fn child_open_store() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    match SledStore::open(Path::new(&dir)) {
        Ok(store) => {
            let found = store.lookup(&key(1)).unwrap().is_some();
            println!("CHILD: opened, hit={found}");
        }
        Err(Error::Locked { .. }) => println!("CHILD: locked"),
        Err(e) => println!("CHILD: error {e:?}"),
    }
}

/// Runs `child_open_store` in a new process on `dir`; its report and time.
fn open_in_child(dir: &Path) -> (String, Duration) {
    let start = Instant::now();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_open_store",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A child blocked on the lock would hang the suite; bound it.
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("the second process blocked on the store");
        }
        thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    // The harness prints `test child_open_store ... ` on the same line.
    let report = stdout
        .lines()
        .find_map(|l| l.find("CHILD: ").map(|at| l[at..].to_owned()))
        .unwrap_or_else(|| panic!("no report from the child: {stdout}"));
    (report, start.elapsed())
}

#[test]
fn second_process_gets_locked_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    record_two(&store, &key(1), "shared");
    let (report, took) = open_in_child(dir.path());
    assert_eq!(report, "CHILD: locked");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    // The lock goes with the store, and the data is there for the next one.
    drop(store);
    let (report, _) = open_in_child(dir.path());
    assert_eq!(report, "CHILD: opened, hit=true");
}

fn gc_keeps_the_recently_used(store: &dyn Store) {
    for n in 0..5 {
        let output = vec![n as u8; 1000];
        store
            .record(
                &key(n),
                &krmgraph_cache::RecordKind::new("test", 1),
                &[("out", &output)],
                b"",
            )
            .unwrap();
        thread::sleep(Duration::from_millis(3));
    }
    // Step 0 becomes the most recently used; 1 and 2 are now the oldest.
    store.lookup(&key(0)).unwrap().unwrap();
    let before = store.stats().unwrap();
    let per_step = before.total_bytes() / 5;
    let max = before.total_bytes() - per_step - per_step / 2;

    let report = store.gc(max).unwrap();
    assert_eq!((report.records_removed, report.blobs_removed), (2, 2));
    assert_eq!(report.bytes_before, before.total_bytes());
    let after = store.stats().unwrap();
    assert!(after.total_bytes() <= max);
    assert_eq!(report.bytes_after, after.total_bytes());
    for (n, hit) in [(0, true), (1, false), (2, false), (3, true), (4, true)] {
        assert_eq!(store.lookup(&key(n)).unwrap().is_some(), hit, "step {n}");
    }
    // Nothing to do under a generous limit; everything goes under zero.
    assert_eq!(store.gc(u64::MAX).unwrap().records_removed, 0);
    store.gc(0).unwrap();
    assert_eq!(store.stats().unwrap().total_bytes(), 0);
}

#[test]
fn gc_lru_memory() {
    gc_keeps_the_recently_used(&MemoryStore::new());
}

#[test]
fn gc_lru_sled() {
    let dir = tempfile::tempdir().unwrap();
    gc_keeps_the_recently_used(&SledStore::open(dir.path()).unwrap());
}

#[test]
fn gc_removes_unreferenced_blobs_and_stale_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let orphan = store.put_blob(b"no record names me").unwrap();
    record_two(&store, &key(1), "kept");
    let stale = dir.path().join("tmp").join("1-0-crashed");
    fs::write(&stale, b"partial").unwrap();
    let old = fs::File::options().write(true).open(&stale).unwrap();
    old.set_modified(std::time::SystemTime::now() - Duration::from_secs(7200))
        .unwrap();
    let report = store.gc(u64::MAX).unwrap();
    assert_eq!((report.records_removed, report.blobs_removed), (0, 1));
    assert!(!store.contains_blob(&orphan).unwrap());
    assert!(store.lookup(&key(1)).unwrap().is_some());
    assert!(!stale.exists());
}

#[test]
fn verify_finds_and_drops_a_bad_blob() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let bad = record_two(&store, &key(1), "bad");
    record_two(&store, &key(2), "good");
    let path = blob_path(dir.path(), &bad.outputs[1].digest);
    let mut bytes = fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x80;
    fs::write(&path, bytes).unwrap();

    let report = store.verify().unwrap();
    assert_eq!(report.blobs_checked, 4);
    assert_eq!(report.bad_blobs, vec![bad.outputs[1].digest]);
    assert_eq!(report.dangling_records, vec![key(1)]);
    assert!(!path.exists());
    assert!(store.lookup(&key(2)).unwrap().is_some());
    assert!(store.verify().unwrap().is_clean());
}

#[test]
fn clear_empties_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    record_two(&store, &key(1), "a");
    store.clear().unwrap();
    assert_eq!(store.stats().unwrap(), Default::default());
    assert_eq!(store.lookup(&key(1)).unwrap(), None);
    record_two(&store, &key(1), "again");
    assert!(store.lookup(&key(1)).unwrap().is_some());
}

#[test]
fn concurrent_puts_of_the_same_blob_are_safe() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SledStore::open(dir.path()).unwrap());
    let content: Arc<Vec<u8>> = Arc::new((0..1 << 20).map(|i| (i % 251) as u8).collect());
    let want = Digest::of(&content);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (store, content) = (Arc::clone(&store), Arc::clone(&content));
            thread::spawn(move || {
                for i in 0..10 {
                    if t % 2 == 0 {
                        // Writers: force a real write each time by removing
                        // the file first, so renames race with each other.
                        if i % 3 == 0 {
                            let _ = store.remove_blob(&want);
                        }
                        assert_eq!(store.put_blob(&content).unwrap(), want);
                    } else if let Some(read) = store.get_blob(&want, 1 << 20).unwrap() {
                        // Readers never see a partial blob.
                        assert!(read == *content);
                    }
                    let k = key(t * 100 + i);
                    store
                        .record(
                            &k,
                            &krmgraph_cache::RecordKind::new("test", 1),
                            &[("out", &content)],
                            b"",
                        )
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(
        store.get_blob(&want, 1 << 20).unwrap().as_deref(),
        Some(&content[..])
    );
    assert_eq!(fs::read_dir(dir.path().join("tmp")).unwrap().count(), 0);
    assert_eq!(store.blobs().unwrap().len(), 1);
    assert_eq!(store.stats().unwrap().records, 80);
}

#[test]
fn open_default_uses_the_explicit_directory() {
    let dir = tempfile::tempdir().unwrap();
    let explicit = dir.path().join("explicit");
    let store = SledStore::open_default(Some(&explicit)).unwrap();
    assert_eq!(store.location(), Some(explicit.as_path()));
    assert!(explicit.join("index").is_dir());
    assert!(explicit.join("blobs").is_dir());
}
