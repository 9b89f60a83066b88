//! gatekeeper on the kpt corpus' policies: every enforcement action, a
//! template that does not parse, a constraint with no template, and the
//! match rules.

use super::super::apply_setters::tests::{run_case, Case};

const TEMPLATE: &str = r#"apiVersion: templates.gatekeeper.sh/v1beta1
kind: ConstraintTemplate
metadata:
  name: k8sconfigmapkeysrulesv1
spec:
  crd:
    spec:
      names:
        kind: K8sConfigMapKeysRulesV1
  targets:
  - rego: |-
      package ban_keys

      violation[{"msg": sprintf("%v", [val])}] {
        keys = {key | input.review.object.data[key]}
        banned = {key | input.parameters.keys[_] = key}
        overlap = keys & banned
        count(overlap) > 0
        val := sprintf("The following banned keys are being used in the ConfigMap: %v", [overlap])
      }
    target: admission.k8s.gatekeeper.sh
"#;

fn constraint(name: &str, action: &str, key: &str) -> String {
    let action = if action.is_empty() {
        String::new()
    } else {
        format!("  enforcementAction: {action}\n")
    };
    format!(
        "---\napiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sConfigMapKeysRulesV1\nmetadata:\n  name: {name}\nspec:\n{action}  match:\n    kinds:\n    - apiGroups: ['']\n      kinds: [ConfigMap]\n  parameters:\n    keys: [{key}]\n"
    )
}

const CONFIGMAP: &str = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: some-secret\n  namespace: default\ndata:\n  less_sensitive_key: a\n  private_key: b\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: other\ndata:\n  private_key: b\n";

#[test]
fn warn_and_dryrun_pass_with_warning_and_info() {
    let resources = format!(
        "{TEMPLATE}{}{}{CONFIGMAP}",
        constraint("no-secrets", "warn", "private_key"),
        constraint("no-sensitive", "dryrun", "less_sensitive_key")
    );
    run_case(Case {
        run: super::run,
        resources: &resources,
        config: "",
        want_resources: None,
        want_results: &[
            "[warning] v1/ConfigMap/default/some-secret: The following banned keys are being used in the ConfigMap: {\"private_key\"}\nviolatedConstraint: no-secrets (resources.yaml #3)",
            "[info] v1/ConfigMap/default/some-secret: The following banned keys are being used in the ConfigMap: {\"less_sensitive_key\"}\nviolatedConstraint: no-sensitive (resources.yaml #3)",
        ],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn deny_fails_and_prints_the_results() {
    let resources = format!(
        "{TEMPLATE}{}{}{CONFIGMAP}",
        constraint("no-secrets", "", "private_key"),
        constraint("no-sensitive", "deny", "less_sensitive_key")
    );
    run_case(Case {
        run: super::run,
        resources: &resources,
        config: "",
        want_resources: None,
        want_results: &[
            "[error] v1/ConfigMap/default/some-secret: The following banned keys are being used in the ConfigMap: {\"private_key\"}\nviolatedConstraint: no-secrets (resources.yaml #3)",
            "[error] v1/ConfigMap/default/some-secret: The following banned keys are being used in the ConfigMap: {\"less_sensitive_key\"}\nviolatedConstraint: no-sensitive (resources.yaml #3)",
        ],
        want_exit: 1,
        want_stderr: "[error] v1/ConfigMap/default/some-secret : The following banned keys are being used in the ConfigMap: {\"private_key\"}\nviolatedConstraint: no-secrets\n\n[error] v1/ConfigMap/default/some-secret : The following banned keys are being used in the ConfigMap: {\"less_sensitive_key\"}\nviolatedConstraint: no-sensitive",
    });
}

#[test]
fn a_template_that_does_not_parse_is_an_error() {
    let resources = format!(
        "{}{}{CONFIGMAP}",
        TEMPLATE.replace("count(overlap) > 0", "count(overlap) >"),
        constraint("no-secrets", "warn", "private_key"),
    );
    let stdin = super::super::apply_setters::tests::input(&resources, "");
    let out = super::run(&stdin);
    assert_eq!(out.exit_code, Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            == "[error] : invalid ConstraintTemplate \"k8sconfigmapkeysrulesv1\" (kind K8sConfigMapKeysRulesV1): K8sConfigMapKeysRulesV1.rego:8:7: expecting `}` while parsing query",
        "{stderr}"
    );
}

#[test]
fn a_constraint_without_template_is_an_error() {
    let resources = format!("{}{CONFIGMAP}", &constraint("orphan", "", "k")[4..]);
    run_case(Case {
        run: super::run,
        resources: &resources,
        config: "",
        want_resources: None,
        want_results: &[
            "[error]: Constraint K8sConfigMapKeysRulesV1/orphan: no ConstraintTemplate in the package defines kind K8sConfigMapKeysRulesV1",
        ],
        want_exit: 1,
        want_stderr: "[error] : Constraint K8sConfigMapKeysRulesV1/orphan: no ConstraintTemplate in the package defines kind K8sConfigMapKeysRulesV1",
    });
}

#[test]
fn match_rules() {
    use serde_json::json;
    let ns = json!({"kind": "Namespace", "metadata": {"name": "prod", "labels": {"env": "prod"}}});
    let obj = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web-1", "namespace": "prod", "labels": {"app": "web"}}});
    let m =
        |spec: serde_json::Value| super::matches(&json!({"spec": {"match": spec}}), &obj, &[&ns]);
    assert!(m(
        json!({"kinds": [{"apiGroups": ["apps"], "kinds": ["Deployment"]}]})
    ));
    assert!(!m(
        json!({"kinds": [{"apiGroups": [""], "kinds": ["Deployment"]}]})
    ));
    assert!(m(json!({"namespaces": ["pro*"]})));
    assert!(!m(json!({"excludedNamespaces": ["prod"]})));
    assert!(m(json!({"name": "web-*"})));
    assert!(!m(json!({"scope": "Cluster"})));
    assert!(m(
        json!({"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}})
    ));
    assert!(!m(json!({"labelSelector": {"matchLabels": {"app": "db"}}})));
    assert!(m(
        json!({"namespaceSelector": {"matchLabels": {"env": "prod"}}})
    ));
    assert!(!m(
        json!({"namespaceSelector": {"matchLabels": {"env": "dev"}}})
    ));
}
