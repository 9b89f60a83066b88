//! Running the script: the Starlark dialect and globals the catalog
//! function gives it, and its errors in go.starlark.net's words where the
//! two interpreters can agree.
//!
//! The catalog runs go.starlark.net with `set`, recursion, global
//! reassignment and top-level `if`/`for` allowed; starlark-rust's extended
//! dialect allows the same, except `while` loops, which it does not have
//! and [`while_loops`] rewrites.
//! Globals: the standard library, `set`, `struct`, `print` (to stderr,
//! one line per call) and `fail`, plus
//! `ctx = struct(resource_list, environment, open_api)`.
//!
//! - `ctx.resource_list` is the ResourceList as a dict: `apiVersion`,
//!   `kind`, `items`, `functionConfig`. Scripts edit `items` in place or
//!   assign a new list; the items are read back after the run.
//! - `ctx.environment` is empty: a built-in has no container environment,
//!   and reading the host's would make the output depend on it.
//! - `ctx.open_api` is an empty dict (the schema is not loaded).
//!
//! Errors are worded by [`super::errors`]; `fail(...)` is Go's
//! `fail: <args joined by sep>`.

use std::cell::RefCell;
use std::sync::OnceLock;

use starlark::environment::{Globals, GlobalsBuilder, LibraryExtension, Module};
use starlark::eval::Evaluator;
use starlark::starlark_module;
use starlark::syntax::{AstModule, Dialect, DialectTypes};
use starlark::values::dict::{AllocDict, DictRef};
use starlark::values::list::AllocList;
use starlark::values::none::NoneType;
use starlark::values::structs::AllocStruct;
use starlark::values::tuple::UnpackTuple;
use starlark::values::{Heap, Value};

use super::config::Config;
use super::convert::ToStarlark;
use super::errors::go_message;
use super::marshal;
use super::while_loops;
use krmgraph_yaml::{Kind, Node};

/// What a run produced: the printed lines, and the new items or the error.
#[derive(Debug)]
pub struct Outcome {
    /// Everything `print` wrote, one line per call.
    pub stderr: String,
    /// The items after the script, or the error message.
    pub result: Result<Vec<Node>, String>,
}

/// `fail(...)`'s error, worded as go.starlark.net words it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct FailError(String);

/// Runs `config`'s script over `items` with `function_config` visible as
/// `ctx.resource_list["functionConfig"]`.
pub fn run(config: &Config, items: &[Node], function_config: Option<&Node>) -> Outcome {
    let printed = Printed::default();
    let result = evaluate(config, items, function_config, &printed);
    Outcome {
        stderr: printed.0.into_inner(),
        result,
    }
}

/// The dialect: go.starlark.net with the catalog's options, as far as
/// starlark-rust has them.
fn dialect() -> Dialect {
    Dialect {
        enable_top_level_stmt: true,
        enable_types: DialectTypes::Disable,
        ..Dialect::Standard
    }
}

/// The globals, built once: they are frozen and shared by every run.
fn globals() -> &'static Globals {
    static GLOBALS: OnceLock<Globals> = OnceLock::new();
    GLOBALS.get_or_init(|| {
        GlobalsBuilder::extended_by(&[
            LibraryExtension::SetType,
            LibraryExtension::StructType,
            LibraryExtension::Print,
        ])
        .with(go_builtins)
        .build()
    })
}

fn evaluate(
    config: &Config,
    items: &[Node],
    function_config: Option<&Node>,
    printed: &Printed,
) -> Result<Vec<Node>, String> {
    let source = while_loops::rewrite(&config.source);
    let ast = AstModule::parse(&config.name, source.text.clone(), &dialect())
        .map_err(|e| go_message(&config.name, &source, &e))?;
    let globals = globals();
    Module::with_temp_heap(|module| {
        let heap = module.heap();
        let resource_list = resource_list(heap, items, function_config)?;
        let empty = || heap.alloc(AllocDict(Vec::<(Value, Value)>::new()));
        let ctx = heap.alloc(AllocStruct([
            ("resource_list", resource_list),
            ("environment", empty()),
            ("open_api", empty()),
        ]));
        module.set("ctx", ctx);
        let mut eval = Evaluator::new(&module);
        eval.set_print_handler(printed);
        // The collector moves values between top-level statements (once the
        // heap passes 100 KB), which would leave `resource_list` pointing
        // at freed memory; a script may also rebind `ctx`, so the module
        // cannot give it back either. The heap is dropped after the run.
        eval.disable_gc();
        eval.eval_module(ast, globals)
            .map_err(|e| go_message(&config.name, &source, &e))?;
        read_items(resource_list)
    })
}

/// `ctx.resource_list`: the ResourceList the filter hands the script.
/// The error when aliases in them expand too far, as go-yaml's.
fn resource_list<'v>(
    heap: Heap<'v>,
    items: &[Node],
    function_config: Option<&Node>,
) -> Result<Value<'v>, String> {
    let mut to = ToStarlark::new(heap);
    let items = items.iter().map(|n| to.value(n));
    let items = items.collect::<Result<Vec<Value>, _>>()?;
    let mut pairs: Vec<(Value, Value)> = vec![
        (
            heap.alloc("apiVersion"),
            heap.alloc("config.kubernetes.io/v1"),
        ),
        (heap.alloc("kind"), heap.alloc("ResourceList")),
        (heap.alloc("items"), heap.alloc(AllocList(items))),
    ];
    if let Some(fc) = function_config {
        pairs.push((heap.alloc("functionConfig"), to.value(fc)?));
    }
    Ok(heap.alloc(AllocDict(pairs)))
}

/// The items after the run. Go marshals the value and kyaml takes the
/// elements of `items`: a list or tuple gives its elements; anything else
/// (missing, `None`, a scalar) gives no items.
fn read_items(resource_list: Value) -> Result<Vec<Node>, String> {
    let items = DictRef::from_value(resource_list).and_then(|d| d.get_str("items"));
    let Some(items) = items else {
        return Ok(Vec::new());
    };
    let node = marshal::to_node(items).map_err(|e| e.to_string())?;
    Ok(match node.kind {
        Kind::Sequence => node.content,
        _ => Vec::new(),
    })
}

/// Collects `print` output.
#[derive(Default)]
struct Printed(RefCell<String>);

impl starlark::PrintHandler for Printed {
    fn println(&self, text: &str) -> starlark::Result<()> {
        let mut out = self.0.borrow_mut();
        out.push_str(text);
        out.push('\n');
        Ok(())
    }
}

/// Builtins whose behaviour or wording differs between the interpreters.
#[starlark_module]
fn go_builtins(builder: &mut GlobalsBuilder) {
    /// go.starlark.net's `fail(*args, sep=" ")`: the error is
    /// `fail: ` followed by the arguments (strings as they are, other
    /// values as their repr).
    fn fail<'v>(
        #[starlark(args)] args: UnpackTuple<Value<'v>>,
        #[starlark(require = named, default = " ")] sep: &str,
    ) -> starlark::Result<NoneType> {
        let parts: Vec<String> = args
            .items
            .iter()
            .map(|v| match v.unpack_str() {
                Some(s) => s.to_string(),
                None => v.to_repr(),
            })
            .collect();
        Err(starlark::Error::new_native(FailError(format!(
            "fail: {}",
            parts.join(sep)
        ))))
    }
}
