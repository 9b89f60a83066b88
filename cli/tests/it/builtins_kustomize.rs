//! The kustomize-era built-ins (set-namespace, set-labels, set-annotations
//! v0.1.x) against the real kpt: kpt renders a package whose pipeline calls
//! `exec: <krmgraph> fn run <image>`, krmgraph renders the same package
//! with `image: <image>`. The trees, stdout, stderr and `results.yaml` must
//! be identical once the exec command is spelled as the image. This checks
//! that these built-ins cross the function boundary exactly as a process
//! does — in particular that kpt restores comments and field order around
//! their JSON round trip the way krmgraph does — not their own behaviour,
//! which the unit tests and kpt's e2e cases cover. The resources hold
//! foot comments (nested, at a document's end, on the last item), which
//! the built-ins' models decline: those items take the long way, each run
//! of them on a ResourceList of its own.

use crate::builtin_diff::{compare_nested, run_cases, Case};
use crate::util::kpt_available;

const RESOURCES: &str = r#"# the deployment
apiVersion: apps/v1
kind: Deployment
metadata:
  name: my-nginx # the name
  annotations:
    projectId: 'PROJECT_ID' # kpt-set: ${project}
    flow: {a: b}
spec:
  replicas: 4
  template:
    spec:
      containers:
        - name: nginx
          image: "nginx:1.16.1"
          args: ["--port", "8080"]
          env:
            - name: ENABLED
              value: "true"
            - name: SCRIPT
              value: |
                echo one
                echo two
---
apiVersion: v1
kind: Service
metadata:
  name: my-service
spec:
  ports:
  - port: 80 # http
    # targetPort: 8080
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  volumeClaimTemplates:
  - metadata:
      name: data
---
apiVersion: batch/v1beta1
kind: CronJob
metadata:
  name: nightly
spec:
  schedule: "0 1 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
# the end of the cron job
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: binding
subjects:
- kind: ServiceAccount
  name: default
- kind: ServiceAccount
  name: builder
---
apiVersion: v1
kind: Namespace
metadata:
  name: old
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
---
apiVersion: example.com/v1
kind: MyKind
metadata:
  name: foo
spec:
  created: 2021-01-01
  ratio: 1.5
  empty: {}
  nothing: ~
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: local
  annotations:
    config.kubernetes.io/local-config: "true"
data:
  on: "yes"
  # off: "no"
"#;

const NAMESPACE_CONFIG: &str = r#"apiVersion: fn.kpt.dev/v1alpha1
kind: SetNamespaceConfig
metadata:
  name: ns
namespace: typed-ns
fieldSpecs:
- kind: MyKind
  path: spec/targetNamespace
  create: true
"#;

const LABEL_CONFIG: &str = r#"apiVersion: fn.kpt.dev/v1alpha1
kind: SetLabelConfig
metadata:
  name: labels
labels:
  color: blue
  app.kubernetes.io/name: demo
fieldSpecs:
- kind: MyKind
  path: spec/selector
  create: true
"#;

const CASES: &[Case] = &[
    Case {
        image: "gcr.io/kpt-fn/set-namespace:v0.1.3",
        config: "configMap:\n        namespace: staging",
        files: &[],
        must_fail: false,
    },
    Case {
        image: "gcr.io/kpt-fn/set-namespace:v0.1",
        config: "configPath: ns.yaml",
        files: &[("ns.yaml", NAMESPACE_CONFIG)],
        must_fail: false,
    },
    Case {
        // Fails: no functionConfig.
        image: "gcr.io/kpt-fn/set-namespace:v0.1.3",
        config: "",
        files: &[],
        must_fail: true,
    },
    Case {
        image: "gcr.io/kpt-fn/set-labels:v0.1.4",
        config: "configMap:\n        tier: backend\n        app: \"123\"",
        files: &[],
        must_fail: false,
    },
    Case {
        // The short form kpt expands to `gcr.io/kpt-fn/`.
        image: "set-labels:v0.1",
        config: "configMap:\n        tier: frontend",
        files: &[],
        must_fail: false,
    },
    Case {
        image: "gcr.io/kpt-fn/set-labels:v0.1.5",
        config: "configPath: labels.yaml",
        files: &[("labels.yaml", LABEL_CONFIG)],
        must_fail: false,
    },
    Case {
        // Fails: a config of another kind.
        image: "gcr.io/kpt-fn/set-labels:v0.1.4",
        config: "configPath: ns.yaml",
        files: &[("ns.yaml", NAMESPACE_CONFIG)],
        must_fail: true,
    },
    Case {
        image: "gcr.io/kpt-fn/set-annotations:v0.1.3",
        config: "configMap:\n        owner: team-a\n        on: \"off\"",
        files: &[],
        must_fail: false,
    },
];

#[test]
fn kustomize_builtins_match_kpt_exec() {
    run_cases("kustomize_builtins_match_kpt_exec", RESOURCES, CASES);
}

/// Four packages deep, every Kptfile running set-namespace, set-labels and
/// set-annotations: from the third package up, most items come back from
/// each step as they went in, and krmgraph gives them back without running
/// the step (`fnruntime::builtin::fixed_point`). The bytes must still be
/// kpt's; CI's `KRMGRAPH_CHECK_DIRECT=1` also runs each such step on the
/// bytes and compares.
#[test]
fn kustomize_builtins_in_nested_packages_match_kpt_exec() {
    if !kpt_available("kustomize_builtins_in_nested_packages_match_kpt_exec") {
        return;
    }
    let failures = compare_nested(
        &["", "a", "a/b", "a/b/c"],
        RESOURCES,
        &[
            (
                "gcr.io/kpt-fn/set-namespace:v0.1.3",
                "configMap: {namespace: prod}",
            ),
            (
                "gcr.io/kpt-fn/set-labels:v0.1.4",
                "configMap: {tier: backend}",
            ),
            (
                "gcr.io/kpt-fn/set-annotations:v0.1.4",
                "configMap: {owner: me}",
            ),
        ],
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
