//! Workload generators shared by the benches.
