//! What krmgraph says after kpt's text when a function cannot run: an
//! `exec:` refused without `--allow-exec` (which Kptfile, which function),
//! and an image that is not present locally whose name is close to a
//! built-in's (which built-in was probably meant).

use std::path::Path;

use krmgraph_package::kptfile::locate::{self, Located};
use krmgraph_package::{hint, Hint};

use crate::builtin::{self, Builtin};

/// The registry of the short image names (`set-labels:v0.1`).
const CATALOG: &str = "gcr.io/kpt-fn/";

/// Why `exec` in the Kptfile of `package_dir` does not run.
pub fn exec_not_allowed(exec: &str, package_dir: &Path) -> Hint {
    let kptfile = package_dir.join(krmgraph_package::kptfile::KPTFILE_NAME);
    let located = locate::function_field(package_dir, "exec", |v| v == exec);
    let field = located
        .as_ref()
        .map(|l| format!(" (`{}`)", l.field))
        .unwrap_or_default();
    Hint {
        message: format!(
            "exec function `{exec}`{field} in `{}` needs `--allow-exec`",
            kptfile.display()
        ),
        length: located.as_ref().map_or(0, |l| l.width),
        position: located.map(|l| l.position),
        label: "runs a program on this machine".to_string(),
        help: Some(format!(
            "exec functions run with your permissions; render with `--allow-exec` if you trust `{exec}`"
        )),
    }
}

/// For a container `image` that failed: when its name is close to a
/// built-in's and the engine does not have it, a hint naming the built-in
/// (pointing at the image in the Kptfile of `package_dir`, if given).
pub fn missing_image(image: &str, package_dir: Option<&Path>) -> Option<Hint> {
    let near = near_builtin(image)?;
    if crate::container::image_present(image) != Some(false) {
        return None;
    }
    let located = package_dir
        .and_then(|dir| locate::function_field(dir, "image", |v| crate::resolve_image(v) == image));
    Some(near.hint(image, located))
}

/// A built-in near an image that is not one.
#[derive(Debug, PartialEq)]
struct Near {
    /// The built-in's registry and name.
    path: String,
    /// The tags it answers for, in `fn list` order.
    tags: Vec<&'static str>,
    /// The image's tag ("" for none).
    tag: String,
    /// Whether the image has the built-in's name (only its tag differs).
    same_name: bool,
}

/// The built-in whose name is nearest `image`'s, if the name is close
/// (a misspelling) or the same with a tag no built-in answers for. `None`
/// for an image that runs as a built-in.
fn near_builtin(image: &str) -> Option<Near> {
    if builtin::lookup(image).is_some() {
        return None;
    }
    let (path, tag) = builtin::split_image(image);
    let (registry, name) = match path.rfind('/') {
        Some(i) => (&path[..=i], &path[i + 1..]),
        None => ("", path),
    };
    let names = builtin::all().map(|b| b.name);
    let near = if builtin::all().any(|b| b.name == name) {
        name
    } else {
        hint::closest(name, names)?
    };
    let family: Vec<&Builtin> = builtin::all().filter(|b| b.name == near).collect();
    // The registry the image names, else the one the most tags are in.
    let registry = family
        .iter()
        .find(|b| b.registry == registry)
        .or_else(|| family.iter().max_by_key(|b| b.tags.len()))?
        .registry;
    let mut tags: Vec<&'static str> = Vec::new();
    for b in family.iter().filter(|b| b.registry == registry) {
        for t in b.tags {
            if !tags.contains(t) {
                tags.push(t);
            }
        }
    }
    Some(Near {
        path: format!("{registry}{near}"),
        tags,
        tag: tag.to_string(),
        same_name: near == name,
    })
}

impl Near {
    /// Whether the built-in answers for the image's tag.
    fn covers_tag(&self) -> bool {
        self.tags.iter().any(|t| *t == "*" || *t == self.tag)
    }

    /// The tags in words.
    fn tag_list(&self) -> String {
        if self.tags.contains(&"*") {
            "any tag".to_string()
        } else {
            format!("tags {}", self.tags.join(", "))
        }
    }

    fn hint(&self, image: &str, located: Option<Located>) -> Hint {
        let list = "`krmgraph fn list` lists the built-ins";
        let (message, label, help) = if self.same_name && self.covers_tag() {
            // Another registry's image of the same name.
            (
                format!("image `{image}` is not present locally"),
                "not a built-in".to_string(),
                format!(
                    "krmgraph has a built-in `{}`, which runs with no container ({list})",
                    self.reference(located.as_ref())
                ),
            )
        } else if self.same_name {
            (
                format!(
                    "image `{image}` is not present locally, and krmgraph's built-in `{}` does not answer for tag `{}`",
                    self.path, self.tag
                ),
                "not a built-in tag".to_string(),
                format!("the built-in answers for {} ({list})", self.tag_list()),
            )
        } else {
            let tags = if self.covers_tag() {
                String::new()
            } else {
                format!(" for {}", self.tag_list())
            };
            (
                format!("image `{image}` is not present locally, and no built-in has that name"),
                "not a built-in".to_string(),
                format!(
                    "did you mean `{}`? krmgraph runs `{}` as a built-in{tags}, with no container ({list})",
                    self.reference(located.as_ref()),
                    self.path
                ),
            )
        };
        Hint {
            message,
            length: located.as_ref().map_or(0, |l| l.width),
            position: located.map(|l| l.position),
            label,
            help: Some(help),
        }
    }

    /// The built-in's image as the user would write it: short when the
    /// Kptfile names it short, with the image's tag when the built-in
    /// answers for it.
    fn reference(&self, located: Option<&Located>) -> String {
        let short = located.is_some_and(|l| !l.value.contains('/'));
        let path = match self.path.strip_prefix(CATALOG) {
            Some(name) if short => name,
            _ => &self.path,
        };
        if self.covers_tag() && !self.tag.is_empty() {
            format!("{path}:{}", self.tag)
        } else {
            path.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelt_builtins_are_near() {
        let near = near_builtin("gcr.io/kpt-fn/set-namspace:v0.1.3").unwrap();
        assert_eq!(near.path, "gcr.io/kpt-fn/set-namespace");
        assert!(!near.same_name && near.covers_tag());
        assert_eq!(near.reference(None), "gcr.io/kpt-fn/set-namespace:v0.1.3");
        let near = near_builtin("gcr.io/kpt-fn/set-namespace:v9").unwrap();
        assert!(near.same_name && !near.covers_tag());
        assert!(near.tag_list().starts_with("tags v0.1, v0.1.0"));
        assert!(near_builtin("gcr.io/kpt-fn/set-namespace:v0.1.3").is_none());
        assert!(near_builtin("gcr.io/kpt-fn/totally-different:v1").is_none());
        assert!(near_builtin("example.com/app:v1").is_none());
    }

    #[test]
    fn hints_name_the_builtin() {
        let near = near_builtin("gcr.io/kpt-fn/set-namspace:v0.1.3").unwrap();
        let hint = near.hint("gcr.io/kpt-fn/set-namspace:v0.1.3", None);
        assert_eq!(
            hint.message,
            "image `gcr.io/kpt-fn/set-namspace:v0.1.3` is not present locally, and no built-in has that name"
        );
        assert!(hint
            .help
            .unwrap()
            .starts_with("did you mean `gcr.io/kpt-fn/set-namespace:v0.1.3`?"));
    }
}
