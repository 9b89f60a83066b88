use super::super::apply_setters::tests::{run_case, Case};

const SIMPLE: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: the-map
data:
  some-key: some-value
---
apiVersion: v1
kind: Namespace
metadata:
  name: ns
"#;

const CONFIG: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  fruit: apple\n  color: orange\n";

#[test]
fn catalog_example_simple() {
    let want = SIMPLE
        .replace(
            "  name: the-map\n",
            "  name: the-map\n  annotations:\n    color: orange\n    fruit: apple\n",
        )
        .replace(
            "  name: ns\n",
            "  name: ns\n  annotations:\n    color: orange\n    fruit: apple\n",
        );
    run_case(Case {
        run: super::run,
        resources: SIMPLE,
        config: CONFIG,
        want_resources: Some(&want),
        want_results: &[
            r#"[info] metadata.annotations: set annotations: {"color":"orange","fruit":"apple"} (resources.yaml)"#,
            r#"[info] metadata.annotations: set annotations: {"color":"orange","fruit":"apple"} (resources.yaml #1)"#,
        ],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn templates_local_config_and_additional_fields() {
    let resources = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  annotations:
    config.kubernetes.io/local-config: "true"
---
apiVersion: dev.example.com/v1
kind: MyKind
metadata:
  name: mine
spec:
  items:
  - name: a
  - name: b
"#;
    let want = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  annotations:
    config.kubernetes.io/local-config: "true"
    on: "true"
spec:
  template:
    metadata:
      annotations:
        on: "true"
---
apiVersion: dev.example.com/v1
kind: MyKind
metadata:
  name: mine
  annotations:
    on: "true"
spec:
  items:
  - name: a
    notes:
      on: "true"
  - name: b
    notes:
      on: "true"
"#;
    let config = r#"apiVersion: fn.kpt.dev/v1alpha1
kind: SetAnnotations
metadata:
  name: c
annotations:
  on: "true"
additionalAnnotationFields:
- kind: MyKind
  path: spec/items/notes
  create: true
"#;
    run_case(Case {
        run: super::run,
        resources,
        config,
        want_resources: Some(want),
        want_results: &[
            r#"[info] metadata.annotations: set annotations: {"on":"true"} (resources.yaml)"#,
            r#"[info] spec.template.metadata.annotations: set annotations: {"on":"true"} (resources.yaml)"#,
            r#"[info] metadata.annotations: set annotations: {"on":"true"} (resources.yaml #1)"#,
            r#"[info] spec.items.notes: set annotations: {"on":"true"} (resources.yaml #1)"#,
        ],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn config_errors() {
    for (config, message) in [
        (
            "",
            "`functionConfig` must be a `ConfigMap` or `SetAnnotations`",
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
            "input annotation list cannot be empty",
        ),
    ] {
        let line = format!("[error]: {message}");
        run_case(Case {
            run: super::run,
            resources: SIMPLE,
            config,
            want_resources: None,
            want_results: &[line.as_str()],
            want_exit: 1,
            want_stderr: &format!("[error] : {message}\n"),
        });
    }
}
