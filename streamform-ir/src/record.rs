//! The applied record: what `apply` last submitted to a target, written to
//! `.streamform/applied/<target>.json` with the manifest of the plan it applied.
//!
//! See docs/plan-diff.md, "The applied record", and docs/deployment.md, "The record"; the
//! rules of docs/protocol.md: version first, another version or an unknown field refused.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::manifest::{
    Document, Manifest, ManifestError, check_version, describe_json, parse_object,
};

/// The `record_version` this build writes. It reads 1 as well (a record written before
/// deployments were tracked, whose jobs are unpinned) and 2 (before attempts recorded the
/// compiled plan they ran and how its operators were pinned).
pub const RECORD_VERSION: u32 = 3;

// The shapes `check` holds the record's fields to, for the published schema.
const JOB_ID: &str = "^[0-9a-f]{32}$";
const LINEAGE: &str = "^[0-9a-f]{16}$";
const ARTIFACT: &str = "^([0-9a-f]{64})?$";
const BACKEND: &str = "^[a-z][a-z0-9-]*$";

/// What Streamform knows of one target: the plan it runs, the job that runs it, every
/// attempt to start a job and every savepoint taken.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppliedRecord {
    /// [`RECORD_VERSION`] when written by this build; 1 for an older record.
    pub record_version: u32,
    /// The target's name under `targets:`.
    pub target: String,
    /// The project's name (record_version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application: Option<String>,
    /// When the plan in `manifest` started running, RFC 3339 in UTC
    /// (`2026-08-27T10:12:03Z`); absent until a job has run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub applied_at: Option<String>,
    /// The version of the Streamform that wrote the record.
    pub streamform_version: String,
    /// The target's backend, `flink`.
    #[schemars(pattern(BACKEND))]
    pub backend: String,
    /// The job running (or last run) the plan in `manifest`; in a record_version 1 record,
    /// every job that apply started.
    #[schemars(inner(pattern(JOB_ID)))]
    pub jobs: Vec<String>,
    /// 16 hex digits chosen when the record is first written (a digest of the clock, the
    /// process and the names, so no two records share one); every job id of this record
    /// starts with it (record_version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(pattern(LINEAGE))]
    pub lineage: Option<String>,
    /// Every attempt to start a job, oldest first (record_version 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Attempt>,
    /// Every savepoint taken, oldest first (record_version 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub savepoints: Vec<Savepoint>,
    /// The manifest of the plan the recorded job runs, verbatim; absent until a job has run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<Manifest>,
}

/// One attempt to start a job, written before the job is submitted.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Attempt {
    /// 1 for the first attempt, one more for each after it.
    pub generation: u64,
    /// The job id Streamform chose for it.
    #[schemars(pattern(JOB_ID))]
    pub job_id: String,
    /// The job's name, `streamform/<project>/<target>`.
    pub job_name: String,
    /// Why it was started.
    pub action: Action,
    /// The savepoint it starts from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore_from: Option<String>,
    /// The SHA-256 digest of the statements it submits: the deployed artifact (empty for a
    /// job started before deployments were tracked).
    #[schemars(pattern(ARTIFACT))]
    pub artifact: String,
    /// The application digest of its plan.
    pub application_digest: String,
    /// When it was submitted, RFC 3339.
    #[schemars(extend("format" = "date-time"))]
    pub submitted_at: String,
    /// What became of it.
    pub outcome: Outcome,
    /// Why it failed or ended, in Flink's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The manifest of its plan, kept while the outcome is pending (it becomes the record's
    /// manifest once the job is seen running).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<Manifest>,
    /// The compiled plan the job was started from, where Flink reads it (record_version 3;
    /// absent for a job started from the statements themselves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// How the compiled plan's stateful operators were pinned: each operator identity (a
    /// node id, or `source:<name>`) with the uid its operators got (record_version 3;
    /// absent for a job started from the statements, whose operators are not pinned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operators: Option<BTreeMap<String, String>>,
}

/// Why an attempt started a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// With empty state: nothing ran before.
    Start,
    /// From a savepoint of a job running the same statements.
    Restore,
    /// With empty state on purpose (`apply --rebuild`).
    Rebuild,
    /// From a savepoint of a job running an earlier plan: the change keeps the state of every
    /// node it keeps (SAFE or COMPATIBLE), and the compiled plan's operators are pinned so
    /// that each finds its own.
    Upgrade,
}

/// What became of an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Submitted (or about to be); not yet seen running or failed. Only the last attempt
    /// can be pending; the next command asks Flink about its job id.
    Pending,
    /// Seen running.
    Running,
    /// Never ran: refused, or failed while starting.
    Failed,
    /// Stopped by Streamform with a savepoint.
    Stopped,
    /// Ran, then ended without Streamform (cancelled, failed, or forgotten by the cluster).
    Ended,
}

/// A savepoint Streamform took.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Savepoint {
    /// Where Flink wrote it.
    pub path: String,
    /// The job it was taken from.
    #[schemars(pattern(JOB_ID))]
    pub job_id: String,
    /// That job's generation.
    pub generation: u64,
    /// The artifact that job ran: only a job with the same artifact can start from it.
    #[schemars(pattern(ARTIFACT))]
    pub artifact: String,
    /// When it completed, RFC 3339.
    #[schemars(extend("format" = "date-time"))]
    pub taken_at: String,
}

/// Whose a record is, when it is not the one of the target and project asking for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Foreign<'a> {
    /// It records this other project.
    Application(&'a str),
    /// It records an apply to this other target.
    Target(&'a str),
}

impl AppliedRecord {
    /// Whether the record belongs elsewhere than to `target` of `application` (a file
    /// copied by hand): such a record's jobs are not this target's to stop or replace.
    pub fn foreign(&self, target: &str, application: &str) -> Option<Foreign<'_>> {
        match &self.application {
            Some(a) if a != application => Some(Foreign::Application(a)),
            _ if self.target != target => Some(Foreign::Target(&self.target)),
            _ => None,
        }
    }

    /// An empty record for `target` of `application`: no attempt yet.
    pub fn new(target: &str, application: &str, backend: &str, lineage: &str) -> AppliedRecord {
        AppliedRecord {
            record_version: RECORD_VERSION,
            target: target.to_string(),
            application: Some(application.to_string()),
            applied_at: None,
            streamform_version: String::new(),
            backend: backend.to_string(),
            jobs: Vec::new(),
            lineage: Some(lineage.to_string()),
            attempts: Vec::new(),
            savepoints: Vec::new(),
            manifest: None,
        }
    }

    /// A record_version 1 record as this build writes it: it gains the project's name and
    /// a lineage, and its last job becomes attempt 1, running, with an unknown artifact
    /// (that job's statements were not recorded, so no plan counts as the same). A record of
    /// this version is returned as it is.
    pub fn upgraded(mut self, application: &str, lineage: &str) -> AppliedRecord {
        if self.record_version == RECORD_VERSION {
            return self;
        }
        // A version 2 record is this one without the compiled plans: its jobs ran
        // statements.
        if self.record_version == 2 {
            self.record_version = RECORD_VERSION;
            return self;
        }
        self.record_version = RECORD_VERSION;
        self.application = Some(application.to_string());
        self.lineage = Some(lineage.to_string());
        if let Some(job) = self.jobs.last().cloned() {
            self.jobs = vec![job.clone()];
            self.attempts.push(Attempt {
                generation: 1,
                job_id: job,
                job_name: String::new(),
                action: Action::Start,
                restore_from: None,
                artifact: String::new(),
                application_digest: self
                    .manifest
                    .as_ref()
                    .map(|m| m.application_digest.clone())
                    .unwrap_or_default(),
                submitted_at: self.applied_at.clone().unwrap_or_default(),
                outcome: Outcome::Running,
                reason: None,
                manifest: None,
                plan: None,
                operators: None,
            });
        }
        self
    }

    /// The record as pretty-printed JSON (two-space indent), ending with a newline.
    pub fn to_json_pretty(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a record always serializes");
        text.push('\n');
        text
    }

    /// The attempt whose job runs, or last ran, the recorded plan: the last one that ran.
    pub fn current(&self) -> Option<&Attempt> {
        self.attempts.iter().rev().find(|a| {
            matches!(
                a.outcome,
                Outcome::Running | Outcome::Stopped | Outcome::Ended
            )
        })
    }

    /// The last attempt, when its outcome is still unknown.
    pub fn pending(&self) -> Option<&Attempt> {
        self.attempts
            .last()
            .filter(|a| a.outcome == Outcome::Pending)
    }

    /// The generation the next attempt takes.
    pub fn next_generation(&self) -> u64 {
        self.attempts.last().map_or(1, |a| a.generation + 1)
    }

    /// The newest savepoint a job running `artifact` may start from: one taken from a job
    /// that ran it, no older than the last job of it that started with empty state (after
    /// `apply --rebuild`, the state from before is not brought back).
    pub fn latest_savepoint(&self, artifact: &str) -> Option<&Savepoint> {
        if artifact.is_empty() {
            return None;
        }
        let fresh = self
            .attempts
            .iter()
            .filter(|a| {
                a.artifact == artifact
                    && matches!(a.action, Action::Start | Action::Rebuild)
                    && matches!(
                        a.outcome,
                        Outcome::Running | Outcome::Stopped | Outcome::Ended
                    )
            })
            .map(|a| a.generation)
            .max()
            .unwrap_or(0);
        self.savepoints
            .iter()
            .rev()
            .find(|s| s.artifact == artifact && s.generation >= fresh)
    }

    /// Reads a record strictly: `record_version` must be 1 or [`RECORD_VERSION`], the
    /// embedded manifests' version [`crate::manifest::MANIFEST_VERSION`], and every field
    /// one this build knows for that version.
    ///
    /// # Errors
    /// A [`ManifestError`] naming what was found and what this build speaks.
    pub fn from_json(text: &str) -> Result<AppliedRecord, ManifestError> {
        let object = parse_object(text)?;
        check_version(&object, Document::Record)?;
        let document = if object
            .get("record_version")
            .and_then(serde_json::Value::as_u64)
            == Some(1)
        {
            Document::RecordV1
        } else {
            Document::Record
        };
        match object.get("manifest") {
            Some(serde_json::Value::Object(manifest)) => {
                check_version(manifest, Document::Manifest)?;
            }
            Some(other) => {
                return Err(ManifestError::Shape {
                    document,
                    message: format!(
                        "its manifest is {}, not a plan manifest",
                        describe_json(other)
                    ),
                });
            }
            None => {}
        }
        // From the text, not the value, so serde's message carries the line and column.
        let record: AppliedRecord =
            serde_json::from_str(text).map_err(|e| ManifestError::Shape {
                document,
                message: e.to_string(),
            })?;
        for manifest in record
            .manifest
            .iter()
            .chain(record.attempts.iter().filter_map(|a| a.manifest.as_ref()))
        {
            manifest.check().map_err(ManifestError::Inconsistent)?;
        }
        record.check(document)?;
        Ok(record)
    }

    /// Checks the record's own fields: times are RFC 3339, job ids are Flink job ids (32
    /// lowercase hex characters), a version 1 record has exactly its fields, and a version
    /// 2 record's attempts are numbered in order with only the last one pending.
    fn check(&self, document: Document) -> Result<(), ManifestError> {
        let inconsistent = |message: String| Err(ManifestError::Shape { document, message });
        let backend = self.backend.as_bytes();
        if !(backend.first().is_some_and(u8::is_ascii_lowercase)
            && backend
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-'))
        {
            return inconsistent(format!(
                "backend `{}` is not a backend's name (lowercase letters, digits and `-`)",
                crate::printable(&self.backend)
            ));
        }
        let times = self
            .applied_at
            .iter()
            .map(|t| ("applied_at", t))
            .chain(
                self.attempts
                    .iter()
                    .map(|a| ("submitted_at", &a.submitted_at)),
            )
            .chain(self.savepoints.iter().map(|s| ("taken_at", &s.taken_at)));
        for (field, time) in times {
            if !crate::time::is_rfc3339(time) {
                return inconsistent(format!(
                    "{field} `{}` is not an RFC 3339 time",
                    crate::printable(time)
                ));
            }
        }
        let job_ids = self
            .jobs
            .iter()
            .chain(self.attempts.iter().map(|a| &a.job_id))
            .chain(self.savepoints.iter().map(|s| &s.job_id));
        for job in job_ids {
            if !is_job_id(job) {
                return inconsistent(format!(
                    "`{}` is not a Flink job id (32 lowercase hex characters)",
                    crate::printable(job)
                ));
            }
        }
        // The version that wrote it is shown in plan's header: one short line.
        if self.streamform_version.is_empty()
            || self.streamform_version.len() > 64
            || self.streamform_version.chars().any(crate::is_hostile)
        {
            return inconsistent(format!(
                "streamform_version `{}` is not a version (1 to 64 printable characters)",
                crate::printable(&self.streamform_version.chars().take(64).collect::<String>())
            ));
        }
        if document == Document::RecordV1 {
            let missing = if self.applied_at.is_none() {
                Some("applied_at")
            } else if self.manifest.is_none() {
                Some("manifest")
            } else {
                None
            };
            if let Some(field) = missing {
                return inconsistent(format!("missing field `{field}`"));
            }
            let extra = [
                ("application", self.application.is_some()),
                ("lineage", self.lineage.is_some()),
                ("attempts", !self.attempts.is_empty()),
                ("savepoints", !self.savepoints.is_empty()),
            ];
            if let Some((field, _)) = extra.iter().find(|(_, present)| *present) {
                return inconsistent(format!("`{field}` belongs to record_version 2 and later"));
            }
            return Ok(());
        }
        if self.application.is_none() {
            return inconsistent("missing field `application`".into());
        }
        if self.jobs.len() > 1 {
            return inconsistent(format!(
                "it lists {} jobs; a record_version {RECORD_VERSION} record names the one job running (or last run) its plan",
                self.jobs.len()
            ));
        }
        if let Some(job) = self
            .jobs
            .iter()
            .find(|j| !self.attempts.iter().any(|a| &a.job_id == *j))
        {
            return inconsistent(format!(
                "job {job} is recorded as running the plan, but no attempt started it"
            ));
        }
        match &self.lineage {
            Some(l) if l.len() == 16 && is_lower_hex(l) => {}
            Some(l) => {
                return inconsistent(format!(
                    "lineage `{}` is not 16 hex digits",
                    crate::printable(l)
                ));
            }
            None => return inconsistent("missing field `lineage`".into()),
        }
        if self.applied_at.is_some() != self.manifest.is_some() {
            return inconsistent(
                "applied_at and manifest are recorded together, once a job has run".into(),
            );
        }
        for (i, attempt) in self.attempts.iter().enumerate() {
            if attempt.generation != i as u64 + 1 {
                return inconsistent(format!(
                    "attempt {} has generation {}; attempts are numbered 1, 2, ... in order",
                    i + 1,
                    attempt.generation
                ));
            }
            let last = i + 1 == self.attempts.len();
            if attempt.outcome == Outcome::Pending && !last {
                return inconsistent(format!(
                    "attempt {} is pending but is not the last attempt",
                    attempt.generation
                ));
            }
            if (attempt.outcome == Outcome::Pending) != attempt.manifest.is_some() {
                return inconsistent(format!(
                    "attempt {} {}",
                    attempt.generation,
                    if attempt.manifest.is_some() {
                        "carries a manifest, which only a pending attempt does"
                    } else {
                        "is pending but carries no manifest"
                    }
                ));
            }
        }
        let artifacts = self
            .attempts
            .iter()
            .map(|a| (a.generation, &a.artifact))
            .chain(self.savepoints.iter().map(|s| (s.generation, &s.artifact)));
        for (generation, artifact) in artifacts {
            // Empty: the statements of a job started before deployments were tracked.
            if !(artifact.is_empty() || artifact.len() == 64 && is_lower_hex(artifact)) {
                return inconsistent(format!(
                    "the artifact of generation {generation} is not a SHA-256 digest (64 lowercase hex characters)"
                ));
            }
        }
        // A reason is Flink's message lines; anything else is one line.
        let lines = self.attempts.iter().filter_map(|a| a.reason.as_ref());
        let one_line = self
            .attempts
            .iter()
            .flat_map(|a| [Some(&a.job_name), a.restore_from.as_ref()])
            .chain(self.savepoints.iter().map(|s| Some(&s.path)))
            .chain([
                self.application.as_ref(),
                Some(&self.target),
                Some(&self.streamform_version),
            ])
            .flatten();
        let texts = lines.map(|t| (t, true)).chain(one_line.map(|t| (t, false)));
        for (text, multiline) in texts {
            if text
                .chars()
                .any(|c| !(multiline && matches!(c, '\n' | '\t')) && crate::is_hostile(c))
            {
                return inconsistent(format!(
                    "`{}` holds a control character",
                    crate::printable(text)
                ));
            }
        }
        Ok(())
    }
}

/// Whether `text` is a Flink job id as the REST API writes it: 32 lowercase hex characters.
fn is_job_id(text: &str) -> bool {
    text.len() == 32 && is_lower_hex(text)
}

fn is_lower_hex(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A running plan as read from a file: an applied record, or a bare plan manifest (such as
/// a `build/plan.json`), told apart by their version field.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Running {
    /// An applied record, with the manifest it applied.
    Record(Box<AppliedRecord>),
    /// A plan manifest.
    Manifest(Manifest),
}

impl Running {
    /// Reads either document strictly: `record_version` makes it a record,
    /// `manifest_version` a manifest; anything else is refused.
    ///
    /// # Errors
    /// [`ManifestError`]: empty text, text that is not JSON, a document that is neither,
    /// another version, or a field this build does not know.
    pub fn from_json(text: &str) -> Result<Running, ManifestError> {
        let object = parse_object(text)?;
        if object.contains_key("record_version") {
            AppliedRecord::from_json(text).map(|r| Running::Record(Box::new(r)))
        } else if object.contains_key("manifest_version") {
            Manifest::from_json(text).map(Running::Manifest)
        } else {
            Err(ManifestError::Neither(describe_json(
                &serde_json::Value::Object(object),
            )))
        }
    }

    /// The running plan's manifest; `None` for a record of a target where no job has run
    /// yet.
    pub fn manifest(&self) -> Option<&Manifest> {
        match self {
            Running::Record(record) => record.manifest.as_ref(),
            Running::Manifest(manifest) => Some(manifest),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOB: &str = "9d1f2c4b7a3e5f600000000000000001";

    fn record() -> AppliedRecord {
        let manifest = Manifest::from_plans([]);
        let mut record =
            AppliedRecord::new("local", "customer-metrics", "flink", "9d1f2c4b7a3e5f60");
        record.streamform_version = "0.1.0".into();
        record.applied_at = Some("2026-08-27T10:12:03Z".into());
        record.jobs = vec![JOB.into()];
        record.attempts.push(Attempt {
            generation: 1,
            job_id: JOB.into(),
            job_name: "streamform/customer-metrics/local".into(),
            action: Action::Start,
            restore_from: None,
            artifact: "ab".repeat(32),
            application_digest: manifest.application_digest.clone(),
            submitted_at: "2026-08-27T10:12:01Z".into(),
            outcome: Outcome::Stopped,
            reason: None,
            manifest: None,
            plan: None,
            operators: None,
        });
        record.savepoints.push(Savepoint {
            path: "file:/tmp/savepoints/savepoint-9d1f2c-0b224d9311e6".into(),
            job_id: JOB.into(),
            generation: 1,
            artifact: "ab".repeat(32),
            taken_at: "2026-08-27T11:00:00Z".into(),
        });
        record.manifest = Some(manifest);
        record
    }

    /// A record as the first apply wrote it: `record_version` 1 (docs/plan-diff.md, "The
    /// applied record").
    fn version_1() -> String {
        format!(
            "{{\n  \"record_version\": 1,\n  \"target\": \"local\",\n  \"applied_at\": \"2026-08-27T10:12:03Z\",\n  \"streamform_version\": \"0.1.0\",\n  \"backend\": \"flink\",\n  \"jobs\": [\"9d1f2c4b7a3e5f6081c2d3e4f5a6b7c8\"],\n  \"manifest\": {}}}\n",
            Manifest::from_plans([]).to_json_pretty().trim_end()
        )
    }

    #[test]
    fn round_trips_with_the_fields_in_order() {
        let text = record().to_json_pretty();
        let keys: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("  \""))
            .map(|l| l.trim().split('"').nth(1).unwrap())
            .collect();
        assert_eq!(
            keys,
            [
                "record_version",
                "target",
                "application",
                "applied_at",
                "streamform_version",
                "backend",
                "jobs",
                "lineage",
                "attempts",
                "savepoints",
                "manifest"
            ]
        );
        assert_eq!(AppliedRecord::from_json(&text).unwrap(), record());
        assert!(text.contains("\"outcome\": \"stopped\""), "{text}");
    }

    #[test]
    fn a_version_1_record_still_loads_and_keeps_to_its_fields() {
        let record = AppliedRecord::from_json(&version_1()).unwrap();
        assert_eq!(record.record_version, 1);
        assert_eq!(record.jobs, ["9d1f2c4b7a3e5f6081c2d3e4f5a6b7c8"]);
        assert_eq!(record.current(), None);
        let with_lineage = version_1().replace(
            "\"backend\"",
            "\"lineage\": \"9d1f2c4b7a3e5f60\",\n  \"backend\"",
        );
        assert_eq!(
            AppliedRecord::from_json(&with_lineage)
                .unwrap_err()
                .to_string(),
            "the applied record does not have the shape of record_version 1: `lineage` belongs to record_version 2 and later"
        );
        let without_manifest = format!(
            "{}}}\n",
            &version_1()[..version_1().find(",\n  \"manifest\"").unwrap()]
        );
        assert_eq!(
            AppliedRecord::from_json(&without_manifest)
                .unwrap_err()
                .to_string(),
            "the applied record does not have the shape of record_version 1: missing field `manifest`"
        );
    }

    #[test]
    fn a_version_1_record_is_upgraded_with_its_job_as_an_attempt_of_unknown_artifact() {
        let old = AppliedRecord::from_json(&version_1()).unwrap();
        let new = old.clone().upgraded("customer-metrics", "0123456789abcdef");
        assert_eq!(new.record_version, RECORD_VERSION);
        assert_eq!(new.lineage.as_deref(), Some("0123456789abcdef"));
        let current = new.current().unwrap();
        assert_eq!(current.job_id, "9d1f2c4b7a3e5f6081c2d3e4f5a6b7c8");
        assert_eq!(current.artifact, "");
        assert_eq!(current.outcome, Outcome::Running);
        assert_eq!(new.next_generation(), 2);
        assert_eq!(
            AppliedRecord::from_json(&new.to_json_pretty()).unwrap(),
            new
        );
        assert_eq!(new.clone().upgraded("other", "ffffffffffffffff"), new);
    }

    #[test]
    fn a_version_2_record_reads_as_version_3_whose_attempts_ran_statements() {
        let v2 = record()
            .to_json_pretty()
            .replace("\"record_version\": 3", "\"record_version\": 2");
        let read = AppliedRecord::from_json(&v2).unwrap();
        assert_eq!(read.record_version, 2);
        let upgraded = read.upgraded("customer-metrics", "ffffffffffffffff");
        assert_eq!(upgraded, record());
        assert_eq!(upgraded.attempts[0].operators, None);
        // A version 3 attempt keeps its compiled plan and how its operators were pinned.
        let mut pinned = record();
        pinned.attempts[0].plan = Some("file:///plans/ababababab-g1.json".into());
        pinned.attempts[0].operators = Some(BTreeMap::from([(
            "source:orders".to_string(),
            "source:orders".to_string(),
        )]));
        assert_eq!(
            AppliedRecord::from_json(&pinned.to_json_pretty()).unwrap(),
            pinned
        );
    }

    #[test]
    fn refuses_another_version_an_unknown_field_and_a_bad_manifest() {
        let text = record().to_json_pretty();
        let v4 = text.replace("\"record_version\": 3", "\"record_version\": 4");
        assert_eq!(
            AppliedRecord::from_json(&v4).unwrap_err().to_string(),
            "the applied record has record_version 4; this build speaks record_version 3 (and reads record_version 1, 2)"
        );
        let extra = text.replace("\"backend\"", "\"operator\": \"me\",\n  \"backend\"");
        let err = AppliedRecord::from_json(&extra).unwrap_err().to_string();
        assert!(
            err.starts_with("the applied record does not have the shape of record_version 3: unknown field `operator`"),
            "{err}"
        );
        assert!(
            err.ends_with("at line 7 column 12"),
            "the position is in the file: {err}"
        );
        let bad_manifest = text.replace("\"manifest_version\": 1", "\"manifest_version\": 2");
        assert_eq!(
            AppliedRecord::from_json(&bad_manifest)
                .unwrap_err()
                .to_string(),
            "the plan manifest has manifest_version 2; this build speaks manifest_version 1"
        );
    }

    #[test]
    fn running_tells_a_record_from_a_manifest_and_refuses_anything_else() {
        let text = record().to_json_pretty();
        assert_eq!(
            Running::from_json(&text).unwrap(),
            Running::Record(Box::new(record()))
        );
        let manifest = record().manifest.unwrap().to_json_pretty();
        assert_eq!(
            Running::from_json(&manifest).unwrap(),
            Running::Manifest(record().manifest.unwrap())
        );
        for (text, message) in [
            ("", "the file is empty"),
            ("\n  \n", "the file is empty"),
            (
                "{\"check_version\": 1, \"loaded\": true}",
                "the file is neither a plan manifest nor an applied record: it holds an object with the fields check_version, loaded, with no manifest_version or record_version",
            ),
            (
                "[]",
                "the file is neither a plan manifest nor an applied record: it holds a JSON array, with no manifest_version or record_version",
            ),
            (
                "{\"record_version\": 1, \"manifest\": []}",
                "the applied record does not have the shape of record_version 1: its manifest is a JSON array, not a plan manifest",
            ),
        ] {
            assert_eq!(Running::from_json(text).unwrap_err().to_string(), message);
        }
        let truncated = &text[..text.len() / 2];
        let err = Running::from_json(truncated).unwrap_err().to_string();
        assert!(
            err.starts_with("the file is not valid JSON: EOF while parsing"),
            "{err}"
        );
    }

    #[test]
    fn refuses_a_job_id_a_time_or_an_attempt_out_of_order() {
        let text = record().to_json_pretty();
        for (from, to, message) in [
            (
                "\"job_id\": \"9d1f2c4b7a3e5f600000000000000001\",\n      \"job_name\"",
                "\"job_id\": \"9d1f2c4b7a3eé\",\n      \"job_name\"",
                "`9d1f2c4b7a3eé` is not a Flink job id (32 lowercase hex characters)",
            ),
            (
                "2026-08-27T10:12:03Z",
                "yesterday\\u001b[2J",
                "applied_at `yesterday\\u{1b}[2J` is not an RFC 3339 time",
            ),
            (
                "\"generation\": 1,\n      \"job_id\"",
                "\"generation\": 4,\n      \"job_id\"",
                "attempt 1 has generation 4; attempts are numbered 1, 2, ... in order",
            ),
            (
                "\"outcome\": \"stopped\"",
                "\"outcome\": \"pending\"",
                "attempt 1 is pending but carries no manifest",
            ),
            (
                "\"lineage\": \"9d1f2c4b7a3e5f60\"",
                "\"lineage\": \"9D1F2C4B7A3E5F60\"",
                "lineage `9D1F2C4B7A3E5F60` is not 16 hex digits",
            ),
            (
                "\"artifact\": \"abababababababababababababababababababababababababababababababab\",\n      \"application_digest\"",
                "\"artifact\": \"a€€€€\",\n      \"application_digest\"",
                "the artifact of generation 1 is not a SHA-256 digest (64 lowercase hex characters)",
            ),
            (
                "savepoint-9d1f2c-0b224d9311e6",
                "savepoint\\u001b]0;x\\u0007",
                "`file:/tmp/savepoints/savepoint\\u{1b}]0;x\\u{7}` holds a control character",
            ),
            (
                "\"backend\": \"flink\"",
                "\"backend\": \"\\u001b[31mspark\"",
                "backend `\\u{1b}[31mspark` is not a backend's name (lowercase letters, digits and `-`)",
            ),
            (
                "\"streamform_version\": \"0.1.0\"",
                "\"streamform_version\": \"0.1.0\\n\"",
                "streamform_version `0.1.0\\n` is not a version (1 to 64 printable characters)",
            ),
            (
                "\"9d1f2c4b7a3e5f600000000000000001\"\n  ],",
                "\"9d1f2c4b7a3e5f600000000000000001\", \"9d1f2c4b7a3e5f600000000000000001\"\n  ],",
                "it lists 2 jobs; a record_version 3 record names the one job running (or last run) its plan",
            ),
            (
                "\"9d1f2c4b7a3e5f600000000000000001\"\n  ],",
                "\"9d1f2c4b7a3e5f600000000000000002\"\n  ],",
                "job 9d1f2c4b7a3e5f600000000000000002 is recorded as running the plan, but no attempt started it",
            ),
            (
                "\"streamform_version\": \"0.1.0\"",
                "\"streamform_version\": \"\"",
                "streamform_version `` is not a version (1 to 64 printable characters)",
            ),
        ] {
            assert!(text.contains(from), "{from}");
            let bad = text.replace(from, to);
            assert_eq!(
                AppliedRecord::from_json(&bad).unwrap_err().to_string(),
                format!(
                    "the applied record does not have the shape of record_version 3: {message}"
                )
            );
        }
    }

    #[test]
    fn finds_the_current_attempt_the_pending_one_and_the_savepoint_of_an_artifact() {
        let mut record = record();
        assert_eq!(record.current().map(|a| a.generation), Some(1));
        assert_eq!(record.pending(), None);
        assert_eq!(record.next_generation(), 2);
        assert_eq!(
            record
                .latest_savepoint(&"ab".repeat(32))
                .map(|s| s.generation),
            Some(1)
        );
        assert_eq!(record.latest_savepoint(&"cd".repeat(32)), None);
        // A later job of the same statements that started empty makes the savepoint stale.
        let mut rebuilt = record.attempts[0].clone();
        rebuilt.generation = 2;
        rebuilt.action = Action::Rebuild;
        rebuilt.outcome = Outcome::Ended;
        let mut later = record.clone();
        later.attempts.push(rebuilt);
        assert_eq!(later.latest_savepoint(&"ab".repeat(32)), None);
        let mut second = record.attempts[0].clone();
        second.generation = 2;
        second.outcome = Outcome::Pending;
        second.manifest = record.manifest.clone();
        record.attempts.push(second);
        assert_eq!(record.current().map(|a| a.generation), Some(1));
        assert_eq!(record.pending().map(|a| a.generation), Some(2));
        assert_eq!(record.next_generation(), 3);
        let text = record.to_json_pretty();
        assert_eq!(AppliedRecord::from_json(&text).unwrap(), record);
    }
}
