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

use std::path::Path;

use crate::kpt_diff::{describe_difference, render_with, Rendered};
use crate::util::{kpt_available, krmgraph_bin};

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

/// One case: the image, the pipeline entry's config (a `configMap:` block
/// or a `configPath:` line) and extra files.
struct Case {
    image: &'static str,
    config: &'static str,
    files: &'static [(&'static str, &'static str)],
    must_fail: bool,
}

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

fn write_package(dir: &Path, function: &str, case: &Case) {
    std::fs::create_dir_all(dir).unwrap();
    let mut kptfile = format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n    - {function}\n"
    );
    if !case.config.is_empty() {
        kptfile.push_str(&format!("      {}\n", case.config));
    }
    std::fs::write(dir.join("Kptfile"), kptfile).unwrap();
    std::fs::write(dir.join("resources.yaml"), RESOURCES).unwrap();
    for (name, text) in case.files {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

/// kpt's output with the exec command spelled as the image.
fn as_image(mut r: Rendered, exec: &str, image: &str) -> Rendered {
    let fix = |s: &str| {
        s.replace(&format!("exec: {exec}"), &format!("image: {image}"))
            .replace(&format!("\"{exec}\""), &format!("\"{image}\""))
    };
    r.stdout = fix(&r.stdout);
    r.stderr = fix(&r.stderr);
    for bytes in r.files.values_mut() {
        *bytes = fix(&String::from_utf8_lossy(bytes)).into_bytes();
    }
    r
}

#[test]
fn sdk_builtins_match_kpt_exec() {
    if !kpt_available("sdk_builtins_match_kpt_exec") {
        return;
    }
    let mut failures = Vec::new();
    for (i, case) in CASES.iter().enumerate() {
        let work = tempfile::tempdir().unwrap();
        let exec = format!("{} fn run {}", krmgraph_bin().display(), case.image);
        let kpt_src = work.path().join("src-kpt").join("pkg");
        let our_src = work.path().join("src-krmgraph").join("pkg");
        write_package(&kpt_src, &format!("exec: {exec}"), case);
        write_package(&our_src, &format!("image: {}", case.image), case);
        let args = ["--allow-exec", "--results-dir", "<RESULTS>"];
        let kpt = render_with("kpt", work.path(), &kpt_src, &args);
        let ours = render_with("krmgraph", work.path(), &our_src, &args);
        let kpt = as_image(kpt, &exec, case.image);
        let want_exit = if case.must_fail { 1 } else { 0 };
        if kpt.exit_code != want_exit {
            failures.push(format!(
                "case {i} ({}): kpt exited {}: {}",
                case.image, kpt.exit_code, kpt.stderr
            ));
        }
        if let Some(d) = describe_difference(&kpt, &ours) {
            failures.push(format!("case {i} ({}): {d}", case.image));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
