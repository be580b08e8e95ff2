//! `streamform apply`: build the application, submit it through the target's SQL Gateway,
//! report each statement, and write the applied record.
//!
//! Spec: the `apply` command reference (streamform-docs lines 1006-1025), the Flink backend
//! reference "streamform apply" (1286-1306), the applied record (1518-1535).

use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use streamform_db::Database;
use streamform_db::Project;
use streamform_db::db::{application_manifest, project_config};
use streamform_db::target::{Need, applied_record_path};
use streamform_flink::gateway::{ApplyError, GatewayClient, GatewayError};
use streamform_flink::{Statement, StatementKind, Subject};
use streamform_ir::record::{AppliedRecord, RECORD_VERSION};

use crate::build::{cannot_run, finding, prepare, write_atomically};
use crate::plan::compare;
use crate::{CANNOT_RUN, INVALID, OK, Output, render};

/// Runs `apply`; `root` is the project directory the record goes under. Progress lines are
/// printed as they happen; what is returned is the rest of the output and the exit code.
pub fn apply(
    db: &Database,
    project: Project,
    root: &Path,
    target: Option<&str>,
    timeout: Duration,
    color: bool,
) -> (Output, u8) {
    let (chosen, app) = match prepare(db, project, target, Need::Apply, color) {
        Ok((Some(chosen), app)) => (chosen, app),
        Ok((None, _)) => unreachable!("prepare refuses a project without a target"),
        Err(refused) => return refused,
    };
    let mut out = Output::default();
    if !app.has_sinks() {
        out.stdout = "nothing to apply: no model declares a sink\n".into();
        return (out, OK);
    }
    let compared = match compare(db, project, root, Some(&chosen), None) {
        Ok(compared) => compared,
        Err(refused) => return refused,
    };
    let mut stderr = std::io::stderr().lock();
    for w in app
        .warnings
        .iter()
        .filter(|w| w.subject != Subject::Application)
    {
        let _ = writeln!(stderr, "{}", finding(db, project, w, false, color));
    }
    for d in &compared.comparison.warnings {
        let _ = write!(stderr, "{}", render::diagnostic(db, project, d, color));
    }
    drop(stderr);

    let gateway = chosen.gateway.clone().unwrap_or_default();
    if !gateway.starts_with("http://") {
        return cannot_run(
            format!(
                "target `{}` names the SQL Gateway as `{gateway}`, but the gateway speaks plain HTTP",
                chosen.name
            ),
            Some("write `flink.gateway` as http://host:port in streamform.yml".into()),
        );
    }
    let client = match GatewayClient::new(&gateway, timeout) {
        Ok(client) => client,
        Err(e) => return gateway_failure(&e, None, &chosen.name),
    };
    let config = project_config(db, project).config.as_ref();
    let name = config.map(|c| c.name.clone()).unwrap_or_default();
    let mut stdout = std::io::stdout().lock();
    let document = &compared.document;
    let _ = writeln!(stdout, "{}", document.verdict_line());
    if !document.verdict.continues() {
        let _ = writeln!(stdout, "\n{}", document.render_text());
        let _ = writeln!(
            stdout,
            "applying anyway: apply cannot stop or restore a job yet, so the new job starts with empty state and the job already running keeps running (cancel it from the Flink UI); gate deployments on `streamform plan` instead"
        );
    }
    let _ = writeln!(
        stdout,
        "applying {name} to target `{}` ({})\n",
        chosen.name,
        client.address()
    );
    let _ = stdout.flush();
    let result = streamform_flink::gateway::apply(&client, &app, |statement, job| {
        let _ = writeln!(stdout, "ok: {}", progress_line(statement, job));
        let _ = stdout.flush();
    });
    let jobs = match result {
        Ok(jobs) => jobs,
        Err(failed) => {
            let ApplyError {
                statement, error, ..
            } = *failed;
            return gateway_failure(&error, statement.as_ref(), &chosen.name);
        }
    };
    let _ = writeln!(stdout, "\nok: applied");
    let _ = stdout.flush();

    let manifest = application_manifest(db, project)
        .clone()
        .expect("every model compiled");
    let record = AppliedRecord {
        record_version: RECORD_VERSION,
        target: chosen.name.clone(),
        applied_at: now_rfc3339(),
        streamform_version: env!("CARGO_PKG_VERSION").to_string(),
        backend: "flink".into(),
        jobs: jobs.clone(),
        manifest,
    };
    let relative = applied_record_path(&chosen.name);
    match write_atomically(&root.join(&relative), record.to_json_pretty().as_bytes()) {
        Ok(()) => {
            let _ = writeln!(stdout, "ok: applied plan recorded in {relative}");
            (out, OK)
        }
        Err(e) => {
            out.stderr = format!(
                "error: the apply succeeded (job {}), but its record could not be written to {relative}: {e}\n  help: the application is running; keep the job id above. Make {} writable before the next apply, and cancel this job first if you apply again: each apply starts a new job\n",
                jobs.join(", "),
                root.join(".streamform/applied").display()
            );
            (out, CANNOT_RUN)
        }
    }
}

/// `source orders`, `model customer_metrics`, `sink customer_metrics`,
/// `statement set → job <id>`.
fn progress_line(statement: &Statement, job: Option<&str>) -> String {
    match &statement.kind {
        StatementKind::Source(name) => format!("source {name}"),
        StatementKind::Model(name) => format!("model {name}"),
        StatementKind::Sink(name) => format!("sink {name}"),
        StatementKind::StatementSet => match job {
            Some(job) => format!("statement set → job {job}"),
            None => "statement set".into(),
        },
    }
}

/// What a statement is, for messages: `source `orders``, `the statement set`.
fn describe(statement: &Statement) -> String {
    match &statement.kind {
        StatementKind::Source(name) => format!("the table of source `{name}`"),
        StatementKind::Model(name) => format!("the view of model `{name}`"),
        StatementKind::Sink(name) => format!("the sink table of model `{name}`"),
        StatementKind::StatementSet => "the statement set".into(),
    }
}

fn gateway_failure(
    error: &GatewayError,
    statement: Option<&Statement>,
    target: &str,
) -> (Output, u8) {
    let mut stderr = String::new();
    let code = match error {
        GatewayError::Rejected { reason } => {
            let what = statement.map_or_else(|| "a statement".to_string(), describe);
            stderr.push_str(&format!("error: Flink rejected {what}\n  statement:\n"));
            for line in statement.map_or("", |s| s.sql.as_str()).lines() {
                stderr.push_str(&format!("    {line}\n"));
            }
            stderr.push_str("  reason:\n");
            for line in reason {
                stderr.push_str(&format!("    {line}\n"));
            }
            stderr.push_str(
                "  help: nothing after this statement was submitted, no job was started, and the applied record is unchanged\n",
            );
            INVALID
        }
        GatewayError::Unreachable { .. } => {
            stderr.push_str(&format!(
                "error: {error}\n  help: is Flink's SQL Gateway running there? the address is `flink.gateway` of target `{target}` in streamform.yml (integration/up starts one on this machine)\n"
            ));
            CANNOT_RUN
        }
        GatewayError::Unexpected { .. } => {
            stderr.push_str(&format!(
                "error: {error}\n  help: check that `flink.gateway` of target `{target}` is the SQL Gateway's REST address (port 8083 by default), not the Flink UI's; no applied record was written\n"
            ));
            CANNOT_RUN
        }
        GatewayError::TimedOut { seconds, .. } => {
            let what = statement.map_or_else(|| "opening a session".to_string(), describe);
            stderr.push_str(&format!(
                "error: the SQL Gateway did not finish {what} within {seconds}s; the outcome is unknown\n  help: no applied record was written; check the Flink UI for a running job before applying again, or raise --timeout\n"
            ));
            CANNOT_RUN
        }
    };
    (
        Output {
            stdout: String::new(),
            stderr,
        },
        code,
    )
}

/// Now, as RFC 3339 in UTC to the second.
fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    streamform_ir::time::format_rfc3339(secs as i64 * 1000)
}
