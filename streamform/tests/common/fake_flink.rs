//! A stateful stand-in for a Flink cluster's two REST services on one loopback port: the
//! SQL Gateway (sessions and statements) and the JobManager (jobs, checkpoints, stop with
//! savepoint). It keeps the jobs it started, honours the job id, name, tags and restore
//! path a statement set carries, and refuses a job id it has seen, as Flink does. What a
//! real cluster cannot be made to do on demand is a knob: a statement set whose result never
//! comes (the job starts all the same), a job that fails while starting, a savepoint that
//! cannot be taken, HTTPS with a self-signed certificate, a required bearer token.

use std::io::{BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::{Value, json};

/// What the statement set does.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum SetBehaviour {
    /// Starts the job and answers with its id.
    Accept,
    /// Starts the job, but its result never becomes ready.
    HangButStart,
}

/// How the cluster behaves.
#[derive(Clone)]
pub struct Behaviour {
    pub set: SetBehaviour,
    /// `Some(reason)`: every job started fails while starting, with this exception.
    pub fail_at_start: Option<&'static str>,
    /// `Some(reason)`: every savepoint fails with this exception (the job runs on).
    pub savepoint_fails: Option<&'static str>,
    /// `Some(token)`: every request needs `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Jobs start with empty state whatever savepoint they are given.
    pub ignore_restore: bool,
    /// With each statement set, a job of the same name starts too, a moment earlier (an
    /// apply from another copy of the record, at the same time).
    pub rival: bool,
    /// COMPILE PLAN writes a plan with a stateful operator no node can be found for, as
    /// Flink 2.0 does when it plans an upsert source's normalization twice.
    pub unpinnable: bool,
}

impl Default for Behaviour {
    fn default() -> Behaviour {
        Behaviour {
            set: SetBehaviour::Accept,
            fail_at_start: None,
            savepoint_fails: None,
            token: None,
            ignore_restore: false,
            rival: false,
            unpinnable: false,
        }
    }
}

/// A job the fake cluster knows.
#[derive(Clone, Debug)]
pub struct FakeJob {
    pub id: String,
    pub name: String,
    pub state: String,
    pub tags: Vec<(String, String)>,
    pub restored_from: Option<String>,
    pub failure: Option<String>,
    /// The savepoint it stopped with.
    pub savepoint: Option<String>,
}

/// What the fake cluster holds.
#[derive(Default)]
pub struct State {
    pub jobs: Vec<FakeJob>,
    /// Every request, as `METHOD /path`.
    pub requests: Vec<String>,
    /// Every `Authorization` header received.
    pub authorizations: Vec<String>,
    /// Savepoint results by trigger id: the path, or the failure.
    savepoints: Vec<(String, Result<String, String>)>,
}

/// A running fake cluster.
pub struct FakeFlink {
    /// `http://127.0.0.1:<port>` or `https://localhost:<port>`.
    pub address: String,
    pub state: Arc<Mutex<State>>,
    pub behaviour: Arc<Mutex<Behaviour>>,
}

impl FakeFlink {
    /// The jobs, as (id, state).
    pub fn jobs(&self) -> Vec<(String, String)> {
        self.state
            .lock()
            .unwrap()
            .jobs
            .iter()
            .map(|j| (j.id.clone(), j.state.clone()))
            .collect()
    }

    /// How many requests matched `prefix` (`POST /v2/sessions/s1/statements`).
    pub fn count(&self, prefix: &str) -> usize {
        self.state
            .lock()
            .unwrap()
            .requests
            .iter()
            .filter(|r| r.starts_with(prefix))
            .count()
    }

    /// Sets a job's state, as something outside streamform would (a cancel in the UI).
    pub fn set_state(&self, id: &str, state: &str) {
        let mut s = self.state.lock().unwrap();
        let job = s.jobs.iter_mut().find(|j| j.id == id).expect("the job");
        job.state = state.to_string();
    }

    /// Finishes a job with a savepoint, as a stop whose command gave up waiting would.
    pub fn finish_with_savepoint(&self, id: &str, path: &str) {
        let mut s = self.state.lock().unwrap();
        let job = s.jobs.iter_mut().find(|j| j.id == id).expect("the job");
        job.state = "FINISHED".into();
        job.savepoint = Some(path.to_string());
    }

    /// Changes how the cluster behaves from now on.
    pub fn behave(&self, change: impl FnOnce(&mut Behaviour)) {
        change(&mut self.behaviour.lock().unwrap());
    }
}

/// Starts a fake cluster on plain HTTP.
pub fn fake_flink(behaviour: Behaviour) -> FakeFlink {
    start(behaviour, None)
}

/// Starts a fake cluster on HTTPS with `certificate` (PEM) and `key` (PEM), named
/// `localhost`.
pub fn fake_flink_https(behaviour: Behaviour, certificate: &str, key: &str) -> FakeFlink {
    use rustls::pki_types::pem::PemObject;
    let certs: Vec<rustls::pki_types::CertificateDer<'static>> = rustls_pemfile_certs(certificate);
    let key = rustls::pki_types::PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .unwrap();
    start(behaviour, Some(Arc::new(config)))
}

fn rustls_pemfile_certs(pem: &str) -> Vec<rustls::pki_types::CertificateDer<'static>> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::pem_slice_iter(pem.as_bytes())
        .map(Result::unwrap)
        .collect()
}

/// A self-signed certificate for `localhost` and `127.0.0.1`: (certificate PEM, key PEM).
pub fn self_signed() -> (String, String) {
    let cert =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    (cert.cert.pem(), cert.key_pair.serialize_pem())
}

fn start(behaviour: Behaviour, tls: Option<Arc<rustls::ServerConfig>>) -> FakeFlink {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let address = match tls {
        Some(_) => format!("https://localhost:{port}"),
        None => format!("http://127.0.0.1:{port}"),
    };
    let state: Arc<Mutex<State>> = Arc::default();
    let behaviour = Arc::new(Mutex::new(behaviour));
    let (s, b) = (state.clone(), behaviour.clone());
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (s, b, tls) = (s.clone(), b.clone(), tls.clone());
            thread::spawn(move || match tls {
                Some(config) => {
                    let Ok(connection) = rustls::ServerConnection::new(config) else {
                        return;
                    };
                    serve(rustls::StreamOwned::new(connection, stream), &s, &b);
                }
                None => serve(stream, &s, &b),
            });
        }
    });
    FakeFlink {
        address,
        state,
        behaviour,
    }
}

fn serve<S: Read + Write>(stream: S, state: &Mutex<State>, behaviour: &Mutex<Behaviour>) {
    let mut reader = BufReader::new(stream);
    while let Some(request) = super::http::read_request(&mut reader) {
        let behaviour = behaviour.lock().unwrap().clone();
        let (status, answer) = {
            let mut state = state.lock().unwrap();
            state
                .requests
                .push(format!("{} {}", request.method, request.path));
            if let Some(a) = &request.authorization {
                state.authorizations.push(a.clone());
            }
            match &behaviour.token {
                Some(token)
                    if request.authorization.as_deref() != Some(&format!("Bearer {token}")) =>
                {
                    (401, json!({"errors": ["Unauthorized"]}).to_string())
                }
                _ => route(
                    &mut state,
                    &behaviour,
                    &request.method,
                    &request.path,
                    &request.body,
                ),
            }
        };
        super::http::write_response(reader.get_mut(), status, &answer);
    }
}

fn route(
    state: &mut State,
    behaviour: &Behaviour,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, String) {
    let path = path.split('?').next().unwrap_or(path);
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let ok = |v: Value| (200, v.to_string());
    match (method, segments.as_slice()) {
        ("GET", ["v2", "info"]) => ok(json!({"productName": "Apache Flink", "version": "2.0.2"})),
        ("POST", ["v2", "sessions"]) => ok(json!({"sessionHandle": "s1"})),
        ("DELETE", ["v2", "sessions", _]) => ok(json!({"status": "CLOSED"})),
        ("POST", ["v2", "sessions", _, "statements"]) => {
            let request: Value = serde_json::from_str(body).unwrap_or(Value::Null);
            let statement = request["statement"].as_str().unwrap_or("");
            // COMPILE PLAN writes a plan; this one holds no operator (the examples' plans
            // are pinned in compiled.rs, from what Flink compiled for them).
            if let Some(rest) = statement.strip_prefix("COMPILE PLAN 'file://") {
                let path = rest.split('\'').next().unwrap_or("");
                let nodes = if behaviour.unpinnable {
                    json!([{"id": 7, "type": "stream-exec-changelog-normalize_1"}])
                } else {
                    json!([])
                };
                let plan = json!({"flinkVersion": "2.0", "nodes": nodes, "edges": []});
                let _ = std::fs::write(path, plan.to_string());
                return ok(json!({"operationHandle": "ddl"}));
            }
            if !statement.contains("EXECUTE STATEMENT SET") && !statement.starts_with("EXECUTE PLAN") {
                return ok(json!({"operationHandle": "ddl"}));
            }
            let config = &request["executionConfig"];
            let id = config["$internal.pipeline.job-id"]
                .as_str()
                .unwrap_or("ffffffffffffffffffffffffffffffff")
                .to_string();
            if state.jobs.iter().any(|j| j.id == id) {
                return ok(json!({"operationHandle": "duplicate"}));
            }
            if behaviour.rival {
                state.jobs.push(FakeJob {
                    id: "00000000000000000000000000000001".into(),
                    name: config["pipeline.name"].as_str().unwrap_or("").to_string(),
                    state: "RUNNING".into(),
                    tags: Vec::new(),
                    restored_from: None,
                    failure: None,
                    savepoint: None,
                });
            }
            let tags = config["pipeline.global-job-parameters"]
                .as_str()
                .unwrap_or("")
                .split(',')
                .filter_map(|kv| kv.split_once(':'))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            state.jobs.push(FakeJob {
                id: id.clone(),
                name: config["pipeline.name"].as_str().unwrap_or("insert-into").to_string(),
                state: if behaviour.fail_at_start.is_some() {
                    "FAILED".into()
                } else {
                    "RUNNING".into()
                },
                tags,
                restored_from: config["execution.state-recovery.path"]
                    .as_str()
                    .filter(|_| !behaviour.ignore_restore)
                    .map(str::to_string),
                failure: behaviour.fail_at_start.map(str::to_string),
                savepoint: None,
            });
            match behaviour.set {
                SetBehaviour::Accept => ok(json!({"operationHandle": format!("set-{id}")})),
                SetBehaviour::HangButStart => ok(json!({"operationHandle": "hang"})),
            }
        }
        ("GET", ["v2", "sessions", _, "operations", op, "result", _]) => match *op {
            "hang" => ok(json!({"resultType": "NOT_READY"})),
            "duplicate" => (
                500,
                json!({"errors": ["Internal server error.", "<Exception on server side:\norg.apache.flink.runtime.client.DuplicateJobSubmissionException: Job has already been submitted.\n\tat a.B.c(B.java:1)\n\nEnd of exception on server side>"]}).to_string(),
            ),
            op if op.starts_with("set-") => {
                ok(json!({"resultType": "EOS", "jobID": &op["set-".len()..]}))
            }
            _ => ok(json!({"resultType": "EOS"})),
        },
        ("GET", ["jobs", "overview"]) => ok(json!({
            "jobs": state.jobs.iter().map(|j| json!({
                "jid": j.id, "name": j.name, "state": j.state, "start-time": 1_796_100_000_000i64,
            })).collect::<Vec<_>>()
        })),
        (_, ["jobs", id, rest @ ..]) => {
            let Some(index) = state.jobs.iter().position(|j| j.id == *id) else {
                return (
                    404,
                    json!({"errors": [format!("org.apache.flink.runtime.rest.NotFoundException: Job {id} not found")]}).to_string(),
                );
            };
            let job = state.jobs[index].clone();
            match (method, rest) {
                ("GET", []) => ok(json!({
                    "jid": job.id, "name": job.name, "state": job.state,
                    "start-time": 1_796_100_000_000i64,
                    "vertices": [{"status": job.state}],
                })),
                ("PATCH", []) => {
                    state.jobs[index].state = "CANCELED".into();
                    (202, "{}".into())
                }
                ("GET", ["config"]) => ok(json!({
                    "jid": job.id,
                    "execution-config": {"user-config": job.tags.iter()
                        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                        .collect::<serde_json::Map<String, Value>>()},
                })),
                ("GET", ["exceptions"]) => ok(json!({"exceptionHistory": {"entries": job.failure.iter().map(|f| json!({
                    "exceptionName": "org.apache.flink.runtime.JobException",
                    "stacktrace": format!("{f}\n\tat a.B.c(B.java:1)"),
                })).collect::<Vec<_>>()}})),
                ("GET", ["checkpoints"]) => ok(json!({"latest": {
                    "completed": null,
                    "savepoint": job.savepoint.as_ref().map(|p| json!({"latest_ack_timestamp": 1_796_100_060_000i64, "external_path": p})),
                    "restored": job.restored_from.as_ref().map(|p| json!({"is_savepoint": true, "external_path": p})),
                }})),
                ("POST", ["stop"]) => {
                    let request: Value = serde_json::from_str(body).unwrap_or(Value::Null);
                    let trigger = request["triggerId"].as_str().unwrap_or("").to_string();
                    if !state.savepoints.iter().any(|(t, _)| *t == trigger) {
                        let result = match behaviour.savepoint_fails {
                            Some(reason) => Err(reason.to_string()),
                            None => {
                                let path = format!("file:/fake/savepoints/savepoint-{}", state.savepoints.len() + 1);
                                state.jobs[index].state = "FINISHED".into();
                                state.jobs[index].savepoint = Some(path.clone());
                                Ok(path)
                            }
                        };
                        state.savepoints.push((trigger.clone(), result));
                    }
                    (202, json!({"request-id": trigger}).to_string())
                }
                ("GET", ["savepoints", trigger]) => {
                    match state.savepoints.iter().find(|(t, _)| t == trigger) {
                        Some((_, Ok(path))) => ok(json!({"status": {"id": "COMPLETED"}, "operation": {"location": path}})),
                        Some((_, Err(reason))) => ok(json!({"status": {"id": "COMPLETED"}, "operation": {"failure-cause": {"stack-trace": format!("{reason}\n\tat a.B.c(B.java:1)")}}})),
                        None => (404, "{}".into()),
                    }
                }
                _ => (404, "{}".into()),
            }
        }
        _ => (404, json!({"errors": ["Not found"]}).to_string()),
    }
}

/// A copy of examples/customer-metrics whose target's gateway and JobManager are both the
/// fake at `address`, with `extra` lines added to the target's `flink:` section.
pub fn project_on(address: &str, extra: &str) -> tempfile::TempDir {
    project_with(address, address, extra)
}

/// A copy of examples/customer-metrics whose target names `gateway` and `jobmanager`, with
/// `extra` lines added to its `flink:` section.
pub fn project_with(gateway: &str, jobmanager: &str, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/customer-metrics");
    super::copy_dir(&example, dir.path());
    let config = dir.path().join("streamform.yml");
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "      gateway: http://localhost:8083\n",
        &format!("      gateway: {gateway}\n      jobmanager: {jobmanager}\n{extra}"),
    );
    std::fs::write(&config, text).unwrap();
    dir
}
