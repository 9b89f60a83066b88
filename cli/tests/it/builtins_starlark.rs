//! The starlark built-in against the real kpt: kpt renders a package whose
//! pipeline calls `exec: <krmgraph> fn run gcr.io/kpt-fn/starlark:v0.2.1`,
//! krmgraph renders the same package with `image:`. The trees, stdout,
//! stderr and `results.yaml` must be identical once the exec command is
//! spelled as the image. This checks that the built-in crosses the function
//! boundary exactly as a process does (edits, generated and deleted
//! resources, comments and key order restored by id, printed lines,
//! `fail()`, syntax errors), not go.starlark.net's own behaviour, which the
//! unit tests and the e2e corpus cover.

use crate::builtin_diff::compare;
use crate::util::kpt_available;

const IMAGE: &str = "gcr.io/kpt-fn/starlark:v0.2.1";

const RESOURCES: &str = r#"# the deployment
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx # the name
  labels:
    tier: web
    app: nginx
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: nginx
          image: "nginx:1.16.1" # pinned
          args: ['--port', '8080']
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  enabled: "true"
  count: '3'
  note: |
    multi
    line
"#;

/// One case: the script (the `source:` of a StarlarkRun named `script`)
/// and whether the function fails.
struct Case {
    source: &'static str,
    must_fail: bool,
}

const CASES: &[Case] = &[
    Case {
        // Edits in place: a changed scalar, a new key, a new nested map.
        source: r#"for r in ctx.resource_list["items"]:
  if r["kind"] == "Deployment":
    r["spec"]["replicas"] = 5
    r["metadata"]["annotations"] = {"owner": "team-a", "b10": "x", "b9": "1"}
    r["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.17"
"#,
        must_fail: false,
    },
    Case {
        // Generates one resource and deletes another.
        source: r#"items = [r for r in ctx.resource_list["items"] if r["kind"] != "ConfigMap"]
items.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"},
              "spec": {"ports": [{"port": 80, "targetPort": 8080}], "selector": {"app": "nginx"}}})
ctx.resource_list["items"] = items
"#,
        must_fail: false,
    },
    Case {
        // Reads its own config.
        source: r#"name = ctx.resource_list["functionConfig"]["metadata"]["name"]
for r in ctx.resource_list["items"]:
  r["metadata"].setdefault("labels", {})["script"] = name
"#,
        must_fail: false,
    },
    Case {
        source: "print(\"checked\", len(ctx.resource_list[\"items\"]), \"items\")\n",
        must_fail: false,
    },
    Case {
        source: "fail(\"no httpbin deployment\")\n",
        must_fail: true,
    },
    Case {
        source: "def f(r):\n  return r[\"kind\"] == \"Deployment\" and\n\nf(1)\n",
        must_fail: true,
    },
];

/// The StarlarkRun config holding a case's script.
fn script(source: &str) -> String {
    let mut script = String::from(
        "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: script\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nsource: |\n",
    );
    for line in source.lines() {
        if !line.is_empty() {
            script.push_str("  ");
        }
        script.push_str(line);
        script.push('\n');
    }
    script
}

#[test]
fn starlark_builtin_matches_kpt_exec() {
    if !kpt_available("starlark_builtin_matches_kpt_exec") {
        return;
    }
    let mut failures = Vec::new();
    for (i, case) in CASES.iter().enumerate() {
        let script = script(case.source);
        let files = [("script.yaml", script.as_str())];
        let config = "configPath: script.yaml";
        failures.extend(compare(i, RESOURCES, IMAGE, config, &files, case.must_fail));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
