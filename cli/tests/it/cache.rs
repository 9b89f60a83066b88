//! The render cache (`render::shortcut` behind `krmgraph render`): a
//! cached render writes what an uncached one writes, a tree rendered before
//! (anywhere) is replayed without running a function, a damaged or locked
//! cache never changes a render, and `--verify` catches a pipeline that is
//! not idempotent.
//!
//! A counting `exec:` function (it appends a line to `$COUNTER` and passes
//! its input through) tells whether a render ran its pipelines or came
//! from the cache.

use std::path::{Path, PathBuf};

use crate::differential::MODES;
use crate::kpt_diff::{describe_difference, render_with_env, Rendered};
use crate::util::{copy_tree, open_store, repo_root};

/// Renders a copy of `src` under `<work>` with the cache in `cache`
/// (`None`: uncached), counting function runs in `counter`.
fn render(
    work: &Path,
    src: &Path,
    cache: Option<&Path>,
    counter: &Path,
    extra: &[&str],
) -> Rendered {
    render_env(work, src, cache, counter, extra, &[])
}

/// [`render`] with more environment variables.
fn render_env(
    work: &Path,
    src: &Path,
    cache: Option<&Path>,
    counter: &Path,
    extra: &[&str],
    more_env: &[(&str, &str)],
) -> Rendered {
    let mut args = vec!["--allow-exec", "--results-dir", "<RESULTS>"];
    args.extend_from_slice(extra);
    let counter = counter.to_string_lossy().to_string();
    let mut env = vec![("COUNTER", counter.as_str())];
    env.extend_from_slice(more_env);
    let cache_text = cache.map(|c| c.to_string_lossy().to_string());
    match &cache_text {
        Some(dir) => env.extend([
            ("KRMGRAPH_NO_CACHE", "0"),
            ("KRMGRAPH_CACHE_DIR", dir.as_str()),
        ]),
        None => env.push(("KRMGRAPH_NO_CACHE", "1")),
    }
    render_with_env("krmgraph", work, src, &args, &env)
}

fn runs(counter: &Path) -> usize {
    std::fs::read_to_string(counter).map_or(0, |s| s.lines().count())
}

/// A two-level package whose three pipelines each run the counting
/// function. The files are indented by 4, so a render changes them.
fn source(dir: &Path) -> PathBuf {
    let src = dir.join("src").join("pkg");
    let count = r#"sh -c 'echo run >> \"$COUNTER\"; cat'"#;
    let kptfile = |name: &str| {
        format!(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\npipeline:\n  mutators:\n    - exec: \"{count}\"\n"
        )
    };
    let cm = |name: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n    name: {name} # {name}\ndata:\n    k: 'v'\n")
    };
    for (path, text) in [
        ("Kptfile", kptfile("root")),
        ("cm.yaml", cm("root-cm")),
        ("a/Kptfile", kptfile("a")),
        ("a/cm.yaml", cm("a-cm")),
        ("b/Kptfile", kptfile("b")),
        ("b/cm.yaml", cm("b-cm")),
    ] {
        let p = src.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    src
}

/// [`source`] rendered once through a fresh cache, in a copy at
/// `rendered`; `first` is that render.
struct RenderedOnce {
    tmp: tempfile::TempDir,
    cache: PathBuf,
    counter: PathBuf,
    first: Rendered,
    rendered: PathBuf,
}

fn rendered_once() -> RenderedOnce {
    let tmp = tempfile::tempdir().unwrap();
    let src = source(tmp.path());
    let cache = tmp.path().join("cache");
    let counter = tmp.path().join("counter");
    let first = render(&tmp.path().join("c1"), &src, Some(&cache), &counter, &[]);
    assert_eq!(first.exit_code, 0, "{}", first.stderr);
    let rendered = tmp.path().join("c1/krmgraph/pkg");
    RenderedOnce {
        tmp,
        cache,
        counter,
        first,
        rendered,
    }
}

/// The steady state of editing: a value changed in a file the render had
/// already formatted, so the render runs pipelines but writes nothing new.
/// The tree it read is then its own fixed point: the next render runs
/// nothing and says so.
#[test]
fn a_render_that_writes_nothing_new_leaves_a_fixed_point() {
    let RenderedOnce {
        tmp: _tmp,
        cache,
        counter,
        rendered,
        ..
    } = rendered_once();
    let in_place = || {
        crate::util::succeed(
            std::process::Command::new(env!("CARGO_BIN_EXE_krmgraph"))
                .args(["render", "--allow-exec"])
                .arg(&rendered)
                .env("COUNTER", &counter)
                .env("KRMGRAPH_NO_CACHE", "0")
                .env("KRMGRAPH_CACHE_DIR", &cache),
        )
    };
    in_place();
    let cm = rendered.join("a/cm.yaml");
    let text = std::fs::read_to_string(&cm).unwrap();
    assert!(text.contains("k: 'v'"), "{text}");
    std::fs::write(&cm, text.replace("k: 'v'", "k: 'edited'")).unwrap();
    let before = runs(&counter);
    in_place();
    let ran = runs(&counter);
    assert!(ran > before, "the edited tree renders");
    assert!(std::fs::read_to_string(&cm)
        .unwrap()
        .contains("k: 'edited'"));
    let again = String::from_utf8_lossy(&in_place().stderr).into_owned();
    assert_eq!(runs(&counter), ran, "nothing runs again");
    assert!(again.contains("nothing to render"), "{again}");
}

#[test]
fn replays_a_tree_rendered_elsewhere_without_running_functions() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source(tmp.path());
    let cache = tmp.path().join("cache");
    let counter = tmp.path().join("counter");
    let uncached = render(&tmp.path().join("u"), &src, None, &counter, &[]);
    assert_eq!(uncached.exit_code, 0, "{}", uncached.stderr);
    assert_eq!(runs(&counter), 3);

    let cold = render(&tmp.path().join("c1"), &src, Some(&cache), &counter, &[]);
    assert_eq!(runs(&counter), 6, "a cold cache runs every pipeline");
    let warm = render(
        &tmp.path().join("elsewhere/c2"),
        &src,
        Some(&cache),
        &counter,
        &[],
    );
    assert_eq!(
        runs(&counter),
        6,
        "a warm cache runs nothing, at another path too"
    );
    for (label, r) in [("cold", &cold), ("warm", &warm)] {
        if let Some(d) = describe_difference(&uncached, r) {
            panic!("{label} cached render differs from an uncached one: {d}");
        }
    }

    // One edit: a and the root run again (b's subtree is replayed), and
    // the render writes what an uncached render of the edited tree writes.
    std::fs::write(
        src.join("a/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a-cm\ndata:\n  k: edited\n",
    )
    .unwrap();
    let edited = render(&tmp.path().join("c3"), &src, Some(&cache), &counter, &[]);
    assert_eq!(
        runs(&counter),
        8,
        "only the edited package and the root run"
    );
    let edited_uncached = render(&tmp.path().join("u2"), &src, None, &counter, &[]);
    assert!(describe_difference(&edited_uncached, &edited).is_none());
}

/// The first render rewrote every file (the source is indented by 4), so
/// no subtree of the tree it left had a record; it recorded each one's
/// again under the key of its files as written. An edit in `a` then runs
/// `a` and the root, and replays `b`, as an edit does in a tree the cache
/// saw, and writes what an uncached render writes.
#[test]
fn the_subtrees_a_render_rewrote_replay_after_an_edit() {
    let RenderedOnce {
        tmp,
        cache,
        counter,
        rendered,
        ..
    } = rendered_once();
    let edited = tmp.path().join("edited/pkg");
    copy_tree(&rendered, &edited).unwrap();
    let cm = edited.join("a/cm.yaml");
    let text = std::fs::read_to_string(&cm).unwrap();
    assert!(text.contains("k: 'v'"), "{text}");
    std::fs::write(&cm, text.replace("k: 'v'", "k: 'edited'")).unwrap();
    let before = runs(&counter);
    let cached = render(&tmp.path().join("c2"), &edited, Some(&cache), &counter, &[]);
    assert_eq!(cached.exit_code, 0, "{}", cached.stderr);
    assert_eq!(runs(&counter), before + 2, "only a and the root run");
    let uncached = render(&tmp.path().join("u"), &edited, None, &counter, &[]);
    if let Some(d) = describe_difference(&uncached, &cached) {
        panic!("the cached render differs from an uncached one: {d}");
    }
}

#[test]
fn a_rendered_tree_is_a_fixed_point() {
    let RenderedOnce {
        tmp,
        cache,
        counter,
        first,
        rendered,
    } = rendered_once();
    let before = runs(&counter);
    // Renders the rendered tree again, in place, through the cache; with
    // `held`, while the test holds the store.
    let render_again = |label: &str, held: bool| {
        let held = held.then(|| open_store(&cache));
        let r = render_with_env(
            "krmgraph",
            &tmp.path().join(label),
            &rendered,
            &["--allow-exec"],
            &[
                ("COUNTER", &counter.to_string_lossy()),
                ("KRMGRAPH_NO_CACHE", "0"),
                ("KRMGRAPH_CACHE_DIR", &cache.to_string_lossy()),
            ],
        );
        drop(held);
        r
    };
    // Without --results-dir the fixed point needs no log: nothing runs.
    let again = render_again("c2", false);
    assert_eq!(again.exit_code, 0, "{}", again.stderr);
    assert_eq!(
        runs(&counter),
        before,
        "a rendered tree is not rendered again"
    );
    assert_eq!(
        again.files,
        first
            .files
            .into_iter()
            .filter(|(k, _)| !k.starts_with('<'))
            .collect()
    );
    // The tree is marked as a fixed point: a no-op does not even open the
    // store, so one held by another process does not matter.
    let marked = render_again("c2-held", true);
    assert_eq!(marked.exit_code, 0, "{}", marked.stderr);
    assert!(
        marked.stderr.contains("nothing to render") && !marked.stderr.contains("WARN"),
        "{}",
        marked.stderr
    );
    assert_eq!(runs(&counter), before);
    // Without the marks file, the store has the fixed point, and marks it
    // again.
    std::fs::remove_file(cache.join("marks")).unwrap();
    let unmarked = render_again("c2-unmarked", true);
    assert!(unmarked.stderr.contains("WARN"), "{}", unmarked.stderr);
    // (It rendered uncached.)
    let before = runs(&counter);
    let remarked = render_again("c2-remarked", false);
    assert!(
        remarked.stderr.contains("nothing to render"),
        "{}",
        remarked.stderr
    );
    assert!(cache.join("marks").exists());
    assert_eq!(runs(&counter), before);
    // --verify renders anyway, and agrees.
    let verified = render(
        &tmp.path().join("c3"),
        &rendered,
        Some(&cache),
        &counter,
        &["--verify"],
    );
    assert_eq!(verified.exit_code, 0, "{}", verified.stderr);
    assert!(runs(&counter) > before);
}

#[test]
fn a_file_changed_while_rendering_is_not_taken_for_the_output() {
    // The root's function also appends to NOTES.txt in the tree it renders,
    // as an editor saving a file during the render would. What the render
    // left is the tree it read plus what it wrote: the tree with the new
    // line is not the render's fixed point, and rendering it runs again.
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src").join("pkg");
    std::fs::create_dir_all(&src).unwrap();
    let copy = tmp.path().join("c1/krmgraph/pkg");
    let notes = copy.join("NOTES.txt");
    // The path comes from the environment: a Kptfile naming the root's
    // absolute path is not recorded at all.
    let function = r#"sh -c 'echo run >> \"$COUNTER\"; echo edited >> \"$NOTES\"; cat'"#;
    std::fs::write(
        src.join("Kptfile"),
        format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: root\npipeline:\n  mutators:\n    - exec: \"{function}\"\n"),
    )
    .unwrap();
    std::fs::write(
        src.join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n    name: cm\n",
    )
    .unwrap();
    std::fs::write(src.join("NOTES.txt"), "notes\n").unwrap();
    let cache = tmp.path().join("cache");
    let counter = tmp.path().join("counter");
    let env = |notes: &Path| {
        [
            ("COUNTER", counter.to_string_lossy().to_string()),
            ("NOTES", notes.to_string_lossy().to_string()),
            ("KRMGRAPH_NO_CACHE", "0".to_string()),
            ("KRMGRAPH_CACHE_DIR", cache.to_string_lossy().to_string()),
        ]
    };
    let render_at = |work: &str, pkg: &Path, notes: &Path| {
        let env = env(notes);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        render_with_env(
            "krmgraph",
            &tmp.path().join(work),
            pkg,
            &["--allow-exec"],
            &env,
        )
    };
    let first = render_at("c1", &src, &notes);
    assert_eq!(first.exit_code, 0, "{}", first.stderr);
    assert_eq!(runs(&counter), 1);
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "notes\nedited\n",
        "the function edited the tree while it was rendered"
    );
    let again = render_at("c2", &copy, &tmp.path().join("elsewhere.txt"));
    assert_eq!(again.exit_code, 0, "{}", again.stderr);
    assert_eq!(
        runs(&counter),
        2,
        "the edited tree was taken for a fixed point: {}",
        again.stderr
    );
}

/// Renders `src` with a cache in `<tmp>/cache` (under `<tmp>/c1`), then
/// renders `verify(<tmp>/c1)` with `--verify` and the same cache.
fn render_then_verify(tmp: &Path, src: &Path, verify: impl Fn(&Path) -> PathBuf) -> Rendered {
    let cache = tmp.join("cache");
    let counter = tmp.join("counter");
    let first = render(&tmp.join("c1"), src, Some(&cache), &counter, &[]);
    assert_eq!(first.exit_code, 0, "{}", first.stderr);
    let target = verify(&tmp.join("c1"));
    render(
        &tmp.join("c2"),
        &target,
        Some(&cache),
        &counter,
        &["--verify"],
    )
}

#[test]
fn verify_catches_a_pipeline_that_is_not_idempotent() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src").join("pkg");
    std::fs::create_dir_all(&src).unwrap();
    // Each run appends an "x" to data.k: rendering a rendered tree changes it.
    std::fs::write(
        src.join("Kptfile"),
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n    - exec: \"sed -e 's/^ *k: v/&x/'\"\n",
    )
    .unwrap();
    std::fs::write(
        src.join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n",
    )
    .unwrap();
    // Rendering the rendered tree is verified.
    let verified = render_then_verify(tmp.path(), &src, |first| first.join("krmgraph/pkg"));
    assert_eq!(verified.exit_code, 1, "{}", verified.stderr);
    assert!(
        verified.stderr.contains("--verify") && verified.stderr.contains("cm.yaml"),
        "{}",
        verified.stderr
    );
}

#[test]
fn verify_names_a_function_that_is_not_deterministic() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src").join("pkg");
    std::fs::create_dir_all(src.join("sub")).unwrap();
    // Its output depends on how often it ran before.
    let counted =
        r#"sh -c 'n=$(wc -l < \"$COUNTER\"); echo run >> \"$COUNTER\"; sed -e \"s/k: x/k: v$n/\"'"#;
    for (dir, exec) in [("", "cat"), ("sub/", counted)] {
        std::fs::write(
            src.join(format!("{dir}Kptfile")),
            format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n    - exec: \"{exec}\"\n"),
        )
        .unwrap();
        std::fs::write(
            src.join(format!("{dir}cm.yaml")),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: x\n",
        )
        .unwrap();
    }
    std::fs::write(tmp.path().join("counter"), "").unwrap();
    // The same tree is verified.
    let verified = render_then_verify(tmp.path(), &src, |_| src.clone());
    assert_eq!(verified.exit_code, 1, "{}", verified.stderr);
    assert!(
        verified.stderr.contains("--verify: function \"sh -c")
            && verified.stderr.contains("in package \"pkg/sub\""),
        "{}",
        verified.stderr
    );
}

/// Every blob flipped, then every index file truncated: renders stay
/// right, in place (whole-render records) and to stdout (step and subtree
/// records), before and after an edit.
#[test]
fn a_damaged_cache_still_renders_correctly() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source(tmp.path());
    let cache = tmp.path().join("cache");
    let counter = tmp.path().join("counter");
    let stdout = ["-o", "stdout"];
    let check = |label: &str, extra: &[&str]| {
        let uncached = render(&tmp.path().join("u"), &src, None, &counter, extra);
        let cached = render(&tmp.path().join(label), &src, Some(&cache), &counter, extra);
        if let Some(d) = describe_difference(&uncached, &cached) {
            panic!("{label}: {d}");
        }
    };
    check("cold", &[]);
    check("cold-stdout", &stdout);
    let flip_blobs = || {
        for_each_file(&cache.join("blobs"), &mut |p| {
            let mut bytes = std::fs::read(p).unwrap();
            if let Some(b) = bytes.first_mut() {
                *b ^= 0xff;
            }
            std::fs::write(p, bytes).unwrap();
        })
    };
    flip_blobs();
    check("flipped", &[]);
    flip_blobs();
    check("flipped-stdout", &stdout);
    for_each_file(&cache.join("index"), &mut |p| {
        let len = std::fs::metadata(p).unwrap().len();
        let f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
        f.set_len(len / 3).unwrap();
    });
    check("truncated", &[]);
    check("truncated-stdout", &stdout);
    flip_blobs();
    std::fs::write(
        src.join("a/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a-cm\ndata:\n  k: edited\n",
    )
    .unwrap();
    check("edited", &[]);
    check("edited-stdout", &stdout);
}

#[test]
fn a_locked_cache_renders_uncached_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source(tmp.path());
    let cache = tmp.path().join("cache");
    let counter = tmp.path().join("counter");
    let uncached = render(&tmp.path().join("u"), &src, None, &counter, &[]);
    let _held = open_store(&cache);
    let locked = render(&tmp.path().join("c1"), &src, Some(&cache), &counter, &[]);
    assert_eq!(locked.exit_code, 0, "{}", locked.stderr);
    assert!(
        locked
            .stderr
            .starts_with("[WARN] krmgraph: rendering without the cache"),
        "{}",
        locked.stderr
    );
    let files_only = |r: &Rendered| r.files.clone();
    assert_eq!(files_only(&uncached), files_only(&locked));
}

fn for_each_file(dir: &Path, f: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            for_each_file(&path, f);
        } else {
            f(&path);
        }
    }
}

/// The project's render cases, cached cold and warm, equal uncached.
#[test]
fn project_cases_render_the_same_cached() {
    let root = repo_root().join("testdata/render");
    for entry in std::fs::read_dir(&root).unwrap() {
        let case = entry.unwrap().path();
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src").join(case.file_name().unwrap());
        copy_tree(&case, &src).unwrap();
        let cache = tmp.path().join("cache");
        let counter = tmp.path().join("counter");
        let uncached = render(&tmp.path().join("u"), &src, None, &counter, &[]);
        for run in ["cold", "warm"] {
            let cached = render(&tmp.path().join(run), &src, Some(&cache), &counter, &[]);
            if let Some(d) = describe_difference(&uncached, &cached) {
                panic!("{} ({run}): {d}", case.display());
            }
        }
    }
}

#[test]
fn cache_command_shows_gcs_and_clears() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source(tmp.path());
    let cache = tmp.path().join("cache");
    let counter = tmp.path().join("counter");
    render(&tmp.path().join("c1"), &src, Some(&cache), &counter, &[]);
    let cache_cmd = |args: &[&str]| {
        let out = std::process::Command::new(crate::util::krmgraph_bin())
            .arg("cache")
            .args(args)
            .arg("--cache-dir")
            .arg(&cache)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let records = |stats: &str| -> u64 {
        let line = stats.lines().find(|l| l.starts_with("records:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    // An exact record, a fixed point, a record per step (3) and per
    // subtree (3), the two subpackages' again under the keys of their
    // files as written (the render rewrote them), the item memo the
    // next render starts from, where each step ran (3 slots, for
    // --explain) and the files the render left (for --explain).
    let stats = cache_cmd(&["stats"]);
    assert_eq!(records(&stats), 15);
    assert!(
        stats.contains("  slot v2") && stats.contains("  step v1") && stats.contains("  left v1"),
        "{stats}"
    );
    assert!(cache_cmd(&["verify"]).contains("checked"));
    cache_cmd(&["gc", "--max-size", "1"]);
    assert_eq!(records(&cache_cmd(&["stats"])), 0);
    render(&tmp.path().join("c2"), &src, Some(&cache), &counter, &[]);
    assert_eq!(records(&cache_cmd(&["stats"])), 15);
    std::fs::write(cache.join("marks"), "damaged").unwrap();
    assert!(cache_cmd(&["verify"]).contains("removed the damaged marks file"));
    assert!(!cache.join("marks").exists());
    std::fs::write(cache.join("marks"), "any").unwrap();
    cache_cmd(&["clear"]);
    assert_eq!(records(&cache_cmd(&["stats"])), 0);
    assert!(!cache.join("marks").exists());
}

#[test]
fn graph_shows_steps_keys_and_cache_state() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source(tmp.path());
    let cache = tmp.path().join("cache");
    let graph = |format: &str| {
        let out = std::process::Command::new(crate::util::krmgraph_bin())
            .args(["graph", "--allow-exec", "--format", format, "--cache-dir"])
            .arg(&cache)
            .arg(&src)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let text = graph("text");
    assert!(text.starts_with("render cache: miss"), "{text}");
    assert!(!text.contains("(recorded"), "{text}");
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert!(
        lines[0].contains("pkg/a mutator[0]") && lines[5].contains("package pkg"),
        "{text}"
    );
    assert!(graph("dot").starts_with("digraph render {"));
    // After a render of a copy elsewhere, this tree is recorded.
    render(
        &tmp.path().join("c1"),
        &src,
        Some(&cache),
        &tmp.path().join("counter"),
        &[],
    );
    let json = graph("json");
    assert!(
        json.contains("\"cache\": \"hit: a render of this tree is recorded"),
        "{json}"
    );
    // ... and so is each of its subtrees.
    assert_eq!(json.matches("\"recorded\": true").count(), 3, "{json}");
    assert!(graph("text").contains("package pkg/a  <- #0  (recorded: a render replays it)"));
}

#[test]
fn the_cache_keeps_to_its_size_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source(tmp.path());
    let cache = tmp.path().join("cache");
    let counter = tmp.path().join("counter");
    let limit = [("KRMGRAPH_CACHE_MAX_SIZE", "1")];
    for run in ["c1", "c2"] {
        let mut env = vec![
            ("COUNTER", counter.to_str().unwrap()),
            ("KRMGRAPH_NO_CACHE", "0"),
            ("KRMGRAPH_CACHE_DIR", cache.to_str().unwrap()),
        ];
        env.extend(limit);
        let r = render_with_env(
            "krmgraph",
            &tmp.path().join(run),
            &src,
            &["--allow-exec"],
            &env,
        );
        assert_eq!(r.exit_code, 0, "{}", r.stderr);
    }
    // Each render's records were evicted right away: both renders ran.
    assert_eq!(runs(&counter), 6);
}

#[test]
fn rendering_dot_is_cached_like_its_path() {
    let tmp = tempfile::tempdir().unwrap();
    let src = source(tmp.path());
    let cache = tmp.path().join("cache");
    let counter = tmp.path().join("counter");
    let render_dot = || {
        crate::util::succeed(
            std::process::Command::new(crate::util::krmgraph_bin())
                .args(["render", ".", "--allow-exec", "--cache-dir"])
                .arg(&cache)
                .current_dir(&src)
                .env("COUNTER", &counter)
                .env("KRMGRAPH_NO_CACHE", "0"),
        );
    };
    render_dot();
    assert_eq!(runs(&counter), 3);
    render_dot();
    assert_eq!(runs(&counter), 3, "the second render of `.` is a cache hit");
}

/// Generated trees (the differential suite's, with its exec functions),
/// cached cold and warm, equal uncached; then, with the step and subtree
/// records the cold render left, every output mode with `--jobs 1` and 2;
/// then after one leaf file is edited.
#[test]
fn generated_trees_render_the_same_cached() {
    let python = match crate::differential::python_dir() {
        Ok(dir) => dir,
        Err(why) => {
            eprintln!("skipping generated_trees_render_the_same_cached: {why}");
            return;
        }
    };
    let path = format!(
        "{}:{}",
        python.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let fns = repo_root().join("testdata/functions");
    let seeds: u64 = std::env::var("KRMGRAPH_CACHE_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    for seed in 0..seeds {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src").join("pkg");
        let case = crate::differential::generate(seed, &fns.to_string_lossy());
        crate::differential::write_case(&case, &src);
        let cache = tmp.path().join("cache").to_string_lossy().to_string();
        let log = tmp.path().join("cache.log").to_string_lossy().to_string();
        let run = |dir: &str, cached: bool, extra: &[&str]| {
            let work = tmp.path().join(dir);
            let mut env = vec![("PATH", path.as_str())];
            if cached {
                env.extend([
                    ("KRMGRAPH_NO_CACHE", "0"),
                    ("KRMGRAPH_CACHE_DIR", cache.as_str()),
                    ("KRMGRAPH_CACHE_LOG", log.as_str()),
                ]);
            }
            let mut args = vec!["--allow-exec"];
            args.extend_from_slice(extra);
            let r = render_with_env("krmgraph", &work, &src, &args, &env);
            crate::differential::root_relative(r, &work.join("krmgraph"))
        };
        let in_place = ["--results-dir", "<RESULTS>"];
        let uncached = run("u", false, &in_place);
        for dir in ["cold", "warm"] {
            if let Some(d) = describe_difference(&uncached, &run(dir, true, &in_place)) {
                panic!("seed {seed} ({dir}): {d}");
            }
        }
        // Cached with --jobs 1 and 2 equals `uncached`; `replays_only`: and
        // ran nothing (the step and subtree records; the whole-render
        // record is for in place only).
        let compare_jobs = |label: &str, uncached: &Rendered, base: &[&str], replays_only: bool| {
            for jobs in ["1", "2"] {
                let mut args = base.to_vec();
                args.extend(["--jobs", jobs]);
                let cached = run(&format!("{label}-j{jobs}"), true, &args);
                if let Some(d) = describe_difference(uncached, &cached) {
                    panic!("seed {seed} ({label}, --jobs {jobs}): {d}");
                }
                let log = std::fs::read_to_string(&log).unwrap_or_default();
                if replays_only && !case.expect_failure {
                    assert!(
                        !log.is_empty() && !log.contains("ran "),
                        "seed {seed} ({label}, --jobs {jobs}): a warm render ran steps:\n{log}"
                    );
                }
            }
        };
        for (mode, mode_args) in MODES.iter().filter(|(m, _)| *m != "re-render") {
            let uncached = run(&format!("u-{mode}"), false, mode_args);
            compare_jobs(mode, &uncached, mode_args, *mode != "in-place");
        }
        edit_a_leaf_file(&src);
        let uncached = run("u-edited", false, &in_place);
        compare_jobs("one leaf file edited", &uncached, &in_place, false);
        // Two more edits, rendered in one place: the second's ancestors may
        // pass their replayed subtrees through as blocks (`render::blocks`).
        for round in 0..2 {
            add_to_a_leaf(&src, round);
            let uncached = run(&format!("u-again-{round}"), false, &in_place);
            if let Some(d) = describe_difference(&uncached, &run("again", true, &in_place)) {
                panic!("seed {seed} (edit {round} in one place): {d}");
            }
        }
    }
}

/// Writes a ConfigMap numbered `n` into `added.yaml` in the deepest
/// package under `root`.
fn add_to_a_leaf(root: &Path, n: usize) {
    let leaf = deepest_package(root);
    let text =
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: added\ndata:\n  n: '{n}'\n");
    std::fs::write(leaf.join("added.yaml"), text).unwrap();
}

/// The deepest package under `root` (the last by path among the deepest).
fn deepest_package(root: &Path) -> PathBuf {
    let mut packages = Vec::new();
    for_each_file(root, &mut |p| {
        if p.file_name().is_some_and(|n| n == "Kptfile") {
            packages.push(p.parent().unwrap().to_path_buf());
        }
    });
    packages
        .into_iter()
        .max_by_key(|p| (p.components().count(), p.clone()))
        .unwrap()
}

/// Appends a comment to the first YAML file of the deepest package under
/// `root` (its Kptfile when it has none).
fn edit_a_leaf_file(root: &Path) {
    let leaf = deepest_package(root);
    let mut yaml: Vec<PathBuf> = std::fs::read_dir(&leaf)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    yaml.sort();
    let file = yaml.into_iter().next().unwrap_or(leaf.join("Kptfile"));
    let mut text = std::fs::read(&file).unwrap();
    text.extend(b"\n# edited\n");
    std::fs::write(&file, text).unwrap();
}

/// A tree whose every Kptfile runs the kustomize-era built-ins: a render
/// records the fixed points it met (`fnruntime::builtin::fixed_point`),
/// and the next render's ancestors take known items from them. After two
/// edits each cached render must equal an uncached render of the same tree.
#[test]
fn built_ins_known_fixed_points_render_what_an_uncached_render_does() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src").join("pkg");
    let resources = "# the app\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app # name\n  labels: {app: web}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n        # main\n        - name: web\n          image: \"nginx:1.25\"\n          args: [\"--port\", \"8080\"]\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  note: >\n    folded text\n  flag: \"true\"\n";
    for (depth, dir) in ["", "a", "a/b", "a/b/c"].iter().enumerate() {
        let dir = src.join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        let kptfile = format!(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg{depth}\npipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-namespace:v0.1.3\n      configMap: {{namespace: prod}}\n    - image: gcr.io/kpt-fn/set-labels:v0.1.4\n      configMap: {{tier: backend}}\n"
        );
        std::fs::write(dir.join("Kptfile"), kptfile).unwrap();
        std::fs::write(dir.join("resources.yaml"), resources).unwrap();
    }
    let cache = tmp.path().join("cache").to_string_lossy().to_string();
    let cached = [
        ("KRMGRAPH_NO_CACHE", "0"),
        ("KRMGRAPH_CACHE_DIR", cache.as_str()),
    ];
    let uncached = [("KRMGRAPH_NO_CACHE", "1")];
    let render = |work: &str, pkg: &Path, env: &[(&str, &str)]| {
        let r = render_with_env("krmgraph", &tmp.path().join(work), pkg, &[], env);
        assert_eq!(r.exit_code, 0, "{}", r.stderr);
        r
    };
    let edit = |pkg: &Path, from: usize, to: usize| {
        let file = pkg.join("a/b/c/resources.yaml");
        let text = std::fs::read_to_string(&file).unwrap();
        let edited = text.replacen(&format!("replicas: {from}"), &format!("replicas: {to}"), 1);
        assert_ne!(text, edited, "the leaf has a replicas field to edit");
        std::fs::write(&file, edited).unwrap();
    };
    render("r1", &src, &cached);
    let mut tree = tmp.path().join("r1/krmgraph/pkg");
    // The first edit is met by a tree the cold render rewrote; the second
    // is the steady state, where the ancestors find the fixed points.
    for i in 0..2 {
        edit(&tree, i + 1, i + 2);
        let ours = render(&format!("e{i}"), &tree, &cached);
        let fresh = render(&format!("u{i}"), &tree, &uncached);
        if let Some(d) = describe_difference(&fresh, &ours) {
            panic!("edit {i}: {d}");
        }
        tree = tmp.path().join(format!("e{i}/krmgraph/pkg"));
    }
}

/// kpt is not idempotent on foot comments (a comment after the last entry
/// of a block) and on comments after a sequence entry's dash: each render
/// through an exec function adds a copy of each (a dash's comment settles
/// after two). The cache must not take such a rendered tree for a fixed
/// point: three renders in a row, each of the one before's output
/// (`testdata/unsettled-comments`), give kpt's files every time. Comments
/// kpt leaves in place (`settled`) still let the cache skip the second
/// and third. The foot
/// comments also take the function boundary's per-run path
/// (`fnruntime::echoed`), which CI's `KRMGRAPH_CHECK_DIRECT=1` checks
/// against the whole list read back.
#[test]
fn comments_kpt_moves_render_as_kpt_renders_them_each_time() {
    if !crate::util::kpt_available("comments_kpt_moves_render_as_kpt_renders_them_each_time") {
        return;
    }
    for case in ["foot", "dash", "settled"] {
        let tmp = tempfile::tempdir().unwrap();
        let cache = tmp.path().join("cache");
        let cache_text = cache.to_string_lossy().to_string();
        let env = [
            ("KRMGRAPH_NO_CACHE", "0"),
            ("KRMGRAPH_CACHE_DIR", cache_text.as_str()),
        ];
        let mut kpt_src = repo_root().join("testdata/unsettled-comments").join(case);
        let mut krmgraph_src = kpt_src.clone();
        for round in 1..=3 {
            let work = tmp.path().join(format!("round-{round}"));
            let args = ["--allow-exec"];
            let kpt = render_with_env("kpt", &work, &kpt_src, &args, &[]);
            let krmgraph = render_with_env("krmgraph", &work, &krmgraph_src, &args, &env);
            assert_eq!(kpt.exit_code, 0, "{}", kpt.stderr);
            // Files only: once the tree settles, krmgraph's log says so
            // instead of repeating kpt's.
            assert!(
                kpt.files == krmgraph.files,
                "{case}, round {round}: the files differ from kpt's"
            );
            // Comments kpt leaves in place keep a fixed point; foot
            // comments never settle (a dash's comment does, after two).
            let settled = krmgraph.stderr.contains("nothing to render");
            match case {
                "settled" => assert_eq!(settled, round > 1, "{case}, round {round}"),
                "foot" => assert!(!settled, "{case}, round {round}"),
                _ => {}
            }
            kpt_src = work.join("kpt").join(case);
            krmgraph_src = work.join("krmgraph").join(case);
        }
    }
}

/// The item memo blobs in the cache at `cache`, by file name.
fn item_memo_blobs(cache: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for fan in std::fs::read_dir(cache.join("blobs")).unwrap() {
        for blob in std::fs::read_dir(fan.unwrap().path()).unwrap() {
            let path = blob.unwrap().path();
            if std::fs::read(&path)
                .unwrap()
                .starts_with(b"krmgraph item memo ")
            {
                found.push(path.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    found
}

#[test]
fn an_edit_that_learns_little_leaves_the_memos_as_they_were() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    let cache = tmp.path().join("cache");
    let kptfile = |name: &str| {
        format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\npipeline:\n  mutators:\n    - exec: cat\n")
    };
    let configmap = |name: &str, value: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: '{value}'\n"
        )
    };
    // 600 resources two steps deep (the memo learns an item's echo at its
    // second step), and one more in a package of its own.
    let many = |value: &str| -> String {
        (0..600)
            .map(|i| configmap(&format!("cm-{i}"), value))
            .collect::<Vec<_>>()
            .join("---\n")
    };
    for (path, text) in [
        ("Kptfile", kptfile("root")),
        ("big/Kptfile", kptfile("big")),
        ("big/many.yaml", many("a")),
        ("sub/Kptfile", kptfile("sub")),
        ("sub/cm.yaml", configmap("edited", "1")),
    ] {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let render = || {
        crate::util::succeed(
            std::process::Command::new(crate::util::krmgraph_bin())
                .args(["render", "--allow-exec"])
                .arg(&root)
                .env("KRMGRAPH_CACHE_DIR", &cache)
                .env("KRMGRAPH_NO_CACHE", "0"),
        );
    };
    render();
    let saved = item_memo_blobs(&cache);
    assert_eq!(saved.len(), 1, "{saved:?}");
    // One resource of ~600 changed: the memos are not written again.
    std::fs::write(root.join("sub/cm.yaml"), configmap("edited", "2")).unwrap();
    render();
    assert_eq!(item_memo_blobs(&cache), saved);
    // Every resource changed: they are, in place of the old ones.
    std::fs::write(root.join("big/many.yaml"), many("b")).unwrap();
    render();
    let resaved = item_memo_blobs(&cache);
    assert_eq!(resaved.len(), 1, "{resaved:?}");
    assert_ne!(resaved, saved);
}

/// A tree of three levels with siblings at each: the root, `a` (with
/// `a/a1` and `a/a2`), `b` and `c`, each with a ConfigMap. Every package
/// runs `function`, but `a/a1` only with `leaf_pipeline`. The root's and
/// `a`'s own ConfigMaps, which come after their subpackages' resources,
/// hold a comment an echo's model declines (read back the long way).
fn deep_source(dir: &Path, function: &str, leaf_pipeline: bool) -> PathBuf {
    let src = dir.join("tree").join("pkg");
    for pkg in ["", "a", "a/a1", "a/a2", "b", "c"] {
        let name = if pkg.is_empty() { "root" } else { pkg };
        let name = name.replace('/', "-");
        let pipeline = match (pkg, leaf_pipeline) {
            ("a/a1", false) => String::new(),
            _ => format!("pipeline:\n  mutators:\n    - exec: \"{function}\"\n"),
        };
        let files = [
            (
                "Kptfile",
                format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n{pipeline}"),
            ),
            (
                "cm.yaml",
                match pkg {
                    "" | "a" => format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}-cm\ndata:\n  # first\n\n  # second\n  k: v\n"),
                    _ => format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}-cm\ndata:\n  k: v\n"),
                },
            ),
        ];
        for (file, text) in files {
            let p = src.join(pkg).join(file);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }
    src
}

/// An edit loop in one place: `tree` is rendered in place (in a copy at
/// `<work>/krmgraph/pkg`, always the same path), after `edit` changes it,
/// and the output becomes `tree` for the next round. Each round's render
/// must equal an uncached render of the same tree; returns, per round, the
/// functions run and the cache's log.
fn edit_loop(
    tmp: &Path,
    tree: &Path,
    counter: &Path,
    edits: &[&dyn Fn(&Path)],
) -> Vec<(usize, String)> {
    let (cache, log, work) = (tmp.join("cache"), tmp.join("cache.log"), tmp.join("w"));
    let log_text = log.to_string_lossy().to_string();
    let mut rounds = Vec::new();
    for (round, edit) in edits.iter().enumerate() {
        edit(tree);
        let before = runs(counter);
        let env = [("KRMGRAPH_CACHE_LOG", log_text.as_str())];
        let cached = render_env(&work, tree, Some(&cache), counter, &[], &env);
        assert_eq!(cached.exit_code, 0, "round {round}: {}", cached.stderr);
        // `KRMGRAPH_CHECK_DIRECT=1` runs each step that passed blocks the
        // long way too.
        let log_now = std::fs::read_to_string(&log).unwrap_or_default();
        let checked = match std::env::var("KRMGRAPH_CHECK_DIRECT").as_deref() {
            Ok("1") => log_now.lines().filter(|l| l.starts_with("passed ")).count(),
            _ => 0,
        };
        let ran = runs(counter) - before - checked;
        let uncached = render(&tmp.join(format!("u{round}")), tree, None, counter, &[]);
        if let Some(d) = describe_difference(&uncached, &cached) {
            panic!("round {round}: the cached render differs from an uncached one: {d}");
        }
        rounds.push((ran, log_now));
        std::fs::remove_dir_all(tree).unwrap();
        copy_tree(&work.join("krmgraph/pkg"), tree).unwrap();
    }
    rounds
}

/// Sets `a/a1`'s ConfigMap value.
fn set_leaf_value(value: &str) -> impl Fn(&Path) + '_ {
    move |tree: &Path| {
        let cm = tree.join("a/a1/cm.yaml");
        let text = std::fs::read_to_string(&cm).unwrap();
        let start = text.find("  k: ").unwrap();
        let end = start + text[start..].find('\n').unwrap();
        let edited = format!("{}  k: {value}{}", &text[..start], &text[end..]);
        std::fs::write(&cm, edited).unwrap();
    }
}

/// After an edit, the ancestors of the edited package see their other
/// subpackages replayed; from the second edit on (the first records what
/// each step does to them) they pass those resources through as blocks,
/// undecoded (`render::blocks`). Each step's function still runs once,
/// and the files are an uncached render's (CI also runs this with
/// `KRMGRAPH_CHECK_DIRECT=1`, which checks every such step against the
/// long way).
#[test]
fn the_ancestors_of_an_edit_pass_replayed_blocks_through() {
    let tmp = tempfile::tempdir().unwrap();
    let count = r#"sh -c 'echo run >> \"$COUNTER\"; cat'"#;
    let tree = deep_source(tmp.path(), count, true);
    let counter = tmp.path().join("counter");
    let no_edit = |_: &Path| {};
    let (one, two) = (set_leaf_value("one"), set_leaf_value("two"));
    let rounds = edit_loop(tmp.path(), &tree, &counter, &[&no_edit, &one, &two]);
    assert_eq!(rounds[0].0, 6, "the cold render runs every pipeline");
    for (ran, log) in &rounds[1..] {
        assert_eq!(*ran, 3, "a/a1, a and the root run once each:\n{log}");
    }
    assert!(!rounds[1].1.contains("passed "), "{}", rounds[1].1);
    let log = &rounds[2].1;
    for line in [
        "passed 1 blocks (2 resources) through pkg/a#0",
        "passed 3 blocks (6 resources) through pkg#0",
    ] {
        assert!(log.lines().any(|l| l == line), "no {line:?} in:\n{log}");
    }
}

/// A step whose function stops echoing its input (here it rewrites a
/// value an edit brought in) gives up its blocks and runs the long way on
/// the output of the process it already ran: each function still runs
/// once, and the files are an uncached render's.
#[test]
fn a_step_that_stops_echoing_runs_its_function_once() {
    let tmp = tempfile::tempdir().unwrap();
    let rewrite = r#"sh -c 'echo run >> \"$COUNTER\"; sed s/MA[R]K/marked/'"#;
    let tree = deep_source(tmp.path(), rewrite, false);
    let counter = tmp.path().join("counter");
    let no_edit = |_: &Path| {};
    let (one, two, mark) = (
        set_leaf_value("one"),
        set_leaf_value("two"),
        set_leaf_value("MARK"),
    );
    let rounds = edit_loop(tmp.path(), &tree, &counter, &[&no_edit, &one, &two, &mark]);
    for (ran, log) in &rounds[1..] {
        assert_eq!(*ran, 2, "a and the root run once each:\n{log}");
    }
    assert!(rounds[2].1.contains(" through pkg/a#0"), "{}", rounds[2].1);
    let log = &rounds[3].1;
    assert!(!log.contains(" through pkg/a#0"), "{log}");
    assert!(log.contains(" through pkg#0"), "{log}");
    let cm = std::fs::read_to_string(tree.join("a/a1/cm.yaml")).unwrap();
    assert!(cm.contains("k: marked"), "{cm}");
}
