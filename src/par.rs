//! A small work pool for batch commands (conformance, coverage): files of a folder, one
//! job per file, on a few threads.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The files of `dir` whose extension is `ext`, sorted by path.
pub fn files_with_extension(dir: &Path, ext: &str) -> std::io::Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    Ok(v)
}

/// Runs `f` on every item on `jobs` threads; `on_done(result, finished, total)` sees each
/// result as it finishes. Results come back in the order they finished.
pub fn map<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: impl Fn(&T) -> R + Sync,
    on_done: impl Fn(&R, usize, usize) + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results = Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                let k = done.fetch_add(1, Ordering::Relaxed) + 1;
                on_done(&r, k, items.len());
                results.lock().unwrap_or_else(|e| e.into_inner()).push(r);
            });
        }
    });
    results.into_inner().unwrap_or_else(|e| e.into_inner())
}
