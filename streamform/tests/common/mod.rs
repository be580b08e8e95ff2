//! Helpers shared by the binary's integration tests.
#![allow(dead_code)]

pub mod fake_flink;
pub mod fake_gateway;
pub mod http;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root (the repository).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Copies a project's directory tree, leaving out what commands write into it (`build/`,
/// `.streamform/`), so a copy starts as a fresh clone's would.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() == "build" || entry.file_name() == ".streamform" {
            continue;
        }
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs the binary with `args` and `--project project`, without colour.
pub fn streamform(args: &[&str], project: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_streamform"))
        .args(args)
        .arg("--project")
        .arg(project)
        .env("NO_COLOR", "1")
        .output()
        .expect("run streamform")
}

/// `text` with every RFC 3339 time (`2026-12-01T06:01:55Z`) replaced by `{time}`.
pub fn without_times(text: &str) -> String {
    let shape = b"dddd-dd-ddTdd:dd:ddZ";
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let matches = bytes.len() - i >= shape.len()
            && shape.iter().zip(&bytes[i..]).all(|(s, b)| match s {
                b'd' => b.is_ascii_digit(),
                s => s == b,
            });
        if matches {
            out.push_str("{time}");
            i += shape.len();
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Checks `stdout` against the schema `streamform schema <document>` prints (a JSON Schema
/// 2020-12 validator) and returns the document.
pub fn valid_document(document: &str, stdout: &[u8]) -> serde_json::Value {
    let schema = Command::new(env!("CARGO_BIN_EXE_streamform"))
        .args(["schema", document])
        .output()
        .expect("run streamform schema");
    let schema: serde_json::Value = serde_json::from_slice(&schema.stdout).expect("a schema");
    let value: serde_json::Value = serde_json::from_slice(stdout).expect("one JSON document");
    let validator = jsonschema::draft202012::new(&schema).expect("a valid 2020-12 schema");
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{document}: {errors:#?}");
    value
}
