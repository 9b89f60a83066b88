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
use crate::util::{copy_tree, krmgraph_bin, repo_root};

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
