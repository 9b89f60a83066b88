//! kubeval on the kpt corpus' and the catalog's inputs, and on what they
//! do not cover (CRDs in the package, `schema_location`, config errors).

use super::super::apply_setters::tests::{run_case, Case};

const CORPUS: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deployment
spec:
  replicas: invalid
---
apiVersion: custom.io/v1
kind: Custom
metadata:
  name: custom
spec:
  image: nginx:1.2.3
"#;

#[test]
fn corpus_kubeval_failure() {
    run_case(Case {
        run: super::run_v0_1,
        resources: CORPUS,
        config: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  strict: \"true\"\n",
        want_resources: None,
        want_results: &[
            "[error] apps/v1/Deployment/nginx-deployment selector: selector is required (resources.yaml)",
            "[error] apps/v1/Deployment/nginx-deployment template: template is required (resources.yaml)",
            "[error] apps/v1/Deployment/nginx-deployment spec.replicas: Invalid type. Expected: [integer,null], given: string (resources.yaml)",
            "[error] custom.io/v1/Custom/custom: Validating arbitrary CRDs is not supported yet. You can skip them by setting ignore_missing_schemas or skip_kinds in the function config:\nERR  - stdin: Failed initializing schema file:///tmp/master-standalone-strict/custom-custom-v1.json: open /tmp/master-standalone-strict/custom-custom-v1.json: no such file or directory\n (resources.yaml #1)",
        ],
        want_exit: 1,
        want_stderr: "",
    });
}

#[test]
fn catalog_kubeval_simple_skips_kinds_and_local_config() {
    run_case(Case {
        run: super::run,
        resources: "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: example\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n---\napiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: bob\nspec:\n  replicas: asdf\n  selector:\n    app: nginx\n  templates: {}\n---\napiVersion: example.com/v1\nkind: MyCustom\nmetadata:\n  name: alice\n",
        config: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  strict: 'true'\n  skip_kinds: MyCustom\n",
        want_resources: None,
        want_results: &[
            "[error] v1/ReplicationController/bob templates: Additional property templates is not allowed (resources.yaml #1)",
            "[error] v1/ReplicationController/bob spec.replicas: Invalid type. Expected: [integer,null], given: string (resources.yaml #1)",
        ],
        want_exit: 1,
        want_stderr: "",
    });
}

/// A `schema_location` directory in kubeval's layout: its standalone
/// schemas (with `#/definitions` references) replace the built-in ones, and
/// the CRDs in its YAML files give custom resources theirs.
#[test]
fn schema_location_directory() {
    let dir = tempfile::tempdir().unwrap();
    let versioned = dir.path().join("v1.20.0-standalone");
    std::fs::create_dir(&versioned).unwrap();
    std::fs::write(
        versioned.join("configmap-v1.json"),
        r##"{"type": "object", "properties": {"data": {"$ref": "#/definitions/data"}},
            "definitions": {"data": {"type": "object", "additionalProperties": {"type": "integer"}}}}"##,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("crds.yaml"),
        "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets.example.com\nspec:\n  group: example.com\n  version: v1\n  names:\n    kind: Gadget\n  validation:\n    openAPIV3Schema:\n      properties:\n        spec:\n          required: [id]\n",
    )
    .unwrap();
    let location = dir.path().display().to_string();
    let config = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  kubernetes_version: 1.20.0\n  schema_location: file://{location}\n"
    );
    let missing = format!(
        "[error] apps/v1/Deployment/d: Validating arbitrary CRDs is not supported yet. You can skip them by setting ignore_missing_schemas or skip_kinds in the function config:\nERR  - stdin: Failed initializing schema file://{location}/v1.20.0-standalone/deployment-apps-v1.json: open {location}/v1.20.0-standalone/deployment-apps-v1.json: no such file or directory\n (resources.yaml #2)"
    );
    run_case(Case {
        run: super::run,
        resources: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: x\n---\napiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\nspec: {}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n",
        config: &config,
        want_resources: None,
        want_results: &[
            "[error] v1/ConfigMap/cm data.a: Invalid type. Expected: integer, given: string (resources.yaml)",
            "[error] example.com/v1/Gadget/g id: id is required (resources.yaml #1)",
            &missing,
        ],
        want_exit: 1,
        want_stderr: "",
    });
}

#[test]
fn versions_without_schemas_and_bad_flags_fail() {
    for (data, want) in [
        ("kubernetes_version: 1.18.0", "[error] : kubernetes_version 1.18.0 has no built-in schemas (built in: 1.25.0 to 1.37.0, and master); set schema_location to a directory of kubeval schemas\n"),
        ("strict: maybe", "[error] : strict: strconv.ParseBool: parsing \"maybe\": invalid syntax\n"),
    ] {
        let stdin = super::super::apply_setters::tests::input(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
            &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  {data}\n"),
        );
        let out = super::run(&stdin);
        assert_eq!(out.exit_code, Some(1), "{data}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), want, "{data}");
    }
}
