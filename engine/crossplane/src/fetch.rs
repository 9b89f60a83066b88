//! Classic render's `FilteringFetcher` (§2.4): the resources given with
//! `-e`/`--required-resources` (and `--extra-resources`), answered to a
//! function's selectors. Sorted by name once; filtered by apiVersion and
//! kind; `match_name` gives only the first resource of that name;
//! `match_labels` every resource carrying the labels (an empty map
//! matches every one); the selector's namespace is ignored, as classic
//! render ignores it.

use serde_json::Value;

use crate::load::{at, str_at};
use crate::model::string_map;
use crate::proto::v1::{resource_selector::Match, Resource, ResourceSelector, Resources};
use crate::value::to_struct;

/// The supplied resources, sorted by name.
#[derive(Clone, Debug, Default)]
pub struct Fetcher {
    resources: Vec<Value>,
}

impl Fetcher {
    /// A fetcher of `resources`.
    pub fn new(mut resources: Vec<Value>) -> Fetcher {
        resources
            .sort_by(|a, b| str_at(a, &["metadata", "name"]).cmp(str_at(b, &["metadata", "name"])));
        Fetcher { resources }
    }

    /// The resources `selector` selects (an empty list when none does).
    pub fn fetch(&self, selector: &ResourceSelector) -> Resources {
        let of_kind = self.resources.iter().filter(|r| {
            str_at(r, &["apiVersion"]) == selector.api_version
                && str_at(r, &["kind"]) == selector.kind
        });
        let items: Vec<&Value> = match &selector.r#match {
            Some(Match::MatchName(name)) => of_kind
                .filter(|r| str_at(r, &["metadata", "name"]) == name)
                .take(1)
                .collect(),
            Some(Match::MatchLabels(labels)) => of_kind
                .filter(|r| {
                    let have = string_map(at(r, &["metadata", "labels"]));
                    labels.labels.iter().all(|(k, v)| have.get(k) == Some(v))
                })
                .collect(),
            None => Vec::new(),
        };
        Resources {
            items: items
                .into_iter()
                .map(|r| Resource {
                    resource: Some(to_struct(r)),
                    ..Resource::default()
                })
                .collect(),
        }
    }
}

/// A Composition step's `requirements.requiredResources` entry as a
/// selector.
pub fn bootstrap_selector(required: &Value) -> ResourceSelector {
    let name = str_at(required, &["name"]);
    let r#match = if !name.is_empty() {
        Some(Match::MatchName(name.to_string()))
    } else {
        Some(Match::MatchLabels(crate::proto::v1::MatchLabels {
            labels: string_map(required.get("matchLabels")),
        }))
    };
    ResourceSelector {
        api_version: str_at(required, &["apiVersion"]).to_string(),
        kind: str_at(required, &["kind"]).to_string(),
        r#match,
        namespace: required
            .get("namespace")
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}
