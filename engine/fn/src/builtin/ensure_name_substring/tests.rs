use super::super::apply_setters::tests::{input, run_case, Case};
use krmgraph_kyaml::byteio::ByteReader;
use krmgraph_kyaml::rnode;

const RESOURCES: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: the-map
  namespace: the-namespace
---
apiVersion: v1
kind: Pod
metadata:
  name: the-pod
  namespace: the-namespace
spec:
  containers:
  - name: test-container
    env:
    - name: SOME_KEY
      valueFrom:
        configMapKeyRef:
          name: the-map
          key: some-key
---
apiVersion: v1
kind: Service
metadata:
  name: with-prod-service
  namespace: the-namespace
---
apiVersion: v1
kind: Namespace
metadata:
  name: the-namespace
---
apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: example
  annotations:
    config.kubernetes.io/local-config: "true"
"#;

fn config_map(data: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n{data}")
}

#[test]
fn catalog_example_prefix() {
    let want = RESOURCES
        .replace("name: the-map", "name: prod-the-map")
        .replace("name: the-pod", "name: prod-the-pod");
    run_case(Case {
        run: super::run,
        resources: RESOURCES,
        config: &config_map("  prepend: prod-\n"),
        want_resources: Some(&want),
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn catalog_example_suffix() {
    let want = RESOURCES
        .replace("name: the-map", "name: the-map-prod")
        .replace("name: the-pod", "name: the-pod-prod");
    run_case(Case {
        run: super::run,
        resources: RESOURCES,
        config: &config_map("  append: -prod\n"),
        want_resources: Some(&want),
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn depends_on_and_role_references_follow() {
    let resources = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  annotations:
    config.kubernetes.io/depends-on: apps/namespaces/default/StatefulSet/db,apps/namespaces/default/StatefulSet/outside
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: default
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: binding
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: reader
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
"#;
    let want = resources
        .replace("name: web", "name: prod-web")
        .replace("StatefulSet/db,", "StatefulSet/prod-db,")
        .replace("name: db", "name: prod-db")
        .replace("name: binding", "name: prod-binding")
        .replace("name: reader", "name: prod-reader");
    run_case(Case {
        run: super::run,
        resources,
        config: "apiVersion: fn.kpt.dev/v1alpha1\nkind: EnsureNameSubstring\nmetadata:\n  name: c\nsubstring: prod-\n",
        want_resources: Some(&want),
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn drops_path_index_and_seqindent_but_keeps_ids() {
    let mut stdin = String::from_utf8(input(RESOURCES, &config_map("  prepend: prod-\n"))).unwrap();
    stdin = stdin.replace(
        "      config.kubernetes.io/index: '0'\n",
        "      config.kubernetes.io/index: '0'\n      internal.config.kubernetes.io/seqindent: 'wide'\n      config.k8s.io/id: '1'\n",
    );
    stdin = stdin.replacen(
        "      config.kubernetes.io/index: '0'\n",
        "      config.kubernetes.io/index: '0'\n      note: 'kept, restyled'\n",
        1,
    );
    let out = super::run(stdin.as_bytes());
    assert_eq!(out.exit_code, Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("      note: kept, restyled\n"), "{text}");
    let read = ByteReader::default().read(&out.stdout).unwrap();
    let annotations = rnode::get_annotations(&read.nodes[0]);
    assert_eq!(
        annotations.keys().collect::<Vec<_>>(),
        ["config.k8s.io/id", "note"],
        "{annotations:?}"
    );
}

#[test]
fn additional_name_fields() {
    let resources = "apiVersion: x.dev/v1\nkind: Thing\nmetadata:\n  name: a\nspec:\n  refs:\n  - target: b\n  - target: prod-c\n";
    let want = "apiVersion: x.dev/v1\nkind: Thing\nmetadata:\n  name: a-prod\nspec:\n  refs:\n  - target: b-prod\n  - target: prod-c\n";
    let config = r#"apiVersion: fn.kpt.dev/v1alpha1
kind: EnsureNameSubstring
metadata:
  name: c
substring: prod
editMode: append
additionalNameFields:
- kind: Thing
  path: spec/refs/target
"#;
    let want = want.replace("a-prod", "aprod").replace("b-prod", "bprod");
    run_case(Case {
        run: super::run,
        resources,
        config,
        want_resources: Some(&want),
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn config_errors() {
    for (config, message) in [
        (
            String::new(),
            "`functionConfig` must be a `ConfigMap` or `EnsureNameSubstring`",
        ),
        (
            config_map("  prepend: a\n  append: b\n"),
            "the ConfigMap must contain exactly one of `prepend` and `append`",
        ),
        (
            "apiVersion: fn.kpt.dev/v1alpha1\nkind: EnsureNameSubstring\nmetadata:\n  name: c\nsubstring: x\neditMode: middle\n".into(),
            "unknown editMode \"middle\": it must be `prepend` or `append`",
        ),
    ] {
        let line = format!("[error]: {message}");
        run_case(Case {
            run: super::run,
            resources: RESOURCES,
            config: &config,
            want_resources: None,
            want_results: &[line.as_str()],
            want_exit: 1,
            want_stderr: &format!("[error] : {message}\n"),
        });
    }
}

/// `fn eval --fn-config` on a file of the package: the functionConfig is
/// one of the resources too, and the catalog's function renames it
/// although it is local configuration (issue 34); other local
/// configuration keeps its name.
#[test]
fn own_local_config_function_config_is_renamed() {
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  prepend: prod-\n";
    let other = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n";
    let app = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n";
    let resources = format!("{config}---\n{other}---\n{app}");
    let want = resources
        .replace("name: c\n", "name: prod-c\n")
        .replace("name: app\n", "name: prod-app\n");
    run_case(Case {
        run: super::run,
        resources: &resources,
        config,
        want_resources: Some(&want),
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
}
