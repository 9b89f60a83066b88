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
