//! `krmgraph`: render kpt package hierarchies, byte for byte as
//! `kpt fn render` does. This crate is the command line only: it parses
//! flags, calls the engine, and prints what kpt prints.

mod args;
mod diagnostic;
mod render;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    match cli.command {
        args::Command::Render(args) => render::run(args),
    }
}
