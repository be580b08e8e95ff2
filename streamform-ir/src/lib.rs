//! The Streaming IR: types, values, expressions, plan nodes, identity and renderings.
//!
//! This crate knows nothing of SQL parsing, YAML, salsa or Flink. Everything in it is plain
//! data with `Eq` and `Hash`, so the query database can compare results and stop
//! recomputation early. Spec: streamform-docs "The streaming plan" and the plan identity
//! reference; DECISIONS.md D3-D5.

#![warn(missing_docs)]

pub mod diff;
pub mod diff_document;
pub mod explain;
pub mod expr;
pub mod identity;
pub mod inspect;
pub mod manifest;
pub mod plan;
pub mod record;
pub mod time;
pub mod types;
pub mod value;

pub use expr::{BinaryOp, Expr};
pub use plan::*;
pub use types::{ArithOp, DataType};
pub use value::{Decimal, Value};
