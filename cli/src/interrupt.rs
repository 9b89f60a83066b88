//! Ctrl-C and SIGTERM during `render` and `fn eval`: exec functions run in
//! process groups of their own (so a timeout can kill what they started),
//! so the terminal's SIGINT reaches krmgraph only, and krmgraph kills them
//! before it dies of the signal, as it would without a handler (so a shell
//! loop around krmgraph stops too). Nothing more is written; a render
//! interrupted while it renames its files leaves some renamed, each whole,
//! and the temporary files of the rest, which the next render removes.

use signal_hook::consts::{SIGINT, SIGTERM};

/// Kills the running exec functions, then dies of the signal (a shell
/// reports 130 for SIGINT, 143 for SIGTERM). When the container engine is
/// connected, its own handler does that after removing the containers,
/// and this one stands aside.
pub fn kill_functions_on_signal() {
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        // Without a handler the signal ends krmgraph as it always did; only
        // the functions outlive it.
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            krmgraph_render::kill_running();
            if krmgraph_render::handles_interrupts() {
                return;
            }
            // Not `exit`: nothing is flushed (stdout may be a full pipe
            // whose lock the main thread holds), and the parent sees the
            // signal.
            let _ = signal_hook::low_level::emulate_default_handler(signal);
            // SAFETY: _exit(2) takes an integer and does not return.
            unsafe { libc::_exit(128 + signal) }
        }
    });
}
