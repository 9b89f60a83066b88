//! Differential tests of the kyaml port against the real `kpt fn render`
//! (1.0.0-beta.56): for small packages built in a temp dir, kpt renders one
//! copy and krmgraph's reader → writer round trip (plus, for packages with
//! an identity `exec: cat` function, the bookkeeping around a function call)
//! rewrites another; every file must be byte-identical. With `-o stdout`,
//! kpt's ResourceList must equal krmgraph's `ByteWriter` wrapping.
//!
//! Skips (printing why) when `kpt` is not on `PATH`; fails instead when
//! `KRMGRAPH_REQUIRE_KPT=1`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use krmgraph_kyaml::byteio::ByteWriter;
use krmgraph_kyaml::kio_pipeline as kp;
use krmgraph_kyaml::kioutil::{
    self, LEGACY_PATH_ANNOTATION, PACKAGE_PATH_ANNOTATION, PATH_ANNOTATION,
};
use krmgraph_kyaml::pkgio::{self, LocalPackageReader, WriterOptions};
use krmgraph_kyaml::{gopath, rnode};
use krmgraph_yaml::Node;

/// Whether kpt can be run; panics when it must.
fn have_kpt() -> bool {
    let ok = Command::new("kpt")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var("KRMGRAPH_REQUIRE_KPT").as_deref() == Ok("1") {
            panic!("kpt is not available and KRMGRAPH_REQUIRE_KPT=1");
        }
        eprintln!("skipping: `kpt` is not on PATH (set KRMGRAPH_REQUIRE_KPT=1 to fail instead)");
    }
    ok
}

/// A package: files (path, bytes), directories with a Kptfile are
/// subpackages.
type Files = &'static [(&'static str, &'static [u8])];

fn kptfile(name: &str, pipeline: &str) -> Vec<u8> {
    format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n{pipeline}")
        .into_bytes()
}

fn build(dir: &Path, name: &str, pipeline: &str, files: Files) -> PathBuf {
    let pkg = dir.join(name);
    fs::create_dir_all(&pkg).unwrap();
    fs::write(pkg.join("Kptfile"), kptfile(name, pipeline)).unwrap();
    for (path, content) in files {
        let p = pkg.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }
    pkg
}

fn kpt(args: &[&str], cwd: &Path) -> Vec<u8> {
    let out = Command::new("kpt")
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "kpt {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Every file under `dir`, by relative path.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if p.is_symlink() {
                let target = fs::read_link(&p).unwrap();
                out.insert(rel, format!("-> {}", target.display()).into_bytes());
            } else if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(rel, fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Direct subpackages of `pkg`, sorted by path (kpt skips `.git`).
fn subpackages(pkg: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut names: Vec<_> = fs::read_dir(pkg)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for p in names {
        if !p.is_dir() || p.file_name().is_some_and(|n| n == ".git") || p.is_symlink() {
            continue;
        }
        if p.join("Kptfile").exists() {
            out.push(p);
        } else {
            out.extend(subpackages(&p));
        }
    }
    out
}

/// kpt's hydration: subpackage outputs first, then the package's own
/// resources, through the package's `exec:` function if it has one.
fn hydrate(pkg: &Path) -> Vec<Node> {
    let mut input = Vec::new();
    for sub in subpackages(pkg) {
        input.extend(hydrate(&sub));
    }
    let abs = fs::canonicalize(pkg)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    input.extend(LocalPackageReader::kpt(pkg, &abs).read().unwrap());
    let kptfile = fs::read_to_string(pkg.join("Kptfile")).unwrap();
    match kptfile.split_once("- exec: ") {
        Some((_, rest)) => {
            let line = rest.lines().next().unwrap();
            let command = line
                .strip_prefix('"')
                .and_then(|l| l.strip_suffix('"'))
                .unwrap_or(line);
            run_function(command, &abs, input)
        }
        None => input,
    }
}

/// `adjustRelPath`: paths relative to the root package, package path gone.
fn adjust_rel_path(root: &Path, nodes: &mut [Node]) {
    let root = fs::canonicalize(root)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    for n in nodes {
        let meta = rnode::get_meta(n).unwrap();
        if let Some(pkg) = meta.annotations.get(PACKAGE_PATH_ANNOTATION) {
            let rel = gopath::rel(&root, pkg).unwrap();
            let (path, _) = kioutil::get_file_annotations(n);
            let new = gopath::join(&[&rel, &gopath::clean(&path)]);
            rnode::set_annotation(n, PATH_ANNOTATION, &new).unwrap();
            rnode::set_annotation(n, LEGACY_PATH_ANNOTATION, &new).unwrap();
            rnode::clear_annotation(n, PACKAGE_PATH_ANNOTATION).unwrap();
        }
    }
}

/// One function call (`exec: <command>`, run through `sh -c`) with the
/// bookkeeping of kio.Pipeline and FunctionFilter around it.
fn run_function(command: &str, pkg_abs: &str, mut nodes: Vec<Node>) -> Vec<Node> {
    use std::io::Write;
    let snapshot = kp::preprocess_for_internal_annotation_migration(&mut nodes).unwrap();
    kp::set_ids(&mut nodes).unwrap();
    let stdin = kp::function_input(&mut nodes, None).unwrap();
    let mut child = Command::new("sh")
        .args(["-c", command])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&stdin).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "function {command} failed");
    let mut out = kp::read_function_output(&output.stdout).unwrap().nodes;
    kp::copy_comments_and_sync_order(&nodes, &mut out).unwrap();
    kioutil::default_path_annotation(&kp::function_scope(None).unwrap(), &mut out).unwrap();
    for n in &mut out {
        if !kioutil::get_internal_annotations(n).contains_key(PACKAGE_PATH_ANNOTATION) {
            rnode::set_annotation(n, PACKAGE_PATH_ANNOTATION, pkg_abs).unwrap();
        }
    }
    if kp::finish_filter(&mut out, &snapshot).unwrap() == kp::FilterOutcome::Empty {
        return Vec::new();
    }
    out
}

/// Builds the package at `<tmp>/pkg/<name>`, lets kpt render it, keeps
/// what it wrote, then rebuilds the package at the same place (so absolute
/// paths in annotations agree) and lets `ours` produce its version.
fn differential<T>(
    name: &str,
    pipeline: &str,
    files: Files,
    setup: &dyn Fn(&Path),
    theirs: &dyn Fn(&Path, &Path) -> T,
    ours: &dyn Fn(&Path) -> T,
) -> Option<(T, T, BTreeMap<String, Vec<u8>>)> {
    if !have_kpt() {
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    let place = tmp.path().join("pkg");
    let pipeline = pipeline.replace("{TMP}", &tmp.path().to_string_lossy());
    let pkg = build(&place, name, &pipeline, files);
    setup(tmp.path());
    let want = theirs(&pkg, tmp.path());
    let side = tree(tmp.path());
    for k in side.keys().filter(|k| k.starts_with("dump")) {
        fs::remove_file(tmp.path().join(k)).unwrap();
    }
    fs::remove_dir_all(&place).unwrap();
    let pkg = build(&place, name, &pipeline, files);
    setup(tmp.path());
    let got = ours(&pkg);
    let side_ours = tree(tmp.path());
    let extra: BTreeMap<String, Vec<u8>> = side
        .into_iter()
        .filter(|(k, _)| k.starts_with("dump"))
        .map(|(k, v)| {
            let mine = side_ours.get(&k).cloned().unwrap_or_default();
            assert_eq!(
                String::from_utf8_lossy(&v),
                String::from_utf8_lossy(&mine),
                "{name}: function input {k}"
            );
            (k, v)
        })
        .collect();
    Some((want, got, extra))
}

/// In place: kpt's rewrite of every file equals ours.
fn check_in_place_with(name: &str, pipeline: &str, files: Files, setup: &dyn Fn(&Path)) {
    let theirs = |pkg: &Path, cwd: &Path| {
        kpt(
            &["fn", "render", "--allow-exec", pkg.to_str().unwrap()],
            cwd,
        );
        tree(pkg)
    };
    let ours = |pkg: &Path| {
        let mut nodes = hydrate(pkg);
        adjust_rel_path(pkg, &mut nodes);
        let options = WriterOptions {
            package_path: pkg.to_string_lossy().into_owned(),
            clear_annotations: vec![PACKAGE_PATH_ANNOTATION.to_string()],
            ..WriterOptions::default()
        };
        let rendered = pkgio::render_files(nodes.clone(), &options, None).unwrap();
        pkgio::write_files(pkg, &rendered).unwrap();
        tree(pkg)
    };
    let Some((want, got, _)) = differential(name, pipeline, files, setup, &theirs, &ours) else {
        return;
    };
    let got: BTreeMap<String, Vec<u8>> = got;
    assert_eq!(
        want.keys().collect::<Vec<_>>(),
        got.keys().collect::<Vec<_>>(),
        "{name}: file sets"
    );
    for (path, bytes) in &want {
        assert_eq!(
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(&got[path]),
            "{name}: {path} differs"
        );
    }
}

fn check_in_place(name: &str, pipeline: &str, files: Files) {
    check_in_place_with(name, pipeline, files, &|_| {});
}

/// `-o stdout`: kpt's ResourceList equals ours.
fn check_stdout_with(name: &str, pipeline: &str, files: Files, setup: &dyn Fn(&Path)) {
    let theirs = |pkg: &Path, cwd: &Path| {
        kpt(
            &[
                "fn",
                "render",
                "--allow-exec",
                pkg.to_str().unwrap(),
                "-o",
                "stdout",
            ],
            cwd,
        )
    };
    let ours = |pkg: &Path| {
        let mut nodes = hydrate(pkg);
        adjust_rel_path(pkg, &mut nodes);
        ByteWriter::resource_list(None).write(&nodes).unwrap()
    };
    if let Some((want, got, _)) = differential(name, pipeline, files, setup, &theirs, &ours) {
        assert_eq!(
            String::from_utf8_lossy(&want),
            String::from_utf8_lossy(&got),
            "{name}"
        );
    }
}

fn check_stdout(name: &str, pipeline: &str, files: Files) {
    check_stdout_with(name, pipeline, files, &|_| {});
}

const IDENTITY: &str = "pipeline:\n  mutators:\n  - exec: cat\n";

const COMMENTS: Files = &[(
    "a.yaml",
    b"# head comment of doc 1\n\n# second head comment\napiVersion: v1 # line comment on apiVersion\nkind: ConfigMap\nmetadata:\n  name: a   # trailing with spaces\n  annotations: {}\n  labels: {}\ndata:\n  key1: value1\n\n  key2: value2 # after blank line\n  # comment before key3\n  key3: value3\n  folded: >\n    folded line\n    continues\n  strip: >-\n    abc\n    def\n  literal: |\n    l1\n    l2\n  list:\n    - a # item comment\n    # before b\n    - b\n# foot comment of doc 1\n",
)];

const ANNOTATIONS: Files = &[
    (
        "a.yaml",
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    foo: bar\n    config.kubernetes.io/path: zz.yaml # dropped\n    # head of index\n    config.kubernetes.io/index: \"7\"\n",
    ),
    ("b.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  annotations: {}\n"),
    ("c.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"),
    (
        "d.yaml",
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n  annotations:\n    internal.config.kubernetes.io/path: 'd.yaml'\n    keep.me/x: y\n",
    ),
];

const SEQUENCES: Files = &[(
    "s.yaml",
    b"apiVersion: v1\nkind: A\nmetadata:\n  name: wide\nl:\n  - a\n  - b\nm:\n- c\n---\napiVersion: v1\nkind: A\nmetadata:\n  name: compact\nl:\n- a\nn:\n    - x\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: mixed\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n        args:\n          - x\n        env:\n        - name: A # env comment\n          value: \"1\"\n",
)];

const MULTIDOC: Files = &[(
    "m.yaml",
    b"---\napiVersion: v1\nkind: A\nmetadata:\n  name: one\n---   # comment on separator\n# license header\n---\napiVersion: v1\nkind: A\nmetadata:\n  name: two\n---\n---\napiVersion: v1\nkind: A\nmetadata:\n    name: three\nspec:    {a: b, c: [1, 2, 3]}\n...\n",
)];

const CRLF: Files = &[(
    "w.yaml",
    b"apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: w\r\ndata:\r\n  k: |\r\n    line1\r\n    line2\r\n",
)];

const JSON: Files = &[
    (
        "j.json",
        b"{\"kind\":\"X\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"j\"},\"z\":\"<a&b> \\u2028 \\u00e9\",\"n\":1.5e300,\"i\":12,\"f\":0.000001,\"g\":1e-7,\"t\":2021-01-01,\"u\":\"2021-01-01\",\"b\":true,\"nil\":null,\"l\":[1,\"x\",{}],\"e\":{}}",
    ),
    ("pretty.json", b"{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Y\",\n  \"metadata\": {\"name\": \"p\", \"labels\": {\"b\": \"2\", \"a\": \"1\"}}\n}\n"),
];

const SCALARS: Files = &[(
    "q.yaml",
    b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: q\ndata:\n  s: 'single quoted'\n  d: \"double quoted\"\n  n: \"123\"\n  b: \"true\"\n  y: yes\n  o: on\n  oct: 0755\n  f: 1.0\n  nul: null\n  t: ~\n  e: \"\"\n  e2: ''\n  date: 2021-01-01\n  colon: \"a: b\"\n  hash: \"a #b\"\n  u: \"h\\u00e9llo \\u2603\"\n  nl: \"line1\\nline2\"\n  tag: !!str 123\n  custom: !mytag foo\n  hex: 0x1F\n",
)];

const ANCHORS: Files = &[(
    "an.yaml",
    b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: an\n  labels: &lbl\n    app: x\ndata:\n  base: &base\n    k: v\n  ref: *base\n  merged:\n    <<: *lbl\n    extra: y\n",
)];

const LAYOUT: Files = &[
    (
        ".hidden.yaml",
        b"apiVersion: v1\nkind: A\nmetadata:\n  name: hidden\n",
    ),
    (
        ".github/ci.yaml",
        b"apiVersion: v1\nkind: A\nmetadata:\n  name: ci\n",
    ),
    (
        ".git/g.yaml",
        b"apiVersion: v1\nkind: A\nmetadata:\n  name: g\n",
    ),
    (
        "dir/plain.yaml",
        b"apiVersion:    v1\nkind: A\nmetadata:\n    name: plain\n",
    ),
    ("x.YAML", b"not: read\n"),
    ("y.yml.bak", b"not: read\n"),
    ("empty.yaml", b""),
    ("comments-only.yaml", b"# just a comment\n"),
    (
        "ignored/i.yaml",
        b"apiVersion: v1\nkind: A\nmetadata:\n  name: i\n",
    ),
    (
        "deep/a/b.yaml",
        b"apiVersion: v1\nkind: A\nmetadata:\n  name: ab\n",
    ),
    (
        "keep.yml",
        b"apiVersion: v1\nkind: A\nmetadata:\n  name: keep\n",
    ),
    (
        "drop.yml",
        b"apiVersion: v1\nkind: A\nmetadata:\n  name: drop\n",
    ),
    (".krmignore", b"ignored/\na/b.yaml\n*.yml\n!keep.yml\n"),
];

const SUBPACKAGES: Files = &[
    (
        "res.yaml",
        b"apiVersion: v1\nkind: A\nmetadata:\n  name: root\n",
    ),
    (
        "sub/Kptfile",
        b"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n",
    ),
    (
        "sub/s.yaml",
        b"apiVersion: v1\nkind: A\nmetadata:\n  name: s # c\nl:\n  - x\n",
    ),
    (
        "dir/nested/Kptfile",
        b"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: nested\n",
    ),
    (
        "dir/nested/n.yaml",
        b"apiVersion: v1\nkind: A\nmetadata:\n  name: n\n",
    ),
];

#[test]
fn comments_in_place() {
    check_in_place("comments", "", COMMENTS);
}

#[test]
fn comments_through_identity_function() {
    check_in_place("comments", IDENTITY, COMMENTS);
    check_stdout("comments", IDENTITY, COMMENTS);
}

#[test]
fn annotations() {
    check_in_place("annotations", "", ANNOTATIONS);
    check_stdout("annotations", "", ANNOTATIONS);
    check_in_place("annotations", IDENTITY, ANNOTATIONS);
    check_stdout("annotations", IDENTITY, ANNOTATIONS);
}

#[test]
fn sequences() {
    check_in_place("sequences", "", SEQUENCES);
    check_stdout("sequences", "", SEQUENCES);
    check_in_place("sequences", IDENTITY, SEQUENCES);
}

#[test]
fn multiple_documents() {
    check_in_place("multidoc", "", MULTIDOC);
    check_stdout("multidoc", "", MULTIDOC);
    check_in_place("multidoc", IDENTITY, MULTIDOC);
}

#[test]
fn crlf() {
    check_in_place("crlf", "", CRLF);
    check_stdout("crlf", "", CRLF);
}

#[test]
fn json_files() {
    check_in_place("json", "", JSON);
    check_stdout("json", "", JSON);
    check_in_place("json", IDENTITY, JSON);
}

#[test]
fn scalars() {
    check_in_place("scalars", "", SCALARS);
    check_in_place("scalars", IDENTITY, SCALARS);
}

#[test]
fn anchors() {
    check_in_place("anchors", "", ANCHORS);
    check_in_place("anchors", IDENTITY, ANCHORS);
}

#[test]
fn hidden_files_globs_and_krmignore() {
    check_in_place("layout", "", LAYOUT);
    check_stdout("layout", "", LAYOUT);
}

#[test]
fn subpackages_in_hydration_order() {
    check_in_place("subpkgs", "", SUBPACKAGES);
    check_stdout("subpkgs", "", SUBPACKAGES);
    check_stdout("subpkgs", IDENTITY, SUBPACKAGES);
}

/// A Python function (PyYAML): reloads the ResourceList, so comments,
/// quoting and key order are lost, then applies `mode`; writes keys sorted.
const PY_FUNCTION: &str = r#"#!/usr/bin/env python3
import sys, yaml
mode = sys.argv[1]
rl = yaml.safe_load(sys.stdin)
items = rl['items']
if mode == 'edit':
    for r in items:
        md = r.setdefault('metadata', {})
        md.setdefault('labels', {})['added'] = 'yes'
        if r.get('kind') == 'Deployment':
            spec = r['spec']['template']['spec']
            cs = spec['containers']
            cs[0]['env'] = [e for e in cs[0].get('env', []) if e['name'] != 'B']
            cs.reverse()
            cs.append({'name': 'added', 'image': 'busybox'})
            spec['zzz'] = 'new field'
    items.append({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'gen', 'namespace': 'ns'}, 'data': {'k': 'v'}})
    items[:] = [r for r in items if r['metadata'].get('name') != 'deleted']
if mode == 'prepend':
    def prepend(lst, item):
        lst.insert(0, item)
    for r in items:
        md = r.get('metadata', {})
        if 'finalizers' in md:
            prepend(md['finalizers'], 'f0')
        spec = r.get('spec', {}).get('template', {}).get('spec')
        if r.get('kind') == 'Thing':
            prepend(r['spec']['items'], {'name': 'zero'})
        if not spec:
            continue
        for c in spec['containers']:
            prepend(c.setdefault('env', []), {'name': 'FIRST', 'value': 'x'})
            prepend(c.setdefault('ports', []), {'containerPort': 8080, 'protocol': 'UDP'})
        prepend(spec['containers'], {'name': 'sidecar', 'image': 'envoy'})
        prepend(spec['volumes'], {'name': 'new', 'emptyDir': {}})
yaml.safe_dump(rl, sys.stdout, sort_keys=True)
"#;

fn write_script(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("fn.py");
    fs::write(&p, PY_FUNCTION).unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
}

const DEPLOYMENT: Files = &[
    (
        "deploy.yaml",
        b"# Deployment head\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web # the name\n  labels:\n    app: web\nspec:\n  replicas: 3 # three\n  template:\n    spec:\n      # containers head\n      containers:\n      # first container\n      - name: a # container a\n        image: nginx:1.2 # pinned\n        env:\n        - name: A # env A\n          value: \"1\"\n        - name: B # env B\n          value: \"2\"\n        - name: C\n          value: >\n            folded\n            value\n        ports:\n        - containerPort: 80 # http\n          protocol: TCP\n        - containerPort: 443\n      # second container\n      - name: b # container b\n        image: redis # cache\n        args:\n        - --x # flag x\n        - --y\n      volumes:\n      - name: v # volume\n        emptyDir: {}\n",
    ),
    (
        "cm.yaml",
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm # cm name\n  finalizers:\n  - f1 # first\n  - f2\ndata:\n  z: last # z\n  a: first # a\n  list:\n  - x # x\n  - y\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deleted\n",
    ),
    ("crd.yaml", b"apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: t # thing\nspec:\n  items:\n  - name: one # one\n    v: 1\n  - name: two # two\n"),
];

#[test]
fn function_input_matches_kpt() {
    let pipeline = "pipeline:\n  mutators:\n  - exec: \"sh -c 'tee {TMP}/dump-1.yaml'\"\n";
    check_in_place("dump", pipeline, DEPLOYMENT);
    check_in_place("dump", pipeline, COMMENTS);
    check_in_place("dump", pipeline, ANNOTATIONS);
}

#[test]
fn comments_and_order_restored_after_python_roundtrip() {
    let pipeline = "pipeline:\n  mutators:\n  - exec: \"{TMP}/fn.py sort\"\n";
    check_in_place_with("py-sort", pipeline, DEPLOYMENT, &write_script);
    check_in_place_with("py-sort", pipeline, COMMENTS, &write_script);
    check_stdout_with("py-sort", pipeline, DEPLOYMENT, &write_script);
}

/// Items prepended to merge-keyed lists (containers by name, ports by
/// containerPort+protocol, env, volumes, finalizers) shift positions, so
/// only kyaml's associative walk finds the commented originals.
#[test]
fn merge_keyed_lists_after_prepending() {
    let pipeline = "pipeline:\n  mutators:\n  - exec: \"{TMP}/fn.py prepend\"\n";
    check_in_place_with("py-prepend", pipeline, DEPLOYMENT, &write_script);
}

#[test]
fn edits_new_fields_generated_and_deleted_resources() {
    let pipeline = "pipeline:\n  mutators:\n  - exec: \"{TMP}/fn.py edit\"\n";
    check_in_place_with("py-edit", pipeline, DEPLOYMENT, &write_script);
    check_stdout_with("py-edit", pipeline, DEPLOYMENT, &write_script);
}

/// kpt's `Error: <message> ` line (the message may span lines), or its
/// `error: failed to save resources: <message>` when writing failed.
fn kpt_error(args: &[&str], cwd: &Path) -> String {
    let out = Command::new("kpt")
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(!out.status.success(), "kpt {args:?} should fail");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    for marker in ["Error: ", "error: failed to save resources: "] {
        if let Some(start) = stderr.find(marker) {
            let msg = &stderr[start + marker.len()..];
            let msg = msg.strip_suffix(" \n").or_else(|| msg.strip_suffix('\n'));
            return msg.unwrap_or(&stderr[start + marker.len()..]).to_string();
        }
    }
    panic!("no error message in {stderr:?}");
}

fn check_read_error(name: &str, files: Files, setup: &dyn Fn(&Path)) {
    let theirs = |pkg: &Path, cwd: &Path| kpt_error(&["fn", "render", pkg.to_str().unwrap()], cwd);
    let ours = |pkg: &Path| {
        let abs = fs::canonicalize(pkg)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        LocalPackageReader::kpt(pkg, &abs)
            .read()
            .unwrap_err()
            .to_string()
    };
    if let Some((want, got, _)) = differential(name, "", files, setup, &theirs, &ours) {
        assert_eq!(want, got, "{name}");
    }
}

#[test]
fn reader_errors_match_kpt() {
    check_read_error("sep", &[("sep.yaml", b"a: 1\n--- x\nb: 2\n")], &|_| {});
    check_read_error("malformed", &[("m.yaml", b"a: [1\n")], &|_| {});
    check_read_error("scalar", &[("s.yaml", b"hello\n")], &|_| {});
    check_read_error(
        "meta-scalar",
        &[("s.yaml", b"apiVersion: v1\nkind: A\nmetadata: x\n")],
        &|_| {},
    );
    let link = |target: &'static str, name: &'static str| {
        move |tmp: &Path| {
            let pkg = fs::read_dir(tmp.join("pkg"))
                .unwrap()
                .next()
                .unwrap()
                .unwrap()
                .path();
            if target == "dir" {
                fs::create_dir_all(pkg.join("realdir")).unwrap();
                std::os::unix::fs::symlink(pkg.join("realdir"), pkg.join(name)).unwrap();
            } else {
                std::os::unix::fs::symlink(pkg.join(target), pkg.join(name)).unwrap();
            }
        }
    };
    check_read_error("broken-link", &[], &link("nowhere.yaml", "broken.yaml"));
    check_read_error("dir-link", &[], &link("dir", "dir.yaml"));
}

/// YAML in `.json` files is written as JSON through go-yaml's `Unmarshal`
/// and Go's `encoding/json`.
const JSON_FROM_YAML: Files = &[
    (
        "y.json",
        b"apiVersion: v1\nkind: A\nmetadata:\n  name: y\n  labels: &l {a: \"1\"}\nbase: &b\n  k: v\n  n: 2\nmerged:\n  <<: [*b, {k: w, z: 1}]\n  own: x\nalias: *b\nts: [2001-12-14t21:59:43.10+05:30, 2021-1-2, \"2021-01-01\", 2001-12-14 21:59:43.5]\nnums: [0x1F, 0o17, 1_000, 12345678901234567890, 1e3, -0.0, .5, 1.0e-7, 123456789.123456789]\ntagged: [!!float 1, !!str 2, !!int \"3\", !custom x, !!binary aGVsbG8=]\nnulls: [~, null, \"\"]\nbools: [true, yes, \"on\"]\nstr: \"tab\\tnl\\nquote\\\" <&> \\u2028\"\nempty: {}\nemptylist: []\nnested: {\"b\": {\"z\": 1, \"a\": [ {\"y\": 1, \"x\": 2} ]}}\n",
    ),
    ("two.json", b"{\"apiVersion\": \"v1\", \"kind\": \"T\", \"metadata\": {\"name\": \"t1\"}}\n---\n{\"apiVersion\": \"v1\", \"kind\": \"T\", \"metadata\": {\"name\": \"t2\"}}\n"),
];

#[test]
fn json_written_from_yaml() {
    check_in_place("json-yaml", "", JSON_FROM_YAML);
}

fn check_write_error(name: &str, files: Files) {
    let theirs = |pkg: &Path, cwd: &Path| kpt_error(&["fn", "render", pkg.to_str().unwrap()], cwd);
    let ours = |pkg: &Path| {
        let mut nodes = hydrate(pkg);
        adjust_rel_path(pkg, &mut nodes);
        let options = WriterOptions {
            package_path: pkg.to_string_lossy().into_owned(),
            clear_annotations: vec![PACKAGE_PATH_ANNOTATION.to_string()],
            ..WriterOptions::default()
        };
        pkgio::render_files(nodes.clone(), &options, None)
            .unwrap_err()
            .to_string()
    };
    if let Some((want, got, _)) = differential(name, "", files, &|_| {}, &theirs, &ours) {
        assert_eq!(want, got, "{name}");
    }
}

#[test]
fn json_errors_match_kpt() {
    check_write_error(
        "nan",
        &[(
            "n.json",
            b"apiVersion: v1\nkind: A\nmetadata:\n  name: e\nx: .nan\n",
        )],
    );
    check_write_error(
        "inf",
        &[(
            "n.json",
            b"apiVersion: v1\nkind: A\nmetadata:\n  name: e\nx: -.inf\n",
        )],
    );
    check_write_error(
        "intkeys",
        &[(
            "n.json",
            b"apiVersion: v1\nkind: A\nmetadata:\n  name: e\nx: {1: a}\n",
        )],
    );
    check_write_error(
        "dupkeys",
        &[(
            "n.json",
            b"apiVersion: v1\nkind: A\nmetadata:\n  name: e\nx: {a: 1, a: 2}\n",
        )],
    );
}
