//! Reading many objects on every core: the CLI's bulk snapshot reads and the server's cold
//! tree reads both inflate and parse thousands of records, which one thread does slowly.

use std::collections::BTreeMap;

/// Runs `work` for every chunk index `0..chunks` on one thread per core (at most 4), each
/// thread with its own thread-local view of `repo`, taking every n-th chunk; hands each
/// result to `take` in chunk order (one that finishes early waits until its predecessors
/// are taken). Stops at the first error `take` returns: the workers end at their next
/// chunk.
pub(crate) fn in_order<R: Send, E>(
    repo: &gix::Repository,
    chunks: usize,
    work: &(dyn Fn(&gix::Repository, usize) -> R + Sync),
    take: &mut dyn FnMut(R) -> Result<(), E>,
) -> Result<(), E> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    let shared = repo.clone().into_sync();
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, R)>(workers * 4);
        for w in 0..workers {
            let tx = tx.clone();
            let shared = &shared;
            scope.spawn(move || {
                let repo = shared.to_thread_local();
                for i in (w..chunks).step_by(workers) {
                    if tx.send((i, work(&repo, i))).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        let mut pending = BTreeMap::new();
        let mut next = 0;
        for (i, done) in rx {
            pending.insert(i, done);
            while let Some(done) = pending.remove(&next) {
                take(done)?;
                next += 1;
            }
        }
        Ok(())
    })
}
