//! The step cache store: step key → [`StepRecord`], plus the output blobs
//! the records name. It knows nothing about KRM; the engine decides what a
//! step key covers and what the outputs are.
//!
//! | module | owns |
//! | --- | --- |
//! | `digest` | [`Digest`], the 32-byte blake3 naming keys and blobs |
//! | `record` | [`StepRecord`] and its versioned byte encoding |
//! | `store` | the [`Store`] trait and its reports ([`Hit`], [`Stats`], [`GcReport`], [`VerifyReport`]) |
//! | `gc` | which records and blobs a gc removes |
//! | `sled_store` | [`SledStore`]: sled index + blob files in a cache directory |
//! | `blobs` | the content-addressed blob files (tmp → rename, verified reads) |
//! | `marks` | keys in one checksummed file, tested without opening the store ([`is_marked`]) |
//! | `repair` | [`Repair`]: what the maintenance commands remove from a damaged directory |
//! | `readonly` | [`ReadOnlyView`]: stats and a report-only verify without write access |
//! | `files` | opening only regular files, removing without following symlinks |
//! | `memory` | [`MemoryStore`], for tests and uncached renders |
//! | `tiered` | [`Tiered`]: the local store, then a shared [`Remote`] cache (read through, uploads after success) |
//! | `location` | [`resolve_dir`]: `--cache-dir`, `KRMGRAPH_CACHE_DIR`, XDG, `$HOME` |
//! | `error` | [`Error`] |
//!
//! The failure contract: the cache never fails or corrupts a render. Bad
//! entries read as misses and are removed; a store that cannot be opened
//! ([`Error::is_unavailable`]) means render uncached with one warning.
//!
//! ```
//! use krmgraph_cache::{Digest, MemoryStore, RecordKind, SledStore, Store};
//!
//! # let dir = tempfile::tempdir().unwrap();
//! // Open the cache; if it is locked or broken, render uncached.
//! let store: Box<dyn Store> = match SledStore::open(dir.path()) {
//!     Ok(store) => Box::new(store),
//!     Err(e) if e.is_unavailable() => Box::new(MemoryStore::new()),
//!     Err(e) => return Err(e),
//! };
//! let key = Digest::of(b"the step's key inputs");
//! if store.lookup(&key)?.is_none() {
//!     let output = b"kind: ConfigMap\n"; // run the step
//!     store.record(&key, &RecordKind::new("step", 1), &[("resources", output)], b"")?;
//! }
//! let hit = store.lookup(&key)?.expect("recorded above");
//! assert_eq!(hit.outputs[0], b"kind: ConfigMap\n");
//! store.flush()?;
//! # Ok::<(), krmgraph_cache::Error>(())
//! ```

#![deny(missing_docs)]

mod blobs;
mod digest;
mod error;
mod files;
mod gc;
mod location;
mod marks;
mod memory;
mod readonly;
mod record;
mod repair;
mod sled_store;
mod store;
mod tiered;

pub use digest::{Digest, ParseDigestError};
pub use error::{Cause, Error, Result};
pub use location::{resolve_dir, resolve_dir_with, ENV_CACHE_DIR};
pub use marks::is_marked;
pub use memory::MemoryStore;
pub use readonly::ReadOnlyView;
pub use record::{DecodeError, Output, RecordKind, StepRecord, RECORD_VERSION};
pub use repair::Repair;
pub use sled_store::SledStore;
pub use store::{BlobInfo, GcReport, Hit, Stats, Store, VerifyReport};
pub use tiered::{Moved, Remote, RemoteError, RemoteStats, Tiered, Upload};
