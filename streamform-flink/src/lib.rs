//! The Flink backend: Flink SQL generated from the Streaming IR alone.
//!
//! `generate` turns the model plans of an application into the statements `build` writes
//! and `apply` submits: a CREATE TABLE per source, a CREATE TEMPORARY VIEW per model, a
//! sink table per declared sink, and one EXECUTE STATEMENT SET. Nothing Flink-specific
//! lives in the IR; what Flink cannot run faithfully is refused here as a capability error.
//!
//! `gateway` submits those statements through Flink's SQL Gateway; `jobs` observes and
//! stops jobs through the JobManager's REST API; both speak through `http`. `deploy` is the
//! job lifecycle over them (docs/deployment.md): `apply`, `status` and `stop`.
//!
//! See docs/flink-backend.md: "Making Flink compute the simulator's types", "Capability
//! errors" (ORDER BY among them) and "Warnings" (nullable upsert keys).

#![warn(missing_docs)]

pub mod compiled;
pub mod deploy;
pub mod gateway;
pub mod generate;
pub mod http;
pub mod jobs;
pub mod sql;

pub use generate::{
    Application, Finding, FindingKind, KafkaSettings, Statement, StatementKind, Subject, generate,
};

/// What `plan --against` notes when the running plan ran on Flink and the verdict is above
/// SAFE; with a target, `plan` says what apply would do there instead.
pub const STATE_NOTE: &str = "on a flink target, apply carries the state across SAFE and COMPATIBLE changes when it deploys compiled plans, and refuses the rest without --rebuild; `plan --target` says what it would do there";
