//! Diagnostics: plain data produced by queries and rendered by the CLI.
//!
//! See docs/commands.md, "streamform check" (each diagnostic with its file and a `help:`
//! line), and docs/diagnostics.md. Queries never render; the CLI turns these into text with
//! a source excerpt.

use std::collections::HashMap;
use std::ops::Range;

use streamform_flink::FindingKind;

use crate::db::{Db, SourceFile};

/// How serious a diagnostic is. `--strict` makes warnings count as errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The project is not valid.
    Error,
    /// Worth fixing; counts as an error only under `--strict`.
    Warning,
}

/// A diagnostic's stable code: what kind of problem it is, independent of its wording.
/// Tools and tests match on the code, never on the message; the names are listed and
/// explained in docs/diagnostics.md and never change meaning once released.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    // Files and YAML.
    /// A file something refers to does not exist.
    FileMissing,
    /// A file is not UTF-8.
    FileNotUtf8,
    /// A file could not be read (permissions, not a regular file, too large).
    FileUnreadable,
    /// A YAML file holds nothing but comments.
    FileEmpty,
    /// YAML that does not parse.
    YamlSyntax,
    /// A mapping has a field this format does not know.
    UnknownField,
    /// A mapping lacks a required field.
    MissingField,
    /// A mapping names the same key twice.
    DuplicateKey,
    /// A value of the wrong shape (a list for a map, text for a number).
    WrongShape,
    // streamform.yml.
    /// The project format version is not the one this build reads.
    UnsupportedVersion,
    /// The project name is empty.
    EmptyName,
    /// A model, source or target name that is not allowed.
    InvalidName,
    /// An append model declares a key.
    KeyOnAppend,
    /// A key lists one column twice.
    RepeatedKeyColumn,
    /// A materialization other than append or upsert.
    UnknownMaterialization,
    /// A reference to a model that has no file (a configuration entry, a fixture, a
    /// `ref()`).
    UnknownModel,
    /// A `renamed_from` that cannot hold.
    InvalidRename,
    /// A `renamed_from` that names nothing running (a warning).
    StaleRename,
    /// A node hint that is malformed or names no node.
    InvalidHint,
    /// A node hint that matches nothing running (a warning).
    StaleHint,
    /// A target backend other than flink.
    UnknownBackend,
    /// A target without its `flink:` or `kafka:` section.
    IncompleteTarget,
    /// A credential written into streamform.yml.
    CredentialInConfig,
    /// An address or URI that is not one.
    InvalidAddress,
    /// A `flink.auth` that does not name one environment variable.
    InvalidAuth,
    /// A `kafka.startup` mode that does not exist.
    UnknownStartup,
    // sources.yml.
    /// A connector given the other connector's option, or missing its own.
    ConnectorOptions,
    /// A Kafka topic name Kafka would refuse.
    InvalidTopic,
    /// A connector other than kafka or file.
    UnknownConnector,
    /// A format that does not exist.
    UnknownFormat,
    /// A column type that does not exist.
    UnknownType,
    /// A source without columns.
    EmptySchema,
    /// A source declares more columns than a model may select.
    SchemaTooWide,
    /// A source's `changelog:` or `key:` that does not hold.
    SourceChangelog,
    /// A name used by both a source and a model.
    NameClash,
    /// A `source()` naming no declared source.
    UnknownSource,
    // Models.
    /// SQL that does not parse.
    SqlSyntax,
    /// A model file that is not exactly one SELECT.
    NotOneSelect,
    /// A model with more operators than Streamform plans.
    SqlTooLarge,
    /// A FROM that is not `source('x')` or `ref('m')`, or reads nothing.
    InvalidRead,
    /// A model that reads itself.
    SelfReference,
    /// Models that read each other in a cycle.
    ReferenceCycle,
    /// SQL that parses but does not plan (a column outside GROUP BY, a call that does
    /// not exist).
    InvalidQuery,
    /// SQL that Streamform does not support (yet).
    UnsupportedSql,
    /// A column that the input does not have, or that a fixture names wrongly.
    UnknownColumn,
    /// An expression whose types do not fit.
    TypeMismatch,
    /// An output column without a name, without a type, or named twice.
    OutputColumns,
    /// An aggregate call in the wrong place or with the wrong arguments.
    InvalidAggregate,
    /// An operator that cannot take an updating input here.
    UpdatingInput,
    /// ORDER BY over an unbounded input.
    UnboundedSort,
    /// A declared materialization or key that disagrees with what the SQL derives.
    DeclarationMismatch,
    /// An event-time declaration that does not hold: `event_time` not a timestamp column,
    /// `watermark` or `late_events` without it, a duration that does not read, a
    /// `retention` with no event-time source upstream or no state to expire.
    EventTime,
    /// A bug in Streamform; please report it.
    Internal,
    // Fixtures.
    /// A fixture whose events or expect records are not shaped as the format says.
    FixtureShape,
    /// A fixture value that does not fit its column's type.
    InvalidValue,
    // Flink.
    /// What Flink cannot run faithfully, or what runs there but deserves attention: the
    /// backend's own kinds of finding.
    Flink(FindingKind),
}

impl Code {
    /// The codes of Streamform's own rules, in the order docs/diagnostics.md lists them
    /// (the Flink backend's follow, from [`FindingKind::ALL`]).
    pub const OWN: [Code; 55] = [
        Code::FileMissing,
        Code::FileNotUtf8,
        Code::FileUnreadable,
        Code::FileEmpty,
        Code::YamlSyntax,
        Code::UnknownField,
        Code::MissingField,
        Code::DuplicateKey,
        Code::WrongShape,
        Code::UnsupportedVersion,
        Code::EmptyName,
        Code::InvalidName,
        Code::KeyOnAppend,
        Code::RepeatedKeyColumn,
        Code::UnknownMaterialization,
        Code::UnknownModel,
        Code::InvalidRename,
        Code::StaleRename,
        Code::InvalidHint,
        Code::StaleHint,
        Code::UnknownBackend,
        Code::IncompleteTarget,
        Code::CredentialInConfig,
        Code::InvalidAddress,
        Code::InvalidAuth,
        Code::UnknownStartup,
        Code::ConnectorOptions,
        Code::InvalidTopic,
        Code::UnknownConnector,
        Code::UnknownFormat,
        Code::UnknownType,
        Code::EmptySchema,
        Code::SchemaTooWide,
        Code::SourceChangelog,
        Code::NameClash,
        Code::UnknownSource,
        Code::SqlSyntax,
        Code::NotOneSelect,
        Code::SqlTooLarge,
        Code::InvalidRead,
        Code::SelfReference,
        Code::ReferenceCycle,
        Code::InvalidQuery,
        Code::UnsupportedSql,
        Code::UnknownColumn,
        Code::TypeMismatch,
        Code::OutputColumns,
        Code::InvalidAggregate,
        Code::UpdatingInput,
        Code::UnboundedSort,
        Code::DeclarationMismatch,
        Code::EventTime,
        Code::Internal,
        Code::FixtureShape,
        Code::InvalidValue,
    ];

    /// Every code: [`Code::OWN`], then the Flink backend's.
    pub fn all() -> impl Iterator<Item = Code> {
        Code::OWN
            .into_iter()
            .chain(FindingKind::ALL.into_iter().map(Code::Flink))
    }

    /// Whether the problem is a file that cannot be read at all, which makes a command
    /// that reports on the whole project unable to do its job (exit 2).
    pub fn means_unreadable(self) -> bool {
        matches!(self, Code::FileUnreadable | Code::FileNotUtf8)
    }

    /// The code as written in documents and docs/diagnostics.md, e.g. `unknown-column`.
    pub fn name(self) -> &'static str {
        match self {
            Code::FileMissing => "file-missing",
            Code::FileNotUtf8 => "file-not-utf8",
            Code::FileUnreadable => "file-unreadable",
            Code::FileEmpty => "file-empty",
            Code::YamlSyntax => "yaml-syntax",
            Code::UnknownField => "unknown-field",
            Code::MissingField => "missing-field",
            Code::DuplicateKey => "duplicate-key",
            Code::WrongShape => "wrong-shape",
            Code::UnsupportedVersion => "unsupported-version",
            Code::EmptyName => "empty-name",
            Code::InvalidName => "invalid-name",
            Code::KeyOnAppend => "key-on-append",
            Code::RepeatedKeyColumn => "repeated-key-column",
            Code::UnknownMaterialization => "unknown-materialization",
            Code::UnknownModel => "unknown-model",
            Code::InvalidRename => "invalid-rename",
            Code::StaleRename => "stale-rename",
            Code::InvalidHint => "invalid-hint",
            Code::StaleHint => "stale-hint",
            Code::UnknownBackend => "unknown-backend",
            Code::IncompleteTarget => "incomplete-target",
            Code::CredentialInConfig => "credential-in-config",
            Code::InvalidAddress => "invalid-address",
            Code::InvalidAuth => "invalid-auth",
            Code::UnknownStartup => "unknown-startup",
            Code::ConnectorOptions => "connector-options",
            Code::InvalidTopic => "invalid-topic",
            Code::UnknownConnector => "unknown-connector",
            Code::UnknownFormat => "unknown-format",
            Code::UnknownType => "unknown-type",
            Code::EmptySchema => "empty-schema",
            Code::SchemaTooWide => "schema-too-wide",
            Code::SourceChangelog => "source-changelog",
            Code::NameClash => "name-clash",
            Code::UnknownSource => "unknown-source",
            Code::SqlSyntax => "sql-syntax",
            Code::NotOneSelect => "not-one-select",
            Code::SqlTooLarge => "sql-too-large",
            Code::InvalidRead => "invalid-read",
            Code::SelfReference => "self-reference",
            Code::ReferenceCycle => "reference-cycle",
            Code::InvalidQuery => "invalid-query",
            Code::UnsupportedSql => "unsupported-sql",
            Code::UnknownColumn => "unknown-column",
            Code::TypeMismatch => "type-mismatch",
            Code::OutputColumns => "output-columns",
            Code::InvalidAggregate => "invalid-aggregate",
            Code::UpdatingInput => "updating-input",
            Code::UnboundedSort => "unbounded-sort",
            Code::DeclarationMismatch => "declaration-mismatch",
            Code::EventTime => "event-time",
            Code::Internal => "internal",
            Code::FixtureShape => "fixture-shape",
            Code::InvalidValue => "invalid-value",
            Code::Flink(kind) => kind.name(),
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One problem found in a project.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// What kind of problem it is.
    pub code: Code,
    /// Error or warning.
    pub severity: Severity,
    /// The file input it is about; `None` for the application as a whole. Functions that
    /// parse one file's text leave it unset and the query that called them sets it.
    pub file: Option<SourceFile>,
    /// Byte range in the file's text that the problem is about, when known.
    pub span: Option<Range<usize>>,
    /// What is wrong, one line, no trailing period.
    pub message: String,
    /// What to do about it.
    pub help: Option<String>,
    /// Whether the span's line may be quoted: not when it holds a secret.
    pub excerpt: bool,
    /// What the diagnostic points at when a query that must not depend on positions made
    /// it: the file and span are filled in from the anchor later (see
    /// `db::resolve_anchor`).
    pub anchor: Option<Box<Anchor>>,
}

/// A place in `streamform.yml` named rather than positioned.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// A model's entry under `models:`.
    ModelEntry(String),
    /// A model's `key:` (its entry when it has none).
    ModelKey(String),
    /// One column of a model's `key:`, by its place in the list (`key:` when not found).
    ModelKeyColumn(String, usize),
    /// A model's `retention:` (its entry when it has none).
    ModelRetention(String),
}

impl Diagnostic {
    /// An error with no file, span or help yet.
    pub fn error(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: Severity::Error,
            file: None,
            span: None,
            message: message.into(),
            help: None,
            excerpt: true,
            anchor: None,
        }
    }

    /// A warning with no file, span or help yet.
    pub fn warning(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }

    /// Says which file the diagnostic is about.
    pub fn in_file(mut self, file: SourceFile) -> Diagnostic {
        self.file = Some(file);
        self
    }

    /// The path of its file relative to the project root (`models/a.sql`), or `None` for
    /// the application as a whole.
    pub fn path<'db>(&self, db: &'db dyn Db) -> Option<&'db str> {
        self.file.map(|f| f.path(db).as_str())
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

/// Sets `file` on each of `diagnostics` that has neither a file nor an anchor (an anchor
/// names its own place): what a query does with what a parser of that file's text returned.
pub fn set_file(diagnostics: &mut [Diagnostic], file: SourceFile) {
    for d in diagnostics {
        if d.file.is_none() && d.anchor.is_none() {
            d.file = Some(file);
        }
    }
}

/// `diagnostics` grouped by file, the files in the order they first appear, each file's
/// diagnostics by position (those without one first, as they came).
pub fn in_file_order(diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut files: HashMap<Option<SourceFile>, usize> = HashMap::new();
    for d in &diagnostics {
        let next = files.len();
        files.entry(d.file).or_insert(next);
    }
    let mut ordered = diagnostics;
    ordered.sort_by_key(|d| (files[&d.file], d.span.as_ref().map(|s| s.start)));
    ordered
}

/// How many diagnostics of one file are shown to a person; the rest are counted (see
/// [`shown`]). Reading the first fifty problems of a file is about as much as helps.
pub const SHOWN_PER_FILE: usize = 50;

/// What a person is shown of `diagnostics` (in file order): at most [`SHOWN_PER_FILE`] of
/// each file, and for each file with more, the file and how many were left out.
pub fn shown<'a>(
    diagnostics: impl IntoIterator<Item = &'a Diagnostic>,
) -> (Vec<&'a Diagnostic>, Vec<(Option<SourceFile>, usize)>) {
    let mut seen: HashMap<Option<SourceFile>, usize> = HashMap::new();
    let mut shown = Vec::new();
    let mut left_out: Vec<(Option<SourceFile>, usize)> = Vec::new();
    for d in diagnostics {
        let count = seen.entry(d.file).or_insert(0);
        *count += 1;
        if *count <= SHOWN_PER_FILE {
            shown.push(d);
        } else if *count == SHOWN_PER_FILE + 1 {
            left_out.push((d.file, 1));
        } else if let Some((_, n)) = left_out.iter_mut().rev().find(|(f, _)| *f == d.file) {
            *n += 1;
        }
    }
    (shown, left_out)
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

/// 1-based (line, column) of a byte offset, columns in characters. It reads the text up to
/// the offset; to place many positions in one file, use a [`LineIndex`].
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    LineIndex::new(text).line_col(text, offset)
}

/// Where each line of a text starts: built once per file (`db::line_index`), it places a
/// position in the time of a binary search and the length of its line, so reporting many
/// problems in a large file costs what the problems cost, not the file's size each time.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LineIndex {
    /// The byte offset of each line's first character; the first is 0.
    starts: Vec<usize>,
    /// Every [`LineIndex::STRIDE`] bytes or so, a character's byte offset and its column
    /// (0-based, in characters) in its line: a column on a long line is counted from the
    /// nearest one, so a thousand problems on one long line do not each count the line.
    marks: Vec<(usize, usize)>,
}

impl LineIndex {
    const STRIDE: usize = 1024;

    /// The index of `text`.
    pub fn new(text: &str) -> LineIndex {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let mut marks = Vec::new();
        let mut column = 0;
        let mut next = Self::STRIDE;
        for (i, c) in text.char_indices() {
            if i >= next {
                marks.push((i, column));
                next = i + Self::STRIDE;
            }
            column = if c == '\n' { 0 } else { column + 1 };
        }
        LineIndex { starts, marks }
    }

    /// The 1-based line holding byte `offset` (clamped to the text).
    pub fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset).max(1)
    }

    /// 1-based (line, column) of a byte offset of `text` (the indexed text), columns in
    /// characters; an offset inside a character counts from that character.
    pub fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = offset.min(text.len());
        let line = self.line(offset);
        let line_start = self.starts[line - 1];
        // Count from the nearest mark at or before the offset on this line, else the line's
        // start.
        let (from, base) = match self.marks.partition_point(|&(b, _)| b <= offset) {
            0 => (line_start, 0),
            n if self.marks[n - 1].0 >= line_start => self.marks[n - 1],
            _ => (line_start, 0),
        };
        let column = text
            .get(from..)
            .unwrap_or("")
            .char_indices()
            .take_while(|(i, _)| from + i < offset)
            .count();
        (line, base + column + 1)
    }

    /// The byte range of the 1-based lines `first..=last` of `text`, line breaks included
    /// (clamped to the text).
    pub fn lines(&self, text: &str, first: usize, last: usize) -> std::ops::Range<usize> {
        let start = self.starts[first.clamp(1, self.starts.len()) - 1];
        let end = self.starts.get(last).copied().unwrap_or(text.len());
        start..end.max(start)
    }
}

/// The closest of `candidates` to `name` by edit distance, if it is close enough to be a
/// likely typo (at most a third of the name's length, and at least one edit allowed).
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    // A name longer than any that is typed by hand is no typo, and comparing it would cost
    // its length times every candidate's.
    if name.len() > 256 {
        return None;
    }
    let limit = (name.chars().count() / 3).max(2);
    // Distance counted without case, so `KAFKA` finds `kafka`; the written case breaks ties.
    let lower = name.to_lowercase();
    candidates
        .into_iter()
        .map(|c| {
            let d = strsim::osa_distance(&lower, &c.to_lowercase());
            (d, strsim::osa_distance(name, c), c)
        })
        .filter(|(d, _, _)| *d <= limit)
        .min_by_key(|(d, exact, c)| (*d, *exact, *c))
        .map(|(_, _, c)| c)
}

/// A `help:` text for an unknown name among `candidates`: `did you mean `x`? <listing>: a, b`
/// when one is close, else `<listing>: a, b`.
pub fn suggest(name: &str, candidates: &[&str], listing: &str) -> String {
    if candidates.is_empty() {
        return format!("{listing}: none yet");
    }
    let all = candidates.join(", ");
    match did_you_mean(name, candidates.iter().copied()) {
        Some(s) => format!("did you mean `{s}`? {listing}: {all}"),
        None => format!("{listing}: {all}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_sees_past_case() {
        assert_eq!(did_you_mean("KAFKA", ["kafka", "file"]), Some("kafka"));
        assert_eq!(
            did_you_mean("INSERT", ["insert", "update", "delete"]),
            Some("insert")
        );
        assert_eq!(did_you_mean("jsn", ["json", "csv"]), Some("json"));
        assert_eq!(did_you_mean("parquet", ["json", "csv"]), None);
    }

    #[test]
    fn positions_round_trip() {
        let text = "SELECT a\nFROM ref('x')\n";
        let off = offset_of(text, 2, 6);
        assert_eq!(&text[off..off + 3], "ref");
        assert_eq!(line_col(text, off), (2, 6));
    }

    #[test]
    fn the_line_index_places_every_offset_as_counting_from_the_start_does() {
        let text = "a: é\n\n  - b: \"ü€\"\nlast";
        let index = LineIndex::new(text);
        for offset in (0..=text.len()).filter(|o| text.is_char_boundary(*o)) {
            let before = &text[..offset];
            let line = before.matches('\n').count() + 1;
            let start = before.rfind('\n').map_or(0, |i| i + 1);
            let column = text[start..offset].chars().count() + 1;
            assert_eq!(index.line_col(text, offset), (line, column), "{offset}");
        }
        assert_eq!(index.lines(text, 2, 3), 6..22);
        assert_eq!(&text[index.lines(text, 4, 9)], "last");
        // A long line, with marks along it.
        let text = format!("x\n{}", "é".repeat(3000));
        let index = LineIndex::new(&text);
        for offset in (0..=text.len()).filter(|o| text.is_char_boundary(*o)) {
            let before = &text[..offset];
            let line = before.matches('\n').count() + 1;
            let start = before.rfind('\n').map_or(0, |i| i + 1);
            let column = text[start..offset].chars().count() + 1;
            assert_eq!(index.line_col(&text, offset), (line, column), "{offset}");
        }
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
