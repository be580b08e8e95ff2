//! The protocol: every `--json` document the binary prints validates against the schema
//! `streamform schema` generates for it (a JSON Schema 2020-12 validator), stdout holds the
//! document alone, and a report with an unknown field or another version is refused when
//! read back.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{copy_dir, repo_root, streamform};
use serde_json::Value;
use streamform_db::report::{self, CheckReport, Graph, TestReport};

fn schema(document: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_streamform"))
        .args(["schema", document])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "schema {document}");
    serde_json::from_slice(&out.stdout).expect("the schema is JSON")
}

/// The document on stdout, checked to be valid against `document`'s schema.
fn valid(out: &Output, document: &str) -> Value {
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    let value: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("stdout is one JSON document ({e}):\n{text}"));
    let schema = schema(document);
    assert_eq!(
        schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
        "{document}"
    );
    assert!(
        schema["$id"]
            .as_str()
            .is_some_and(|id| id.starts_with(&format!("urn:streamform:spec:{document}:v"))),
        "{document}: {}",
        schema["$id"]
    );
    let validator = jsonschema::draft202012::new(&schema).expect("a valid 2020-12 schema");
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{document}: {errors:#?}\n{text}");
    value
}

fn example(name: &str) -> std::path::PathBuf {
    repo_root().join("examples").join(name)
}

#[test]
fn every_document_of_every_example_validates_against_its_schema() {
    for name in [
        "customer-metrics",
        "order-pipeline",
        "coverage",
        "event-time/late-event",
    ] {
        let project = example(name);
        let check = streamform(&["check", "--json"], &project);
        assert_eq!(check.status.code(), Some(0), "{name}");
        let v = valid(&check, "check-report");
        assert_eq!(v["check_version"], 1);
        let test = streamform(&["test", "--json"], &project);
        assert_eq!(test.status.code(), Some(0), "{name}");
        let v = valid(&test, "test-report");
        assert_eq!(
            (v["report_version"].clone(), v["passed"].clone()),
            (1.into(), true.into())
        );
        valid(&streamform(&["graph", "--json"], &project), "graph");
        valid(
            &streamform(&["inspect-plan", "--json"], &project),
            "plan-manifest",
        );
        // The event-time examples declare no target, so no applied record to compare with.
        if !name.starts_with("event-time") {
            valid(&streamform(&["plan", "--json"], &project), "diff");
        }
    }
}

#[test]
fn a_failing_fixture_reports_rows_with_values_after_typing_and_an_updates_before() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&example("customer-metrics"), dir.path());
    let fixture = dir.path().join("tests/customer_metrics.yml");
    let text = std::fs::read_to_string(&fixture).unwrap();
    std::fs::write(&fixture, text.replace("total_spend: 28", "total_spend: 29")).unwrap();
    let out = streamform(&["test", "--json"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.is_empty(),
        "nothing for a person on stdout or stderr"
    );
    let v = valid(&out, "test-report");
    assert_eq!(v["passed"], false);
    let row = &v["fixtures"][0]["rows"][1];
    // Decimals as exact strings, trailing zeros trimmed; the update's before-image.
    assert_eq!(row["expected"]["row"]["total_spend"], "29");
    assert_eq!(row["actual"]["row"]["total_spend"], "28");
    assert_eq!(row["actual"]["op"], "update");
    assert_eq!(row["actual"]["before"]["total_spend"], "10");
    assert_eq!(row["problem"], "total_spend: expected 29, got 28");
}

#[test]
fn check_json_reports_a_project_that_does_not_load_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = streamform(&["check", "--json"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let v = valid(&out, "check-report");
    assert_eq!(v["loaded"], false);
    assert_eq!(v["diagnostics"].as_array().map(Vec::len), Some(1));
}

#[test]
fn graph_json_lists_a_reference_cycle_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&example("order-pipeline"), dir.path());
    std::fs::write(
        dir.path().join("models/clean_orders.sql"),
        "SELECT customer_id, total_spend AS amount FROM ref('big_customers')\n",
    )
    .unwrap();
    let out = streamform(&["graph", "--json"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let v = valid(&out, "graph");
    assert_eq!(
        v["cycles"],
        serde_json::json!([["big_customers", "customer_metrics", "clean_orders"]])
    );
}

#[test]
fn a_report_with_an_unknown_field_or_another_version_is_refused() {
    let project: &Path = &example("order-pipeline");
    for (args, field) in [
        (&["check", "--json"][..], "check_version"),
        (&["test", "--json"][..], "report_version"),
        (&["graph", "--json"][..], "graph_version"),
    ] {
        let text = String::from_utf8(streamform(args, project).stdout).unwrap();
        let mut extra: Value = serde_json::from_str(&text).unwrap();
        extra["surprise"] = true.into();
        let mut newer: Value = serde_json::from_str(&text).unwrap();
        newer[field] = 2.into();
        let read = |t: &str| -> Result<(), report::Refused> {
            match field {
                "check_version" => report::read::<CheckReport>(t, field, 1).map(|_| ()),
                "report_version" => report::read::<TestReport>(t, field, 1).map(|_| ()),
                _ => report::read::<Graph>(t, field, 1).map(|_| ()),
            }
        };
        assert_eq!(read(&text), Ok(()), "{field}");
        let refused = read(&extra.to_string()).unwrap_err();
        assert!(refused.0.contains("surprise"), "{}", refused.0);
        assert_eq!(
            read(&newer.to_string()).unwrap_err().0,
            format!("{field} 2: this build reads version 1")
        );
    }
}

#[test]
fn schema_refuses_another_version_and_an_unknown_document() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_streamform"))
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["schema", "test-report", "--version", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).lines().next(),
        Some("error: this build speaks test-report version 1, not version 2")
    );
    assert_eq!(
        run(&["schema", "test-report", "--version", "1"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(run(&["schema", "nothing"]).status.code(), Some(2));
}

/// A YAML file as the JSON value a schema validator reads.
fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn errors(document: &str, value: &Value) -> Vec<String> {
    let schema = schema(document);
    let validator = jsonschema::draft202012::new(&schema).expect("a valid 2020-12 schema");
    validator
        .iter_errors(value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[test]
fn every_project_file_of_every_example_validates_against_its_schema() {
    for name in [
        "customer-metrics",
        "order-pipeline",
        "coverage",
        "event-time/late-event",
        "event-time/watermark",
        "event-time/retention",
    ] {
        let project = example(name);
        let files = [
            ("project", project.join("streamform.yml")),
            ("sources", project.join("sources.yml")),
        ];
        let fixtures = std::fs::read_dir(project.join("tests"))
            .unwrap()
            .map(|e| ("fixture", e.unwrap().path()));
        for (document, path) in files.into_iter().chain(fixtures) {
            let found = errors(document, &yaml(&path));
            assert!(found.is_empty(), "{}: {found:#?}", path.display());
        }
    }
}

#[test]
fn a_misspelled_field_is_flagged_by_the_schema_as_check_flags_it() {
    let mut project = yaml(&example("customer-metrics").join("streamform.yml"));
    project["models"]["customer_metrics"]["materialised"] = "upsert".into();
    let found = errors("project", &project);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].contains("materialised"), "{}", found[0]);
    let mut sources = yaml(&example("customer-metrics").join("sources.yml"));
    sources["sources"]["orders"]["topc"] = "orders".into();
    assert!(errors("sources", &sources)[0].contains("topc"));
}

#[test]
fn a_junit_report_names_each_fixture_and_a_failures_first_difference() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&example("order-pipeline"), dir.path());
    let fixture = dir.path().join("tests/customer_metrics.yml");
    let text = std::fs::read_to_string(&fixture).unwrap();
    std::fs::write(&fixture, text.replace("total_spend: 28", "total_spend: 29")).unwrap();
    let report_path = dir.path().join("junit.xml");
    let out = streamform(
        &["test", "--junit", report_path.to_str().unwrap()],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let xml = std::fs::read_to_string(&report_path).unwrap();
    let report = quick_junit::Report::deserialize_from_str(&xml).expect("JUnit XML reads back");
    assert_eq!((report.tests, report.failures), (4, 1));
    let suite = &report.test_suites[0];
    assert_eq!(suite.name.as_str(), "order-pipeline");
    let names: Vec<&str> = suite.test_cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "big_customers (tests/big_customers.yml)",
            "clean_orders (tests/clean_orders.yml)",
            "customer_metrics (tests/customer_metrics.yml)",
            "customer_metrics (tests/late_order.yml)",
        ]
    );
    let failing = &suite.test_cases[2];
    match &failing.status {
        quick_junit::TestCaseStatus::NonSuccess {
            message,
            description,
            ..
        } => {
            assert_eq!(
                message.as_ref().map(|m| m.as_str()),
                Some("total_spend: expected 29, got 28")
            );
            assert!(
                description
                    .as_ref()
                    .is_some_and(|d| d.as_str().contains("^ total_spend: expected 29, got 28")),
                "{description:?}"
            );
        }
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn a_junit_report_in_a_missing_folder_makes_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&example("customer-metrics"), dir.path());
    // A relative path is taken from the working folder, as any path argument is.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_streamform"))
        .args(["test", "--junit", "build/reports/junit.xml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let xml = std::fs::read_to_string(dir.path().join("build/reports/junit.xml")).unwrap();
    let report = quick_junit::Report::deserialize_from_str(&xml).expect("JUnit XML reads back");
    assert_eq!((report.tests, report.failures), (1, 0));
}

#[test]
fn a_junit_report_replaces_only_a_regular_file_and_keeps_a_link_to_one() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&example("customer-metrics"), dir.path());
    // A folder (as a device or a pipe would be) is not replaced: exit 2, left alone.
    let folder = dir.path().join("reports");
    std::fs::create_dir(&folder).unwrap();
    let out = streamform(&["test", "--junit", folder.to_str().unwrap()], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("it is not a regular file"));
    assert!(folder.is_dir());
    // Through a symbolic link, the file it names is written and the link stays a link.
    #[cfg(unix)]
    {
        let target = dir.path().join("report.xml");
        std::fs::write(&target, "old").unwrap();
        let link = dir.path().join("link.xml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let out = streamform(&["test", "--junit", link.to_str().unwrap()], dir.path());
        assert_eq!(out.status.code(), Some(0));
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            std::fs::read_to_string(&target)
                .unwrap()
                .contains("<testsuites")
        );
    }
}

#[test]
fn the_applied_record_schema_refuses_the_job_ids_and_lineage_its_reader_refuses() {
    use streamform_ir::record::AppliedRecord;
    let record = |jobs: &str, lineage: &str| {
        serde_json::json!({
            "record_version": 3,
            "target": "local",
            "application": "customer-metrics",
            "streamform_version": "0.1.0",
            "backend": "flink",
            "jobs": [],
            "lineage": lineage,
            "attempts": [{
                "generation": 1,
                "job_id": jobs,
                "job_name": "streamform/customer-metrics/local",
                "action": "start",
                "artifact": "",
                "application_digest": "",
                "submitted_at": "2026-08-27T10:12:01Z",
                "outcome": "failed",
            }],
        })
    };
    let good = record("9d1f2c4b7a3e5f6081c2d3e4f5a6b7c8", "9d1f2c4b7a3e5f60");
    assert!(AppliedRecord::from_json(&good.to_string()).is_ok());
    assert_eq!(errors("applied-record", &good), Vec::<String>::new());
    for bad in [
        record("9D1F2C4B7A3E5F6081C2D3E4F5A6B7C8", "9d1f2c4b7a3e5f60"),
        record("9d1f2c4b", "9d1f2c4b7a3e5f60"),
        record("9d1f2c4b7a3e5f6081c2d3e4f5a6b7c8", "9d1f2c4b"),
    ] {
        assert!(AppliedRecord::from_json(&bad.to_string()).is_err(), "{bad}");
        assert_eq!(errors("applied-record", &bad).len(), 1, "{bad}");
    }
}
