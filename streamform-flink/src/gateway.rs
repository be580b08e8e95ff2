//! A client for Flink's SQL Gateway REST API (v2), and `apply`: submit an application's
//! statements in order, one per request, inside one session that is always closed.
//!
//! Spec: Flink backend reference, "streamform apply" (streamform-docs lines 1286-1306);
//! the REST API as verified in ../shared/research/flink-kafka-local.md §1:
//! `POST /v2/sessions` → `sessionHandle`; `POST /v2/sessions/{s}/statements` →
//! `operationHandle`; `GET /v2/sessions/{s}/operations/{o}/result/{token}?rowFormat=JSON`
//! until it is not `NOT_READY` (an error is an HTTP 500 whose `errors` carry the Java
//! exception chain); `DELETE /v2/sessions/{s}`.

use std::fmt;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use crate::generate::{Application, Statement};

/// Why talking to the gateway failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GatewayError {
    /// Nothing answered at the address (connection refused, unknown host, ...).
    Unreachable {
        /// The gateway's base address, e.g. `http://localhost:8083`.
        address: String,
        /// The transport error.
        reason: String,
    },
    /// The gateway answered, but not with the JSON this client expects.
    Unexpected {
        /// The request, e.g. `POST /v2/sessions`.
        request: String,
        /// The HTTP status.
        status: u16,
        /// The start of what it said.
        body: String,
    },
    /// Flink refused the statement; the message lines of its exception chain.
    Rejected {
        /// One line per message line, without stack frames or the gateway's wrappers.
        reason: Vec<String>,
    },
    /// No answer within the time allowed; the outcome is unknown.
    TimedOut {
        /// The request that did not finish, e.g. `POST /v2/sessions/…/statements`.
        request: String,
        /// The time allowed, in seconds.
        seconds: u64,
    },
}

impl fmt::Display for GatewayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GatewayError::Unreachable { address, reason } => {
                write!(f, "cannot reach the SQL Gateway at {address}: {reason}")
            }
            GatewayError::Unexpected {
                request,
                status,
                body,
            } => write!(
                f,
                "the SQL Gateway answered {request} with HTTP {status} and something other than the expected JSON: {body}"
            ),
            GatewayError::Rejected { reason } => write!(f, "{}", reason.join("\n")),
            GatewayError::TimedOut { request, seconds } => {
                write!(
                    f,
                    "the SQL Gateway did not finish {request} within {seconds}s"
                )
            }
        }
    }
}

impl std::error::Error for GatewayError {}

/// A SQL Gateway at one address.
pub struct GatewayClient {
    address: String,
    agent: ureq::Agent,
    timeout: Duration,
}

/// The longest closing a session may take: it runs on failure paths too, where the gateway
/// may be the thing that hangs.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long to wait between polls of an operation that is not ready.
const POLL_INTERVAL: Duration = Duration::from_millis(100);
/// How much of an unexpected answer an error quotes.
const QUOTED_BYTES: usize = 300;

impl GatewayClient {
    /// A client for the gateway at `address` (`http://host:port`); `timeout` bounds each
    /// statement from submission to result.
    ///
    /// # Errors
    /// `Unreachable` when the address is not plain `http://` (the gateway speaks plain HTTP).
    pub fn new(address: &str, timeout: Duration) -> Result<GatewayClient, GatewayError> {
        let address = address.trim_end_matches('/').to_string();
        if !address.starts_with("http://") {
            return Err(GatewayError::Unreachable {
                reason: "the address must start with http:// (the SQL Gateway speaks plain HTTP)"
                    .into(),
                address,
            });
        }
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .build()
            .into();
        Ok(GatewayClient {
            address,
            agent,
            timeout,
        })
    }

    /// The gateway's base address.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Opens a session in streaming mode and returns its handle.
    ///
    /// # Errors
    /// Any [`GatewayError`] but `Rejected`.
    pub fn open_session(&self) -> Result<String, GatewayError> {
        let body =
            r#"{"sessionName":"streamform","properties":{"execution.runtime-mode":"streaming"}}"#;
        let (request, answer) = self.call("POST", "/v2/sessions", Some(body))?;
        string_field(&answer, "sessionHandle", &request)
    }

    /// Closes a session; errors are ignored by callers on failure paths.
    ///
    /// # Errors
    /// Any [`GatewayError`] but `Rejected`.
    pub fn close_session(&self, session: &str) -> Result<(), GatewayError> {
        self.raw_with(
            "DELETE",
            &format!("/v2/sessions/{session}"),
            None,
            CLOSE_TIMEOUT.min(self.timeout),
        )
        .map(|_| ())
    }

    /// Runs one statement to completion and returns the job id Flink assigned, if any.
    ///
    /// # Errors
    /// `Rejected` with Flink's reason when the statement fails; `TimedOut` when it does not
    /// finish within the client's timeout; transport and shape errors otherwise.
    pub fn execute(&self, session: &str, statement: &str) -> Result<Option<String>, GatewayError> {
        let started = Instant::now();
        let body = serde_json::json!({ "statement": statement }).to_string();
        let (request, status, text) = self.raw(
            "POST",
            &format!("/v2/sessions/{session}/statements"),
            Some(&body),
        )?;
        if status == 500 {
            // Refused at submission (a parse error, say) rather than while running.
            return Err(rejection(&request, status, &text));
        }
        let (request, answer) = ok_json(request, status, &text)?;
        let operation = string_field(&answer, "operationHandle", &request)?;
        let mut path =
            format!("/v2/sessions/{session}/operations/{operation}/result/0?rowFormat=JSON");
        loop {
            let (request, status, text) = self.raw("GET", &path, None)?;
            if status == 500 {
                return Err(rejection(&request, status, &text));
            }
            let answer = parse(&request, status, &text)?;
            match answer.get("resultType").and_then(Json::as_str) {
                Some("NOT_READY") => {
                    if started.elapsed() >= self.timeout {
                        return Err(GatewayError::TimedOut {
                            request: "the statement".into(),
                            seconds: self.timeout.as_secs(),
                        });
                    }
                    std::thread::sleep(POLL_INTERVAL);
                    match answer.get("nextResultUri").and_then(Json::as_str) {
                        Some(next) if next.starts_with("/v2/sessions/") => path = next.to_string(),
                        Some(_) => {
                            return Err(GatewayError::Unexpected {
                                request,
                                status,
                                body: quote(&text),
                            });
                        }
                        None => {}
                    }
                }
                Some("PAYLOAD" | "EOS") => {
                    return Ok(answer
                        .get("jobID")
                        .and_then(Json::as_str)
                        .map(str::to_string));
                }
                _ => {
                    return Err(GatewayError::Unexpected {
                        request,
                        status,
                        body: quote(&text),
                    });
                }
            }
        }
    }

    /// One request whose answer must be a JSON object with HTTP 200.
    fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> Result<(String, Json), GatewayError> {
        let (request, status, text) = self.raw(method, path, body)?;
        ok_json(request, status, &text)
    }

    /// One request: its name for messages, the status and the body text.
    fn raw(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> Result<(String, u16, String), GatewayError> {
        self.raw_with(method, path, body, self.timeout)
    }

    fn raw_with(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
        timeout: Duration,
    ) -> Result<(String, u16, String), GatewayError> {
        let url = format!("{}{path}", self.address);
        let request = format!("{method} {}", path.split('?').next().unwrap_or(path));
        let result = match (method, body) {
            ("POST", Some(b)) => self
                .agent
                .post(&url)
                .config()
                .timeout_global(Some(timeout))
                .build()
                .header("Content-Type", "application/json")
                .send(b),
            ("DELETE", _) => self
                .agent
                .delete(&url)
                .config()
                .timeout_global(Some(timeout))
                .build()
                .call(),
            _ => self
                .agent
                .get(&url)
                .config()
                .timeout_global(Some(timeout))
                .build()
                .call(),
        };
        let mut response = result.map_err(|e| self.transport_error(&request, e, timeout))?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .read_to_string()
            .map_err(|e| self.transport_error(&request, e, timeout))?;
        Ok((request, status, text))
    }

    fn transport_error(&self, request: &str, e: ureq::Error, timeout: Duration) -> GatewayError {
        match e {
            ureq::Error::Timeout(_) => GatewayError::TimedOut {
                request: request.to_string(),
                seconds: timeout.as_secs(),
            },
            ureq::Error::Io(_) | ureq::Error::ConnectionFailed | ureq::Error::HostNotFound => {
                GatewayError::Unreachable {
                    address: self.address.clone(),
                    reason: e.to_string(),
                }
            }
            // Anything else happened after the gateway answered: an answer too large, a
            // malformed response, a redirect this client does not follow.
            other => GatewayError::Unexpected {
                request: request.to_string(),
                status: 0,
                body: other.to_string(),
            },
        }
    }
}

/// An answer that must be HTTP 200 with a JSON object.
fn ok_json(request: String, status: u16, text: &str) -> Result<(String, Json), GatewayError> {
    if status != 200 {
        return Err(GatewayError::Unexpected {
            request,
            status,
            body: quote(text),
        });
    }
    let answer = parse(&request, status, text)?;
    Ok((request, answer))
}

fn parse(request: &str, status: u16, text: &str) -> Result<Json, GatewayError> {
    match serde_json::from_str::<Json>(text) {
        Ok(v) if v.is_object() => Ok(v),
        _ => Err(GatewayError::Unexpected {
            request: request.to_string(),
            status,
            body: quote(text),
        }),
    }
}

/// A session or operation handle: it goes into URLs, so only a UUID-like token is taken.
fn string_field(answer: &Json, field: &str, request: &str) -> Result<String, GatewayError> {
    answer
        .get(field)
        .and_then(Json::as_str)
        .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        .map(str::to_string)
        .ok_or_else(|| GatewayError::Unexpected {
            request: request.to_string(),
            status: 200,
            body: quote(&answer.to_string()),
        })
}

fn quote(text: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        return "(an empty body)".into();
    }
    match text.char_indices().nth(QUOTED_BYTES) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// A failed operation: HTTP 500 with `{"errors": [...]}` holding the exception chain.
fn rejection(request: &str, status: u16, text: &str) -> GatewayError {
    let errors: Option<Vec<String>> = serde_json::from_str::<Json>(text)
        .ok()
        .and_then(|v| v.get("errors").cloned())
        .and_then(|e| serde_json::from_value(e).ok());
    match errors.map(|e| flink_reason(&e)) {
        Some(reason) if !reason.is_empty() => GatewayError::Rejected { reason },
        _ => GatewayError::Unexpected {
            request: request.to_string(),
            status,
            body: quote(text),
        },
    }
}

/// The message lines of a Java exception chain as the gateway reports it: no stack frames,
/// no `Caused by: ` prefixes, no gateway wrappers (`Internal server error.`, the
/// `<Exception on server side:` frame, `SqlGatewayException` and the `Failed to execute
/// the operation` `SqlExecutionException`), each distinct message once.
pub fn flink_reason(errors: &[String]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut skipping_wrapper = false;
    for error in errors {
        for raw in error.lines() {
            let line = raw.trim_end();
            let trimmed = line.trim_start();
            if trimmed.is_empty()
                || trimmed == "Internal server error."
                || trimmed.starts_with("<Exception on server side:")
                || trimmed.starts_with("End of exception on server side")
                || trimmed.starts_with("at ")
                || (trimmed.starts_with("... ") && trimmed.ends_with(" more"))
            {
                continue;
            }
            let header = trimmed.strip_prefix("Caused by: ").unwrap_or(trimmed);
            let is_header = is_exception_header(header);
            if is_header {
                skipping_wrapper = header.contains("SqlGatewayException")
                    || header.contains("Failed to execute the operation")
                    || header.contains("Failed to fetchResults");
            }
            if skipping_wrapper {
                continue;
            }
            let text = if is_header {
                header.to_string()
            } else {
                line.to_string()
            };
            if !lines.contains(&text) {
                lines.push(text);
            }
        }
    }
    lines
}

/// `org.apache.flink.table.api.ValidationException: ...`: a qualified class name, then `:`.
fn is_exception_header(line: &str) -> bool {
    let name = line.split(':').next().unwrap_or("");
    !name.contains(' ')
        && name.contains('.')
        && name
            .rsplit('.')
            .next()
            .is_some_and(|c| c.ends_with("Exception") || c.ends_with("Error"))
}

/// Why [`apply`] stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyError {
    /// The statement being run, or `None` when opening the session failed.
    pub statement: Option<Statement>,
    /// What went wrong.
    pub error: GatewayError,
    /// Job ids Flink had already assigned (none unless the statement set ran).
    pub jobs: Vec<String>,
}

/// Submits every statement of `app` in order in one session, calling `progress` after each
/// one with the job id Flink assigned (if any), and closes the session on every path.
///
/// # Errors
/// The statement that failed and why; statements after it were not submitted.
pub fn apply(
    client: &GatewayClient,
    app: &Application,
    mut progress: impl FnMut(&Statement, Option<&str>),
) -> Result<Vec<String>, Box<ApplyError>> {
    let session = client.open_session().map_err(|error| {
        Box::new(ApplyError {
            statement: None,
            error,
            jobs: Vec::new(),
        })
    })?;
    let mut jobs = Vec::new();
    let mut outcome = Ok(());
    for statement in &app.statements {
        match client.execute(&session, &statement.sql) {
            Ok(job) => {
                progress(statement, job.as_deref());
                jobs.extend(job);
            }
            Err(error) => {
                outcome = Err(Box::new(ApplyError {
                    statement: Some(statement.clone()),
                    error,
                    jobs: jobs.clone(),
                }));
                break;
            }
        }
    }
    // Closing is best effort: the gateway expires idle sessions anyway, and the outcome
    // of the statements is already known.
    let _ = client.close_session(&session);
    outcome.map(|()| jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_message_lines_of_an_exception_chain() {
        let errors = vec![
            "Internal server error.".to_string(),
            "<Exception on server side:\norg.apache.flink.table.gateway.api.utils.SqlGatewayException: org.apache.flink.table.gateway.api.utils.SqlGatewayException: Failed to fetchResults.\n\tat org.apache.flink.table.gateway.rest.handler.statement.FetchResultsHandler.handleRequest(FetchResultsHandler.java:91)\nCaused by: org.apache.flink.table.gateway.api.utils.SqlGatewayException: Failed to fetchResults.\n\t... 48 more\nCaused by: org.apache.flink.table.gateway.service.utils.SqlExecutionException: Failed to execute the operation 2b7e.\n\tat org.apache.flink.table.gateway.service.operation.OperationManager.processThrowable(OperationManager.java:414)\nCaused by: org.apache.flink.table.api.ValidationException: SQL validation failed. From line 1, column 8 to line 1, column 16: Column 'nosuch' not found in any table\n\tat org.apache.flink.table.planner.calcite.FlinkPlannerImpl.validate(FlinkPlannerImpl.scala:200)\n\t... 12 more\nCaused by: org.apache.calcite.runtime.CalciteContextException: From line 1, column 8 to line 1, column 16: Column 'nosuch' not found in any table\n\tat sun.reflect.X.y(Unknown Source)\n\nEnd of exception on server side>".to_string(),
        ];
        assert_eq!(
            flink_reason(&errors),
            [
                "org.apache.flink.table.api.ValidationException: SQL validation failed. From line 1, column 8 to line 1, column 16: Column 'nosuch' not found in any table",
                "org.apache.calcite.runtime.CalciteContextException: From line 1, column 8 to line 1, column 16: Column 'nosuch' not found in any table",
            ]
        );
    }

    #[test]
    fn keeps_continuation_lines_of_a_multi_line_message() {
        let errors = vec![
            "org.apache.flink.table.api.ValidationException: The options of following hints cannot match the name of input tables or views: \n`nosuch` in `STATE_TTL`\n\tat a.b.C.d(C.java:1)".to_string(),
        ];
        assert_eq!(
            flink_reason(&errors),
            [
                "org.apache.flink.table.api.ValidationException: The options of following hints cannot match the name of input tables or views:",
                "`nosuch` in `STATE_TTL`",
            ]
        );
    }

    #[test]
    fn refuses_an_address_that_is_not_plain_http() {
        let err = GatewayClient::new("https://gateway:8083", Duration::from_secs(1))
            .err()
            .expect("https is refused");
        assert!(err.to_string().contains("must start with http://"), "{err}");
    }
}
