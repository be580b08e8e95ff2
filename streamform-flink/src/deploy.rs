//! The job lifecycle on Flink (docs/deployment.md): `apply`, `stop` and `status` over the SQL
//! Gateway and the JobManager's REST API, with the applied record as memory.
//!
//! - Every job gets an id Streamform chose: the record's lineage (16 hex digits, random
//!   when the record is first written) followed by the attempt's generation in 16 hex
//!   digits. The attempt is written to the record before the job is submitted, so an
//!   unknown outcome is resolved by asking Flink about that id, never by submitting again;
//!   Flink refuses a second job with an id it has seen, so a late first copy and a retry
//!   cannot both run.
//! - Every job is named `streamform/<project>/<target>` and tagged with the target, the
//!   generation and the artifact digest (`pipeline.global-job-parameters`).
//! - A target whose gateway reaches a folder this machine writes deploys the application
//!   as a compiled plan whose stateful operators are pinned from their nodes
//!   (`crate::compiled`), so state is carried across every change the plan diff calls SAFE
//!   or COMPATIBLE (docs/deployment.md, "What is carried across, and what is not"): the
//!   job is stopped with a savepoint and the new plan started from it, and an upgrade
//!   whose job does not start on it is rolled back to the previous plan from the same
//!   savepoint. Otherwise state is carried only across an
//!   identical statement set. Anything else is refused before anything is touched, or
//!   rebuilt on request (docs/deployment.md).
//! - `execution.state-recovery.ignore-unclaimed-state` is set only for an upgrade that
//!   removes stateful operators: every operator the new plan keeps is pinned with the id its
//!   state is under, so what no operator claims is what the change discards. With Flink's
//!   own positional ids it would drop state silently (docs/deployment.md).
//! - A job counts as running once Flink says every vertex runs, not once it is accepted.
//!
//! Nothing here reads or writes files: the caller passes the record in and is handed every
//! new version of it to write before the next call to Flink.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use sha2::{Digest, Sha256};
use streamform_ir::diff::Classification;
use streamform_ir::manifest::Manifest;
use streamform_ir::record::{Action, AppliedRecord, Attempt, Outcome, Savepoint};

use crate::gateway::{ApplyError, GatewayClient, Session};
use crate::generate::{Application, Statement};
use crate::http::FlinkError;
use crate::jobs::{JobDetail, JobManager, JobSummary, is_terminal};

/// The name of every job of `application` on `target`.
pub fn job_name(application: &str, target: &str) -> String {
    format!("streamform/{application}/{target}")
}

/// The job id of `generation` in a record of `lineage`.
pub fn job_id(lineage: &str, generation: u64) -> String {
    format!("{lineage}{generation:016x}")
}

/// A fresh lineage: 16 hex digits from the clock, the process and the names.
pub fn new_lineage(application: &str, target: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let digest = Sha256::digest(format!(
        "{application}\0{target}\0{nanos}\0{}",
        std::process::id()
    ));
    hex(&digest[..8])
}

/// The trigger id of the stop of `job`: the same job always gets the same one, so a
/// retried stop joins the first instead of taking a second savepoint.
pub fn stop_trigger(job: &str) -> String {
    hex(&Sha256::digest(format!("streamform-stop\0{job}"))[..16])
}

/// The digest of what is deployed: every statement, in order, and the options it is
/// planned with. Two plans with the same artifact are the same Flink job, and only such a
/// job can start from the other's savepoint.
pub fn artifact(app: &Application) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"streamform flink artifact 1\n");
    for statement in &app.statements {
        hasher.update(statement.sql.as_bytes());
        hasher.update(b"\n;\n");
    }
    // The options the statement set is planned with shape its job as much as its text.
    for (k, v) in &app.config {
        hasher.update(format!("SET {k} = {v}\n;\n").as_bytes());
    }
    hex(&hasher.finalize())
}

/// The artifact's tag on the job: its first 12 characters.
pub fn artifact_tag(artifact: &str) -> &str {
    artifact
        .char_indices()
        .nth(12)
        .map_or(artifact, |(i, _)| &artifact[..i])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The execution configuration of the statement set of one attempt: the pinned job id,
/// the name, the tags and, for a restore, the savepoint.
pub fn job_config(application: &str, target: &str, attempt: &Attempt) -> BTreeMap<String, String> {
    let mut config = BTreeMap::new();
    config.insert("$internal.pipeline.job-id".into(), attempt.job_id.clone());
    config.insert("pipeline.name".into(), job_name(application, target));
    config.insert(
        "pipeline.global-job-parameters".into(),
        format!(
            "streamform.target:{target},streamform.generation:{},streamform.artifact:{}",
            attempt.generation,
            artifact_tag(&attempt.artifact)
        ),
    );
    if let Some(path) = &attempt.restore_from {
        config.insert("execution.state-recovery.path".into(), path.clone());
    }
    config
}

/// What the cluster says about one job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// Running, every vertex.
    Running(JobDetail),
    /// Known and not ended, but not running: initializing, restarting, failing, ...
    NotRunning(JobDetail),
    /// Ended: `FINISHED` (stopped), `CANCELED` or `FAILED`.
    Ended(JobDetail),
    /// Unknown to the cluster: never submitted, or forgotten (Flink keeps ended jobs for
    /// an hour by default, and a restarted JobManager without high availability forgets
    /// everything).
    Missing,
}

impl Seen {
    /// Asks the cluster about `job`.
    ///
    /// # Errors
    /// When the cluster cannot be asked.
    pub fn of(jobs: &JobManager, job: &str) -> Result<Seen, FlinkError> {
        Ok(match jobs.job(job)? {
            None => Seen::Missing,
            Some(d) if d.is_running() => Seen::Running(d),
            Some(d) if is_terminal(&d.summary.state) => Seen::Ended(d),
            Some(d) => Seen::NotRunning(d),
        })
    }

    /// Flink's state, or `MISSING`.
    pub fn state(&self) -> &str {
        match self {
            Seen::Running(d) | Seen::NotRunning(d) | Seen::Ended(d) => &d.summary.state,
            Seen::Missing => "MISSING",
        }
    }
}

/// Why apply will not go on; nothing has been touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The plan's statements changed and the job's state cannot be carried across the
    /// change.
    Changed {
        /// The recorded job.
        job: String,
        /// Whether it runs.
        running: bool,
        /// Why the state cannot be carried.
        why: NotCarried,
    },
    /// The plan is unchanged, but its job ended without a savepoint to continue from.
    StateLost {
        /// The recorded job.
        job: String,
        /// Its state (`CANCELED`, `FAILED`, `MISSING`).
        state: String,
    },
    /// The recorded job exists but does not run (restarting, say).
    NotRunning {
        /// The recorded job.
        job: String,
        /// Its state.
        state: String,
    },
    /// Jobs of this application run that the record does not know.
    Others {
        /// Them.
        jobs: Vec<JobSummary>,
    },
    /// The record predates tracked deployments: which statements its job ran is unknown,
    /// so no plan can continue from it.
    Untracked {
        /// The job.
        job: String,
        /// Whether it runs.
        running: bool,
    },
    /// The recorded job is being stopped with a savepoint (a `stop` that gave up waiting);
    /// it still runs.
    Stopping {
        /// The job.
        job: String,
    },
}

/// Whether the recorded job's state can be carried into a changed plan (docs/deployment.md,
/// "What is carried across, and what is not"), from what the plan diff and the target
/// allow; [`decide`] adds what the record says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Carry {
    /// The change keeps the state of every node it keeps: the plan diff is SAFE or
    /// COMPATIBLE, and the target deploys compiled plans whose operators are pinned.
    Keeps,
    /// It cannot be carried.
    No(NotCarried),
}

/// Why a changed plan cannot continue from the recorded job's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotCarried {
    /// The plan diff's verdict is above COMPATIBLE.
    Verdict(Classification),
    /// The recorded job was started from statements rather than a compiled plan whose
    /// operators are pinned (by an apply before state was carried across changes), so
    /// Flink could not tell which operator's state is which node's.
    Unpinned,
    /// The target deploys from statements: its gateway is not on this machine and it
    /// declares no `flink.plans` folder that both reach.
    NoPlans,
}

/// What apply decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The recorded job runs this plan: nothing to do.
    UpToDate {
        /// The job.
        job: String,
        /// When it started, milliseconds since the epoch.
        since: i64,
    },
    /// Submit a job.
    Submit {
        /// Why.
        action: Action,
        /// The savepoint to start from (`Restore`).
        restore_from: Option<Savepoint>,
        /// The job to stop with a savepoint first.
        stop_first: Option<String>,
    },
    /// Do nothing, and say why.
    Refuse(Refusal),
}

/// The job the record considers current.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedJob {
    /// Its id.
    pub id: String,
    /// The digest of the statements it runs; `None` when unknown (a job started before
    /// deployments were tracked).
    pub artifact: Option<String>,
    /// Whether Streamform stopped it with a savepoint.
    pub stopped: bool,
    /// Whether it was started from a compiled plan whose operators are pinned.
    pub pinned: bool,
}

/// The recorded job and what the cluster says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    /// The recorded job.
    pub job: Option<RecordedJob>,
    /// What the cluster says about it.
    pub seen: Seen,
    /// Jobs with this application's name that are not ended and are not the recorded job.
    pub others: Vec<JobSummary>,
}

impl Observed {
    /// Asks the cluster about the record's job and the other jobs of the application.
    ///
    /// # Errors
    /// When the cluster cannot be asked.
    pub fn of(
        jobs: &JobManager,
        record: Option<&AppliedRecord>,
        name: &str,
    ) -> Result<Observed, FlinkError> {
        let job = record.and_then(recorded_job);
        let seen = match &job {
            Some(recorded) => Seen::of(jobs, &recorded.id)?,
            None => Seen::Missing,
        };
        let pending = record.and_then(AppliedRecord::pending).map(|a| &a.job_id);
        let others = jobs
            .overview()?
            .into_iter()
            .filter(|j| !j.is_terminal() && j.name == name)
            .filter(|j| Some(&j.id) != job.as_ref().map(|r| &r.id) && Some(&j.id) != pending)
            .collect();
        Ok(Observed { job, seen, others })
    }
}

/// The record's job: the current attempt's, or a record_version 1 record's last job. The
/// artifact is `None` when unknown (a job started before deployments were tracked).
fn recorded_job(record: &AppliedRecord) -> Option<RecordedJob> {
    match record.current() {
        Some(a) => Some(RecordedJob {
            id: a.job_id.clone(),
            artifact: Some(a.artifact.clone()).filter(|a| !a.is_empty()),
            stopped: a.outcome == Outcome::Stopped,
            pinned: a.operators.is_some(),
        }),
        None if record.attempts.is_empty() => record.jobs.last().map(|j| RecordedJob {
            id: j.clone(),
            artifact: None,
            stopped: false,
            pinned: false,
        }),
        None => None,
    }
}

/// Decides what apply does, from the record, what the cluster says, the artifact to deploy
/// and whether the plan diff lets the state be carried into it. A pure function: every rule
/// of apply (docs/deployment.md, docs/upgrading.md) is here.
pub fn decide(
    record: Option<&AppliedRecord>,
    observed: &Observed,
    desired: &str,
    rebuild: bool,
    carry: &Carry,
) -> Decision {
    if !observed.others.is_empty() {
        return Decision::Refuse(Refusal::Others {
            jobs: observed.others.clone(),
        });
    }
    let Some(RecordedJob {
        id: job,
        artifact,
        stopped,
        pinned,
    }) = &observed.job
    else {
        return Decision::Submit {
            action: if rebuild {
                Action::Rebuild
            } else {
                Action::Start
            },
            restore_from: None,
            stop_first: None,
        };
    };
    let same = artifact.as_deref() == Some(desired);
    let rebuild_after = |stop_first: Option<String>| Decision::Submit {
        action: Action::Rebuild,
        restore_from: None,
        stop_first,
    };
    // The state of these very statements, saved when their job was stopped or replaced.
    let own_savepoint = record.and_then(|r| r.latest_savepoint(desired)).cloned();
    let go_back = |stop_first: Option<String>| Decision::Submit {
        action: Action::Restore,
        restore_from: own_savepoint.clone(),
        stop_first,
    };
    // Carrying the recorded job's state into the changed plan (docs/upgrading.md): the change keeps it,
    // and the job's operators were pinned so the new plan's find theirs.
    let why_not = match (carry, pinned) {
        (Carry::No(why), _) => Some(why.clone()),
        (Carry::Keeps, false) => Some(NotCarried::Unpinned),
        (Carry::Keeps, true) => None,
    };
    let changed = |running: bool| {
        Decision::Refuse(Refusal::Changed {
            job: job.clone(),
            running,
            why: why_not.clone().unwrap_or(NotCarried::Unpinned),
        })
    };
    // The savepoint the recorded job left when Streamform stopped it.
    let left = record.and_then(|r| r.savepoints.iter().rev().find(|s| &s.job_id == job));
    match &observed.seen {
        Seen::Running(_) if *stopped => Decision::Refuse(Refusal::Stopping { job: job.clone() }),
        Seen::Running(_) | Seen::NotRunning(_) if rebuild => rebuild_after(Some(job.clone())),
        Seen::Running(d) if same => Decision::UpToDate {
            job: job.clone(),
            since: d.summary.start_time,
        },
        // A change that keeps the state carries the running job's, also back to statements
        // that ran before: their older savepoint would read again what came since.
        Seen::Running(_) if artifact.is_some() && why_not.is_none() => Decision::Submit {
            action: Action::Upgrade,
            restore_from: None,
            stop_first: Some(job.clone()),
        },
        // Back to statements that ran before (a rollback): their own savepoint carries them.
        Seen::Running(_) if own_savepoint.is_some() => go_back(Some(job.clone())),
        Seen::Running(_) if artifact.is_none() => Decision::Refuse(Refusal::Untracked {
            job: job.clone(),
            running: true,
        }),
        Seen::Running(_) => changed(true),
        Seen::NotRunning(d) => Decision::Refuse(Refusal::NotRunning {
            job: job.clone(),
            state: d.summary.state.clone(),
        }),
        Seen::Ended(_) | Seen::Missing if rebuild => rebuild_after(None),
        // A stopped job's own savepoint carries a changed plan that keeps its state.
        Seen::Ended(_) | Seen::Missing
            if !same && *stopped && artifact.is_some() && why_not.is_none() && left.is_some() =>
        {
            Decision::Submit {
                action: Action::Upgrade,
                restore_from: left.cloned(),
                stop_first: None,
            }
        }
        Seen::Ended(_) | Seen::Missing if own_savepoint.is_some() => go_back(None),
        // A record_version 1 job: no savepoint of it belongs to any plan.
        _ if artifact.is_none() => Decision::Refuse(Refusal::Untracked {
            job: job.clone(),
            running: false,
        }),
        Seen::Ended(_) | Seen::Missing if !same && why_not.is_none() => match left {
            Some(savepoint) if *stopped => Decision::Submit {
                action: Action::Upgrade,
                restore_from: Some(savepoint.clone()),
                stop_first: None,
            },
            // Ended without Streamform: no savepoint holds its state.
            _ => Decision::Refuse(Refusal::StateLost {
                job: job.clone(),
                state: observed.seen.state().to_string(),
            }),
        },
        Seen::Ended(_) | Seen::Missing if !same => changed(false),
        seen => Decision::Refuse(Refusal::StateLost {
            job: job.clone(),
            state: seen.state().to_string(),
        }),
    }
}

/// What apply would decide were the cluster as the record says: the recorded job runs when
/// its attempt was last seen running, and has ended when it was stopped or ended. `plan`
/// says this without asking the cluster; apply asks, and may find otherwise.
pub fn expected(record: Option<&AppliedRecord>, desired: &str, carry: &Carry) -> Decision {
    let job = record.and_then(recorded_job);
    let attempt = record.and_then(AppliedRecord::current);
    let detail = |state: &str| JobDetail {
        summary: JobSummary {
            id: job.as_ref().map(|j| j.id.clone()).unwrap_or_default(),
            name: attempt.map(|a| a.job_name.clone()).unwrap_or_default(),
            state: state.to_string(),
            start_time: 0,
        },
        vertices_running: 0,
        vertices: 0,
    };
    let seen = match (attempt.map(|a| a.outcome), &job) {
        (Some(Outcome::Running), _) => Seen::Running(detail("RUNNING")),
        // A record_version 1 job was running when last recorded.
        (None, Some(_)) => Seen::Running(detail("RUNNING")),
        (Some(Outcome::Stopped), _) => Seen::Ended(detail("FINISHED")),
        (Some(Outcome::Ended), _) => Seen::Ended(detail("ENDED")),
        _ => Seen::Missing,
    };
    let observed = Observed {
        job,
        seen,
        others: Vec::new(),
    };
    decide(record, &observed, desired, false, carry)
}

/// What happens as a lifecycle operation goes, for the caller to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<'a> {
    /// A pending attempt's job was found running and is now the recorded job.
    Adopted {
        /// The job.
        job: &'a str,
        /// Its generation.
        generation: u64,
    },
    /// A pending attempt's job never ran (or failed); its generation is settled.
    Settled {
        /// The job.
        job: &'a str,
        /// What Flink said: `FAILED`, `MISSING`, ...
        state: &'a str,
    },
    /// A job is being stopped with a savepoint.
    Stopping {
        /// The job.
        job: &'a str,
    },
    /// The savepoint was taken and the job stopped.
    Stopped {
        /// The job.
        job: &'a str,
        /// Where the savepoint is.
        savepoint: &'a str,
    },
    /// The recorded job had stopped with a savepoint that was not recorded (a stop that
    /// outlived the command that asked for it); the savepoint is recorded now.
    Recovered {
        /// The job.
        job: &'a str,
        /// The savepoint Flink reports for it.
        savepoint: &'a str,
    },
    /// The recorded job ended without Streamform.
    Ended {
        /// The job.
        job: &'a str,
        /// Its state.
        state: &'a str,
    },
    /// An attempt is about to be submitted.
    Submitting {
        /// Its job id.
        job: &'a str,
        /// Its generation.
        generation: u64,
        /// Why.
        action: Action,
        /// The savepoint it starts from.
        restore_from: Option<&'a Savepoint>,
    },
    /// A statement was accepted; the statement set with the job id.
    Accepted {
        /// The statement.
        statement: &'a Statement,
        /// The job id, for the statement set.
        job: Option<&'a str>,
    },
    /// The job runs.
    Running {
        /// The job.
        job: &'a str,
    },
    /// An upgrade that did not start on its savepoint was undone: the previous plan runs
    /// again from the same savepoint, as job `job`.
    RolledBack {
        /// The job of the previous plan, started again.
        job: &'a str,
        /// The savepoint both started from.
        savepoint: &'a str,
    },
    /// The compiled plan the job starts from was written, with its stateful operators
    /// pinned.
    Compiled {
        /// Where Flink reads it.
        plan: &'a str,
        /// How many operator identities were pinned.
        pinned: usize,
    },
    /// Flink could not compile the plan, or Streamform could not pin its stateful
    /// operators: the job starts from its statements, and its state cannot be carried into
    /// a later change.
    Unpinned {
        /// Why.
        why: &'a str,
    },
    /// Flink reports the job restored from this savepoint.
    Restored {
        /// The savepoint.
        savepoint: &'a str,
    },
}

/// Why a lifecycle operation stopped. Each says whether anything was changed.
#[derive(Debug)]
pub enum Failure {
    /// A call to Flink failed. `during` says what was being done; `stopped` names a job
    /// that had been stopped with a savepoint before the failure (`(job, savepoint)`).
    Flink {
        /// What was being done.
        during: Step,
        /// What went wrong.
        error: FlinkError,
        /// A job already stopped in this operation, and its savepoint.
        stopped: Option<(String, String)>,
    },
    /// A statement did not run (`ApplyError` says which, and why: refused by Flink, or the
    /// gateway failed). A refused statement set is recorded as a failed attempt; nothing
    /// before it can start a job.
    Statement {
        /// The statement and Flink's reason.
        error: Box<ApplyError>,
        /// A job already stopped in this operation, and its savepoint.
        stopped: Option<(String, String)>,
    },
    /// The cluster runs an older Flink than the application needs (nothing was touched).
    TooOld {
        /// The version the gateway reports, (major, minor).
        running: (u32, u32),
        /// What the application needs, and why.
        needs: crate::generate::Requirement,
    },
    /// The job was accepted and then failed while starting.
    FailedAtStart {
        /// The job.
        job: String,
        /// Flink's state for it.
        state: String,
        /// Flink's reason, when it gave one.
        reason: Vec<String>,
        /// A job already stopped in this operation, and its savepoint.
        stopped: Option<(String, String)>,
    },
    /// The job did not reach RUNNING within the time allowed; the attempt stays pending.
    NotRunningYet {
        /// The job.
        job: String,
        /// Its state when the wait ended.
        state: String,
        /// The time allowed, in seconds.
        seconds: u64,
    },
    /// The job ran, but Flink does not report it restored from the savepoint given; it
    /// was cancelled and the attempt recorded as failed.
    NotRestored {
        /// The job.
        job: String,
        /// The savepoint it was given.
        savepoint: String,
        /// What Flink reports instead.
        reported: Option<String>,
        /// Whether the cancel was accepted.
        cancelled: bool,
    },
    /// The submission's outcome is unknown and the job is not known to Flink (yet); the
    /// attempt stays pending and the next apply asks again.
    Unknown {
        /// The job id asked about.
        job: String,
        /// What went wrong.
        error: FlinkError,
    },
    /// The job with the recorded id has another application's name: the record's ids are
    /// not this application's (a record copied from another project). Nothing was changed.
    NotOurs {
        /// The job.
        job: String,
        /// The name Flink reports for it.
        name: String,
    },
    /// Another job of this application started before this one (an apply from another
    /// copy of the record, at the same time); this one was cancelled and recorded as
    /// failed.
    Raced {
        /// This apply's job.
        job: String,
        /// The other job, left running.
        rival: String,
        /// Whether the cancel was accepted.
        cancelled: bool,
    },
    /// Flink started a job with another id than the one requested.
    IdIgnored {
        /// The id requested.
        requested: String,
        /// The id Flink gave.
        got: String,
    },
    /// The record could not be written.
    Record(String),
    /// The compiled plan could not be read, pinned or written (nothing was stopped or
    /// started).
    Plan(String),
    /// An upgrade's job did not start on its savepoint; it was cancelled and the previous
    /// plan started again from the same savepoint.
    RolledBack {
        /// The upgrade's job.
        job: String,
        /// Why it was undone, in Flink's words or ours.
        reason: Vec<String>,
        /// The savepoint.
        savepoint: String,
        /// The job of the previous plan, running again; `None` when it could not be
        /// started (then nothing of the application runs, and the savepoint is kept).
        restarted: Option<String>,
    },
}

/// Which step a Flink call belonged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Observing the cluster.
    Observing,
    /// Stopping a job with a savepoint.
    Stopping,
    /// Waiting for the job to run.
    Waiting,
}

/// The target and its application, as a lifecycle operation needs them.
pub struct Deployer<'a> {
    /// The JobManager's REST API.
    pub jobs: &'a JobManager,
    /// The project's name.
    pub application: &'a str,
    /// The target's name.
    pub target: &'a str,
    /// Where savepoints go; the cluster's default when `None`.
    pub savepoints: Option<&'a str>,
    /// How long to wait for a job to run or a savepoint to complete.
    pub wait: Duration,
    /// How this target deploys as a compiled plan; `None` when it deploys the statements
    /// themselves (docs/deployment.md).
    pub compiling: Option<Compiling<'a>>,
    /// For Streamform's own tests: treat every restore as unconfirmed, to exercise the
    /// rollback (`STREAMFORM_TEST_FAULT=unconfirmed-restore`); a real cluster cannot be made
    /// to run a job without reporting its savepoint.
    pub distrust_restores: bool,
}

/// Where compiled plans go and how the caller reads and writes them: the deployer itself
/// touches no file.
pub struct Compiling<'a> {
    /// The folder as Flink reads it, a `file://` URI without a trailing `/`.
    pub uri: String,
    /// Reads the file of the folder with this name.
    pub read: &'a dyn Fn(&str) -> Result<String, String>,
    /// Writes the file of the folder with this name.
    pub write: &'a dyn Fn(&str, &str) -> Result<(), String>,
    /// Every model of the application, in dependency order.
    pub models: &'a [streamform_ir::ModelPlan],
}

/// Called with every new version of the record; it must be written before this returns.
pub type Save<'s> = dyn FnMut(&AppliedRecord) -> Result<(), String> + 's;
/// Called with each event as it happens.
pub type Report<'s> = dyn FnMut(Event<'_>) + 's;

/// How often to poll a starting job.
const POLL_INTERVAL: Duration = Duration::from_millis(250);

fn now() -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    streamform_ir::time::format_rfc3339(ms - ms % 1000)
}

impl Deployer<'_> {
    /// The job name of this application on this target.
    pub fn name(&self) -> String {
        job_name(self.application, self.target)
    }

    /// Settles a pending attempt by asking Flink about its job id: running → adopted
    /// (waiting for it to run); ended → failed; unknown → left pending, and its generation
    /// is reused by the next submission (the id is the fence: Flink cannot run both).
    ///
    /// # Errors
    /// When Flink cannot be asked, or the record cannot be written.
    pub fn settle(
        &self,
        record: &mut AppliedRecord,
        save: &mut Save<'_>,
        report: &mut Report<'_>,
    ) -> Result<(), Failure> {
        let Some(pending) = record.pending().cloned() else {
            return Ok(());
        };
        let seen = Seen::of(self.jobs, &pending.job_id).map_err(|error| Failure::Flink {
            during: Step::Observing,
            error,
            stopped: None,
        })?;
        match seen {
            Seen::Missing => Ok(()),
            Seen::Ended(d) => {
                let reason = self.jobs.failure(&pending.job_id).ok().flatten();
                let last = record.attempts.last_mut().expect("pending");
                last.outcome = Outcome::Failed;
                last.manifest = None;
                last.reason = Some(reason_text(
                    &reason.unwrap_or_else(|| vec![d.summary.state.clone()]),
                ));
                save_record(save, record)?;
                report(Event::Settled {
                    job: &pending.job_id,
                    state: &d.summary.state,
                });
                Ok(())
            }
            Seen::Running(_) | Seen::NotRunning(_) => {
                self.wait_until_running(record, &pending, None, save, report)?;
                report(Event::Adopted {
                    job: &pending.job_id,
                    generation: pending.generation,
                });
                Ok(())
            }
        }
    }

    /// `apply`: settles a pending attempt, observes the cluster, decides, and carries the
    /// decision out. Returns the decision taken (a refusal changes nothing).
    ///
    /// # Errors
    /// A [`Failure`], which says what was changed before it.
    #[allow(clippy::too_many_arguments)]
    pub fn apply(
        &self,
        gateway: &GatewayClient,
        record: &mut AppliedRecord,
        app: &Application,
        manifest: &Manifest,
        carrying: (&Carry, &BTreeMap<String, String>),
        rebuild: bool,
        save: &mut Save<'_>,
        report: &mut Report<'_>,
    ) -> Result<Decision, Failure> {
        let (carry, continues) = carrying;
        self.settle(record, save, report)?;
        let observing = |error| Failure::Flink {
            during: Step::Observing,
            error,
            stopped: None,
        };
        let mut observed =
            Observed::of(self.jobs, Some(record), &self.name()).map_err(observing)?;
        // A job being cancelled or failing ends in a moment: wait for it rather than refuse.
        let started = Instant::now();
        while started.elapsed() < self.wait
            && match (&observed.seen, &observed.job) {
                (Seen::NotRunning(d), _) => {
                    matches!(d.summary.state.as_str(), "CANCELLING" | "FAILING")
                }
                // Stopped with a savepoint, still finishing.
                (Seen::Running(_), Some(recorded)) => recorded.stopped,
                _ => false,
            }
        {
            std::thread::sleep(POLL_INTERVAL);
            observed = Observed::of(self.jobs, Some(record), &self.name()).map_err(observing)?;
        }
        if self.recover_stop(record, &observed, save, report)? {
            observed.job = recorded_job(record);
        }
        let desired = artifact(app);
        let decision = decide(Some(record), &observed, &desired, rebuild, carry);
        // A recorded job that ended without Streamform is written down as such.
        if let (
            Some(RecordedJob {
                id: job,
                stopped: false,
                ..
            }),
            Seen::Ended(_) | Seen::Missing,
        ) = (&observed.job, &observed.seen)
            && let Some(current) = record
                .attempts
                .iter_mut()
                .rev()
                .find(|a| &a.job_id == job && a.outcome == Outcome::Running)
        {
            current.outcome = Outcome::Ended;
            current.reason = Some(reason_text(&[observed.seen.state().to_string()]));
            save_record(save, record)?;
            report(Event::Ended {
                job,
                state: observed.seen.state(),
            });
        }
        let Decision::Submit {
            action,
            restore_from,
            stop_first,
        } = &decision
        else {
            // An attempt Flink never received, and no submission to lend its id to.
            if let Some(last) = record.attempts.last_mut()
                && last.outcome == Outcome::Pending
            {
                last.outcome = Outcome::Failed;
                last.manifest = None;
                last.reason = Some("never reached Flink".into());
                save_record(save, record)?;
            }
            return Ok(decision);
        };
        self.submit(
            gateway,
            record,
            (app, manifest, &desired),
            *action,
            restore_from.clone(),
            stop_first.as_deref(),
            continues,
            save,
            report,
        )?;
        Ok(decision)
    }

    /// A recorded running job that Flink reports FINISHED with a savepoint was stopped by a
    /// `stop` whose command gave up waiting (or died): records that savepoint and the job as
    /// stopped. Returns whether it did.
    ///
    /// # Errors
    /// When Flink cannot be asked, or the record cannot be written.
    pub fn recover_stop(
        &self,
        record: &mut AppliedRecord,
        observed: &Observed,
        save: &mut Save<'_>,
        report: &mut Report<'_>,
    ) -> Result<bool, Failure> {
        let (
            Some(RecordedJob {
                id: job,
                stopped: false,
                ..
            }),
            Seen::Ended(d),
        ) = (&observed.job, &observed.seen)
        else {
            return Ok(false);
        };
        if d.summary.state != "FINISHED" {
            return Ok(false);
        }
        let checkpoints = self.jobs.checkpoints(job).map_err(|error| Failure::Flink {
            during: Step::Observing,
            error,
            stopped: None,
        })?;
        let Some(path) = checkpoints.savepoint.and_then(|s| s.path) else {
            return Ok(false);
        };
        let Some(attempt) = record
            .attempts
            .iter_mut()
            .rev()
            .find(|a| &a.job_id == job && a.outcome == Outcome::Running)
        else {
            return Ok(false);
        };
        attempt.outcome = Outcome::Stopped;
        let (generation, artifact) = (attempt.generation, attempt.artifact.clone());
        if !record.savepoints.iter().any(|s| s.path == path) {
            record.savepoints.push(Savepoint {
                path: path.clone(),
                job_id: job.clone(),
                generation,
                artifact,
                taken_at: now(),
            });
        }
        save_record(save, record)?;
        report(Event::Recovered {
            job,
            savepoint: &path,
        });
        Ok(true)
    }

    /// Stops `job` with a savepoint and records it: the attempt that ran it becomes
    /// stopped, and the savepoint is added. Returns the savepoint's path.
    ///
    /// # Errors
    /// `Failure::Flink` during `Stopping` when the savepoint cannot be taken: the job runs
    /// on and the record is unchanged.
    pub fn stop(
        &self,
        record: &mut AppliedRecord,
        job: &str,
        save: &mut Save<'_>,
        report: &mut Report<'_>,
    ) -> Result<String, Failure> {
        // Nothing is stopped unless its savepoint can be recorded.
        save_record(save, record)?;
        report(Event::Stopping { job });
        let path = self
            .jobs
            .stop_with_savepoint(job, self.savepoints, &stop_trigger(job), self.wait)
            .map_err(|error| Failure::Flink {
                during: Step::Stopping,
                error,
                stopped: None,
            })?;
        // The savepoint completes a moment before the job finishes: wait for that too, so
        // that what is recorded as stopped is stopped.
        let started = Instant::now();
        while started.elapsed() < self.wait {
            match Seen::of(self.jobs, job) {
                Ok(Seen::Running(_) | Seen::NotRunning(_)) => std::thread::sleep(POLL_INTERVAL),
                _ => break,
            }
        }
        let (generation, artifact) =
            match record.attempts.iter_mut().rev().find(|a| a.job_id == job) {
                Some(attempt) => {
                    attempt.outcome = Outcome::Stopped;
                    (attempt.generation, attempt.artifact.clone())
                }
                // A record_version 1 job: its savepoint belongs to no artifact we know.
                None => (0, String::new()),
            };
        record.savepoints.push(Savepoint {
            path: path.clone(),
            job_id: job.to_string(),
            generation,
            artifact,
            taken_at: now(),
        });
        save_record(save, record)?;
        report(Event::Stopped {
            job,
            savepoint: &path,
        });
        Ok(path)
    }

    /// Runs the application's tables and views in a new session, compiles the statement set
    /// into a plan and pins its operators (on a target that deploys compiled plans), stops
    /// `stop_first` with a savepoint, records the attempt, submits the plan (or the
    /// statement set) under the attempt's job id, waits until the job runs and, for a
    /// restore, checks that Flink restored it. An upgrade that does not start on its
    /// savepoint is rolled back: the previous plan starts again from the same savepoint.
    #[allow(clippy::too_many_arguments)]
    fn submit(
        &self,
        gateway: &GatewayClient,
        record: &mut AppliedRecord,
        (app, manifest, desired): (&Application, &Manifest, &str),
        action: Action,
        restore_from: Option<Savepoint>,
        stop_first: Option<&str>,
        continues: &BTreeMap<String, String>,
        save: &mut Save<'_>,
        report: &mut Report<'_>,
    ) -> Result<(), Failure> {
        let refused = |error: Box<ApplyError>, stopped: Option<(String, String)>| {
            Failure::Statement { error, stopped }
        };
        let version = gateway.version();
        if let (Some(running), Some(needs)) = (version, &app.requires)
            && running < needs.version
        {
            return Err(Failure::TooOld {
                running,
                needs: needs.clone(),
            });
        }
        let planner = crate::generate::planner_options(&app.config, version);
        // Tables and views first: a statement Flink refuses stops apply before the running
        // job is touched.
        let session = Session::open(gateway).map_err(|e| refused(e, None))?;
        let (set, definitions): (Vec<&Statement>, Vec<&Statement>) = app
            .statements
            .iter()
            .partition(|s| s.kind == crate::StatementKind::StatementSet);
        let none = BTreeMap::new();
        for statement in definitions {
            session
                .run(statement, &none)
                .map_err(|e| refused(e, None))?;
            report(Event::Accepted {
                statement,
                job: None,
            });
        }
        let set = set
            .first()
            .copied()
            .expect("an application with sinks has a statement set");
        // A pending attempt Flink does not know lends its generation: its id is the fence.
        let generation = match record.pending() {
            Some(p) => p.generation,
            None => record.next_generation(),
        };
        // The attempt whose job's state this one starts from: its operators' uids are kept.
        let origin = restore_from
            .as_ref()
            .map(|s| s.job_id.as_str())
            .or(stop_first)
            .and_then(|job| record.attempts.iter().rev().find(|a| a.job_id == job))
            .cloned();
        // A job started from statements is restored from statements: its operators are not
        // pinned, so no compiled plan could find their state.
        let compiled = match &self.compiling {
            Some(c)
                if action != Action::Restore
                    || origin.as_ref().is_some_and(|o| o.operators.is_some()) =>
            {
                let uid_of = |identity: &str| {
                    let was = continues.get(identity).map_or(identity, String::as_str);
                    origin
                        .as_ref()
                        .and_then(|o| o.operators.as_ref())
                        .and_then(|ops| ops.get(was))
                        .cloned()
                        .unwrap_or_else(|| identity.to_string())
                };
                match self.compile(
                    &session,
                    c,
                    (set, &planner),
                    desired,
                    generation,
                    uid_of,
                    report,
                )? {
                    Ok(compiled) => Some(compiled),
                    // A job that starts without state runs from its statements when its
                    // compiled plan cannot be pinned; no later change can carry its state
                    // (docs/upgrading.md).
                    Err(unpinned) if matches!(action, Action::Start | Action::Rebuild) => {
                        report(Event::Unpinned {
                            why: &unpinned.to_string(),
                        });
                        None
                    }
                    Err(unpinned) => return Err(Failure::Plan(unpinned.to_string())),
                }
            }
            _ => None,
        };
        let stopped = match stop_first {
            Some(job) => Some((job.to_string(), self.stop(record, job, save, report)?)),
            None => None,
        };
        // The savepoint the job starts from: the one given, or the one just taken when an
        // upgrade replaces a running job.
        let restore_from = match (action, &stopped) {
            (Action::Upgrade, Some((_, path))) => Some(path.clone()),
            _ => restore_from.as_ref().map(|s| s.path.clone()),
        };
        if record.pending().is_some() {
            record.attempts.pop();
        }
        let lineage = record.lineage.clone().expect("a record_version 2 record");
        let (plan, operators) = match &compiled {
            Some((plan, operators)) => (Some(plan.clone()), Some(operators.clone())),
            None => (None, None),
        };
        let attempt = Attempt {
            generation,
            job_id: job_id(&lineage, generation),
            job_name: self.name(),
            action,
            restore_from: restore_from.clone(),
            artifact: desired.to_string(),
            application_digest: manifest.application_digest.clone(),
            submitted_at: now(),
            outcome: Outcome::Pending,
            reason: None,
            manifest: Some(manifest.clone()),
            plan,
            operators,
        };
        // State of operators the new plan no longer has (a removed model's, a source no
        // model reads any more): every operator the plan keeps is pinned with the id its
        // state is under, so what no operator claims is exactly what the change discards.
        let kept: BTreeSet<&String> = attempt.operators.iter().flat_map(|o| o.values()).collect();
        let discards = action == Action::Upgrade
            && origin
                .as_ref()
                .and_then(|o| o.operators.as_ref())
                .is_some_and(|old| old.values().any(|uid| !kept.contains(uid)));
        let result = self.start(
            &session,
            record,
            (&attempt, discards),
            (set, &planner),
            stopped.clone(),
            save,
            report,
        );
        drop(session);
        match (result, action, &origin, restore_from) {
            // An upgrade whose job did not start on its savepoint: the previous plan runs
            // again from the same savepoint.
            (
                Err(Failure::NotRestored { job, reported, .. }),
                Action::Upgrade,
                Some(origin),
                Some(savepoint),
            ) => Err(self.roll_back(
                gateway,
                record,
                origin,
                (
                    &job,
                    vec![format!(
                        "Flink did not report starting from {savepoint}: {}",
                        reported.as_deref().unwrap_or("no savepoint")
                    )],
                ),
                &savepoint,
                save,
                report,
            )),
            (
                Err(Failure::FailedAtStart {
                    job, reason, state, ..
                }),
                Action::Upgrade,
                Some(origin),
                Some(savepoint),
            ) => Err(self.roll_back(
                gateway,
                record,
                origin,
                (
                    &job,
                    if reason.is_empty() {
                        vec![state]
                    } else {
                        reason
                    },
                ),
                &savepoint,
                save,
                report,
            )),
            (result, ..) => result,
        }
    }

    /// Compiles the statement set into a plan in the session, with the options the
    /// application is planned with (`planner`), pins its stateful operators with `uid_of`,
    /// and writes the pinned plan beside it. Returns where Flink reads the pinned plan and
    /// the operators pinned, or why the plan cannot be pinned. Nothing has been stopped yet.
    #[allow(clippy::too_many_arguments)]
    fn compile(
        &self,
        session: &Session<'_>,
        compiling: &Compiling<'_>,
        (set, planner): (&Statement, &BTreeMap<String, String>),
        desired: &str,
        generation: u64,
        uid_of: impl Fn(&str) -> String,
        report: &mut Report<'_>,
    ) -> Result<Result<(String, crate::compiled::OperatorIds), crate::compiled::PinError>, Failure>
    {
        let base = format!("{}-g{generation}", artifact_tag(desired));
        let compiled_name = format!("{base}.compiled.json");
        let pinned_name = format!("{base}.json");
        let compile = Statement {
            kind: crate::StatementKind::Plan,
            sql: set.sql.replacen(
                "EXECUTE STATEMENT SET",
                &format!(
                    "COMPILE PLAN {} FOR STATEMENT SET",
                    crate::sql::string_literal(&format!("{}/{compiled_name}", compiling.uri))
                ),
                1,
            ),
        };
        // An attempt that never ran may have left its file: compile it again.
        let mut config = planner.clone();
        config.insert("table.plan.force-recompile".to_string(), "true".to_string());
        session
            .run(&compile, &config)
            .map_err(|error| Failure::Statement {
                error,
                stopped: None,
            })?;
        let text = (compiling.read)(&compiled_name).map_err(Failure::Plan)?;
        let tables = crate::generate::operator_tables(compiling.models);
        let pinned = match crate::compiled::pin(&text, compiling.models, &tables, uid_of) {
            Ok(pinned) => pinned,
            Err(unpinned) => return Ok(Err(unpinned)),
        };
        (compiling.write)(&pinned_name, &pinned.plan).map_err(Failure::Plan)?;
        let uri = format!("{}/{pinned_name}", compiling.uri);
        report(Event::Compiled {
            plan: &uri,
            pinned: pinned.operators.len(),
        });
        Ok(Ok((uri, pinned.operators)))
    }

    /// Records `attempt` and starts its job: its compiled plan, or the statement set with the
    /// options the application is planned with (`planner`). Waits until it runs.
    #[allow(clippy::too_many_arguments)]
    fn start(
        &self,
        session: &Session<'_>,
        record: &mut AppliedRecord,
        (attempt, discards): (&Attempt, bool),
        (set, planner): (&Statement, &BTreeMap<String, String>),
        stopped: Option<(String, String)>,
        save: &mut Save<'_>,
        report: &mut Report<'_>,
    ) -> Result<(), Failure> {
        record.attempts.push(attempt.clone());
        save_record(save, record)?;
        let restore = record
            .savepoints
            .iter()
            .find(|s| Some(&s.path) == attempt.restore_from.as_ref())
            .cloned();
        report(Event::Submitting {
            job: &attempt.job_id,
            generation: attempt.generation,
            action: attempt.action,
            restore_from: restore.as_ref(),
        });
        let mut config = job_config(self.application, self.target, attempt);
        config.extend(planner.iter().map(|(k, v)| (k.clone(), v.clone())));
        if discards {
            config.insert(
                "execution.state-recovery.ignore-unclaimed-state".into(),
                "true".into(),
            );
        }
        let execute;
        let statement = match &attempt.plan {
            Some(plan) => {
                execute = Statement {
                    kind: crate::StatementKind::Plan,
                    sql: format!("EXECUTE PLAN {}", crate::sql::string_literal(plan)),
                };
                &execute
            }
            None => set,
        };
        match session.run(statement, &config) {
            Ok(got) => {
                if let Some(got) = got
                    && got != attempt.job_id
                {
                    return Err(Failure::IdIgnored {
                        requested: attempt.job_id.clone(),
                        got,
                    });
                }
                report(Event::Accepted {
                    statement,
                    job: Some(&attempt.job_id),
                });
            }
            Err(failed) => {
                let duplicate = matches!(&failed.error, FlinkError::Rejected { reason }
                    if reason.iter().any(|l| l.contains("DuplicateJobSubmissionException")));
                if let (FlinkError::Rejected { reason }, false) = (&failed.error, duplicate) {
                    let last = record.attempts.last_mut().expect("just pushed");
                    last.outcome = Outcome::Failed;
                    last.manifest = None;
                    last.reason = Some(reason_text(&[failed.error.to_string()]));
                    save_record(save, record)?;
                    // A plan Flink refuses at submission (its state does not map) is a
                    // failed start, which an upgrade rolls back.
                    if attempt.action == Action::Upgrade {
                        return Err(Failure::FailedAtStart {
                            job: attempt.job_id.clone(),
                            state: "FAILED".into(),
                            reason: reason.clone(),
                            stopped,
                        });
                    }
                    return Err(Failure::Statement {
                        error: failed,
                        stopped,
                    });
                }
                // The job may have started all the same: ask Flink about its id.
                match Seen::of(self.jobs, &attempt.job_id) {
                    Ok(Seen::Missing) | Err(_) => {
                        return Err(Failure::Unknown {
                            job: attempt.job_id.clone(),
                            error: failed.error,
                        });
                    }
                    Ok(_) => {}
                }
            }
        }
        self.wait_until_running(record, attempt, stopped, save, report)
    }

    /// Starts `origin`'s compiled plan again from `savepoint`, after the upgrade `failed`
    /// did not start on it. Returns the failure apply reports.
    #[allow(clippy::too_many_arguments)]
    fn roll_back(
        &self,
        gateway: &GatewayClient,
        record: &mut AppliedRecord,
        origin: &Attempt,
        (failed, reason): (&str, Vec<String>),
        savepoint: &str,
        save: &mut Save<'_>,
        report: &mut Report<'_>,
    ) -> Failure {
        let failure = |restarted: Option<String>| Failure::RolledBack {
            job: failed.to_string(),
            reason: reason.clone(),
            savepoint: savepoint.to_string(),
            restarted,
        };
        let Some(lineage) = record.lineage.clone() else {
            return failure(None);
        };
        // The failed job was cancelled; the previous plan starts once it has ended, so the
        // two never run at once and the restarted job does not take it for a rival apply.
        let deadline = std::time::Instant::now() + self.wait;
        while std::time::Instant::now() < deadline {
            match self.jobs.job(failed) {
                Ok(Some(detail)) if !detail.summary.is_terminal() => {
                    std::thread::sleep(POLL_INTERVAL);
                }
                _ => break,
            }
        }
        let Ok(session) = Session::open(gateway) else {
            return failure(None);
        };
        let generation = record.next_generation();
        let attempt = Attempt {
            generation,
            job_id: job_id(&lineage, generation),
            job_name: self.name(),
            action: Action::Restore,
            restore_from: Some(savepoint.to_string()),
            artifact: origin.artifact.clone(),
            application_digest: origin.application_digest.clone(),
            submitted_at: now(),
            outcome: Outcome::Pending,
            reason: None,
            manifest: record.manifest.clone(),
            plan: origin.plan.clone(),
            operators: origin.operators.clone(),
        };
        // Only a compiled plan can be started again without its statements.
        let Some(plan) = &origin.plan else {
            return failure(None);
        };
        let set = Statement {
            kind: crate::StatementKind::Plan,
            sql: format!("EXECUTE PLAN {}", crate::sql::string_literal(plan)),
        };
        // A compiled plan was planned when it was compiled: it takes no planner options.
        match self.start(
            &session,
            record,
            (&attempt, false),
            (&set, &BTreeMap::new()),
            None,
            save,
            report,
        ) {
            Ok(()) => {
                report(Event::RolledBack {
                    job: &attempt.job_id,
                    savepoint,
                });
                failure(Some(attempt.job_id))
            }
            Err(_) => failure(None),
        }
    }

    /// Waits until `attempt`'s job runs, then records it as the running deployment. A job
    /// that ends instead is recorded as failed, with Flink's reason.
    fn wait_until_running(
        &self,
        record: &mut AppliedRecord,
        attempt: &Attempt,
        stopped: Option<(String, String)>,
        save: &mut Save<'_>,
        report: &mut Report<'_>,
    ) -> Result<(), Failure> {
        let started = Instant::now();
        let job = &attempt.job_id;
        let detail = loop {
            let seen = Seen::of(self.jobs, job).map_err(|error| Failure::Flink {
                during: Step::Waiting,
                error,
                stopped: stopped.clone(),
            })?;
            if let Seen::Running(d) | Seen::NotRunning(d) | Seen::Ended(d) = &seen
                && d.summary.name != self.name()
            {
                // Not ours: the record's ids are another application's (a copied record).
                return Err(Failure::NotOurs {
                    job: job.clone(),
                    name: d.summary.name.clone(),
                });
            }
            match seen {
                Seen::Running(d) => break d,
                Seen::Ended(d) => {
                    let reason = self.jobs.failure(job).ok().flatten().unwrap_or_default();
                    let last = record.attempts.last_mut().expect("the attempt");
                    last.outcome = Outcome::Failed;
                    last.manifest = None;
                    last.reason = Some(if reason.is_empty() {
                        reason_text(std::slice::from_ref(&d.summary.state))
                    } else {
                        reason_text(&reason)
                    });
                    save_record(save, record)?;
                    return Err(Failure::FailedAtStart {
                        job: job.clone(),
                        state: d.summary.state,
                        reason,
                        stopped,
                    });
                }
                seen @ (Seen::NotRunning(_) | Seen::Missing) => {
                    if started.elapsed() >= self.wait {
                        let state = match seen.state() {
                            "RUNNING" => "RUNNING, but not every task runs yet".to_string(),
                            other => other.to_string(),
                        };
                        return Err(Failure::NotRunningYet {
                            job: job.clone(),
                            state,
                            seconds: self.wait.as_secs(),
                        });
                    }
                    std::thread::sleep(POLL_INTERVAL);
                }
            }
        };
        report(Event::Running { job });
        // A job given a savepoint must say it started from it: one that runs with empty
        // state instead is cancelled, so nothing runs on the wrong state.
        if let Some(savepoint) = &attempt.restore_from {
            let reported = self
                .jobs
                .checkpoints(job)
                .map_err(|error| Failure::Flink {
                    during: Step::Waiting,
                    error,
                    stopped: stopped.clone(),
                })?
                .restored_from;
            if reported.as_deref() != Some(savepoint.as_str())
                || (self.distrust_restores && attempt.action == Action::Upgrade)
            {
                let cancelled = self.jobs.cancel(job).is_ok();
                let last = record.attempts.last_mut().expect("the attempt");
                last.outcome = Outcome::Failed;
                last.manifest = None;
                last.reason = Some(reason_text(&[format!("not restored from {savepoint}")]));
                save_record(save, record)?;
                return Err(Failure::NotRestored {
                    job: job.clone(),
                    savepoint: savepoint.clone(),
                    reported,
                    cancelled,
                });
            }
            report(Event::Restored { savepoint });
        }
        // Two applies from two copies of the record can start two jobs at once: the one
        // that started later gives way, so one job is left.
        let rivals = self.jobs.overview().map_err(|error| Failure::Flink {
            during: Step::Waiting,
            error,
            stopped: stopped.clone(),
        })?;
        let mine = (detail.summary.start_time, job.as_str());
        if let Some(rival) = rivals.iter().find(|j| {
            !j.is_terminal()
                && j.name == self.name()
                && j.id != *job
                && Some(&j.id) != stopped.as_ref().map(|(s, _)| s)
                && (j.start_time, j.id.as_str()) < mine
        }) {
            let cancelled = self.jobs.cancel(job).is_ok();
            let last = record.attempts.last_mut().expect("the attempt");
            last.outcome = Outcome::Failed;
            last.manifest = None;
            last.reason = Some(reason_text(&[format!(
                "job {} of this application was already running",
                rival.id
            )]));
            save_record(save, record)?;
            return Err(Failure::Raced {
                job: job.clone(),
                rival: rival.id.clone(),
                cancelled,
            });
        }
        let last = record.attempts.last_mut().expect("the attempt");
        last.outcome = Outcome::Running;
        record.manifest = last.manifest.take();
        record.applied_at = Some(now());
        record.jobs = vec![job.clone()];
        save_record(save, record)?;
        Ok(())
    }
}

/// Flink's words for the record: one line each, every control character escaped (what a
/// cluster says is not ours to trust, and the record's reader refuses control characters).
fn reason_text<S: AsRef<str>>(lines: &[S]) -> String {
    lines
        .iter()
        .flat_map(|l| l.as_ref().lines())
        .map(|l| streamform_ir::printable(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

fn save_record(save: &mut Save<'_>, record: &AppliedRecord) -> Result<(), Failure> {
    save(record).map_err(Failure::Record)
}

/// What `status --json` prints: the target, the application, when the cluster was asked,
/// what the record says was applied, and what the cluster shows (version first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct StatusDocument {
    /// The version of this document: 1.
    pub status_version: u32,
    /// The target's name.
    pub target: String,
    /// The application's job name, `streamform/<project>/<target>`.
    pub application: String,
    /// The JobManager's REST address asked.
    pub jobmanager: String,
    /// When the cluster was asked, RFC 3339 to the second.
    pub observed_at: String,
    /// When the recorded plan was applied, if it was.
    pub applied_at: Option<String>,
    /// The recorded plan's application digest, if any.
    pub application_digest: Option<String>,
    /// What the cluster shows against the record.
    #[serde(flatten)]
    pub status: Status,
}

/// `status`: the record against the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Status {
    /// The recorded job, if any.
    pub job: Option<JobStatus>,
    /// The last attempt, when its outcome is unknown.
    pub pending: Option<PendingStatus>,
    /// The savepoint the recorded job's statements would continue from (the newest usable
    /// one of them), if any.
    pub savepoint: Option<SavepointStatus>,
    /// Jobs with this application's name, not ended, that the record does not know.
    pub other_jobs: Vec<OtherJob>,
    /// What disagrees between the record and the cluster; empty when nothing does.
    pub drift: Vec<String>,
}

/// The recorded job as the cluster sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct JobStatus {
    /// Its id.
    pub id: String,
    /// Its generation (0 for a record_version 1 job).
    pub generation: u64,
    /// Flink's state, or `MISSING`.
    pub state: String,
    /// Whether Streamform stopped it.
    pub stopped_by_streamform: bool,
    /// When it started, milliseconds since the epoch.
    pub start_time: Option<i64>,
    /// The artifact tag Flink reports for it.
    pub artifact_tag: Option<String>,
    /// The latest completed checkpoint.
    pub last_checkpoint: Option<CheckpointStatus>,
    /// The savepoint it was restored from.
    pub restored_from: Option<String>,
    /// Why it failed, when it did.
    pub failure: Option<Vec<String>>,
}

/// A completed checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CheckpointStatus {
    /// When it completed, milliseconds since the epoch.
    pub time: i64,
    /// Where it is, when Flink says.
    pub path: Option<String>,
}

/// A pending attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PendingStatus {
    /// Its job id.
    pub id: String,
    /// Its generation.
    pub generation: u64,
    /// Flink's state for it, or `MISSING`.
    pub state: String,
}

/// A savepoint on record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SavepointStatus {
    /// Where it is.
    pub path: String,
    /// When it was taken.
    pub taken_at: String,
    /// The generation of the job it was taken from.
    pub generation: u64,
}

/// A job of this application the record does not know.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct OtherJob {
    /// Its id.
    pub id: String,
    /// Flink's state.
    pub state: String,
    /// When it started, milliseconds since the epoch.
    pub start_time: i64,
}

/// Observes the recorded job and the other jobs of the application, read-only.
///
/// # Errors
/// When the cluster cannot be asked.
pub fn status(
    jobs: &JobManager,
    record: Option<&AppliedRecord>,
    name: &str,
) -> Result<Status, FlinkError> {
    let observed = Observed::of(jobs, record, name)?;
    let mut drift = Vec::new();
    let job = match &observed.job {
        None => None,
        Some(RecordedJob {
            id,
            artifact,
            stopped,
            ..
        }) => {
            let state = observed.seen.state().to_string();
            let detail = match &observed.seen {
                Seen::Running(d) | Seen::NotRunning(d) | Seen::Ended(d) => Some(d),
                Seen::Missing => None,
            };
            let (artifact_tag, checkpoints, failure) = match detail {
                Some(_) => {
                    let tag = jobs
                        .tags(id)?
                        .into_iter()
                        .find(|(k, _)| k == "streamform.artifact")
                        .map(|(_, v)| v);
                    let failure = if matches!(observed.seen, Seen::Running(_)) {
                        None
                    } else {
                        jobs.failure(id)?
                    };
                    (tag, jobs.checkpoints(id)?, failure)
                }
                None => (None, Default::default(), None),
            };
            let generation = record
                .and_then(|r| r.attempts.iter().find(|a| &a.job_id == id))
                .map_or(0, |a| a.generation);
            match (&observed.seen, stopped) {
                (Seen::Running(_), false) => {
                    let expected = artifact.as_deref().map(crate::deploy::artifact_tag);
                    if let Some(expected) = expected
                        && artifact_tag.as_deref() != Some(expected)
                    {
                        drift.push(format!(
                            "job {id} runs artifact {}, not the recorded {expected}",
                            artifact_tag.as_deref().unwrap_or("(untagged)")
                        ));
                    }
                }
                (Seen::Ended(d), true) if d.summary.state == "FINISHED" => {}
                (Seen::Missing, true) => {}
                (_, true) => drift.push(format!(
                    "job {id} was stopped with a savepoint, but Flink reports it {state}"
                )),
                (_, false) => drift.push(format!("the recorded job {id} is {state}, not RUNNING")),
            }
            Some(JobStatus {
                id: id.clone(),
                generation,
                state,
                stopped_by_streamform: *stopped,
                start_time: detail.map(|d| d.summary.start_time),
                artifact_tag,
                last_checkpoint: checkpoints.checkpoint.map(|c| CheckpointStatus {
                    time: c.time,
                    path: c.path,
                }),
                restored_from: checkpoints.restored_from,
                failure,
            })
        }
    };
    let pending = match record.and_then(AppliedRecord::pending) {
        Some(p) => {
            let state = Seen::of(jobs, &p.job_id)?.state().to_string();
            drift.push(format!(
                "the apply of generation {} did not finish: its job {} is {state}; run apply to settle it",
                p.generation, p.job_id
            ));
            Some(PendingStatus {
                id: p.job_id.clone(),
                generation: p.generation,
                state,
            })
        }
        None => None,
    };
    for other in &observed.others {
        drift.push(format!(
            "job {} ({}) is named {name} but is not the recorded job",
            other.id, other.state
        ));
    }
    // The savepoint the recorded job's statements would continue from.
    let savepoint = record
        .and_then(|r| r.latest_savepoint(&r.current()?.artifact))
        .map(|s| SavepointStatus {
            path: s.path.clone(),
            taken_at: s.taken_at.clone(),
            generation: s.generation,
        });
    Ok(Status {
        job,
        pending,
        savepoint,
        other_jobs: observed
            .others
            .iter()
            .map(|j| OtherJob {
                id: j.id.clone(),
                state: j.state.clone(),
                start_time: j.start_time,
            })
            .collect(),
        drift,
    })
}

#[cfg(test)]
mod tests;
