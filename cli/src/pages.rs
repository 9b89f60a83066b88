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

/// Turns huge pages off for this process (at start).
pub fn small() {
    set_disabled(true);
}

/// Turns them on: memory allocated from now on may be backed by huge pages
/// where the system allows them (`/sys/kernel/mm/transparent_hugepage`).
pub fn large() {
    set_disabled(false);
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
