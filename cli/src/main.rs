//! `krmgraph`: render kpt package hierarchies, byte for byte as
//! `kpt fn render` does. This crate is the command line only: it parses
//! flags, calls the engine, and prints what kpt prints.

mod args;
mod cache;
mod diagnostic;
mod function;
mod pages;
mod render;
mod watch;

use std::process::ExitCode;

use clap::Parser;

// A render allocates and frees many small strings and nodes (every
// function boundary copies resources); mimalloc halves that cost against
// glibc's allocator (docs/performance.md). Transparent huge pages are
// off until a render has work to do (`pages`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    pages::small();
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
