//! Shared remote caches for krmgraph: clients of the servers teams already
//! run, behind `krmgraph_cache::Remote` (which `krmgraph_cache::Tiered`
//! reads through and uploads to).
//!
//! | module | owns |
//! | --- | --- |
//! | `chunks` | content-defined chunks, so the remote holds each run of bytes once |
//! | `mapping` | how a record and its blobs are laid out as a REAPI action result (both protocols store these bytes) |
//! | `reapi` | the Remote Execution API v2 client (`grpc://`): ActionCache, CAS, ByteStream, Capabilities |
//! | `http` | Bazel's HTTP cache protocol (`http://`): `GET`/`PUT`/`HEAD` on `ac/` and `cas/` |
//! | `proto` | the REAPI messages used, written out with prost's derive |
//! | `tls` | the roots a `grpcs://` or `https://` server is checked against |
//!
//! `docs/remote-cache.md` has the mapping and the failure rules.

#![deny(missing_docs)]

mod chunks;
mod http;
mod mapping;
mod proto;
mod reapi;
mod tls;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use krmgraph_cache::Remote;

/// How to talk to the server.
#[derive(Debug, Clone)]
pub struct Options {
    /// The REAPI instance name (`--remote-instance-name`).
    pub instance: String,
    /// Extra request headers (`--remote-header NAME=VALUE`): tokens.
    pub headers: Vec<(String, String)>,
    /// How long one request may take (`--remote-timeout`).
    pub timeout: Duration,
    /// A PEM file of CA certificates trusted besides the system's, for
    /// `grpcs://` and `https://` (`--remote-tls-ca`).
    pub tls_ca: Option<PathBuf>,
}

/// A configured remote cache.
pub enum Client {
    /// A REAPI server.
    Reapi(reapi::Reapi),
    /// A Bazel HTTP cache.
    Http(http::Http),
}

impl Client {
    /// The client for `url`: `grpc[s]://host:port` or
    /// `http[s]://host[:port][/prefix]`. The error says why the URL (or
    /// the TLS roots) cannot be used.
    pub fn open(url: &str, options: &Options) -> Result<Client, String> {
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(format!(
                "--remote-cache `{}`: not a URL (grpc[s]://host:port or http[s]://host:port/prefix)",
                redact(url)
            ));
        };
        let roots = || tls::Roots::load(options.tls_ca.as_deref());
        match scheme {
            "grpc" | "grpcs" => {
                let shown = format!("{scheme}://{rest}");
                let (uri, tls) = match scheme {
                    "grpcs" => (format!("https://{rest}"), Some(roots()?.grpc())),
                    _ => (format!("http://{rest}"), None),
                };
                reapi::Reapi::new(&uri, &shown, options, tls).map(Client::Reapi)
            }
            "http" => http::Http::new(url, options, None).map(Client::Http),
            "https" => http::Http::new(url, options, Some(roots()?.http())).map(Client::Http),
            _ => Err(format!(
                "--remote-cache `{}`: the scheme must be grpc://, grpcs://, http:// or https://",
                redact(url)
            )),
        }
    }

    /// The client as the tiered store takes it.
    pub fn into_remote(self) -> Arc<dyn Remote> {
        match self {
            Client::Reapi(c) => Arc::new(c),
            Client::Http(c) => Arc::new(c),
        }
    }

    /// Whether the server answers, and what it says about itself.
    pub fn check(&self) -> Result<String, String> {
        let checked = match self {
            Client::Reapi(c) => c.check(),
            Client::Http(c) => c.check(),
        };
        checked.map_err(|e| e.message)
    }
}

/// `url` without the password of its user info, for messages.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find('/').unwrap_or(rest.len());
    match rest[..end].rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}{}", &rest[end..])
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(
            redact("http://ci:s3cret@h:1/cache"),
            "http://ci:***@h:1/cache"
        );
        assert_eq!(redact("grpc://h:1"), "grpc://h:1");
    }

    #[test]
    fn unknown_schemes_are_refused_with_the_reason() {
        let options = Options {
            instance: String::new(),
            headers: vec![],
            timeout: Duration::from_secs(1),
            tls_ca: None,
        };
        let err = Client::open("ftp://u:pw@h/x", &options).err().unwrap();
        assert!(
            err.contains("grpc://, grpcs://, http:// or https://") && !err.contains("pw"),
            "{err}"
        );
    }
}
