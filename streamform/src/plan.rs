//! `streamform plan`: compare the running plan with the plan the project describes and
//! classify every change; `apply` runs the same comparison before it applies.
//!
//! See docs/commands.md, "streamform plan", docs/plan-diff.md and docs/upgrading.md. The
//! comparison itself is `streamform_ir::diff`, asked through the `plan_diff` query.

use std::path::Path;

use streamform_db::db::{
    PlanComparison, RunningRead, application_manifest, plan_diff, project_config, running_plan,
};
use streamform_db::load::load_file;
use streamform_db::target::{ChosenTarget, Need, applied_record_path};
use streamform_db::{Database, Project};
use streamform_flink::deploy::{Decision, Refusal};
use streamform_ir::diff::Classification;
use streamform_ir::diff_document::{
    ApplyAction, ApplyPlan, DiffDocument, DiffWarning, RunningSide,
};
use streamform_ir::record::{Action, Running};

use crate::build::{cannot_run, choose, compiled};
use crate::{INVALID, OK, Output, render};

/// Runs `plan`; `root` is the project directory the target's record is under.
pub fn plan(
    db: &Database,
    project: Project,
    root: &Path,
    target: Option<&str>,
    against: Option<&Path>,
    json: bool,
    color: bool,
) -> (Output, u8) {
    let plans = match compiled(db, project, color) {
        Ok(plans) => plans,
        Err(refused) => return refused,
    };
    let need = if against.is_some() {
        Need::Optional
    } else {
        Need::Plan
    };
    let chosen = match choose(db, project, target, need, plans) {
        Ok(chosen) => chosen,
        Err(refused) => return refused,
    };
    let compared = match compare(db, project, root, chosen.as_ref(), against, true) {
        Ok(compared) => compared,
        Err(refused) => return refused,
    };
    let mut compared = compared;
    let mut code = if compared.document.verdict.continues() {
        OK
    } else {
        INVALID
    };
    // With a target, what apply would do there, decided as apply decides (docs/upgrading.md).
    if against.is_none()
        && let Some(target) = &chosen
        && target.backend == "flink"
    {
        let apply = apply_plan(db, project, root, target, &compared);
        code = if apply.action == ApplyAction::Refuse {
            INVALID
        } else {
            OK
        };
        compared.document.note = None;
        compared.document.apply = Some(apply);
    }
    let mut out = Output::default();
    if json {
        out.stdout = compared.document.to_json_pretty();
    } else {
        out.stdout = compared.document.render_text();
        for d in &compared.comparison.warnings {
            out.stderr.push_str(&render::diagnostic(db, d, color));
        }
    }
    (out, code)
}

/// What apply would do on `target`: the same decision, from the applied record, the
/// generated application and what the plan diff allows.
fn apply_plan(
    db: &Database,
    project: Project,
    root: &Path,
    target: &ChosenTarget,
    compared: &Compared,
) -> ApplyPlan {
    let refuse = |detail: String| ApplyPlan {
        action: ApplyAction::Refuse,
        detail,
    };
    let app = streamform_db::backend::flink_application(db, project, target.kafka.clone())
        .as_ref()
        .and_then(|b| b.app.clone());
    let Some(app) = app else {
        return refuse(
            "refuses: the application cannot run on Flink (`streamform build --backend flink` says why)".into(),
        );
    };
    if !app.has_sinks() {
        return ApplyPlan {
            action: ApplyAction::Nothing,
            detail: "nothing to apply: no model declares a sink".into(),
        };
    }
    let plans = target
        .flink
        .as_ref()
        .and_then(|f| crate::lifecycle::plans_folder(root, &target.name, f))
        .is_some();
    let carry = crate::lifecycle::carry(&compared.comparison.diff, plans);
    let desired = streamform_flink::deploy::artifact(&app);
    let decision = streamform_flink::deploy::expected(compared.record.as_ref(), &desired, &carry);
    let verdict = compared.document.verdict.label();
    match decision {
        Decision::UpToDate { job, .. } => ApplyPlan {
            action: ApplyAction::Nothing,
            detail: format!("nothing to do: job {job} runs this plan"),
        },
        Decision::Submit {
            action: Action::Upgrade,
            restore_from,
            stop_first,
        } => ApplyPlan {
            action: ApplyAction::Carry,
            detail: match (stop_first, restore_from) {
                (Some(job), _) => format!(
                    "carries the state: stops job {job} with a savepoint and starts this plan from it; every node it keeps continues, new ones start empty"
                ),
                (None, Some(savepoint)) => format!(
                    "carries the state: starts this plan from savepoint {} of the stopped job {}; every node it keeps continues, new ones start empty",
                    savepoint.path, savepoint.job_id
                ),
                (None, None) => "carries the state".into(),
            },
        },
        Decision::Submit {
            action: Action::Restore,
            restore_from,
            ..
        } => ApplyPlan {
            action: ApplyAction::Restore,
            detail: format!(
                "starts this plan again from savepoint {} of a job that ran it",
                restore_from.map(|s| s.path).unwrap_or_default()
            ),
        },
        Decision::Submit { .. } => ApplyPlan {
            action: ApplyAction::Start,
            detail: "starts the plan with empty state: nothing runs on this target yet".into(),
        },
        Decision::Refuse(Refusal::Changed { job, why, .. }) => refuse(format!(
            "refuses: the state of job {job} cannot be carried into this plan: {}; `apply --rebuild` starts it with empty state",
            crate::apply::not_carried(&why, verdict)
        )),
        Decision::Refuse(Refusal::Untracked { job, .. }) => refuse(format!(
            "refuses: job {job} was started before deployments were tracked; `apply --rebuild` starts this plan with empty state"
        )),
        Decision::Refuse(Refusal::StateLost { job, state }) => refuse(format!(
            "refuses: the recorded job {job} is {state} and left no savepoint this plan continues from; `apply --rebuild` starts it with empty state"
        )),
        Decision::Refuse(Refusal::Stopping { job }) => refuse(format!(
            "refuses: job {job} is being stopped with a savepoint; apply again once it has stopped"
        )),
        Decision::Refuse(Refusal::NotRunning { job, state }) => {
            refuse(format!("refuses: the recorded job {job} is {state}"))
        }
        Decision::Refuse(Refusal::Others { jobs }) => refuse(format!(
            "refuses: {} of this application that the record does not know",
            jobs.len()
        )),
    }
}

/// A comparison ready to print: the document and the diagnostics behind its warnings.
pub struct Compared {
    /// The diff document (`plan --json`), from which the text is rendered too.
    pub document: DiffDocument,
    /// The comparison the query returned.
    pub comparison: PlanComparison,
    /// The target's applied record, when it was read.
    pub record: Option<streamform_ir::record::AppliedRecord>,
}

/// Reads the running side (`against`, or the chosen target's applied record) and compares
/// it with the project's plan. Refusals are exit 2: a file that cannot be read as a record
/// or a manifest, a missing `--against` file, a record of another target or project.
/// `for_plan` says the command is `plan`, whose help can point at `--against`.
pub fn compare(
    db: &Database,
    project: Project,
    root: &Path,
    chosen: Option<&ChosenTarget>,
    against: Option<&Path>,
    for_plan: bool,
) -> Result<Compared, (Output, u8)> {
    let (file, help) = match (against, chosen) {
        (Some(path), _) => {
            let shown = path.display().to_string();
            (
                load_file(db, &shown, path),
                "--against takes a plan manifest (build/plan.json, inspect-plan --json) or an applied record (.streamform/applied/<target>.json)",
            )
        }
        (None, Some(target)) => {
            let relative = applied_record_path(&target.name);
            (
                load_file(db, &relative, &root.join(&relative)),
                if for_plan {
                    "streamform apply writes this record and plan reads it strictly; restore it from where your team keeps records (a newer Streamform may have written it), or compare with a manifest: --against build/plan.json"
                } else {
                    "apply writes this record and reads it strictly; restore it from where your team keeps records (a newer Streamform may have written it), or move it aside to start over (jobs it started keep running)"
                },
            )
        }
        (None, None) => unreachable!("plan without --against needs a target"),
    };
    // The path as given: the document holds it as it is, messages print it escaped.
    let shown = file.path(db).clone();
    let refuse = |why: &str| {
        cannot_run(
            format!("cannot read the running plan from {shown}: {why}"),
            Some(help.into()),
        )
    };
    let running = match running_plan(db, file) {
        RunningRead::Missing if against.is_some() => {
            return Err(refuse("the file does not exist"));
        }
        RunningRead::Missing => None,
        RunningRead::Refused(why) => return Err(refuse(why)),
        RunningRead::Read(Running::Manifest(_)) if against.is_none() => {
            return Err(refuse(
                "it holds a plan manifest, not the applied record apply writes there; compare with a manifest through --against FILE",
            ));
        }
        RunningRead::Read(running) => Some(running),
    };
    let name = project_config(db, project)
        .config
        .as_ref()
        .map(|c| c.name.clone())
        .unwrap_or_default();
    let record = match (&running, against) {
        (Some(Running::Record(record)), None) => Some((**record).clone()),
        _ => None,
    };
    if let (None, Some(target), Some(Running::Record(record))) = (against, chosen, running)
        && let Some(foreign) = record.foreign(&target.name, &name)
    {
        return Err(crate::lifecycle::foreign_record(
            &shown,
            foreign,
            &target.name,
            &name,
            if for_plan {
                ", or compare with it explicitly: --against FILE"
            } else {
                ""
            },
        ));
    }
    let Some(comparison) = plan_diff(db, project, file).clone() else {
        return Err(cannot_run(
            "the application could not be planned".into(),
            None,
        ));
    };
    let desired = application_manifest(db, project)
        .as_ref()
        .expect("plan_diff compiled the application");
    let side = match running {
        None => RunningSide::nothing(shown.clone()),
        Some(Running::Record(record)) if record.manifest.is_none() => {
            RunningSide::nothing(shown.clone())
        }
        Some(Running::Record(record)) => RunningSide::record(shown.clone(), record),
        Some(Running::Manifest(manifest)) => RunningSide::manifest(shown.clone(), manifest),
    };
    let mut document = DiffDocument::new(
        name,
        chosen.map(|c| c.name.clone()),
        against.map(|_| shown.clone()),
        side,
        desired,
        &comparison.diff,
    );
    let backend = chosen
        .map(|c| c.backend.as_str())
        .or(document.running.backend.as_deref());
    // With a target, `plan` says what apply would do there instead (`ApplyPlan`).
    if against.is_some() && backend == Some("flink") && document.verdict > Classification::Safe {
        document.note = Some(streamform_flink::STATE_NOTE.to_string());
    }
    document.warnings = comparison
        .warnings
        .iter()
        .map(|d| {
            let position = d
                .span
                .as_ref()
                .map(|s| streamform_db::db::position(db, *project.config(db), s.start));
            DiffWarning {
                path: d.path(db).unwrap_or_default().to_string(),
                line: position.map(|p| p.0),
                column: position.map(|p| p.1),
                message: d.message.clone(),
                help: d.help.clone(),
            }
        })
        .collect();
    Ok(Compared {
        document,
        comparison,
        record,
    })
}
