//! The applied record: what `apply` last submitted to a target, written to
//! `.streamform/applied/<target>.json` with the manifest of the plan it applied.
//!
//! Spec: plan diff reference, "The applied record" (streamform-docs lines 1518-1535); the
//! protocol rules (1719-1745): version first, another version or an unknown field refused.

use serde::{Deserialize, Serialize};

use crate::manifest::{Manifest, ManifestError};

/// The `record_version` this build writes and reads.
pub const RECORD_VERSION: u32 = 1;

/// One apply to one target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ManifestError::Malformed(e.to_string()))?;
        match value.get("record_version") {
            Some(v) if v.as_u64() == Some(u64::from(RECORD_VERSION)) => {}
            found => {
                return Err(ManifestError::Shape(format!(
                    "record_version {} is not the record_version {RECORD_VERSION} this build speaks",
                    found.map_or("(missing)".to_string(), ToString::to_string)
                )));
            }
        }
        if let Some(manifest) = value.get("manifest") {
            Manifest::from_json(&manifest.to_string())?;
        }
        serde_json::from_value(value).map_err(|e| ManifestError::Shape(e.to_string()))
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
        assert!(
            AppliedRecord::from_json(&v2)
                .unwrap_err()
                .to_string()
                .contains("record_version 2 is not the record_version 1")
        );
        let extra = text.replace("\"backend\"", "\"operator\": \"me\",\n  \"backend\"");
        assert!(
            AppliedRecord::from_json(&extra)
                .unwrap_err()
                .to_string()
                .contains("unknown field `operator`")
        );
        let bad_manifest = text.replace("\"manifest_version\": 1", "\"manifest_version\": 2");
        assert!(matches!(
            AppliedRecord::from_json(&bad_manifest).unwrap_err(),
            ManifestError::Version(_)
        ));
    }
}
