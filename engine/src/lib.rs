//! krmgraph's engine: reads kpt packages into a YAML document model, renders
//! their pipelines and writes the result back byte for byte as
//! `kpt fn render` does. No terminal I/O and no argument parsing here; the
//! `krmgraph` binary (crate `cli`) owns those.
//!
//! - [`yaml`]: go-yaml v3 ported — scanner, parser, document model, emitter.
//! - [`kyaml`]: kyaml's package reader/writer, annotations, comment and
//!   field-order restoration.
//! - [`kptfile`]: Kptfile loading, strict decoding, validation.
//! - [`package`]: subpackage discovery and display paths.
//! - [`krm`]: the KRM checks kpt applies to resources.
//! - [`fnruntime`]: the function boundary and the `exec:` runtime.
//! - [`render`]: depth-first hydration and the output modes.
//! - [`eval`]: `fn eval`, one function over a package or stdin.
//! - [`event`]: progress events and kpt's progress text.
//! - [`gostr`], [`fsutil`]: Go string formatting; atomic file writes.
//! - [`par`]: per-resource passes on the render's pool, with a loop's error.

#![deny(missing_docs)]

pub mod eval;
pub mod event;
pub mod fnruntime;
pub mod fsutil;
pub mod gostr;
pub mod kptfile;
pub mod krm;
pub mod kyaml;
pub mod package;
pub mod par;
pub mod render;
#[cfg(test)]
mod testing;
pub mod yaml;
