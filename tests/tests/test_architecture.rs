//! The architecture map (`docs/architecture.md`) against the source tree: every module it
//! lists exists, every top-level module of the places it maps is listed, and no two modules
//! of a crate import each other, directly or around a circle.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::path::PathBuf;

use agent_coord_tests::modgraph::Graph;

/// The folders whose every direct child (file or folder module) the map must list.
const MAPPED: &[&str] = &[
    "shared/src",
    "shared/src/dashboard",
    "shared/src/coordinator",
    "cli/src",
    "cli/src/serve",
    "cli/src/coordinator",
    "web/src",
    "tests/src",
];

/// The crates' source roots that must have no import circles.
const CRATES: &[&str] = &["shared/src", "cli/src", "web/src", "tests/src"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Every file and folder below `dir`, depth first.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path.clone());
            }
            all.push(path);
        }
    }
    all
}

/// Every path in backticks in the map that starts with one of the workspace's folders.
fn listed() -> BTreeSet<String> {
    let map = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    map.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| {
            ["shared/", "cli/", "web/", "tests/", "fuzz/"]
                .iter()
                .any(|top| span.starts_with(top))
        })
        .filter(|span| !span.contains('<'))
        .map(|span| span.trim_end_matches('/').to_owned())
        .collect()
}

#[test]
fn every_module_the_map_lists_exists() {
    let listed = listed();
    assert!(
        listed.len() > 40,
        "the map lists only {} paths",
        listed.len()
    );
    let missing: Vec<_> = listed
        .iter()
        .filter(|path| !root().join(path).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md lists modules that do not exist: {missing:?}"
    );
}

#[test]
fn every_top_level_module_is_on_the_map() {
    let listed = listed();
    let mut absent = Vec::new();
    for folder in MAPPED {
        for entry in fs::read_dir(root().join(folder)).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            let module = name.strip_suffix(".rs").unwrap_or(&name);
            if ["mod", "lib", "main", "tests"].contains(&module) || module.starts_with("tests_") {
                continue;
            }
            let path = format!("{folder}/{name}");
            let other_form = match name.strip_suffix(".rs") {
                Some(stem) => format!("{folder}/{stem}"),
                None => format!("{folder}/{name}.rs"),
            };
            if !listed.contains(&path) && !listed.contains(&other_form) {
                absent.push(path);
            }
        }
    }
    assert!(
        absent.is_empty(),
        "docs/architecture.md does not list: {absent:?}"
    );
}

#[test]
fn no_crate_has_an_import_circle() {
    let mut found = Vec::new();
    for src in CRATES {
        let graph = Graph::read(&root().join(src)).unwrap();
        for circle in graph.circles() {
            found.push(format!("{src}: {}", graph.describe(&circle)));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

/// One module-file style: a module with children is a folder with `mod.rs`, never a
/// `name.rs` beside a `name/` folder.
#[test]
fn modules_with_children_are_folders_with_mod_rs() {
    let mut found = Vec::new();
    for src in [
        "shared/src",
        "cli/src",
        "web/src",
        "tests/src",
        "tests/tests",
    ] {
        for path in tree(&root().join(src)) {
            if path.is_dir() && path.with_extension("rs").is_file() {
                found.push(path.with_extension("rs").display().to_string());
            }
        }
    }
    found.sort();
    assert!(
        found.is_empty(),
        "modules with children as name.rs beside name/ (move them to name/mod.rs):\n{}",
        found.join("\n")
    );
}

/// The import rule the house style names (stable rustfmt cannot apply it, so this test
/// does): one item per `use`, grouped std, then external crates, then the crate's own.
#[test]
fn imports_are_one_item_each_std_then_external_then_own() {
    let mut found = Vec::new();
    for src in CRATES.iter().chain(&["cli/src", "tests/tests"]) {
        for path in tree(&root().join(src)) {
            if path.extension().is_some_and(|e| e == "rs") {
                found.extend(import_faults(&path));
            }
        }
    }
    assert!(
        found.is_empty(),
        "imports out of order:\n{}",
        found.join("\n")
    );
}

/// Each fault of one file: a grouped `use` (`a::{b, c}`), or a `use` of a lower group after
/// a higher one in the same run of imports.
fn import_faults(path: &Path) -> Vec<String> {
    let text = fs::read_to_string(path).unwrap();
    let mut faults = Vec::new();
    let mut previous: Option<(usize, u8)> = None;
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let statement = ["pub(crate) use ", "pub(super) use ", "pub use ", "use "]
            .iter()
            .find_map(|p| trimmed.strip_prefix(p));
        let Some(statement) = statement else {
            if !trimmed.is_empty() {
                previous = None;
            }
            continue;
        };
        let place = format!("{}:{}: {trimmed}", path.display(), number + 1);
        if statement.contains('{') {
            faults.push(format!("{place} (one item per use)"));
        }
        let first = statement.split("::").next().unwrap_or_default();
        let group = match first {
            "std" | "core" | "alloc" => 0,
            "crate" | "self" | "super" => 2,
            _ => 1,
        };
        if let Some((at, last)) = previous {
            if at == indent && group < last {
                faults.push(format!(
                    "{place} (std, then external crates, then the crate's own)"
                ));
            }
        }
        previous = Some((indent, group));
    }
    faults
}
