//! `apply` against a deliberately misbehaving local HTTP server: the failures a real SQL
//! Gateway cannot be made to produce on demand (a garbled answer, a hang, an operation that
//! never finishes). Each asserts the exit code, the message and that no record was written.
//!
//! Failures a real gateway does produce (a rejected statement, a wrong port, a record that
//! cannot be written) are in differential.rs, against the integration environment.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::fake_gateway::{Answer, fake_gateway, project_with_gateway, session_routes};

fn apply(project: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_streamform"))
        .arg("apply")
        .args(extra)
        .arg("--project")
        .arg(project)
        .env("NO_COLOR", "1")
        .output()
        .expect("run streamform")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn no_record(project: &Path) {
    assert!(
        !project.join(".streamform/applied/local.json").exists(),
        "no applied record may be written"
    );
}

#[test]
fn a_gateway_that_answers_html_is_exit_2_quoting_what_it_said() {
    let gateway =
        fake_gateway(|_, _, _| Answer::Reply(200, "<html>Apache Flink Web Dashboard</html>"));
    let project = project_with_gateway(&gateway);
    let out = apply(project.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("error: the SQL Gateway answered POST /v2/sessions with HTTP 200 and something other than the expected JSON: <html>Apache Flink Web Dashboard</html>"),
        "{err}"
    );
    assert!(
        err.contains("help: check that `flink.gateway` of target `local`"),
        "{err}"
    );
    no_record(project.path());
}

#[test]
fn a_gateway_that_answers_json_of_another_shape_is_exit_2() {
    let gateway =
        fake_gateway(|_, _, _| Answer::Reply(200, r#"{"errors":["Not found: /v2/sessions"]}"#));
    let project = project_with_gateway(&gateway);
    let out = apply(project.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            r#"something other than the expected JSON: {"errors":["Not found: /v2/sessions"]}"#
        ),
        "{}",
        stderr(&out)
    );
    no_record(project.path());
}

#[test]
fn a_gateway_that_never_answers_is_exit_2_with_the_outcome_unknown() {
    let gateway = fake_gateway(|_, _, _| Answer::Hang);
    let project = project_with_gateway(&gateway);
    let out = apply(project.path(), &["--timeout", "2"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("error: the SQL Gateway did not finish opening a session within 2s; the outcome is unknown"),
        "{err}"
    );
    assert!(
        err.contains("the statement set was not sent, so no job was started"),
        "{err}"
    );
    no_record(project.path());
}

#[test]
fn an_operation_that_never_finishes_is_exit_2_and_writes_no_record() {
    let gateway = fake_gateway(|method, path, _| {
        session_routes(method, path).unwrap_or(Answer::Reply(
            200,
            r#"{"resultType":"NOT_READY","nextResultUri":"/v2/sessions/s1/operations/o1/result/0?rowFormat=JSON"}"#,
        ))
    });
    let project = project_with_gateway(&gateway);
    let out = apply(project.path(), &["--timeout", "2"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("error: the SQL Gateway did not finish the table of source `orders` within 2s; the outcome is unknown"),
        "{err}"
    );
    no_record(project.path());
}

#[test]
fn a_failed_operation_is_reported_with_flinks_reason_and_exit_1() {
    let gateway = fake_gateway(|method, path, _| {
        session_routes(method, path).unwrap_or(Answer::Reply(
            500,
            r#"{"errors":["Internal server error.","<Exception on server side:\norg.apache.flink.table.gateway.api.utils.SqlGatewayException: Failed to fetchResults.\n\tat a.B.c(B.java:1)\nCaused by: org.apache.flink.table.api.ValidationException: Unable to create a source for reading table 'default_catalog.default_database.orders'.\n\tat a.B.c(B.java:2)\n\nEnd of exception on server side>"]}"#,
        ))
    });
    let project = project_with_gateway(&gateway);
    let out = apply(project.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("error: Flink rejected the table of source `orders`\n  statement:\n    CREATE TABLE `orders` (\n"),
        "{err}"
    );
    assert!(
        err.contains("  reason:\n    org.apache.flink.table.api.ValidationException: Unable to create a source for reading table 'default_catalog.default_database.orders'.\n  help: nothing after this statement was submitted"),
        "{err}"
    );
    assert!(!err.contains("\tat "), "no stack frames: {err}");
    no_record(project.path());
}
