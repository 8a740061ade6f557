//! One thread derives every dashboard model.
//!
//! A derivation at scale 10 allocates tens of megabytes of short-lived records and frees
//! the previous model's. Run on whichever blocking-pool thread served the request, each
//! derivation filled the malloc arena of its thread, and glibc gives every thread its own
//! arena (up to eight per core): after 700 writes the server held 123 MiB for a live heap
//! of under 50 MiB. On one thread, every model comes from one arena, which reuses what the
//! last one freed (70 MiB after the same writes; `bench serve-memory`, issue 12).

use std::sync::mpsc;
use std::sync::Mutex;

use crate::serve::error::ApiError;
use crate::serve::error::ApiResult;

type Job = Box<dyn FnOnce() + Send>;

/// The derivation thread, started on first use.
#[derive(Default)]
pub(crate) struct Deriver {
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
}

impl Deriver {
    /// Runs `f` on the derivation thread and returns what it returned (the caller waits:
    /// call it from blocking code). A panic in `f` is an internal error for this call
    /// only: the thread goes on with the next job.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> ApiResult<T> + Send + 'static,
    ) -> ApiResult<T> {
        let (reply, answer) = mpsc::sync_channel(1);
        let job: Job = Box::new(move || {
            let _ = reply.send(f());
        });
        let sender = {
            let mut jobs = self
                .jobs
                .lock()
                .map_err(|_| ApiError::internal("model thread handle poisoned"))?;
            match jobs.as_ref() {
                Some(sender) => sender.clone(),
                None => jobs.insert(start()?).clone(),
            }
        };
        sender
            .send(job)
            .map_err(|_| ApiError::internal("the model thread has stopped"))?;
        answer
            .recv()
            .map_err(|_| ApiError::internal("deriving the model failed (see the server log)"))?
    }
}

/// Starts the thread: it runs each job in turn, a panicking one included.
fn start() -> ApiResult<mpsc::Sender<Job>> {
    let (sender, receiver) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("model".into())
        .spawn(move || {
            for job in receiver {
                // The job's reply channel is dropped by the panic: its caller is told.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            }
        })
        .map_err(|e| ApiError::internal(format!("cannot start the model thread: {e}")))?;
    Ok(sender)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_runs_on_one_thread_and_a_panic_costs_only_its_request() {
        let deriver = Deriver::default();
        let name = || Ok(std::thread::current().id());
        let first = deriver.run(name).expect("runs");
        assert_ne!(first, std::thread::current().id());
        assert_eq!(deriver.run(name).expect("runs"), first);
        let panicked = deriver.run::<()>(|| panic!("a bug in a derivation"));
        assert!(panicked.is_err());
        // The thread goes on.
        assert_eq!(deriver.run(name).expect("runs again"), first);
    }
}
