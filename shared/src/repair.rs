//! What `doctor` recognises in a damaged git directory without git's help: the text of a
//! `packed-refs` file (a header comment, then `<sha> <refname>` lines, each optionally
//! followed by a `^<sha>` peeled line), so a damaged line is named by its number instead of
//! surfacing as an undecodable reference.

/// A damaged `packed-refs` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    /// 1-based.
    pub number: usize,
    /// The line, cut to 80 characters.
    pub text: String,
}

fn sha(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Returns the lines of a `packed-refs` file that git cannot read.
pub fn packed_refs_problems(text: &str) -> Vec<BadLine> {
    let mut bad = Vec::new();
    let mut after_ref = false;
    for (i, line) in text.lines().enumerate() {
        let ok = if i == 0 && line.starts_with('#') {
            true
        } else if let Some(peeled) = line.strip_prefix('^') {
            after_ref && sha(peeled)
        } else {
            match line.split_once(' ') {
                Some((id, name)) => {
                    sha(id) && name.starts_with("refs/") && !name.contains(char::is_whitespace)
                }
                None => false,
            }
        };
        after_ref = ok && !line.starts_with('^') && !line.starts_with('#');
        if !ok {
            bad.push(BadLine {
                number: i + 1,
                text: line.chars().take(80).collect(),
            });
        }
    }
    bad
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "7844a7dbedb30d841a8e5b755d78319f54bc5163";

    #[test]
    fn a_well_formed_file_has_no_problems() {
        let text = format!(
            "# pack-refs with: peeled fully-peeled sorted \n{A} refs/heads/agent-coord\n{A} refs/tags/v1\n^{A}\n"
        );
        assert_eq!(packed_refs_problems(&text), vec![]);
        assert_eq!(packed_refs_problems(""), vec![]);
    }

    #[test]
    fn damaged_lines_are_named_by_number() {
        let text = format!(
            "# header\n{A} refs/heads/agent-coord\ngarbage line here\n^{A}\n{}",
            &A[..20]
        );
        let bad = packed_refs_problems(&text);
        let numbers: Vec<usize> = bad.iter().map(|b| b.number).collect();
        // The peeled line after a damaged one has nothing to peel.
        assert_eq!(numbers, vec![3, 4, 5]);
        assert_eq!(bad[0].text, "garbage line here");
        assert_eq!(packed_refs_problems(&format!("{A} heads/x\n")).len(), 1);
        assert_eq!(
            packed_refs_problems("# only a header at the top\n# not here\n").len(),
            1
        );
    }
}
