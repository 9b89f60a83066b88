//! The errors of the kustomize-era functions. Their texts are the product:
//! kpt shows them (`[error] : failed to run function: ...`), so each
//! repeats the original's wording, and a wrapping error writes its cause
//! into its own text as Go's `%w` and kustomize's `WrapPrefixf` do. For
//! the same reason no cause is also a `#[source]`: shown as a chain, it
//! would be printed twice.

use thiserror::Error;

use krmgraph_kyaml::KyamlError;

/// What stops a function; the text is its whole message.
#[derive(Debug, Error)]
pub enum Error {
    /// The functionConfig was rejected.
    #[error("failed to configure function: {0}")]
    Configure(ConfigError),
    /// The transformer failed on a resource.
    #[error("failed to run function: {0}")]
    Run(RunError),
}

/// A rejected functionConfig.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ConfigError {
    /// Neither a `ConfigMap` nor the function's own kind (or no config).
    #[error("function config must be a ConfigMap or {0}")]
    WrongKind(&'static str),
    /// set-namespace without a namespace.
    #[error("input namespace cannot be empty")]
    EmptyNamespace,
    /// set-labels without labels.
    #[error("input label list cannot be empty")]
    EmptyLabels,
    /// set-annotations without annotations.
    #[error("input annotation list cannot be empty")]
    EmptyAnnotations,
}

/// A resource the transformer could not change or convert.
#[derive(Debug, Error)]
pub enum RunError {
    /// Following one field spec failed (`fieldspec.Filter`).
    #[error("considering field '{path}' of object\n{object}: {cause}")]
    Field {
        /// The field spec's path.
        path: String,
        /// The resource, as YAML.
        object: String,
        /// Why.
        cause: FieldError,
    },
    /// A binding's subjects are not a list of mappings.
    #[error("{0}")]
    Subjects(KyamlError),
    /// The resource has no JSON form (a map with non-string keys).
    #[error("{0}")]
    Json(String),
}

/// Why a field spec could not be followed.
#[derive(Debug, Error)]
pub enum FieldError {
    /// The path goes through a scalar.
    #[error("expected sequence or mapping node")]
    NotACollection,
    /// An empty part in the path (`a//b`).
    #[error("cannot set or create an empty field name")]
    EmptyFieldName,
    /// An item of a list on the path failed.
    #[error("visit traversal on path: [{path}]: {cause}")]
    Traversal {
        /// The rest of the path, space-separated as Go prints a slice.
        path: String,
        /// Why.
        cause: Box<FieldError>,
    },
    /// The field at the end is not what the setter needs (a mapping for
    /// labels, a scalar for a namespace).
    #[error("{0}")]
    Set(KyamlError),
}
