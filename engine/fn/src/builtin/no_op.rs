//! `gcr.io/kpt-functions/no-op`: returns its input unchanged (re-serialized
//! as a kyaml-based function does).

use super::direct;
use super::framework::{self, Outcome};
use crate::exec::ProcessOutput;
use krmgraph_yaml::Node;

/// Runs the function.
pub fn run(input: &[u8]) -> ProcessOutput {
    framework::run_bytes(input, framework::failure, Outcome::success)
}

/// [`run`] on nodes ([`super::direct`]).
pub fn run_direct(items: &[Node], config: Option<&Node>) -> Option<direct::Output> {
    framework::run_nodes(items, config, Outcome::success)
}
