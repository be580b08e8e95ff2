//! A scripted stand-in for Flink's SQL Gateway: a small HTTP server on a free loopback port
//! whose answers each test chooses, for what a real gateway cannot be made to do on demand
//! (a garbled answer, a hang, an operation that never finishes) and for apply's output
//! when every statement is accepted.

use std::io::BufReader;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// What the fake gateway does with one request.
pub enum Answer {
    /// Reply with this status and body.
    Reply(u16, &'static str),
    /// Never reply (hold the connection open).
    Hang,
}

/// How a test scripts the gateway: (method, path, body) to an answer.
pub type Script = fn(&str, &str, &str) -> Answer;

/// The answers of a gateway that opens session `s1`, accepts every statement as operation
/// `o1` (the statement set as operation `set`) and closes sessions; `None` for the
/// operations' results, which each test scripts.
pub fn session_routes(method: &str, path: &str) -> Option<Answer> {
    match (method, path) {
        ("POST", "/v2/sessions") => Some(Answer::Reply(200, r#"{"sessionHandle":"s1"}"#)),
        ("POST", "/v2/sessions/s1/statements") => {
            Some(Answer::Reply(200, r#"{"operationHandle":"o1"}"#))
        }
        ("DELETE", _) => Some(Answer::Reply(200, r#"{"status":"CLOSED"}"#)),
        _ => None,
    }
}

/// The job id the accepting gateway gives the statement set.
pub const JOB_ID: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";

/// A gateway that accepts every statement: the statement set's result carries [`JOB_ID`].
pub fn accepting(method: &str, path: &str, body: &str) -> Answer {
    match (method, path) {
        ("POST", "/v2/sessions/s1/statements") if body.contains("EXECUTE STATEMENT SET") => {
            Answer::Reply(200, r#"{"operationHandle":"set"}"#)
        }
        (_, p) if p.starts_with("/v2/sessions/s1/operations/set/") => Answer::Reply(
            200,
            r#"{"resultType":"EOS","jobID":"0f1e2d3c4b5a69788796a5b4c3d2e1f0"}"#,
        ),
        (_, p) if p.starts_with("/v2/sessions/s1/operations/o1/") => {
            Answer::Reply(200, r#"{"resultType":"EOS"}"#)
        }
        _ => session_routes(method, path).unwrap_or(Answer::Reply(404, "{}")),
    }
}

/// A running fake gateway.
pub struct FakeGateway {
    /// `http://127.0.0.1:<port>`.
    pub address: String,
    /// Every request it received, as `METHOD /path`.
    pub requests: Arc<Mutex<Vec<String>>>,
}

impl std::ops::Deref for FakeGateway {
    type Target = str;
    fn deref(&self) -> &str {
        &self.address
    }
}

/// Starts a fake gateway on a free loopback port that answers as `script` says.
pub fn fake_gateway(script: Script) -> FakeGateway {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let requests: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = requests.clone();
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let log = log.clone();
            thread::spawn(move || serve(stream, script, &log));
        }
    });
    FakeGateway { address, requests }
}

fn serve(stream: TcpStream, script: Script, log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    while let Some(request) = super::http::read_request(&mut reader) {
        log.lock()
            .unwrap()
            .push(format!("{} {}", request.method, request.path));
        match script(&request.method, &request.path, &request.body) {
            Answer::Reply(status, body) => {
                super::http::write_response(&mut &stream, status, body);
            }
            Answer::Hang => {
                thread::sleep(Duration::from_secs(600));
                return;
            }
        }
    }
}

/// A copy of examples/customer-metrics whose target's gateway is `gateway`, and whose
/// JobManager is a well-behaved fake cluster with no jobs.
pub fn project_with_gateway(gateway: &str) -> tempfile::TempDir {
    let jobmanager = super::fake_flink::fake_flink(super::fake_flink::Behaviour::default());
    super::fake_flink::project_with(gateway, &jobmanager.address, "")
}
