use super::super::apply_setters::tests::{run_case, Case};
use super::{path_splitter, smarter_path_splitter};

const POD: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: my-pod
spec:
  containers:
  - image: busybox
    name: myapp-container
  restartPolicy: OnFailure
"#;

fn config(replacements: &str) -> String {
    format!(
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: ApplyReplacements\nmetadata:\n  name: r\nreplacements:\n{replacements}"
    )
}

#[test]
fn catalog_example() {
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: hello\n";
    let resources = format!("{POD}---\n{job}");
    let want = format!(
        "{POD}---\n{job}spec:\n  template:\n    spec:\n      containers:\n      - image: busybox\n        name: myapp-container\n      restartPolicy: OnFailure\n"
    );
    let config = config(
        r#"- source:
    kind: Pod
    name: my-pod
    fieldPath: spec
  targets:
  - select:
      name: hello
      kind: Job
    fieldPaths:
    - spec.template.spec
    options:
      create: true
"#,
    );
    for run in [super::run, super::run_v0_1] {
        run_case(Case {
            run,
            resources: &resources,
            config: &config,
            want_resources: Some(&want),
            want_results: &[],
            want_exit: 0,
            want_stderr: "",
        });
    }
}

const CONFIG_MAPS: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: kptfile.kpt.dev
data:
  name: frontend
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: label-input
  labels:
    tier: web
data:
  app.kubernetes.io/app: "example" # the app
  list: a,b,c
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: other-input
  namespace: ns
data:
  app.kubernetes.io/app: example
"#;

#[test]
fn bracketed_keys_and_scalar_targets() {
    let config = config(
        r#"- source:
    kind: ConfigMap
    name: kptfile.kpt.dev
    fieldPath: data.name
  targets:
  - select:
      kind: ConfigMap
      name: .*-input
    reject:
    - namespace: ns
    fieldPaths:
    - data.[app.kubernetes.io/app]
"#,
    );
    // Latest: names are regular expressions; a scalar target keeps its style.
    run_case(Case {
        run: super::run,
        resources: CONFIG_MAPS,
        config: &config,
        want_resources: Some(&CONFIG_MAPS.replacen(
            "\"example\" # the app",
            "\"frontend\" # the app",
            1,
        )),
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
    // v0.1: names are exact, so nothing is selected.
    run_case(Case {
        run: super::run_v0_1,
        resources: CONFIG_MAPS,
        config: &config,
        want_resources: None,
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
    // v0.1 replaces the whole node (style and comments included; kpt
    // restores the comment).
    run_case(Case {
        run: super::run_v0_1,
        resources: CONFIG_MAPS,
        config: &config.replace(".*-input", "label-input"),
        want_resources: Some(&CONFIG_MAPS.replacen("\"example\" # the app", "frontend", 1)),
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn delimiters_and_label_selectors() {
    let config = config(
        r#"- source:
    kind: ConfigMap
    name: label-input
    fieldPath: data.list
    options:
      delimiter: ','
      index: 1
  targets:
  - select:
      kind: ConfigMap
      labelSelector: tier=web
    fieldPaths:
    - data.list
    options:
      delimiter: ','
      index: 0
"#,
    );
    for run in [super::run, super::run_v0_1] {
        run_case(Case {
            run,
            resources: CONFIG_MAPS,
            config: &config,
            want_resources: Some(&CONFIG_MAPS.replace("list: a,b,c", "list: b,b,c")),
            want_results: &[],
            want_exit: 0,
            want_stderr: "",
        });
    }
}

#[test]
fn errors() {
    let missing_target = config(
        "- source:\n    kind: ConfigMap\n    name: kptfile.kpt.dev\n    fieldPath: data.name\n  targets:\n  - select:\n      name: label-input\n    fieldPaths:\n    - data.missing\n",
    );
    type RunFn = fn(&[u8]) -> crate::exec::ProcessOutput;
    let cases: &[(RunFn, String, &str)] = &[
        (
            super::run,
            missing_target.clone(),
            r#"failed to transform resources: unable to find field "data.missing" in replacement target"#,
        ),
        (
            super::run,
            config("- source:\n    kind: ConfigMap\n  targets:\n  - select:\n      kind: X\n"),
            "failed to transform resources: multiple matches for selector ConfigMap.[noVer].[noGrp]/[noName].[noNs]",
        ),
        (
            super::run,
            config("- source:\n    kind: Secret\n    fieldPath: data.x\n  targets:\n  - select:\n      kind: X\n"),
            "failed to transform resources: nothing selected by Secret.[noVer].[noGrp]/[noName].[noNs]:data.x",
        ),
        (
            super::run_v0_1,
            config("- source:\n    kind: ConfigMap\n    name: label-input\n    fieldPath: data.nope\n  targets:\n  - select:\n      kind: X\n"),
            "failed to transform resources: fieldPath `data.nope` is missing for replacement source ConfigMap.[noVer].[noGrp]/label-input.[noNs]",
        ),
        (
            super::run_v0_1,
            config("- source:\n    kind: ConfigMap\n    name: label-input\n"),
            "failed to transform resources: replacements must specify a source and at least one target",
        ),
        (
            super::run_v0_1,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n".to_string(),
            "failed to configure function: received functionConfig of kind ConfigMap and apiVersion v1, only functionConfig of kind ApplyReplacements and apiVersion fn.kpt.dev/v1alpha1 is supported",
        ),
    ];
    for (run, config, message) in cases {
        let result = format!("[error]: {message}");
        run_case(Case {
            run: *run,
            resources: CONFIG_MAPS,
            config,
            want_resources: None,
            want_results: &[result.as_str()],
            want_exit: 1,
            want_stderr: &format!("[error] : {message}\n"),
        });
    }
    // v0.1 skips a missing target field.
    run_case(Case {
        run: super::run_v0_1,
        resources: CONFIG_MAPS,
        config: &missing_target,
        want_resources: None,
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn splits_paths() {
    assert_eq!(path_splitter("/a/b\\/c/d", "/"), vec!["a", "b/c", "d"]);
    assert_eq!(
        smarter_path_splitter("data.[app.kubernetes.io/app]", "."),
        vec!["data", "app.kubernetes.io/app"]
    );
    assert_eq!(
        smarter_path_splitter("spec.containers.[name=com.foo.app].image", "."),
        vec!["spec", "containers", "[name=com.foo.app]", "image"]
    );
}
