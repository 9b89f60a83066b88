//! The krmgraph integration tests: one binary, one module per area.
//!
//! Tests that need the real `kpt` binary skip with a printed reason when it
//! is missing, and fail instead when `KRMGRAPH_REQUIRE_KPT=1` is set (CI);
//! tests that need a Docker engine do the same with
//! `KRMGRAPH_REQUIRE_DOCKER=1`.

mod bad_input;
mod bfs;
mod builtin_diff;
mod builtins_kustomize;
mod builtins_sdk;
mod builtins_setters;
mod builtins_starlark;
mod cache;
mod cache_faults;
mod catalog;
mod check;
mod conformance;
mod containers;
mod crossplane;
mod demo;
mod differential;
mod eval_diff;
mod explain;
mod jobs;
mod keys;
mod kpt_diff;
mod messages;
mod reliability;
mod remote;
mod test_images;
mod util;
mod ux;
mod watch;
