//! Data-driven tests of apply-setters, and the harness the other functions
//! of this family use: a case is the resources (documents of
//! `resources.yaml`, or of the file their own `config.kubernetes.io/path`
//! annotation names), the functionConfig, and what the function must give
//! back — the resources (written as documents, without the annotations the
//! harness added), the results (as kpt prints them, plus the file), the
//! exit code and stderr.

use crate::exec::ProcessOutput;
use crate::results::{parse_results, ResultItem};
use krmgraph_kyaml::byteio::{ByteReader, ByteWriter};
use krmgraph_kyaml::rnode;
use krmgraph_yaml::Node;

/// One case.
pub struct Case<'a> {
    /// The function.
    pub run: fn(&[u8]) -> ProcessOutput,
    /// Input resources, as YAML documents.
    pub resources: &'a str,
    /// The functionConfig, `""` for none.
    pub config: &'a str,
    /// Expected resources; `None` when they must be unchanged.
    pub want_resources: Option<&'a str>,
    /// Expected results, one line each (see [`result_line`]).
    pub want_results: &'a [&'a str],
    /// Expected exit code.
    pub want_exit: i32,
    /// Expected stderr.
    pub want_stderr: &'a str,
}

const PATH: &str = "config.kubernetes.io/path";
const INDEX: &str = "config.kubernetes.io/index";

/// The ResourceList kpt would send for `resources` and `config`.
pub fn input(resources: &str, config: &str) -> Vec<u8> {
    let mut nodes: Vec<Node> = krmgraph_yaml::parse_documents(resources.as_bytes())
        .expect("resources parse")
        .into_iter()
        .map(|d| rnode::y_node(&d).clone())
        .collect();
    let mut index: std::collections::HashMap<String, usize> = Default::default();
    for node in &mut nodes {
        let path = rnode::get_annotations(node)
            .get(PATH)
            .cloned()
            .unwrap_or_else(|| "resources.yaml".into());
        let i = index.entry(path.clone()).or_default();
        rnode::set_annotation(node, PATH, &path).unwrap();
        rnode::set_annotation(node, INDEX, &i.to_string()).unwrap();
        *i += 1;
    }
    let config = (!config.is_empty()).then(|| {
        let doc = krmgraph_yaml::parse_documents(config.as_bytes()).expect("config parses");
        rnode::y_node(&doc[0]).clone()
    });
    ByteWriter::resource_list(config).write(&nodes).unwrap()
}

/// A result as the tests spell it: kpt's line, then ` (<file>)` when the
/// result names a file.
pub fn result_line(r: &ResultItem) -> String {
    let mut line = r.line();
    if let Some(f) = &r.file {
        line.push_str(&format!(" ({}", f.path));
        if f.index != 0 {
            line.push_str(&format!(" #{}", f.index));
        }
        line.push(')');
    }
    line
}

/// Runs `case` and checks everything it expects.
pub fn run_case(case: Case<'_>) {
    let stdin = input(case.resources, case.config);
    let out = (case.run)(&stdin);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(stderr, case.want_stderr, "stderr");
    assert_eq!(
        out.exit_code,
        Some(case.want_exit),
        "exit code; stderr: {stderr}"
    );
    let read = ByteReader {
        omit_reader_annotations: true,
        ..Default::default()
    }
    .read(&out.stdout)
    .unwrap_or_else(|e| {
        panic!(
            "output does not parse: {e}\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let results: Vec<String> = read
        .results
        .as_ref()
        .map(parse_results)
        .unwrap_or_default()
        .iter()
        .map(result_line)
        .collect();
    assert_eq!(results, case.want_results, "results");
    if case.want_exit != 0 {
        return;
    }
    let mut items = read.nodes;
    let mut added_paths = Vec::new();
    let annotated = krmgraph_yaml::parse_documents(case.resources.as_bytes()).unwrap();
    for doc in &annotated {
        added_paths.push(rnode::get_annotations(doc).contains_key(PATH));
    }
    for (i, item) in items.iter_mut().enumerate() {
        if !added_paths.get(i).copied().unwrap_or(false) {
            rnode::clear_annotation(item, PATH).unwrap();
        }
        rnode::clear_annotation(item, INDEX).unwrap();
        rnode::clear_empty_annotations(item).unwrap();
    }
    let got = String::from_utf8(ByteWriter::default().write(&items).unwrap()).unwrap();
    let want = case.want_resources.unwrap_or(case.resources);
    assert_eq!(got, want, "resources");
}

#[test]
fn catalog_example() {
    run_case(Case {
        run: super::run,
        resources: r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: my-nginx
spec:
  replicas: 4 # kpt-set: ${nginx-replicas}
  template:
    spec:
      containers:
      - name: nginx
        image: "nginx:1.16.1" # kpt-set: nginx:${tag}
---
apiVersion: v1
kind: MyKind
metadata:
  name: foo
environments: # kpt-set: ${env}
- dev
- stage
"#,
        config: r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: setters
data:
  env: |-
    - prod
    - dev
  nginx-replicas: "3"
  tag: 1.16.2
"#,
        want_resources: Some(
            r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: my-nginx
spec:
  replicas: 3 # kpt-set: ${nginx-replicas}
  template:
    spec:
      containers:
      - name: nginx
        image: "nginx:1.16.2" # kpt-set: nginx:${tag}
---
apiVersion: v1
kind: MyKind
metadata:
  name: foo
environments: # kpt-set: ${env}
- prod
- dev
"#,
        ),
        want_results: &[
            r#"[info] spec.replicas: set field value to "3" (resources.yaml)"#,
            r#"[info] spec.template.spec.containers.image: set field value to "nginx:1.16.2" (resources.yaml)"#,
            r#"[info] environments: set field value to "- prod\n- dev" (resources.yaml)"#,
        ],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn derives_unprovided_setters_and_clears_tags() {
    run_case(Case {
        run: super::run,
        resources: r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: c
data:
  host: my-app.dev.example.com # kpt-set: my-app.${stage}.${domain}.${tld}
  other: x # kpt-set: ${unrelated}
  count: "5" # kpt-set: ${count}
  gone: abc # kpt-set: ${empty}
  list: [a, b] # kpt-set: ${flow}
  empty-list: # kpt-set: ${none}
  - x
"#,
        config: r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: setters
data:
  stage: prod
  count: "6"
  empty: ""
  flow: "[c]"
  none: "[]"
"#,
        want_resources: Some(
            r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: c
data:
  host: my-app.prod.example.com # kpt-set: my-app.${stage}.${domain}.${tld}
  other: x # kpt-set: ${unrelated}
  count: "6" # kpt-set: ${count}
  gone: "" # kpt-set: ${empty}
  list: [c] # kpt-set: ${flow}
  empty-list: [] # kpt-set: ${none}
"#,
        ),
        want_results: &[
            // Sequences are set when their mapping is visited, before the
            // walk reaches the mapping's scalars.
            r#"[info] data.list: set field value to "[c]" (resources.yaml)"#,
            r#"[info] data.empty-list: set field value to "[]" (resources.yaml)"#,
            r#"[info] data.host: set field value to "my-app.prod.example.com" (resources.yaml)"#,
            r#"[info] data.count: set field value to "6" (resources.yaml)"#,
            r#"[info] data.gone: set field value to "" (resources.yaml)"#,
        ],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn unresolved_setters_fail() {
    run_case(Case {
        run: super::run,
        resources: r#"apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  image: redis # kpt-set: ${image}:${tag}
"#,
        config: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  image: nginx\n",
        want_resources: None,
        want_results: &[
            "[error]: failed to apply setters: values for setters [${tag}] must be provided",
        ],
        want_exit: 1,
        want_stderr:
            "[error] : failed to apply setters: values for setters [${tag}] must be provided\n",
    });
}

#[test]
fn array_setter_needs_a_list() {
    run_case(Case {
        run: super::run,
        resources: "apiVersion: v1\nkind: X\nmetadata:\n  name: p\nenv: # kpt-set: ${env}\n- a\n",
        config: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  env: prod\n",
        want_resources: None,
        want_results: &[
            "[error]: failed to apply setters: input to array setter must be an array of values",
        ],
        want_exit: 1,
        want_stderr:
            "[error] : failed to apply setters: input to array setter must be an array of values\n",
    });
}

#[test]
fn empty_config_fails() {
    run_case(Case {
        run: super::run,
        resources: "apiVersion: v1\nkind: X\nmetadata:\n  name: p\n",
        config: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n",
        want_resources: None,
        want_results: &["[error]: failed to apply setters: input setters list cannot be empty"],
        want_exit: 1,
        want_stderr: "[error] : failed to apply setters: input setters list cannot be empty\n",
    });
}
