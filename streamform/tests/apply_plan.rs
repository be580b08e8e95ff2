//! `apply` compares the plan with the target's applied record before it applies, and says
//! so: the verdict line, and the whole diff when it refuses a change Flink cannot carry the
//! state across. Each case runs the binary against a fake Flink cluster and compares the
//! output with a snapshot (`snapshots/`).
//!
//! See docs/commands.md, "streamform apply", and docs/upgrading.md, "What `apply` does with
//! the verdict".

mod common;

use std::path::Path;
use std::process::Output;

use common::fake_flink::{Behaviour, FakeFlink, fake_flink, project_on};
use common::streamform;

/// The run as a snapshot: exit code, stdout, stderr, with the fake's address and the
/// record's lineage replaced.
fn rendered(out: &Output, gateway: &FakeFlink, project: &Path) -> String {
    let lineage = std::fs::read_to_string(project.join(".streamform/applied/local.json"))
        .ok()
        .and_then(|t| streamform_ir::record::AppliedRecord::from_json(&t).ok())
        .and_then(|r| r.lineage)
        .unwrap_or_else(|| "(no lineage)".into());
    let clean = |b: &[u8]| {
        common::without_times(
            &String::from_utf8_lossy(b)
                .replace(&gateway.address, "{gateway}")
                .replace(&project.display().to_string(), "{project}")
                .replace(&lineage, "{lineage}")
                .replace(&lineage[..12], "{lineage}"),
        )
    };
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        out.status.code().unwrap_or(-1),
        clean(&out.stdout),
        clean(&out.stderr)
    )
}

/// Writes an applied record of the project as it is now, applied at a fixed time, as if an
/// earlier apply had recorded it.
fn record_as_applied(project: &Path) {
    let manifest = streamform(&["inspect-plan", "--json"], project);
    assert_eq!(manifest.status.code(), Some(0));
    let manifest = String::from_utf8(manifest.stdout).unwrap();
    let record = format!(
        "{{\n  \"record_version\": 1,\n  \"target\": \"local\",\n  \"applied_at\": \"2026-08-27T10:12:03Z\",\n  \"streamform_version\": \"0.4.0\",\n  \"backend\": \"flink\",\n  \"jobs\": [\"9d1f2c4b7a3e5f6081c2d3e4f5a6b7c8\"],\n  \"manifest\": {manifest}}}\n"
    );
    std::fs::create_dir_all(project.join(".streamform/applied")).unwrap();
    std::fs::write(project.join(".streamform/applied/local.json"), record).unwrap();
}

fn recorded_jobs(project: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(project.join(".streamform/applied/local.json")).unwrap();
    common::valid_document("applied-record", text.as_bytes());
    streamform_ir::record::AppliedRecord::from_json(&text)
        .unwrap()
        .jobs
}

/// The example's model with `COUNT(*)` added, and no fixture (it would need the new column).
fn add_an_accumulator(project: &Path) {
    std::fs::write(
        project.join("models/customer_metrics.sql"),
        "SELECT customer_id, SUM(amount) AS total_spend, COUNT(*) AS orders\nFROM source('orders')\nGROUP BY customer_id\n",
    )
    .unwrap();
    std::fs::remove_dir_all(project.join("tests")).unwrap();
}

#[test]
fn with_nothing_recorded_apply_says_the_application_starts_fresh() {
    let gateway = fake_flink(Behaviour::default());
    let project = project_on(&gateway.address, "");
    let out = streamform(&["apply"], project.path());
    insta::assert_snapshot!(rendered(&out, &gateway, project.path()));
    assert_eq!(recorded_jobs(project.path()).len(), 1);
}

/// A record written before deployments were tracked (record_version 1): its job is unknown
/// to the cluster, so its state is lost; apply says so, and --rebuild starts the plan.
#[test]
fn against_a_version_1_record_apply_prints_safe_and_says_the_state_is_lost() {
    let gateway = fake_flink(Behaviour::default());
    let project = project_on(&gateway.address, "");
    record_as_applied(project.path());
    let out = streamform(&["apply"], project.path());
    insta::assert_snapshot!(rendered(&out, &gateway, project.path()));
    assert_eq!(
        recorded_jobs(project.path()),
        ["9d1f2c4b7a3e5f6081c2d3e4f5a6b7c8"]
    );
    let rebuilt = streamform(&["apply", "--rebuild"], project.path());
    assert_eq!(rebuilt.status.code(), Some(0));
    assert_eq!(gateway.jobs().len(), 1);
    assert_eq!(recorded_jobs(project.path()), [gateway.jobs()[0].0.clone()]);
}

#[test]
fn above_compatible_apply_prints_the_whole_diff_and_refuses() {
    let gateway = fake_flink(Behaviour::default());
    let project = project_on(&gateway.address, "");
    assert_eq!(
        streamform(&["apply"], project.path()).status.code(),
        Some(0)
    );
    add_an_accumulator(project.path());
    let out = streamform(&["apply"], project.path());
    insta::assert_snapshot!(rendered(&out, &gateway, project.path()));
    assert_eq!(gateway.jobs().len(), 1, "nothing was started");
}

#[test]
fn a_record_that_cannot_be_read_stops_apply_before_the_gateway_is_asked() {
    let gateway = fake_flink(Behaviour::default());
    let project = project_on(&gateway.address, "");
    record_as_applied(project.path());
    let path = project.path().join(".streamform/applied/local.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let truncated = &text[..text.len() / 3];
    std::fs::write(&path, truncated).unwrap();
    let out = streamform(&["apply"], project.path());
    insta::assert_snapshot!(rendered(&out, &gateway, project.path()));
    assert!(
        gateway.state.lock().unwrap().requests.is_empty(),
        "nothing may be sent: {:?}",
        gateway.state.lock().unwrap().requests
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        truncated,
        "the record is left as it was"
    );
}
