//! The applied record: what `apply` last submitted to a target, written to
//! `.streamform/applied/<target>.json` with the manifest of the plan it applied.
//!
//! Spec: plan diff reference, "The applied record" (streamform-docs lines 1518-1535); the
//! protocol rules (1719-1745): version first, another version or an unknown field refused.

use serde::{Deserialize, Serialize};

use crate::manifest::{
    Document, Manifest, ManifestError, check_version, describe_json, parse_object,
};

/// The `record_version` this build writes and reads.
pub const RECORD_VERSION: u32 = 1;

/// One apply to one target.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppliedRecord {
    /// Always [`RECORD_VERSION`] when written by this build.
    pub record_version: u32,
    /// The target's name under `targets:`.
    pub target: String,
    /// When the last statement was accepted, RFC 3339 in UTC (`2026-08-27T10:12:03Z`).
    pub applied_at: String,
    /// The version of the Streamform that applied it.
    pub streamform_version: String,
    /// The target's backend, `flink`.
    pub backend: String,
    /// The job ids Flink assigned, in submission order.
    pub jobs: Vec<String>,
    /// The manifest of the plan applied, verbatim.
    pub manifest: Manifest,
}

impl AppliedRecord {
    /// The record as pretty-printed JSON (two-space indent), ending with a newline.
    pub fn to_json_pretty(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a record always serializes");
        text.push('\n');
        text
    }

    /// Reads a record strictly: `record_version` must be [`RECORD_VERSION`], the embedded
    /// manifest's version [`crate::manifest::MANIFEST_VERSION`], and every field one this build knows.
    ///
    /// # Errors
    /// A [`ManifestError`] naming what was found and what this build speaks.
    pub fn from_json(text: &str) -> Result<AppliedRecord, ManifestError> {
        let object = parse_object(text)?;
        check_version(&object, Document::Record)?;
        match object.get("manifest") {
            Some(serde_json::Value::Object(manifest)) => {
                check_version(manifest, Document::Manifest)?;
            }
            Some(other) => {
                return Err(ManifestError::Shape {
                    document: Document::Record,
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
                document: Document::Record,
                message: e.to_string(),
            })?;
        record
            .manifest
            .check()
            .map_err(ManifestError::Inconsistent)?;
        record.check()?;
        Ok(record)
    }

    /// Checks the record's own fields: `applied_at` is an RFC 3339 time and every job id is
    /// a Flink job id (32 lowercase hex characters).
    fn check(&self) -> Result<(), ManifestError> {
        let inconsistent = |message: String| {
            Err(ManifestError::Shape {
                document: Document::Record,
                message,
            })
        };
        if !crate::time::is_rfc3339(&self.applied_at) {
            return inconsistent(format!(
                "applied_at `{}` is not an RFC 3339 time",
                crate::printable(&self.applied_at)
            ));
        }
        if let Some(job) = self.jobs.iter().find(|j| !is_job_id(j)) {
            return inconsistent(format!(
                "`{}` is not a Flink job id (32 lowercase hex characters)",
                crate::printable(job)
            ));
        }
        Ok(())
    }
}

/// Whether `text` is a Flink job id as the REST API writes it: 32 lowercase hex characters.
fn is_job_id(text: &str) -> bool {
    text.len() == 32
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A running plan as read from a file: an applied record, or a bare plan manifest (such as
/// a `build/plan.json`), told apart by their version field.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Running {
    /// An applied record, with the manifest it applied.
    Record(AppliedRecord),
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
            AppliedRecord::from_json(text).map(Running::Record)
        } else if object.contains_key("manifest_version") {
            Manifest::from_json(text).map(Running::Manifest)
        } else {
            Err(ManifestError::Neither(describe_json(
                &serde_json::Value::Object(object),
            )))
        }
    }

    /// The running plan's manifest.
    pub fn manifest(&self) -> &Manifest {
        match self {
            Running::Record(record) => &record.manifest,
            Running::Manifest(manifest) => manifest,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> AppliedRecord {
        AppliedRecord {
            record_version: RECORD_VERSION,
            target: "local".into(),
            applied_at: "2026-08-27T10:12:03Z".into(),
            streamform_version: "0.1.0".into(),
            backend: "flink".into(),
            jobs: vec!["9d1f2c4b7a3e5f6081c2d3e4f5a6b7c8".into()],
            manifest: Manifest::from_plans([]),
        }
    }

    #[test]
    fn round_trips_with_the_reference_fields_in_order() {
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
                "applied_at",
                "streamform_version",
                "backend",
                "jobs",
                "manifest"
            ]
        );
        assert_eq!(AppliedRecord::from_json(&text).unwrap(), record());
    }

    #[test]
    fn refuses_another_version_an_unknown_field_and_a_bad_manifest() {
        let text = record().to_json_pretty();
        let v2 = text.replace("\"record_version\": 1", "\"record_version\": 2");
        assert_eq!(
            AppliedRecord::from_json(&v2).unwrap_err().to_string(),
            "the applied record has record_version 2; this build speaks record_version 1"
        );
        let extra = text.replace("\"backend\"", "\"operator\": \"me\",\n  \"backend\"");
        let err = AppliedRecord::from_json(&extra).unwrap_err().to_string();
        assert!(
            err.starts_with("the applied record does not have the shape of record_version 1: unknown field `operator`"),
            "{err}"
        );
        assert!(
            err.ends_with("at line 6 column 12"),
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
            Running::Record(record())
        );
        let manifest = record().manifest.to_json_pretty();
        assert_eq!(
            Running::from_json(&manifest).unwrap(),
            Running::Manifest(record().manifest)
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
    fn refuses_a_job_id_or_a_time_that_is_not_one() {
        let text = record().to_json_pretty();
        for (from, to, message) in [
            (
                "9d1f2c4b7a3e5f6081c2d3e4f5a6b7c8",
                "9d1f2c4b7a3eé",
                "the applied record does not have the shape of record_version 1: `9d1f2c4b7a3eé` is not a Flink job id (32 lowercase hex characters)",
            ),
            (
                "2026-08-27T10:12:03Z",
                "yesterday\\u001b[2J",
                "the applied record does not have the shape of record_version 1: applied_at `yesterday\\u{1b}[2J` is not an RFC 3339 time",
            ),
        ] {
            let bad = text.replace(from, to);
            assert_eq!(
                AppliedRecord::from_json(&bad).unwrap_err().to_string(),
                message
            );
        }
    }
}
