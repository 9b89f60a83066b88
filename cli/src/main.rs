//! `krmgraph`: render kpt package hierarchies, byte for byte as
//! `kpt fn render` does. This crate is the command line only: it parses
//! flags, calls the engine, and prints what kpt prints.

mod args;
mod cache;
mod catalog;
mod check;
mod crossplane;
mod diagnostic;
mod function;
mod interrupt;
mod pages;
mod remote;
mod render;
mod ui;
mod watch;

use std::io::Write;
use std::process::ExitCode;

// A render allocates and frees many small strings and nodes (every
// function boundary copies resources); mimalloc halves that cost against
// glibc's allocator (docs/performance.md). Transparent huge pages are
// off until a render has work to do (`pages`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    pages::small();
    let cli = args::parse();
    // Resource trees nest as deep as the YAML parser allows, and the work
    // on them recurses: every thread that does it gets a stack for that.
    krmgraph_util::par::init_global_pool();
    let mut cli = Some(cli);
    match krmgraph_util::par::with_stack(|| run(cli.take().expect("not run yet"))) {
        Some(code) => code,
        // No thread with that much address space (`ulimit -v`, strict
        // overcommit): the system's stack, deep trees or not.
        None => run(cli.take().expect("the thread did not start")),
    }
}

fn run(cli: args::Cli) -> ExitCode {
    let ui = ui::Ui::new(cli.color, cli.quiet, cli.verbose);
    match cli.command {
        args::Command::Render(args) => {
            interrupt::kill_functions_on_signal();
            exit_now(render::run(args, &ui))
        }
        args::Command::Watch(args) => watch::run(args, ui),
        args::Command::Fn(args::FnCommand::Run(args)) => function::run(args),
        args::Command::Fn(args::FnCommand::List) => function::list(),
        args::Command::Fn(args::FnCommand::Catalog(args)) => catalog::command(&args),
        args::Command::Fn(args::FnCommand::Eval(args)) => {
            interrupt::kill_functions_on_signal();
            exit_now(render::eval(args, &ui))
        }
        args::Command::Cache(args) => cache::command(args),
        args::Command::Graph(args) => cache::graph(args),
        args::Command::Crossplane(command) => crossplane::run(command, &ui),
        args::Command::Version => version(),
        args::Command::Completion { shell } => completion(shell),
    }
}

/// The kpt release whose output krmgraph matches byte for byte.
const KPT_VERSION: &str = "1.0.0-beta.56";

/// `krmgraph version`.
fn version() -> ExitCode {
    println!(
        "krmgraph {} (commit {})\nmatches kpt {KPT_VERSION}",
        env!("CARGO_PKG_VERSION"),
        env!("KRMGRAPH_COMMIT")
    );
    ExitCode::SUCCESS
}

/// `krmgraph completion SHELL`.
fn completion(shell: clap_complete::Shell) -> ExitCode {
    use clap::CommandFactory;
    let mut command = args::Cli::command();
    clap_complete::generate(shell, &mut command, "krmgraph", &mut std::io::stdout());
    ExitCode::SUCCESS
}

/// Ends the process with `code` once stdout and stderr are flushed,
/// without the exit handlers: mimalloc's would hand the render's memory
/// back to the kernel region by region (~150 `madvise` calls, ~8 ms after
/// an edit of the 341-package bench) just before the kernel frees it all.
/// Everything a render must finish (the store's flush, temporary files,
/// child processes) is done before its function returns.
fn exit_now(code: u8) -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: _exit(2) takes an integer and does not return.
    unsafe { libc::_exit(i32::from(code)) }
}
