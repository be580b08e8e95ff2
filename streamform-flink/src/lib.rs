//! The Flink backend: Flink SQL generated from the Streaming IR alone.
//!
//! `generate` turns the model plans of an application into the statements `build` writes
//! and `apply` submits: a CREATE TABLE per source, a CREATE TEMPORARY VIEW per model, a
//! sink table per declared sink, and one EXECUTE STATEMENT SET. Nothing Flink-specific
//! lives in the IR; what Flink cannot run faithfully is refused here as a capability error.
//!
//! `gateway` submits those statements through Flink's SQL Gateway (`apply`).
//!
//! Spec: Flink backend reference (streamform-docs lines 1227-1284); DECISIONS.md D4, D5, D9.

#![warn(missing_docs)]

pub mod gateway;
pub mod generate;
pub mod sql;

pub use generate::{
    Application, Finding, KafkaSettings, Statement, StatementKind, Subject, generate, uses_kafka,
};
