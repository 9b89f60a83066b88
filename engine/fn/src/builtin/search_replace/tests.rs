use super::super::apply_setters::tests::{run_case, Case};

const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: the-deployment
  namespace: my-space
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.1
      - name: sidecar
        image: something-foo
"#;

fn config(data: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sr\ndata:\n{data}")
}

#[test]
fn catalog_example() {
    run_case(Case {
        run: super::run,
        resources: DEPLOYMENT,
        config: &config(
            "  by-path: metadata.name\n  by-value: the-deployment\n  put-value: my-deployment\n",
        ),
        want_resources: Some(&DEPLOYMENT.replace("name: the-deployment", "name: my-deployment")),
        want_results: &[
            r#"[info] metadata.name: Mutated field value to "my-deployment" (resources.yaml)"#,
        ],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn by_path_put_value_v0_1() {
    // kpt's e2e fnresult-fn-success.
    run_case(Case {
        run: super::run_v0_1,
        resources: DEPLOYMENT,
        config: &config("  by-path: spec.replicas\n  put-value: \"4\"\n"),
        want_resources: Some(&DEPLOYMENT.replace("replicas: 3", "replicas: 4")),
        want_results: &[r#"[info] spec.replicas: Mutated field value to "4" (resources.yaml)"#],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn wildcards_and_search_only() {
    run_case(Case {
        run: super::run,
        resources: DEPLOYMENT,
        config: &config("  by-path: spec.**.image\n"),
        want_resources: None,
        want_results: &[
            r#"[info] spec.template.spec.containers.image: Matched field value "nginx:1.14.1" (resources.yaml)"#,
            r#"[info] spec.template.spec.containers.image: Matched field value "something-foo" (resources.yaml)"#,
        ],
        want_exit: 0,
        want_stderr: "",
    });
    run_case(Case {
        run: super::run,
        resources: DEPLOYMENT,
        config: &config("  by-path: spec.*.spec\n  by-value: \"3\"\n"),
        want_resources: None,
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn regex_capture_groups() {
    run_case(Case {
        run: super::run,
        resources: DEPLOYMENT,
        config: &config(
            "  by-value-regex: something-(.*)\n  put-value: my-project-id-${1}\n  put-comment: 'kpt-set: ${project-id}-${1}'\n",
        ),
        want_resources: Some(&DEPLOYMENT.replace(
            "image: something-foo",
            "image: my-project-id-foo # kpt-set: ${project-id}-foo",
        )),
        want_results: &[
            r#"[info] spec.template.spec.containers.image: Mutated field value to "my-project-id-foo" (resources.yaml)"#,
        ],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn by_file_path() {
    let resources = format!(
        "{DEPLOYMENT}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: the-deployment\n  annotations:\n    config.kubernetes.io/path: sub/dir/cm.yaml\n"
    );
    let want = resources.replacen(
        "name: the-deployment\n  annotations",
        "name: renamed\n  annotations",
        1,
    );
    run_case(Case {
        run: super::run,
        resources: &resources,
        config: &config(
            "  by-file-path: '**/cm.yaml'\n  by-value: the-deployment\n  put-value: renamed\n",
        ),
        want_resources: Some(&want),
        want_results: &[
            r#"[info] metadata.name: Mutated field value to "renamed" (sub/dir/cm.yaml)"#,
        ],
        want_exit: 0,
        want_stderr: "",
    });
    // v0.1 does not know by-file-path.
    run_case(Case {
        run: super::run_v0_1,
        resources: &resources,
        config: &config("  by-file-path: '**/cm.yaml'\n"),
        want_resources: None,
        want_results: &["[error]: failed to perform search-replace operation: at least one of [\"by-value\", \"by-value-regex\", \"by-path\"] must be provided"],
        want_exit: 1,
        want_stderr: "[error] : failed to perform search-replace operation: at least one of [\"by-value\", \"by-value-regex\", \"by-path\"] must be provided\n",
    });
}

#[test]
fn conflicting_matchers() {
    run_case(Case {
        run: super::run,
        resources: DEPLOYMENT,
        config: &config("  by-value: a\n  by-value-regex: b\n"),
        want_resources: None,
        want_results: &["[error]: failed to perform search-replace operation: only one of [\"by-value\", \"by-value-regex\"] can be provided"],
        want_exit: 1,
        want_stderr: "[error] : failed to perform search-replace operation: only one of [\"by-value\", \"by-value-regex\"] can be provided\n",
    });
}

#[test]
fn expands_numbered_groups_only() {
    let re = regex::Regex::new("^(?P<first>a)(b)(x)?$").unwrap();
    let caps = re.captures("ab").unwrap();
    for (template, want) in [
        ("${1}-${2}", "a-b"),
        ("${0}", "ab"),
        ("${3}|${4}", "|${4}"),
        ("$1x", "$1x"),
        ("${first}", "${first}"),
        ("$$1", "$$1"),
        ("kpt-set: ${host}.${1}", "kpt-set: ${host}.a"),
        ("${01}", "${01}"),
        ("$", "$"),
    ] {
        assert_eq!(super::expand_groups(template, &caps), want, "{template}");
    }
}
