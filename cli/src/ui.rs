//! How krmgraph talks on stderr, from the global flags: how much of kpt's
//! log it prints (`-q`, `-v`, `watch`'s brief mode), and whether its own
//! lines are coloured (`--color`, `NO_COLOR`). kpt's lines themselves are
//! never changed: what is printed of them is byte for byte kpt's.

use std::io::IsTerminal;

use crate::args::ColorArg;

/// What a command prints, passed down from `main`.
#[derive(Clone, Debug)]
pub struct Ui {
    /// How much of kpt's log is printed.
    pub log: Log,
    /// Also print what the cache did for each step.
    pub verbose: bool,
    /// Colour krmgraph's own lines (on stderr).
    pub color: bool,
    /// Colour what krmgraph prints on stdout (`render --check --diff`).
    pub color_stdout: bool,
    /// Under `watch`: a file left alone is rendered by the next round.
    pub watching: bool,
}

/// How much of kpt's log is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Log {
    /// All of it (the default, and what pipes get).
    Full,
    /// A failing function's output and the error, warnings, and one
    /// summary line (`watch` on a terminal).
    Brief,
    /// Errors only (`-q`).
    Errors,
}

/// The styles of krmgraph's own lines.
#[derive(Clone, Copy, Debug)]
pub enum Paint {
    /// A summary of a success.
    Good,
    /// A warning.
    Warn,
    /// Secondary detail (timestamps, cache lines).
    Dim,
}

impl Ui {
    /// The settings for the global flags; `NO_COLOR` (set and not empty)
    /// turns `auto` colour off, as <https://no-color.org> asks.
    pub fn new(color: ColorArg, quiet: bool, verbose: bool) -> Ui {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let on = |terminal: bool| match color {
            ColorArg::Always => true,
            ColorArg::Never => false,
            ColorArg::Auto => !no_color && terminal,
        };
        Ui {
            log: if quiet { Log::Errors } else { Log::Full },
            verbose,
            color: on(std::io::stderr().is_terminal()),
            color_stdout: on(std::io::stdout().is_terminal()),
            watching: false,
        }
    }

    /// `text` in `paint`'s colour, when colour is on.
    pub fn paint(&self, paint: Paint, text: &str) -> String {
        if !self.color {
            return text.to_string();
        }
        let code = match paint {
            Paint::Good => "32",
            Paint::Warn => "33",
            Paint::Dim => "2",
        };
        format!("\x1b[{code}m{text}\x1b[0m")
    }

    /// Whether warnings are printed.
    pub fn warns(&self) -> bool {
        self.log != Log::Errors
    }

    /// Prints a krmgraph warning (`[WARN] krmgraph: ...`, kpt's form).
    pub fn warn(&self, message: &str) {
        if self.warns() {
            eprintln!(
                "{}",
                self.paint(Paint::Warn, &format!("[WARN] krmgraph: {message}"))
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_when_asked() {
        let mut ui = Ui::new(ColorArg::Never, false, false);
        assert_eq!(ui.paint(Paint::Warn, "x"), "x");
        ui.color = true;
        assert_eq!(ui.paint(Paint::Warn, "x"), "\x1b[33mx\x1b[0m");
        assert_eq!(Ui::new(ColorArg::Never, true, false).log, Log::Errors);
        assert!(!Ui::new(ColorArg::Never, true, false).warns());
    }
}
