//! krmgraph's engine: reads kpt packages into a YAML document model, renders
//! their pipelines and writes the result back byte for byte as
//! `kpt fn render` does. No terminal I/O and no argument parsing here; the
//! `krmgraph` binary (crate `cli`) owns those.

#![deny(missing_docs)]

pub mod kyaml;
pub mod yaml;
