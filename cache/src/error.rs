//! The store's error type.
//!
//! Corrupt or missing entries are not errors: reads report them as misses.
//! What is left are the cases a caller must handle: the store cannot be used
//! at all ([`Error::Locked`], [`Error::Open`], [`Error::NoLocation`],
//! [`Error::Broken`]; run uncached with one warning), and a read or write of
//! an open store failed ([`Error::Io`], [`Error::Index`]; a warning, never a
//! failed render).

use std::io;
use std::path::PathBuf;

/// The result type of the store.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A store failure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Another process (e.g. a running `krmgraph watch`) has the store open.
    #[error("the cache `{}` is in use by another krmgraph process", path.display())]
    Locked {
        /// The cache directory.
        path: PathBuf,
    },
    /// The store could not be created or opened, even after discarding a
    /// broken index.
    #[error("failed to open the cache `{}`", path.display())]
    Open {
        /// The cache directory.
        path: PathBuf,
        /// What failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// No explicit directory, `KRMGRAPH_CACHE_DIR`, `XDG_CACHE_HOME` or
    /// `HOME` to put the cache in.
    #[error("no cache directory: none of KRMGRAPH_CACHE_DIR, XDG_CACHE_HOME and HOME is set")]
    NoLocation,
    /// A file operation on an open store failed.
    #[error("cache I/O failed on `{}`", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The index panicked earlier in this process and is not used again;
    /// the next process discards it if it will not open.
    #[error("the cache index `{}` failed and is disabled for this run", path.display())]
    Broken {
        /// The cache directory.
        path: PathBuf,
    },
    /// The sled index failed on an open store.
    #[error("cache index operation failed")]
    Index(#[source] sled::Error),
}

impl Error {
    /// Whether the store cannot be used at all, so the caller should render
    /// uncached (and warn once) rather than warn per step.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            Error::Locked { .. } | Error::Open { .. } | Error::Broken { .. } | Error::NoLocation
        )
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

impl From<sled::Error> for Error {
    fn from(e: sled::Error) -> Error {
        Error::Index(e)
    }
}
