//! A child in its own process group, watched from a thread: waiting for it with a deadline,
//! and killing the whole group (at the deadline, and once the leader has ended) so that
//! nothing the child left behind keeps running or holds its pipes.

use std::process::Child;
use std::process::ExitStatus;
use std::sync::mpsc;
use std::time::Duration;
use std::time::Instant;

use nix::sys::signal::killpg;
use nix::sys::signal::Signal;
use nix::unistd::Pid;

/// How long to wait for a killed process to be reaped, and for its pipes to close, before
/// giving up on it (a process that left the group with `setsid` can hold a pipe open).
pub(crate) const GRACE: Duration = Duration::from_secs(2);

/// A started child, spawned with `process_group(0)` so that its pid is its group's id, and
/// waited for on its own thread.
pub(crate) struct Group {
    pgid: Pid,
    ended: mpsc::Receiver<std::io::Result<ExitStatus>>,
}

impl Group {
    /// Starts waiting for `child`, the leader of its own process group.
    pub(crate) fn watch(child: Child) -> Group {
        let pgid = Pid::from_raw(i32::try_from(child.id()).expect("a pid always fits in pid_t"));
        let (tx, ended) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(wait_then_kill_group(child, pgid));
        });
        Group { pgid, ended }
    }

    /// Waits for the leader to end until `deadline`. Past it the group is killed and `None`
    /// returned; an error is a failure to wait, not the child's own failure.
    pub(crate) fn wait_until(&self, deadline: Instant) -> std::io::Result<Option<ExitStatus>> {
        let ended = self.wait_for(deadline);
        if let Ok(None) = ended {
            self.kill_and_reap();
        }
        ended
    }

    /// Waits for the leader to end until `deadline`, leaving the group running past it
    /// (`None`).
    pub(crate) fn wait_for(&self, deadline: Instant) -> std::io::Result<Option<ExitStatus>> {
        match self
            .ended
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            Ok(ended) => ended.map(Some),
            Err(_) => Ok(None),
        }
    }

    /// Kills the group and gives the leader [`GRACE`] to be reaped; a process stuck in the
    /// kernel is left to its thread.
    pub(crate) fn kill_and_reap(&self) {
        self.kill();
        let _ = self.ended.recv_timeout(GRACE);
    }

    /// Sends SIGKILL to the whole group; a group that is already gone is fine.
    pub(crate) fn kill(&self) {
        kill_group(self.pgid);
    }
}

fn kill_group(pgid: Pid) {
    let _ = killpg(pgid, Signal::SIGKILL);
}

/// Waits for the child to end and kills the rest of its group. On Linux the group is killed
/// while the exited leader is still a zombie, so its pid (the group id) cannot have been reused.
#[cfg(target_os = "linux")]
fn wait_then_kill_group(mut child: Child, pgid: Pid) -> std::io::Result<ExitStatus> {
    use nix::sys::wait::waitid;
    use nix::sys::wait::Id;
    use nix::sys::wait::WaitPidFlag;
    // Any other error (there is none for our own child) falls through to `wait`, which reports it.
    while let Err(nix::errno::Errno::EINTR) =
        waitid(Id::Pid(pgid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT)
    {}
    kill_group(pgid);
    child.wait()
}

/// Waits for the child to end and kills the rest of its group.
#[cfg(not(target_os = "linux"))]
fn wait_then_kill_group(mut child: Child, pgid: Pid) -> std::io::Result<ExitStatus> {
    let status = child.wait();
    kill_group(pgid);
    status
}
