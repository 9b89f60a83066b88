//! The cache when its directory is damaged, foreign or read-only (issue 27
//! items 6–8 and 10): each fault gives its cause and the documented
//! behaviour, and never changes a render.
//!
//! Every render here is of a fresh copy of `testdata/demo` (built-ins
//! only) and is compared, file by file, with a `--no-cache` render of the
//! same tree; its stderr must be the uncached render's plus at most the one
//! warning a fault allows.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::kpt_diff::read_tree;
use crate::util::{copy_tree, krmgraph_bin, repo_root};

/// The uid and gid the read-only tests drop to (`nobody` on Debian).
const NOBODY: u32 = 65534;

/// `stderr` with the durations kpt prints (`in 0s`, `in 200ms`) made
/// equal: they are the only part of a render's log that may differ.
fn timeless(stderr: &str) -> String {
    let duration = regex::Regex::new(r"\bin [0-9.]+(ns|µs|us|ms|s|m)\b").unwrap();
    duration.replace_all(stderr, "in <time>").into_owned()
}

/// What a render left and said.
#[derive(Debug)]
struct Run {
    code: Option<i32>,
    stderr: String,
    files: BTreeMap<String, Vec<u8>>,
}

/// A command's exit code, stdout and stderr.
struct Said {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// `krmgraph ARGS` run through `wrap` (a command prefix such as `setpriv
/// --reuid=65534 ... --`; empty: none), with the cache settings of the environment
/// cleared so that only the arguments choose.
fn krmgraph(wrap: &[&str], args: &[&str]) -> Command {
    let bin = krmgraph_bin();
    let mut cmd = match wrap.split_first() {
        Some((first, rest)) => {
            let mut cmd = Command::new(first);
            cmd.args(rest).arg(&bin);
            cmd
        }
        None => Command::new(&bin),
    };
    cmd.args(args)
        .env_remove("KRMGRAPH_CACHE_DIR")
        .env_remove("KRMGRAPH_CACHE_MAX_SIZE")
        .env("KRMGRAPH_NO_CACHE", "0");
    cmd
}

fn said(cmd: &mut Command) -> Said {
    let out = cmd.output().unwrap();
    Said {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Copies the demo to `<work>/<name>/demo` (owned by `owner`, if given)
/// and renders it in place with the cache in `cache` (`None`:
/// `--no-cache`), through `wrap`.
fn render(work: &Path, name: &str, cache: Option<&Path>, wrap: &[&str], owner: Option<u32>) -> Run {
    render_as(work, name, "demo", cache, wrap, owner)
}

/// [`render`] with the package's directory named `pkg_name`. The name is
/// part of a whole render's key: a render of the same tree under another
/// name replays steps and records a render, where one under the same name
/// replays the whole render.
fn render_as(
    work: &Path,
    name: &str,
    pkg_name: &str,
    cache: Option<&Path>,
    wrap: &[&str],
    owner: Option<u32>,
) -> Run {
    let pkg = work.join(name).join(pkg_name);
    copy_tree(&repo_root().join("testdata/demo"), &pkg).unwrap();
    if let Some(uid) = owner {
        chown_tree(&work.join(name), uid);
    }
    let pkg_text = pkg.to_string_lossy().into_owned();
    let mut args = vec!["render", pkg_text.as_str()];
    let cache_text = cache.map(|c| c.to_string_lossy().into_owned());
    match &cache_text {
        Some(dir) => args.extend(["--cache-dir", dir.as_str()]),
        None => args.push("--no-cache"),
    }
    let out = krmgraph(wrap, &args).output().unwrap();
    Run {
        code: out.status.code(),
        stderr: timeless(&String::from_utf8_lossy(&out.stderr)),
        files: read_tree(&pkg),
    }
}

/// The cache command `args` on `cache`, through `wrap`.
fn cache_cmd(wrap: &[&str], cache: &Path, args: &[&str]) -> Said {
    let dir = cache.to_string_lossy().into_owned();
    let mut all = vec!["cache"];
    all.extend_from_slice(args);
    all.extend(["--cache-dir", dir.as_str()]);
    said(&mut krmgraph(wrap, &all))
}

/// Checks that `run` rendered what `uncached` did, and that its stderr is
/// the uncached one plus exactly one `[WARN] krmgraph:` line, which it
/// returns.
fn one_warning(what: &str, run: &Run, uncached: &Run) -> String {
    assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
    assert!(
        run.files == uncached.files,
        "{what}: the files differ from --no-cache's"
    );
    let (warnings, rest): (Vec<&str>, Vec<&str>) = run
        .stderr
        .lines()
        .partition(|l| l.starts_with("[WARN] krmgraph:"));
    assert_eq!(warnings.len(), 1, "{what}: {}", run.stderr);
    let uncached_lines: Vec<&str> = uncached.stderr.lines().collect();
    assert_eq!(rest, uncached_lines, "{what}: stderr otherwise as uncached");
    warnings[0].to_owned()
}

/// Checks that `run` rendered what `uncached` did and said the same.
fn same_as_uncached(what: &str, run: &Run, uncached: &Run) {
    assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
    assert!(
        run.files == uncached.files,
        "{what}: the files differ from --no-cache's"
    );
    assert_eq!(run.stderr, uncached.stderr, "{what}");
}

/// The OS's message for errno `code`, as Rust prints it.
fn os(code: i32) -> String {
    std::io::Error::from_raw_os_error(code).to_string()
}

/// A damage done to a cache directory, and the cause its warning must give
/// (`{D}` is the directory).
struct Damage {
    what: &'static str,
    damage: fn(&Path),
    cause: String,
}

/// Removes whatever is at `path`, not following a symlink.
fn remove(path: &Path) {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path).unwrap(),
        Ok(_) => fs::remove_file(path).unwrap(),
        Err(_) => {}
    }
}

/// Makes `cache` a new, empty cache (it is damaged after: damage in a
/// directory that is not a cache is not the cache's to repair).
fn new_cache(cache: &Path) {
    drop(crate::util::open_store(cache));
}

fn damages() -> Vec<Damage> {
    vec![
        Damage {
            what: "blobs is a file",
            damage: |d| {
                remove(&d.join("blobs"));
                fs::write(d.join("blobs"), b"").unwrap();
            },
            cause: "cannot create `{D}/blobs`: a file is in the way, not a directory \
                    (`krmgraph cache verify` removes it)"
                .into(),
        },
        Damage {
            what: "tmp is a symlink to nowhere",
            damage: |d| {
                remove(&d.join("tmp"));
                std::os::unix::fs::symlink("/nonexistent", d.join("tmp")).unwrap();
            },
            cause: "cannot create `{D}/tmp`: a symbolic link to `/nonexistent` is in the way: \
                    the cache follows no links"
                .into(),
        },
        // Review finding: a render wrote blobs through such a link, and
        // verify then removed the link, orphaning them.
        Damage {
            what: "blobs is a symlink to a directory",
            damage: |d| {
                remove(&d.join("blobs"));
                fs::create_dir(d.with_extension("elsewhere")).unwrap();
                std::os::unix::fs::symlink(d.with_extension("elsewhere"), d.join("blobs")).unwrap();
            },
            cause: "cannot create `{D}/blobs`: a symbolic link to `{D}.elsewhere` is in the way: \
                    the cache follows no links \
                    (`krmgraph cache verify` removes the link, not what it leads to)"
                .into(),
        },
        Damage {
            what: "lock is a directory",
            damage: |d| {
                remove(&d.join("lock"));
                fs::create_dir(d.join("lock")).unwrap();
            },
            cause: "cannot open for writing `{D}/lock`: a directory is in the way, \
                    not a regular file (`krmgraph cache verify` removes it)"
                .into(),
        },
        Damage {
            what: "the directory is a symlink loop",
            damage: |d| {
                fs::remove_dir_all(d).unwrap();
                std::os::unix::fs::symlink(d, d).unwrap();
            },
            cause: format!("cannot create `{{D}}`: {}", os(40)),
        },
    ]
}

/// Whether nothing was written through the link of the damage "blobs is
/// a symlink to a directory" (there is nothing at its target otherwise).
fn nothing_elsewhere(cache: &Path) -> bool {
    fs::read_dir(cache.with_extension("elsewhere")).map_or(true, |mut d| d.next().is_none())
}

#[test]
fn a_cache_that_will_not_open_renders_uncached_with_the_cause() {
    let tmp = tempfile::tempdir().unwrap();
    let uncached = render(tmp.path(), "uncached", None, &[], None);
    for (
        n,
        Damage {
            what,
            damage,
            cause,
        },
    ) in damages().into_iter().enumerate()
    {
        let cache = tmp.path().join(format!("cache{n}"));
        new_cache(&cache);
        damage(&cache);
        let d = cache.display().to_string();
        let cause = cause.replace("{D}", &d);
        let run = render(tmp.path(), &format!("r{n}"), Some(&cache), &[], None);
        let warning = one_warning(what, &run, &uncached);
        assert!(nothing_elsewhere(&cache), "{what}: written through a link");
        let want = format!(
            "[WARN] krmgraph: rendering without the cache: failed to open the cache `{d}`: {cause}"
        );
        assert!(
            warning.starts_with(&want),
            "{what}:\n{warning}\nwanted:\n{want}"
        );
        // The maintenance commands say the same.
        let stats = cache_cmd(&[], &cache, &["stats"]);
        assert_eq!(stats.code, Some(1), "{what}: {}", stats.stdout);
        assert!(stats.stderr.contains(&cause), "{what}: {}", stats.stderr);
    }
}

#[test]
fn verify_repairs_what_stands_in_the_caches_way_and_the_cache_works_again() {
    let tmp = tempfile::tempdir().unwrap();
    let uncached = render(tmp.path(), "uncached", None, &[], None);
    for (
        n,
        Damage {
            what,
            damage,
            cause,
        },
    ) in damages().into_iter().enumerate()
    {
        let cache = tmp.path().join(format!("cache{n}"));
        new_cache(&cache);
        damage(&cache);
        let verify = cache_cmd(&[], &cache, &["verify"]);
        let d = cache.display().to_string();
        if what == "the directory is a symlink loop" {
            // Nothing to repair inside: the directory itself is unusable.
            assert_eq!(verify.code, Some(1), "{what}");
            assert!(
                verify.stderr.contains(&cause.replace("{D}", &d)),
                "{what}: {}",
                verify.stderr
            );
            continue;
        }
        assert_eq!(verify.code, Some(0), "{what}: {}", verify.stderr);
        let repaired = match what {
            "blobs is a file" => format!("a file where the `blobs` directory belongs: `{d}/blobs`"),
            "tmp is a symlink to nowhere" => format!(
                "a symbolic link to `/nonexistent` where the `tmp` directory belongs: `{d}/tmp`"
            ),
            "blobs is a symlink to a directory" => format!(
                "a symbolic link to `{d}.elsewhere` where the `blobs` directory belongs: \
                 `{d}/blobs`"
            ),
            _ => format!("a directory where the lock file belongs: `{d}/lock`"),
        };
        let first_line = verify.stdout.lines().next().unwrap_or_default();
        assert_eq!(first_line, format!("removed {repaired}"), "{what}");
        let first = render(tmp.path(), &format!("a{n}"), Some(&cache), &[], None);
        same_as_uncached(what, &first, &uncached);
        assert!(
            cache_cmd(&[], &cache, &["stats"])
                .stdout
                .contains("records: "),
            "{what}"
        );
        let replayed = render(tmp.path(), &format!("b{n}"), Some(&cache), &[], None);
        same_as_uncached(what, &replayed, &uncached);
        assert!(nothing_elsewhere(&cache), "{what}: written through a link");
    }
}

/// Every path under `dir` (not following symlinks) with its kind and, for
/// a file, its contents; sorted.
fn listing(dir: &Path) -> Vec<(PathBuf, String, Vec<u8>)> {
    let mut all = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let bytes = match meta.is_file() {
                true => fs::read(&path).unwrap(),
                false => Vec::new(),
            };
            if meta.is_dir() {
                stack.push(path.clone());
            }
            all.push((path, format!("{:?}", meta.file_type()), bytes));
        }
    }
    all.sort();
    all
}

/// Review finding: `krmgraph cache verify --cache-dir ~/proj` removed
/// `~/proj/lock` (a directory) and clear emptied `~/proj/tmp` and
/// `~/proj/blobs`; a render filled the directory with a cache.
#[test]
fn a_directory_that_is_not_a_cache_is_not_used_repaired_or_cleared() {
    let tmp = tempfile::tempdir().unwrap();
    let uncached = render(tmp.path(), "uncached", None, &[], None);
    let proj = tmp.path().join("proj");
    for sub in ["lock", "tmp", "blobs", "index"] {
        fs::create_dir_all(proj.join(sub)).unwrap();
        fs::write(proj.join(sub).join("notes"), b"the user's").unwrap();
    }
    let before = listing(&proj);
    let p = proj.display().to_string();
    let cause = format!(
        "failed to open the cache `{p}`: `{p}` is not a krmgraph cache: it is not empty and \
         has no `CACHEDIR.TAG` written by krmgraph, so krmgraph neither uses nor changes \
         anything in it (give --cache-dir or KRMGRAPH_CACHE_DIR the cache's directory, \
         or a new or empty one)"
    );
    let run = render(tmp.path(), "r", Some(&proj), &[], None);
    let warning = one_warning("not a cache", &run, &uncached);
    assert_eq!(
        warning,
        format!("[WARN] krmgraph: rendering without the cache: {cause}")
    );
    for command in ["verify", "clear", "gc", "stats"] {
        let said = cache_cmd(&[], &proj, &[command]);
        assert_eq!(said.code, Some(1), "{command}: {}", said.stdout);
        assert_eq!(said.stderr, format!("Error: {cause} \n"), "{command}");
    }
    assert!(listing(&proj) == before, "nothing changed");
}

/// Review finding: gc, verify and clear removed what stood in the cache's
/// way before they found the cache in use (`Locked`).
#[test]
fn gc_verify_and_clear_of_a_cache_in_use_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let d = cache.display().to_string();
    let fill = render(tmp.path(), "fill", Some(&cache), &[], None);
    assert_eq!(fill.code, Some(0), "{}", fill.stderr);
    remove(&cache.join("tmp"));
    fs::write(cache.join("tmp"), b"in the way").unwrap();
    // What a krmgraph process with the store open holds.
    let held = fs::File::open(cache.join("lock")).unwrap();
    held.try_lock().unwrap();
    let before = listing(&cache);
    for command in ["verify", "gc", "clear"] {
        let said = cache_cmd(&[], &cache, &[command]);
        assert_eq!(said.code, Some(1), "{command}: {}", said.stdout);
        let locked = format!("the cache `{d}` is in use by another krmgraph process");
        assert!(said.stderr.contains(&locked), "{command}: {}", said.stderr);
        assert!(listing(&cache) == before, "{command} changed the cache");
    }
    drop(held);
    let verify = cache_cmd(&[], &cache, &["verify"]);
    assert_eq!(verify.code, Some(0), "{}", verify.stderr);
    let removed = format!("removed a file where the `tmp` directory belongs: `{d}/tmp`\n");
    assert!(verify.stdout.starts_with(&removed), "{}", verify.stdout);
}

/// Makes `<cache>/marks` a directory with something in it.
fn marks_directory(cache: &Path) {
    let marks = cache.join("marks");
    let _ = fs::remove_file(&marks);
    fs::create_dir_all(marks.join("sub")).unwrap();
    fs::write(marks.join("sub/file"), b"not a marks file").unwrap();
}

/// The number of files under `dir` (not following symlinks).
fn count_files(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    entries
        .map(|e| e.unwrap())
        .map(|e| match e.file_type().unwrap().is_dir() {
            true => count_files(&e.path()),
            false => 1,
        })
        .sum()
}

#[test]
fn a_marks_directory_warns_once_is_repaired_by_verify_and_gc_and_clear_empties_all() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let d = cache.display().to_string();
    let uncached = render(tmp.path(), "uncached", None, &[], None);
    // Under another name, so the render below records (and marks) a render.
    let fill = render_as(tmp.path(), "fill", "seed", Some(&cache), &[], None);
    assert_eq!(fill.code, Some(0), "{}", fill.stderr);
    assert!(fill.files == uncached.files);
    let blobs = count_files(&cache.join("blobs"));
    assert!(blobs > 0);

    marks_directory(&cache);
    let run = render(tmp.path(), "r1", Some(&cache), &[], None);
    let warning = one_warning("a marks directory", &run, &uncached);
    assert!(
        warning.contains(&format!("`{d}/marks`: {}", os(21))),
        "{warning}"
    );
    assert!(
        warning.contains("`krmgraph cache verify` removes it"),
        "{warning}"
    );

    let verify = cache_cmd(&[], &cache, &["verify"]);
    assert_eq!(verify.code, Some(0), "{}", verify.stderr);
    let removed = format!("removed a directory where the marks file belongs: `{d}/marks`\n");
    assert!(verify.stdout.starts_with(&removed), "{}", verify.stdout);
    same_as_uncached(
        "after verify",
        &render(tmp.path(), "r2", Some(&cache), &[], None),
        &uncached,
    );

    marks_directory(&cache);
    let gc = cache_cmd(&[], &cache, &["gc"]);
    assert_eq!(gc.code, Some(0), "{}", gc.stderr);
    assert!(gc.stdout.starts_with(&removed), "{}", gc.stdout);
    same_as_uncached(
        "after gc",
        &render(tmp.path(), "r3", Some(&cache), &[], None),
        &uncached,
    );

    // The issue's case: clear stopped at the marks directory, records
    // gone and the blobs left. Add foreign entries, and symlinks out.
    marks_directory(&cache);
    let outside = tmp.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("precious"), b"keep").unwrap();
    fs::write(cache.join("blobs/README"), b"foreign").unwrap();
    std::os::unix::fs::symlink(&outside, cache.join("blobs/ab")).unwrap();
    std::os::unix::fs::symlink(&outside, cache.join("tmp/out")).unwrap();
    let clear = cache_cmd(&[], &cache, &["clear"]);
    assert_eq!(
        (clear.code, clear.stdout.as_str()),
        (Some(0), format!("cleared {d}\n").as_str()),
        "{}",
        clear.stderr
    );
    assert_eq!(fs::read_dir(cache.join("blobs")).unwrap().count(), 0);
    assert_eq!(fs::read_dir(cache.join("tmp")).unwrap().count(), 0);
    assert!(!cache.join("marks").exists());
    assert_eq!(fs::read(outside.join("precious")).unwrap(), b"keep");
    let stats = cache_cmd(&[], &cache, &["stats"]);
    let count = |label: &str| {
        let line = stats.stdout.lines().find(|l| l.starts_with(label));
        line.and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
    };
    assert!(
        count("records:").as_deref() == Some("0")
            && count("blobs:").as_deref() == Some("0")
            && stats.stdout.contains("total:")
            && stats.stdout.trim_end().ends_with(" 0 B"),
        "{}",
        stats.stdout
    );
    same_as_uncached(
        "after clear",
        &render(tmp.path(), "r4", Some(&cache), &[], None),
        &uncached,
    );
}

/// A command's output and its peak resident memory in KiB.
struct Measured {
    said: Said,
    peak_kib: u64,
}

/// Runs `cmd` and measures its peak resident memory: `wait4`'s
/// `ru_maxrss` of that one child (a process's whole life, so no sampling
/// can miss a peak). Its output goes through files in `dir`, as nothing
/// reads pipes while `wait4` waits.
fn measured(cmd: &mut Command, dir: &Path) -> Measured {
    let (out, err) = (dir.join("stdout"), dir.join("stderr"));
    cmd.stdout(fs::File::create(&out).unwrap())
        .stderr(fs::File::create(&err).unwrap());
    let child = cmd.spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: `rusage` is a plain C struct, valid all zeros; `wait4` only
    // writes into the two locals. `child` is not waited on again.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    drop(child);
    Measured {
        said: Said {
            code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
            stdout: fs::read_to_string(out).unwrap(),
            stderr: fs::read_to_string(err).unwrap(),
        },
        peak_kib: usage.ru_maxrss as u64,
    }
}

/// The most a render of the demo or a verify may take here: ~35 MiB
/// render, ~15 MiB verify (a gigabyte file read whole takes 1.1 GB).
const PEAK_KIB: u64 = 256 << 10;

/// Turns the file at `path` into a sparse `len`-byte file: no disk, and
/// that many bytes for whoever reads it.
fn make_huge(path: &Path, len: u64) {
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_len(len).unwrap();
}

/// Every blob file of the cache.
fn blob_files(cache: &Path) -> Vec<PathBuf> {
    let mut blobs = Vec::new();
    for fan in fs::read_dir(cache.join("blobs")).unwrap() {
        for blob in fs::read_dir(fan.unwrap().path()).unwrap() {
            blobs.push(blob.unwrap().path());
        }
    }
    blobs.sort();
    blobs
}

#[test]
fn huge_files_in_the_blobs_places_cost_no_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let uncached = render(tmp.path(), "uncached", None, &[], None);
    same_as_uncached(
        "filling",
        &render(tmp.path(), "fill", Some(&cache), &[], None),
        &uncached,
    );
    let blobs = blob_files(&cache);
    assert!(blobs.len() > 2, "{blobs:?}");
    for path in &blobs {
        make_huge(path, 1 << 30);
    }
    let pkg = tmp.path().join("huge/demo");
    copy_tree(&repo_root().join("testdata/demo"), &pkg).unwrap();
    let (pkg_text, dir) = (pkg.to_string_lossy(), cache.to_string_lossy());
    let args = ["render", &pkg_text, "--cache-dir", &dir];
    let run = measured(&mut krmgraph(&[], &args), tmp.path());
    let run_files = read_tree(&pkg);
    let as_run = Run {
        code: run.said.code,
        stderr: timeless(&run.said.stderr),
        files: run_files,
    };
    same_as_uncached("every blob a 1 GiB file", &as_run, &uncached);
    assert!(
        run.peak_kib < PEAK_KIB,
        "the render peaked at {} KiB",
        run.peak_kib
    );

    // Two foreign 2 GiB files for verify to hash (each takes a second).
    let foreign = blob_files(&cache);
    assert!(foreign.len() >= 2, "the render recorded again: {foreign:?}");
    for path in &foreign[..2] {
        make_huge(path, 2 << 30);
    }
    let verify = measured(
        &mut krmgraph(&[], &["cache", "verify", "--cache-dir", &dir]),
        tmp.path(),
    );
    assert_eq!(verify.said.code, Some(0), "{}", verify.said.stderr);
    let damaged = verify.said.stdout.matches("removed damaged blob ").count();
    assert_eq!(damaged, 2, "{}", verify.said.stdout);
    assert!(
        verify.peak_kib < PEAK_KIB,
        "verify peaked at {} KiB",
        verify.peak_kib
    );
    same_as_uncached(
        "after verify",
        &render(tmp.path(), "after", Some(&cache), &[], None),
        &uncached,
    );
}

/// `chown -R uid:uid dir`, without following symlinks.
fn chown_tree(dir: &Path, uid: u32) {
    std::os::unix::fs::lchown(dir, Some(uid), Some(uid)).unwrap();
    if !fs::symlink_metadata(dir).unwrap().is_dir() {
        return;
    }
    for entry in fs::read_dir(dir).unwrap() {
        chown_tree(&entry.unwrap().path(), uid);
    }
}

/// Whether this process can run commands as `nobody` (it is root and
/// `setpriv` works); if not, says why the test is skipped.
fn can_drop_to_nobody(test: &str) -> bool {
    let ok = Command::new(AS_NOBODY[0])
        .args(&AS_NOBODY[1..])
        .arg("true")
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipping {test}: cannot run commands as uid {NOBODY} (`setpriv` as root)");
    }
    ok
}

/// The command prefix that runs a command as [`NOBODY`], without root's
/// groups.
const AS_NOBODY: [&str; 5] = [
    "setpriv",
    "--reuid=65534",
    "--regid=65534",
    "--clear-groups",
    "--",
];

/// A cache filled (by root) with a render of the demo, in a directory
/// others may read and enter but not write; and the uncached render.
fn shared_cache(tmp: &Path) -> (PathBuf, Run) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(tmp, fs::Permissions::from_mode(0o755)).unwrap();
    let cache = tmp.join("cache");
    let uncached = render(tmp, "uncached", None, &[], None);
    same_as_uncached(
        "filling",
        &render(tmp, "fill", Some(&cache), &[], None),
        &uncached,
    );
    (cache, uncached)
}

#[test]
fn a_cache_shared_read_only_is_counted_and_renders_uncached_with_the_reason() {
    let test = "a_cache_shared_read_only_is_counted_and_renders_uncached_with_the_reason";
    if !can_drop_to_nobody(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (cache, uncached) = shared_cache(tmp.path());
    let d = cache.display().to_string();
    let owner = cache_cmd(&[], &cache, &["stats"]);
    assert_eq!(owner.code, Some(0), "{}", owner.stderr);
    let blobs_line = owner
        .stdout
        .lines()
        .find(|l| l.starts_with("blobs:"))
        .unwrap()
        .to_owned();

    let nobody = AS_NOBODY;
    let stats = cache_cmd(&nobody, &cache, &["stats"]);
    assert_eq!(stats.code, Some(0), "{}", stats.stderr);
    assert_eq!(
        stats.stdout, owner.stdout,
        "the same figures as the owner's"
    );
    let denied = format!("cannot open for writing `{d}/lock`: {}", os(13));
    assert!(
        stats.stderr.contains("the cache is read-only here"),
        "{}",
        stats.stderr
    );
    assert!(stats.stderr.contains(&denied), "{}", stats.stderr);

    let verify = cache_cmd(&nobody, &cache, &["verify"]);
    assert_eq!(verify.code, Some(0), "{}", verify.stderr);
    let blobs: usize = blobs_line
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(verify.stdout, format!("checked {blobs} blobs\n"));
    let gc = cache_cmd(&nobody, &cache, &["gc"]);
    assert_eq!(gc.code, Some(1));
    assert!(gc.stderr.contains(&denied), "{}", gc.stderr);

    let run = render(tmp.path(), "nobody", Some(&cache), &nobody, Some(NOBODY));
    let warning = one_warning("rendering as another user", &run, &uncached);
    let want = format!(
        "[WARN] krmgraph: rendering without the cache: failed to open the cache `{d}`: {denied}"
    );
    assert_eq!(warning, want);

    // With the lock file writable by all, the lock is taken and sled's
    // files refuse: the index is named, not taken for broken and deleted.
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(cache.join("lock"), fs::Permissions::from_mode(0o666)).unwrap();
    let run = render(tmp.path(), "nobody2", Some(&cache), &nobody, Some(NOBODY));
    let warning = one_warning("rendering as another user, lock writable", &run, &uncached);
    let index = format!("cannot open for writing `{d}/index`: {}", os(13));
    assert!(warning.ends_with(&index), "{warning}");
    let stats = cache_cmd(&nobody, &cache, &["stats"]);
    assert_eq!(stats.stdout, owner.stdout, "{}", stats.stderr);
    assert!(stats.stderr.contains(&index), "{}", stats.stderr);
    assert_eq!(
        cache_cmd(&[], &cache, &["stats"]).stdout,
        owner.stdout,
        "nothing written"
    );
}

/// Whether this process may mount in a new mount namespace; if not, says
/// why the test is skipped.
fn can_mount(test: &str) -> bool {
    let ok = Command::new("unshare")
        .args(["-m", "sh", "-c", "mount -t tmpfs -o ro tmpfs /mnt"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipping {test}: cannot mount in a new mount namespace (`unshare -m` as root)");
    }
    ok
}

#[test]
fn a_cache_on_a_read_only_mount_is_counted_and_renders_uncached_with_the_reason() {
    let test = "a_cache_on_a_read_only_mount_is_counted_and_renders_uncached_with_the_reason";
    if !can_mount(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (cache, uncached) = shared_cache(tmp.path());
    let d = cache.display().to_string();
    let owner = cache_cmd(&[], &cache, &["stats"]);
    // The mount exists only in the namespace of this one command.
    let script =
        format!("mount --bind '{d}' '{d}' && mount -o remount,bind,ro '{d}' && exec \"$0\" \"$@\"");
    let read_only = ["unshare", "-m", "sh", "-c", script.as_str()];
    let stats = cache_cmd(&read_only, &cache, &["stats"]);
    assert_eq!(stats.code, Some(0), "{}", stats.stderr);
    assert_eq!(stats.stdout, owner.stdout);
    let erofs = format!("cannot open for writing `{d}/lock`: {}", os(30));
    assert!(stats.stderr.contains(&erofs), "{}", stats.stderr);

    let run = render(tmp.path(), "ro", Some(&cache), &read_only, None);
    let warning = one_warning("a read-only mount", &run, &uncached);
    assert!(warning.ends_with(&erofs), "{warning}");
}
