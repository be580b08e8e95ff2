//! `apply` against a deliberately misbehaving local HTTP server: the failures a real SQL
//! Gateway cannot be made to produce on demand (a garbled answer, a hang, an operation that
//! never finishes). Each asserts the exit code, the message and that no record was written.
//!
//! Failures a real gateway does produce (a rejected statement, a wrong port, a record that
//! cannot be written) are in differential.rs, against the integration environment.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output};
use std::thread;
use std::time::Duration;

/// What the fake gateway does with one request.
enum Answer {
    /// Reply with this status and body.
    Reply(u16, &'static str),
    /// Never reply (hold the connection open).
    Hang,
}

/// The answers of a gateway that opens session `s1`, accepts every statement as operation
/// `o1` and closes sessions; `None` for the operation's result, which each test scripts.
fn session_routes(method: &str, path: &str) -> Option<Answer> {
    match (method, path) {
        ("POST", "/v2/sessions") => Some(Answer::Reply(200, r#"{"sessionHandle":"s1"}"#)),
        ("POST", "/v2/sessions/s1/statements") => {
            Some(Answer::Reply(200, r#"{"operationHandle":"o1"}"#))
        }
        ("DELETE", _) => Some(Answer::Reply(200, r#"{"status":"CLOSED"}"#)),
        _ => None,
    }
}

/// Starts a fake gateway on a free loopback port; `answer` maps (method, path) to a reply.
/// Returns its address.
fn fake_gateway(answer: fn(&str, &str) -> Answer) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            thread::spawn(move || serve(stream, answer));
        }
    });
    address
}

fn serve(stream: TcpStream, answer: fn(&str, &str) -> Answer) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            if header.trim().is_empty() {
                break;
            }
            if let Some(v) = header.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        let _ = reader.read_exact(&mut body);
        let mut parts = request_line.split_whitespace();
        let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        match answer(method, path) {
            Answer::Reply(status, body) => {
                let mut out = &stream;
                let _ = write!(
                    out,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
            }
            Answer::Hang => {
                thread::sleep(Duration::from_secs(600));
                return;
            }
        }
    }
}

/// A copy of examples/customer-metrics whose target's gateway is `gateway`.
fn project_with_gateway(gateway: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/customer-metrics");
    for sub in ["", "models", "tests"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        for entry in std::fs::read_dir(example.join(sub)).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_file() {
                std::fs::copy(entry.path(), dir.path().join(sub).join(entry.file_name())).unwrap();
            }
        }
    }
    let config = dir.path().join("streamform.yml");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("http://localhost:8083", gateway);
    std::fs::write(&config, text).unwrap();
    dir
}

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
        !project.join(".streamform").exists(),
        "no applied record may be written"
    );
}

#[test]
fn a_gateway_that_answers_html_is_exit_2_quoting_what_it_said() {
    let gateway =
        fake_gateway(|_, _| Answer::Reply(200, "<html>Apache Flink Web Dashboard</html>"));
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
        fake_gateway(|_, _| Answer::Reply(200, r#"{"errors":["Not found: /v2/sessions"]}"#));
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
    let gateway = fake_gateway(|_, _| Answer::Hang);
    let project = project_with_gateway(&gateway);
    let out = apply(project.path(), &["--timeout", "2"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("error: the SQL Gateway did not finish opening a session within 2s; the outcome is unknown"),
        "{err}"
    );
    assert!(err.contains("no applied record was written"), "{err}");
    no_record(project.path());
}

#[test]
fn an_operation_that_never_finishes_is_exit_2_and_writes_no_record() {
    let gateway = fake_gateway(|method, path| {
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
    let gateway = fake_gateway(|method, path| {
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
