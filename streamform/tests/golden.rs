//! Data-driven tests of the binary against golden text, one test per case.
//!
//! Each folder under `tests/cases/` (at the repository root) is one case, and one test named
//! after the folder:
//! - `args`: the command line after `streamform`, one line; `{root}` is the repository root.
//!   Without `--project`, the case folder's `project/` is the project.
//! - `expected`: the exit code, stdout and stderr the command must produce.
//!
//! `UPDATE_GOLDEN=1 cargo test -p streamform --test golden` rewrites every `expected` from
//! the binary's current output; review the diff before committing it. A filter works as
//! with any test: `cargo test -p streamform --test golden -- plan-` runs the plan cases.

mod common;

use common::repo_root;
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs the binary and renders its result in the golden format.
fn run(case: &Path) -> String {
    let root = repo_root();
    let args_line = std::fs::read_to_string(case.join("args"))
        .expect("args file")
        .replace("{root}", &root.display().to_string());
    let mut args: Vec<String> = args_line.split_whitespace().map(String::from).collect();
    // Commands that take the target's lock or write its record run on a copy, so a test
    // run never writes into the repository.
    let scratch = tempfile::tempdir().expect("a temporary directory");
    if !args.iter().any(|a| a == "--project") {
        let project = case.join("project");
        let project = if matches!(args.first().map(String::as_str), Some("apply" | "stop")) {
            copy_all(&project, scratch.path());
            scratch.path().to_path_buf()
        } else {
            project
        };
        args.push("--project".into());
        args.push(project.display().to_string());
    }
    let out = Command::new(env!("CARGO_BIN_EXE_streamform"))
        .args(&args)
        .env("NO_COLOR", "1")
        .current_dir(&root)
        .output()
        .expect("run streamform");
    if let Err(e) = validate(&args, &out.stdout) {
        return format!("panicked: the document does not validate against its schema: {e}");
    }
    let clean =
        |b: &[u8]| String::from_utf8_lossy(b).replace(&root.display().to_string(), "{root}");
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        out.status.code().unwrap_or(-1),
        clean(&out.stdout),
        clean(&out.stderr)
    )
}

/// The protocol: a `--json` document a case prints is valid against the schema
/// `streamform schema` generates for it (a JSON Schema 2020-12 validator), so every
/// document the golden cases print is checked.
fn validate(args: &[String], stdout: &[u8]) -> Result<(), String> {
    if !args.iter().any(|a| a == "--json") || stdout.is_empty() {
        return Ok(());
    }
    let positional = args
        .iter()
        .skip(1)
        .take_while(|a| !a.starts_with("--"))
        .count();
    let document = match (args[0].as_str(), positional) {
        ("check", _) => "check-report",
        ("test", _) => "test-report",
        ("graph", _) => "graph",
        ("plan", _) => "diff",
        ("status", _) => "status",
        ("inspect-plan", 0) => "plan-manifest",
        ("inspect-plan" | "explain", _) => "plan-manifest-slice",
        _ => return Ok(()),
    };
    let schema = Command::new(env!("CARGO_BIN_EXE_streamform"))
        .args(["schema", document])
        .output()
        .map_err(|e| e.to_string())?;
    let schema: serde_json::Value =
        serde_json::from_slice(&schema.stdout).map_err(|e| e.to_string())?;
    let value: serde_json::Value =
        serde_json::from_slice(stdout).map_err(|e| format!("stdout is not one document: {e}"))?;
    let validator = jsonschema::draft202012::new(&schema).map_err(|e| e.to_string())?;
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("{document}: {errors:?}"))
    }
}

/// Copies a directory tree, `.streamform/` included.
fn copy_all(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_all(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// One golden case: the binary's output must equal `expected` (or, with UPDATE_GOLDEN,
/// becomes it).
fn golden_case(case: &Path) -> Result<(), Failed> {
    let actual = run(case);
    if actual.contains("panicked") {
        return Err(format!("the binary panicked:\n{actual}").into());
    }
    let expected_path = case.join("expected");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&expected_path, &actual).map_err(|e| e.to_string())?;
        return Ok(());
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
    if expected == actual {
        Ok(())
    } else {
        Err(format!(
            "{} differs\n--- expected\n{expected}\n--- actual\n{actual}",
            case.display()
        )
        .into())
    }
}

/// The acceptance fixture gives the same output on every run (docs/concepts.md, "The
/// simulator as oracle").
fn acceptance_fixture_is_deterministic() -> Result<(), Failed> {
    let project = repo_root().join("examples/order-pipeline");
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_streamform"))
            .args(["test", "--project"])
            .arg(&project)
            .output()
            .expect("run")
    };
    let first = run();
    if first.status.code() != Some(0) {
        return Err(format!("exit {:?}", first.status.code()).into());
    }
    for i in 1..100 {
        let again = run();
        if again.stdout != first.stdout || again.status.code() != Some(0) {
            return Err(format!("run {i} differs from the first").into());
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
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
    let mut trials: Vec<Trial> = cases
        .into_iter()
        .map(|case| {
            let name = case.file_name().unwrap().to_string_lossy().into_owned();
            Trial::test(name, move || golden_case(&case))
        })
        .collect();
    trials.push(Trial::test(
        "acceptance_fixture_is_deterministic",
        acceptance_fixture_is_deterministic,
    ));
    libtest_mimic::run(&args, trials).exit();
}
