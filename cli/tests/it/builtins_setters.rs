//! The setters family of built-ins (apply-setters, create-setters,
//! list-setters, search-replace, set-image, apply-replacements,
//! remove-local-config-resources) against the real kpt: kpt renders a
//! package whose pipeline calls `exec: <krmgraph> fn run <image>`, krmgraph
//! renders the same package with `image: <image>`. The trees, stdout,
//! stderr and `results.yaml` must be identical once the exec command is
//! spelled as the image. This checks that a built-in crosses the function
//! boundary exactly as a process does (output, results, failures), not the
//! built-in's own behaviour, which the unit tests and the catalog examples
//! cover.

use crate::builtin_diff::{run_cases, Case};

const RESOURCES: &str = r#"# the deployment
apiVersion: apps/v1
kind: Deployment
metadata:
  name: my-nginx # the name
  namespace: example
  labels:
    app: nginx
spec:
  replicas: 4 # kpt-set: ${nginx-replicas}
  template:
    spec:
      containers:
        - name: nginx
          image: "nginx:1.16.1" # kpt-set: nginx:${tag}
        - name: sidecar
          image: something-foo
---
apiVersion: v1
kind: MyKind
metadata:
  name: foo
environments: # kpt-set: ${env}
  - dev
  - stage
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: local
  annotations:
    config.kubernetes.io/local-config: "true"
data:
  name: frontend
  app.kubernetes.io/app: example
"#;

const SETTERS: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: setters
  annotations:
    config.kubernetes.io/local-config: "true"
data:
  env: |-
    - prod
    - dev
  nginx-replicas: "3"
  tag: 1.16.2
"#;

const REPLACEMENTS: &str = r#"apiVersion: fn.kpt.dev/v1alpha1
kind: ApplyReplacements
metadata:
  name: replacements
  annotations:
    config.kubernetes.io/local-config: "true"
replacements:
- source:
    kind: ConfigMap
    name: local
    fieldPath: data.name
  targets:
  - select:
      kind: Deployment
    fieldPaths:
    - metadata.namespace
    - spec.template.spec.containers.[name=nginx].name
  - select:
      kind: MyKind
    fieldPaths:
    - spec.owner
    options:
      create: true
"#;

const CASES: &[Case] = &[
    Case {
        image: "gcr.io/kpt-fn/apply-setters:v0.2",
        config: "configPath: setters.yaml",
        files: &[("setters.yaml", SETTERS)],
        must_fail: false,
    },
    Case {
        // Fails: ${tag} has no value and cannot be recovered.
        image: "gcr.io/kpt-fn/apply-setters:v0.2",
        config: "configMap:\n        nginx-replicas: \"5\"\n        other: x",
        files: &[(
            "extra.yaml",
            "apiVersion: v1\nkind: X\nmetadata:\n  name: x\nimage: redis # kpt-set: ${other}:${tag}\n",
        )],
        must_fail: true,
    },
    Case {
        image: "gcr.io/kpt-fn/create-setters:unstable",
        config: "configMap:\n        tag: 1.16.1\n        app: nginx\n        env: |-\n          - stage\n          - dev",
        files: &[],
        must_fail: false,
    },
    Case {
        image: "gcr.io/kpt-fn/list-setters:unstable",
        config: "",
        files: &[],
        must_fail: false,
    },
    Case {
        image: "gcr.io/kpt-fn/search-replace:v0.1",
        config: "configMap:\n        by-path: spec.replicas\n        put-value: \"7\"",
        files: &[],
        must_fail: false,
    },
    Case {
        image: "gcr.io/kpt-fn/search-replace:unstable",
        config: "configMap:\n        by-value-regex: something-(.*)\n        put-value: my-project-id-${1}\n        put-comment: 'kpt-set: ${project-id}-${1}'",
        files: &[],
        must_fail: false,
    },
    Case {
        image: "gcr.io/kpt-fn/set-image:unstable",
        config: "configMap:\n        name: nginx\n        newName: bitnami/nginx\n        newTag: 1.21.4",
        files: &[],
        must_fail: false,
    },
    Case {
        // Fails: no name.
        image: "gcr.io/kpt-fn/set-image:unstable",
        config: "configMap:\n        newTag: 1.21.4",
        files: &[],
        must_fail: true,
    },
    Case {
        image: "gcr.io/kpt-fn/apply-replacements:v0.1",
        config: "configPath: replacements.yaml",
        files: &[("replacements.yaml", REPLACEMENTS)],
        must_fail: false,
    },
    Case {
        image: "gcr.io/kpt-fn/apply-replacements:unstable",
        config: "configPath: replacements.yaml",
        files: &[("replacements.yaml", REPLACEMENTS)],
        must_fail: false,
    },
    Case {
        // Fails: the latest filter requires every target field to exist.
        image: "gcr.io/kpt-fn/apply-replacements:unstable",
        config: "configPath: replacements.yaml",
        files: &[(
            "replacements.yaml",
            "apiVersion: fn.kpt.dev/v1alpha1\nkind: ApplyReplacements\nmetadata:\n  name: r\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nreplacements:\n- source:\n    kind: ConfigMap\n    name: local\n  targets:\n  - select:\n      kind: MyKind\n    fieldPaths:\n    - spec.missing\n",
        )],
        must_fail: true,
    },
    Case {
        image: "gcr.io/kpt-fn/remove-local-config-resources:unstable",
        config: "",
        files: &[],
        must_fail: false,
    },
];

#[test]
fn setters_builtins_match_kpt_exec() {
    run_cases("setters_builtins_match_kpt_exec", RESOURCES, CASES);
}
