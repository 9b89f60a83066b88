//! Item-by-item work on the render's thread pool with a loop's outcome:
//! each item's work is its own, results come back in item order, and the
//! error is the first in item order, the one a loop would have stopped at.
//! The passes a render makes over every resource of a step (bookkeeping,
//! checks, paths) go through here, so a big package's steps use every core.

use rayon::prelude::*;

/// The stack of every thread that walks resource trees. Trees nest as deep
/// as go-yaml parses (10,000 flow levels, inside up to 10,000 block
/// indents), and the walks, comparisons, copies and drops of the kyaml
/// layer recurse once per level, as Go's do (Go's stacks grow to 1 GiB).
/// The deepest frames measured take ~2 KB a level in a release build (a
/// built-in's walk of a 10,000-deep flow map needs 16–32 MiB), several
/// times that in a debug build. Only the pages a thread touches are
/// committed: a shallow tree costs what a default stack does.
pub const STACK_SIZE: usize = 256 << 20;

/// A pool of `threads` threads with [`STACK_SIZE`] stacks.
pub fn pool(threads: usize) -> Result<rayon::ThreadPool, rayon::ThreadPoolBuildError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(STACK_SIZE)
        .build()
}

/// Gives rayon's global pool (parallel work outside a render's own pool)
/// [`STACK_SIZE`] stacks. Call before any parallel work; a pool already
/// built is left as it is.
pub fn init_global_pool() {
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(STACK_SIZE)
        .build_global();
}

/// Runs `f` on a thread of its own with a [`STACK_SIZE`] stack (the main
/// thread's is the system's, often 8 MiB); `None` when no thread can be
/// started.
pub fn with_stack<T: Send>(f: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("krmgraph".into())
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, f)
            .ok()?;
        Some(
            thread
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p)),
        )
    })
}

/// Below this many items the work runs in a plain loop: handing items to
/// the pool costs more than the work.
const MIN_ITEMS: usize = 64;

/// `f` on every item (with its position), in parallel; the results in item
/// order, or the first error in item order. After an error, whether later
/// items' `f` ran is unspecified (a failed render discards them).
pub fn each_mut<N: Send, T: Send, E: Send>(
    items: &mut [N],
    f: impl Fn(usize, &mut N) -> Result<T, E> + Sync,
) -> Result<Vec<T>, E> {
    if items.len() < MIN_ITEMS {
        return items.iter_mut().enumerate().map(|(i, n)| f(i, n)).collect();
    }
    items
        .par_iter_mut()
        .enumerate()
        .map(|(i, n)| f(i, n))
        .collect::<Vec<_>>()
        .into_iter()
        .collect()
}

/// [`each_mut`] for work that only reads its item.
pub fn each<N: Sync, T: Send, E: Send>(
    items: &[N],
    f: impl Fn(&N) -> Result<T, E> + Sync,
) -> Result<Vec<T>, E> {
    if items.len() < MIN_ITEMS {
        return items.iter().map(f).collect();
    }
    items
        .par_iter()
        .map(&f)
        .collect::<Vec<_>>()
        .into_iter()
        .collect()
}

/// `f` on every item, in parallel, for work that cannot fail.
pub fn for_each_mut<N: Send>(items: &mut [N], f: impl Fn(&mut N) + Sync) {
    if items.len() < MIN_ITEMS {
        items.iter_mut().for_each(f);
    } else {
        items.par_iter_mut().for_each(&f);
    }
}

/// `items.iter().map(f)`, in parallel, results in item order, for work that
/// cannot fail.
pub fn map<N: Sync, T: Send>(items: &[N], f: impl Fn(&N) -> T + Sync) -> Vec<T> {
    if items.len() < MIN_ITEMS {
        items.iter().map(f).collect()
    } else {
        items.par_iter().map(&f).collect()
    }
}

/// The first item, in item order, for which `check` fails, with its error.
pub fn first_failure<N: Sync, E: Send>(
    items: &[N],
    check: impl Fn(&N) -> Result<(), E> + Sync,
) -> Result<(), E> {
    if items.len() < MIN_ITEMS {
        return items.iter().try_for_each(check);
    }
    match items.par_iter().find_map_first(|n| check(n).err()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Odd items fail; the error is the first odd one, on both sides of
    /// MIN_ITEMS.
    fn odd(n: &u32) -> Result<u32, u32> {
        if n % 2 == 1 {
            Err(*n)
        } else {
            Ok(n * 10)
        }
    }

    #[test]
    fn results_in_item_order() {
        for len in [3u32, 1000] {
            let items: Vec<u32> = (0..len).map(|i| i * 2).collect();
            let want: Vec<u32> = items.iter().map(|n| n * 10).collect();
            assert_eq!(each(&items, odd), Ok(want.clone()));
            let mut copy = items.clone();
            let positions = each_mut(&mut copy, |i, n| {
                *n += 1;
                Ok::<_, ()>(i)
            });
            assert_eq!(positions, Ok((0..len as usize).collect()));
            assert!(copy.iter().zip(&items).all(|(a, b)| *a == b + 1));
            assert_eq!(
                map(&items, |n| n + 3),
                items.iter().map(|n| n + 3).collect::<Vec<_>>()
            );
            for_each_mut(&mut copy, |n| *n *= 2);
            assert!(copy.iter().zip(&items).all(|(a, b)| *a == (b + 1) * 2));
        }
    }

    #[test]
    fn the_error_is_the_first_in_item_order() {
        for len in [10u32, 5000] {
            let mut items: Vec<u32> = (0..len).map(|i| i * 2).collect();
            items[len as usize / 2] = 7;
            items[len as usize - 1] = 3;
            assert_eq!(each(&items, odd), Err(7));
            assert_eq!(each_mut(&mut items, |_, n| odd(n)), Err(7));
            assert_eq!(first_failure(&items, |n| odd(n).map(|_| ())), Err(7));
        }
        assert_eq!(first_failure(&[2u32, 4], |n| odd(n).map(|_| ())), Ok(()));
    }
}
