//! What `apply`, `stop` and `status` share: connecting to the target's Flink (its CA file
//! and credential), reading and writing the target's record, the single-writer lock, and
//! rendering the lifecycle's events and failures. The rules themselves live in
//! `streamform_flink::deploy`.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use streamform_db::config::{Auth, FlinkTarget};
use streamform_db::db::{FileContents, project_config};
use streamform_db::target::{ChosenTarget, Need, applied_record_path, choose_target, lock_path};
use streamform_db::{Database, Project};
use streamform_flink::deploy::{Carry, Deployer, Event, Failure, NotCarried, Step};
use streamform_flink::gateway::ApplyError;
use streamform_flink::http::{Connection, Credential, FlinkError, Service};
use streamform_flink::jobs::JobManager;
use streamform_flink::{Statement, StatementKind};
use streamform_ir::record::{Action, AppliedRecord, Foreign, Running};

use crate::build::{cannot_run, write_atomically};
use crate::{CANNOT_RUN, INVALID, Output};

/// The target a lifecycle command acts on, connected.
pub struct Connected {
    pub target: ChosenTarget,
    pub flink: FlinkTarget,
    pub application: String,
    pub connection: Connection,
    pub jobs: JobManager,
}

/// Chooses the target (no compiled plan needed) and connects to its JobManager.
pub fn connect(
    db: &Database,
    project: Project,
    root: &Path,
    target: Option<&str>,
    timeout: Duration,
    color: bool,
) -> Result<Connected, (Output, u8)> {
    let (application, chosen) = choose(db, project, target, color)?;
    connect_to(application, chosen, root, timeout)
}

/// The project's name and the target a lifecycle command acts on (no compiled plan
/// needed); streamform.yml's errors first, since a target with an error is left out.
pub fn choose(
    db: &Database,
    project: Project,
    target: Option<&str>,
    color: bool,
) -> Result<(String, ChosenTarget), (Output, u8)> {
    let read = project_config(db, project);
    // A target with an error is left out of the configuration; say why rather than that
    // there is no such target.
    let errors: Vec<_> = read
        .diagnostics
        .iter()
        .filter(|d| d.severity == streamform_db::Severity::Error)
        .collect();
    if !errors.is_empty() {
        let mut stderr: String = errors
            .iter()
            .map(|d| crate::render::diagnostic(db, d, color))
            .collect();
        stderr.push_str(
            "error: streamform.yml has errors; fix them first (`streamform check` lists them)\n",
        );
        return Err((
            Output {
                stdout: String::new(),
                stderr,
            },
            CANNOT_RUN,
        ));
    }
    let config = read
        .config
        .as_ref()
        .expect("with_project checked the configuration");
    let chosen = match choose_target(config, target, Need::Apply, &[]) {
        Ok(Some(chosen)) => chosen,
        Ok(None) => unreachable!("a lifecycle command always needs a target"),
        Err(refusal) => return Err(cannot_run(refusal.message, Some(refusal.help))),
    };
    Ok((config.name.clone(), chosen))
}

/// Connects to a chosen target's JobManager, reading its CA file and credential.
pub fn connect_to(
    application: String,
    chosen: ChosenTarget,
    root: &Path,
    timeout: Duration,
) -> Result<Connected, (Output, u8)> {
    let Some(flink) = chosen.flink.clone() else {
        return Err(cannot_run(
            format!("target `{}` has no `flink:` section", chosen.name),
            None,
        ));
    };
    let connection = connection(&chosen.name, &flink, root)?;
    let jobs = JobManager::new(&flink.jobmanager, &connection, timeout)
        .map_err(|e| flink_error(&e, &chosen.name))?;
    Ok(Connected {
        target: chosen,
        flink,
        application,
        connection,
        jobs,
    })
}

/// The CA file's certificates and the credential from the environment.
fn connection(target: &str, flink: &FlinkTarget, root: &Path) -> Result<Connection, (Output, u8)> {
    let ca_pem = match &flink.ca_file {
        None => None,
        Some(file) => {
            let path = root.join(file);
            match streamform_db::load::read_contents(&path) {
                FileContents::Text(text) => Some(text.into_bytes()),
                FileContents::Missing => {
                    return Err(cannot_run(
                        format!("target `{target}` names the CA file `{file}`, which does not exist"),
                        Some("flink.ca_file is relative to the project directory; it holds the PEM certificates of the CA that signed the cluster's certificates".into()),
                    ));
                }
                FileContents::NotUtf8 => {
                    return Err(cannot_run(
                        format!(
                            "target `{target}` names the CA file `{file}`, which is not PEM text"
                        ),
                        Some(
                            "flink.ca_file holds PEM certificates (-----BEGIN CERTIFICATE-----)"
                                .into(),
                        ),
                    ));
                }
                FileContents::Unreadable(why) => {
                    return Err(cannot_run(
                        format!("cannot read the CA file `{file}` of target `{target}`: {why}"),
                        Some("flink.ca_file names a PEM file of CA certificates, relative to the project directory".into()),
                    ));
                }
            }
        }
    };
    let credential = match &flink.auth {
        None => None,
        Some(auth) => {
            let variable = auth.variable();
            let value = std::env::var(variable).unwrap_or_default();
            if !value.is_empty() && !value.chars().all(|c| (' '..='~').contains(&c)) {
                return Err(cannot_run(
                    format!(
                        "the environment variable {variable} of target `{target}` holds a character an HTTP header cannot carry (a line break, a control character or a non-ASCII letter)"
                    ),
                    Some(format!(
                        "set {variable} to the credential alone; a value read from a file often ends with a line break"
                    )),
                ));
            }
            if value.is_empty() {
                return Err(cannot_run(
                    format!(
                        "target `{target}` takes its credential from the environment variable {variable}, which is not set"
                    ),
                    Some(format!(
                        "set {variable} before running the command (CI systems keep it as a secret); streamform never stores it"
                    )),
                ));
            }
            Some(match auth {
                Auth::Bearer(_) => Credential::Bearer(value),
                Auth::Basic(_) => {
                    if !value.contains(':') {
                        return Err(cannot_run(
                            format!(
                                "the environment variable {variable} of target `{target}` does not hold user:password"
                            ),
                            Some(
                                "flink.auth `basic` sends the variable's value as user:password"
                                    .into(),
                            ),
                        ));
                    }
                    Credential::Basic(value)
                }
            })
        }
    };
    Ok(Connection { ca_pem, credential })
}

/// The target's record, if there is one: strictly read, refused if it belongs to another
/// target or another project.
pub fn read_record(
    root: &Path,
    target: &str,
    expected_application: &str,
) -> Result<Option<AppliedRecord>, (Output, u8)> {
    let relative = applied_record_path(target);
    let refuse = |why: String| {
        cannot_run(
            format!("cannot read the applied record {relative}: {why}"),
            Some("apply writes this record and reads it strictly; restore it from where your team keeps records, or move it aside to start over (jobs it started keep running)".into()),
        )
    };
    let text = match streamform_db::load::read_contents(&root.join(&relative)) {
        FileContents::Missing => return Ok(None),
        FileContents::Text(text) => text,
        FileContents::NotUtf8 => return Err(refuse("it is not UTF-8 text".into())),
        FileContents::Unreadable(why) => return Err(refuse(why.to_string())),
    };
    let record = match Running::from_json(&text) {
        Ok(Running::Record(record)) => record,
        Ok(Running::Manifest(_)) => {
            return Err(refuse(
                "it holds a plan manifest, not an applied record".into(),
            ));
        }
        Err(e) => return Err(refuse(e.to_string())),
    };
    match record.foreign(target, expected_application) {
        Some(foreign) => Err(foreign_record(
            &relative,
            foreign,
            target,
            expected_application,
            "",
        )),
        None => Ok(Some(*record)),
    }
}

/// The refusal of a record that belongs to another project or target; `also` is added to
/// the help of the latter (what else the command can do).
pub fn foreign_record(
    relative: &str,
    foreign: Foreign,
    target: &str,
    application: &str,
    also: &str,
) -> (Output, u8) {
    match foreign {
        Foreign::Application(other) => cannot_run(
            format!(
                "{relative} records application `{}`, not `{}`",
                streamform_ir::printable(other),
                streamform_ir::printable(application)
            ),
            Some("the file belongs to another project (copied by hand?); move it aside: its jobs are not this project's".into()),
        ),
        Foreign::Target(other) => cannot_run(
            format!(
                "{relative} records an apply to target `{}`, not to `{target}`",
                streamform_ir::printable(other)
            ),
            Some(format!("the file belongs to another target (copied by hand?); put that target's record back{also}")),
        ),
    }
}

/// The record as this build writes it: a record_version 1 record keeps its job and plan
/// and gains a lineage; no record yet is an empty one.
pub fn upgraded(record: Option<AppliedRecord>, connected: &Connected) -> AppliedRecord {
    let lineage =
        || streamform_flink::deploy::new_lineage(&connected.application, &connected.target.name);
    let mut record = match record {
        Some(record) => record.upgraded(&connected.application, &lineage()),
        None => AppliedRecord::new(
            &connected.target.name,
            &connected.application,
            &connected.target.backend,
            &lineage(),
        ),
    };
    record.streamform_version = env!("CARGO_PKG_VERSION").to_string();
    record
}

/// Writes `record` atomically as the target's record.
pub fn saver(root: &Path, target: &str) -> impl FnMut(&AppliedRecord) -> Result<(), String> {
    let path = root.join(applied_record_path(target));
    move |record: &AppliedRecord| {
        write_atomically(&path, record.to_json_pretty().as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// The single-writer lock of a target, held until dropped. The operating system releases
/// it when the process ends, so a lock file left behind by a crash never blocks.
pub struct Lock {
    _file: File,
}

/// Takes the target's lock, or refuses when another process holds it.
pub fn lock(root: &Path, target: &str) -> Result<Lock, (Output, u8)> {
    let relative = lock_path(target);
    let path: PathBuf = root.join(&relative);
    // Opening a FIFO for writing would block until a reader came.
    if let Ok(metadata) = std::fs::symlink_metadata(&path)
        && !metadata.is_file()
    {
        return Err(cannot_run(
            format!("the lock {relative} is not a regular file"),
            Some(format!("remove {} (streamform creates it)", path.display())),
        ));
    }
    let opened = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| {
            std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
        });
    let file = match opened {
        Ok(file) => file,
        Err(e) => {
            return Err(cannot_run(
                format!("cannot open the lock {relative}: {e}"),
                Some(format!(
                    "make {} writable",
                    root.join(".streamform/applied").display()
                )),
            ));
        }
    };
    match file.try_lock() {
        Ok(()) => Ok(Lock { _file: file }),
        Err(std::fs::TryLockError::WouldBlock) => Err(cannot_run(
            format!("another streamform command is applying to or stopping target `{target}` (it holds {relative})"),
            Some("wait for it to finish and run this again; the lock goes with the process that holds it".into()),
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(cannot_run(
            format!("cannot lock {relative}: {e}"),
            None,
        )),
    }
}

/// A deployer for the connected target; `compiling` when it deploys compiled plans.
pub fn deployer<'a>(
    connected: &'a Connected,
    wait: Duration,
    compiling: Option<streamform_flink::deploy::Compiling<'a>>,
) -> Deployer<'a> {
    Deployer {
        jobs: &connected.jobs,
        application: &connected.application,
        target: &connected.target.name,
        savepoints: connected.flink.savepoints.as_deref(),
        wait,
        compiling,
        distrust_restores: std::env::var("STREAMFORM_TEST_FAULT").as_deref()
            == Ok("unconfirmed-restore"),
    }
}

/// The folder of the target's compiled plans on this machine (docs/deployment.md): its
/// `flink.plans`, or `.streamform/plans/<target>` in the project when the gateway runs on
/// this machine; `None` when the target deploys statements (a remote gateway without
/// `flink.plans`).
pub fn plans_folder(root: &Path, target: &str, flink: &FlinkTarget) -> Option<PathBuf> {
    if let Some(uri) = &flink.plans {
        return uri.strip_prefix("file://").map(PathBuf::from);
    }
    let host = flink
        .gateway
        .split_once("://")
        .map_or(flink.gateway.as_str(), |(_, rest)| rest)
        .split(['/', '?', '#'])
        .next()
        .unwrap_or("");
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    let local = host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    let absolute = std::path::absolute(root).ok()?;
    local.then(|| absolute.join(".streamform/plans").join(target))
}

/// Whether the plan diff lets apply carry the recorded job's state into the project's plan
/// (docs/deployment.md, "What is carried across, and what is not"): SAFE or COMPATIBLE, on
/// a target that deploys compiled plans.
pub fn carry(diff: &streamform_ir::diff::PlanDiff, compiled_plans: bool) -> Carry {
    if !diff.verdict.continues() {
        Carry::No(NotCarried::Verdict(diff.verdict))
    } else if !compiled_plans {
        Carry::No(NotCarried::NoPlans)
    } else {
        Carry::Keeps
    }
}

/// Prints each event as it happens.
pub fn print_event(event: Event<'_>) {
    let line = match event {
        Event::Adopted { job, generation } => format!(
            "ok: job {job} of the unfinished apply (generation {generation}) is running; it is the recorded job now"
        ),
        Event::Settled { job, state } => format!(
            "note: job {job} of the unfinished apply did not run (Flink reports it {state})"
        ),
        Event::Stopping { job } => format!("stopping job {job} with a savepoint"),
        Event::Stopped { job, savepoint } => {
            format!("ok: job {job} stopped; savepoint {savepoint}")
        }
        Event::Recovered { job, savepoint } => format!(
            "note: job {job} had stopped with savepoint {savepoint}, which was not recorded (an earlier command gave up waiting, or the job was stopped through Flink's REST API); it is recorded now"
        ),
        Event::Ended { job, state } => {
            format!("note: the recorded job {job} is {state}: it ended without streamform")
        }
        Event::Submitting {
            job,
            generation,
            action,
            restore_from,
        } => match (action, restore_from) {
            (_, Some(savepoint)) if savepoint.generation + 1 == generation => format!(
                "starting job {job} (generation {generation}) from savepoint {}\n",
                savepoint.path
            ),
            (_, Some(savepoint)) => format!(
                "starting job {job} (generation {generation}) from savepoint {}, taken {} from generation {}: what the sources received since then is read again\n",
                savepoint.path, savepoint.taken_at, savepoint.generation
            ),
            (Action::Rebuild, None) => format!(
                "starting job {job} (generation {generation}) with empty state (--rebuild)\n"
            ),
            _ => format!("starting job {job} (generation {generation})\n"),
        },
        Event::Accepted { statement, job } => format!("ok: {}", progress_line(statement, job)),
        Event::Compiled { plan, pinned } => format!(
            "ok: compiled plan {plan} ({pinned} stateful operator{} pinned)",
            if pinned == 1 { "" } else { "s" }
        ),
        Event::Unpinned { why } => format!(
            "note: the job runs from its statements, not a pinned plan ({why}); a later change cannot carry its state and will need --rebuild"
        ),
        Event::RolledBack { job, savepoint } => format!(
            "ok: rolled back: job {job} runs the previous plan again from savepoint {savepoint}"
        ),
        Event::Running { job } => format!("ok: job {job} is running"),
        Event::Restored { savepoint } => {
            format!("ok: Flink reports the job restored from {savepoint}")
        }
    };
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", crate::render::harmless(&line));
    let _ = stdout.flush();
}

/// `source orders`, `model customer_metrics`, `sink customer_metrics`,
/// `statement set → job <id>`.
fn progress_line(statement: &Statement, job: Option<&str>) -> String {
    match &statement.kind {
        StatementKind::Source(name) => format!("source {name}"),
        StatementKind::OnTime(name) => format!("source {name} (on-time rows)"),
        StatementKind::Model(name) => format!("model {name}"),
        StatementKind::Sink(name) => format!("sink {name}"),
        StatementKind::StatementSet => match job {
            Some(job) => format!("statement set → job {job}"),
            None => "statement set".into(),
        },
        StatementKind::Plan => match job {
            Some(job) => format!("compiled plan → job {job}"),
            None => "compiled plan".into(),
        },
    }
}

/// What a statement is, for messages: `the table of source `orders``, `the statement set`.
fn describe(statement: &Statement) -> String {
    match &statement.kind {
        StatementKind::Source(name) => format!("the table of source `{name}`"),
        StatementKind::OnTime(name) => format!("the on-time view of source `{name}`"),
        StatementKind::Model(name) => format!("the view of model `{name}`"),
        StatementKind::Sink(name) => format!("the sink table of model `{name}`"),
        StatementKind::StatementSet => "the statement set".into(),
        StatementKind::Plan => "the compiled plan of the statement set".into(),
    }
}

/// One failed call to Flink: the error and a help line that says where the address comes
/// from; exit 2.
pub fn flink_error(error: &FlinkError, target: &str) -> (Output, u8) {
    let field = |service: &Service| match service {
        Service::Gateway => "flink.gateway",
        Service::JobManager => "flink.jobmanager",
    };
    let help = match error {
        FlinkError::Unreachable {
            service, address, ..
        } => format!(
            "is it running there? the address is `{}` of target `{target}` in streamform.yml{}{}",
            field(service),
            if *service == Service::JobManager {
                ", or the gateway's host with port 8081 when that is not set"
            } else {
                ""
            },
            if ["localhost", "127.0.0.1", "[::1]"]
                .iter()
                .any(|h| address.contains(&format!("://{h}")))
            {
                " (integration/up starts one on this machine)"
            } else {
                ""
            }
        ),
        FlinkError::Tls { reason, .. } if reason.contains("CA file") => format!(
            "`flink.ca_file` of target `{target}` must hold the PEM certificates (-----BEGIN CERTIFICATE-----) of the CA that signed the cluster's certificate"
        ),
        FlinkError::Tls { .. } => format!(
            "if the cluster's certificate is signed by your own CA, name its PEM file as `flink.ca_file` of target `{target}`; an http:// port answered over https:// fails this way too"
        ),
        FlinkError::Unauthorized { .. } => format!(
            "check the credential in the environment variable that `flink.auth` of target `{target}` names"
        ),
        FlinkError::Unexpected { service, .. } => format!(
            "check that `{}` of target `{target}` is {}",
            field(service),
            match service {
                Service::Gateway =>
                    "the SQL Gateway's REST address (port 8083 by default), not the Flink UI's",
                Service::JobManager => "the JobManager's REST address (port 8081 by default)",
            }
        ),
        FlinkError::TimedOut { .. } => {
            "the outcome is unknown; run the command again, or raise --timeout".into()
        }
        FlinkError::Rejected { .. } => "see Flink's reason above".into(),
    };
    (
        Output {
            stdout: String::new(),
            stderr: format!(
                "error: {}\n  help: {}\n",
                streamform_ir::printable(&error.to_string()),
                streamform_ir::printable(&help)
            ),
        },
        CANNOT_RUN,
    )
}

/// `failed` with a note naming the job this operation had already stopped, if any.
fn with_stopped_note(failed: (Output, u8), stopped: &Option<(String, String)>) -> (Output, u8) {
    let (mut out, code) = failed;
    if let Some((job, savepoint)) = stopped {
        out.stderr.push_str(&format!(
            "  note: job {job} was stopped before this with savepoint {savepoint}: apply its plan again to continue from there\n"
        ));
    }
    (out, code)
}

/// A lifecycle failure: what happened, what was changed, what to do; exit 1 when Flink
/// refused the application, 2 otherwise.
pub fn failure(failure: Failure, target: &str, record: &str) -> (Output, u8) {
    let stopped_note = |stopped: &Option<(String, String)>| match stopped {
        Some((job, savepoint)) => format!(
            "; job {job} was stopped before this with savepoint {savepoint}: apply its plan again to continue from there"
        ),
        None => String::new(),
    };
    let mut stderr = String::new();
    let code = match failure {
        Failure::Flink {
            during: Step::Stopping,
            error: FlinkError::Rejected { reason },
            ..
        } => {
            stderr.push_str(
                "error: the savepoint could not be taken, so nothing was stopped\n  reason:\n",
            );
            for line in reason {
                stderr.push_str(&format!("    {line}\n"));
            }
            stderr.push_str(&format!("  help: the job runs on and no savepoint was recorded in {record}; a savepoint needs a directory every Flink process can write: `flink.savepoints` of target `{target}`, or the cluster's execution.checkpointing.savepoint-dir\n"));
            CANNOT_RUN
        }
        Failure::Flink {
            during: Step::Stopping,
            error: error @ FlinkError::TimedOut { .. },
            ..
        } => {
            stderr.push_str(&format!("error: {error}; the job may still stop\n  help: run the same command again: it asks Flink about the same savepoint rather than taking another\n"));
            CANNOT_RUN
        }
        Failure::Flink { error, stopped, .. } => {
            return with_stopped_note(flink_error(&error, target), &stopped);
        }
        Failure::Statement { error, stopped } => {
            let ApplyError { statement, error } = *error;
            let what = statement
                .as_ref()
                .map_or_else(|| "opening a session".to_string(), describe);
            // The attempt is recorded before the statement set (or its compiled plan) is
            // submitted; compiling comes before it.
            let is_set = statement.as_ref().is_some_and(|s| {
                s.kind == StatementKind::StatementSet
                    || (s.kind == StatementKind::Plan && s.sql.starts_with("EXECUTE PLAN"))
            });
            match &error {
                FlinkError::Rejected { reason } => {
                    stderr.push_str(&format!("error: Flink rejected {what}\n  statement:\n"));
                    for line in statement.as_ref().map_or("", |s| s.sql.as_str()).lines() {
                        stderr.push_str(&format!("    {line}\n"));
                    }
                    stderr.push_str("  reason:\n");
                    for line in reason {
                        stderr.push_str(&format!("    {line}\n"));
                    }
                    let recorded = if is_set {
                        format!("the attempt is recorded as failed in {record}")
                    } else {
                        "no attempt was recorded".to_string()
                    };
                    stderr.push_str(&format!(
                        "  help: nothing after this statement was submitted and no job was started; {recorded}{}\n",
                        stopped_note(&stopped)
                    ));
                    INVALID
                }
                FlinkError::TimedOut { seconds, .. } => {
                    stderr.push_str(&format!(
                        "error: the SQL Gateway did not finish {what} within {seconds}s; the outcome is unknown\n  help: the statement set was not sent, so no job was started and no attempt was recorded in {record}; run apply again, or raise --timeout{}\n",
                        stopped_note(&stopped)
                    ));
                    CANNOT_RUN
                }
                _ => return with_stopped_note(flink_error(&error, target), &stopped),
            }
        }
        Failure::TooOld { running, needs } => {
            stderr.push_str(&format!(
                "error: the application needs Flink {}.{} or later, and the target's SQL Gateway runs Flink {}.{}: {}\n  help: nothing was started or stopped; apply to a Flink {}.{} cluster, or change the model (docs/ranking.md)\n",
                needs.version.0,
                needs.version.1,
                running.0,
                running.1,
                needs.why,
                needs.version.0,
                needs.version.1
            ));
            INVALID
        }
        Failure::FailedAtStart {
            job,
            state,
            reason,
            stopped,
        } => {
            stderr.push_str(&format!("error: job {job} was accepted, then failed while starting (Flink reports it {state})\n"));
            if !reason.is_empty() {
                stderr.push_str("  reason:\n");
                for line in reason {
                    stderr.push_str(&format!("    {line}\n"));
                }
            }
            stderr.push_str(&format!(
                "  help: the attempt is recorded as failed in {record}; fix the cause and apply again (the next job gets a new id){}\n",
                stopped_note(&stopped)
            ));
            INVALID
        }
        Failure::NotRunningYet {
            job,
            state,
            seconds,
        } => {
            stderr.push_str(&format!("error: job {job} was accepted but is not running after {seconds}s (Flink reports it {state})\n  help: run apply again to keep waiting (it asks Flink about job {job} and never submits it twice), or see `streamform status`\n"));
            CANNOT_RUN
        }
        Failure::NotRestored {
            job,
            savepoint,
            reported,
            cancelled,
        } => {
            stderr.push_str(&format!(
                "error: job {job} started, but Flink does not report it restored from savepoint {savepoint} ({}); {}\n  help: the attempt is recorded as failed and the savepoint stays on record; look at the JobManager's log for why the restore did not happen before applying again\n",
                reported.map_or("it reports no restore".to_string(), |r| format!("it reports {r}")),
                if cancelled { "it was cancelled, so nothing runs with empty state" } else { "cancelling it failed: cancel it in the Flink UI" }
            ));
            CANNOT_RUN
        }
        Failure::Unknown { job, error } => {
            stderr.push_str(&format!(
                "error: the outcome of submitting job {job} is unknown: {error}\n  help: run apply again: it asks Flink about job {job} before submitting anything, and Flink never starts a second job with that id\n"
            ));
            CANNOT_RUN
        }
        Failure::NotOurs { job, name } => {
            stderr.push_str(&format!(
                "error: job {job} of the record is named `{name}` on the cluster, not this application's; the record's job ids belong to another application\n  help: {record} was probably copied from another project; move it aside (jobs it names keep running) and apply again\n"
            ));
            CANNOT_RUN
        }
        Failure::Raced {
            job,
            rival,
            cancelled,
        } => {
            stderr.push_str(&format!(
                "error: job {rival} of this application started before job {job}, from another copy of the record (another machine or CI job applying at the same time); {}\n  help: apply from one place per target; the other copy's record knows job {rival}\n",
                if cancelled { format!("job {job} was cancelled, so one job runs") } else { format!("cancelling job {job} failed: cancel it in the Flink UI") }
            ));
            INVALID
        }
        Failure::IdIgnored { requested, got } => {
            stderr.push_str(&format!(
                "error: Flink started job {got} instead of the job id requested, {requested}\n  help: this gateway does not pass `$internal.pipeline.job-id` on to the job; streamform needs Flink 2.0's SQL Gateway. Cancel job {got} in the Flink UI\n"
            ));
            CANNOT_RUN
        }
        Failure::Plan(why) => {
            stderr.push_str(&format!(
                "error: {why}; nothing was stopped or started\n  help: the job keeps running its plan and {record} is unchanged; `streamform apply --rebuild` starts the new plan with empty state\n"
            ));
            INVALID
        }
        Failure::RolledBack {
            job,
            reason,
            savepoint,
            restarted,
        } => {
            stderr.push_str(&format!(
                "error: job {job} of the new plan did not start on savepoint {savepoint}, so it was stopped\n"
            ));
            if !reason.is_empty() {
                stderr.push_str("  reason:\n");
                for line in reason {
                    stderr.push_str(&format!("    {line}\n"));
                }
            }
            stderr.push_str(&match restarted {
                Some(previous) => format!(
                    "  help: the previous plan runs again from the same savepoint, as job {previous}, and both attempts are in {record}; `streamform apply --rebuild` starts the new plan with empty state\n"
                ),
                None => format!(
                    "  help: the previous plan could not be started again, so nothing of the application runs; the savepoint stays in {record}, and applying the previous plan continues from it\n"
                ),
            });
            INVALID
        }
        Failure::Record(why) => {
            stderr.push_str(&format!(
                "error: could not write the record {why}\n  help: make the .streamform/applied folder writable; run `streamform status` to see what runs\n"
            ));
            CANNOT_RUN
        }
    };
    (
        Output {
            stdout: String::new(),
            stderr: crate::render::harmless(&stderr).into_owned(),
        },
        code,
    )
}

/// The project's name, for job names.
pub fn application(db: &Database, project: Project) -> String {
    project_config(db, project)
        .config
        .as_ref()
        .map(|c| c.name.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use streamform_ir::diff::{Classification, PlanDiff};
    use streamform_ir::manifest::Manifest;

    /// docs/upgrading.md, row by row of the plan diff's verdicts: SAFE and COMPATIBLE carry on a target
    /// that deploys compiled plans; above COMPATIBLE never; without compiled plans never.
    #[test]
    fn the_state_is_carried_for_safe_and_compatible_on_a_target_with_compiled_plans() {
        let mut diff = PlanDiff::fresh(&Manifest::from_plans([]));
        for verdict in Classification::ALL {
            diff.verdict = verdict;
            let expected = match verdict {
                Classification::Safe | Classification::Compatible => Carry::Keeps,
                other => Carry::No(NotCarried::Verdict(other)),
            };
            assert_eq!(carry(&diff, true), expected, "{verdict}");
            let without = match verdict {
                Classification::Safe | Classification::Compatible => Carry::No(NotCarried::NoPlans),
                other => Carry::No(NotCarried::Verdict(other)),
            };
            assert_eq!(carry(&diff, false), without, "{verdict}");
        }
    }

    #[test]
    fn plans_go_to_the_declared_folder_or_the_projects_for_a_gateway_on_this_machine() {
        let flink = |gateway: &str, plans: Option<&str>| FlinkTarget {
            gateway: gateway.into(),
            jobmanager: String::new(),
            savepoints: None,
            plans: plans.map(str::to_string),
            ca_file: None,
            auth: None,
        };
        let root = Path::new("/work/project");
        let local = Some(PathBuf::from("/work/project/.streamform/plans/local"));
        for gateway in [
            "http://localhost:8083",
            "http://127.0.0.1:8083",
            "https://[::1]:8083/",
            "http://user@LOCALHOST",
        ] {
            assert_eq!(
                plans_folder(root, "local", &flink(gateway, None)),
                local,
                "{gateway}"
            );
        }
        for gateway in ["http://flink.internal:8083", "http://10.0.0.4:8083"] {
            assert_eq!(
                plans_folder(root, "local", &flink(gateway, None)),
                None,
                "{gateway}"
            );
        }
        assert_eq!(
            plans_folder(
                root,
                "prod",
                &flink(
                    "http://flink.internal:8083",
                    Some("file:///mnt/flink/plans")
                )
            ),
            Some(PathBuf::from("/mnt/flink/plans"))
        );
    }
}
