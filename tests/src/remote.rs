//! A fleet for sync tests: one bare remote and several clones (machines), each a
//! [`TestEnv`] with its own machine id, all initialised against the remote.

use std::path::PathBuf;

use crate::env::git;
use crate::env::TestEnv;

/// A bare remote and the machines that share it.
pub struct Fleet {
    _root: tempfile::TempDir,
    /// The bare remote repository.
    pub remote: PathBuf,
    /// The machines, `box-0`, `box-1`, …
    pub machines: Vec<TestEnv>,
}

impl Fleet {
    /// Creates a remote and `n` machines, each initialised with `init --remote`.
    pub fn new(n: usize) -> Self {
        let root = tempfile::tempdir().expect("temp dir");
        let out = git(root.path(), &["init", "--quiet", "--bare", "remote.git"]);
        assert!(out.status.success(), "git init failed");
        let remote = root.path().join("remote.git");
        let machines: Vec<TestEnv> = (0..n)
            .map(|i| {
                let env = TestEnv::new();
                env.set_machine(Some(&format!("box-{i}")));
                env.run(["init", "--remote", remote.to_str().expect("utf-8 path")])
                    .success();
                env
            })
            .collect();
        Fleet {
            _root: root,
            remote,
            machines,
        }
    }

    /// Returns a ref's value on the remote.
    pub fn remote_tip(&self, name: &str) -> Option<String> {
        let out = git(
            &self.remote,
            &[
                "--git-dir",
                self.remote.to_str().expect("utf-8"),
                "rev-parse",
                "--verify",
                "--quiet",
                name,
            ],
        );
        let s = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        (!s.is_empty()).then_some(s)
    }
}
