//! The step cache, asserted from the render's own event log (as salsa's
//! tests assert what re-ran): for each case in `testdata/stepcache/`, a
//! `script` of edits and renders, each render followed by the cache's log
//! lines it must produce — `ran <package>#<step> <function>: <why>`,
//! `replayed <package>#<step> <function>`, `replayed subtree <package>`.
//!
//! Every render renders a fresh copy of the case's tree (at a new path, so
//! replays show that keys do not depend on the location) with one store
//! shared by the whole script, and is compared with an uncached render of
//! another copy: files (or stdout), kpt's events (durations aside) and
//! `results.yaml` must be identical.
//!
//! Render options after `render`: `bfs`, `jobs=N`, `stdout`, `unwrap`,
//! `dir`. `edit <file>: <old> => <new>` replaces the one occurrence of
//! `<old>` in the tree's file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use krmgraph_cache::MemoryStore;
use krmgraph_fn::event::{Event, RecordingReporter};
use krmgraph_render::{render, Order, Output, RenderCache, RenderOptions};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/stepcache")
}

enum Command {
    Edit {
        file: String,
        old: String,
        new: String,
    },
    Render {
        line: String,
        expected: Vec<String>,
    },
}

fn parse_script(text: &str) -> Vec<Command> {
    let mut commands = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(edit) = line.strip_prefix("edit ") {
            let (file, change) = edit.split_once(": ").expect("edit <file>: <old> => <new>");
            let (old, new) = change
                .split_once(" => ")
                .expect("edit <file>: <old> => <new>");
            commands.push(Command::Edit {
                file: file.into(),
                old: old.into(),
                new: new.into(),
            });
        } else if line.starts_with("render") {
            commands.push(Command::Render {
                line: line.into(),
                expected: Vec::new(),
            });
        } else {
            match commands.last_mut() {
                Some(Command::Render { expected, .. }) => expected.push(line.into()),
                _ => panic!("a log line before any render: {line}"),
            }
        }
    }
    commands
}

/// What a render left: the tree (or stdout), kpt's events, results.yaml.
#[derive(Debug, PartialEq)]
struct Rendered {
    files: BTreeMap<String, Vec<u8>>,
    stdout: Vec<u8>,
    events: Vec<Event>,
    results: Vec<u8>,
}

struct Case {
    tmp: tempfile::TempDir,
    source: PathBuf,
    store: Arc<MemoryStore>,
    renders: usize,
}

impl Case {
    fn new(case: &Path) -> Case {
        let tmp = tempfile::tempdir().unwrap();
        let source = tmp.path().join("source").join("pkg");
        copy_tree(&case.join("pkg"), &source);
        Case {
            tmp,
            source,
            store: Arc::new(MemoryStore::new()),
            renders: 0,
        }
    }

    fn edit(&self, file: &str, old: &str, new: &str) {
        let path = self.source.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches(old).count(), 1, "{file} holds {old:?} once");
        std::fs::write(&path, text.replace(old, new)).unwrap();
    }

    /// Renders a copy of the tree as `line` says, cached and uncached;
    /// returns the cached render's cache log.
    fn render(&mut self, line: &str) -> Vec<String> {
        self.renders += 1;
        let mut options = RenderOptions::default();
        for word in line.split_whitespace().skip(1) {
            match word {
                "bfs" => options.order = Some(Order::BreadthFirst),
                "stdout" => options.output = Output::Stdout,
                "unwrap" => options.output = Output::Unwrap,
                "dir" => options.output = Output::Dir(PathBuf::new()),
                jobs => {
                    options.jobs = jobs
                        .strip_prefix("jobs=")
                        .and_then(|n| n.parse().ok())
                        .unwrap_or_else(|| panic!("unknown render option {jobs}"))
                }
            }
        }
        let uncached = self.render_copy("uncached", &options);
        options.cache = Some(RenderCache {
            store: self.store.clone(),
            snapshot: None,
            verify: false,
            memos: Default::default(),
        });
        let (cached, log) = {
            let mut rendered = self.render_copy("cached", &options);
            let log = rendered.events.iter().filter_map(log_line).collect();
            rendered.events.retain(|e| !matches!(e, Event::Cache(_)));
            (rendered, log)
        };
        assert_eq!(
            cached, uncached,
            "{line}: cached and uncached renders differ"
        );
        log
    }

    fn render_copy(&self, label: &str, options: &RenderOptions) -> Rendered {
        let work = self.tmp.path().join(format!("{}-{label}", self.renders));
        let pkg = work.join("pkg");
        copy_tree(&self.source, &pkg);
        let mut options = options.clone();
        let results = work.join("results");
        options.results_dir = Some(results.clone());
        let out_dir = work.join("out");
        if let Output::Dir(dir) = &mut options.output {
            *dir = out_dir.clone();
        }
        let mut reporter = RecordingReporter::default();
        let outcome = render(&pkg, &options, &mut reporter)
            .unwrap_or_else(|f| panic!("{label} render failed: {}", f.error));
        let tree = if out_dir.exists() { &out_dir } else { &pkg };
        Rendered {
            files: read_tree(tree),
            stdout: outcome.stdout,
            events: reporter.events.into_iter().map(without_duration).collect(),
            results: std::fs::read(results.join("results.yaml")).unwrap(),
        }
    }
}

fn log_line(event: &Event) -> Option<String> {
    match event {
        Event::Cache(event) => Some(event.to_string()),
        _ => None,
    }
}

fn without_duration(event: Event) -> Event {
    match event {
        Event::FunctionPassed {
            name,
            results,
            stderr,
            ..
        } => Event::FunctionPassed {
            name,
            duration: Duration::ZERO,
            results,
            stderr,
        },
        Event::FunctionFailed {
            name,
            results,
            exit,
            ..
        } => Event::FunctionFailed {
            name,
            duration: Duration::ZERO,
            results,
            exit,
        },
        other => other,
    }
}

pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

pub fn read_tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().to_string_lossy().into();
                files.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

#[test]
fn scripts_rerun_exactly_what_an_edit_reaches() {
    let mut failures = Vec::new();
    for entry in std::fs::read_dir(testdata()).unwrap() {
        let dir = entry.unwrap().path();
        let script = std::fs::read_to_string(dir.join("script")).unwrap();
        let mut case = Case::new(&dir);
        for command in parse_script(&script) {
            match command {
                Command::Edit { file, old, new } => case.edit(&file, &old, &new),
                Command::Render { line, expected } => {
                    let log = case.render(&line);
                    if log != expected {
                        failures.push(format!(
                            "{} render #{} ({line}):\n  expected:\n    {}\n  got:\n    {}",
                            dir.display(),
                            case.renders,
                            expected.join("\n    "),
                            log.join("\n    ")
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
