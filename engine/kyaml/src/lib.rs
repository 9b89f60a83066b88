//! A port of the parts of kustomize's kyaml (v0.15.0, the version under kpt
//! 1.0.0-beta.56) that decide what `kpt fn render` reads and writes.
//!
//! kyaml operates on `*RNode` pointers into go-yaml trees; Rust has owned
//! trees, so every operation here takes a `&Node` or `&mut Node`. A resource
//! is a [`Node`](krmgraph_yaml::Node) of kind `Document` (as read from a file)
//! or `Mapping` (as read from a function's ResourceList); functions unwrap a
//! document the way `RNode.YNode()` does.
//!
//! - [`rnode`]: field lookup, setters, clearers, annotations, `GetMeta`.
//! - [`kioutil`]: annotation names, legacy/internal copies, default paths,
//!   sorting by path and index.
//! - `seqindent`: kyaml's `DeriveSeqIndentStyle`.
//! - [`byteio`]: `ByteReader` and `ByteWriter`.
//! - [`item_memo`]: the texts of functions' input items and whether their
//!   echoes read back plainly, remembered across the pipelines of a render.
//! - [`json`]: what kyaml writes for a resource in a `.json` file.
//! - [`openapi`], `walk`, `comments`, `order`: `comments.CopyComments`
//!   and `order.SyncOrder`, which restore comments and field order after a
//!   function ran.
//! - [`kio_pipeline`]: the annotation bookkeeping around one function call
//!   (`kio.Pipeline` and `runtimeutil.FunctionFilter`).
//! - [`krm`]: the KRM checks kpt applies to resources.
//! - [`gitignore`], [`pkgio`]: `LocalPackageReader` (with `.krmignore`) and
//!   `LocalPackageWriter`.
//!
//! Error messages are kyaml's and kpt's own text, since kpt prints them
//! verbatim (`Error: <path>: MalformedYAMLError: yaml: line 1: ...`).

#![deny(missing_docs)]

pub mod byteio;
mod comments;
pub mod file_memo;
pub mod gitignore;
pub mod gopath;
pub mod item_memo;
pub mod json;
pub mod kio_pipeline;
pub mod kioutil;
pub mod krm;
pub mod openapi;
mod order;
pub mod pkgio;
pub mod rnode;
mod seqindent;
mod walk;
mod yamlio;

pub use yamlio::node_to_string;

/// An error from a kyaml operation. `Display` is the message kyaml (and so
/// kpt) prints, including the wrapped cause where kyaml prefixes it.
#[derive(Debug, thiserror::Error)]
pub enum KyamlError {
    /// `ErrorIfInvalid`: a node has another kind than the operation needs.
    #[error("wrong node kind: expected {expected} but got {actual}{}", node_contents(.contents))]
    WrongNodeKind {
        /// Go name of the expected kind (`MappingNode`).
        expected: &'static str,
        /// Go name of the actual kind.
        actual: &'static str,
        /// The node as kyaml's encoder writes it (`None` if that failed).
        contents: Option<String>,
    },
    /// A mapping whose content does not alternate keys and values.
    #[error("yaml MappingNodes must have even length contents")]
    OddMapping,
    /// `GetMeta` found none of apiVersion, kind and metadata.
    #[error("missing Resource metadata")]
    MissingMetadata,
    /// go-yaml could not parse a document.
    #[error("MalformedYAMLError: {message}")]
    MalformedYaml {
        /// go-yaml's message (its line number counts from the start of the
        /// document chunk kyaml split off, as kpt prints it).
        message: String,
        /// Where the problem is in the whole input: 0-based line and
        /// column, for diagnostics.
        mark: (usize, usize),
    },
    /// go-yaml could not encode a node.
    #[error("{0}")]
    Encode(String),
    /// A line after `---` carries more than a comment.
    #[error("invalid document separator: {0}")]
    InvalidDocumentSeparator(String),
    /// A path part kyaml's `PathGetter` rejects.
    #[error("{0}")]
    InvalidPath(String),
    /// A resource lacks an annotation the caller requires.
    #[error("missing annotation {0}")]
    MissingAnnotation(String),
    /// An index annotation that is not an integer.
    #[error("unable to parse config.kubernetes.io/index {value} :strconv.Atoi: parsing {value:?}: invalid syntax")]
    InvalidIndex {
        /// The annotation value.
        value: String,
    },
    /// Legacy and internal annotations disagree (`kio.Pipeline`).
    #[error("resource input to function has mismatched legacy and internal {0} annotations")]
    MismatchedAnnotations(&'static str),
    /// Some inputs use legacy annotations and others internal ones.
    #[error("the annotation formatting in the input resources is not consistent")]
    InconsistentAnnotationFormat,
    /// `order.SyncOrder` failed; kyaml quotes the cause.
    #[error("failed to sync field order: {0:?}")]
    SyncOrder(String),
    /// A resource cannot be converted to JSON.
    #[error("{0}")]
    Json(String),
    /// Writing a package: a problem with the resources' paths.
    #[error("{0}")]
    Package(String),
    /// An error while reading or writing `path` (kyaml's `WrapPrefixf`).
    #[error("{path}: {source}")]
    File {
        /// The file (absolute, as kyaml reports it).
        path: String,
        /// What went wrong.
        source: Box<KyamlError>,
    },
    /// An I/O error.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

fn node_contents(contents: &Option<String>) -> String {
    contents
        .as_ref()
        .map(|c| format!(": node contents:\n{c}"))
        .unwrap_or_default()
}

/// Results of kyaml operations.
pub type Result<T, E = KyamlError> = std::result::Result<T, E>;
