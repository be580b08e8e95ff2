//! The job lifecycle (docs/deployment.md) against a fake Flink cluster
//! (tests/common/fake_flink.rs): what a real cluster cannot be made to do on demand (a
//! submission whose answer never comes, a job failing at start, a savepoint that cannot be
//! taken, HTTPS with a private CA, a bearer token), and the output of each command. The
//! same lifecycle on the real Flink is in differential.rs.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::fake_flink::{
    Behaviour, FakeFlink, SetBehaviour, fake_flink, fake_flink_https, project_on, self_signed,
};
use streamform_ir::record::{Action, AppliedRecord, Outcome};

fn run(args: &[&str], project: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_streamform"));
    command
        .args(args)
        .arg("--project")
        .arg(project)
        .env("NO_COLOR", "1")
        .env_remove("FLINK_TOKEN");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("run streamform")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The target's applied record, checked against its published schema and read strictly.
fn record(project: &Path) -> AppliedRecord {
    let text = std::fs::read_to_string(project.join(".streamform/applied/local.json")).unwrap();
    common::valid_document("applied-record", text.as_bytes());
    AppliedRecord::from_json(&text).unwrap()
}

/// The run as a snapshot: exit code, stdout, stderr, with the fake's address and the
/// record's lineage (the random half of every job id) replaced.
fn rendered(out: &Output, flink: &FakeFlink, project: &Path) -> String {
    let lineage = std::fs::read_to_string(project.join(".streamform/applied/local.json"))
        .ok()
        .and_then(|t| AppliedRecord::from_json(&t).ok())
        .and_then(|r| r.lineage);
    let clean = |b: &[u8]| {
        let mut t = text(b)
            .replace(&flink.address, "{flink}")
            .replace(&project.display().to_string(), "{project}");
        if let Some(l) = &lineage {
            t = t
                .replace(l.as_str(), "{lineage}")
                .replace(&l[..12], "{lineage}");
        }
        common::without_times(&t)
    };
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        out.status.code().unwrap_or(-1),
        clean(&out.stdout),
        clean(&out.stderr)
    )
}

fn ok(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

fn running(flink: &FakeFlink) -> Vec<String> {
    flink
        .jobs()
        .into_iter()
        .filter(|(_, s)| s == "RUNNING")
        .map(|(id, _)| id)
        .collect()
}

/// The example's model grouped by two columns: a key change no state survives.
fn change_the_key(project: &Path) {
    std::fs::write(
        project.join("models/customer_metrics.sql"),
        "SELECT customer_id, amount, SUM(amount) AS total_spend\nFROM source('orders')\nGROUP BY customer_id, amount\n",
    )
    .unwrap();
    let config = project.join("streamform.yml");
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "      - customer_id\n",
        "      - customer_id\n      - amount\n",
    );
    std::fs::write(&config, text).unwrap();
    std::fs::remove_dir_all(project.join("tests")).unwrap();
}

#[test]
fn the_first_apply_starts_a_job_with_the_id_name_and_tags_streamform_chose() {
    let flink = fake_flink(Behaviour::default());
    let project = project_on(&flink.address, "");
    let out = run(&["apply"], project.path(), &[]);
    insta::assert_snapshot!(rendered(&out, &flink, project.path()));
    let record = record(project.path());
    let lineage = record.lineage.clone().unwrap();
    let job = format!("{lineage}0000000000000001");
    assert_eq!(record.jobs, std::slice::from_ref(&job));
    assert_eq!(record.attempts.len(), 1);
    assert_eq!(record.attempts[0].outcome, Outcome::Running);
    assert_eq!(record.attempts[0].action, Action::Start);
    assert!(record.manifest.is_some());
    let state = flink.state.lock().unwrap();
    assert_eq!(state.jobs.len(), 1);
    assert_eq!(state.jobs[0].id, job);
    assert_eq!(state.jobs[0].name, "streamform/customer-metrics/local");
    assert_eq!(
        state.jobs[0]
            .tags
            .iter()
            .map(|(k, _)| k.as_str())
            .collect::<Vec<_>>(),
        [
            "streamform.target",
            "streamform.generation",
            "streamform.artifact"
        ]
    );
}

#[test]
fn an_unchanged_apply_with_the_job_running_submits_nothing() {
    let flink = fake_flink(Behaviour::default());
    let project = project_on(&flink.address, "");
    ok(&run(&["apply"], project.path(), &[]));
    let before = record(project.path());
    let statements = flink.count("POST /v2/sessions");
    let out = run(&["apply"], project.path(), &[]);
    insta::assert_snapshot!(rendered(&out, &flink, project.path()));
    assert_eq!(
        flink.count("POST /v2/sessions"),
        statements,
        "no session opened"
    );
    assert_eq!(flink.jobs().len(), 1);
    assert_eq!(record(project.path()).attempts, before.attempts);
}

#[test]
fn status_is_exit_0_while_the_recorded_job_runs_and_1_once_it_is_cancelled() {
    let flink = fake_flink(Behaviour::default());
    let project = project_on(&flink.address, "");
    ok(&run(&["apply"], project.path(), &[]));
    let job = record(project.path()).jobs[0].clone();
    let out = run(&["status"], project.path(), &[]);
    ok(&out);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!("job:        {job}, generation 1\n")),
        "{stdout}"
    );
    assert!(
        stdout.contains("state:      RUNNING since 2026-"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("ok: the recorded job runs the recorded plan\n"),
        "{stdout}"
    );
    flink.set_state(&job, "CANCELED");
    let out = run(&["status"], project.path(), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).ends_with(&format!(
            "drift: the recorded job {job} is CANCELED, not RUNNING\n"
        )),
        "{}",
        text(&out.stdout)
    );
    let json = run(&["status", "--json"], project.path(), &[]);
    assert_eq!(json.status.code(), Some(1));
    let document = common::valid_document("status", &json.stdout);
    assert!(text(&json.stdout).starts_with("{\n  \"status_version\": 1,"));
    assert_eq!(document["job"]["state"], "CANCELED");
    assert_eq!(document["drift"].as_array().unwrap().len(), 1);
}

#[test]
fn stop_records_a_savepoint_and_the_next_apply_continues_from_it() {
    let flink = fake_flink(Behaviour::default());
    let project = project_on(&flink.address, "");
    ok(&run(&["apply"], project.path(), &[]));
    let out = run(&["stop"], project.path(), &[]);
    insta::assert_snapshot!("stop", rendered(&out, &flink, project.path()));
    let stopped = record(project.path());
    assert_eq!(stopped.attempts[0].outcome, Outcome::Stopped);
    let savepoint = stopped.savepoints[0].path.clone();
    assert_eq!(running(&flink), Vec::<String>::new());
    let out = run(&["status"], project.path(), &[]);
    ok(&out);
    assert!(
        text(&out.stdout).ends_with("ok: the recorded job is stopped; the next apply of this plan continues from its savepoint\n"),
        "{}",
        text(&out.stdout)
    );
    let out = run(&["apply"], project.path(), &[]);
    insta::assert_snapshot!("apply_after_stop", rendered(&out, &flink, project.path()));
    let after = record(project.path());
    assert_eq!(after.attempts[1].action, Action::Restore);
    assert_eq!(
        after.attempts[1].restore_from.as_deref(),
        Some(savepoint.as_str())
    );
    assert_eq!(running(&flink), [after.jobs[0].clone()]);
    let out = run(&["stop"], project.path(), &[]);
    ok(&out);
    let again = run(&["stop"], project.path(), &[]);
    ok(&again);
    assert!(
        text(&again.stdout).starts_with("nothing to stop: job "),
        "{}",
        text(&again.stdout)
    );
}

#[test]
fn a_changed_key_is_refused_before_anything_is_touched_and_rebuilt_on_request() {
    let flink = fake_flink(Behaviour::default());
    let project = project_on(&flink.address, "");
    ok(&run(&["apply"], project.path(), &[]));
    let first = record(project.path()).jobs[0].clone();
    change_the_key(project.path());
    let before = std::fs::read(project.path().join(".streamform/applied/local.json")).unwrap();
    let requests = flink.state.lock().unwrap().requests.len();
    let out = run(&["apply"], project.path(), &[]);
    insta::assert_snapshot!("refused", rendered(&out, &flink, project.path()));
    assert_eq!(running(&flink), std::slice::from_ref(&first));
    assert_eq!(
        std::fs::read(project.path().join(".streamform/applied/local.json")).unwrap(),
        before
    );
    let touched: Vec<String> = flink.state.lock().unwrap().requests[requests..]
        .iter()
        .filter(|r| !r.starts_with("GET "))
        .cloned()
        .collect();
    assert_eq!(touched, Vec::<String>::new(), "only reads");
    let out = run(&["apply", "--rebuild"], project.path(), &[]);
    insta::assert_snapshot!("rebuild", rendered(&out, &flink, project.path()));
    let after = record(project.path());
    assert_eq!(running(&flink), after.jobs);
    assert_eq!(after.attempts[1].action, Action::Rebuild);
    assert_eq!(after.attempts[1].restore_from, None);
    assert_eq!(after.savepoints.len(), 1, "the old job's savepoint is kept");
}

#[test]
fn a_submission_whose_answer_never_comes_is_resolved_by_the_pinned_id() {
    let flink = fake_flink(Behaviour {
        set: SetBehaviour::HangButStart,
        ..Behaviour::default()
    });
    let project = project_on(&flink.address, "");
    let out = run(&["apply", "--timeout", "2"], project.path(), &[]);
    ok(&out);
    assert_eq!(flink.jobs().len(), 1);
    assert_eq!(
        flink.count("POST /v2/sessions/s1/statements"),
        5,
        "three definitions, the plan compiled, and the plan submitted once"
    );
    let out = run(&["apply"], project.path(), &[]);
    ok(&out);
    assert!(text(&out.stdout).contains("nothing to apply: job "));
    assert_eq!(flink.jobs().len(), 1);
}

#[test]
fn an_apply_interrupted_before_flink_knew_the_job_reuses_its_id() {
    let flink = fake_flink(Behaviour::default());
    let project = project_on(&flink.address, "");
    // An earlier apply wrote its attempt and died before the statement set reached Flink.
    ok(&run(&["apply"], project.path(), &[]));
    let mut interrupted = record(project.path());
    let job = interrupted.jobs[0].clone();
    flink.state.lock().unwrap().jobs.clear();
    let attempt = interrupted.attempts.last_mut().unwrap();
    attempt.outcome = Outcome::Pending;
    attempt.manifest = interrupted.manifest.take();
    interrupted.applied_at = None;
    interrupted.jobs.clear();
    std::fs::write(
        project.path().join(".streamform/applied/local.json"),
        interrupted.to_json_pretty(),
    )
    .unwrap();
    let status = run(&["status"], project.path(), &[]);
    assert_eq!(status.status.code(), Some(1));
    assert!(
        text(&status.stdout).contains(&format!(
            "drift: the apply of generation 1 did not finish: its job {job} is MISSING; run apply to settle it"
        )),
        "{}",
        text(&status.stdout)
    );
    ok(&run(&["apply"], project.path(), &[]));
    let after = record(project.path());
    assert_eq!(
        after.jobs,
        std::slice::from_ref(&job),
        "the same id, so no second job can exist"
    );
    assert_eq!(after.attempts.len(), 1);
    assert_eq!(running(&flink), [job]);
}

#[test]
fn a_job_cancelled_outside_is_continued_from_the_latest_savepoint_or_refused() {
    let flink = fake_flink(Behaviour::default());
    let project = project_on(&flink.address, "");
    ok(&run(&["apply"], project.path(), &[]));
    let job = record(project.path()).jobs[0].clone();
    flink.set_state(&job, "CANCELED");
    let out = run(&["apply"], project.path(), &[]);
    insta::assert_snapshot!("state_lost", rendered(&out, &flink, project.path()));
    assert_eq!(record(project.path()).attempts[0].outcome, Outcome::Ended);
    assert_eq!(running(&flink), Vec::<String>::new());
    // With a savepoint of this plan on record, apply continues from it.
    ok(&run(&["apply", "--rebuild"], project.path(), &[]));
    ok(&run(&["stop"], project.path(), &[]));
    ok(&run(&["apply"], project.path(), &[]));
    let second = record(project.path()).jobs[0].clone();
    flink.set_state(&second, "CANCELED");
    let out = run(&["apply"], project.path(), &[]);
    ok(&out);
    let savepoint = record(project.path()).savepoints[0].path.clone();
    assert!(
        text(&out.stdout).contains(&format!(
            "(generation 4) from savepoint {savepoint}, taken "
        )),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(running(&flink).len(), 1);
}

#[test]
fn a_lock_left_behind_does_not_block_and_a_held_lock_does() {
    let flink = fake_flink(Behaviour::default());
    let project = project_on(&flink.address, "");
    let lock = project.path().join(".streamform/applied/local.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, "").unwrap();
    ok(&run(&["apply"], project.path(), &[]));
    let held = std::fs::File::open(&lock).unwrap();
    held.lock().unwrap();
    let out = run(&["stop"], project.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "error: another streamform command is applying to or stopping target `local` (it holds .streamform/applied/local.lock)\n  help: wait for it to finish and run this again; the lock goes with the process that holds it\n"
    );
    assert_eq!(running(&flink).len(), 1, "nothing was stopped");
    drop(held);
    ok(&run(&["stop"], project.path(), &[]));
}

#[test]
fn a_job_that_fails_at_start_is_a_failed_apply_with_flinks_reason() {
    let flink = fake_flink(Behaviour {
        fail_at_start: Some(
            "org.apache.flink.kafka.shaded.org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.",
        ),
        ..Behaviour::default()
    });
    let project = project_on(&flink.address, "");
    let out = run(&["apply"], project.path(), &[]);
    insta::assert_snapshot!(rendered(&out, &flink, project.path()));
    let record = record(project.path());
    assert_eq!(record.attempts[0].outcome, Outcome::Failed);
    assert_eq!(record.manifest, None, "nothing ran, so no plan is recorded");
    // The next apply takes a new id: Flink would refuse the failed one.
    flink.behave(|b| b.fail_at_start = None);
    ok(&run(&["apply"], project.path(), &[]));
    let after = self::record(project.path());
    assert_eq!(after.attempts.len(), 2);
    assert_eq!(running(&flink), after.jobs);
}

#[test]
fn a_savepoint_that_cannot_be_taken_stops_nothing_and_is_exit_2() {
    let flink = fake_flink(Behaviour {
        savepoint_fails: Some(
            "java.util.concurrent.CompletionException: org.apache.flink.runtime.checkpoint.CheckpointException: Failure to finalize checkpoint.",
        ),
        ..Behaviour::default()
    });
    let project = project_on(&flink.address, "");
    ok(&run(&["apply"], project.path(), &[]));
    let before = std::fs::read(project.path().join(".streamform/applied/local.json")).unwrap();
    let out = run(&["stop"], project.path(), &[]);
    insta::assert_snapshot!(rendered(&out, &flink, project.path()));
    assert_eq!(running(&flink).len(), 1);
    assert_eq!(
        std::fs::read(project.path().join(".streamform/applied/local.json")).unwrap(),
        before
    );
}

#[test]
fn over_https_with_the_ca_file_apply_and_status_work_and_without_it_fail_on_tls() {
    let (certificate, key) = self_signed();
    let flink = fake_flink_https(Behaviour::default(), &certificate, &key);
    let project = project_on(&flink.address, "      ca_file: ca.pem\n");
    std::fs::write(project.path().join("ca.pem"), &certificate).unwrap();
    ok(&run(&["apply"], project.path(), &[]));
    ok(&run(&["status"], project.path(), &[]));
    assert_eq!(running(&flink).len(), 1);

    let without = project_on(&flink.address, "");
    let out = run(&["status"], without.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "error: the TLS handshake with the JobManager's REST API at {} failed: ",
            flink.address
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("help: if the cluster's certificate is signed by your own CA, name its PEM file as `flink.ca_file` of target `local`"),
        "{stderr}"
    );
}

#[test]
fn a_bearer_token_from_the_environment_is_sent_and_never_shown() {
    let token = "sf-test-token-4f9d2a7c1b";
    let (certificate, key) = self_signed();
    let flink = fake_flink_https(
        Behaviour {
            token: Some(token.into()),
            savepoint_fails: Some(
                "org.apache.flink.runtime.checkpoint.CheckpointException: refused for sf-test-token-4f9d2a7c1b",
            ),
            ..Behaviour::default()
        },
        &certificate,
        &key,
    );
    let project = project_on(
        &flink.address,
        "      ca_file: ca.pem\n      auth:\n        bearer: FLINK_TOKEN\n",
    );
    std::fs::write(project.path().join("ca.pem"), &certificate).unwrap();
    let missing = run(&["apply"], project.path(), &[]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        text(&missing.stderr).contains("error: target `local` takes its credential from the environment variable FLINK_TOKEN, which is not set\n"),
        "{}",
        text(&missing.stderr)
    );
    let wrong = run(&["status"], project.path(), &[("FLINK_TOKEN", "nope")]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        text(&wrong.stderr).starts_with("error: the JobManager's REST API refused the credential for GET /jobs/overview (HTTP 401)\n"),
        "{}",
        text(&wrong.stderr)
    );
    let env = [("FLINK_TOKEN", token)];
    let mut shown = String::new();
    for args in [
        &["apply"][..],
        &["status"],
        &["status", "--json"],
        &["stop"],
    ] {
        let out = run(args, project.path(), &env);
        shown.push_str(&text(&out.stdout));
        shown.push_str(&text(&out.stderr));
    }
    assert!(shown.contains("ok: applied\n"), "{shown}");
    assert!(
        shown.contains("the savepoint could not be taken"),
        "{shown}"
    );
    shown.push_str(
        &std::fs::read_to_string(project.path().join(".streamform/applied/local.json")).unwrap(),
    );
    assert!(!shown.contains(token), "the token leaked:\n{shown}");
    assert!(shown.contains("refused for ***"), "{shown}");
    let sent = flink.state.lock().unwrap().authorizations.clone();
    assert!(
        sent.iter()
            .all(|a| a == &format!("Bearer {token}") || a == "Bearer nope"),
        "{sent:?}"
    );
    assert!(!sent.is_empty());
}

#[test]
fn the_previous_plan_applied_again_continues_from_the_savepoint_its_job_left() {
    let flink = fake_flink(Behaviour::default());
    let project = project_on(&flink.address, "");
    ok(&run(&["apply"], project.path(), &[]));
    let first = record(project.path()).jobs[0].clone();
    let original =
        std::fs::read_to_string(project.path().join("models/customer_metrics.sql")).unwrap();
    let config = std::fs::read_to_string(project.path().join("streamform.yml")).unwrap();
    let fixtures = project.path().join("tests/customer_metrics.yml");
    let fixture = std::fs::read_to_string(&fixtures).unwrap();
    change_the_key(project.path());
    ok(&run(&["apply", "--rebuild"], project.path(), &[]));
    let kept = record(project.path()).savepoints[0].clone();
    assert_eq!(kept.job_id, first);
    // Back to the first plan: its own savepoint carries it.
    std::fs::write(project.path().join("models/customer_metrics.sql"), original).unwrap();
    std::fs::write(project.path().join("streamform.yml"), config).unwrap();
    std::fs::create_dir_all(fixtures.parent().unwrap()).unwrap();
    std::fs::write(&fixtures, fixture).unwrap();
    let out = run(&["apply"], project.path(), &[]);
    ok(&out);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "(generation 3) from savepoint {}, taken {} from generation 1: what the sources received since then is read again\n",
            kept.path, kept.taken_at
        )),
        "{stdout}"
    );
    let after = record(project.path());
    assert_eq!(
        after.attempts[2].restore_from.as_deref(),
        Some(kept.path.as_str())
    );
    assert_eq!(running(&flink), after.jobs);
}

#[test]
fn a_stop_that_finished_after_its_command_gave_up_is_recorded_by_the_next_command() {
    let flink = fake_flink(Behaviour::default());
    let project = project_on(&flink.address, "");
    ok(&run(&["apply"], project.path(), &[]));
    let job = record(project.path()).jobs[0].clone();
    flink.finish_with_savepoint(&job, "file:/fake/savepoints/late-1");
    let out = run(&["stop"], project.path(), &[]);
    ok(&out);
    assert_eq!(
        common::without_times(&text(&out.stdout)),
        format!(
            "note: job {job} had stopped with savepoint file:/fake/savepoints/late-1, which was not recorded (an earlier command gave up waiting, or the job was stopped through Flink's REST API); it is recorded now\nnothing to stop: job {job} was stopped with savepoint file:/fake/savepoints/late-1\n"
        )
    );
    let recorded = record(project.path());
    assert_eq!(recorded.attempts[0].outcome, Outcome::Stopped);
    let out = run(&["apply"], project.path(), &[]);
    ok(&out);
    assert!(text(&out.stdout).contains("from savepoint file:/fake/savepoints/late-1\n"));
}

#[test]
fn a_job_that_does_not_report_its_restore_is_cancelled_and_the_savepoint_kept() {
    let flink = fake_flink(Behaviour::default());
    let project = project_on(&flink.address, "");
    ok(&run(&["apply"], project.path(), &[]));
    ok(&run(&["stop"], project.path(), &[]));
    flink.behave(|b| b.ignore_restore = true);
    let out = run(&["apply"], project.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("but Flink does not report it restored from savepoint file:/fake/savepoints/savepoint-1 (it reports no restore); it was cancelled, so nothing runs with empty state"),
        "{stderr}"
    );
    assert_eq!(running(&flink), Vec::<String>::new());
    let after = record(project.path());
    assert_eq!(after.attempts[1].outcome, Outcome::Failed);
    assert_eq!(after.current().unwrap().outcome, Outcome::Stopped);
    // Once Flink restores, the next apply continues from the same savepoint.
    flink.behave(|b| b.ignore_restore = false);
    let out = run(&["apply"], project.path(), &[]);
    ok(&out);
    assert!(
        text(&out.stdout).contains(
            "ok: Flink reports the job restored from file:/fake/savepoints/savepoint-1\n"
        )
    );
}

#[test]
fn of_two_jobs_started_at_once_from_two_records_the_later_gives_way() {
    let flink = fake_flink(Behaviour {
        rival: true,
        ..Behaviour::default()
    });
    let project = project_on(&flink.address, "");
    let out = run(&["apply"], project.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let job = record(project.path()).attempts[0].job_id.clone();
    assert!(
        text(&out.stderr).contains(&format!(
            "error: job 00000000000000000000000000000001 of this application started before job {job}, from another copy of the record"
        )),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(running(&flink), ["00000000000000000000000000000001"]);
    assert_eq!(record(project.path()).attempts[0].outcome, Outcome::Failed);
}

#[test]
fn a_record_of_another_project_is_refused() {
    let flink = fake_flink(Behaviour::default());
    let project = project_on(&flink.address, "");
    ok(&run(&["apply"], project.path(), &[]));
    let config = project.path().join("streamform.yml");
    let text_of = std::fs::read_to_string(&config)
        .unwrap()
        .replace("name: customer-metrics", "name: other-project");
    std::fs::write(&config, text_of).unwrap();
    for args in [&["status"][..], &["stop"], &["apply"]] {
        let out = run(args, project.path(), &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains(
                "error: .streamform/applied/local.json records application `customer-metrics`, not `other-project`\n"
            ),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    assert_eq!(running(&flink).len(), 1);
}

#[test]
fn a_lock_that_is_not_a_file_and_a_credential_with_a_line_break_are_refused() {
    let flink = fake_flink(Behaviour::default());
    let project = project_on(&flink.address, "      auth:\n        bearer: FLINK_TOKEN\n");
    let out = run(&["status"], project.path(), &[("FLINK_TOKEN", "abc\n")]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "error: the environment variable FLINK_TOKEN of target `local` holds a character an HTTP header cannot carry (a line break, a control character or a non-ASCII letter)\n  help: set FLINK_TOKEN to the credential alone; a value read from a file often ends with a line break\n"
    );
    let lock = project.path().join(".streamform/applied/local.lock");
    std::fs::create_dir_all(&lock).unwrap();
    std::fs::write(project.path().join(".streamform/applied/local.json"), "{}").unwrap();
    let out = run(&["stop"], project.path(), &[("FLINK_TOKEN", "abc")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr)
            .starts_with("error: the lock .streamform/applied/local.lock is not a regular file\n"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_rebuild_of_the_same_statements_says_its_old_savepoint_is_not_continued_from() {
    let flink = fake_flink(Behaviour::default());
    let project = project_on(&flink.address, "");
    ok(&run(&["apply"], project.path(), &[]));
    let first = record(project.path()).jobs[0].clone();
    let out = run(&["apply", "--rebuild"], project.path(), &[]);
    ok(&out);
    assert!(
        text(&out.stdout).ends_with(&format!(
            "note: the savepoint of the replaced job {first}, file:/fake/savepoints/savepoint-1, stays in the record and on disk, but no apply continues from it: these statements started empty after it\n"
        )),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn an_http_port_asked_over_https_is_a_tls_failure_and_stop_without_a_record_needs_no_credential() {
    // A plain HTTP server answers a TLS handshake with an HTTP error, as Flink's does.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let https = format!("https://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            use std::io::Write;
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
        }
    });
    let project = project_on(&https, "      auth:\n        bearer: FLINK_TOKEN\n");
    let out = run(&["status"], project.path(), &[("FLINK_TOKEN", "abcdef")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with(&format!(
            "error: the TLS handshake with the JobManager's REST API at {https} failed: "
        )),
        "{}",
        text(&out.stderr)
    );
    let out = run(&["stop"], project.path(), &[]);
    ok(&out);
    assert_eq!(
        text(&out.stdout),
        "nothing to stop: nothing is recorded as applied to target `local`\n"
    );
    assert!(!project.path().join(".streamform").exists());
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(files_under(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn the_credential_appears_in_no_compiled_plan_record_or_output() {
    let flink = fake_flink(Behaviour::default());
    let project = project_on(&flink.address, "      auth:\n        bearer: FLINK_TOKEN\n");
    let secret = "sf-secret-credential-5c1e";
    let mut shown = String::new();
    for args in [
        vec!["apply"],
        vec!["plan"],
        vec!["status"],
        vec!["stop"],
        vec!["apply", "--rebuild"],
    ] {
        let out = run(&args, project.path(), &[("FLINK_TOKEN", secret)]);
        shown.push_str(&text(&out.stdout));
        shown.push_str(&text(&out.stderr));
    }
    assert!(!shown.contains(secret), "{shown}");
    let written = files_under(&project.path().join(".streamform"));
    assert!(
        written
            .iter()
            .any(|p| p.extension().is_some_and(|e| e == "json")
                && p.to_string_lossy().contains("/plans/")),
        "compiled plans were written: {written:?}"
    );
    for path in written {
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} holds the credential",
            path.display()
        );
    }
    // It was sent, as a header only.
    let sent = flink.state.lock().unwrap().authorizations.clone();
    assert!(sent.iter().any(|a| a.contains(secret)), "{sent:?}");
}

#[test]
fn a_compatible_change_carries_the_state_of_a_job_started_from_a_compiled_plan() {
    let flink = fake_flink(Behaviour::default());
    let project = project_on(&flink.address, "");
    ok(&run(&["apply"], project.path(), &[]));
    let first = record(project.path()).jobs[0].clone();
    assert!(record(project.path()).attempts[0].operators.is_some());
    // A new column computed after the aggregate: COMPATIBLE.
    std::fs::write(
        project.path().join("models/customer_metrics.sql"),
        "SELECT customer_id, SUM(amount) AS total_spend\nFROM source('orders')\nGROUP BY customer_id\n",
    )
    .unwrap();
    std::fs::write(
        project.path().join("models/big_spenders.sql"),
        "SELECT customer_id, total_spend\nFROM ref('customer_metrics')\nWHERE total_spend > 100\n",
    )
    .unwrap();
    let config = project.path().join("streamform.yml");
    let text_of = std::fs::read_to_string(&config).unwrap().replace(
        "\ntargets:",
        "  big_spenders:\n    materialized: upsert\n    key: [customer_id]\n    sink:\n      connector: kafka\n      topic: big-spenders\n      format: json\n\ntargets:",
    );
    std::fs::write(&config, text_of).unwrap();
    let planned = run(&["plan"], project.path(), &[]);
    assert_eq!(planned.status.code(), Some(0), "{}", text(&planned.stderr));
    assert!(
        text(&planned.stdout).contains(&format!(
            "apply: carries the state: stops job {first} with a savepoint and starts this plan from it"
        )),
        "{}",
        text(&planned.stdout)
    );
    let out = run(&["apply"], project.path(), &[]);
    ok(&out);
    let after = record(project.path());
    let upgrade = after.attempts.last().unwrap();
    assert_eq!(upgrade.action, Action::Upgrade);
    assert_eq!(
        upgrade.restore_from.as_deref(),
        Some("file:/fake/savepoints/savepoint-1")
    );
    assert_eq!(running(&flink), after.jobs);
    assert_eq!(running(&flink).len(), 1);
}

/// A plan whose stateful operators cannot be pinned (Flink 2.0 plans an upsert source's
/// normalization twice when its readers need different changes) still starts, from its
/// statements, saying so; the next change to it needs --rebuild (docs/upgrading.md).
#[test]
fn a_plan_that_cannot_be_pinned_starts_from_its_statements_and_says_so() {
    let flink = fake_flink(Behaviour {
        unpinnable: true,
        ..Behaviour::default()
    });
    let project = project_on(&flink.address, "");
    let out = run(&["apply"], project.path(), &[]);
    ok(&out);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("note: the job runs from its statements, not a pinned plan (Flink's compiled plan has operators that may hold state and that Streamform cannot tell the node of: stream-exec-changelog-normalize (node 7)); a later change cannot carry its state and will need --rebuild\n"),
        "{stdout}"
    );
    assert_eq!(flink.jobs().len(), 1);
    let after = record(project.path());
    assert_eq!(after.attempts[0].operators, None, "nothing pinned");
    assert_eq!(after.attempts[0].plan, None, "no compiled plan");
}
