//! YAML for KRM: a port of go-yaml v3 (the YAML library under kyaml, and so
//! under kpt), with kyaml's compact-sequence patch in the emitter.
//!
//! krmgraph must write the bytes `kpt fn render` writes and report the errors
//! it reports (`yaml: line 3: could not find expected ':'`). Both come from
//! go-yaml's scanner, its comment attribution (which comment becomes a head,
//! line or foot comment of which node) and its emitter, so this module ports
//! those state machines function by function rather than approximating them
//! on top of another parser. See `docs/architecture.md`.
//!
//! - `chars`: character classes.
//! - [`event`]: marks, styles and events shared by parser and emitter.
//! - `scanner` and [`parser`]: bytes to tokens to events, with comments.
//! - [`node`]: the document model.
//! - [`decode`]: events to [`Node`] trees, and go-yaml's error messages.
//! - [`aliasing`]: the limit on alias expansion for decoders that expand.
//! - [`resolve`]: implicit tag resolution (`123` is `!!int`).
//! - [`encode`]: [`Node`] trees to events.
//! - [`emitter`]: events to bytes.

#![deny(missing_docs)]

pub mod aliasing;
mod chars;
pub mod debug;
pub mod decode;
pub mod emitter;
pub mod encode;
pub mod event;
pub mod gov2;
pub mod node;
pub mod parser;
mod reader;
pub mod reparse;
pub mod resolve;
mod scanner;
mod token;

pub use decode::{parse_documents, unmarshal, Decoder, YamlError};
pub use emitter::EmitError;
pub use encode::Encoder;
pub use node::{Kind, Node, Style};
