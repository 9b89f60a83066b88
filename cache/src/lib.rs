//! The step cache store. Empty until the build-graph issue lands: the engine
//! renders uncached today.
