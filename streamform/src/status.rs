//! `streamform status` (the record against the cluster, read-only) and `streamform stop`
//! (stop the recorded job with a savepoint and record it); see docs/deployment.md, "`stop`"
//! and "`status`".

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use streamform_db::target::applied_record_path;
use streamform_db::{Database, Project};
use streamform_flink::deploy::{self, Observed, Seen, StatusDocument};
use streamform_ir::record::Outcome;
use streamform_ir::time::format_rfc3339;

use crate::lifecycle;
use crate::{INVALID, OK, Output};

/// Runs `status`: exit 0 when the cluster matches the record, 1 on drift, 2 when the
/// cluster cannot be asked.
pub fn status(
    db: &Database,
    project: Project,
    root: &Path,
    target: Option<&str>,
    timeout: Duration,
    json: bool,
    color: bool,
) -> (Output, u8) {
    let connected = match lifecycle::connect(db, project, root, target, timeout, color) {
        Ok(c) => c,
        Err(refused) => return refused,
    };
    let record = match lifecycle::read_record(root, &connected.target.name, &connected.application)
    {
        Ok(r) => r,
        Err(refused) => return refused,
    };
    let name = deploy::job_name(&connected.application, &connected.target.name);
    let status = match deploy::status(&connected.jobs, record.as_ref(), &name) {
        Ok(s) => s,
        Err(e) => return lifecycle::flink_error(&e, &connected.target.name),
    };
    let code = if status.drift.is_empty() { OK } else { INVALID };
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let observed_at = format_rfc3339(now_ms - now_ms % 1000);
    let mut out = Output::default();
    if json {
        let document = StatusDocument {
            status_version: 1,
            target: connected.target.name.clone(),
            application: connected.application.clone(),
            jobmanager: connected.jobs.address().to_string(),
            observed_at: observed_at.clone(),
            applied_at: record.as_ref().and_then(|r| r.applied_at.clone()),
            application_digest: record
                .as_ref()
                .and_then(|r| r.manifest.as_ref())
                .map(|m| m.application_digest.clone()),
            status: status.clone(),
        };
        out.stdout = serde_json::to_string_pretty(&document).expect("serializes") + "\n";
        return (out, code);
    }
    let mut text = format!(
        "status: {} on target `{}` (JobManager {}), observed {observed_at}\n",
        connected.application,
        connected.target.name,
        connected.jobs.address()
    );
    match &status.job {
        None => text.push_str("job:        none recorded\n"),
        Some(job) => {
            let generation = if job.generation == 0 {
                String::new()
            } else {
                format!(", generation {}", job.generation)
            };
            text.push_str(&format!("job:        {}{generation}\n", job.id));
            let since = match job.start_time {
                Some(start) if job.state == "RUNNING" => format!(
                    " since {} (up {})",
                    format_rfc3339(start - start % 1000),
                    uptime(now_ms - start)
                ),
                _ => String::new(),
            };
            let stopped = if job.stopped_by_streamform {
                " (stopped with a savepoint by streamform stop or apply)"
            } else {
                ""
            };
            text.push_str(&format!("state:      {}{since}{stopped}\n", job.state));
            if let Some(failure) = &job.failure {
                for line in failure {
                    text.push_str(&format!("            {line}\n"));
                }
            }
            if let Some(restored) = &job.restored_from {
                text.push_str(&format!("restored:   from {restored}\n"));
            }
            match &job.last_checkpoint {
                Some(c) => text.push_str(&format!(
                    "checkpoint: last completed {}\n",
                    format_rfc3339(c.time - c.time % 1000)
                )),
                None => text.push_str("checkpoint: none completed\n"),
            }
        }
    }
    if let Some(record) = &record
        && let (Some(applied_at), Some(manifest)) = (&record.applied_at, &record.manifest)
    {
        text.push_str(&format!(
            "plan:       applied {applied_at}, application digest {}\n",
            streamform_ir::identity::short(&manifest.application_digest)
        ));
    }
    match &status.savepoint {
        Some(s) => text.push_str(&format!(
            "savepoint:  {} (taken {}{})\n",
            s.path,
            s.taken_at,
            if s.generation == 0 {
                String::new()
            } else {
                format!(" from generation {}", s.generation)
            }
        )),
        None => text.push_str("savepoint:  none the recorded job's statements can continue from\n"),
    }
    if status.other_jobs.is_empty() {
        text.push_str("others:     no other job of this application\n");
    }
    if status.drift.is_empty() {
        let known = |id: &str| record.as_ref().is_some_and(|r| known_artifact(r, id));
        text.push_str(match &status.job {
            Some(job) if job.stopped_by_streamform && known(&job.id) => {
                "ok: the recorded job is stopped; the next apply of this plan continues from its savepoint\n"
            }
            Some(job) if job.stopped_by_streamform => {
                "ok: the recorded job is stopped; it was started before deployments were tracked, so the next apply needs --rebuild\n"
            }
            Some(_) => "ok: the recorded job runs the recorded plan\n",
            None => "ok: nothing is recorded and nothing of this application runs\n",
        });
    } else {
        for drift in &status.drift {
            text.push_str(&format!("drift: {drift}\n"));
        }
    }
    out.stdout = crate::render::harmless(&text).into_owned();
    (out, code)
}

/// Whether the record knows the statements `job` ran (not so for a job started before
/// deployments were tracked).
fn known_artifact(record: &streamform_ir::record::AppliedRecord, job: &str) -> bool {
    record
        .attempts
        .iter()
        .any(|a| a.job_id == job && !a.artifact.is_empty())
}

/// `3d 4h`, `5m 3s`.
fn uptime(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    let (d, h, m, s) = (s / 86_400, s / 3600 % 24, s / 60 % 60, s % 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m {s}s"),
        (0, _, _) => format!("{h}h {m}m"),
        _ => format!("{d}d {h}h"),
    }
}

/// Runs `stop`: the recorded job stopped with a savepoint, which the record keeps for the
/// next apply.
pub fn stop(
    db: &Database,
    project: Project,
    root: &Path,
    target: Option<&str>,
    timeout: Duration,
    color: bool,
) -> (Output, u8) {
    let (application, chosen) = match lifecycle::choose(db, project, target, color) {
        Ok(chosen) => chosen,
        Err(refused) => return refused,
    };
    let target_name = chosen.name.clone();
    let relative = applied_record_path(&target_name);
    let mut out = Output::default();
    let nothing =
        format!("nothing to stop: nothing is recorded as applied to target `{target_name}`\n");
    // Nothing recorded: nothing to connect to, lock or write.
    if std::fs::symlink_metadata(root.join(&relative)).is_err() {
        out.stdout = nothing;
        return (out, OK);
    }
    let connected = match lifecycle::connect_to(application, chosen, root, timeout) {
        Ok(c) => c,
        Err(refused) => return refused,
    };
    let _lock = match lifecycle::lock(root, &target_name) {
        Ok(lock) => lock,
        Err(refused) => return refused,
    };
    let record = match lifecycle::read_record(root, &target_name, &connected.application) {
        Ok(Some(record)) => record,
        Ok(None) => {
            out.stdout = nothing;
            return (out, OK);
        }
        Err(refused) => return refused,
    };
    let mut record = lifecycle::upgraded(Some(record), &connected);
    let deployer = lifecycle::deployer(&connected, timeout, None);
    let mut save = lifecycle::saver(root, &target_name);
    let mut report = lifecycle::print_event;
    if let Err(failure) = deployer.settle(&mut record, &mut save, &mut report) {
        return lifecycle::failure(failure, &target_name, &relative);
    }
    let mut observed = match Observed::of(&connected.jobs, Some(&record), &deployer.name()) {
        Ok(o) => o,
        Err(e) => return lifecycle::flink_error(&e, &target_name),
    };
    match deployer.recover_stop(&mut record, &observed, &mut save, &mut report) {
        Ok(true) => {
            observed = match Observed::of(&connected.jobs, Some(&record), &deployer.name()) {
                Ok(o) => o,
                Err(e) => return lifecycle::flink_error(&e, &target_name),
            };
        }
        Ok(false) => {}
        Err(failure) => return lifecycle::failure(failure, &target_name, &relative),
    }
    let Some(deploy::RecordedJob {
        id: job, stopped, ..
    }) = observed.job.clone()
    else {
        out.stdout = format!("nothing to stop: no job of target `{target_name}` has run\n");
        return (out, OK);
    };
    match &observed.seen {
        Seen::Running(_) | Seen::NotRunning(_) => {
            match deployer.stop(&mut record, &job, &mut save, &mut report) {
                Ok(savepoint) if known_artifact(&record, &job) => {
                    out.stdout = format!(
                        "ok: savepoint {savepoint} recorded in {relative}; the next apply of this plan continues from it\n"
                    );
                    (out, OK)
                }
                Ok(savepoint) => {
                    out.stdout = format!(
                        "ok: savepoint {savepoint} recorded in {relative}\nnote: job {job} was started before deployments were tracked, so which statements its savepoint belongs to is unknown and no apply continues from it; the next apply needs --rebuild\n"
                    );
                    (out, OK)
                }
                Err(failure) => lifecycle::failure(failure, &target_name, &relative),
            }
        }
        _ if stopped => {
            let savepoint = record
                .savepoints
                .iter()
                .rev()
                .find(|s| s.job_id == job)
                .map_or("(none recorded)".to_string(), |s| s.path.clone());
            out.stdout =
                format!("nothing to stop: job {job} was stopped with savepoint {savepoint}\n");
            (out, OK)
        }
        seen => {
            let state = seen.state().to_string();
            if let Some(attempt) = record
                .attempts
                .iter_mut()
                .rev()
                .find(|a| a.job_id == job && a.outcome == Outcome::Running)
            {
                attempt.outcome = Outcome::Ended;
                attempt.reason = Some(streamform_ir::printable(&state).into_owned());
                if let Err(why) = save(&record) {
                    return lifecycle::failure(
                        streamform_flink::deploy::Failure::Record(why),
                        &target_name,
                        &relative,
                    );
                }
            }
            out.stderr = format!(
                "error: the recorded job {job} is {state}: it ended without streamform, so no savepoint could be taken\n  help: `streamform status` shows what runs; the next apply continues from the latest savepoint of this plan if one is recorded\n"
            );
            (out, INVALID)
        }
    }
}
