//! What a render's output depends on besides the tree, in one place.
//!
//! Every cache key starts from [`digest`]: a step's and a subtree's
//! (`stepcache`, through its `base`), the files of a block
//! (`StepCache::files_key`), and a whole render's (`shortcut::render_key`).
//! [`RenderOptions`] and [`RunnerOptions`] are destructured here without
//! `..`, so a field added to either does not compile until it is keyed
//! below or said not to change what a render writes or prints.
//!
//! | input | keyed | why |
//! | --- | --- | --- |
//! | key schema, krmgraph's version | yes | a new version may render differently |
//! | `--order` | yes | BFS and DFS may give other output |
//! | `--allow-exec`, `--allow-network`, `--no-builtins`, `--no-builtin`, `--image-pull-policy` | yes | which functions run, and how |
//! | `--truncate-output` | yes | the log a record replays |
//! | `KPT_DISABLE_ATTRIBUTION` ([`RenderOptions::attribution`]) | yes | the `cnrm.cloud.google.com/blueprint` annotation |
//! | `-o`, `--results-dir` | no | where output goes, not what it is; whole renders are keyed in place only |
//! | `--jobs` | no | the same output for any value (`jobs.rs` tests it) |
//! | `--fn-timeout` | no | a function that times out fails the render, which is never recorded |
//! | `KRMGRAPH_CHECK_DIRECT` | no | it only checks, and panics on a difference |
//! | the cache itself | no | |
//! | the memos ([`RunnerOptions::memos`]) | no | they only save work: what a memo gives is what the slow path makes, and `KRMGRAPH_CHECK_DIRECT` checks it |
//!
//! What functions read beyond their input (files, the environment of an
//! `exec:` program) is not keyed: `--verify` finds such a function.

use krmgraph_cache::Digest;
use krmgraph_fn::RunnerOptions;

use crate::shortcut::Hasher;
use crate::{Order, RenderOptions};

/// Bump when what a key covers changes (v2: kpt's attribution rule for
/// existing `kpt-...` values; records made before would replay the old
/// one).
const SCHEMA: &str = "krmgraph render inputs v2";

/// The digest of everything in `options` that changes a render's output
/// or log, with the schema and krmgraph's version.
pub(crate) fn digest(options: &RenderOptions) -> Digest {
    let RenderOptions {
        output: _,
        results_dir: _,
        runner,
        order,
        jobs: _,
        cache: _,
        attribution,
    } = options;
    let RunnerOptions {
        allow_exec,
        allow_network,
        image_pull_policy,
        truncate_output,
        no_builtins,
        no_builtin_images,
        timeout: _,
        check_direct: _,
        memos: _,
    } = runner;
    let mut h = Hasher::default();
    h.field(SCHEMA.as_bytes());
    h.field(env!("CARGO_PKG_VERSION").as_bytes());
    h.field(match order {
        None => b"root's order",
        Some(Order::DepthFirst) => b"dfs",
        Some(Order::BreadthFirst) => b"bfs",
    });
    for flag in [
        allow_exec,
        allow_network,
        truncate_output,
        no_builtins,
        attribution,
    ] {
        h.field(&[u8::from(*flag)]);
    }
    h.field(image_pull_policy.as_bytes());
    h.field(&(no_builtin_images.len() as u64).to_le_bytes());
    for image in no_builtin_images {
        h.field(image.as_bytes());
    }
    Digest::from(h.0.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An input's name and a change of it.
    type Change = (&'static str, fn(&mut RenderOptions));

    #[test]
    fn each_keyed_input_changes_the_digest() {
        let base = RenderOptions::default();
        let changes: Vec<Change> = vec![
            ("order", |o| o.order = Some(Order::BreadthFirst)),
            ("allow_exec", |o| o.runner.allow_exec = !o.runner.allow_exec),
            ("allow_network", |o| {
                o.runner.allow_network = !o.runner.allow_network
            }),
            ("truncate_output", |o| {
                o.runner.truncate_output = !o.runner.truncate_output
            }),
            ("no_builtins", |o| {
                o.runner.no_builtins = !o.runner.no_builtins
            }),
            ("no_builtin_images", |o| {
                o.runner.no_builtin_images.push("x".into())
            }),
            ("image_pull_policy", |o| {
                o.runner.image_pull_policy = "Never".into()
            }),
            ("attribution", |o| o.attribution = !o.attribution),
        ];
        for (name, change) in changes {
            let mut changed = base.clone();
            change(&mut changed);
            assert_ne!(digest(&base), digest(&changed), "{name} is not keyed");
        }
        let mut unkeyed = base.clone();
        unkeyed.jobs = 8;
        unkeyed.runner.timeout = std::time::Duration::from_secs(1);
        unkeyed.output = crate::Output::Stdout;
        assert_eq!(digest(&base), digest(&unkeyed));
    }
}
