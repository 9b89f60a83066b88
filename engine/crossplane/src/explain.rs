//! Why a function call ran instead of replaying (`--explain`): what the
//! call at the same place (`xr-file#step/call`) sent the last time it ran,
//! compared with what it sends now.
//!
//! A call's cache key covers the function (its name and identity) and the
//! whole request, which says *that* something changed but not *what*. So
//! each call that runs with a cache leaves a small "site" record keyed by
//! its place: one digest for the function and one for each top-level part
//! of the `RunFunctionRequest` ([`PARTS`]), and whether its response was
//! recorded (a fatal one is not). The next run's reason names the parts
//! whose digests differ.

use krmgraph_cache::{Digest, RecordKind, StepRecord, Store};
use prost::Message;

use crate::proto::v1::{self, State};

/// The record kind of a call's site.
const KIND: (&str, u32) = ("crossplane-site", 1);

/// The parts of a request a reason can name, in the order it names them.
pub const PARTS: [&str; 9] = [
    "observed composite",
    "observed resources",
    "desired",
    "context",
    "required resources",
    "required schemas",
    "input",
    "credentials",
    "meta",
];

/// What a call sent: digests of its function and of each request part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    function: Digest,
    parts: [Digest; PARTS.len()],
}

/// A site's record: the summary of its last call, and whether that call's
/// response was recorded.
struct Site {
    summary: Summary,
    recorded: bool,
}

impl Summary {
    /// The summary of calling `name` (known as `identity`) with `req`.
    pub fn of(name: &str, identity: &[u8], req: &v1::RunFunctionRequest) -> Summary {
        let observed = req.observed.clone().unwrap_or_default();
        let resources = State {
            composite: None,
            resources: observed.resources,
        };
        #[allow(deprecated)]
        let required = (&req.required_resources, &req.extra_resources);
        let parts = [
            digest(&[&observed
                .composite
                .map(|c| c.encode_to_vec())
                .unwrap_or_default()]),
            digest(&[&resources.encode_to_vec()]),
            digest(&[&req
                .desired
                .as_ref()
                .map(Message::encode_to_vec)
                .unwrap_or_default()]),
            optional(req.context.as_ref()),
            digest(&[&resources_bytes(required.0), &resources_bytes(required.1)]),
            digest(&[&v1::RunFunctionRequest {
                required_schemas: req.required_schemas.clone(),
                ..v1::RunFunctionRequest::default()
            }
            .encode_to_vec()]),
            optional(req.input.as_ref()),
            digest(&[&v1::RunFunctionRequest {
                credentials: req.credentials.clone(),
                ..v1::RunFunctionRequest::default()
            }
            .encode_to_vec()]),
            digest(&[&req
                .meta
                .as_ref()
                .map(Message::encode_to_vec)
                .unwrap_or_default()]),
        ];
        Summary {
            function: digest(&[name.as_bytes(), identity]),
            parts,
        }
    }

    /// Why a call with this summary ran, given the site's record.
    pub fn why(&self, store: &dyn Store, site: &str) -> String {
        let Some(before) = load(store, site) else {
            return "no earlier record of this call (its first render)".into();
        };
        let mut reasons = Vec::new();
        if self.function != before.summary.function {
            reasons.push("function changed (image ID or target)".to_string());
        }
        let changed: Vec<&str> = PARTS
            .iter()
            .zip(self.parts.iter().zip(&before.summary.parts))
            .filter(|(_, (now, was))| now != was)
            .map(|(name, _)| *name)
            .collect();
        if !changed.is_empty() {
            reasons.push(format!("request changed: {}", changed.join(", ")));
        }
        if !reasons.is_empty() {
            return reasons.join("; ");
        }
        if before.recorded {
            "its record is gone or unusable (evicted, damaged or of another version)".into()
        } else {
            "its last response had a fatal result, which is never recorded".into()
        }
    }

    /// Leaves this summary as the site's record.
    pub fn record(&self, store: &dyn Store, site: &str, recorded: bool) {
        let mut meta = vec![u8::from(recorded)];
        meta.extend(self.function.as_bytes());
        for part in &self.parts {
            meta.extend(part.as_bytes());
        }
        let record = StepRecord::new(RecordKind::new(KIND.0, KIND.1), Vec::new(), meta);
        // The cache never fails a render: a site not recorded costs a
        // less precise reason next time.
        let _ = store.put_step(&site_key(site), &record);
    }
}

/// The site's record, if there is a good one.
fn load(store: &dyn Store, site: &str) -> Option<Site> {
    let record = store.peek_step(&site_key(site)).ok()??;
    if record.kind != RecordKind::new(KIND.0, KIND.1) {
        return None;
    }
    let (flag, rest) = record.meta.split_first()?;
    let mut digests = rest.chunks_exact(32).map(|c| {
        let bytes: [u8; 32] = c.try_into().expect("chunks of 32");
        Digest::from_bytes(bytes)
    });
    if rest.len() != 32 * (PARTS.len() + 1) || *flag > 1 {
        return None;
    }
    let function = digests.next()?;
    let parts: Vec<Digest> = digests.collect();
    Some(Site {
        summary: Summary {
            function,
            parts: parts.try_into().ok()?,
        },
        recorded: *flag == 1,
    })
}

fn site_key(site: &str) -> Digest {
    digest(&[b"krmgraph crossplane site", site.as_bytes()])
}

/// blake3 over length-prefixed fields.
fn digest(fields: &[&[u8]]) -> Digest {
    let mut hasher = blake3::Hasher::new();
    for field in fields {
        hasher.update(&(field.len() as u64).to_le_bytes());
        hasher.update(field);
    }
    Digest::from(hasher.finalize())
}

/// An optional message: unset differs from empty, as in the request.
fn optional<M: Message>(m: Option<&M>) -> Digest {
    match m {
        None => digest(&[b"unset"]),
        Some(m) => digest(&[b"set", &m.encode_to_vec()]),
    }
}

fn resources_bytes(map: &std::collections::BTreeMap<String, v1::Resources>) -> Vec<u8> {
    v1::RunFunctionRequest {
        required_resources: map.clone(),
        ..v1::RunFunctionRequest::default()
    }
    .encode_to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use krmgraph_cache::MemoryStore;

    fn request(context: &str) -> v1::RunFunctionRequest {
        let value = crate::value::to_struct(&serde_json::json!({"k": context}));
        v1::RunFunctionRequest {
            context: Some(value),
            ..v1::RunFunctionRequest::default()
        }
    }

    #[test]
    fn reasons_name_what_changed_since_the_site_ran() {
        let store = MemoryStore::new();
        let first = Summary::of("f", b"id", &request("a"));
        assert_eq!(
            first.why(&store, "x#s/0"),
            "no earlier record of this call (its first render)"
        );
        first.record(&store, "x#s/0", true);
        let context = Summary::of("f", b"id", &request("b"));
        assert_eq!(context.why(&store, "x#s/0"), "request changed: context");
        let both = Summary::of("f", b"other", &v1::RunFunctionRequest::default());
        assert_eq!(
            both.why(&store, "x#s/0"),
            "function changed (image ID or target); request changed: context"
        );
        first.record(&store, "x#s/0", false);
        assert!(first.why(&store, "x#s/0").contains("fatal result"));
    }
}
