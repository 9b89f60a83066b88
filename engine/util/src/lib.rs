//! What every layer of the engine shares and none owns: Go's string
//! formatting where kpt's output depends on it, per-resource passes on the
//! render's thread pool (with deep stacks), and atomic writes of a render's
//! files.
//!
//! - [`gostr`]: `%q` quoting and the text Go prints for an OS error.
//! - [`par`]: parallel passes with a loop's first error; the thread stacks.
//! - [`fsutil`]: atomic file writes and the all-or-nothing commit of a
//!   render's changes; temporary files of killed renders.
//! - [`testdata`]: the project's fixtures, for the engine crates' tests.

#![deny(missing_docs)]

pub mod fsutil;
pub mod gostr;
pub mod par;
pub mod testdata;
