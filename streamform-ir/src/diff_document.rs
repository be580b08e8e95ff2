//! The diff document (`plan --json`, `diff_version` 1) and the `plan` text, rendered from
//! the document so the two cannot disagree.
//!
//! See docs/plan-diff.md, "Reading the output" and "The diff document"; the output blocks of
//! docs/upgrading.md; and docs/commands.md, "streamform plan" and "streamform apply".

use std::fmt::Write;

use serde::Serialize;

use crate::diff::{
    Classification, Field, ModelChange, ModelDiff, NodeChange, NodeDiff, PlanDiff, verdict_counts,
};
use crate::identity::short;
use crate::manifest::Manifest;
use crate::record::AppliedRecord;

/// The `diff_version` this build writes.
pub const DIFF_VERSION: u32 = 1;

/// What the running side was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(deny_unknown_fields)]
pub enum RunningKind {
    /// An applied record (`.streamform/applied/<target>.json`, or one named by `--against`).
    Record,
    /// A plan manifest named by `--against` (`build/plan.json`).
    Manifest,
    /// Nothing is recorded as applied to the target.
    Nothing,
}

/// The running side's provenance.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RunningSide {
    /// Record, manifest, or nothing.
    pub kind: RunningKind,
    /// The file it was read from (the target's record path when nothing is recorded).
    pub path: String,
    /// The running manifest's application digest; `null` when nothing runs.
    pub application_digest: Option<String>,
    /// When the record was applied (RFC 3339); `null` unless a record.
    pub applied_at: Option<String>,
    /// The Streamform version that applied it; `null` unless a record.
    pub streamform_version: Option<String>,
    /// The backend it was applied to; `null` unless a record.
    pub backend: Option<String>,
    /// The jobs it started; empty unless a record.
    pub jobs: Vec<String>,
}

impl RunningSide {
    /// Nothing recorded at `path`.
    pub fn nothing(path: impl Into<String>) -> RunningSide {
        RunningSide {
            kind: RunningKind::Nothing,
            path: path.into(),
            application_digest: None,
            applied_at: None,
            streamform_version: None,
            backend: None,
            jobs: Vec::new(),
        }
    }

    /// An applied record read from `path`.
    pub fn record(path: impl Into<String>, record: &AppliedRecord) -> RunningSide {
        RunningSide {
            kind: RunningKind::Record,
            path: path.into(),
            application_digest: record
                .manifest
                .as_ref()
                .map(|m| m.application_digest.clone()),
            applied_at: record.applied_at.clone(),
            streamform_version: Some(record.streamform_version.clone()),
            backend: Some(record.backend.clone()),
            jobs: record.jobs.clone(),
        }
    }

    /// A plan manifest read from `path`.
    pub fn manifest(path: impl Into<String>, manifest: &Manifest) -> RunningSide {
        RunningSide {
            kind: RunningKind::Manifest,
            path: path.into(),
            application_digest: Some(manifest.application_digest.clone()),
            ..RunningSide::nothing("")
        }
    }
}

/// The desired side: the plan compiled from the project.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DesiredSide {
    /// The desired manifest's application digest.
    pub application_digest: String,
}

/// A warning about the project, with where it points.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DiffWarning {
    /// The file, relative to the project (`streamform.yml`).
    pub path: String,
    /// 1-based line, when the warning points into the file.
    pub line: Option<usize>,
    /// 1-based column in characters, when the warning points into the file.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub help: Option<String>,
}

/// The whole `plan --json` document.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct DiffDocument {
    /// Always [`DIFF_VERSION`].
    pub diff_version: u32,
    /// The project's name.
    pub project: String,
    /// The target compared against; `null` when `--against` names a file and no target
    /// was chosen.
    pub target: Option<String>,
    /// The file named by `--against`; `null` when the target's record was read.
    pub against: Option<String>,
    /// What runs.
    pub running: RunningSide,
    /// What the project describes.
    pub desired: DesiredSide,
    /// The application's verdict: the most severe model verdict.
    pub verdict: Classification,
    /// Every model: desired models in dependency order, then removed ones.
    pub models: Vec<ModelDiff>,
    /// Warnings, such as hints that name no running node.
    pub warnings: Vec<DiffWarning>,
    /// What the target's backend does with the verdict; `null` when there is nothing to say.
    pub note: Option<String>,
    /// What `apply` would do on the target, decided as apply decides from the applied
    /// record (without asking the cluster); absent with `--against` and no target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply: Option<ApplyPlan>,
}

/// What `apply` would do on the target (docs/commands.md, "streamform plan"): `plan` exits
/// 0 exactly when apply would go on without `--rebuild`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ApplyPlan {
    /// The action.
    pub action: ApplyAction,
    /// What it means here, as `plan` prints it.
    pub detail: String,
}

/// An action of `apply`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ApplyAction {
    /// Nothing runs yet: start the plan with empty state.
    Start,
    /// The recorded job runs this plan already.
    Nothing,
    /// Start this plan from the savepoint a job running it left.
    Restore,
    /// Carry the recorded job's state into the changed plan.
    Carry,
    /// Refuse, touching nothing (`--rebuild` starts the plan with empty state).
    Refuse,
}

impl DiffDocument {
    /// Assembles the document from the diff and its provenance.
    pub fn new(
        project: impl Into<String>,
        target: Option<String>,
        against: Option<String>,
        running: RunningSide,
        desired: &Manifest,
        diff: &PlanDiff,
    ) -> DiffDocument {
        DiffDocument {
            diff_version: DIFF_VERSION,
            project: project.into(),
            target,
            against,
            running,
            desired: DesiredSide {
                application_digest: desired.application_digest.clone(),
            },
            verdict: diff.verdict,
            models: diff.models.clone(),
            warnings: Vec::new(),
            note: None,
            apply: None,
        }
    }

    /// The document as pretty-printed JSON (two-space indent), ending with a newline.
    pub fn to_json_pretty(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a diff always serializes");
        text.push('\n');
        text
    }

    /// What is compared against: ``target `local` `` or the `--against` file.
    fn against_what(&self) -> String {
        match (&self.against, &self.target) {
            (Some(path), _) => path.clone(),
            (None, Some(target)) => format!("target `{target}`"),
            (None, None) => self.running.path.clone(),
        }
    }

    /// The one line `apply` prints before applying:
    /// ``plan: SAFE against target `local`, applied 2026-08-27T10:12:03Z``, or
    /// ``plan: nothing is recorded as applied to target `local`; the application starts fresh``.
    pub fn verdict_line(&self) -> String {
        let line = match self.running.kind {
            RunningKind::Nothing => format!(
                "plan: nothing is recorded as applied to {}; the application starts fresh",
                self.against_what()
            ),
            _ => {
                let mut line = format!("plan: {} against {}", self.verdict, self.against_what());
                if let Some(at) = &self.running.applied_at {
                    let _ = write!(line, ", applied {at}");
                }
                line
            }
        };
        crate::printable(&line).into_owned()
    }

    /// The `plan` text: the header, every model, the verdict and the backend's note. Ends
    /// with a newline. Warnings are not included; they are diagnostics.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        push_line(
            &mut out,
            format!("plan: {} against {}", self.project, self.against_what()),
        );
        let running = &self.running;
        let digest = |d: &Option<String>| d.as_deref().map(short).unwrap_or_default().to_string();
        match running.kind {
            RunningKind::Nothing => {
                push_line(
                    &mut out,
                    format!(
                        "  running: nothing is recorded as applied to {}",
                        self.against_what()
                    ),
                );
            }
            RunningKind::Manifest => {
                push_line(
                    &mut out,
                    format!(
                        "  running: plan manifest {}, application digest {}",
                        running.path,
                        digest(&running.application_digest)
                    ),
                );
            }
            RunningKind::Record => {
                let mut line = format!(
                    "  running: applied {} by streamform {}",
                    running.applied_at.as_deref().unwrap_or(""),
                    running.streamform_version.as_deref().unwrap_or("")
                );
                if !running.jobs.is_empty() {
                    let jobs: Vec<&str> = running.jobs.iter().map(|j| short(j)).collect();
                    let word = if jobs.len() == 1 { "job" } else { "jobs" };
                    let _ = write!(line, ", {word} {}", jobs.join(", "));
                }
                push_line(
                    &mut out,
                    format!(
                        "{line}, application digest {}",
                        digest(&running.application_digest)
                    ),
                );
            }
        }
        push_line(
            &mut out,
            format!(
                "  desired: application digest {}",
                short(&self.desired.application_digest)
            ),
        );
        for model in &self.models {
            out.push('\n');
            render_model(&mut out, model);
        }
        out.push('\n');
        let counts = verdict_counts(&self.models);
        if counts.is_empty() {
            push_line(&mut out, format!("verdict: {}", self.verdict));
        } else {
            push_line(&mut out, format!("verdict: {} ({counts})", self.verdict));
        }
        if let Some(apply) = &self.apply {
            push_line(&mut out, format!("apply: {}", apply.detail));
        }
        if let Some(note) = &self.note {
            push_line(&mut out, format!("note: {note}"));
        }
        out
    }
}

fn render_model(out: &mut String, model: &ModelDiff) {
    let status = match (model.change, model.verdict) {
        (ModelChange::New, _) => "new".to_string(),
        (_, Classification::Safe) => "SAFE".to_string(),
        (ModelChange::Added, _) => "added".to_string(),
        (ModelChange::Removed, _) => "removed".to_string(),
        (_, _) => match &model.renamed_from {
            Some(old) => format!("changed (renamed from {old})"),
            None => "changed".to_string(),
        },
    };
    push_line(out, format!("{}  {status}", model.name));
    for node in &model.nodes {
        render_node(out, node);
    }
    if model.change != ModelChange::New && model.verdict > Classification::Safe {
        push_line(
            out,
            format!("  {}: {}", model.verdict, model.verdict.model_action()),
        );
    }
}

fn render_node(out: &mut String, node: &NodeDiff) {
    let title = crate::manifest::operator_title(&node.operator);
    let change = match node.change {
        NodeChange::Added => "added",
        NodeChange::Removed => "removed",
        NodeChange::Changed => "changed",
    };
    let was = node
        .was
        .as_ref()
        .map(|w| format!(" (was {w})"))
        .unwrap_or_default();
    push_line(out, format!("  {}  {title}  {change}{was}", node.id));
    for f in &node.fields {
        let (old, new) = match f.field {
            Field::StateDigest => (short(&f.old), short(&f.new)),
            _ => (f.old.as_str(), f.new.as_str()),
        };
        push_line(out, format!("    {}: {old} → {new}", f.field.label()));
    }
    for r in &node.reasons {
        push_line(out, format!("    {}: {}", r.classification, r.reason));
    }
}

/// Appends one line, with every control character in it escaped: the values come from
/// files (a record, a manifest) that may hold anything.
fn push_line(out: &mut String, line: String) {
    out.push_str(&crate::printable(&line));
    out.push('\n');
}
