//! `gcr.io/kpt-fn/starlark` v0.2 – v0.3 (kyaml framework): runs the Starlark
//! script of its functionConfig over the ResourceList.
//!
//! Config: `fn.kpt.dev/v1alpha1 StarlarkRun {metadata.name, source,
//! params}` or a `ConfigMap` with `data.source` ([`config`]). The script
//! sees `ctx.resource_list` (a dict with `items` and `functionConfig`) and
//! edits or replaces `items` ([`run`](mod@run)). Resources cross as go-yaml values
//! ([`convert`] in, [`marshal`] out), so a resource comes back with its
//! keys sorted and its scalars re-quoted by go-yaml's rules; comments and
//! the original key order of resources that came in are restored by id at
//! the function boundary, as kpt does for the container.
//!
//! Output is kyaml's framework's: on success the items, with whatever
//! `print` wrote on stderr; on failure one error result
//! `{message, severity: error}`, `[error] : <message>` on stderr after the
//! printed lines, exit code 1.
//!
//! Later tags (v0.4 on, `unstable`, `latest`) are built on the kpt
//! functions SDK and report differently; they are not built in.

pub mod config;
pub mod convert;
pub mod errors;
pub mod marshal;
pub mod run;
pub mod while_loops;

use super::apply_setters::report;
use super::framework::{self, Outcome, ResourceList};
use super::{direct, Builtin};
use crate::exec::ProcessOutput;
use config::Config;
use krmgraph_yaml::Node;

/// The starlark images krmgraph runs in process.
pub static BUILTINS: &[Builtin] = &[Builtin {
    name: "starlark",
    registry: "gcr.io/kpt-fn/",
    tags: &["v0.2", "v0.2.0", "v0.2.1", "v0.3", "v0.3.0"],
    version: "1",
    config_kinds: &["StarlarkRun", "ConfigMap"],
    run,
    direct: Some(run_direct),
    per_item: None,
}];

/// Runs the function.
pub fn run(input: &[u8]) -> ProcessOutput {
    framework::run_bytes(input, unreadable, run_list)
}

/// [`run()`] on nodes ([`super::direct`]).
pub fn run_direct(items: &[Node], config: Option<&Node>) -> Option<direct::Output> {
    framework::run_nodes(items, config, run_list)
}

/// Input the framework cannot read: it stops before the function, with
/// nothing on stdout.
fn unreadable(e: &str) -> ProcessOutput {
    let mut output = framework::failure(e);
    output.stderr = container_stderr(&format!("[error] : {e}")).into_bytes();
    output
}

fn run_list(mut list: ResourceList) -> Outcome {
    let config = match Config::decode(list.function_config.as_ref()) {
        Ok(c) => c,
        Err(e) => return Outcome::Process(failure(list, "", &e)),
    };
    let outcome = run::run(&config, &list.items, list.function_config.as_ref());
    match outcome.result {
        Ok(items) => {
            list.items = items;
            Outcome::Wrote {
                list,
                stderr: container_stderr(&outcome.stderr).into_bytes(),
                exit_code: 0,
                unwritable: Some(framework::failure),
            }
        }
        Err(e) => Outcome::Process(failure(list, &outcome.stderr, &e)),
    }
}

/// kyaml's framework reporting `message`: one error result, and the
/// message after what the script printed (Go's `print` writes straight to
/// stderr; the framework prints the error with `%v`, no newline).
fn failure(list: ResourceList, printed: &str, message: &str) -> ProcessOutput {
    let mut output = report::kyaml_failure(list, message).into_process();
    output.stderr = container_stderr(&format!("{printed}[error] : {message}")).into_bytes();
    output
}

/// Stderr as kpt records it for a container function: read line by line
/// (`bufio.Scanner`, which drops a `\r` before each `\n`) and joined with
/// `\n`, so the final newline of the last `print` is gone. A built-in
/// stands in for the container, and `krmgraph fn run` under kpt's `exec:`
/// then reports the same text.
fn container_stderr(raw: &str) -> String {
    raw.lines().collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests;
