//! Tests against real git repositories, SSH signing keys and a recording HTTP remote.

use std::io::Read as _;
use std::io::Write as _;
use std::process::Command;

use super::*;

const TASK: &str = "acme-app-7";

/// Runs test-side git (fixtures only), isolated from the coordinator's own calls.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=develop",
        ])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "git {args:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A bare origin with one commit on `develop`, a bare publication and a seed clone.
struct Fx {
    tmp: tempfile::TempDir,
    origin: String,
    publication: String,
    base_sha: String,
    protected: Vec<String>,
}

impl Fx {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        git(root, &["init", "-q", "--bare", "origin.git"]);
        git(root, &["init", "-q", "--bare", "publication.git"]);
        git(root, &["init", "-q", "seed"]);
        let origin = root.join("origin.git").display().to_string();
        let seed = root.join("seed");
        std::fs::write(seed.join("README"), "hello\n").unwrap();
        git(&seed, &["add", "-A"]);
        git(&seed, &["commit", "-qm", "seed"]);
        git(&seed, &["push", "-q", &origin, "HEAD:refs/heads/develop"]);
        Fx {
            base_sha: git(&seed, &["rev-parse", "HEAD"]),
            publication: root.join("publication.git").display().to_string(),
            origin,
            protected: vec!["main".into(), "release".into()],
            tmp,
        }
    }

    fn root(&self) -> &Path {
        self.tmp.path()
    }

    fn plan<'a>(&'a self, dir: &'a Path, branch: &'a str) -> CheckoutPlan<'a> {
        CheckoutPlan {
            dir,
            task_id: TASK,
            origin_url: &self.origin,
            publication_url: &self.publication,
            base: "develop",
            branch,
            protected: &self.protected,
            user_name: "Coord Bot",
            user_email: "bot@example.com",
        }
    }

    /// Returns a signer whose key is listed in the allowed signers file, and one whose key
    /// is not.
    fn signers(&self) -> (Signer, Signer) {
        let root = self.root();
        let mut allowed = String::new();
        let mut signers = Vec::new();
        for name in ["listed", "unlisted"] {
            let key = root.join(name);
            let out = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
                .arg(&key)
                .output()
                .unwrap();
            assert!(out.status.success());
            if name == "listed" {
                let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
                allowed = format!("bot@example.com namespaces=\"git\" {public}");
            }
            signers.push(Signer {
                name: "Coord Bot".into(),
                email: "bot@example.com".into(),
                format: SignFormat::Ssh,
                key: key.display().to_string(),
                allowed_signers: Some(root.join("allowed_signers")),
            });
        }
        std::fs::write(root.join("allowed_signers"), allowed).unwrap();
        let unlisted = signers.pop().unwrap();
        (signers.pop().unwrap(), unlisted)
    }
}

#[test]
fn prepare_creates_a_marked_checkout_on_the_pinned_base() {
    let fx = Fx::new();
    let dir = fx.root().join("work").join(TASK);
    let got = prepare(&fx.plan(&dir, "coord/acme-app-7"), &GitAuth::default()).unwrap();
    assert_eq!(
        got,
        Prepared {
            base_sha: fx.base_sha.clone(),
            head: fx.base_sha.clone(),
            reused: false
        }
    );
    let marker = |name: &str| std::fs::read_to_string(dir.join(".git").join(name)).ok();
    assert_eq!(marker(TASK_MARKER).as_deref(), Some("acme-app-7\n"));
    assert_eq!(marker(BASE_MARKER), Some(format!("{}\n", fx.base_sha)));
    assert_eq!(marker(PARTIAL_MARKER), None);
    assert_eq!(
        git(&dir, &["symbolic-ref", "HEAD"]),
        "refs/heads/coord/acme-app-7"
    );
    assert_eq!(git(&dir, &["remote", "get-url", "origin"]), fx.origin);
    assert_eq!(
        git(&dir, &["remote", "get-url", "publication"]),
        fx.publication
    );
    assert_eq!(
        git(&dir, &["config", "--local", "user.email"]),
        "bot@example.com"
    );
    assert!(is_clean(&dir).unwrap());
    assert_eq!(head(&dir).unwrap(), fx.base_sha);

    // An existing empty directory is as good as a missing one.
    let empty = fx.root().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert!(
        !prepare(&fx.plan(&empty, "coord/x"), &GitAuth::default())
            .unwrap()
            .reused
    );
}

#[test]
fn prepare_reuses_its_own_checkout_and_keeps_the_pinned_base() {
    let fx = Fx::new();
    let dir = fx.root().join(TASK);
    prepare(&fx.plan(&dir, "coord/7"), &GitAuth::default()).unwrap();
    std::fs::write(dir.join("new.txt"), "x\n").unwrap();
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-qm", "local"]);
    // Origin's develop moves on; the task keeps the base it started from.
    let seed = fx.root().join("seed");
    git(&seed, &["commit", "-q", "--allow-empty", "-m", "later"]);
    git(
        &seed,
        &["push", "-q", &fx.origin, "HEAD:refs/heads/develop"],
    );
    let again = prepare(&fx.plan(&dir, "coord/7"), &GitAuth::default()).unwrap();
    assert!(again.reused);
    assert_eq!(again.base_sha, fx.base_sha);
    assert_eq!(again.head, git(&dir, &["rev-parse", "HEAD"]));
    assert_ne!(again.head, fx.base_sha);
}

#[test]
fn prepare_refuses_interrupted_and_foreign_directories_without_deleting() {
    let fx = Fx::new();
    let auth = GitAuth::default();
    let interrupted = fx.root().join("interrupted");
    std::fs::create_dir_all(interrupted.join(".git")).unwrap();
    std::fs::write(interrupted.join(".git").join(PARTIAL_MARKER), TASK).unwrap();
    let err = prepare(&fx.plan(&interrupted, "coord/7"), &auth).unwrap_err();
    assert!(matches!(err, GitError::Interrupted { .. }), "{err}");
    assert!(interrupted.join(".git").join(PARTIAL_MARKER).exists());

    let other_task = fx.root().join("other");
    std::fs::create_dir_all(other_task.join(".git")).unwrap();
    std::fs::write(other_task.join(".git").join(TASK_MARKER), "acme-app-8\n").unwrap();
    let stray = fx.root().join("stray");
    std::fs::create_dir(&stray).unwrap();
    std::fs::write(stray.join("notes.txt"), "mine").unwrap();
    let file = fx.root().join("file");
    std::fs::write(&file, "x").unwrap();
    for dir in [&other_task, &stray, &file] {
        let err = prepare(&fx.plan(dir, "coord/7"), &auth).unwrap_err();
        assert!(matches!(err, GitError::Foreign { .. }), "{err}");
    }
    assert_eq!(
        std::fs::read_to_string(stray.join("notes.txt")).unwrap(),
        "mine"
    );
    let message = GitError::Foreign {
        dir: stray,
        task_id: TASK.into(),
    }
    .to_string();
    assert!(message.contains("stray is not empty") && message.contains("move it away"));
}

#[test]
fn prepare_refuses_a_marked_checkout_that_drifted() {
    let fx = Fx::new();
    let dir = fx.root().join(TASK);
    prepare(&fx.plan(&dir, "coord/7"), &GitAuth::default()).unwrap();
    git(
        &dir,
        &[
            "remote",
            "set-url",
            "--push",
            "publication",
            "/elsewhere.git",
        ],
    );
    let err = prepare(&fx.plan(&dir, "coord/7"), &GitAuth::default()).unwrap_err();
    assert!(matches!(err, GitError::NotOurs { .. }), "{err}");
    git(&dir, &["config", "--unset", "remote.publication.pushurl"]);
    git(&dir, &["checkout", "-q", "-b", "elsewhere"]);
    let err = prepare(&fx.plan(&dir, "coord/7"), &GitAuth::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("branch coord/7 is not checked out"),
        "{err}"
    );
}

#[test]
fn base_and_protected_branches_are_refused() {
    let fx = Fx::new();
    let dir = fx.root().join(TASK);
    for branch in ["develop", "main", "refs/heads/release"] {
        let err = prepare(&fx.plan(&dir, branch), &GitAuth::default()).unwrap_err();
        assert!(matches!(err, GitError::Protected { .. }), "{err}");
        let err = push(&dir, branch, "develop", &fx.protected, &GitAuth::default());
        assert!(matches!(err, Err(GitError::Protected { .. })));
    }
    assert!(!dir.exists());
    let err = prepare(&fx.plan(&dir, "--force"), &GitAuth::default()).unwrap_err();
    assert!(matches!(err, GitError::Invalid { .. }), "{err}");
}

#[test]
fn commit_all_signs_and_verify_accepts_only_listed_keys() {
    let fx = Fx::new();
    let (listed, unlisted) = fx.signers();
    let dir = fx.root().join(TASK);
    prepare(&fx.plan(&dir, "coord/7"), &GitAuth::default()).unwrap();
    assert_eq!(commit_all(&dir, "nothing", &listed).unwrap(), None);

    std::fs::write(dir.join("new.txt"), "hello\n").unwrap();
    let sha = commit_all(&dir, "#7 add new.txt\n", &listed)
        .unwrap()
        .unwrap();
    assert!(is_clean(&dir).unwrap());
    assert_eq!(head(&dir).unwrap(), sha);
    assert_eq!(
        git(&dir, &["log", "-1", "--format=%an <%ae>|%cn|%B"]),
        "Coord Bot <bot@example.com>|Coord Bot|#7 add new.txt"
    );
    verify(&dir, &sha, &listed).unwrap();

    std::fs::write(dir.join("new.txt"), "rogue\n").unwrap();
    let rogue = commit_all(&dir, "rogue", &unlisted).unwrap().unwrap();
    let err = verify(&dir, &rogue, &listed).unwrap_err();
    assert!(matches!(err, GitError::Verify { .. }), "{err}");
    assert!(!err.to_string().contains(&listed.key), "{err}");

    std::fs::write(dir.join("new.txt"), "unsigned\n").unwrap();
    git(&dir, &["commit", "-qam", "unsigned"]);
    let unsigned = head(&dir).unwrap();
    assert!(matches!(
        verify(&dir, &unsigned, &listed),
        Err(GitError::Verify { .. })
    ));
    let no_list = Signer {
        allowed_signers: None,
        ..listed.clone()
    };
    assert!(matches!(
        verify(&dir, &sha, &no_list),
        Err(GitError::Verify { .. })
    ));
    assert!(matches!(
        verify(&dir, "HEAD", &listed),
        Err(GitError::Invalid { .. })
    ));
}

#[test]
fn push_fast_forwards_and_never_forces() {
    let fx = Fx::new();
    let (signer, _) = fx.signers();
    let auth = GitAuth::default();
    let dir = fx.root().join(TASK);
    prepare(&fx.plan(&dir, "coord/7"), &auth).unwrap();
    assert_eq!(
        remote_branch(&dir, "publication", "coord/7", &auth).unwrap(),
        None
    );
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    let first = commit_all(&dir, "a", &signer).unwrap().unwrap();
    push(&dir, "coord/7", "develop", &fx.protected, &auth).unwrap();
    let published = remote_branch(&dir, "publication", "coord/7", &auth).unwrap();
    assert_eq!(published.as_deref(), Some(first.as_str()));

    // Someone else moves the published branch; our next push is refused, not forced.
    let other = fx.root().join("other");
    git(
        fx.root(),
        &["clone", "-q", "-b", "coord/7", &fx.publication, "other"],
    );
    git(&other, &["commit", "-q", "--allow-empty", "-m", "theirs"]);
    git(&other, &["push", "-q", "origin", "coord/7"]);
    let theirs = git(&other, &["rev-parse", "HEAD"]);
    std::fs::write(dir.join("b.txt"), "b\n").unwrap();
    commit_all(&dir, "b", &signer).unwrap().unwrap();
    let err = push(&dir, "coord/7", "develop", &fx.protected, &auth).unwrap_err();
    assert!(matches!(err, GitError::Rejected { .. }), "{err}");
    let published = remote_branch(&dir, "publication", "coord/7", &auth).unwrap();
    assert_eq!(published, Some(theirs));
}

#[test]
fn adopt_rebuilds_a_checkout_at_the_pushed_head_and_refuses_a_branch_that_moved() {
    let fx = Fx::new();
    let (signer, _) = fx.signers();
    let auth = GitAuth::default();
    // The machine that died: a checkout with one pushed commit.
    let dead = fx.root().join("dead").join(TASK);
    prepare(&fx.plan(&dead, "coord/7"), &auth).unwrap();
    std::fs::write(dead.join("a.txt"), "a\n").unwrap();
    let head = commit_all(&dead, "a", &signer).unwrap().unwrap();
    push(&dead, "coord/7", "develop", &fx.protected, &auth).unwrap();

    // The machine taking over: the same branch at exactly that head, on the pinned base.
    let here = fx.root().join("here").join(TASK);
    let got = adopt(&fx.plan(&here, "coord/7"), &auth, &fx.base_sha, Some(&head)).unwrap();
    assert_eq!(
        got,
        Prepared {
            base_sha: fx.base_sha.clone(),
            head: head.clone(),
            reused: false
        }
    );
    assert_eq!(git(&here, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&here, &["symbolic-ref", "HEAD"]), "refs/heads/coord/7");
    assert!(is_clean(&here).unwrap());
    assert_eq!(
        std::fs::read_to_string(here.join(".git").join(BASE_MARKER)).unwrap(),
        format!("{}\n", fx.base_sha)
    );
    // Adopting again reuses it.
    let again = adopt(&fx.plan(&here, "coord/7"), &auth, &fx.base_sha, Some(&head)).unwrap();
    assert!(again.reused);

    // Without a pushed head: a fresh branch at the pinned base.
    let fresh = fx.root().join("fresh").join(TASK);
    let got = adopt(&fx.plan(&fresh, "coord/8"), &auth, &fx.base_sha, None).unwrap();
    assert_eq!(got.head, fx.base_sha);

    // The dead machine pushed once more before its checkpoint: refused, not guessed.
    std::fs::write(dead.join("b.txt"), "b\n").unwrap();
    commit_all(&dead, "b", &signer).unwrap().unwrap();
    push(&dead, "coord/7", "develop", &fx.protected, &auth).unwrap();
    let elsewhere = fx.root().join("elsewhere").join(TASK);
    let err = adopt(
        &fx.plan(&elsewhere, "coord/7"),
        &auth,
        &fx.base_sha,
        Some(&head),
    )
    .unwrap_err();
    assert!(
        matches!(&err, GitError::NotOurs { detail, .. } if detail.contains("pushed branch coord/7 is at")),
        "{err}"
    );
}

#[test]
fn token_travels_as_a_header_to_its_remote_only_and_never_in_errors() {
    let fx = Fx::new();
    let dir = fx.root().join(TASK);
    prepare(&fx.plan(&dir, "coord/7"), &GitAuth::default()).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/acme/app.git", listener.local_addr().unwrap());
    git(&dir, &["remote", "add", "fake", &url]);
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            request.extend_from_slice(&buf[..n]);
        }
        let reply = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        stream.write_all(reply).unwrap();
        String::from_utf8_lossy(&request).into_owned()
    });
    let auth = GitAuth {
        token: Some("ghs_abc123".into()),
    };
    let err = remote_branch(&dir, "fake", "coord/7", &auth).unwrap_err();
    let request = server.join().unwrap();
    let expected = "Authorization: Basic eC1hY2Nlc3MtdG9rZW46Z2hzX2FiYzEyMw==";
    assert!(request.lines().any(|l| l.trim() == expected), "{request}");
    assert!(matches!(err, GitError::Failed { .. }), "{err}");
    assert!(!err.to_string().contains("ghs_abc123"));
    assert!(!format!("{auth:?}").contains("ghs_abc123"));

    // git echoing the token or the header anywhere in its error text gets it redacted.
    let git = Git::network(&dir, &url, &auth);
    let echoed = "fatal: ghs_abc123 / eC1hY2Nlc3MtdG9rZW46Z2hzX2FiYzEyMw== refused";
    assert_eq!(git.redact(echoed), "fatal: [redacted] / [redacted] refused");
    let [(_, count), (_, key), (_, value)] = auth_env(&url, &basic_auth("ghs_abc123"));
    assert_eq!((count.as_str(), value.as_str()), ("1", expected));
    assert_eq!(key, format!("http.{url}.extraHeader"));
}

#[test]
fn helpers_on_samples() {
    assert_eq!(basic_auth(""), "eC1hY2Nlc3MtdG9rZW46");
    assert_eq!(
        basic_auth("ghs_abc123"),
        "eC1hY2Nlc3MtdG9rZW46Z2hzX2FiYzEyMw=="
    );
    for good in ["coord/acme-7", "feature.x", "a/b/c"] {
        assert!(check_ref("branch", good).is_ok(), "{good}");
    }
    for bad in [
        "", "-f", "a..b", "a b", "a/", "/a", "a.lock", ".a", "a@{1}", "a:b", "@",
    ] {
        assert!(check_ref("branch", bad).is_err(), "{bad:?}");
    }
    assert_eq!(
        subcommand(&["-c", "a=b", "verify-commit", "x"]),
        "verify-commit"
    );
    assert!(check_oid(&"a".repeat(40)).is_ok() && check_oid(&"A".repeat(40)).is_err());
}
