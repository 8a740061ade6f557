//! The module graph of a crate's sources, read as text: which module names a path defined in
//! which other, and the import circles among them. `test_architecture` uses it to keep the
//! crates free of circles; it reads source files only, it never compiles them.
//!
//! A folder counts as one module to everything outside it: an edge from `a::x` to `b::y` is
//! an edge between the siblings `a` and `b`, and a module never forms a circle with its own
//! ancestors or descendants. Test code (`#[cfg(test)]` modules, inline or in their own files)
//! may import anything and is left out.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::Path;
use std::path::PathBuf;

/// A module's path inside its crate (`["dashboard", "derive"]`); the crate root is empty.
pub type ModPath = Vec<String>;

/// The sibling-level import graph of one crate.
#[derive(Debug, Default)]
pub struct Graph {
    /// Edges between sibling modules, each with one example of a path that makes it.
    pub edges: BTreeMap<ModPath, BTreeMap<ModPath, String>>,
}

impl Graph {
    /// Reads every `.rs` file under `src` (a crate's source root) and builds the graph.
    pub fn read(src: &Path) -> io::Result<Graph> {
        let files = module_files(src)?;
        let modules: BTreeSet<ModPath> = files.keys().cloned().collect();
        let mut graph = Graph::default();
        for (module, path) in &files {
            let text = production_code(&blank(&fs::read_to_string(path)?));
            for used in paths(&text) {
                let Some(target) = resolve(module, &used, &modules) else {
                    continue;
                };
                let common = module
                    .iter()
                    .zip(&target)
                    .take_while(|(a, b)| a == b)
                    .count();
                if common == module.len() || common == target.len() {
                    continue;
                }
                let from = module[..=common].to_vec();
                let to = target[..=common].to_vec();
                let example = format!("{}: {}", rel(src, path), used.join("::"));
                graph.edges.entry(to.clone()).or_default();
                graph
                    .edges
                    .entry(from)
                    .or_default()
                    .entry(to)
                    .or_insert(example);
            }
        }
        Ok(graph)
    }

    /// Returns the import circles: strongly connected components of more than one module.
    pub fn circles(&self) -> Vec<Vec<ModPath>> {
        let mut tarjan = Tarjan {
            graph: self,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            on_stack: BTreeSet::new(),
            next: 0,
            found: Vec::new(),
        };
        for node in self.edges.keys() {
            if !tarjan.index.contains_key(node) {
                tarjan.visit(node);
            }
        }
        tarjan.found.retain(|c| c.len() > 1);
        tarjan.found
    }

    /// Describes a circle: its modules and the edges between them, one per line.
    pub fn describe(&self, circle: &[ModPath]) -> String {
        let mut out = circle
            .iter()
            .map(|m| m.join("::"))
            .collect::<Vec<_>>()
            .join(", ");
        for from in circle {
            for (to, example) in &self.edges[from] {
                if circle.contains(to) {
                    out.push_str(&format!(
                        "\n    {} -> {}  ({example})",
                        from.join("::"),
                        to.join("::")
                    ));
                }
            }
        }
        out
    }
}

struct Tarjan<'g> {
    graph: &'g Graph,
    index: BTreeMap<&'g ModPath, usize>,
    low: BTreeMap<&'g ModPath, usize>,
    stack: Vec<&'g ModPath>,
    on_stack: BTreeSet<&'g ModPath>,
    next: usize,
    found: Vec<Vec<ModPath>>,
}

impl<'g> Tarjan<'g> {
    fn visit(&mut self, node: &'g ModPath) {
        self.index.insert(node, self.next);
        self.low.insert(node, self.next);
        self.next += 1;
        self.stack.push(node);
        self.on_stack.insert(node);
        for next in self.graph.edges[node].keys() {
            if !self.index.contains_key(next) {
                self.visit(next);
                let low = self.low[node].min(self.low[next]);
                self.low.insert(node, low);
            } else if self.on_stack.contains(next) {
                let low = self.low[node].min(self.index[next]);
                self.low.insert(node, low);
            }
        }
        if self.low[node] == self.index[node] {
            let mut component = Vec::new();
            while let Some(top) = self.stack.pop() {
                self.on_stack.remove(top);
                component.push(top.clone());
                if top == node {
                    break;
                }
            }
            component.sort();
            self.found.push(component);
        }
    }
}

fn rel(src: &Path, path: &Path) -> String {
    path.strip_prefix(src).unwrap_or(path).display().to_string()
}

/// Maps each non-test module of the crate to its file.
fn module_files(src: &Path) -> io::Result<BTreeMap<ModPath, PathBuf>> {
    let mut files = BTreeMap::new();
    let mut test_only = BTreeSet::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                if path != src.join("bin") {
                    pending.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let mut module: ModPath = path
                .strip_prefix(src)
                .unwrap_or(&path)
                .with_extension("")
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            let is_dir = matches!(
                module.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            );
            if is_dir {
                module.pop();
            }
            let parent = if is_dir {
                module.clone()
            } else {
                module[..module.len() - 1].to_vec()
            };
            for name in test_children(&blank(&fs::read_to_string(&path)?)) {
                let mut child = parent.clone();
                child.push(name);
                test_only.insert(child);
            }
            files.insert(module, path);
        }
    }
    files.retain(|module, _| {
        !test_only
            .iter()
            .any(|t| module.len() >= t.len() && module[..t.len()] == t[..])
    });
    Ok(files)
}

/// Replaces comments, string and character literals by spaces, keeping line breaks, so that
/// what remains is code.
pub fn blank(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let keep_lines = |slice: &[char], out: &mut String| {
        for &c in slice {
            out.push(if c == '\n' { '\n' } else { ' ' });
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let prev_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        let end = if c == '/' && next == Some('/') {
            (i..chars.len())
                .find(|&j| chars[j] == '\n')
                .unwrap_or(chars.len())
        } else if c == '/' && next == Some('*') {
            (i + 2..chars.len().saturating_sub(1))
                .find(|&j| chars[j] == '*' && chars[j + 1] == '/')
                .map_or(chars.len(), |j| j + 2)
        } else if (c == 'r' || (c == 'b' && next == Some('r'))) && !prev_ident {
            let start = if c == 'b' { i + 2 } else { i + 1 };
            let hashes = chars[start..].iter().take_while(|&&h| h == '#').count();
            if chars.get(start + hashes) == Some(&'"') {
                let close: Vec<char> = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                (start + hashes + 1..chars.len())
                    .find(|&j| chars[j..].starts_with(&close))
                    .map_or(chars.len(), |j| j + close.len())
            } else {
                i
            }
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            (j + 1).min(chars.len())
        } else if c == '\'' {
            char_literal_end(&chars, i).unwrap_or(i)
        } else {
            i
        };
        if end > i {
            keep_lines(&chars[i..end], &mut out);
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Returns where a character literal starting at `i` ends, or `None` for a lifetime.
fn char_literal_end(chars: &[char], i: usize) -> Option<usize> {
    match chars.get(i + 1)? {
        '\\' => (i + 2..chars.len().min(i + 12))
            .find(|&j| chars[j] == '\'')
            .map(|j| j + 1),
        _ if chars.get(i + 2) == Some(&'\'') => Some(i + 3),
        _ => None,
    }
}

/// The names of the child modules a (blanked) file declares under a test-only cfg.
fn test_children(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in code.match_indices("#[cfg(") {
        if let Some((name, tail)) = test_module_at(&code[at..]) {
            if tail.starts_with(';') {
                names.push(name);
            }
        }
    }
    names
}

/// Reads a `#[cfg(test)]` (or `#[cfg(any(test, …))]`) module at the start of `text`: its
/// name and the text after the name (`;…` for a file's declaration, `{…` for an inline one).
fn test_module_at(text: &str) -> Option<(String, &str)> {
    let attr = text.strip_prefix("#[cfg(")?;
    let close = attr.find(")]")?;
    let cond = attr[..close].replace(' ', "");
    if cond != "test" && !cond.starts_with("any(test") {
        return None;
    }
    let item = skip_attributes(&attr[close + 2..]);
    let item = ["pub(crate)", "pub(super)", "pub"]
        .iter()
        .find_map(|p| item.strip_prefix(p))
        .unwrap_or(item)
        .trim_start();
    let decl = item.strip_prefix("mod ")?.trim_start();
    let name: String = decl
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    Some((name.clone(), decl[name.len()..].trim_start()))
}

fn skip_attributes(mut text: &str) -> &str {
    loop {
        text = text.trim_start();
        match text.strip_prefix("#[") {
            Some(rest) => text = rest.find(']').map_or("", |end| &rest[end + 1..]),
            None => return text,
        }
    }
}

/// Cuts inline test modules out of a (blanked) file, so what remains is production code.
fn production_code(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(") {
        match test_module_at(&rest[at..]) {
            Some((_, tail)) if tail.starts_with('{') => {
                out.push_str(&rest[..at]);
                rest = &tail[matching_brace(tail).unwrap_or(tail.len())..];
            }
            _ => {
                out.push_str(&rest[..at + 6]);
                rest = &rest[at + 6..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn matching_brace(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[derive(Debug, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Other,
}

fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        out.push(match c {
            ':' if chars.get(i + 1) == Some(&':') => {
                i += 1;
                Token::PathSep
            }
            '{' => Token::Open,
            '}' => Token::Close,
            ',' => Token::Comma,
            _ => Token::Other,
        });
        i += 1;
    }
    out
}

/// Every path the code names (`a::b::c`), with `use` trees' braces expanded.
fn paths(code: &str) -> Vec<Vec<String>> {
    let tokens = tokens(code);
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let starts_path = matches!(&tokens[i], Token::Ident(_))
            && tokens.get(i + 1) == Some(&Token::PathSep)
            && (i == 0 || tokens[i - 1] != Token::PathSep);
        if starts_path {
            i = expand(&tokens, i, Vec::new(), &mut found);
        } else {
            i += 1;
        }
    }
    found
}

/// Reads one path (or use tree) starting at `i` under `prefix`; returns where it ended.
fn expand(
    tokens: &[Token],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        match tokens.get(i) {
            Some(Token::Ident(name)) => {
                prefix.push(name.clone());
                i += 1;
                if tokens.get(i) == Some(&Token::PathSep) {
                    i += 1;
                    continue;
                }
                out.push(prefix);
                return i;
            }
            Some(Token::Open) => {
                i += 1;
                while let Some(token) = tokens.get(i) {
                    match token {
                        Token::Close => return i + 1,
                        Token::Comma => i += 1,
                        Token::Ident(_) | Token::Open => i = expand(tokens, i, prefix.clone(), out),
                        _ => i += 1,
                    }
                }
                return i;
            }
            _ => {
                if !prefix.is_empty() {
                    out.push(prefix);
                }
                return i;
            }
        }
    }
}

/// The module a path names, from inside `module`: the longest prefix that is a module.
fn resolve(module: &ModPath, path: &[String], modules: &BTreeSet<ModPath>) -> Option<ModPath> {
    let (first, rest) = path.split_first()?;
    let (mut base, mut segments): (ModPath, &[String]) = match first.as_str() {
        "crate" => (Vec::new(), rest),
        "self" => (module.clone(), rest),
        "super" => {
            let mut base = module.clone();
            base.pop();
            let mut rest = rest;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            (base, rest)
        }
        _ => {
            let mut child = module.clone();
            child.push(first.clone());
            if !modules.contains(&child) || path.len() < 2 {
                return None;
            }
            (child, rest)
        }
    };
    while let Some((segment, rest)) = segments.split_first() {
        let mut next = base.clone();
        next.push(segment.clone());
        if !modules.contains(&next) {
            break;
        }
        base = next;
        segments = rest;
    }
    modules.contains(&base).then_some(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crate_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        dir
    }

    fn circles(files: &[(&str, &str)]) -> Vec<String> {
        let dir = crate_with(files);
        let graph = Graph::read(dir.path()).unwrap();
        graph
            .circles()
            .iter()
            .map(|c| c.iter().map(|m| m.join("::")).collect::<Vec<_>>().join(","))
            .collect()
    }

    #[test]
    fn siblings_that_use_each_other_are_a_circle() {
        let found = circles(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::b::Bee;\n"),
            ("b.rs", "use crate::a::{Ay, other::Thing};\n"),
        ]);
        assert_eq!(found, ["a,b"]);
    }

    #[test]
    fn a_one_way_dependency_is_no_circle() {
        let found = circles(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::b::Bee;\n"),
            ("b.rs", "pub struct Bee;\n"),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn edges_lift_to_the_siblings_under_the_common_ancestor() {
        let found = circles(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a/mod.rs", "mod deep;\n"),
            ("a/deep.rs", "fn f() { super::super::b::go(); }\n"),
            ("b/mod.rs", "mod leaf;\n"),
            ("b/leaf.rs", "use crate::a::deep::X;\n"),
        ]);
        assert_eq!(found, ["a,b"]);
    }

    #[test]
    fn a_parent_and_its_child_never_form_a_circle() {
        let found = circles(&[
            ("lib.rs", "mod a;\n"),
            (
                "a/mod.rs",
                "mod child;\npub use child::Thing;\npub struct Root;\n",
            ),
            ("a/child.rs", "use super::Root;\npub struct Thing;\n"),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn test_code_comments_and_strings_are_not_imports() {
        let found = circles(&[
            ("lib.rs", "mod a;\nmod b;\n#[cfg(test)]\nmod c;\n"),
            (
                "a.rs",
                "use crate::b::Bee;\n#[cfg(test)]\nmod tests {\n    use crate::c::X;\n}\n",
            ),
            (
                "b.rs",
                "// crate::a::x\nconst S: &str = \"crate::a::y\";\nconst R: &str = r#\"crate::a::z\"#;\n#[cfg(test)]\nmod tests { use crate::a::Ay; }\n",
            ),
            ("c.rs", "use crate::a::Ay;\nuse crate::b::Bee;\n"),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn lifetimes_are_not_character_literals() {
        assert_eq!(
            blank("fn f<'a>(x: &'a str) -> char { 'x' }"),
            "fn f<'a>(x: &'a str) -> char {     }"
        );
    }
}
