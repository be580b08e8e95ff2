//! The published formats under spec/: for every document, `<document>/v<N>/schema.json` is
//! what `streamform schema <document>` prints, and `<document>/v<N>/examples/` holds real
//! documents produced from the example projects, each valid against that schema. The test
//! fails when spec/ differs from what the binary generates; `UPDATE_SPEC=1 cargo test -p
//! streamform --test spec` writes it again.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::repo_root;
use streamform_db::report::DOCUMENTS;

fn run(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_streamform"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn example(name: &str) -> String {
    repo_root()
        .join("examples")
        .join(name)
        .display()
        .to_string()
}

/// The example documents of `document`: (file name, text).
fn examples(document: &str) -> Vec<(String, String)> {
    let json = |args: &[&str]| run(args);
    let file = |name: &str, path: &str| {
        (
            name.to_string(),
            std::fs::read_to_string(
                Path::new(&example(name.split('.').next().unwrap_or(name))).join(path),
            )
            .unwrap(),
        )
    };
    let op = example("order-pipeline");
    let late = example("event-time/late-event");
    match document {
        "project" => vec![file("order-pipeline.yml", "streamform.yml")],
        "sources" => vec![file("order-pipeline.yml", "sources.yml")],
        "fixture" => vec![file("order-pipeline.yml", "tests/late_order.yml")],
        "plan-manifest" => vec![(
            "order-pipeline.json".into(),
            json(&["inspect-plan", "--json", "--project", &op]),
        )],
        "plan-manifest-slice" => vec![(
            "order-pipeline-customer_metrics.json".into(),
            json(&["explain", "customer_metrics", "--json", "--project", &op]),
        )],
        "diff" => vec![(
            "order-pipeline.json".into(),
            json(&["plan", "--json", "--project", &op]),
        )],
        "check-report" => vec![(
            "order-pipeline.json".into(),
            json(&["check", "--json", "--project", &op]),
        )],
        "test-report" => vec![
            (
                "order-pipeline.json".into(),
                json(&["test", "--json", "--project", &op]),
            ),
            (
                "late-event.json".into(),
                json(&["test", "--json", "--project", &late]),
            ),
        ],
        "graph" => vec![(
            "order-pipeline.json".into(),
            json(&["graph", "--json", "--project", &op]),
        )],
        _ => Vec::new(),
    }
}

/// Every file spec/ should hold, with its text.
fn expected() -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for d in DOCUMENTS {
        let dir = PathBuf::from(d.name).join(format!("v{}", d.version));
        out.push((dir.join("schema.json"), run(&["schema", d.name])));
        for (name, text) in examples(d.name) {
            out.push((dir.join("examples").join(name), text));
        }
    }
    out
}

#[test]
fn spec_holds_what_the_binary_generates() {
    let spec = repo_root().join("spec");
    let update = std::env::var_os("UPDATE_SPEC").is_some();
    let mut stale = Vec::new();
    for (path, text) in expected() {
        let full = spec.join(&path);
        if update {
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, &text).unwrap();
        } else if std::fs::read_to_string(&full).ok().as_deref() != Some(text.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "spec/ differs from what the binary generates: {stale:?}; run UPDATE_SPEC=1 cargo test -p streamform --test spec"
    );
}

#[test]
fn every_example_in_spec_validates_against_its_schema() {
    for d in DOCUMENTS {
        let schema: serde_json::Value = serde_json::from_str(&run(&["schema", d.name])).unwrap();
        let validator = jsonschema::draft202012::new(&schema).unwrap();
        for (name, text) in examples(d.name) {
            let value: serde_json::Value = if name.ends_with(".yml") {
                serde_saphyr::from_str(&text).unwrap()
            } else {
                serde_json::from_str(&text).unwrap()
            };
            let errors: Vec<String> = validator
                .iter_errors(&value)
                .map(|e| e.to_string())
                .collect();
            assert!(errors.is_empty(), "{} {name}: {errors:?}", d.name);
        }
    }
}

/// Rule 3 of the protocol: every object of every schema refuses properties it does not
/// list.
#[test]
fn every_object_of_every_schema_refuses_unknown_properties() {
    fn open_objects(node: &serde_json::Value, path: &str, out: &mut Vec<String>) {
        match node {
            serde_json::Value::Object(map) => {
                if map.contains_key("properties")
                    && map.get("additionalProperties") != Some(&serde_json::Value::Bool(false))
                {
                    out.push(path.to_string());
                }
                for (k, v) in map {
                    open_objects(v, &format!("{path}/{k}"), out);
                }
            }
            serde_json::Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    open_objects(v, &format!("{path}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    for d in DOCUMENTS {
        let schema: serde_json::Value = serde_json::from_str(&run(&["schema", d.name])).unwrap();
        let mut open = Vec::new();
        open_objects(&schema, "", &mut open);
        assert!(
            open.is_empty(),
            "{}: objects without additionalProperties false: {open:?}",
            d.name
        );
    }
}
