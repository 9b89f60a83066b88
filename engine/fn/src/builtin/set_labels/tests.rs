use super::super::apply_setters::tests::{run_case, Case};

const SIMPLE: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: the-map
data:
  some-key: some-value
---
apiVersion: dev.example.com/v1
kind: MyResource
metadata:
  name: the-service
  namespace: the-namespace
spec:
  selector:
    labels:
      foo: bar
"#;

const CONFIG: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  fruit: apple\n  color: orange\n";

#[test]
fn catalog_example_simple() {
    let want = SIMPLE
        .replace(
            "  name: the-map\n",
            "  name: the-map\n  labels:\n    color: orange\n    fruit: apple\n",
        )
        .replace(
            "  namespace: the-namespace\n",
            "  namespace: the-namespace\n  labels:\n    color: orange\n    fruit: apple\n",
        );
    run_case(Case {
        run: super::run,
        resources: SIMPLE,
        config: CONFIG,
        want_resources: Some(&want),
        want_results: &["[info]: set 4 labels in total"],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn workloads_selectors_and_templates() {
    let resources = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: with-template
  labels:
    color: orange
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: no-template
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: pdb
spec:
  selector:
    matchLabels:
      color: red
---
apiVersion: v1
kind: Service
metadata:
  name: svc
  annotations:
    config.kubernetes.io/local-config: "true"
"#;
    let want = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: with-template
  labels:
    color: orange
    fruit: apple
spec:
  selector:
    matchLabels:
      app: web
      color: orange
      fruit: apple
  template:
    metadata:
      labels:
        app: web
        color: orange
        fruit: apple
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: no-template
  labels:
    color: orange
    fruit: apple
spec:
  selector:
    matchLabels:
      color: orange
      fruit: apple
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: pdb
  labels:
    color: orange
    fruit: apple
spec:
  selector:
    matchLabels:
      color: orange
---
apiVersion: v1
kind: Service
metadata:
  name: svc
  annotations:
    config.kubernetes.io/local-config: "true"
"#;
    run_case(Case {
        run: super::run,
        resources,
        config: CONFIG,
        want_resources: Some(want),
        want_results: &["[info]: set 12 labels in total"],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn typed_config_empty_labels_and_no_resources() {
    let local = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n";
    run_case(Case {
        run: super::run,
        resources: local,
        config: "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetLabels\nmetadata:\n  name: c\nlabels:\n  a: b\n",
        want_resources: None,
        want_results: &["[info]: no input resources"],
        want_exit: 0,
        want_stderr: "",
    });
    run_case(Case {
        run: super::run,
        resources: local,
        config:
            "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetLabels\nmetadata:\n  name: c\nlabels: {}\n",
        want_resources: None,
        want_results: &["[warning]: no `labels` arguments are given in FunctionConfig"],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn config_errors() {
    for (config, message) in [
        (
            "",
            "FunctionConfig is missing. Expect `ConfigMap.v1` or `SetLabels.v1alpha1.fn.kpt.dev`",
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\n",
            "`data` of the ConfigMap is empty: no labels to set",
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
            want_stderr: "failed to evaluate function: error: function failure",
        });
    }
}

#[test]
fn v0_2_creates_the_pod_template_labels() {
    let resources =
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: 3\n";
    let want = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  labels:\n    tier: backend\nspec:\n  replicas: 3\n  selector:\n    matchLabels:\n      tier: backend\n  template:\n    metadata:\n      labels:\n        tier: backend\n";
    run_case(Case {
        run: super::run_v0_2,
        resources,
        config: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  tier: backend\n",
        want_resources: Some(want),
        want_results: &["[info]: set 3 labels in total"],
        want_exit: 0,
        want_stderr: "",
    });
}
