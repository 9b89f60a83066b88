//! The kyaml port's integration tests, one binary: differential tests
//! against the real kpt, and reparse against the real round trip.

mod reparse;
mod vs_kpt;
