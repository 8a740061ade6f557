//! A remote that breaks during sync — never answers, resets the connection, or rejects the
//! push with a hook: sync exits 2 with the reason, the local state is intact, and the next
//! sync over a working remote converges the fleet.

use std::process::Command;
use std::time::Duration;

use agent_coord_tests::remote::Fleet;

/// A TCP server on 127.0.0.1 that plays a broken git daemon until dropped: `hang` accepts
/// and never answers; otherwise it reads the request and resets the connection.
struct BrokenRemote {
    url: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BrokenRemote {
    fn start(hang: bool) -> BrokenRemote {
        use std::io::Read as _;
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut held = Vec::new();
            while !flag.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) if hang => held.push(stream),
                    Ok((mut stream, _)) => {
                        let _ = stream.set_nonblocking(false);
                        let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
                        let mut buf = [0u8; 256];
                        let _ = stream.read(&mut buf);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        BrokenRemote {
            url: format!("git://127.0.0.1:{port}/remote.git"),
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for BrokenRemote {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Syncs machine `a` of `fleet` through `url` (then back through the real remote): the
/// failure is exit 2 with git's reason, the local state is intact, and the next sync over
/// the working remote converges.
fn sync_survives(fleet: &Fleet, url: &str, says: &str, timeout: &str) {
    let a = &fleet.machines[0];
    a.claim("a", "acme/app", "7")
        .arg("--no-sync")
        .run()
        .success();
    let local = a.state_tip();
    let real = fleet.remote.to_string_lossy().into_owned();
    assert!(a
        .git_output(&["remote", "set-url", "origin", url])
        .status
        .success());
    let out = a
        .command(["sync"])
        .env("AGENT_COORD_GIT_TIMEOUT_SECS", timeout)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(says), "{stderr}");
    assert_eq!(
        a.state_tip(),
        local,
        "the failed sync changed the local state"
    );
    assert!(a
        .git_output(&["remote", "set-url", "origin", &real])
        .status
        .success());
    a.sync().run().success();
    assert_eq!(fleet.remote_tip("refs/heads/agent-coord"), a.state_tip());
    let b = &fleet.machines[1];
    b.sync().run().success();
    assert_eq!(b.state_tip(), a.state_tip(), "the fleet did not converge");
}

#[test]
fn a_remote_that_never_answers_times_out_with_exit_2_and_the_next_sync_converges() {
    let fleet = Fleet::new(2);
    let server = BrokenRemote::start(true);
    sync_survives(&fleet, &server.url, "timed out", "2");
}

#[test]
fn a_remote_that_resets_the_connection_fails_the_sync_and_the_next_one_converges() {
    let fleet = Fleet::new(2);
    let server = BrokenRemote::start(false);
    sync_survives(&fleet, &server.url, "git ", "20");
}

#[test]
fn a_remote_hook_that_rejects_the_push_fails_the_sync_and_the_next_one_converges() {
    let fleet = Fleet::new(2);
    let hook = fleet.remote.join("hooks/pre-receive");
    std::fs::write(&hook, "#!/bin/sh\necho 'rejected by policy' >&2\nexit 1\n").unwrap();
    let chmod = Command::new("chmod").arg("+x").arg(&hook).output().unwrap();
    assert!(chmod.status.success());
    let a = &fleet.machines[0];
    a.claim("a", "acme/app", "7")
        .arg("--no-sync")
        .run()
        .success();
    let local = a.state_tip();
    let out = a.sync().run();
    assert_eq!(out.code, 2, "{out}");
    assert!(
        out.stderr.contains("rejected") || out.stderr.contains("pre-receive"),
        "{out}"
    );
    assert_eq!(a.state_tip(), local);
    std::fs::remove_file(&hook).unwrap();
    a.sync().run().success();
    assert_eq!(fleet.remote_tip("refs/heads/agent-coord"), a.state_tip());
}
