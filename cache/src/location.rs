//! Where the cache lives when the caller does not say.
//!
//! The order is: an explicit directory (`--cache-dir`), then
//! `KRMGRAPH_CACHE_DIR`, then `$XDG_CACHE_HOME/krmgraph`, then
//! `$HOME/.cache/krmgraph`. Empty variables count as unset, and a relative
//! `XDG_CACHE_HOME` is ignored, as the XDG base directory spec asks.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// The variable that overrides the default cache directory.
pub const ENV_CACHE_DIR: &str = "KRMGRAPH_CACHE_DIR";

/// Resolves the cache directory from `explicit` and the process environment.
pub fn resolve_dir(explicit: Option<&Path>) -> Result<PathBuf> {
    resolve_dir_with(explicit, |name| std::env::var_os(name))
}

/// Resolves the cache directory from `explicit` and the variables `env`
/// returns; [`resolve_dir`] passes the process environment.
pub fn resolve_dir_with(
    explicit: Option<&Path>,
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<PathBuf> {
    if let Some(dir) = explicit {
        return Ok(dir.to_path_buf());
    }
    let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var(ENV_CACHE_DIR) {
        return Ok(dir);
    }
    if let Some(xdg) = var("XDG_CACHE_HOME").filter(|p| p.is_absolute()) {
        return Ok(xdg.join("krmgraph"));
    }
    if let Some(home) = var("HOME") {
        return Ok(home.join(".cache").join("krmgraph"));
    }
    Err(Error::NoLocation)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(explicit: Option<&str>, vars: &[(&str, &str)]) -> Option<PathBuf> {
        let env = |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        };
        resolve_dir_with(explicit.map(Path::new), env).ok()
    }

    #[test]
    fn precedence() {
        let all = [
            (ENV_CACHE_DIR, "/k"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(resolve(Some("/e"), &all), Some("/e".into()));
        assert_eq!(resolve(None, &all), Some("/k".into()));
        assert_eq!(resolve(None, &all[1..]), Some("/x/krmgraph".into()));
        assert_eq!(resolve(None, &all[2..]), Some("/h/.cache/krmgraph".into()));
        assert_eq!(resolve(None, &[]), None);
    }

    #[test]
    fn empty_and_relative_values_are_skipped() {
        let vars = [
            (ENV_CACHE_DIR, ""),
            ("XDG_CACHE_HOME", "relative/cache"),
            ("HOME", "/h"),
        ];
        assert_eq!(resolve(None, &vars), Some("/h/.cache/krmgraph".into()));
    }
}
