//! `streamform apply`: build the application, compare it with the target's record, and let
//! the lifecycle (`streamform_flink::deploy`, docs/deployment.md) decide: nothing to do,
//! start, continue from a savepoint, rebuild on request, or refuse before touching anything.
//!
//! See docs/commands.md, "streamform apply"; docs/running-on-flink.md, "streamform apply";
//! and the applied record in docs/deployment.md, "The record".

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use streamform_db::Database;
use streamform_db::Project;
use streamform_db::db::{application_manifest, application_plans, project_config};
use streamform_db::target::{Need, applied_record_path};
use streamform_flink::deploy::{Decision, Event, NotCarried, Refusal};
use streamform_flink::gateway::GatewayClient;
use streamform_ir::plan::Materialized;

use crate::build::prepare;
use crate::lifecycle::{self, Connected};
use crate::plan::compare;
use crate::{INVALID, OK, Output, render};

/// Runs `apply`; `root` is the project directory the record goes under. Progress lines are
/// printed as they happen; what is returned is the rest of the output and the exit code.
pub fn apply(
    db: &Database,
    project: Project,
    root: &Path,
    target: Option<&str>,
    timeout: Duration,
    rebuild: bool,
    color: bool,
) -> (Output, u8) {
    let (chosen, app, warnings) = match prepare(db, project, target, Need::Apply, color) {
        Ok((Some(chosen), app, warnings)) => (chosen, app, warnings),
        Ok((None, ..)) => unreachable!("prepare refuses a project without a target"),
        Err(refused) => return refused,
    };
    let mut out = Output::default();
    if !app.has_sinks() {
        out.stdout = "nothing to apply: no model declares a sink\n".into();
        let name = lifecycle::application(db, project);
        if let Ok(Some(record)) = lifecycle::read_record(root, &chosen.name, &name)
            && let Some(current) = record
                .current()
                .filter(|a| a.outcome == streamform_ir::record::Outcome::Running)
        {
            out.stdout.push_str(&format!(
                "note: job {} of the previous plan still runs on target `{}`; `streamform stop` stops it\n",
                current.job_id, chosen.name
            ));
        }
        return (out, OK);
    }
    let compared = match compare(db, project, root, Some(&chosen), None, false) {
        Ok(compared) => compared,
        Err(refused) => return refused,
    };
    let mut stderr = std::io::stderr().lock();
    // Application-wide warnings (no file) are build's to give.
    for w in warnings.iter().filter(|w| w.file.is_some()) {
        let _ = writeln!(stderr, "{}", render::diagnostic(db, w, color));
    }
    for d in &compared.comparison.warnings {
        let _ = write!(stderr, "{}", render::diagnostic(db, d, color));
    }
    drop(stderr);

    {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{}", compared.document.verdict_line());
        let _ = stdout.flush();
    }
    let name = lifecycle::application(db, project);
    let startup = chosen
        .kafka
        .as_ref()
        .map_or_else(|| "earliest".to_string(), |k| k.startup.clone());
    let connected = match lifecycle::connect_to(name.clone(), chosen, root, timeout) {
        Ok(connected) => connected,
        Err(refused) => return refused,
    };
    let target_name = connected.target.name.clone();
    let gateway = match GatewayClient::new(&connected.flink.gateway, &connected.connection, timeout)
    {
        Ok(client) => client,
        Err(e) => return lifecycle::flink_error(&e, &target_name),
    };
    let _lock = match lifecycle::lock(root, &target_name) {
        Ok(lock) => lock,
        Err(refused) => return refused,
    };
    let record = match lifecycle::read_record(root, &target_name, &connected.application) {
        Ok(record) => record,
        Err(refused) => return refused,
    };
    let mut record = lifecycle::upgraded(record, &connected);
    let relative = applied_record_path(&target_name);
    let document = &compared.document;
    let manifest = application_manifest(db, project)
        .clone()
        .expect("every model compiled");
    // Compiled plans, where both this machine and the gateway reach a folder for them.
    let folder = lifecycle::plans_folder(root, &target_name, &connected.flink);
    let models = application_plans(db, project)
        .clone()
        .expect("every model compiled");
    let read = |name: &str| {
        let Some(folder) = &folder else {
            return Err("no folder for compiled plans".to_string());
        };
        let path = folder.join(name);
        std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "the compiled plan {} cannot be read here ({e}); the SQL Gateway wrote it, so `flink.plans` must name a folder this machine and the gateway both reach",
                path.display()
            )
        })
    };
    let write = |name: &str, text: &str| {
        let Some(folder) = &folder else {
            return Err("no folder for compiled plans".to_string());
        };
        let path = folder.join(name);
        crate::build::write_atomically(&path, text.as_bytes()).map_err(|e| {
            format!(
                "the compiled plan {} cannot be written: {e}",
                path.display()
            )
        })
    };
    if let Some(folder) = &folder
        && let Err(e) = std::fs::create_dir_all(folder)
    {
        return crate::build::cannot_run(
            format!(
                "cannot make the folder of compiled plans {}: {e}",
                folder.display()
            ),
            Some("make it writable, or name another with `flink.plans`".into()),
        );
    }
    let compiling = folder
        .as_ref()
        .map(|f| streamform_flink::deploy::Compiling {
            uri: format!("file://{}", f.display()),
            read: &read,
            write: &write,
            models: &models,
        });
    let carry = lifecycle::carry(&compared.comparison.diff, compiling.is_some());
    let deployer = lifecycle::deployer(&connected, timeout, compiling);
    let mut save = lifecycle::saver(root, &target_name);
    let report = lifecycle::print_event;
    let mut header_printed = false;
    let mut report_with_header = |event: Event<'_>| {
        if !header_printed
            && matches!(
                event,
                Event::Accepted { .. } | Event::Stopping { .. } | Event::Submitting { .. }
            )
        {
            header_printed = true;
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(
                stdout,
                "applying {name} to target `{target_name}` ({})\n",
                gateway.address()
            );
            let _ = stdout.flush();
        }
        report(event);
    };
    let decision = match deployer.apply(
        &gateway,
        &mut record,
        &app,
        &manifest,
        (&carry, &compared.comparison.diff.continues),
        rebuild,
        &mut save,
        &mut report_with_header,
    ) {
        Ok(decision) => decision,
        Err(failure) => return lifecycle::failure(failure, &target_name, &relative),
    };
    match decision {
        Decision::UpToDate { job, since } => {
            out.stdout = format!(
                "nothing to apply: job {job} runs this plan (running since {})\n",
                streamform_ir::time::format_rfc3339(since - since % 1000)
            );
            (out, OK)
        }
        Decision::Refuse(refusal) => refused(refusal, document, &connected),
        Decision::Submit {
            action, stop_first, ..
        } => {
            out.stdout = "\nok: applied\n".to_string();
            out.stdout
                .push_str(&format!("ok: applied plan recorded in {relative}\n"));
            if action == streamform_ir::record::Action::Rebuild {
                out.stdout.push_str(&rebuild_notes(db, project, &startup));
                let kept = stop_first
                    .and_then(|job| record.savepoints.iter().rev().find(|s| s.job_id == job));
                let current = record.current().map(|a| a.artifact.as_str());
                match kept {
                    // The same statements, rebuilt: their older state is not brought back.
                    Some(kept) if Some(kept.artifact.as_str()) == current => {
                        out.stdout.push_str(&format!(
                            "note: the savepoint of the replaced job {}, {}, stays in the record and on disk, but no apply continues from it: these statements started empty after it\n",
                            kept.job_id, kept.path
                        ));
                    }
                    Some(kept) if !kept.artifact.is_empty() => {
                        out.stdout.push_str(&format!(
                            "note: the savepoint of the replaced job {}, {}, stays in the record: applying the previous plan again continues from it\n",
                            kept.job_id, kept.path
                        ));
                    }
                    Some(kept) => {
                        out.stdout.push_str(&format!(
                            "note: the savepoint of the replaced job {}, {}, stays on disk; that job was started before deployments were tracked, so no apply continues from it\n",
                            kept.job_id, kept.path
                        ));
                    }
                    None => {}
                }
            }
            (out, OK)
        }
    }
}

/// Why apply did nothing, and what to do: exit 1.
fn refused(
    refusal: Refusal,
    document: &streamform_ir::diff_document::DiffDocument,
    connected: &Connected,
) -> (Output, u8) {
    let mut out = Output::default();
    let verdict = document.verdict.label();
    let rebuild = "`streamform apply --rebuild` stops the job with a savepoint (kept for rollback) and starts the new plan with empty state";
    let (message, help) = match refusal {
        Refusal::Changed { job, running, why } => {
            if document.verdict > streamform_ir::diff::Classification::Compatible {
                out.stdout = format!("\n{}", document.render_text());
            }
            let nothing = if running {
                "stopped or started"
            } else {
                "started"
            };
            (
                format!(
                    "the plan changed and the state of job {job} cannot be carried into it: {}; nothing was {nothing}",
                    not_carried(&why, verdict)
                ),
                format!("{rebuild}; `streamform plan` says what a rebuild costs"),
            )
        }
        Refusal::StateLost { job, state } => (
            format!(
                "the recorded job {job} is {state} and no savepoint this plan can continue from is recorded (one taken before a --rebuild of it does not count): its state is lost"
            ),
            "`streamform apply --rebuild` starts the plan with empty state (its sources are read again from `kafka.startup`); `streamform stop` keeps a job's state for the next apply".into(),
        ),
        Refusal::NotRunning { job, state } => (
            format!("the recorded job {job} is {state}, not RUNNING; apply does not replace a job it cannot see running"),
            format!("`streamform status` shows why; {rebuild}"),
        ),
        Refusal::Others { jobs } => (
            format!(
                "{} named {} that the record does not know: {}",
                if jobs.len() == 1 { "a job runs".to_string() } else { format!("{} jobs run", jobs.len()) },
                streamform_flink::deploy::job_name(&connected.application, &connected.target.name),
                jobs.iter().map(|j| format!("{} ({})", j.id, j.state)).collect::<Vec<_>>().join(", ")
            ),
            "another copy of this target's record (another machine, another CI cache) deploys it; apply from there, or cancel those jobs in the Flink UI".into(),
        ),
        Refusal::Untracked { job, running } => (
            format!(
                "job {job} was started by an apply that did not track deployments, so which statements it {} is unknown and no plan can continue from its state",
                if running { "runs" } else { "ran" }
            ),
            if running {
                rebuild.to_string()
            } else {
                "`streamform apply --rebuild` starts the plan with empty state (its sources are read again from `kafka.startup`)".into()
            },
        ),
        Refusal::Stopping { job } => (
            format!("job {job} is being stopped with a savepoint and still runs"),
            "wait for the stop to finish (`streamform status` shows it), then apply again".into(),
        ),
    };
    out.stderr = format!(
        "error: {}\n  help: {}\n",
        streamform_ir::printable(&message),
        streamform_ir::printable(&help)
    );
    (out, INVALID)
}

/// Why a changed plan cannot continue from the recorded job's state, as `apply` and `plan`
/// say it; `verdict` is the plan diff's.
pub fn not_carried(why: &NotCarried, verdict: &str) -> String {
    match why {
        NotCarried::Verdict(_) => format!(
            "the plan diff's verdict is {verdict}, and state is carried only across SAFE and COMPATIBLE changes"
        ),
        NotCarried::Unpinned => "the job was started from statements by an earlier apply, not from a compiled plan whose operators are pinned, so Flink could not tell which state is which node's".into(),
        NotCarried::NoPlans => "the target deploys statements, because its SQL Gateway is not on this machine and it declares no `flink.plans` folder that both reach".into(),
    }
}

/// What each sink's readers see after a rebuild; `startup` is the target's
/// `kafka.startup` (where a job with empty state starts reading its sources).
fn rebuild_notes(db: &Database, project: Project, startup: &str) -> String {
    let Some(config) = project_config(db, project).config.as_ref() else {
        return String::new();
    };
    let mut notes = String::new();
    for (model, entry) in &config.models {
        if entry.sink.is_none() {
            continue;
        }
        let line = match &entry.materialized {
            Materialized::Upsert { key } => format!(
                "note: sink {model} (upsert by {}): the new job writes each key again from empty state; rows under keys the new plan no longer writes stay until compacted or deleted",
                key.join(", ")
            ),
            Materialized::Append if startup == "latest" => format!(
                "note: sink {model} (append): the new job appends after the rows already there, from what its sources receive from now on (kafka.startup: latest)"
            ),
            Materialized::Append => format!(
                "note: sink {model} (append): the new job appends after the rows already there, reading its sources from the beginning (kafka.startup: earliest), so rows already written are appended again"
            ),
        };
        notes.push_str(&line);
        notes.push('\n');
    }
    notes
}
