//! The crate's error: what was wrong, naming the file (and line and
//! column for YAML), the XR and the pipeline step.

use std::path::PathBuf;

/// Why a render could not be done.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory could not be read.
    #[error("{}: {message}", path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// The OS's reason.
        message: String,
    },
    /// Malformed YAML.
    #[error("{location}: {message}")]
    Yaml {
        /// `file:line:col`.
        location: String,
        /// go-yaml's message.
        message: String,
    },
    /// An input that is well-formed YAML but not what the command needs
    /// (a Composition not in Pipeline mode, a missing function...).
    #[error("{0}")]
    Input(String),
    /// Rendering one XR failed (the message names the XR's file).
    #[error("{0}")]
    Render(String),
    /// A function runtime could not be started or stopped.
    #[error("{0}")]
    Runtime(String),
}
