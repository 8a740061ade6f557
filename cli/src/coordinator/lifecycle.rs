//! Ended tasks' files on this machine: what they take on disk, and their removal once
//! `coordinator::lifecycle` says they expired — the worktree and the control folder after
//! `worktree_ttl`, keeping the lane transcripts until `transcript_ttl`. Only folders named
//! for the task directly under the worker's workspace root and control directory are
//! touched, and symbolic links are removed, never followed.

use std::path::Path;

use agent_coord_shared::coordinator::lifecycle;
use agent_coord_shared::coordinator::task::Task;
use agent_coord_shared::serde_name::WireName;

use super::engine::Engine;
use super::preflight::control_dir;

/// The suffix of a lane transcript in a task's control folder.
const TRANSCRIPT_SUFFIX: &str = ".transcript.jsonl";

/// The bytes of the regular files under `path` (0 when it is absent; links not followed).
pub(crate) fn bytes_under(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if meta.file_type().is_symlink() {
        return 0;
    }
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| bytes_under(&e.path()))
                .sum()
        })
        .unwrap_or(0)
}

/// Removes what expired of the worker's ended tasks on this machine; one observation per
/// task that lost files.
pub(super) fn expire(engine: &mut Engine<'_>, tasks: &[Task]) {
    let worker = engine.setup.worker;
    let now = engine.ledger.now_time();
    for task in tasks {
        let e = lifecycle::expiry(task, now, worker.worktree_ttl, worker.transcript_ttl);
        if !e.worktree {
            continue;
        }
        let worktree = Path::new(&worker.workspace_root).join(&task.task_id);
        let control = control_dir(worker).join(&task.task_id);
        let mut freed = 0;
        let mut gone = Vec::new();
        if std::fs::symlink_metadata(&worktree).is_ok() {
            freed += bytes_under(&worktree);
            match remove(&worktree) {
                Ok(()) => gone.push("worktree"),
                Err(err) => engine.error(
                    Some(&task.task_id),
                    format!(
                        "cannot remove the expired worktree {}: {err}",
                        worktree.display()
                    ),
                ),
            }
        }
        match clear_control(&control, e.transcripts) {
            Ok((bytes, what)) if bytes > 0 || what.is_some() => {
                freed += bytes;
                gone.extend(what);
            }
            Ok(_) => {}
            Err(err) => engine.error(
                Some(&task.task_id),
                format!(
                    "cannot clear the control folder {}: {err}",
                    control.display()
                ),
            ),
        }
        if !gone.is_empty() {
            engine.observe(
                Some(&task.task_id),
                format!(
                    "removed the {} of this {} task ({} bytes; it ended {})",
                    gone.join(" and "),
                    task.state.wire_name(),
                    freed,
                    task.updated_at
                ),
            );
        }
    }
}

/// Removes a folder (or a link or file where it was): never follows a link.
fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Clears a task's control folder: everything but transcripts, or all of it. Returns the
/// bytes freed and what it says was removed.
fn clear_control(
    control: &Path,
    transcripts: bool,
) -> std::io::Result<(u64, Option<&'static str>)> {
    let meta = match std::fs::symlink_metadata(control) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, None)),
        Err(e) => return Err(e),
    };
    if transcripts || !meta.is_dir() {
        let bytes = bytes_under(control);
        remove(control)?;
        return Ok((bytes, Some("control folder with its transcripts")));
    }
    let mut freed = 0;
    for entry in std::fs::read_dir(control)? {
        let entry = entry?;
        let keep = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.ends_with(TRANSCRIPT_SUFFIX));
        if keep {
            continue;
        }
        freed += bytes_under(&entry.path());
        remove(&entry.path())?;
    }
    Ok((freed, (freed > 0).then_some("control files")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clearing_a_control_folder_keeps_transcripts_until_they_expire() {
        let dir = tempfile::tempdir().expect("tempdir");
        let control = dir.path().join("acme.widget.7");
        std::fs::create_dir_all(control.join("sub")).expect("mkdir");
        std::fs::write(control.join("prompt.txt"), b"12345").expect("write");
        std::fs::write(control.join("sub/diff"), b"123").expect("write");
        std::fs::write(
            control.join("run1-implement-1-grok.transcript.jsonl"),
            b"{}\n",
        )
        .expect("write");
        assert_eq!(bytes_under(&control), 11);
        assert_eq!(
            clear_control(&control, false).expect("clear"),
            (8, Some("control files"))
        );
        assert!(control
            .join("run1-implement-1-grok.transcript.jsonl")
            .exists());
        assert_eq!(bytes_under(&control), 3);
        assert_eq!(clear_control(&control, false).expect("again"), (0, None));
        assert_eq!(
            clear_control(&control, true).expect("all"),
            (3, Some("control folder with its transcripts"))
        );
        assert!(!control.exists());
        assert_eq!(clear_control(&control, true).expect("absent"), (0, None));
    }

    #[test]
    fn removing_a_link_never_touches_what_it_points_to() {
        let dir = tempfile::tempdir().expect("tempdir");
        let precious = dir.path().join("precious");
        std::fs::create_dir_all(&precious).expect("mkdir");
        std::fs::write(precious.join("keep"), b"x").expect("write");
        let link = dir.path().join("acme.widget.7");
        std::os::unix::fs::symlink(&precious, &link).expect("link");
        assert_eq!(bytes_under(&link), 0, "a link is not followed");
        remove(&link).expect("remove");
        assert!(!link.exists() && precious.join("keep").exists());
    }
}
