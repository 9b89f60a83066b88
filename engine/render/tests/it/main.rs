//! The render crate's integration tests, one binary.

mod step_cache;
