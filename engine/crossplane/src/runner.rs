//! Running a function as a step of krmgraph's cache. Each call is keyed by
//! the function's identity (a Docker image's ID and repo digests; a
//! Development server only when `--pinned-development` says it is pinned,
//! else the call is never cached) and the deterministic encoding of the
//! request (maps in key order, `build.rs`), so a re-render calls only the
//! functions whose request changed. Responses with a fatal result are not
//! recorded. The cache never fails a render: a store error is a miss.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use krmgraph_cache::{Digest, RecordKind, Store};
use prost::Message;
use tokio::time::Instant;

use crate::client::Client;
use crate::explain::Summary;
use crate::proto::v1;

/// The record kind of a function call.
const KIND: (&str, u32) = ("crossplane-call", 1);

/// A started function: its client, and its identity when its calls may be
/// cached.
pub struct Handle {
    /// The connection.
    pub client: Client,
    /// What the key says the function is; `None`: never cached.
    pub identity: Option<Vec<u8>>,
}

/// Every function of the command, the cache, and the log of what ran.
pub struct Runner {
    functions: BTreeMap<String, Handle>,
    store: Option<Arc<dyn Store>>,
    deadline: Instant,
    log: Mutex<Vec<String>>,
}

impl Runner {
    /// A runner of `functions` until `deadline`, caching in `store`.
    pub fn new(
        functions: BTreeMap<String, Handle>,
        store: Option<Arc<dyn Store>>,
        deadline: Instant,
    ) -> Runner {
        Runner {
            functions,
            store,
            deadline,
            log: Mutex::new(Vec::new()),
        }
    }

    /// The log: one `ran SITE FUNCTION` or `replayed SITE FUNCTION` line
    /// per call (`uncached` marks calls that could not be cached).
    pub fn log(&self) -> Vec<String> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    fn note(&self, line: String) {
        if let Ok(mut log) = self.log.lock() {
            log.push(line);
        }
    }

    /// Calls function `name` with `req`, or replays the call; `site` names
    /// the XR, step and call for the log and the site record
    /// ([`crate::explain`]).
    pub async fn run(
        &self,
        site: &str,
        name: &str,
        req: v1::RunFunctionRequest,
    ) -> Result<(v1::RunFunctionResponse, Answer), String> {
        let handle = self.functions.get(name).ok_or_else(|| {
            format!("unknown Function {name:?} - does it exist in your Functions file?")
        })?;
        let cached = handle.identity.as_deref().zip(self.store.as_deref());
        let key = cached.map(|(identity, _)| key(name, identity, &req));
        if let (Some(key), Some((_, store))) = (&key, cached) {
            if let Some(rsp) = replay(store, key) {
                self.note(format!("replayed {site} {name}"));
                return Ok((rsp, Answer::Replayed));
            }
        }
        let summary = cached.map(|(identity, store)| {
            let summary = Summary::of(name, identity, &req);
            let why = summary.why(store, site);
            (summary, why)
        });
        let rsp = handle
            .client
            .run(req, self.deadline)
            .await
            .map_err(|e| format!("cannot run Function {name:?}: {e}"))?;
        let fatal = rsp
            .results
            .iter()
            .any(|r| r.severity == v1::Severity::Fatal as i32);
        let why = match (&key, cached, summary) {
            (Some(key), Some((_, store)), Some((summary, why))) => {
                if !fatal {
                    let kind = RecordKind::new(KIND.0, KIND.1);
                    let _ = store.record(key, &kind, &[("response", &rsp.encode_to_vec())], b"");
                }
                summary.record(store, site, !fatal);
                self.note(format!(
                    "ran {site} {name}{}",
                    if fatal { " uncached" } else { "" }
                ));
                why
            }
            _ => {
                self.note(format!("ran {site} {name} uncached"));
                self.uncached_reason(handle)
            }
        };
        Ok((rsp, Answer::Ran(why)))
    }

    /// Why a call could not be looked up.
    fn uncached_reason(&self, handle: &Handle) -> String {
        match (&self.store, &handle.identity) {
            (None, _) => {
                "the cache was bypassed (--no-cache, or a store that cannot be used)".into()
            }
            _ => "a Development server's calls are cached only with --pinned-development".into(),
        }
    }
}

/// How a call was answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// From the cache.
    Replayed,
    /// By the function, for this reason.
    Ran(String),
}

/// The recorded response of `key`, if the store has a good one.
fn replay(store: &dyn Store, key: &Digest) -> Option<v1::RunFunctionResponse> {
    let hit = store.lookup(key).ok()??;
    let bytes = hit.outputs.first()?;
    v1::RunFunctionResponse::decode(bytes.as_slice()).ok()
}

/// The key of a call: blake3 over length-prefixed, domain-separated
/// fields.
pub fn key(name: &str, identity: &[u8], req: &v1::RunFunctionRequest) -> Digest {
    let mut hasher = blake3::Hasher::new();
    let fields: [&[u8]; 5] = [
        b"krmgraph crossplane call",
        env!("CARGO_PKG_VERSION").as_bytes(),
        name.as_bytes(),
        identity,
        &req.encode_to_vec(),
    ];
    for field in fields {
        hasher.update(&(field.len() as u64).to_le_bytes());
        hasher.update(field);
    }
    Digest::of(hasher.finalize().as_bytes())
}
