//! `gcr.io/kpt-functions/no-op`: returns its input unchanged (re-serialized
//! as a kyaml-based function does).

use super::framework;
use crate::fnruntime::exec::ProcessOutput;

/// Runs the function.
pub fn run(input: &[u8]) -> ProcessOutput {
    framework::run_items(input, |_| Ok(()))
}
