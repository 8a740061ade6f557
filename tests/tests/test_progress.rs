//! Progress bars of the long commands: drawn on a terminal (a pseudo-terminal made by
//! util-linux's `script`), never when stderr is a pipe or with `--json`.

use std::path::Path;

use agent_coord_tests::env::binary;
use agent_coord_tests::env::CommandOutput;
use agent_coord_tests::env::TestEnv;
use agent_coord_tests::fleet;
use agent_coord_tests::remote::Fleet;

/// The generated fleet's clock (as `test_transfer` uses).
const NOW_UNIX: i64 = 1_781_352_000;

/// Asserts that `text` holds nothing a progress bar draws: no carriage return (a bar
/// redraws its line with one) and no terminal escape sequence.
#[track_caller]
fn no_progress_bytes(what: &str, text: &str) {
    assert!(
        !text.contains('\r'),
        "{what}: a carriage return in {text:?}"
    );
    assert!(
        !text.contains('\x1b'),
        "{what}: an escape sequence in {text:?}"
    );
}

/// Asserts that a command printed nothing on stderr, so nothing of a bar either.
#[track_caller]
fn quiet(what: &str, out: CommandOutput) -> CommandOutput {
    let out = out.success();
    no_progress_bytes(what, &out.stdout);
    assert_eq!(out.stderr, "", "{what} printed on stderr");
    out
}

/// Runs the binary with `args` on a pseudo-terminal (stdout and stderr both on it) and
/// returns everything it wrote there.
fn on_terminal(env: &TestEnv, args: &[&str]) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let line: Vec<String> = std::iter::once(binary().to_string_lossy().into_owned())
        .chain(args.iter().map(|a| (*a).to_owned()))
        .map(|a| quote(&a))
        .collect();
    let script = format!("script -qec {} /dev/null", quote(&line.join(" ")));
    // The scrubbed environment has no TERM, and indicatif draws nothing without one.
    let out = env
        .shell(&script)
        .env("TERM", "xterm")
        .output()
        .expect("script runs");
    assert!(out.status.success(), "{script} failed: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Reports whether util-linux's `script` is here to make a pseudo-terminal.
fn have_script() -> bool {
    std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn generated(env: &TestEnv) -> (std::path::PathBuf, usize) {
    let src = env.root().join("legacy");
    let counts = fleet::generate(&src, 1, NOW_UNIX);
    (src, counts.total())
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

#[test]
fn long_commands_print_no_progress_off_a_terminal() {
    let env = TestEnv::new();
    let (src, total) = generated(&env);
    let out = quiet("import", env.run(["import", "--from", path(&src)]));
    assert!(
        out.stdout
            .starts_with(&format!("imported {total} records (")),
        "{out}"
    );
    let dest = env.root().join("exported");
    let out = quiet("export", env.run(["export", "--to", path(&dest)]));
    assert_eq!(
        out.stdout,
        format!("exported {total} records in {total} files to [ROOT]/exported\n")
    );
    quiet("gc --dry-run", env.run(["gc", "--dry-run"]));
    quiet("gc --execute", env.run(["gc", "--execute"]));

    let fleet = Fleet::new(2);
    let (src, _) = generated(&fleet.machines[0]);
    quiet(
        "import",
        fleet.machines[0].run(["import", "--from", path(&src)]),
    );
    quiet("sync", fleet.machines[0].run(["sync"]));
    let out = quiet("sync", fleet.machines[1].run(["sync"]));
    assert!(out.stdout.contains("fast-forwarded"), "{out}");
}

#[test]
fn import_and_export_draw_a_bar_on_a_terminal() {
    if !have_script() {
        eprintln!("skipped: no util-linux `script` to make a pseudo-terminal");
        return;
    }
    let env = TestEnv::new();
    let (src, total) = generated(&env);
    let seen = on_terminal(&env, &["import", "--from", path(&src)]);
    assert!(seen.contains("import: reading files"), "{seen}");
    assert!(seen.contains("import: writing records"), "{seen}");
    assert!(seen.contains(&format!("{total}/{total}")), "{seen}");
    assert!(
        seen.contains(&format!("imported {total} records")),
        "{seen}"
    );

    let dest = env.root().join("exported");
    let seen = on_terminal(&env, &["export", "--to", path(&dest)]);
    assert!(seen.contains("export: writing files"), "{seen}");
    assert!(seen.contains(&format!("{total}/{total}")), "{seen}");
}

#[test]
fn json_on_a_terminal_draws_no_bar() {
    if !have_script() {
        eprintln!("skipped: no util-linux `script` to make a pseudo-terminal");
        return;
    }
    let env = TestEnv::new();
    let (src, total) = generated(&env);
    let seen = on_terminal(&env, &["import", "--from", path(&src), "--json"]);
    assert!(!seen.contains("import:"), "{seen}");
    assert!(!seen.contains('\x1b'), "{seen}");
    let json: serde_json::Value = serde_json::from_str(&seen.replace("\r\n", "\n"))
        .unwrap_or_else(|e| panic!("not only JSON on the terminal ({e}): {seen:?}"));
    assert_eq!(json["records"], total);

    let dest = env.root().join("exported");
    let seen = on_terminal(&env, &["export", "--to", path(&dest), "--json"]);
    assert!(!seen.contains("export:"), "{seen}");
    let seen = on_terminal(&env, &["gc", "--execute", "--json"]);
    assert!(!seen.contains("gc:"), "{seen}");
}
