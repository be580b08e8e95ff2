//! A client for Flink's SQL Gateway REST API (v2): sessions, closed on every path, and
//! statements run one per request, each polled until it is done.
//!
//! See docs/running-on-flink.md, "streamform apply". The REST API, as Flink 2.0's SQL
//! Gateway speaks it:
//! `POST /v2/sessions` → `sessionHandle`; `POST /v2/sessions/{s}/statements` →
//! `operationHandle`; `GET /v2/sessions/{s}/operations/{o}/result/{token}?rowFormat=JSON`
//! until it is not `NOT_READY` (an error is an HTTP 500 whose `errors` carry the Java
//! exception chain); `DELETE /v2/sessions/{s}`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use crate::generate::Statement;
use crate::http::{Answer, Connection, Endpoint, FlinkError, Result, Service};

/// The longest closing a session may take: it runs on failure paths too, where the gateway
/// may be the thing that hangs.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long to wait between polls of an operation that is not ready.
const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// A SQL Gateway at one address.
pub struct GatewayClient {
    endpoint: Endpoint,
}

impl GatewayClient {
    /// A client for the gateway at `address` (`http://` or `https://` host and port);
    /// `timeout` bounds each statement from submission to result.
    ///
    /// # Errors
    /// As [`Endpoint::new`].
    pub fn new(address: &str, connection: &Connection, timeout: Duration) -> Result<GatewayClient> {
        Ok(GatewayClient {
            endpoint: Endpoint::new(Service::Gateway, address, connection, timeout)?,
        })
    }

    /// The gateway's base address.
    pub fn address(&self) -> &str {
        self.endpoint.address()
    }

    /// The Flink version the gateway runs, as (major, minor), from its `/v2/info`; `None`
    /// when it does not say in a form read here.
    pub fn version(&self) -> Option<(u32, u32)> {
        let (_, answer) = self.endpoint.json("GET", "/v2/info", None).ok()?;
        let version = answer.get("version")?.as_str()?;
        let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
        Some((parts.next()??, parts.next()??))
    }

    /// Opens a session in streaming mode and returns its handle.
    ///
    /// # Errors
    /// Any [`FlinkError`] but `Rejected`.
    pub fn open_session(&self) -> Result<String> {
        let body =
            r#"{"sessionName":"streamform","properties":{"execution.runtime-mode":"streaming"}}"#;
        let (request, answer) = self.endpoint.json("POST", "/v2/sessions", Some(body))?;
        self.handle(&answer, "sessionHandle", &request)
    }

    /// Closes a session; errors are ignored by callers on failure paths.
    ///
    /// # Errors
    /// Any [`FlinkError`] but `Rejected`.
    pub fn close_session(&self, session: &str) -> Result<()> {
        self.endpoint
            .send_with(
                "DELETE",
                &format!("/v2/sessions/{session}"),
                None,
                CLOSE_TIMEOUT.min(self.endpoint.timeout()),
            )
            .map(|_| ())
    }

    /// Runs one statement to completion with `config` as its execution configuration (the
    /// options Flink applies to this statement only), and returns the job id Flink
    /// assigned, if any.
    ///
    /// # Errors
    /// `Rejected` with Flink's reason when the statement fails; `TimedOut` when it does not
    /// finish within the client's timeout; transport and shape errors otherwise.
    pub fn execute(
        &self,
        session: &str,
        statement: &str,
        config: &BTreeMap<String, String>,
    ) -> Result<Option<String>> {
        let started = Instant::now();
        let mut body = serde_json::json!({ "statement": statement });
        if !config.is_empty() {
            body["executionConfig"] = serde_json::json!(config);
        }
        let answer = self.endpoint.send(
            "POST",
            &format!("/v2/sessions/{session}/statements"),
            Some(&body.to_string()),
        )?;
        if answer.status == 500 {
            // Refused at submission (a parse error, say) rather than while running.
            return Err(self.endpoint.refusal(&answer));
        }
        if answer.status != 200 {
            return Err(self.endpoint.unexpected(&answer));
        }
        let json = self.endpoint.parse(&answer)?;
        let operation = self.handle(&json, "operationHandle", &answer.request)?;
        let mut path =
            format!("/v2/sessions/{session}/operations/{operation}/result/0?rowFormat=JSON");
        loop {
            let answer = self.endpoint.send("GET", &path, None)?;
            if answer.status == 500 {
                return Err(self.endpoint.refusal(&answer));
            }
            if answer.status != 200 {
                return Err(self.endpoint.unexpected(&answer));
            }
            let json = self.endpoint.parse(&answer)?;
            match json.get("resultType").and_then(Json::as_str) {
                Some("NOT_READY") => {
                    if started.elapsed() >= self.endpoint.timeout() {
                        return Err(FlinkError::TimedOut {
                            service: Service::Gateway,
                            request: "the statement".into(),
                            seconds: self.endpoint.timeout().as_secs(),
                        });
                    }
                    std::thread::sleep(POLL_INTERVAL);
                    match json.get("nextResultUri").and_then(Json::as_str) {
                        Some(next) if next.starts_with("/v2/sessions/") => path = next.to_string(),
                        Some(_) => return Err(self.endpoint.unexpected(&answer)),
                        None => {}
                    }
                }
                Some("PAYLOAD" | "EOS") => {
                    return Ok(json.get("jobID").and_then(Json::as_str).map(str::to_string));
                }
                _ => return Err(self.endpoint.unexpected(&answer)),
            }
        }
    }

    /// A session or operation handle: it goes into URLs, so only a UUID-like token is taken.
    fn handle(&self, answer: &Json, field: &str, request: &str) -> Result<String> {
        answer
            .get(field)
            .and_then(Json::as_str)
            .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
            .map(str::to_string)
            .ok_or_else(|| {
                self.endpoint.unexpected(&Answer {
                    request: request.to_string(),
                    status: 200,
                    text: answer.to_string(),
                })
            })
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

/// A statement Flink did not run: which one, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyError {
    /// The statement being run, or `None` when opening the session failed.
    pub statement: Option<Statement>,
    /// What went wrong.
    pub error: FlinkError,
}

/// One gateway session, closed when dropped (best effort: the gateway expires idle
/// sessions anyway).
pub struct Session<'c> {
    client: &'c GatewayClient,
    handle: String,
}

impl<'c> Session<'c> {
    /// Opens a session.
    ///
    /// # Errors
    /// Why it could not be opened.
    pub fn open(client: &'c GatewayClient) -> Result<Session<'c>, Box<ApplyError>> {
        let handle = client.open_session().map_err(|error| {
            Box::new(ApplyError {
                statement: None,
                error,
            })
        })?;
        Ok(Session { client, handle })
    }

    /// Runs one statement with `config` as its execution configuration and returns the
    /// job id Flink assigned, if any.
    ///
    /// # Errors
    /// The statement and why it did not run.
    pub fn run(
        &self,
        statement: &Statement,
        config: &BTreeMap<String, String>,
    ) -> Result<Option<String>, Box<ApplyError>> {
        self.client
            .execute(&self.handle, &statement.sql, config)
            .map_err(|error| {
                Box::new(ApplyError {
                    statement: Some(statement.clone()),
                    error,
                })
            })
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        let _ = self.client.close_session(&self.handle);
    }
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
}
