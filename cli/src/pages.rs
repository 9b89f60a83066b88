//! Transparent huge pages, off for small jobs and on for renders.
//!
//! mimalloc asks for huge pages on every region it maps
//! (`madvise(MADV_HUGEPAGE)`). A render that runs pipelines allocates
//! hundreds of megabytes, and with 2 MiB pages the kernel takes one fault
//! per 2 MiB instead of 512 (an edit of the 341-package bench took ~40,000
//! faults, a third of its CPU time in the kernel). A no-op render or
//! `fn run` allocates a few megabytes sparsely, where whole 2 MiB pages only
//! cost time and memory. So the process starts with them off and a render
//! turns them on once it knows it will run pipelines.
//!
//! While a render runs, mimalloc also keeps the memory it frees instead of
//! returning it to the kernel a second later (its `purge_delay`): a render
//! frees and allocates lists as large as the tree at every level (the
//! function's ResourceList, its output, the step's record), and memory
//! handed back is zeroed again by the kernel when touched next. On the
//! 1,111-package bench a cold render took 168,000 page faults with the
//! default and 116,000 without purging, for 10 % more peak memory
//! (docs/performance.md, "Cold render"). Once the render is done the
//! default comes back, so a `watch` session idles at what it uses.

/// Turns huge pages off for this process (at start).
pub fn small() {
    set_disabled(true);
}

/// Turns them on: memory allocated from now on may be backed by huge pages
/// where the system allows them (`/sys/kernel/mm/transparent_hugepage`);
/// and freed memory is kept for reuse until [`render_done`].
pub fn large() {
    set_disabled(false);
    set_purge_delay(NEVER);
}

/// After a render: freed memory goes back to the kernel again.
pub fn render_done() {
    set_purge_delay(DEFAULT_PURGE_DELAY_MS);
}

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_t` (mimalloc.h;
/// libmimalloc-sys does not name it).
const MI_OPTION_PURGE_DELAY: libc::c_int = 15;
/// mimalloc v3's default purge delay, in milliseconds.
const DEFAULT_PURGE_DELAY_MS: libc::c_long = 1000;
/// A purge delay of -1: never purge.
const NEVER: libc::c_long = -1;

extern "C" {
    fn mi_option_set(option: libc::c_int, value: libc::c_long);
    #[cfg(test)]
    fn mi_option_get(option: libc::c_int) -> libc::c_long;
}

fn set_purge_delay(ms: libc::c_long) {
    // SAFETY: mimalloc's option setter takes plain integers and is
    // thread-safe (options are atomics).
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, ms) }
}

#[cfg(test)]
fn purge_delay() -> libc::c_long {
    // SAFETY: as `set_purge_delay`.
    unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) }
}

fn set_disabled(disabled: bool) {
    // SAFETY: prctl(2) with integer arguments only. A kernel without
    // PR_SET_THP_DISABLE refuses it, which leaves the default.
    unsafe {
        libc::prctl(
            libc::PR_SET_THP_DISABLE,
            libc::c_ulong::from(disabled),
            0,
            0,
            0,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The option index is written out above: mimalloc's default and what
    // a render sets must read back through it, or the index names another
    // option.
    #[test]
    fn the_purge_delay_is_the_option_a_render_sets() {
        assert_eq!(purge_delay(), DEFAULT_PURGE_DELAY_MS);
        large();
        assert_eq!(purge_delay(), NEVER);
        render_done();
        assert_eq!(purge_delay(), DEFAULT_PURGE_DELAY_MS);
    }
}
