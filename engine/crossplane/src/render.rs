//! The classic render loop for one XR (§2.3): every pipeline step in
//! order, each response replacing the desired state and the context; the
//! requirements loop inside a step (§2.4); fatal results; then the output
//! documents (§2.5).

use std::collections::BTreeMap;

use base64::Engine as _;
use prost_types::Struct;
use serde_json::{Map, Value};

use crate::compose;
use crate::fetch::{bootstrap_selector, Fetcher};
use crate::load::{at, str_at};
use crate::model::{Composition, Step};
use crate::proto::v1::{
    self, Capability, CredentialData, Credentials, RequestMeta, Resource, Resources, Severity,
    State,
};
use crate::runner::{Answer, Runner};
use crate::schemas::Schemas;
use crate::sigsyaml;
use crate::value::to_struct;

/// `MaxRequirementsIterations`: the loop runs up to this many times plus
/// one (`for i := 0; i <= 5; i++`).
const MAX_REQUIREMENTS_ITERATIONS: usize = 5;

/// What every XR of a command shares.
#[derive(Default)]
pub struct Shared {
    /// `-o`: observed composed resources by composition-resource-name.
    pub observed: Map<String, Value>,
    /// `-e`: the required (extra) resources.
    pub fetcher: Fetcher,
    /// `--required-schemas`: OpenAPI v3 schemas.
    pub schemas: Schemas,
    /// `--function-credentials`: Secrets.
    pub secrets: Vec<Value>,
    /// `--context-files` and `--context-values`.
    pub context: Struct,
    /// `-r`.
    pub include_results: bool,
    /// `-x`.
    pub include_full_xr: bool,
    /// `-c`.
    pub include_context: bool,
}

/// Renders `xr` (read from `label`) through `composition`: the output
/// stream, each document preceded by `---`. Why its calls ran goes to
/// `explained` (`SITE FUNCTION ran: REASON`), also when it fails; when
/// none ran, that it was replayed whole.
pub async fn render(
    runner: &Runner,
    shared: &Shared,
    label: &str,
    xr: &Value,
    composition: &Composition,
    explained: &mut Vec<String>,
) -> Result<Vec<u8>, String> {
    let observed = State {
        composite: Some(Resource {
            resource: Some(to_struct(xr)),
            ..Resource::default()
        }),
        resources: shared
            .observed
            .iter()
            .map(|(name, r)| {
                let resource = Resource {
                    resource: Some(to_struct(r)),
                    ..Resource::default()
                };
                (name.clone(), resource)
            })
            .collect(),
    };
    let mut desired: Option<State> = Some(State::default());
    let mut context: Option<Struct> = Some(shared.context.clone());
    let mut conditions = Vec::new();
    let mut results = Vec::new();
    for step in &composition.pipeline {
        let fail = |e: String| format!("cannot run pipeline step {:?}: {e}", step.name);
        let req = v1::RunFunctionRequest {
            meta: Some(RequestMeta {
                tag: String::new(),
                capabilities: vec![
                    Capability::Capabilities as i32,
                    Capability::RequiredResources as i32,
                    Capability::Credentials as i32,
                    Capability::Conditions as i32,
                    Capability::RequiredSchemas as i32,
                ],
            }),
            observed: Some(observed.clone()),
            desired: desired.clone(),
            input: step.input.as_ref().map(to_struct),
            context: context.clone(),
            credentials: credentials(step, &shared.secrets).map_err(fail)?,
            required_resources: step
                .required
                .iter()
                .map(|(name, r)| (name.clone(), shared.fetcher.fetch(&bootstrap_selector(r))))
                .collect(),
            ..v1::RunFunctionRequest::default()
        };
        let site = format!("{label}#{}", step.name);
        let rsp = run_step(runner, shared, &site, &step.function, req, explained)
            .await
            .map_err(fail)?;
        desired = rsp.desired;
        context = rsp.context;
        conditions.extend(rsp.conditions);
        for r in &rsp.results {
            if r.severity == Severity::Fatal as i32 {
                return Err(format!(
                    "pipeline step {:?} returned a fatal result: {}",
                    step.name, r.message
                ));
            }
            results.push(compose::result(&step.name, r));
        }
    }
    let desired = desired.unwrap_or_default();
    let (composed, unready) = compose::composed(&desired, &shared.observed, xr)?;
    let mut out_xr = compose::composite(&desired, xr, &unready, &conditions);
    if shared.include_full_xr {
        let spec = xr
            .get("spec")
            .ok_or("cannot get composite resource spec: spec: no such field")?;
        out_xr["spec"] = spec.clone();
        if let Some(meta) = xr.get("metadata") {
            out_xr["metadata"] = meta.clone();
        }
    }
    let mut docs = vec![out_xr];
    docs.extend(composed);
    if shared.include_results {
        docs.extend(results);
    }
    if shared.include_context {
        docs.push(compose::context(context.as_ref()));
    }
    let mut output = Vec::new();
    for doc in &docs {
        output.extend_from_slice(b"---\n");
        output.extend_from_slice(&sigsyaml::document(doc));
    }
    if explained.is_empty() && !composition.pipeline.is_empty() {
        explained.push(format!(
            "{label} replayed whole: no request of its calls changed"
        ));
    }
    Ok(output)
}

/// One step: the function called until its requirements stabilise; why
/// each call that ran did goes to `explained`.
async fn run_step(
    runner: &Runner,
    shared: &Shared,
    site: &str,
    function: &str,
    mut req: v1::RunFunctionRequest,
    explained: &mut Vec<String>,
) -> Result<v1::RunFunctionResponse, String> {
    let bootstrap_resources = req.required_resources.clone();
    let bootstrap_schemas = req.required_schemas.clone();
    let mut previous: Option<v1::Requirements> = None;
    for call in 0..=MAX_REQUIREMENTS_ITERATIONS {
        let site = format!("{site}/{call}");
        let (rsp, answer) = runner.run(&site, function, req.clone()).await?;
        if let Answer::Ran(why) = answer {
            explained.push(format!("{site} {function} ran: {why}"));
        }
        if rsp
            .results
            .iter()
            .any(|r| r.severity == Severity::Fatal as i32)
        {
            return Ok(rsp);
        }
        // proto.Equal: an unset message equals only an unset one.
        if rsp.requirements == previous {
            return Ok(rsp);
        }
        previous = rsp.requirements.clone();
        let requirements = rsp.requirements.clone().unwrap_or_default();
        #[allow(deprecated)]
        {
            req.extra_resources = fetch_all(&shared.fetcher, &requirements.extra_resources);
        }
        req.required_resources = bootstrap_resources.clone();
        req.required_resources
            .extend(fetch_all(&shared.fetcher, &requirements.resources));
        req.required_schemas = bootstrap_schemas.clone();
        for (name, selector) in &requirements.schemas {
            req.required_schemas
                .insert(name.clone(), shared.schemas.fetch(selector));
        }
        req.context = rsp.context;
    }
    Err(format!(
        "requirements didn't stabilize after the maximum number of iterations ({MAX_REQUIREMENTS_ITERATIONS})"
    ))
}

fn fetch_all(
    fetcher: &Fetcher,
    selectors: &BTreeMap<String, v1::ResourceSelector>,
) -> BTreeMap<String, Resources> {
    selectors
        .iter()
        .map(|(name, s)| (name.clone(), fetcher.fetch(s)))
        .collect()
}

/// A step's credentials from the Secrets (by name and namespace; only
/// `data`, base64-decoded, is sent).
fn credentials(step: &Step, secrets: &[Value]) -> Result<BTreeMap<String, Credentials>, String> {
    let mut out = BTreeMap::new();
    for (name, secret_name, secret_namespace) in &step.credentials {
        let secret = secrets.iter().find(|s| {
            str_at(s, &["metadata", "name"]) == secret_name
                && str_at(s, &["metadata", "namespace"]) == secret_namespace
        });
        let Some(secret) = secret else {
            return Err(format!(
                "cannot get credentials {name:?}: no Secret {secret_name:?} in namespace {secret_namespace:?} in --function-credentials"
            ));
        };
        let mut data = BTreeMap::new();
        let fields = at(secret, &["data"]).and_then(Value::as_object);
        for (key, value) in fields.into_iter().flatten() {
            let text = value.as_str().unwrap_or("");
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| format!("Secret {secret_name:?} data {key:?} is not base64: {e}"))?;
            data.insert(key.clone(), bytes);
        }
        let source = v1::credentials::Source::CredentialData(CredentialData { data });
        out.insert(
            name.clone(),
            Credentials {
                source: Some(source),
            },
        );
    }
    Ok(out)
}
