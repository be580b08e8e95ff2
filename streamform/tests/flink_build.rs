//! `build --backend flink` and `inspect-plan --json` through the binary: the files build
//! writes, the manifest's stability and shape, and the shape of every generated statement.
//!
//! Golden text for the same commands lives in `tests/cases/` (see golden.rs); these tests
//! assert what golden text cannot: files on disk, byte identity across processes, and a
//! structural check of every statement the examples generate.

mod common;

use common::{copy_dir, repo_root, streamform};
use std::path::{Path, PathBuf};
use std::process::Output;

use streamform_ir::manifest::Manifest;

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}, stderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

/// A copy of an example project in a temporary directory.
fn copy_project(example: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(&repo_root().join("examples").join(example), dir.path());
    dir
}

fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(listing(&path));
        }
        out.push(path);
    }
    out.sort();
    out
}

#[test]
fn build_writes_the_script_and_the_manifest_it_prints() {
    let project = copy_project("order-pipeline");
    let before = listing(project.path());
    let printed = stdout(&streamform(
        &["build", "--backend", "flink", "--stdout"],
        project.path(),
    ));
    assert_eq!(listing(project.path()), before, "--stdout writes nothing");

    let report = stdout(&streamform(
        &["build", "--backend", "flink"],
        project.path(),
    ));
    let script = std::fs::read_to_string(project.path().join("build/flink/application.sql"))
        .expect("build/flink/application.sql");
    let plan =
        std::fs::read_to_string(project.path().join("build/plan.json")).expect("build/plan.json");
    assert_eq!(script, printed);
    let inspected = stdout(&streamform(&["inspect-plan", "--json"], project.path()));
    common::valid_document("plan-manifest", inspected.as_bytes());
    assert_eq!(plan, inspected);
    let manifest = Manifest::from_json(&plan).expect("build/plan.json reads back strictly");
    assert_eq!(
        report,
        format!(
            "ok: wrote build/flink/application.sql (7 statements for target `local`)\nok: wrote build/plan.json (application digest {})\n",
            &manifest.application_digest[..12]
        )
    );
    let mut after = before.clone();
    for p in [
        "build",
        "build/flink",
        "build/flink/application.sql",
        "build/plan.json",
    ] {
        after.push(project.path().join(p));
    }
    after.sort();
    assert_eq!(
        listing(project.path()),
        after,
        "build writes only under build/"
    );
}

#[test]
fn the_manifest_is_byte_identical_across_processes_and_carries_the_golden_digests() {
    let project = repo_root().join("examples/customer-metrics");
    let first = stdout(&streamform(&["inspect-plan", "--json"], &project));
    let second = stdout(&streamform(&["inspect-plan", "--json"], &project));
    assert_eq!(first, second);
    common::valid_document("plan-manifest", first.as_bytes());
    let manifest = Manifest::from_json(&first).expect("the manifest reads back strictly");
    assert_eq!(manifest.application_digest, manifest.compute_digest());
    assert_eq!(manifest.application_digest.len(), 64);
    // The digests docs/plan-identity.md shows for this project ("inspect-plan"): the source,
    // aggregate and project schemas and the aggregate's state.
    let schema_digests: Vec<&str> = manifest
        .nodes
        .iter()
        .map(|n| &n.schema_digest[..12])
        .collect();
    assert_eq!(
        schema_digests,
        [
            "55c5eb27e8b4",
            "322eb3aa5330",
            "7fac6038b2ce",
            "7fac6038b2ce"
        ]
    );
    assert!(first.contains("\"digest\": \"4aead023aa01"));
    assert!(!first.contains("\"time\""), "no node has a time attribute");
}

#[test]
fn a_build_directory_that_cannot_be_written_is_exit_2_and_leaves_nothing_half_written() {
    let project = copy_project("customer-metrics");
    std::fs::write(
        project.path().join("build"),
        "a file where build/ should be",
    )
    .unwrap();
    let out = streamform(&["build", "--backend", "flink"], project.path());
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error: could not write ") && stderr.contains("application.sql"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join("build")).unwrap(),
        "a file where build/ should be"
    );
}

/// Words that may appear unquoted in generated SQL: keywords, function names and type names.
const KEYWORDS: &[&str] = &[
    "EXTRACT",
    "YEAR",
    "MONTH",
    "DAY",
    "HOUR",
    "MINUTE",
    "SECOND",
    "DOW",
    "TIMESTAMP",
    "UPPER",
    "LOWER",
    "TRIM",
    "LEADING",
    "TRAILING",
    "BOTH",
    "CHAR_LENGTH",
    "CONCAT",
    "SUBSTRING",
    "LIKE",
    "ABS",
    "FLOOR",
    "CEIL",
    "ROUND",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "ROW_NUMBER",
    "REPLACE",
    "POSITION",
    "IN",
    "SPLIT_INDEX",
    "REGEXP",
    "REGEXP_EXTRACT",
    "REGEXP_REPLACE",
    "DATE_FORMAT",
    "OVER",
    "TUMBLE",
    "DESCRIPTOR",
    "ASC",
    "ROWS",
    "RANGE",
    "UNBOUNDED",
    "PRECEDING",
    "BETWEEN",
    "CURRENT",
    "ROW",
    "PARTITION",
    "ORDER",
    "DESC",
    "PROCTIME",
    "CREATE",
    "TABLE",
    "TEMPORARY",
    "VIEW",
    "AS",
    "WITH",
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP",
    "BY",
    "PRIMARY",
    "KEY",
    "NOT",
    "ENFORCED",
    "EXECUTE",
    "STATEMENT",
    "SET",
    "BEGIN",
    "END",
    "INSERT",
    "INTO",
    "AND",
    "OR",
    "IS",
    "NULL",
    "TRUE",
    "FALSE",
    "CAST",
    "TRY_CAST",
    "TO_TIMESTAMP",
    "MOD",
    "SUM",
    "COUNT",
    "DISTINCT",
    "AVG",
    "INTERVAL",
    "TO",
    "WATERMARK",
    "FOR",
    "CURRENT_WATERMARK",
    "STATE_TTL",
    "MIN",
    "MAX",
    "INT",
    "BIGINT",
    "DOUBLE",
    "DECIMAL",
    "STRING",
    "BOOLEAN",
    "TIMESTAMP",
    "DATE",
];

/// The bare words of `sql` outside quotes, backticks and numbers, and whether every quote
/// and backtick closes.
fn bare_words(sql: &str) -> (Vec<String>, bool) {
    let mut words = Vec::new();
    let mut chars = sql.chars().peekable();
    let mut balanced = true;
    while let Some(c) = chars.next() {
        match c {
            '`' | '\'' => {
                // Skip to the closing quote; a doubled quote is an escaped one.
                let mut closed = false;
                while let Some(d) = chars.next() {
                    if d == c {
                        if chars.peek() == Some(&c) {
                            chars.next();
                        } else {
                            closed = true;
                            break;
                        }
                    }
                }
                balanced &= closed;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut w = c.to_string();
                while let Some(&d) = chars.peek() {
                    if d.is_ascii_alphanumeric() || d == '_' {
                        w.push(d);
                        chars.next();
                    } else {
                        break;
                    }
                }
                words.push(w);
            }
            c if c.is_ascii_digit() => {
                // A number, possibly with an exponent (1.5E0) or a subquery alias (t1).
                while let Some(&d) = chars.peek() {
                    if d.is_ascii_alphanumeric() || d == '.' {
                        chars.next();
                    } else {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    (words, balanced)
}

fn check_statements(project: &Path) -> usize {
    let out = streamform(&["build", "--backend", "flink", "--stdout"], project);
    let script = stdout(&out);
    let statements: Vec<&str> = script.trim_end().split("\n\n").collect();
    for s in &statements {
        assert!(s.ends_with(';'), "statement does not end with `;`:\n{s}");
        let (words, balanced) = bare_words(s);
        assert!(balanced, "an unclosed quote or backtick:\n{s}");
        for w in words {
            let alias = w.starts_with('t') && w[1..].chars().all(|c| c.is_ascii_digit());
            assert!(
                alias || KEYWORDS.contains(&w.as_str()),
                "unquoted word `{w}` in:\n{s}"
            );
        }
        // One statement per chunk: the only `;` outside quotes end the statement or, in the
        // statement set, each INSERT.
        let body: String = s
            .lines()
            .filter(|l| !l.trim_start().starts_with("INSERT INTO"))
            .collect::<Vec<_>>()
            .join("\n");
        let semicolons = strip_quoted(&body).matches(';').count();
        assert_eq!(semicolons, 1, "more than one statement in:\n{s}");
    }
    statements.len()
}

fn strip_quoted(sql: &str) -> String {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    for c in sql.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '`' || c == '\'' => quote = Some(c),
            None => out.push(c),
        }
    }
    out
}

#[test]
fn every_generated_statement_is_one_statement_with_every_identifier_quoted() {
    let root = repo_root();
    let mut projects = vec![
        root.join("examples/customer-metrics"),
        root.join("examples/order-pipeline"),
        root.join("examples/coverage"),
        root.join("examples/order-status"),
    ];
    for case in [
        "build-quoted-names",
        "build-file-source-and-sink",
        "flink-warns-unused-model",
    ] {
        projects.push(root.join("tests/cases").join(case).join("project"));
    }
    let counts: Vec<usize> = projects.iter().map(|p| check_statements(p)).collect();
    // customer-metrics: source, view, sink, set; order-pipeline: source (on event time, so
    // its raw table and the on-time view), 3 views, sink, set; coverage: 3 sources and the
    // on-time view of one, 34 views, 26 sinks, set; order-status: its upsert source, 4 views,
    // 4 sinks, the two SETs of the planner options an upsert source needs, set.
    assert_eq!(&counts[..4], &[4, 7, 65, 12]);
}
