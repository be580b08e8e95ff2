//! The Streaming IR: types, values, expressions, plan nodes, identity and renderings.
//!
//! This crate knows nothing of SQL parsing, YAML, salsa or Flink. Everything in it is plain
//! data with `Eq` and `Hash`, so the query database can compare results and stop
//! recomputation early. See docs/concepts.md (the plan's nodes, types, changelog modes and
//! boundedness) and docs/plan-identity.md.

#![warn(missing_docs)]

pub mod date_format;
pub mod diff;
pub mod diff_document;
pub mod explain;
pub mod expr;
pub mod identity;
pub mod inspect;
pub mod java_regex;
pub mod manifest;
pub mod plan;
pub mod record;
pub mod time;
pub mod types;
pub mod value;

pub use expr::{BinaryOp, Expr, Func, Interval};
pub use plan::*;
pub use types::{ArithOp, DataType};
pub use value::{Decimal, Value};

/// Whether `c` is a control character, a bidirectional control, an invisible character or
/// a line separator: what [`printable`] escapes, and what a name Streamform writes into
/// records and job names may not hold.
pub fn is_hostile(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            // Bidirectional marks, embeddings, overrides and isolates.
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
            // Invisible: zero-width characters, the soft hyphen, a byte-order mark, tags.
            | '\u{00ad}' | '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2064}' | '\u{feff}'
            | '\u{e0000}'..='\u{e007f}'
            // Line and paragraph separators.
            | '\u{2028}' | '\u{2029}'
        )
}

/// `text` with every control character (a newline included) and every bidirectional
/// override escaped as Rust writes it (`\u{1b}`), for printing text that comes from a file
/// this build did not write: it cannot move the cursor, colour the terminal or forge a line.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_hostile) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_hostile(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}
