//! Every input a render reads besides the tree is keyed (issue 30, item
//! 1; `engine/render/src/inputs.rs` lists them): for each, a render with
//! the cache under one value, then one under another value, writes and
//! prints what a render without the cache writes and prints under the
//! second value. The tree (`testdata/keys/tree`) makes each of them matter
//! where it can without a registry: attribution, the order, truncated
//! output and `--allow-exec` change its render, and the test checks that
//! they do.

use std::path::Path;
use std::process::Command;

use crate::kpt_diff::{describe_difference, normalise, read_tree, Rendered};
use crate::util::{copy_tree, krmgraph_bin, open_store, remove_records, repo_root};

/// One way to render: flags and environment.
#[derive(Clone, Copy)]
struct Setting {
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
}

const fn with(args: &'static [&'static str]) -> Setting {
    Setting { args, env: &[] }
}

/// An input, and two values of it. `matters`: whether the tree renders
/// differently under the two (else both renders only must agree).
struct Input {
    name: &'static str,
    first: Setting,
    second: Setting,
    matters: bool,
}

const EXEC: &str = "--allow-exec";

const INPUTS: &[Input] = &[
    Input {
        name: "KPT_DISABLE_ATTRIBUTION",
        first: Setting {
            args: &[EXEC],
            env: &[("KPT_DISABLE_ATTRIBUTION", "1")],
        },
        second: with(&[EXEC]),
        matters: true,
    },
    Input {
        name: "--order",
        first: with(&[EXEC, "--order", "dfs"]),
        second: with(&[EXEC, "--order", "bfs"]),
        matters: true,
    },
    Input {
        name: "--truncate-output",
        first: with(&[EXEC]),
        second: with(&[EXEC, "--truncate-output=false"]),
        matters: true,
    },
    Input {
        name: "--allow-exec",
        first: with(&[EXEC]),
        second: with(&[]),
        matters: true,
    },
    Input {
        name: "--no-builtins",
        first: with(&[EXEC]),
        second: with(&[EXEC, "--no-builtins", "--image-pull-policy", "Never"]),
        matters: true,
    },
    Input {
        name: "--no-builtin",
        first: with(&[EXEC]),
        second: with(&[
            EXEC,
            "--no-builtin",
            "gcr.io/kpt-fn/set-annotations",
            "--image-pull-policy",
            "Never",
        ]),
        matters: true,
    },
    Input {
        name: "--image-pull-policy",
        first: with(&[EXEC]),
        second: with(&[EXEC, "--image-pull-policy", "Always"]),
        matters: false,
    },
    Input {
        name: "--allow-network",
        first: with(&[EXEC]),
        second: with(&[EXEC, "--allow-network"]),
        matters: false,
    },
];

/// Renders a copy of `tree` at `work/<label>/tree` in place (from inside
/// it: `exec: ./chatty.sh` is found from the working directory, as kpt
/// finds it), with the cache at `cache` or none.
fn render(work: &Path, label: &str, setting: Setting, cache: Option<&Path>) -> Rendered {
    let tree = repo_root().join("testdata/keys/tree");
    let dir = work.join(label).join("tree");
    copy_tree(&tree, &dir).unwrap();
    let mut command = Command::new(krmgraph_bin());
    command
        .current_dir(&dir)
        .arg("render")
        .args(setting.args)
        .arg(".")
        .env_remove("KPT_DISABLE_ATTRIBUTION")
        .envs(setting.env.iter().copied());
    match cache {
        Some(cache) => command
            .env("KRMGRAPH_NO_CACHE", "0")
            .env("KRMGRAPH_CACHE_DIR", cache),
        None => command.env("KRMGRAPH_NO_CACHE", "1"),
    };
    let out = command.output().unwrap();
    let mut stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    // krmgraph's reports after kpt's text are not what is compared.
    if let Some(i) = stderr.find("\n\n  × ") {
        stderr.truncate(i + 1);
    }
    Rendered {
        exit_code: out.status.code().unwrap_or(-1),
        stdout: normalise(&String::from_utf8_lossy(&out.stdout), &dir),
        stderr: normalise(&stderr, &dir),
        files: read_tree(&dir),
    }
}

#[test]
fn every_keyed_input_changes_what_the_cache_replays() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, input) in INPUTS.iter().enumerate() {
        let work = tmp.path().join(i.to_string());
        let cache = work.join("cache");
        let first = render(&work, "first", input.first, Some(&cache));
        let cached = render(&work, "cached", input.second, Some(&cache));
        let uncached = render(&work, "uncached", input.second, None);
        if let Some(d) = describe_difference(&uncached, &cached) {
            panic!("{}: the cache changed the render:\n{d}", input.name);
        }
        if input.matters {
            assert!(
                describe_difference(&first, &uncached).is_some(),
                "{}: the tree renders alike under both values; the test proves nothing",
                input.name
            );
        }
    }
}

/// Renders a copy of `src` in place with the cache in `cache` (or none).
fn render_copy(src: &Path, dir: &Path, cache: Option<&Path>) -> Rendered {
    copy_tree(src, dir).unwrap();
    let mut command = Command::new(krmgraph_bin());
    command.current_dir(dir).args(["render", "."]);
    match cache {
        Some(cache) => command
            .env("KRMGRAPH_NO_CACHE", "0")
            .env("KRMGRAPH_CACHE_DIR", cache),
        None => command.env("KRMGRAPH_NO_CACHE", "1"),
    };
    let out = command.output().unwrap();
    Rendered {
        exit_code: out.status.code().unwrap_or(-1),
        stdout: normalise(&String::from_utf8_lossy(&out.stdout), dir),
        stderr: normalise(&String::from_utf8_lossy(&out.stderr), dir),
        files: read_tree(dir),
    }
}

/// A change of a record's kind.
type Tamper = fn(&mut krmgraph_cache::RecordKind);

/// Rewrites every record of `kind` in the store at `cache` with `tamper`.
fn tamper_records(cache: &Path, kind: &krmgraph_cache::RecordKind, tamper: Tamper) {
    use krmgraph_cache::Store;
    let store = open_store(cache);
    for (key, record) in store.steps().unwrap() {
        let Ok(mut record) = record else { continue };
        if record.kind == *kind {
            tamper(&mut record.kind);
            store.put_step(&key, &record).unwrap();
        }
    }
    store.flush().unwrap();
}

#[test]
fn a_record_of_another_kind_or_version_is_a_miss() {
    use krmgraph_cache::Store;
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    // A cold render, then an edit (subtrees replayed, blocks and files
    // recorded): every kind of record is in the store.
    let rendered = tmp.path().join("rendered/demo");
    render_copy(&repo_root().join("testdata/demo"), &rendered, Some(&cache));
    let cold = tmp.path().join("cold/demo");
    copy_tree(&rendered, &cold).unwrap();
    let edit = |dir: &Path, value: &str| {
        let service = dir.join("service.yaml");
        let text = std::fs::read_to_string(&service).unwrap();
        let edited: String = text
            .lines()
            .map(|line| match line.split_once("- port: ") {
                Some((indent, _)) => format!("{indent}- port: {value}\n"),
                None => format!("{line}\n"),
            })
            .collect();
        assert_ne!(edited, text, "no port to edit");
        std::fs::write(&service, edited).unwrap();
    };
    edit(&cold, "81");
    let edited = tmp.path().join("edited/demo");
    let first = render_copy(&cold, &edited, Some(&cache));
    assert_eq!(first.exit_code, 0, "{}", first.stderr);
    // A second edit: blocks pass through their steps and their files are
    // known (`facts`, `files`).
    let second = tmp.path().join("second/demo");
    copy_tree(&edited, &second).unwrap();
    edit(&second, "83");
    let more = render_copy(&second, &tmp.path().join("more/demo"), Some(&cache));
    assert_eq!(more.exit_code, 0, "{}", more.stderr);
    let kinds: std::collections::BTreeSet<krmgraph_cache::RecordKind> = {
        let store = open_store(&cache);
        let steps = store.steps().unwrap();
        steps
            .into_iter()
            .filter_map(|(_, r)| r.ok())
            .map(|r| r.kind)
            .collect()
    };
    let names: Vec<&str> = kinds.iter().map(|k| k.name.as_str()).collect();
    for expected in ["step", "subtree", "memos", "render", "fixed-point"] {
        assert!(names.contains(&expected), "no {expected} record: {names:?}");
    }
    println!("record kinds tampered with: {names:?}");
    let tampers: [(&str, Tamper); 2] = [
        ("another version", |k| k.version += 1),
        ("another kind", |k| k.name.push_str("-other")),
    ];
    // The trees a render reads next: ones the cache holds renders of (the
    // demo as checked in, an edit not yet rendered), ones it knows as
    // fixed points (as rendered), and one it never saw (another edit).
    let unseen = tmp.path().join("unseen/demo");
    copy_tree(&edited, &unseen).unwrap();
    edit(&unseen, "82");
    let original = repo_root().join("testdata/demo");
    let inputs = [
        (&original, false),
        (&rendered, true),
        (&cold, false),
        (&edited, true),
        (&unseen, false),
    ];
    for kind in &kinds {
        for (how, tamper) in tampers {
            let label = format!("{}-{}", kind.name, how.replace(' ', "-"));
            let tampered = tmp.path().join(&label).join("cache");
            copy_tree(&cache, &tampered).unwrap();
            // Without the marks a no-op render asks the store, and without
            // the records above this kind a render reaches it.
            let _ = std::fs::remove_file(tampered.join("marks"));
            let above: &[&str] = match kind.name.as_str() {
                "step" => &["render", "fixed-point", "subtree"],
                "subtree" => &["render", "fixed-point"],
                _ => &[],
            };
            remove_records(&tampered, above);
            tamper_records(&tampered, kind, tamper);
            let before = count_records(&tampered, |k| k.name.starts_with(&kind.name) && k != kind);
            for (n, (input, settled)) in inputs.iter().enumerate() {
                let dir = |what: &str| tmp.path().join(&label).join(format!("{what}-{n}/demo"));
                let cached = render_copy(input, &dir("cached"), Some(&tampered));
                let uncached = render_copy(input, &dir("uncached"), None);
                assert!(
                    !cached.stderr.contains("without the cache"),
                    "{label}: {}",
                    cached.stderr
                );
                // A tree the cache knows as a fixed point is not rendered
                // (no log): its files are what must agree.
                let same = if *settled {
                    (cached.exit_code, &cached.files) == (uncached.exit_code, &uncached.files)
                } else {
                    describe_difference(&uncached, &cached).is_none()
                };
                assert!(
                    same,
                    "{label}, input {n}: the cache changed the render:\n{:?}",
                    describe_difference(&uncached, &cached)
                );
            }
            // The renders met the records and took them for misses.
            let after = count_records(&tampered, |k| k.name.starts_with(&kind.name) && k != kind);
            if kind.name != "memos" {
                assert!(
                    after < before,
                    "{label}: no tampered record was read ({before} left)"
                );
            }
        }
    }
}

/// How many records in the store at `cache` have a kind `matches` accepts.
fn count_records(cache: &Path, matches: impl Fn(&krmgraph_cache::RecordKind) -> bool) -> usize {
    use krmgraph_cache::Store;
    let store = open_store(cache);
    let steps = store.steps().unwrap();
    steps
        .into_iter()
        .filter_map(|(_, r)| r.ok())
        .filter(|r| matches(&r.kind))
        .count()
}
