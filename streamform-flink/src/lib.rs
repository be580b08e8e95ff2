//! The Flink backend: Flink SQL generated from the Streaming IR alone.
//!
//! `generate` turns the model plans of an application into the statements `build` writes
//! and `apply` submits: a CREATE TABLE per source, a CREATE TEMPORARY VIEW per model, a
//! sink table per declared sink, and one EXECUTE STATEMENT SET. Nothing Flink-specific
//! lives in the IR; what Flink cannot run faithfully is refused here as a capability error.
//!
//! `gateway` submits those statements through Flink's SQL Gateway; `jobs` observes and
//! stops jobs through the JobManager's REST API; both speak through `http`. `deploy` is the
//! job lifecycle over them (DECISIONS D12): `apply`, `status` and `stop`.
//!
//! Spec: Flink backend reference (streamform-docs lines 1227-1284); DECISIONS.md D4, D5, D9.

#![warn(missing_docs)]

pub mod deploy;
pub mod gateway;
pub mod generate;
pub mod http;
pub mod jobs;
pub mod sql;

pub use generate::{
    Application, Finding, FindingKind, KafkaSettings, Statement, StatementKind, Subject, generate,
};

/// What `plan` notes when the target's backend is Flink and the verdict is above SAFE:
/// Flink SQL restores state only for an unchanged query, so any change is a rebuild there.
pub const STATE_NOTE: &str = "the flink backend does not carry state across a changed query; on this target the action is a rebuild, and the classification tells you what a rebuild costs";
