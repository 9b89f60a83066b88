//! `krmgraph`: render kpt package hierarchies, byte for byte as
//! `kpt fn render` does. This crate is the command line only: it parses
//! flags, calls the engine, and prints what kpt prints.

mod args;
mod cache;
mod diagnostic;
mod function;
mod render;
mod watch;

use std::process::ExitCode;

use clap::Parser;

// A render allocates and frees many small strings and nodes (every
// function boundary copies resources); mimalloc halves that cost against
// glibc's allocator (docs/performance.md). Its `no_thp` build turns
// transparent huge pages off for the process: with them, a render's peak
// memory was ~15 % higher (whole 2 MB pages for sparse heaps) at the same
// speed.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    match cli.command {
        args::Command::Render(args) => render::run(args),
        args::Command::Watch(args) => watch::run(args),
        args::Command::Fn(args::FnCommand::Run(args)) => function::run(args),
        args::Command::Fn(args::FnCommand::List) => function::list(),
        args::Command::Fn(args::FnCommand::Eval(args)) => render::eval(args),
        args::Command::Cache(args) => cache::command(args),
        args::Command::Graph(args) => cache::graph(args),
    }
}
