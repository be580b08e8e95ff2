//! A client for the JobManager's REST API: what `status` observes and what `apply` and
//! `stop` need besides submitting SQL: listing jobs, one job's state, its exceptions and
//! checkpoint statistics, and stopping it with a savepoint under a trigger id Streamform
//! chose (so a retried stop joins the first one instead of taking a second savepoint).
//!
//! The endpoints, as Flink 2.0's JobManager answers them: `GET /jobs/overview`,
//! `GET /jobs/:id` (404 for an unknown id), `GET /jobs/:id/exceptions`,
//! `POST /jobs/:id/stop` with `triggerId`, `GET /jobs/:id/savepoints/:trigger`, and
//! `GET /jobs/:id/checkpoints` → `latest.restored`. What the commands ask of them is in
//! docs/deployment.md ("Jobs and the record", "`stop`", "`status`").

use std::time::{Duration, Instant};

use serde_json::Value as Json;

use crate::gateway::flink_reason;
use crate::http::{Connection, Endpoint, FlinkError, Result, Service};

/// A job as the overview lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSummary {
    /// The job id.
    pub id: String,
    /// The job's name.
    pub name: String,
    /// Flink's state: `RUNNING`, `FINISHED`, `CANCELED`, `FAILED`, `RESTARTING`, ...
    pub state: String,
    /// When it started, milliseconds since the epoch.
    pub start_time: i64,
}

impl JobSummary {
    /// Whether the job has ended for good (Flink's globally terminal states).
    pub fn is_terminal(&self) -> bool {
        is_terminal(&self.state)
    }
}

/// Whether a job state is globally terminal: the job will not run again.
pub fn is_terminal(state: &str) -> bool {
    matches!(state, "FINISHED" | "CANCELED" | "FAILED")
}

/// One job in detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobDetail {
    /// The job's summary fields.
    pub summary: JobSummary,
    /// How many of its vertices run (every subtask of the vertex `RUNNING`).
    pub vertices_running: usize,
    /// How many vertices it has.
    pub vertices: usize,
}

impl JobDetail {
    /// `RUNNING`, with every vertex running: accepted is not running.
    pub fn is_running(&self) -> bool {
        self.summary.state == "RUNNING"
            && self.vertices > 0
            && self.vertices_running == self.vertices
    }
}

/// A completed checkpoint or savepoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// When it completed, milliseconds since the epoch.
    pub time: i64,
    /// Where it was written, for a savepoint or an externalized checkpoint.
    pub path: Option<String>,
}

/// What `GET /jobs/:id/checkpoints` says about the latest snapshots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checkpoints {
    /// The latest completed checkpoint.
    pub checkpoint: Option<Snapshot>,
    /// The latest completed savepoint.
    pub savepoint: Option<Snapshot>,
    /// The savepoint the job was restored from, when it was.
    pub restored_from: Option<String>,
}

/// Where a stop with a savepoint stands.
enum SavepointStatus {
    /// Still being taken.
    InProgress,
    /// Taken, at this path; the job has stopped or is stopping.
    Done(String),
    /// Not taken: Flink's reason. The job runs on.
    Failed(Vec<String>),
}

/// How long to wait between polls.
const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// The JobManager's REST API at one address.
pub struct JobManager {
    endpoint: Endpoint,
}

impl JobManager {
    /// A client for the REST API at `address`; `timeout` bounds each request.
    ///
    /// # Errors
    /// As [`Endpoint::new`].
    pub fn new(address: &str, connection: &Connection, timeout: Duration) -> Result<JobManager> {
        Ok(JobManager {
            endpoint: Endpoint::new(Service::JobManager, address, connection, timeout)?,
        })
    }

    /// The base address.
    pub fn address(&self) -> &str {
        self.endpoint.address()
    }

    /// Every job the cluster knows, running or ended (until it forgets them).
    ///
    /// # Errors
    /// Transport failures and answers of another shape.
    pub fn overview(&self) -> Result<Vec<JobSummary>> {
        let (request, json) = self.endpoint.json("GET", "/jobs/overview", None)?;
        let jobs = json
            .get("jobs")
            .and_then(Json::as_array)
            .ok_or_else(|| self.shape(&request, &json))?;
        jobs.iter()
            .map(|j| summary(j).ok_or_else(|| self.shape(&request, j)))
            .collect()
    }

    /// One job, or `None` when the cluster does not know its id (never submitted, or
    /// forgotten since).
    ///
    /// # Errors
    /// Transport failures and answers of another shape.
    pub fn job(&self, id: &str) -> Result<Option<JobDetail>> {
        let answer = self.endpoint.send("GET", &format!("/jobs/{id}"), None)?;
        if answer.status == 404 {
            return Ok(None);
        }
        if answer.status != 200 {
            return Err(self.endpoint.unexpected(&answer));
        }
        let json = self.endpoint.parse(&answer)?;
        let summary = summary(&json).ok_or_else(|| self.shape(&answer.request, &json))?;
        let vertices = json.get("vertices").and_then(Json::as_array);
        let (vertices_running, vertices) = vertices.map_or((0, 0), |v| {
            let running = v
                .iter()
                .filter(|v| v.get("status").and_then(Json::as_str) == Some("RUNNING"))
                .count();
            (running, v.len())
        });
        Ok(Some(JobDetail {
            summary,
            vertices_running,
            vertices,
        }))
    }

    /// The job's tags (`pipeline.global-job-parameters`), as Flink reports them.
    ///
    /// # Errors
    /// Transport failures and answers of another shape.
    pub fn tags(&self, id: &str) -> Result<Vec<(String, String)>> {
        let (_, json) = self
            .endpoint
            .json("GET", &format!("/jobs/{id}/config"), None)?;
        let tags = json
            .get("execution-config")
            .and_then(|c| c.get("user-config"))
            .and_then(Json::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        Ok(tags)
    }

    /// Why the job failed: the message lines of its newest exception, if it has one.
    ///
    /// # Errors
    /// Transport failures and answers of another shape.
    pub fn failure(&self, id: &str) -> Result<Option<Vec<String>>> {
        let (_, json) = self
            .endpoint
            .json("GET", &format!("/jobs/{id}/exceptions"), None)?;
        let newest = json
            .get("exceptionHistory")
            .and_then(|h| h.get("entries"))
            .and_then(Json::as_array)
            .and_then(|e| e.first());
        let Some(entry) = newest else {
            return Ok(None);
        };
        let trace = entry
            .get("stacktrace")
            .and_then(Json::as_str)
            .or_else(|| entry.get("exceptionName").and_then(Json::as_str))
            .unwrap_or("");
        let lines: Vec<String> = flink_reason(&[trace.to_string()])
            .into_iter()
            .map(|l| self.endpoint.redact(&l))
            .collect();
        Ok((!lines.is_empty()).then_some(lines))
    }

    /// Cancels the job (no savepoint).
    ///
    /// # Errors
    /// Transport failures and an answer other than 202.
    pub fn cancel(&self, id: &str) -> Result<()> {
        let answer = self
            .endpoint
            .send("PATCH", &format!("/jobs/{id}?mode=cancel"), None)?;
        if answer.status == 202 || answer.status == 200 {
            Ok(())
        } else {
            Err(self.endpoint.unexpected(&answer))
        }
    }

    /// The job's latest checkpoint, savepoint and restore.
    ///
    /// # Errors
    /// Transport failures and answers of another shape.
    pub fn checkpoints(&self, id: &str) -> Result<Checkpoints> {
        let answer = self
            .endpoint
            .send("GET", &format!("/jobs/{id}/checkpoints"), None)?;
        if answer.status == 404 {
            return Ok(Checkpoints::default());
        }
        if answer.status != 200 {
            return Err(self.endpoint.unexpected(&answer));
        }
        let json = self.endpoint.parse(&answer)?;
        let latest = json.get("latest");
        let snapshot = |field: &str| {
            let s = latest?.get(field)?;
            if s.is_null() {
                return None;
            }
            Some(Snapshot {
                time: s
                    .get("latest_ack_timestamp")
                    .and_then(Json::as_i64)
                    .unwrap_or(0),
                path: s
                    .get("external_path")
                    .and_then(Json::as_str)
                    .filter(|p| !p.is_empty() && *p != "<checkpoint-not-externally-addressable>")
                    .map(str::to_string),
            })
        };
        let restored_from = latest
            .and_then(|l| l.get("restored"))
            .filter(|r| r.get("is_savepoint").and_then(Json::as_bool) == Some(true))
            .and_then(|r| r.get("external_path"))
            .and_then(Json::as_str)
            .map(str::to_string);
        Ok(Checkpoints {
            checkpoint: snapshot("completed"),
            savepoint: snapshot("savepoint"),
            restored_from,
        })
    }

    /// Stops the job with a savepoint in `directory` (the cluster's default when `None`),
    /// without draining (open windows are not fired), under `trigger`: asking again with
    /// the same trigger joins the same stop. Waits up to `wait` for the savepoint and
    /// returns where it was written.
    ///
    /// # Errors
    /// `Rejected` with Flink's reason when the savepoint cannot be taken (the job keeps
    /// running); `TimedOut` when it is not done within `wait` (the outcome is unknown);
    /// transport failures and answers of another shape.
    pub fn stop_with_savepoint(
        &self,
        id: &str,
        directory: Option<&str>,
        trigger: &str,
        wait: Duration,
    ) -> Result<String> {
        let started = Instant::now();
        // A stop under this trigger may have been asked for before (a command that gave up
        // waiting): join it, or take its result. Flink keeps a failed result for minutes,
        // so after a failure a new trigger asks again.
        let mut trigger = trigger.to_string();
        let earlier = self.savepoint_status(id, &trigger)?;
        match earlier {
            Some(SavepointStatus::Done(location)) => return Ok(location),
            Some(SavepointStatus::InProgress) => {
                return self.wait_for_savepoint(id, &trigger, started, wait);
            }
            Some(SavepointStatus::Failed(_)) => {
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos());
                trigger = format!(
                    "{:032x}",
                    (nanos ^ u128::from_str_radix(&trigger, 16).unwrap_or(0))
                );
            }
            None => {}
        }
        let trigger = trigger.as_str();
        let mut body = serde_json::json!({
            "drain": false,
            "formatType": "CANONICAL",
            "triggerId": trigger,
        });
        if let Some(directory) = directory {
            body["targetDirectory"] = Json::String(directory.to_string());
        }
        let answer =
            self.endpoint
                .send("POST", &format!("/jobs/{id}/stop"), Some(&body.to_string()))?;
        if answer.status == 400 || answer.status == 404 || answer.status == 409 {
            // A refusal before anything happened: no savepoint directory, an unknown job.
            return Err(self.endpoint.refusal(&answer));
        }
        if answer.status != 202 && answer.status != 200 {
            return Err(self.endpoint.unexpected(&answer));
        }
        self.wait_for_savepoint(id, trigger, started, wait)
    }

    /// Polls the stop under `trigger` until it is done or `wait` has passed since `started`.
    fn wait_for_savepoint(
        &self,
        id: &str,
        trigger: &str,
        started: Instant,
        wait: Duration,
    ) -> Result<String> {
        loop {
            match self.savepoint_status(id, trigger)? {
                Some(SavepointStatus::Done(location)) => return Ok(location),
                Some(SavepointStatus::Failed(reason)) => {
                    return Err(FlinkError::Rejected { reason });
                }
                Some(SavepointStatus::InProgress) | None => {
                    if started.elapsed() >= wait {
                        return Err(FlinkError::TimedOut {
                            service: Service::JobManager,
                            request: "the savepoint".into(),
                            seconds: wait.as_secs(),
                        });
                    }
                    std::thread::sleep(POLL_INTERVAL);
                }
            }
        }
    }

    /// What Flink says about the stop under `trigger`: `None` when it knows of none.
    fn savepoint_status(&self, id: &str, trigger: &str) -> Result<Option<SavepointStatus>> {
        let answer =
            self.endpoint
                .send("GET", &format!("/jobs/{id}/savepoints/{trigger}"), None)?;
        if answer.status == 404 {
            return Ok(None);
        }
        if answer.status != 200 {
            return Err(self.endpoint.unexpected(&answer));
        }
        let json = self.endpoint.parse(&answer)?;
        match json
            .get("status")
            .and_then(|s| s.get("id"))
            .and_then(Json::as_str)
        {
            Some("COMPLETED") => {
                let operation = json.get("operation");
                if let Some(location) = operation
                    .and_then(|o| o.get("location"))
                    .and_then(Json::as_str)
                {
                    // A path with a control character would be a lie, and unrecordable.
                    if location.chars().any(char::is_control) || location.is_empty() {
                        return Err(self.shape(&answer.request, &json));
                    }
                    return Ok(Some(SavepointStatus::Done(location.to_string())));
                }
                let cause = operation
                    .and_then(|o| o.get("failure-cause"))
                    .and_then(|c| c.get("stack-trace"))
                    .and_then(Json::as_str)
                    .unwrap_or("the savepoint failed without a reason");
                let reason: Vec<String> = flink_reason(&[cause.to_string()])
                    .into_iter()
                    .map(|l| self.endpoint.redact(&l))
                    .collect();
                Ok(Some(SavepointStatus::Failed(reason)))
            }
            Some("IN_PROGRESS") => Ok(Some(SavepointStatus::InProgress)),
            _ => Err(self.shape(&answer.request, &json)),
        }
    }

    fn shape(&self, request: &str, json: &Json) -> FlinkError {
        self.endpoint.unexpected(&crate::http::Answer {
            request: request.to_string(),
            status: 200,
            text: json.to_string(),
        })
    }
}

fn summary(json: &Json) -> Option<JobSummary> {
    let id = json.get("jid").and_then(Json::as_str)?;
    Some(JobSummary {
        id: id.to_string(),
        name: json.get("name").and_then(Json::as_str)?.to_string(),
        state: json.get("state").and_then(Json::as_str)?.to_string(),
        start_time: json.get("start-time").and_then(Json::as_i64).unwrap_or(0),
    })
}
