//! The SDK-era built-ins (set-namespace v0.2+, set-labels v0.2+,
//! set-annotations and ensure-name-substring `unstable`, and the kpt-fn-demo
//! builds) against the real kpt: kpt renders a package whose pipeline calls
//! `exec: <krmgraph> fn run <image>`, krmgraph renders the same package with
//! `image: <image>`. The trees, stdout, stderr and `results.yaml` must be
//! identical once the exec command is spelled as the image. This checks
//! that these built-ins cross the function boundary exactly as a process
//! does (dropped path annotations, new fields, results, failures), not
//! their own behaviour, which the unit tests and the catalog examples
//! cover.

use crate::builtin_diff::{run_cases, Case};

const RESOURCES: &str = r#"# the deployment
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web # the name
  namespace: example
  labels:
    app: web
  annotations:
    config.kubernetes.io/depends-on: apps/namespaces/example/StatefulSet/db
spec:
  replicas: 4
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: nginx
          envFrom:
            - configMapRef:
                name: settings
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: example
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: example
data:
  mode: 'fast'
---
apiVersion: v1
kind: Namespace
metadata:
  name: example
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crb
roleRef:
  kind: ClusterRole
  name: reader
subjects:
  - kind: ServiceAccount
    name: default
    namespace: example
---
apiVersion: custom.io/v1
kind: Custom
metadata:
  name: custom
spec:
  image: nginx:1.2.3
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: local
  annotations:
    config.kubernetes.io/local-config: "true"
data:
  name: frontend
"#;

const PACKAGE_CONTEXT: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: kptfile.kpt.dev
  annotations:
    config.kubernetes.io/local-config: "true"
data:
  name: frontend
"#;

const ANNOTATIONS: &str = r#"apiVersion: fn.kpt.dev/v1alpha1
kind: SetAnnotations
metadata:
  name: annotations
  annotations:
    config.kubernetes.io/local-config: "true"
annotations:
  owner: team-a
  reviewed: "true"
additionalAnnotationFields:
  - kind: Custom
    path: spec/notes
    create: true
"#;

const SUBSTRING: &str = r#"apiVersion: fn.kpt.dev/v1alpha1
kind: EnsureNameSubstring
metadata:
  name: substring
  annotations:
    config.kubernetes.io/local-config: "true"
substring: -prod
editMode: append
"#;

const CASES: &[Case] = &[
    Case {
        image: "gcr.io/kpt-fn/set-namespace:unstable",
        config: "configMap:\n        namespace: prod",
        files: &[],
        must_fail: false,
    },
    Case {
        image: "gcr.io/kpt-fn/set-namespace:v0.4.1",
        config: "configPath: package-context.yaml",
        files: &[("package-context.yaml", PACKAGE_CONTEXT)],
        must_fail: false,
    },
    Case {
        image: "gcr.io/kpt-fn/set-namespace:v0.3.4",
        config: "configMap:\n        namespace: prod\n        namespaceMatcher: default",
        files: &[],
        must_fail: false,
    },
    Case {
        image: "gcr.io/kpt-fn/set-namespace:v0.2.0",
        config: "configMap:\n        namespace: staging",
        files: &[],
        must_fail: false,
    },
    Case {
        image: "gcr.io/kpt-fn-demo/set-namespace:v0.5.0",
        config: "configMap:\n        namespace: staging",
        files: &[],
        must_fail: false,
    },
    Case {
        // Fails: no namespace.
        image: "gcr.io/kpt-fn/set-namespace:unstable",
        config: "configMap:\n        other: x",
        files: &[],
        must_fail: true,
    },
    Case {
        // Fails: no namespace.
        image: "gcr.io/kpt-fn/set-namespace:v0.2.0",
        config: "configMap:\n        other: x",
        files: &[],
        must_fail: true,
    },
    Case {
        image: "gcr.io/kpt-fn/set-labels:unstable",
        config: "configMap:\n        tier: backend\n        app: shop",
        files: &[],
        must_fail: false,
    },
    Case {
        image: "gcr.io/kpt-fn/set-labels:v0.2.0",
        config: "configMap:\n        tier: backend",
        files: &[],
        must_fail: false,
    },
    Case {
        image: "gcr.io/kpt-fn-demo/set-labels:v0.2.0",
        config: "configMap:\n        tier: backend",
        files: &[],
        must_fail: false,
    },
    Case {
        // Fails: an empty ConfigMap.
        image: "gcr.io/kpt-fn/set-labels:unstable",
        config: "configMap: {}",
        files: &[],
        must_fail: true,
    },
    Case {
        image: "gcr.io/kpt-fn/set-annotations:unstable",
        config: "configMap:\n        color: orange\n        fruit: apple",
        files: &[],
        must_fail: false,
    },
    Case {
        image: "gcr.io/kpt-fn/set-annotations:unstable",
        config: "configPath: annotations.yaml",
        files: &[("annotations.yaml", ANNOTATIONS)],
        must_fail: false,
    },
    Case {
        // Fails: no annotations.
        image: "gcr.io/kpt-fn/set-annotations:unstable",
        config: "configMap: {}",
        files: &[],
        must_fail: true,
    },
    Case {
        image: "gcr.io/kpt-fn/ensure-name-substring:unstable",
        config: "configMap:\n        prepend: prod-",
        files: &[],
        must_fail: false,
    },
    Case {
        image: "gcr.io/kpt-fn/ensure-name-substring:unstable",
        config: "configPath: substring.yaml",
        files: &[("substring.yaml", SUBSTRING)],
        must_fail: false,
    },
    Case {
        // Fails: both prepend and append.
        image: "gcr.io/kpt-fn/ensure-name-substring:unstable",
        config: "configMap:\n        prepend: a-\n        append: -b",
        files: &[],
        must_fail: true,
    },
];

#[test]
fn sdk_builtins_match_kpt_exec() {
    run_cases("sdk_builtins_match_kpt_exec", RESOURCES, CASES);
}
