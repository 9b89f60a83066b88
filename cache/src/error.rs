//! The store's error type.
//!
//! Corrupt or missing entries are not errors: reads report them as misses.
//! What is left are the cases a caller must handle: the store cannot be used
//! at all ([`Error::Locked`], [`Error::Open`], [`Error::NoLocation`],
//! [`Error::Broken`]; run uncached with one warning), and a read or write of
//! an open store failed ([`Error::Io`], [`Error::Index`]; a warning, never a
//! failed render).
//!
//! Every message carries its whole cause — which path, and what the OS or
//! sled said — because callers print errors with `{}` alone (the CLI's
//! warnings, the engine's first-failure report). The cause is therefore not
//! also returned by `source()`, so that a printer walking the chain does not
//! repeat it.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The result type of the store.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A boxed cause of [`Error::Open`].
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

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
    #[error("failed to open the cache `{}`: {cause}", path.display())]
    Open {
        /// The cache directory.
        path: PathBuf,
        /// What failed, with the path it failed on.
        cause: Cause,
    },
    /// No explicit directory, `KRMGRAPH_CACHE_DIR`, `XDG_CACHE_HOME` or
    /// `HOME` to put the cache in.
    #[error("no cache directory: none of KRMGRAPH_CACHE_DIR, XDG_CACHE_HOME and HOME is set")]
    NoLocation,
    /// A file operation on an open store failed.
    #[error("cache I/O failed on `{}`: {cause}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the OS said.
        cause: io::Error,
    },
    /// The index panicked earlier in this process and is not used again;
    /// the next process discards it if it will not open.
    #[error("the cache index `{}` failed and is disabled for this run", path.display())]
    Broken {
        /// The cache directory.
        path: PathBuf,
    },
    /// The sled index failed on an open store.
    #[error("cache index operation failed: {0}")]
    Index(sled::Error),
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

    /// Whether the store could not be opened because this process may not
    /// write its directory (permissions, a read-only mount). Such a cache
    /// can still be looked at with [`ReadOnlyView`](crate::ReadOnlyView).
    pub fn is_read_only(&self) -> bool {
        let Error::Open { cause, .. } = self else {
            return false;
        };
        cause
            .downcast_ref::<PathError>()
            .is_some_and(|e| is_read_only_kind(e.cause.kind()))
    }

    pub(crate) fn io(path: impl Into<PathBuf>, cause: io::Error) -> Error {
        Error::Io {
            path: path.into(),
            cause,
        }
    }

    /// An [`Error::Open`] of the cache `dir` that failed on `path`.
    pub(crate) fn open_at(dir: &Path, what: What, path: &Path, cause: io::Error) -> Error {
        Error::Open {
            path: dir.to_path_buf(),
            cause: Box::new(PathError::new(what, path, cause)),
        }
    }
}

/// Whether an I/O error means "no write access here".
pub(crate) fn is_read_only_kind(kind: io::ErrorKind) -> bool {
    matches!(
        kind,
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
    )
}

impl From<sled::Error> for Error {
    fn from(e: sled::Error) -> Error {
        Error::Index(e)
    }
}

/// What was being done to a path when the OS refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum What {
    /// Creating a directory.
    Create,
    /// Opening the lock file or the index for writing.
    OpenForWriting,
    /// Taking the lock.
    Lock,
    /// Removing a broken index.
    RemoveIndex,
    /// Removing something of the wrong kind (a repair).
    Remove,
    /// Reading (a read-only look at the store).
    Read,
}

/// An OS error on a path, said as "cannot VERB `PATH`: OS MESSAGE".
#[derive(Debug)]
pub(crate) struct PathError {
    what: What,
    path: PathBuf,
    cause: io::Error,
}

impl PathError {
    pub(crate) fn new(what: What, path: &Path, cause: io::Error) -> PathError {
        PathError {
            what,
            path: path.to_path_buf(),
            cause,
        }
    }
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = match self.what {
            What::Create => "cannot create",
            What::OpenForWriting => "cannot open for writing",
            What::Lock => "cannot lock",
            What::RemoveIndex => "cannot remove the broken index",
            What::Remove => "cannot remove",
            What::Read => "cannot read",
        };
        write!(f, "{verb} `{}`: {}", self.path.display(), self.cause)
    }
}

impl std::error::Error for PathError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_the_path_and_the_os_cause() {
        let dir = Path::new("/c");
        let cause = io::Error::from_raw_os_error(20);
        let os = cause.to_string();
        let e = Error::open_at(dir, What::Create, &dir.join("blobs"), cause);
        assert_eq!(
            e.to_string(),
            format!("failed to open the cache `/c`: cannot create `/c/blobs`: {os}")
        );
        assert!(!e.is_read_only());
        let e = Error::io("/c/marks", io::Error::from_raw_os_error(21));
        assert!(e
            .to_string()
            .starts_with("cache I/O failed on `/c/marks`: "));
        assert!(e.to_string().len() > "cache I/O failed on `/c/marks`: ".len());
    }

    #[test]
    fn permission_and_read_only_mounts_are_read_only() {
        for code in [13, 30] {
            let cause = io::Error::from_raw_os_error(code);
            let e = Error::open_at(
                Path::new("/c"),
                What::OpenForWriting,
                Path::new("/c/lock"),
                cause,
            );
            assert!(e.is_read_only(), "{e}");
        }
        let locked = Error::Locked { path: "/c".into() };
        assert!(!locked.is_read_only());
    }
}
