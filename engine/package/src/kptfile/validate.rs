//! kpt's Kptfile validation (`kf.Validate` at package load): every pipeline
//! entry names exactly one function, a valid image reference, at most one
//! kind of functionConfig, and a `configPath` that stays inside the package
//! and holds exactly one KRM resource.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;

use super::decode::go_quote;
use super::{Function, Kptfile};

/// A rule a Kptfile breaks, printed as kpt prints its `ValidateError`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("Kptfile is invalid:\nField: `{field}`\n{}Reason: {reason}\n", .value.as_deref().map(|v| format!("Value: {}\n", go_quote(v))).unwrap_or_default())]
pub struct ValidateError {
    /// The offending field, e.g. `pipeline.mutators[0].configPath`.
    pub field: String,
    /// Its value, when kpt shows one.
    pub value: Option<String>,
    /// What is wrong.
    pub reason: String,
    /// Where a YAML syntax error in a `configPath` file is (not printed;
    /// for a source snippet after kpt's text).
    pub position: Option<SourcePosition>,
}

/// Why a `configPath` file is not a usable functionConfig.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigFileError {
    /// kpt's reason text.
    pub reason: String,
    /// Where a YAML syntax error in the file is.
    pub position: Option<SourcePosition>,
}

/// Checks that a `configPath` file exists and holds one KRM resource;
/// returns kpt's reason text (and a syntax error's position) when it does
/// not.
pub type ConfigFileCheck<'a> = dyn Fn(&str) -> Result<(), ConfigFileError> + 'a;

/// Validates the pipeline of `kptfile`, reading `configPath` files through
/// `check_config_file`.
pub fn validate(
    kptfile: &Kptfile,
    check_config_file: &ConfigFileCheck,
) -> Result<(), ValidateError> {
    let pipeline = &kptfile.pipeline;
    for (kind, functions) in [
        ("mutators", &pipeline.mutators),
        ("validators", &pipeline.validators),
    ] {
        for (i, f) in functions.iter().enumerate() {
            validate_function(f, &format!("pipeline.{kind}[{i}]"), check_config_file)?;
        }
    }
    Ok(())
}

fn validate_function(
    f: &Function,
    field: &str,
    check_config_file: &ConfigFileCheck,
) -> Result<(), ValidateError> {
    let error = |field: String, value: Option<&str>, reason: &str| ValidateError {
        field,
        value: value.map(str::to_string),
        reason: reason.to_string(),
        position: None,
    };
    if f.image.is_empty() && f.exec.is_empty() {
        return Err(error(
            field.into(),
            None,
            "must specify a functon (`image` or `exec`) to execute",
        ));
    }
    if !f.image.is_empty() && !f.exec.is_empty() {
        return Err(error(
            field.into(),
            None,
            "must not specify both `image` and `exec` at the same time",
        ));
    }
    if !f.image.is_empty() && !is_valid_image(&f.image) {
        let reason = format!("function name {} is invalid", go_quote(&f.image));
        return Err(error(format!("{field}.image"), Some(&f.image), &reason));
    }
    let has_config_map = f.config_map.as_ref().is_some_and(|m| !m.is_empty());
    if has_config_map && !f.config_path.is_empty() {
        return Err(error(
            field.into(),
            None,
            "functionConfig must not specify both `configMap` and `configPath` at the same time",
        ));
    }
    if !f.config_path.is_empty() {
        let path_field = format!("{field}.configPath");
        let value = Some(f.config_path.as_str());
        check_config_path_syntax(&f.config_path)
            .map_err(|r| error(path_field.clone(), value, r))?;
        check_config_file(&f.config_path).map_err(|e| ValidateError {
            position: e.position,
            ..error(path_field, value, &e.reason)
        })?;
    }
    Ok(())
}

/// kpt's `validateFnConfigPathSyntax`.
pub fn check_config_path_syntax(path: &str) -> Result<(), &'static str> {
    if path.trim().is_empty() {
        return Err("path must not be empty");
    }
    let cleaned = clean_path(path);
    if cleaned.starts_with('/') {
        return Err("path must be relative");
    }
    if cleaned.contains("..") {
        return Err("path must not be outside the package");
    }
    Ok(())
}

/// Go's `path.Clean` for slash paths.
pub fn clean_path(path: &str) -> String {
    krmgraph_kyaml::gopath::clean(path)
}

/// Whether `image` is a valid image reference (the docker reference
/// grammar kpt checks: optional registry, lowercase path components, an
/// optional `:tag` and an optional `@sha256:` digest).
pub fn is_valid_image(image: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        let domain_component = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
        let domain = format!(r"{domain_component}(?:\.{domain_component})*(?::[0-9]+)?");
        let path_component = r"[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*";
        let name = format!(r"(?:{domain}/)?{path_component}(?:/{path_component})*");
        // Go's `\w` is ASCII; Rust's is Unicode, which also made this
        // regex take ~100 ms to compile (127 copies of the Unicode class).
        let tag = r"[0-9A-Za-z_][0-9A-Za-z_.-]{0,127}";
        let digest = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";
        Regex::new(&format!(r"^{name}(?::{tag})?(?:@{digest})?$")).expect("image regex")
    })
    .is_match(image)
}

/// Where in a user's file an error is, for a source snippet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourcePosition {
    /// The file.
    pub path: PathBuf,
    /// 0-based line.
    pub line: usize,
    /// 0-based column (in characters).
    pub column: usize,
}

/// kpt's `GetValidatedFnConfigFromPath` check at load time: the file at
/// `config_path` (relative to `dir`) must exist and hold exactly one KRM
/// resource. Returns kpt's reason text otherwise, and where a YAML syntax
/// error is.
pub fn check_function_config(dir: &Path, config_path: &str) -> Result<(), ConfigFileError> {
    let reason = |reason: String| ConfigFileError {
        reason,
        position: None,
    };
    let Ok(bytes) = std::fs::read(dir.join(config_path)) else {
        return Err(reason(
            "functionConfig must exist in the current package".to_string(),
        ));
    };
    let nodes = krmgraph_kyaml::byteio::ByteReader {
        preserve_seq_indent: true,
        wrap_bare_seq_node: true,
        ..Default::default()
    }
    .read(&bytes)
    .map_err(|e| ConfigFileError {
        reason: format!(
            "failed to read functionConfig {}: {e}",
            krmgraph_util::gostr::quote(config_path)
        ),
        position: match e {
            krmgraph_kyaml::KyamlError::MalformedYaml { mark, .. } => Some(SourcePosition {
                path: dir.join(clean_path(config_path)),
                line: mark.0,
                column: mark.1,
            }),
            _ => None,
        },
    })?
    .nodes;
    if nodes.len() > 1 {
        return Err(reason(format!(
            "functionConfig {} must not contain more than one config, got {}",
            krmgraph_util::gostr::quote(config_path),
            nodes.len()
        )));
    }
    let Some(node) = nodes.first() else {
        return Err(reason(
            "functionConfig must exist in the current package".to_string(),
        ));
    };
    krmgraph_kyaml::krm::check_krm(node).map_err(|e| {
        reason(format!(
            "functionConfig {}: {e}",
            krmgraph_util::gostr::quote(config_path)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_names() {
        for ok in [
            "gcr.io/kpt-fn/set-namespace:v0.1.3",
            "set-labels:v0.1.4",
            "gcr.io/kpt-functions/no-op",
            "localhost:5000/a/b:latest",
            "a/b@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ] {
            assert!(is_valid_image(ok), "{ok}");
        }
        for bad in [
            "pull gcr.io/kpt-fn-demo/foo:v0.1",
            "Foo/Bar",
            "a:b:c",
            "",
            "a:tägg",
        ] {
            assert!(!is_valid_image(bad), "{bad}");
        }
    }

    #[test]
    fn config_path_syntax() {
        assert_eq!(check_config_path_syntax(" "), Err("path must not be empty"));
        assert_eq!(
            check_config_path_syntax("/some/root/x.yaml"),
            Err("path must be relative")
        );
        assert_eq!(
            check_config_path_syntax("some/../../home/.kube/config"),
            Err("path must not be outside the package")
        );
        assert_eq!(check_config_path_syntax("fns/config.yaml"), Ok(()));
    }

    #[test]
    fn error_text_matches_kpt() {
        let e = ValidateError {
            field: "pipeline.mutators[0].configPath".into(),
            value: Some("/some/root/labelconfig.yaml".into()),
            reason: "path must be relative".into(),
            position: None,
        };
        assert_eq!(
            e.to_string(),
            "Kptfile is invalid:\nField: `pipeline.mutators[0].configPath`\nValue: \"/some/root/labelconfig.yaml\"\nReason: path must be relative\n"
        );
    }
}
