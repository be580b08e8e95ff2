//! Data-driven tests of the binary against golden text.
//!
//! Each folder under `tests/cases/` (at the repository root) is one case:
//! - `args`: the command line after `streamform`, one line; `{root}` is the repository root.
//!   Without `--project`, the case folder itself is the project.
//! - `expected`: the exit code, stdout and stderr the command must produce.
//!
//! `UPDATE_GOLDEN=1 cargo test -p streamform --test golden` rewrites every `expected` from
//! the binary's current output; review the diff before committing it.

mod common;

use common::repo_root;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs the binary and renders its result in the golden format.
fn run(case: &Path) -> String {
    let root = repo_root();
    let args_line = std::fs::read_to_string(case.join("args"))
        .expect("args file")
        .replace("{root}", &root.display().to_string());
    let mut args: Vec<String> = args_line.split_whitespace().map(String::from).collect();
    if !args.iter().any(|a| a == "--project") {
        args.push("--project".into());
        args.push(case.join("project").display().to_string());
    }
    let out = Command::new(env!("CARGO_BIN_EXE_streamform"))
        .args(&args)
        .env("NO_COLOR", "1")
        .current_dir(&root)
        .output()
        .expect("run streamform");
    let clean =
        |b: &[u8]| String::from_utf8_lossy(b).replace(&root.display().to_string(), "{root}");
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        out.status.code().unwrap_or(-1),
        clean(&out.stdout),
        clean(&out.stderr)
    )
}

#[test]
fn golden_cases() {
    let dir = repo_root().join("tests/cases");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/cases")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("args").exists())
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 10,
        "expected the golden corpus under {}",
        dir.display()
    );
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    for case in &cases {
        let actual = run(case);
        let expected_path = case.join("expected");
        if update {
            std::fs::write(&expected_path, &actual).expect("write expected");
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected != actual {
            failures.push(format!(
                "--- case {}\n--- expected\n{expected}\n--- actual\n{actual}",
                case.display()
            ));
        }
        assert!(
            !actual.contains("panicked"),
            "{} panicked:\n{actual}",
            case.display()
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} golden cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The acceptance fixture gives the same output on every run (spec: "Determinism").
#[test]
fn acceptance_fixture_is_deterministic() {
    let root = repo_root();
    let project = root.join("examples/order-pipeline");
    let first = Command::new(env!("CARGO_BIN_EXE_streamform"))
        .args(["test", "--project"])
        .arg(&project)
        .output()
        .expect("run");
    assert_eq!(first.status.code(), Some(0));
    for _ in 0..99 {
        let again = Command::new(env!("CARGO_BIN_EXE_streamform"))
            .args(["test", "--project"])
            .arg(&project)
            .output()
            .expect("run");
        assert_eq!(again.stdout, first.stdout);
        assert_eq!(again.status.code(), Some(0));
    }
}
