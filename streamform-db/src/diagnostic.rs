//! Diagnostics: plain data produced by queries and rendered by the CLI.
//!
//! Spec: streamform-docs "streamform check" (each diagnostic with its file and a `help:`
//! line). Queries never render; the CLI turns these into text with a source excerpt.

use std::ops::Range;

/// How serious a diagnostic is. `--strict` makes warnings count as errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The project is not valid.
    Error,
    /// Worth fixing; counts as an error only under `--strict`.
    Warning,
}

/// One problem found in a project file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The file, relative to the project root with `/` separators (`models/a.sql`).
    pub path: String,
    /// Byte range in the file's text that the problem is about, when known.
    pub span: Option<Range<usize>>,
    /// What is wrong, one line, no trailing period.
    pub message: String,
    /// What to do about it.
    pub help: Option<String>,
    /// Whether the span's line may be quoted: not when it holds a secret.
    pub excerpt: bool,
    /// What the diagnostic points at when a query that must not depend on positions made
    /// it: the span is filled in from the anchor later (see `db::resolve_anchor`).
    pub anchor: Option<Box<Anchor>>,
}

/// A place in `streamform.yml` named rather than positioned.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// A model's entry under `models:`.
    ModelEntry(String),
    /// A model's `key:` (its entry when it has none).
    ModelKey(String),
}

impl Diagnostic {
    /// An error about the file at `path`, with no span and no help yet.
    pub fn error(path: impl Into<String>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            path: path.into(),
            span: None,
            message: message.into(),
            help: None,
            excerpt: true,
            anchor: None,
        }
    }

    /// A warning about the file at `path`, with no span and no help yet.
    pub fn warning(path: impl Into<String>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(path, message)
        }
    }

    /// Sets the byte range the diagnostic points at (`None`: the whole file).
    pub fn with_span(mut self, span: Option<Range<usize>>) -> Diagnostic {
        self.span = span;
        self
    }

    /// Points at `anchor`; the span is filled in where positions are known.
    pub fn anchored(mut self, anchor: Anchor) -> Diagnostic {
        self.anchor = Some(Box::new(anchor));
        self
    }

    /// Keeps the line of the span out of the output (only its position is shown): the
    /// line holds a secret.
    pub fn without_excerpt(mut self) -> Diagnostic {
        self.excerpt = false;
        self
    }

    /// Sets the `help:` line.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }
}

/// Byte offset of a 1-based (line, column) position in `text`; columns count characters.
/// Positions past the end clamp to the end.
pub fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            let col = column.saturating_sub(1);
            return offset
                + l.char_indices()
                    .nth(col)
                    .map_or(l.trim_end_matches('\n').len(), |(b, _)| b);
        }
        offset += l.len();
    }
    text.len()
}

/// 1-based (line, column) of a byte offset, columns in characters.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, text[line_start..offset].chars().count() + 1)
}

/// The closest of `candidates` to `name` by edit distance, if it is close enough to be a
/// likely typo (at most a third of the name's length, and at least one edit allowed).
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
}

/// A `help:` text for an unknown name among `candidates`: `did you mean `x`? <listing>: a, b`
/// when one is close, else `<listing>: a, b`.
pub fn suggest(name: &str, candidates: &[&str], listing: &str) -> String {
    let all = candidates.join(", ");
    match did_you_mean(name, candidates.iter().copied()) {
        Some(s) => format!("did you mean `{s}`? {listing}: {all}"),
        None => format!("{listing}: {all}"),
    }
}

/// Optimal string alignment distance: insertions, deletions, substitutions and adjacent
/// transpositions each cost one.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for j in 0..=b.len() {
        d[0][j] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip() {
        let text = "SELECT a\nFROM ref('x')\n";
        let off = offset_of(text, 2, 6);
        assert_eq!(&text[off..off + 3], "ref");
        assert_eq!(line_col(text, off), (2, 6));
    }

    #[test]
    fn suggestions() {
        assert_eq!(
            did_you_mean("custmer_metrics", ["customer_metrics", "orders"]),
            Some("customer_metrics")
        );
        assert_eq!(did_you_mean("zzz", ["customer_metrics"]), None);
        assert_eq!(did_you_mean("int46", ["int64", "int32"]), Some("int64"));
        assert_eq!(
            did_you_mean("materialised", ["materialized", "key"]),
            Some("materialized")
        );
    }
}
