//! The render crate's integration tests, one binary.

mod memos;
mod step_cache;
