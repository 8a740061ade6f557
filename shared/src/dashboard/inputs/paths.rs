//! Which record paths make up one batch's or one work item's history on the state branch
//! (the commits that changed them are the dashboard's time slider stops).

use crate::coordinator::task::TASKS_DIR;
use crate::dashboard::inputs::annotations::ANNOTATIONS_DIR;
use crate::ids::is_repo_part;
use crate::ids::is_segment;

/// The record paths a batch's history is made of: its manifest and its events' folder.
/// `None` for an id no record path can hold.
pub fn batch_paths(id: &str) -> Option<Vec<String>> {
    is_segment(id).then(|| vec![format!("batches/{id}.json"), format!("events/{id}")])
}

/// The record paths an item's history is made of: its claim, its operator annotation and
/// (an issue) its coordinator task. `None` for a repository or target no path can hold.
pub fn item_paths(repo: &str, target: &str) -> Option<Vec<String>> {
    let (owner, name) = repo.split_once('/')?;
    if !(is_repo_part(owner) && is_repo_part(name) && is_segment(target)) {
        return None;
    }
    let mut paths = vec![
        format!("claims/{repo}/{target}.json"),
        format!("{ANNOTATIONS_DIR}/{repo}/{target}.json"),
    ];
    if target.bytes().all(|b| b.is_ascii_digit()) {
        paths.push(format!("{TASKS_DIR}/{repo}/{target}.json"));
    }
    Some(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_its_manifest_and_its_events() {
        assert_eq!(
            batch_paths("b1"),
            Some(vec!["batches/b1.json".to_owned(), "events/b1".to_owned()])
        );
        assert_eq!(batch_paths("../x"), None);
        assert_eq!(batch_paths(""), None);
    }

    #[test]
    fn an_item_is_its_claim_annotation_and_task() {
        let paths = item_paths("acme/app", "7").expect("valid");
        assert_eq!(
            paths,
            vec![
                "claims/acme/app/7.json",
                "annotations/acme/app/7.json",
                "coordinator/tasks/acme/app/7.json",
            ]
        );
        // A non-numeric target has no coordinator task.
        assert_eq!(item_paths("acme/app", "lane-a").map(|p| p.len()), Some(2));
        assert_eq!(item_paths("acme", "7"), None);
        assert_eq!(item_paths("acme/../x", "7"), None);
        assert_eq!(item_paths("acme/app", "7/../8"), None);
    }
}
