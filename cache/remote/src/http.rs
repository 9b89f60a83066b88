//! Bazel's HTTP cache protocol (`http://`): `GET`/`PUT`/`HEAD` on
//! `{base}/ac/{hex}` (an action result, [`crate::mapping`]) and
//! `{base}/cas/{hex}` (a blob, SHA-256 named), as nginx with WebDAV `PUT`,
//! bazel-remote and GCS serve it. 404 (and 204 on a read) is a miss; every
//! upload has a `Content-Length`; Basic auth comes from the URL's user
//! info, other headers from `--remote-header`. Blocking (ureq), each
//! request bounded by the timeout.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use base64::Engine as _;
use krmgraph_cache::{Digest, Hit, Moved, RemoteError, Upload};
use prost::Message;

use crate::mapping::{self, DigestFn};
use crate::{proto, Options};

/// Blobs at least this large are asked about (`HEAD`) before they are
/// sent; a smaller one costs about as much to send as to ask about. Chunks
/// are asked about: an edit's ancestors hold thousands the server has.
const HEAD_FROM: usize = 512;
/// Parallel uploads.
const UPLOADERS: usize = 8;
/// Parallel reads (action results, blobs, chunks).
const FETCHERS: usize = 8;

/// A Bazel HTTP cache.
pub struct Http {
    agent: ureq::Agent,
    base: String,
    shown: String,
    headers: Vec<(String, String)>,
    /// Blobs this process sent or saw on the server.
    present: Mutex<HashSet<String>>,
}

/// Bodies of `GET`s, in request order, `None` for a miss.
type Bodies = Vec<Option<Vec<u8>>>;

/// A response: the status and, for a 200 to a GET, the body.
struct Answer {
    status: u16,
    body: Vec<u8>,
}

impl Http {
    /// A client of `url` (`http://[user:password@]host[:port][/prefix]`).
    /// `tls`: how to check an `https://` server.
    pub fn new(
        url: &str,
        options: &Options,
        tls: Option<ureq::tls::TlsConfig>,
    ) -> Result<Http, String> {
        let (base, userinfo) = split_userinfo(url);
        let base = base.trim_end_matches('/').to_owned();
        let mut headers = options.headers.clone();
        if let Some(userinfo) = userinfo {
            let token = base64::engine::general_purpose::STANDARD.encode(userinfo);
            headers.push(("Authorization".into(), format!("Basic {token}")));
        }
        let config = ureq::Agent::config_builder()
            .tls_config(tls.unwrap_or_default())
            .timeout_global(Some(options.timeout))
            .http_status_as_error(false)
            // One kept-alive connection per uploader or fetcher thread.
            .max_idle_connections(UPLOADERS.max(FETCHERS) * 2)
            .max_idle_connections_per_host(UPLOADERS.max(FETCHERS))
            .build();
        Ok(Http {
            agent: config.into(),
            shown: base.clone(),
            base,
            headers,
            present: Mutex::default(),
        })
    }

    fn call(&self, method: &str, path: &str, body: Option<&[u8]>) -> Result<Answer, RemoteError> {
        let url = format!("{}/{path}", self.base);
        let headers = self.headers.iter();
        let response = match (method, body) {
            ("PUT", Some(body)) => {
                let mut request = self.agent.put(&url);
                for (name, value) in headers {
                    request = request.header(name, value);
                }
                request.send(body)
            }
            ("HEAD", _) => {
                let mut request = self.agent.head(&url);
                for (name, value) in headers {
                    request = request.header(name, value);
                }
                request.call()
            }
            _ => {
                let mut request = self.agent.get(&url);
                for (name, value) in headers {
                    request = request.header(name, value);
                }
                request.call()
            }
        };
        let mut response =
            response.map_err(|e| RemoteError::new(format!("{method} {path}: {e}")))?;
        let status = response.status().as_u16();
        if status == 401 || status == 403 {
            return Err(RemoteError {
                message: format!("{method} {path}: {status} (the credentials were refused)"),
                auth: true,
            });
        }
        let body = if status == 200 && method == "GET" {
            response
                .body_mut()
                .with_config()
                .limit(u64::MAX)
                .read_to_vec()
                .map_err(|e| RemoteError::new(format!("{method} {path}: {e}")))?
        } else {
            Vec::new()
        };
        Ok(Answer { status, body })
    }

    /// `GET`: the body, `None` on a miss.
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, RemoteError> {
        let answer = self.call("GET", path, None)?;
        match answer.status {
            200 => Ok(Some(answer.body)),
            404 | 204 => Ok(None),
            s => Err(RemoteError::new(format!("GET {path}: HTTP {s}"))),
        }
    }

    fn put(&self, path: &str, body: &[u8]) -> Result<(), RemoteError> {
        match self.call("PUT", path, Some(body))?.status {
            200..=204 => Ok(()),
            s => Err(RemoteError::new(format!("PUT {path}: HTTP {s}"))),
        }
    }

    /// Whether the server has `path`.
    fn has(&self, path: &str) -> Result<bool, RemoteError> {
        match self.call("HEAD", path, None)?.status {
            200 => Ok(true),
            404 | 204 => Ok(false),
            s => Err(RemoteError::new(format!("HEAD {path}: HTTP {s}"))),
        }
    }

    /// Whether the server answers, for `krmgraph cache stats`: the empty
    /// blob's `HEAD` (found or not, any answer but an error will do).
    pub fn check(&self) -> Result<String, RemoteError> {
        let empty = DigestFn::Sha256.digest(b"");
        self.has(&format!("cas/{}", empty.hash))?;
        Ok("answers (Bazel HTTP cache protocol, SHA-256)".into())
    }

    /// Sends blob `d` unless the server (or this process) has it; returns
    /// the bytes sent.
    fn send_blob(&self, d: &proto::Digest, data: &[u8]) -> Result<u64, RemoteError> {
        let path = format!("cas/{}", d.hash);
        if data.len() >= HEAD_FROM && self.has(&path)? {
            return Ok(0);
        }
        self.put(&path, data)?;
        Ok(data.len() as u64)
    }
}

impl Http {
    /// `GET`s of `paths`, up to [`FETCHERS`] at a time (else a hit is one
    /// round trip per blob, one after another), in `paths` order, `None`
    /// for those the server lacks; and the bytes received. The first
    /// failure is the error, after which the rest are not asked for.
    fn get_many(&self, paths: &[String]) -> Result<(Bodies, u64), RemoteError> {
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let down = AtomicU64::new(0);
        let got: Mutex<Bodies> = Mutex::new(vec![None; paths.len()]);
        let failure: Mutex<Option<RemoteError>> = Mutex::default();
        let work = || {
            while !stop.load(Ordering::Relaxed) {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = paths.get(i) else {
                    return;
                };
                match self.get(path) {
                    Ok(body) => {
                        let n = body.as_ref().map_or(0, Vec::len);
                        down.fetch_add(n as u64, Ordering::Relaxed);
                        lock(&got)[i] = body;
                    }
                    Err(e) => {
                        lock(&failure).get_or_insert(e);
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            }
        };
        std::thread::scope(|s| {
            for _ in 1..FETCHERS.min(paths.len()) {
                s.spawn(work);
            }
            work();
        });
        if let Some(e) = lock(&failure).take() {
            return Err(e);
        }
        let got = got.into_inner().unwrap_or_else(|e| e.into_inner());
        Ok((got, down.into_inner()))
    }
}

/// `scheme://user:pass@rest` → (`scheme://rest`, `user:pass`).
fn split_userinfo(url: &str) -> (String, Option<String>) {
    let Some((scheme, rest)) = url.split_once("://") else {
        return (url.to_owned(), None);
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rsplit_once('@') {
        Some((userinfo, host)) => (
            format!("{scheme}://{host}{}", &rest[authority_end..]),
            Some(userinfo.to_owned()),
        ),
        None => (url.to_owned(), None),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl krmgraph_cache::Remote for Http {
    fn fetch(&self, key: &Digest) -> Result<(Option<Hit>, Moved), RemoteError> {
        let (mut hits, moved) = self.fetch_many(std::slice::from_ref(key))?;
        Ok((hits.pop().flatten(), moved))
    }

    /// The action results in parallel, then the blobs all of them name,
    /// then the chunks (each round up to [`FETCHERS`] `GET`s at a time).
    fn fetch_many(&self, keys: &[Digest]) -> Result<(Vec<Option<Hit>>, Moved), RemoteError> {
        let f = DigestFn::Sha256;
        let paths: Vec<String> = keys
            .iter()
            .map(|key| format!("ac/{}", mapping::action_key(f, key).hash))
            .collect();
        let (bodies, mut down) = self.get_many(&paths)?;
        let results = bodies
            .iter()
            .map(|body| body.as_deref().map(mapping::decode_result).transpose())
            .collect::<Result<Vec<_>, _>>()?;
        let found: Vec<proto::ActionResult> = results.iter().flatten().cloned().collect();
        // A blob the server lacks makes its record a miss; every blob it
        // sent is checked against its digest by read_records.
        let mut read = mapping::read_records(f, &found, &mut |digests| {
            let paths: Vec<String> = digests.iter().map(|d| format!("cas/{}", d.hash)).collect();
            let (blobs, n) = self.get_many(&paths)?;
            down += n;
            // On the server: the records this run writes (an edit's
            // ancestors, which hold these chunks) need not send them.
            // Bytes that turn out wrong turn the remote off for the run.
            let found = digests.iter().zip(&blobs).filter(|(_, b)| b.is_some());
            lock(&self.present).extend(found.map(|(d, _)| d.hash.clone()));
            Ok(blobs)
        })?
        .into_iter();
        let hits = results
            .iter()
            .map(|result| result.as_ref().and_then(|_| read.next().flatten()))
            .collect();
        Ok((hits, Moved { down, up: 0 }))
    }

    fn upload(&self, uploads: &[Upload]) -> Result<Moved, RemoteError> {
        let f = DigestFn::Sha256;
        let records: Vec<Vec<u8>> = uploads.iter().map(|u| u.record.encode()).collect();
        let next = AtomicUsize::new(0);
        let up = AtomicU64::new(0);
        let failure: Mutex<Option<RemoteError>> = Mutex::default();
        let work = || {
            while lock(&failure).is_none() {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(upload) = uploads.get(i) else {
                    return;
                };
                let sent = (|| {
                    let (result, blobs) = mapping::action_result(f, upload, &records[i]);
                    let mut sent = 0;
                    // Blobs before the action result that names them.
                    for blob in blobs {
                        if !lock(&self.present).insert(blob.digest.hash.clone()) {
                            continue;
                        }
                        sent += self.send_blob(&blob.digest, &blob.data)?;
                    }
                    let body = result.encode_to_vec();
                    self.put(
                        &format!("ac/{}", mapping::action_key(f, &upload.key).hash),
                        &body,
                    )?;
                    Ok::<u64, RemoteError>(sent + body.len() as u64)
                })();
                match sent {
                    Ok(n) => {
                        up.fetch_add(n, Ordering::Relaxed);
                    }
                    Err(e) => {
                        lock(&failure).get_or_insert(e);
                    }
                }
            }
        };
        std::thread::scope(|s| {
            for _ in 0..UPLOADERS.min(uploads.len()) {
                s.spawn(work);
            }
        });
        if let Some(e) = lock(&failure).take() {
            return Err(e);
        }
        Ok(Moved {
            down: 0,
            up: up.into_inner(),
        })
    }

    fn describe(&self) -> String {
        self.shown.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::split_userinfo;

    #[test]
    fn userinfo_is_taken_out_of_the_url() {
        assert_eq!(
            split_userinfo("http://ci:s3cret@127.0.0.1:8080/cache"),
            (
                "http://127.0.0.1:8080/cache".into(),
                Some("ci:s3cret".into())
            )
        );
        assert_eq!(
            split_userinfo("http://127.0.0.1:8080/a@b"),
            ("http://127.0.0.1:8080/a@b".into(), None)
        );
    }
}
