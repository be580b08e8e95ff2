//! The query database: project loading, the SQL frontend and lowering, diagnostics and
//! fixtures, as salsa inputs and tracked queries (docs/architecture.md).
//!
//! Layering: `config`, `sql`, `lower` and `fixture` are plain functions over text and IR;
//! `db` wires them into memoized queries; `load` is the only module that touches the disk.

#![warn(missing_docs)]

pub mod backend;
pub mod config;
// `#[salsa::input]` generates public `new`, `builder` and `set_*` functions that no doc
// comment can reach; every item written by hand in `db` is documented.
#[allow(missing_docs)]
pub mod db;
pub mod diagnostic;
pub mod fixture;
pub mod interval;
pub mod load;
pub mod lower;
pub mod parallel;
pub mod report;
pub mod sql;
pub mod surface;
pub mod target;
pub mod temporal;
pub mod watch;
pub mod window;
pub mod yaml;

pub use db::{Database, Db, FileContents, Project, SourceFile};
pub use diagnostic::{Diagnostic, Severity};

/// The supported SQL surface, for `help:` lines.
pub(crate) fn sql_help() -> &'static str {
    sql::HELP_SURFACE
}
