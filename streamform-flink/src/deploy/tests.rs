//! The rules of `decide`, one case per row of apply's rules (docs/deployment.md).

use super::*;
use streamform_ir::record::Attempt;

const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const JOB: &str = "0123456789abcdef0000000000000001";
/// What the rows of docs/deployment.md decide under: a target that carries no state across changes.
const NOT: Carry = Carry::No(NotCarried::NoPlans);

fn detail(state: &str) -> JobDetail {
    JobDetail {
        summary: JobSummary {
            id: JOB.into(),
            name: "streamform/app/local".into(),
            state: state.into(),
            start_time: 1_000,
        },
        vertices_running: usize::from(state == "RUNNING"),
        vertices: 1,
    }
}

fn record(outcome: Outcome, savepoint: Option<&str>) -> AppliedRecord {
    let mut record = AppliedRecord::new("local", "app", "flink", "0123456789abcdef");
    record.attempts.push(Attempt {
        generation: 1,
        job_id: JOB.into(),
        job_name: "streamform/app/local".into(),
        action: Action::Start,
        restore_from: None,
        artifact: A.into(),
        application_digest: String::new(),
        submitted_at: "2026-12-01T00:00:00Z".into(),
        outcome,
        reason: None,
        manifest: None,
        plan: None,
        operators: None,
    });
    if let Some(artifact) = savepoint {
        record.savepoints.push(Savepoint {
            path: "file:/sp/savepoint-1".into(),
            job_id: JOB.into(),
            generation: 1,
            artifact: artifact.into(),
            taken_at: "2026-12-01T01:00:00Z".into(),
        });
    }
    record
}

fn observed(record: &AppliedRecord, seen: Seen) -> Observed {
    Observed {
        job: recorded_job(record),
        seen,
        others: Vec::new(),
    }
}

fn submit(action: Action, restore: bool, stop: bool) -> Decision {
    Decision::Submit {
        action,
        restore_from: restore.then(|| Savepoint {
            path: "file:/sp/savepoint-1".into(),
            job_id: JOB.into(),
            generation: 1,
            artifact: A.into(),
            taken_at: "2026-12-01T01:00:00Z".into(),
        }),
        stop_first: stop.then(|| JOB.to_string()),
    }
}

#[test]
fn nothing_recorded_starts_fresh() {
    let nothing = Observed {
        job: None,
        seen: Seen::Missing,
        others: Vec::new(),
    };
    assert_eq!(
        decide(None, &nothing, A, false, &NOT),
        submit(Action::Start, false, false)
    );
    assert_eq!(
        decide(None, &nothing, A, true, &NOT),
        submit(Action::Rebuild, false, false)
    );
}

#[test]
fn the_same_artifact_running_is_up_to_date() {
    let r = record(Outcome::Running, None);
    assert_eq!(
        decide(
            Some(&r),
            &observed(&r, Seen::Running(detail("RUNNING"))),
            A,
            false,
            &NOT
        ),
        Decision::UpToDate {
            job: JOB.into(),
            since: 1_000
        }
    );
}

#[test]
fn a_changed_artifact_is_refused_running_or_not_and_rebuilt_on_request() {
    let r = record(Outcome::Running, Some(A));
    let running = observed(&r, Seen::Running(detail("RUNNING")));
    assert_eq!(
        decide(Some(&r), &running, B, false, &NOT),
        Decision::Refuse(Refusal::Changed {
            job: JOB.into(),
            running: true,
            why: NotCarried::NoPlans
        })
    );
    assert_eq!(
        decide(Some(&r), &running, B, true, &NOT),
        submit(Action::Rebuild, false, true)
    );
    let stopped = record(Outcome::Stopped, Some(A));
    let finished = observed(&stopped, Seen::Ended(detail("FINISHED")));
    assert_eq!(
        decide(Some(&stopped), &finished, B, false, &NOT),
        Decision::Refuse(Refusal::Changed {
            job: JOB.into(),
            running: false,
            why: NotCarried::NoPlans
        })
    );
    assert_eq!(
        decide(Some(&stopped), &finished, B, true, &NOT),
        submit(Action::Rebuild, false, false)
    );
}

#[test]
fn a_rebuild_of_the_same_artifact_stops_and_starts_empty() {
    let r = record(Outcome::Running, None);
    let running = observed(&r, Seen::Running(detail("RUNNING")));
    assert_eq!(
        decide(Some(&r), &running, A, true, &NOT),
        submit(Action::Rebuild, false, true)
    );
}

#[test]
fn a_stopped_job_of_the_same_artifact_restores_from_its_savepoint() {
    let r = record(Outcome::Stopped, Some(A));
    for seen in [Seen::Ended(detail("FINISHED")), Seen::Missing] {
        assert_eq!(
            decide(Some(&r), &observed(&r, seen), A, false, &NOT),
            submit(Action::Restore, true, false)
        );
    }
}

#[test]
fn a_job_ended_outside_restores_from_the_latest_savepoint_of_its_artifact_or_is_lost() {
    let with = record(Outcome::Running, Some(A));
    assert_eq!(
        decide(
            Some(&with),
            &observed(&with, Seen::Ended(detail("CANCELED"))),
            A,
            false,
            &NOT
        ),
        submit(Action::Restore, true, false)
    );
    // A savepoint of another artifact cannot be used.
    let other = record(Outcome::Running, Some(B));
    assert_eq!(
        decide(
            Some(&other),
            &observed(&other, Seen::Ended(detail("CANCELED"))),
            A,
            false,
            &NOT
        ),
        Decision::Refuse(Refusal::StateLost {
            job: JOB.into(),
            state: "CANCELED".into()
        })
    );
    let without = record(Outcome::Running, None);
    assert_eq!(
        decide(
            Some(&without),
            &observed(&without, Seen::Missing),
            A,
            false,
            &NOT
        ),
        Decision::Refuse(Refusal::StateLost {
            job: JOB.into(),
            state: "MISSING".into()
        })
    );
}

#[test]
fn a_restarting_job_is_refused_unless_rebuilt() {
    let r = record(Outcome::Running, None);
    let restarting = observed(&r, Seen::NotRunning(detail("RESTARTING")));
    assert_eq!(
        decide(Some(&r), &restarting, A, false, &NOT),
        Decision::Refuse(Refusal::NotRunning {
            job: JOB.into(),
            state: "RESTARTING".into()
        })
    );
    assert_eq!(
        decide(Some(&r), &restarting, A, true, &NOT),
        submit(Action::Rebuild, false, true)
    );
}

#[test]
fn another_job_of_the_application_is_refused_even_for_a_rebuild() {
    let r = record(Outcome::Running, None);
    let mut seen = observed(&r, Seen::Running(detail("RUNNING")));
    let mut other = detail("RUNNING").summary;
    other.id = "ffffffffffffffff0000000000000009".into();
    seen.others.push(other.clone());
    for rebuild in [false, true] {
        assert_eq!(
            decide(Some(&r), &seen, A, rebuild, &NOT),
            Decision::Refuse(Refusal::Others {
                jobs: vec![other.clone()]
            })
        );
    }
}

#[test]
fn a_version_1_record_job_is_untracked_while_it_runs() {
    let mut r = AppliedRecord::new("local", "app", "flink", "0123456789abcdef");
    r.record_version = 1;
    r.jobs = vec![JOB.into()];
    let running = observed(&r, Seen::Running(detail("RUNNING")));
    assert_eq!(
        decide(Some(&r), &running, A, false, &NOT),
        Decision::Refuse(Refusal::Untracked {
            job: JOB.into(),
            running: true
        })
    );
    assert_eq!(
        decide(Some(&r), &running, A, true, &NOT),
        submit(Action::Rebuild, false, true)
    );
}

#[test]
fn ids_triggers_and_configuration_are_fixed_by_lineage_generation_and_job() {
    assert_eq!(
        job_id("0123456789abcdef", 10),
        "0123456789abcdef000000000000000a"
    );
    assert_eq!(stop_trigger(JOB), stop_trigger(JOB));
    assert_ne!(
        stop_trigger(JOB),
        stop_trigger("0123456789abcdef0000000000000002")
    );
    assert_eq!(stop_trigger(JOB).len(), 32);
    let mut attempt = record(Outcome::Pending, None).attempts.remove(0);
    attempt.restore_from = Some("file:/sp/savepoint-1".into());
    let config = job_config("app", "local", &attempt);
    assert_eq!(
        config.into_iter().collect::<Vec<_>>(),
        [
            ("$internal.pipeline.job-id".to_string(), JOB.to_string()),
            (
                "execution.state-recovery.path".into(),
                "file:/sp/savepoint-1".into()
            ),
            (
                "pipeline.global-job-parameters".into(),
                "streamform.target:local,streamform.generation:1,streamform.artifact:aaaaaaaaaaaa"
                    .into()
            ),
            ("pipeline.name".into(), "streamform/app/local".into()),
        ]
    );
}

#[test]
fn a_version_1_record_job_that_is_gone_left_no_state_any_plan_can_use() {
    let mut r = AppliedRecord::new("local", "app", "flink", "0123456789abcdef");
    r.record_version = 1;
    r.jobs = vec![JOB.into()];
    for seen in [Seen::Missing, Seen::Ended(detail("CANCELED"))] {
        assert_eq!(
            decide(Some(&r), &observed(&r, seen), A, false, &NOT),
            Decision::Refuse(Refusal::Untracked {
                job: JOB.into(),
                running: false
            })
        );
    }
}

#[test]
fn statements_that_ran_before_go_back_to_their_own_savepoint() {
    // Job 1 ran A; the record holds a savepoint of B (an earlier job's statements).
    let r = record(Outcome::Running, Some(B));
    let back = |stop: bool| Decision::Submit {
        action: Action::Restore,
        restore_from: r.latest_savepoint(B).cloned(),
        stop_first: stop.then(|| JOB.to_string()),
    };
    assert_eq!(
        decide(
            Some(&r),
            &observed(&r, Seen::Running(detail("RUNNING"))),
            B,
            false,
            &NOT
        ),
        back(true)
    );
    assert_eq!(
        decide(
            Some(&r),
            &observed(&r, Seen::Ended(detail("CANCELED"))),
            B,
            false,
            &NOT
        ),
        back(false)
    );
}

#[test]
fn a_job_still_finishing_its_stop_is_refused_not_up_to_date() {
    let r = record(Outcome::Stopped, Some(A));
    assert_eq!(
        decide(
            Some(&r),
            &observed(&r, Seen::Running(detail("RUNNING"))),
            A,
            false,
            &NOT
        ),
        Decision::Refuse(Refusal::Stopping { job: JOB.into() })
    );
}

#[test]
fn a_rebuild_makes_the_savepoints_from_before_it_unusable() {
    // Generation 1 ran A and was stopped (savepoint); generation 2 rebuilt A and ended.
    let mut r = record(Outcome::Stopped, Some(A));
    let mut rebuilt = r.attempts[0].clone();
    rebuilt.generation = 2;
    rebuilt.job_id = "0123456789abcdef0000000000000002".into();
    rebuilt.action = Action::Rebuild;
    rebuilt.outcome = Outcome::Running;
    r.attempts.push(rebuilt);
    let seen = Observed {
        job: recorded_job(&r),
        seen: Seen::Ended(detail("CANCELED")),
        others: Vec::new(),
    };
    assert_eq!(
        decide(Some(&r), &seen, A, false, &NOT),
        Decision::Refuse(Refusal::StateLost {
            job: "0123456789abcdef0000000000000002".into(),
            state: "CANCELED".into()
        })
    );
}

/// A record whose job was started from a compiled plan with pinned operators.
fn pinned(outcome: Outcome, savepoint: Option<&str>) -> AppliedRecord {
    let mut r = record(outcome, savepoint);
    r.attempts[0].plan = Some("file:///plans/aaaaaaaaaaaa-g1.json".into());
    r.attempts[0].operators = Some(BTreeMap::from([(
        "m::aggregate::0".to_string(),
        "m::aggregate::0".to_string(),
    )]));
    r
}

#[test]
fn a_change_that_keeps_the_state_carries_it_from_a_pinned_job_running_or_stopped() {
    // docs/upgrading.md: SAFE or COMPATIBLE, and the job's operators pinned.
    let running = pinned(Outcome::Running, Some(A));
    assert_eq!(
        decide(
            Some(&running),
            &observed(&running, Seen::Running(detail("RUNNING"))),
            B,
            false,
            &Carry::Keeps
        ),
        submit(Action::Upgrade, false, true)
    );
    let stopped = pinned(Outcome::Stopped, Some(A));
    assert_eq!(
        decide(
            Some(&stopped),
            &observed(&stopped, Seen::Ended(detail("FINISHED"))),
            B,
            false,
            &Carry::Keeps
        ),
        submit(Action::Upgrade, true, false)
    );
    // --rebuild still starts empty.
    assert_eq!(
        decide(
            Some(&running),
            &observed(&running, Seen::Running(detail("RUNNING"))),
            B,
            true,
            &Carry::Keeps
        ),
        submit(Action::Rebuild, false, true)
    );
}

#[test]
fn a_change_above_compatible_or_from_an_unpinned_job_is_refused_naming_why() {
    let running = pinned(Outcome::Running, Some(A));
    let verdict = Carry::No(NotCarried::Verdict(Classification::StateIncompatible));
    assert_eq!(
        decide(
            Some(&running),
            &observed(&running, Seen::Running(detail("RUNNING"))),
            B,
            false,
            &verdict
        ),
        Decision::Refuse(Refusal::Changed {
            job: JOB.into(),
            running: true,
            why: NotCarried::Verdict(Classification::StateIncompatible)
        })
    );
    // Started from statements by an earlier apply: its operators have Flink's own ids.
    let statements = record(Outcome::Running, Some(A));
    assert_eq!(
        decide(
            Some(&statements),
            &observed(&statements, Seen::Running(detail("RUNNING"))),
            B,
            false,
            &Carry::Keeps
        ),
        Decision::Refuse(Refusal::Changed {
            job: JOB.into(),
            running: true,
            why: NotCarried::Unpinned
        })
    );
    // A pinned job that ended without Streamform left no savepoint: its state is lost.
    let ended = pinned(Outcome::Ended, None);
    assert_eq!(
        decide(
            Some(&ended),
            &observed(&ended, Seen::Ended(detail("CANCELED"))),
            B,
            false,
            &Carry::Keeps
        ),
        Decision::Refuse(Refusal::StateLost {
            job: JOB.into(),
            state: "CANCELED".into()
        })
    );
}

#[test]
fn plan_expects_what_apply_decides_from_the_record_alone() {
    let running = pinned(Outcome::Running, Some(A));
    assert_eq!(
        expected(Some(&running), B, &Carry::Keeps),
        submit(Action::Upgrade, false, true)
    );
    assert!(matches!(
        expected(Some(&running), A, &Carry::Keeps),
        Decision::UpToDate { .. }
    ));
    let stopped = pinned(Outcome::Stopped, Some(A));
    assert_eq!(
        expected(Some(&stopped), B, &Carry::Keeps),
        submit(Action::Upgrade, true, false)
    );
    assert_eq!(
        expected(None, B, &Carry::Keeps),
        submit(Action::Start, false, false)
    );
}

#[test]
fn going_back_to_earlier_statements_carries_the_running_state_when_the_change_keeps_it() {
    // The job runs B; A ran before and left a savepoint. Back to A, a change that keeps
    // the state: the running job's state is carried rather than A's older savepoint read.
    let mut r = pinned(Outcome::Running, Some(A));
    r.attempts[0].artifact = B.into();
    let running = observed(&r, Seen::Running(detail("RUNNING")));
    assert_eq!(
        decide(Some(&r), &running, A, false, &Carry::Keeps),
        submit(Action::Upgrade, false, true)
    );
    // A change that does not keep it (going back across a rebuild, say): A's own savepoint.
    let incompatible = Carry::No(NotCarried::Verdict(Classification::StateIncompatible));
    assert_eq!(
        decide(Some(&r), &running, A, false, &incompatible),
        submit(Action::Restore, true, true)
    );
}
