use super::super::apply_setters::tests::{run_case, Case};
use super::{new_image, Image};

const PODS: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: app1
spec:
  containers:
  - name: server
    image: nginx:1.20.2
  - name: store
    image: postgres:14.1
  initContainers:
  - name: init
    image: nginx:1.20.2
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app2
spec:
  template:
    spec:
      containers:
      - name: server
        image: nginx # the server
---
apiVersion: batch/v1
kind: Job
metadata:
  name: job
spec:
  template:
    spec:
      containers:
      - name: server
        image: nginx
"#;

#[test]
fn catalog_example_simple() {
    run_case(Case {
        run: super::run,
        resources: PODS,
        config: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  name: nginx\n  newName: bitnami/nginx\n  newTag: 1.21.4\n",
        want_resources: Some(
            &PODS
                .replacen("image: nginx:1.20.2", "image: bitnami/nginx:1.21.4", 1)
                .replacen("image: nginx # the", "image: bitnami/nginx:1.21.4 # the", 1),
        ),
        want_results: &["[info]: summary: updated a total of 2 image(s)"],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn catalog_example_advanced() {
    let resources = r#"apiVersion: dev.example.com/v1
kind: MyKind
metadata:
  name: the-resource
spec:
  manifest:
    images:
    - image: nginx:1.20.2
    - image: postgres:14.1
"#;
    run_case(Case {
        run: super::run,
        resources,
        config: r#"apiVersion: fn.kpt.dev/v1alpha1
kind: SetImage
metadata:
  name: my-func-config
image:
  name: nginx
  newName: bitnami/nginx
  newTag: 1.21.4
additionalImageFields:
- kind: MyKind
  create: false
  group: dev.example.com
  path: spec/manifest/images[]/image
  version: v1
"#,
        want_resources: Some(&resources.replace("nginx:1.20.2", "bitnami/nginx:1.21.4")),
        want_results: &["[info]: summary: updated a total of 1 image(s)"],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn new_values() {
    let image = |name: &str, new_name: &str, new_tag: &str, digest: &str| Image {
        name: name.into(),
        new_name: new_name.into(),
        new_tag: new_tag.into(),
        digest: digest.into(),
    };
    let cases = [
        (
            image("nginx", "", "1.2", ""),
            "nginx:1.1",
            Some("nginx:1.2"),
        ),
        (image("nginx", "", "1.2", ""), "nginx", Some("nginx:1.2")),
        (
            image("nginx", "", "", "sha256:abc"),
            "nginx:1.1",
            Some("nginx@sha256:abc"),
        ),
        (
            image("nginx", "", "1.2", "sha256:abc"),
            "nginx:1.1",
            Some("nginx@sha256:abc"),
        ),
        (
            image("nginx", "x/nginx", "", ""),
            "nginx:1.1@sha256:00",
            Some("x/nginx:1.1@sha256:00"),
        ),
        (image("nginx", "x", "", ""), "nginx-sidecar:1", None),
        (image("nginx", "x", "", ""), "my/nginx:1", None),
        // The name is a regular expression.
        (image("ng.nx", "x", "", ""), "ngunx:1", Some("x:1")),
    ];
    for (image, value, want) in cases {
        assert_eq!(
            new_image(&image, value).as_deref(),
            want,
            "{value} {image:?}"
        );
    }
}

#[test]
fn config_errors() {
    for (data, message) in [
        ("  newName: x\n", "must specify `name`"),
        (
            "  name: x\n",
            "must specify one of `newName`, `newTag`, or `digest`",
        ),
        (
            "  name: x\n  tag: y\n",
            "ConfigMap has wrong field name tag",
        ),
    ] {
        let config =
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n{data}");
        let want = format!("[error]: {message}");
        run_case(Case {
            run: super::run,
            resources: PODS,
            config: &config,
            want_resources: None,
            want_results: &[want.as_str()],
            want_exit: 1,
            want_stderr: "failed to evaluate function: error: function failure",
        });
    }
}
