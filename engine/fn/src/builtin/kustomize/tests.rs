//! Data-like cases: a functionConfig and input items, and the items the
//! function writes (before kpt restores comments and field order). Each
//! case runs the function as kpt would, on a ResourceList.

use super::annotations::SetAnnotations;
use super::labels::SetLabels;
use super::namespace::SetNamespace;
use super::*;

/// One case: the function, its `functionConfig` (YAML, empty for none),
/// the items, and the expected stdout items or stderr.
struct Case {
    run: RunFn,
    config: &'static str,
    items: &'static str,
    want: Result<&'static str, &'static str>,
}

type RunFn = fn(&[u8]) -> ProcessOutput;

fn resource_list(config: &str, items: &str) -> String {
    let indent = |s: &str| s.lines().map(|l| format!("  {l}\n")).collect::<String>();
    let mut out = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{}",
        indent(items)
    );
    if !config.is_empty() {
        out.push_str(&format!("functionConfig:\n{}", indent(config)));
    }
    out
}

/// The `items:` part of a written ResourceList.
fn items_of(stdout: &str) -> String {
    let start = stdout.find("items:\n").map_or(0, |i| i + "items:\n".len());
    let end = stdout
        .find("\nfunctionConfig:")
        .map_or(stdout.len(), |i| i + 1);
    stdout[start..end].to_string()
}

const CONFIGMAP_NS: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: f\ndata:\n  namespace: staging\n";
const CONFIGMAP_LABELS: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: f\ndata:\n  tier: backend\n  app: \"1\"\n";
const CONFIGMAP_ANNOTATIONS: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: f\ndata:\n  owner: me\n";

const CASES: &[Case] = &[
    // set-namespace: namespaced, cluster-scoped and unknown kinds.
    Case {
        run: run::<SetNamespace>,
        config: CONFIGMAP_NS,
        items: "- apiVersion: kpt.dev/v1\n  kind: Kptfile\n  metadata:\n    name: app\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: old\n- apiVersion: rbac.authorization.k8s.io/v1\n  kind: ClusterRole\n  metadata:\n    name: r\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: s\n    namespace: old\n",
        want: Ok("- apiVersion: kpt.dev/v1\n  kind: Kptfile\n  metadata:\n    name: app\n    namespace: staging\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: old\n- apiVersion: rbac.authorization.k8s.io/v1\n  kind: ClusterRole\n  metadata:\n    name: r\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: s\n    namespace: staging\n"),
    },
    // Binding subjects named like `default`, APIService and the typed
    // config's own field specs.
    Case {
        run: run::<SetNamespace>,
        config: "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetNamespaceConfig\nmetadata:\n  name: f\nnamespace: prod\nfieldSpecs:\n- kind: MyKind\n  path: spec/targets/namespace\n",
        items: "- apiVersion: rbac.authorization.k8s.io/v1\n  kind: ClusterRoleBinding\n  metadata:\n    name: b\n  subjects:\n  - name: default\n    namespace: x\n  - name: other\n  - name: my-default-sa\n- apiVersion: apiregistration.k8s.io/v1\n  kind: APIService\n  metadata:\n    name: v1.x\n  spec:\n    group: x\n- apiVersion: example.com/v1\n  kind: MyKind\n  metadata:\n    name: m\n  spec:\n    targets:\n    - namespace: a\n    - name: b\n",
        want: Ok("- apiVersion: rbac.authorization.k8s.io/v1\n  kind: ClusterRoleBinding\n  metadata:\n    name: b\n  subjects:\n  - name: default\n    namespace: prod\n  - name: other\n  - name: my-default-sa\n    namespace: prod\n- apiVersion: apiregistration.k8s.io/v1\n  kind: APIService\n  metadata:\n    name: v1.x\n  spec:\n    group: x\n    service:\n      namespace: prod\n- apiVersion: example.com/v1\n  kind: MyKind\n  metadata:\n    name: m\n    namespace: prod\n  spec:\n    targets:\n    - namespace: prod\n    - name: b\n"),
    },
    Case {
        run: run::<SetNamespace>,
        config: "",
        items: "- apiVersion: v1\n  kind: Service\n  metadata:\n    name: s\n",
        want: Err("[error] : failed to configure function: function config must be a ConfigMap or SetNamespaceConfig\n"),
    },
    Case {
        run: run::<SetNamespace>,
        config: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: f\ndata:\n  other: x\n",
        items: "- apiVersion: v1\n  kind: Service\n  metadata:\n    name: s\n",
        want: Err("[error] : failed to configure function: input namespace cannot be empty\n"),
    },
    // set-labels: selectors and templates created where kustomize creates
    // them, only updated where it does not; values re-quoted by the round
    // trip; keys sorted.
    Case {
        run: run::<SetLabels>,
        config: CONFIGMAP_LABELS,
        items: "- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: d\n  spec:\n    replicas: 3\n- apiVersion: batch/v1\n  kind: Job\n  metadata:\n    name: j\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: s\n    labels: {}\n  spec:\n    selector:\n      app: old\n",
        want: Ok("- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    labels:\n      app: \"1\"\n      tier: backend\n    name: d\n  spec:\n    replicas: 3\n    selector:\n      matchLabels:\n        app: \"1\"\n        tier: backend\n    template:\n      metadata:\n        labels:\n          app: \"1\"\n          tier: backend\n- apiVersion: batch/v1\n  kind: Job\n  metadata:\n    labels:\n      app: \"1\"\n      tier: backend\n    name: j\n  spec:\n    template:\n      metadata:\n        labels:\n          app: \"1\"\n          tier: backend\n- apiVersion: v1\n  kind: Service\n  metadata:\n    labels:\n      app: \"1\"\n      tier: backend\n    name: s\n  spec:\n    selector:\n      app: \"1\"\n      tier: backend\n"),
    },
    // Lists on the path are walked item by item; null fields are created.
    Case {
        run: run::<SetLabels>,
        config: "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetLabelConfig\nmetadata:\n  name: f\nlabels:\n  color: blue\n",
        items: "- apiVersion: apps/v1\n  kind: StatefulSet\n  metadata:\n    name: s\n    labels:\n  spec:\n    volumeClaimTemplates:\n    - metadata:\n        name: a\n    - spec: {}\n- apiVersion: networking.k8s.io/v1\n  kind: NetworkPolicy\n  metadata:\n    name: np\n  spec:\n    ingress:\n    - from:\n      - podSelector:\n          matchLabels:\n            a: b\n      - ipBlock: {}\n",
        want: Ok("- apiVersion: apps/v1\n  kind: StatefulSet\n  metadata:\n    labels:\n      color: blue\n    name: s\n  spec:\n    selector:\n      matchLabels:\n        color: blue\n    template:\n      metadata:\n        labels:\n          color: blue\n    volumeClaimTemplates:\n    - metadata:\n        labels:\n          color: blue\n        name: a\n    - metadata:\n        labels:\n          color: blue\n      spec: {}\n- apiVersion: networking.k8s.io/v1\n  kind: NetworkPolicy\n  metadata:\n    labels:\n      color: blue\n    name: np\n  spec:\n    ingress:\n    - from:\n      - podSelector:\n          matchLabels:\n            a: b\n            color: blue\n      - ipBlock: {}\n"),
    },
    // A typed config's field specs come on top of the defaults; `create`
    // reads YAML 1.1 booleans as go-yaml does for a bool field.
    Case {
        run: run::<SetLabels>,
        config: "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetLabelConfig\nmetadata:\n  name: f\nlabels:\n  fruit: apple\nfieldSpecs:\n- kind: MyResource\n  group: dev.example.com\n  version: v1\n  create: yes\n  path: spec/selector/labels\n- kind: MyResource\n  path: spec/other/labels\n",
        items: "- apiVersion: dev.example.com/v1\n  kind: MyResource\n  metadata:\n    name: r\n- apiVersion: other.com/v1\n  kind: MyResource\n  metadata:\n    name: o\n",
        want: Ok("- apiVersion: dev.example.com/v1\n  kind: MyResource\n  metadata:\n    labels:\n      fruit: apple\n    name: r\n  spec:\n    selector:\n      labels:\n        fruit: apple\n- apiVersion: other.com/v1\n  kind: MyResource\n  metadata:\n    labels:\n      fruit: apple\n    name: o\n"),
    },
    Case {
        run: run::<SetAnnotations>,
        config: "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetAnnotationConfig\nmetadata:\n  name: f\nannotations:\n  b: \"2\"\n  a: x y\nfieldSpecs:\n- kind: MyResource\n  path: spec/annotations\n  create: true\n",
        items: "- apiVersion: dev.example.com/v1\n  kind: MyResource\n  metadata:\n    name: r\n",
        want: Ok("- apiVersion: dev.example.com/v1\n  kind: MyResource\n  metadata:\n    annotations:\n      a: x y\n      b: \"2\"\n    name: r\n  spec:\n    annotations:\n      a: x y\n      b: \"2\"\n"),
    },
    Case {
        run: run::<SetAnnotations>,
        config: "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetAnnotationConfig\nmetadata:\n  name: f\n",
        items: "- apiVersion: v1\n  kind: Service\n  metadata:\n    name: s\n",
        want: Err("[error] : failed to configure function: input annotation list cannot be empty\n"),
    },
    // A field spec whose path ends in a list item's scalar.
    Case {
        run: run::<SetNamespace>,
        config: "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetNamespaceConfig\nmetadata:\n  name: f\nnamespace: prod\nfieldSpecs:\n- kind: MyKind\n  path: spec/name/namespace\n",
        items: "- apiVersion: example.com/v1\n  kind: MyKind\n  metadata:\n    name: m\n    namespace: prod\n  spec:\n    name: x\n",
        want: Err("[error] : failed to run function: considering field 'spec/name/namespace' of object\napiVersion: example.com/v1\nkind: MyKind\nmetadata:\n  name: m\n  namespace: prod\nspec:\n  name: x\n: expected sequence or mapping node\n"),
    },
    Case {
        run: run::<SetLabels>,
        config: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: f\n",
        items: "- apiVersion: v1\n  kind: Service\n  metadata:\n    name: s\n",
        want: Err("[error] : failed to configure function: input label list cannot be empty\n"),
    },
    Case {
        run: run::<SetLabels>,
        config: CONFIGMAP_LABELS,
        items: "- apiVersion: v1\n  kind: Service\n  metadata:\n    name: s\n    labels: [a]\n",
        want: Err("[error] : failed to run function: considering field 'metadata/labels' of object\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  labels: [a]\n: wrong node kind: expected MappingNode but got SequenceNode: node contents:\n[a]\n\n"),
    },
    // set-annotations: pod templates of workloads, and everything else's
    // metadata, the Kptfile and local configs included.
    Case {
        run: run::<SetAnnotations>,
        config: CONFIGMAP_ANNOTATIONS,
        items: "- apiVersion: batch/v1beta1\n  kind: CronJob\n  metadata:\n    name: c\n  spec:\n    schedule: \"* * * * *\"\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: local\n    annotations:\n      config.kubernetes.io/local-config: \"true\"\n",
        want: Ok("- apiVersion: batch/v1beta1\n  kind: CronJob\n  metadata:\n    annotations:\n      owner: me\n    name: c\n  spec:\n    jobTemplate:\n      metadata:\n        annotations:\n          owner: me\n      spec:\n        template:\n          metadata:\n            annotations:\n              owner: me\n    schedule: '* * * * *'\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    annotations:\n      config.kubernetes.io/local-config: \"true\"\n      owner: me\n    name: local\n"),
    },
    Case {
        run: run::<SetAnnotations>,
        config: "apiVersion: v1\nkind: Other\nmetadata:\n  name: f\n",
        items: "- apiVersion: v1\n  kind: Service\n  metadata:\n    name: s\n",
        want: Err("[error] : failed to configure function: function config must be a ConfigMap or SetAnnotationConfig\n"),
    },
];

#[test]
fn cases_write_what_the_originals_write() {
    for (i, case) in CASES.iter().enumerate() {
        let out = (case.run)(resource_list(case.config, case.items).as_bytes());
        let stdout = String::from_utf8(out.stdout).unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        match case.want {
            Ok(items) => {
                assert_eq!(out.exit_code, Some(0), "case {i}: {stderr}");
                assert_eq!(items_of(&stdout), items, "case {i}");
                assert!(!stdout.contains("results:"), "case {i}: {stdout}");
            }
            Err(message) => {
                assert_eq!(out.exit_code, Some(1), "case {i}: {stdout}");
                assert_eq!(stderr, message, "case {i}");
                assert!(stdout.contains("severity: error"), "case {i}: {stdout}");
            }
        }
    }
}

#[test]
fn registered_for_the_v0_1_tags() {
    use crate::builtin::lookup;
    for image in [
        "gcr.io/kpt-fn/set-namespace:v0.1.3",
        "gcr.io/kpt-fn/set-labels:v0.1",
        "gcr.io/kpt-fn/set-labels:v0.1.5",
        "gcr.io/kpt-fn/set-annotations:v0.1.3",
    ] {
        assert!(lookup(image).is_some_and(|b| b.version == "1"), "{image}");
    }
}

#[test]
fn leaves_alone_is_about_the_value_the_round_trip_reads() {
    use crate::testing::parse;
    let config = parse(CONFIGMAP_NS);
    let service = |namespace: &str| {
        parse(&format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: s # c\n{namespace}spec:\n  port: 80\n"
        ))
    };
    let items = [
        service("  namespace: staging\n"),
        // Another style of the same string: the same value.
        service("  namespace: 'staging'\n"),
        service(""),
        service("  namespace: prod\n"),
    ];
    let items: Vec<&Node> = items.iter().collect();
    let verdicts = leaves_alone::<SetNamespace>(&items, Some(&config)).unwrap();
    let found: Vec<&str> = verdicts
        .iter()
        .map(|v| match v {
            Verdict::LeftAlone => "alone",
            Verdict::Transformed(_) => "transformed",
            Verdict::Unknown => "unknown",
        })
        .collect();
    assert_eq!(found, ["alone", "alone", "transformed", "transformed"]);
    // A transformed copy finishes as the run on nodes makes the item.
    let Verdict::Transformed(copy) = &verdicts[3] else {
        unreachable!()
    };
    let finished = finish(copy.clone()).unwrap();
    let run = run_direct::<SetNamespace>(&[items[3].clone()], Some(&config)).unwrap();
    let text = |n: &Node| krmgraph_kyaml::node_to_string(n).unwrap();
    assert_eq!(text(&finished), text(&run.items[0]));
    assert!(text(&finished).contains("namespace: staging"));
    // A config the function refuses answers nothing.
    let empty =
        parse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: f\ndata:\n  namespace: ''\n");
    assert!(leaves_alone::<SetNamespace>(&items, Some(&empty)).is_none());
}

#[test]
fn same_value_sees_resolved_tags_and_order_not_styles() {
    use crate::testing::parse;
    let same = |a: &str, b: &str| same_value(&parse(a), &parse(b));
    assert!(same("a: x\nb: 1\n", "a: \"x\"\nb: 1 # c\n"));
    assert!(!same("a: \"1\"\n", "a: 1\n"), "a string is not an int");
    assert!(!same("a: x\nb: y\n", "b: y\na: x\n"), "entries in order");
    assert!(!same("a: [x]\n", "a: [x, y]\n"));
    assert!(!same("a: &x x\n", "a: &x x\n"), "anchors are declined");
    assert!(
        !same("a: !!binary eA==\n", "a: !!binary eA==\n"),
        "other tags too"
    );
}
