//! Running independent simulations on all cores with `std::thread::scope`, results in input order whatever the
//! thread timing, and a progress bar on stderr that only appears when stderr is a terminal.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Worker threads when `--jobs` is not given: one per core the OS lets us use.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A progress bar over `len` runs, hidden when stderr is not a TTY (CI logs and pipes stay clean).
pub fn progress(len: usize, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() || len < 2 {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40.cyan/blue} {pos}/{len} {msg} [{elapsed_precise}, eta {eta}]")
            .expect("progress template is valid")
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

/// Applies `f` to every item on up to `jobs` threads and returns the results in item order.
///
/// Items are handed out in index order from a shared counter, so a failure stops new items from starting while
/// every item before it is guaranteed to have run: the error returned (the lowest-index one) is the same
/// whatever the timing.
pub fn try_map<T, R, E>(
    items: &[T],
    jobs: usize,
    bar: &ProgressBar,
    f: impl Fn(&T) -> Result<R, E> + Sync,
) -> Result<Vec<R>, E>
where
    T: Sync,
    R: Send,
    E: Send,
{
    try_map_with(items, jobs, bar, || (), |_, item| f(item))
}

/// [`try_map`] with state each worker thread keeps between its items (`init` makes it): a thread takes items in
/// increasing index order, so state such as the scenario of the last combination run serves every later item that
/// shares it.
pub fn try_map_with<T, S, R, E>(
    items: &[T],
    jobs: usize,
    bar: &ProgressBar,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, &T) -> Result<R, E> + Sync,
) -> Result<Vec<R>, E>
where
    T: Sync,
    R: Send,
    E: Send,
{
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let workers = jobs.clamp(1, items.len().max(1));
    let mut slots: Vec<Option<Result<R, E>>> = (0..items.len()).map(|_| None).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut state = init();
                    let mut done = Vec::new();
                    while !failed.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        let r = f(&mut state, item);
                        if r.is_err() {
                            failed.store(true, Ordering::Relaxed);
                        }
                        done.push((i, r));
                        bar.inc(1);
                    }
                    done
                })
            })
            .collect();
        for h in handles {
            // A panicking simulation is a bug: surface its own message rather than a generic one.
            let done = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            for (i, r) in done {
                slots[i] = Some(r);
            }
        }
    });
    bar.finish_and_clear();
    let mut out = Vec::with_capacity(items.len());
    for slot in slots {
        match slot {
            Some(Ok(r)) => out.push(r),
            Some(Err(e)) => return Err(e),
            // Only items after a failure are skipped, and the failure is returned before reaching them.
            None => unreachable!("an item was skipped without an earlier failure"),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_input_order() {
        let items: Vec<u64> = (0..200).collect();
        for jobs in [1, 2, 7] {
            let out: Result<Vec<u64>, ()> = try_map(&items, jobs, &ProgressBar::hidden(), |&x| {
                // Uneven work so threads finish out of order.
                let spins = (x * 7919) % 1000;
                Ok((0..spins).fold(x, |a, b| a ^ b) ^ (0..spins).fold(0, |a, b| a ^ b))
            });
            assert_eq!(out.unwrap(), items);
        }
    }

    #[test]
    fn the_lowest_failing_item_is_reported() {
        let items: Vec<u64> = (0..100).collect();
        for jobs in [1, 3] {
            let out = try_map(&items, jobs, &ProgressBar::hidden(), |&x| if x % 10 == 7 { Err(x) } else { Ok(x) });
            assert_eq!(out, Err(7));
        }
        let none: Result<Vec<u64>, ()> = try_map(&[], 4, &ProgressBar::hidden(), |&x: &u64| Ok(x));
        assert_eq!(none, Ok(vec![]));
    }
}
