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

use std::path::Path;

use crate::kpt_diff::{describe_difference, render_with, Rendered};
use crate::util::{kpt_available, krmgraph_bin};

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
fn setters_builtins_match_kpt_exec() {
    if !kpt_available("setters_builtins_match_kpt_exec") {
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
