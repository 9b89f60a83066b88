//! Scripts and inputs → the function's own output (before kpt restores
//! comments and key order by id), with the harness of the kyaml-framework
//! family.

use super::super::apply_setters::tests::{run_case, Case};

const RESOURCES: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
spec:
  replicas: 3
---
apiVersion: custom.io/v1
kind: Custom
metadata:
  name: custom
spec:
  image: nginx:1.2.3
"#;

fn starlark_run(name: &str, source: &str) -> String {
    let mut config = format!(
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: {name}\nsource: |\n"
    );
    for line in source.lines() {
        config.push_str("  ");
        config.push_str(line);
        config.push('\n');
    }
    config
}

#[test]
fn edits_items_in_place() {
    let script = r#"
for r in ctx.resource_list["items"]:
  if r["kind"] == "Deployment":
    r["spec"]["replicas"] = 5
    r["metadata"]["labels"] = {"tier": "db", "app": "web", "version": "1"}
"#;
    run_case(Case {
        run: super::run,
        resources: RESOURCES,
        config: &starlark_run("edit", script),
        want_resources: Some(
            r#"apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app: web
    tier: db
    version: "1"
  name: nginx
spec:
  replicas: 5
---
apiVersion: custom.io/v1
kind: Custom
metadata:
  name: custom
spec:
  image: nginx:1.2.3
"#,
        ),
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn generates_and_deletes_with_sorted_keys() {
    let script = r#"
items = [r for r in ctx.resource_list["items"] if r["kind"] != "Custom"]
items.append({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "cm"},
              "data": {"b10": "x", "b9": "true", "a": "line1\nline2\n", "n": None, "f": 1.5}})
ctx.resource_list["items"] = items
"#;
    run_case(Case {
        run: super::run,
        resources: RESOURCES,
        config: &starlark_run("gen", script),
        want_resources: Some(
            r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
spec:
  replicas: 3
---
apiVersion: v1
data:
  a: |
    line1
    line2
  b9: "true"
  b10: x
  f: 1.5
  "n": null
kind: ConfigMap
metadata:
  name: cm
"#,
        ),
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn print_goes_to_stderr() {
    run_case(Case {
        run: super::run,
        resources: RESOURCES,
        config: &starlark_run(
            "p",
            "print(\"hello\", 1)\nprint(len(ctx.resource_list[\"items\"]))",
        ),
        want_resources: None,
        want_results: &[],
        want_exit: 0,
        want_stderr: "hello 1\n2",
    });
}

#[test]
fn fail_is_an_error_result() {
    run_case(Case {
        run: super::run,
        resources: RESOURCES,
        config: &starlark_run(
            "v",
            "print(\"checking\")\nfail(\"could not find\", \"httpbin\")",
        ),
        want_resources: None,
        want_results: &["[error]: fail: could not find httpbin"],
        want_exit: 1,
        want_stderr: "checking\n[error] : fail: could not find httpbin",
    });
}

#[test]
fn syntax_errors_carry_the_config_name() {
    let case_stderr = |source: &str| {
        let stdin =
            super::super::apply_setters::tests::input(RESOURCES, &starlark_run("gen", source));
        String::from_utf8(super::run(&stdin).stderr).unwrap()
    };
    let undefined = case_stderr("x = 1\ny = undefined_name\n");
    assert!(undefined.starts_with("[error] : gen:2:5: "), "{undefined}");
    let syntax = case_stderr("def f(:\n  pass\n");
    assert!(syntax.starts_with("[error] : gen:1:"), "{syntax}");
    // The e2e fn-failure script: Go reports the newline token at the
    // position after it.
    let dangling_and = case_stderr(
        "# comment\ndef isHTTPBin(r):\n  return r[\"kind\"] == \"Deployment\" and \n  r[\"metadata\"][\"name\"] == \"httpbin\"\n",
    );
    assert_eq!(
        dangling_and,
        "[error] : gen:4:1: got newline, want primary expression"
    );
}

#[test]
fn go_features_the_catalog_enables() {
    let script = r#"
seen = set()
def count(n):
  if n == 0:
    return 0
  return 1 + count(n - 1)
total = 0
for r in ctx.resource_list["items"]:
  seen.add(r["kind"])
  total = total + count(3)
n = 0
while n < 10:
  n += 1
if total != 6 or len(seen) != 2 or n != 10:
  fail("unexpected", total, seen, n)
"#;
    run_case(Case {
        run: super::run,
        resources: RESOURCES,
        config: &starlark_run("features", script),
        want_resources: None,
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn configmap_config_and_function_config_visible() {
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-run\ndata:\n  ns: prod\n  source: |\n    ns = ctx.resource_list[\"functionConfig\"][\"data\"][\"ns\"]\n    for r in ctx.resource_list[\"items\"]:\n      r[\"metadata\"][\"namespace\"] = ns\n";
    run_case(Case {
        run: super::run,
        resources: RESOURCES,
        config,
        want_resources: Some(
            &RESOURCES
                .replace("  name: nginx\n", "  name: nginx\n  namespace: prod\n")
                .replace("  name: custom\n", "  name: custom\n  namespace: prod\n"),
        ),
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
}

#[test]
fn missing_source_fails() {
    run_case(Case {
        run: super::run,
        resources: RESOURCES,
        config: "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: x\n",
        want_resources: None,
        want_results: &["[error]: `source` must not be empty"],
        want_exit: 1,
        want_stderr: "[error] : `source` must not be empty",
    });
}

#[test]
fn items_may_become_a_tuple_or_none() {
    let first = RESOURCES.split("---\n").next().unwrap();
    run_case(Case {
        run: super::run,
        resources: RESOURCES,
        config: &starlark_run(
            "t",
            "ctx.resource_list[\"items\"] = tuple(ctx.resource_list[\"items\"])[:1]",
        ),
        want_resources: Some(first),
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
    run_case(Case {
        run: super::run,
        resources: RESOURCES,
        config: &starlark_run("t", "ctx.resource_list[\"items\"] = None"),
        want_resources: Some(""),
        want_results: &[],
        want_exit: 0,
        want_stderr: "",
    });
}
