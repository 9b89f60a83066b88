//! The go-yaml port's integration tests, one binary (as cargo's and
//! ripgrep's): each module tests one part against go-yaml or a property.

mod common;
mod emit_memory;
mod emit_oracle;
mod emit_random;
mod emit_throughput;
mod emitter_events;
mod oracle;
mod roundtrip;
