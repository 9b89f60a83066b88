//! `krmgraph fn run` and `krmgraph fn list`: built-in functions as
//! standalone KRM functions.

use std::io::{Read, Write};
use std::process::ExitCode;

use krmgraph_render::{builtin, resolve_image};

use crate::args::FnRunArgs;

/// Runs a built-in on the ResourceList read from stdin.
pub fn run(args: FnRunArgs) -> ExitCode {
    let image = resolve_image(&args.image);
    let Some(function) = builtin::lookup(&image) else {
        eprintln!("Error: {image} is not a built-in function (see `krmgraph fn list`)");
        return ExitCode::from(1);
    };
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut input) {
        eprintln!("Error: reading stdin: {e}");
        return ExitCode::from(1);
    }
    let output = (function.run)(&input);
    let _ = std::io::stdout().write_all(&output.stdout);
    let _ = std::io::stderr().write_all(&output.stderr);
    let code = output.exit_code.unwrap_or(1).clamp(0, 255) as u8;
    ExitCode::from(code)
}

/// Prints the built-ins as a table: image, the tags each implementation
/// covers, its config kinds, and what it does.
pub fn list() -> ExitCode {
    let header = ["IMAGE", "TAGS", "CONFIG KINDS", "DESCRIPTION"].map(String::from);
    let rows: Vec<[String; 4]> = builtin::all()
        .map(|b| {
            let tags = if b.tags == ["*"] {
                "any".to_string()
            } else {
                b.tags.join(",")
            };
            let kinds = if b.config_kinds.is_empty() {
                "-".to_string()
            } else {
                b.config_kinds.join(",")
            };
            [
                format!("{}{}", b.registry, b.name),
                tags,
                kinds,
                description(b.name).to_string(),
            ]
        })
        .collect();
    let _ = std::io::stdout().write_all(table(&header, &rows).as_bytes());
    ExitCode::SUCCESS
}

/// `rows` under `header` in columns two spaces apart, the last column
/// unpadded.
fn table(header: &[String; 4], rows: &[[String; 4]]) -> String {
    let all = || std::iter::once(header).chain(rows);
    let widths: Vec<usize> = (0..3)
        .map(|c| all().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in all() {
        for (c, width) in widths.iter().enumerate() {
            out.push_str(&format!("{:<width$}  ", row[c]));
        }
        out.push_str(&row[3]);
        out.push('\n');
    }
    out
}

/// What the catalog function `name` does, in one line.
fn description(name: &str) -> &'static str {
    match name {
        "apply-replacements" => {
            "copy fields from one resource into others (kustomize replacements)"
        }
        "apply-setters" => "set the fields marked with setter comments to the given values",
        "create-setters" => "add setter comments to fields holding the given values",
        "drop-comments" => "remove every comment",
        "ensure-name-substring" => "prefix or suffix resource names (and references to them)",
        "gatekeeper" => "check resources against the package's Gatekeeper constraints (Rego)",
        "kubeval" => "validate resources against Kubernetes schemas and the package's CRDs",
        "list-setters" => "list the setters used in the package",
        "no-op" => "change nothing (tests and pipelines under construction)",
        "remove-local-config-resources" => {
            "drop resources annotated config.kubernetes.io/local-config"
        }
        "search-replace" => "find fields by path or value and replace their values",
        "set-annotations" => "add annotations to every resource",
        "set-image" => "set container images (name, tag, digest)",
        "set-labels" => "add labels to every resource and its selectors and templates",
        "set-namespace" => "set the namespace of namespaced resources (and references)",
        "starlark" => "run a Starlark script over the resources",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_has_a_description() {
        for b in builtin::all() {
            assert!(!description(b.name).is_empty(), "{}", b.name);
        }
    }

    #[test]
    fn columns_line_up() {
        let header = ["A", "B", "C", "D"].map(String::from);
        let rows = [["long-name", "x", "y", "z z"].map(String::from)];
        assert_eq!(
            table(&header, &rows),
            "A          B  C  D\nlong-name  x  y  z z\n"
        );
    }
}
