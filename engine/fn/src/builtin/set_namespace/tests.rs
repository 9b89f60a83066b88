use super::super::apply_setters::tests::{run_case, Case};

const SIMPLE: &str = r#"apiVersion: v1
kind: Service
metadata:
  name: the-service
  namespace: example
---
apiVersion: v1
kind: Namespace
metadata:
  name: example
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: the-crd
spec:
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        service:
          name: crd-svc
          namespace: example
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: the-api-service
spec:
  service:
    name: api-svc
    namespace: example
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crb1
subjects:
- kind: ServiceAccount
  name: default
  namespace: example
"#;

fn config_map(data: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n{data}")
}

#[test]
fn catalog_example_simple() {
    run_case(Case {
        run: super::run,
        resources: SIMPLE,
        config: &config_map("  namespace: example-ns\n"),
        want_resources: Some(&SIMPLE.replace("example\n", "example-ns\n")),
        want_results: &[
            "[info]: namespace [example] updated to \"example-ns\", 5 value(s) changed",
        ],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn package_context_names_the_namespace_and_local_config_is_skipped() {
    let resources = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: kptfile.kpt.dev
  annotations:
    config.kubernetes.io/local-config: "true"
data:
  name: example
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
---
apiVersion: x.dev/v1
kind: Custom
metadata:
  name: no-namespace
"#;
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\ndata:\n  name: example\n";
    run_case(Case {
        run: super::run,
        resources,
        config,
        want_resources: Some(
            &resources.replace("  name: app\n", "  name: app\n  namespace: example\n"),
        ),
        want_results: &["[info]: namespace [default] updated to \"example\", 1 value(s) changed"],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn matcher_selects_values_and_depends_on_follows() {
    let resources = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  namespace: one
  annotations:
    config.kubernetes.io/depends-on: /namespaces/one/ConfigMap/b,/namespaces/one/ConfigMap/outside
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: b
  namespace: one
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  namespace: two
"#;
    let want = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  namespace: new
  annotations:
    config.kubernetes.io/depends-on: /namespaces/new/ConfigMap/b,/namespaces/one/ConfigMap/outside
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: b
  namespace: new
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  namespace: two
"#;
    run_case(Case {
        run: super::run,
        resources,
        config: &config_map("  namespace: new\n  namespaceMatcher: one\n"),
        want_resources: Some(want),
        want_results: &["[info]: namespace [one] updated to \"new\", 2 value(s) changed"],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn nothing_to_change() {
    let resources = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n";
    run_case(Case {
        run: super::run,
        resources,
        config: &config_map("  namespace: ns\n"),
        want_resources: None,
        want_results: &[
            "[info]: all `depends-on` annotations are up-to-date. no `namespace` changed",
        ],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn config_errors() {
    let resources = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";
    for (config, message) in [
        ("", "FunctionConfig is missing. Expect `ConfigMap.v1` or `SetNamespace.v1alpha1.fn.kpt.dev`"),
        (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n",
            "unknown functionConfig Kind=Secret ApiVersion=v1, expect `ConfigMap.v1` or `SetNamespace.v1alpha1.fn.kpt.dev`",
        ),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  x: y\n", "`namespace` should not be empty"),
    ] {
        let line = format!("[error]: {message}");
        run_case(Case {
            run: super::run,
            resources,
            config,
            want_resources: None,
            want_results: &[line.as_str()],
            want_exit: 1,
            want_stderr: "failed to evaluate function: error: function failure",
        });
    }
}

#[test]
fn typed_config() {
    let resources = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";
    run_case(Case {
        run: super::run,
        resources,
        config: "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetNamespace\nmetadata:\n  name: c\nnamespace: ns\n",
        want_resources: Some(&format!("{resources}  namespace: ns\n")),
        want_results: &["[info]: namespace [default] updated to \"ns\", 1 value(s) changed"],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn v0_2_sets_every_resource_including_local_config() {
    let resources = r#"apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
---
apiVersion: fn.kpt.dev/v1alpha1
kind: StarlarkRun
metadata:
  name: delete-all
  annotations:
    config.kubernetes.io/local-config: "true"
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crb
subjects:
- kind: ServiceAccount
  name: default
- kind: ServiceAccount
  name: other
"#;
    let want = r#"apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
  namespace: staging
---
apiVersion: fn.kpt.dev/v1alpha1
kind: StarlarkRun
metadata:
  name: delete-all
  annotations:
    config.kubernetes.io/local-config: "true"
  namespace: staging
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crb
subjects:
- kind: ServiceAccount
  name: default
  namespace: staging
- kind: ServiceAccount
  name: other
"#;
    run_case(Case {
        run: super::run_v0_2,
        resources,
        config: &config_map("  namespace: staging\n"),
        want_resources: Some(want),
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn v0_2_config_errors() {
    let resources = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";
    run_case(Case {
        run: super::run_v0_2,
        resources,
        config: &config_map("  x: y\n"),
        want_resources: None,
        want_results: &["[error]: input namespace cannot be empty"],
        want_exit: 1,
        want_stderr: "[error] : input namespace cannot be empty\n",
    });
}

#[test]
fn role_bindings_and_unset_service_namespaces() {
    let resources = r#"apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rb
subjects:
- kind: ServiceAccount
  name: sa
  namespace: old
- kind: User
  name: jane
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crd
spec:
  conversion:
    strategy: None
"#;
    let want = r#"apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rb
  namespace: new
subjects:
- kind: ServiceAccount
  name: sa
  namespace: new
- kind: User
  name: jane
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crd
spec:
  conversion:
    strategy: None
"#;
    run_case(Case {
        run: super::run,
        resources,
        config: &config_map("  namespace: new\n"),
        want_resources: Some(want),
        want_results: &["[info]: namespace [default old] updated to \"new\", 2 value(s) changed"],
        want_exit: 0,
        want_stderr: "",
    });
}
