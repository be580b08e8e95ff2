//! Fixtures: typing `given` events against the source schema and `expect` records against
//! the model's output, and comparing the simulator's changelog with the expectation.
//!
//! See docs/fixtures.md (given, expect, typing and comparison rules) and
//! docs/project-format.md, "tests/*.yml".

use std::collections::BTreeMap;
use std::ops::Range;

use serde::Deserialize;
use streamform_ir::value::{F64, FitError};
use streamform_ir::{DataType, Decimal, Field, Value};
use streamform_sim::Op;

use crate::diagnostic::{Code, Diagnostic, suggest};
use crate::yaml::{self, Node, Raw, Spanned, YamlValue, span_of};

mod fast;

/// A fixture file: the model it tests, the events it gives, the changelog it expects.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Fixture")]
struct RawFixture {
    /// The model under test.
    #[schemars(with = "String")]
    model: Spanned<String>,
    /// The events, in delivery order (each a map of column to value, or `event: {...}`),
    /// on an upsert source `delete: {...}` items naming a key's columns, and on an
    /// event-time source `watermark: <timestamp>` items. An `event:`, `delete:` or
    /// `watermark:` item may name its source with `source: <name>` beside it. Required, like
    /// `expect`: a fixture that asserts no events or no output says so with `[]`, so a
    /// forgotten key is not a fixture that passes by asserting nothing.
    #[schemars(with = "Vec<Raw>")]
    given: Vec<Spanned<Raw>>,
    /// The changelog, in order: each record an `op` (insert, update or delete) and every
    /// output column.
    #[schemars(with = "Vec<Raw>")]
    expect: Vec<Spanned<Raw>>,
    /// On an event-time source: the events that must be dropped as late, in order (an
    /// empty `late:` lists none).
    #[serde(default)]
    #[schemars(with = "Option<Vec<Raw>>")]
    late: Option<Vec<Spanned<Raw>>>,
}

/// The JSON Schema of a fixture file.
pub fn fixture_schema() -> schemars::Schema {
    schemars::schema_for!(RawFixture)
}

/// A list of column → value maps, each with its item's span.
pub type Items = Vec<(BTreeMap<String, Node>, Range<usize>)>;

/// The untyped shape of a fixture file: which model it tests, and its items with spans.
#[derive(Debug, Clone, PartialEq)]
pub struct FixtureShape {
    /// The `model:` value: the model under test.
    pub model: String,
    /// Byte range of the `model:` value.
    pub model_span: Range<usize>,
    /// Each event as column → value, with the event's span.
    pub given: Items,
    /// The `given` events written `- delete: {...}` (a key's tombstone on an upsert
    /// source), by their index in `given`, in order.
    pub deletes: Vec<usize>,
    /// Per `given` event, the source its item names with `source:` beside `event:` or
    /// `delete:`, and where that name is.
    pub given_sources: Vec<Option<(String, Range<usize>)>>,
    /// Per `given` event, the number messages call it by: its place among all `given`
    /// events (1-based), also in a shape cut down to one source's events.
    pub given_numbers: Vec<usize>,
    /// Per watermark item, the source it names with `source:`; `None` for every source.
    pub watermark_sources: Vec<Option<(String, Range<usize>)>>,
    /// The `- watermark: <timestamp>` items of `given`: how many events come before each,
    /// its value, and the item's span.
    pub watermarks: Vec<(usize, Node, Range<usize>)>,
    /// Each `expect` record as column → value (`op` included), with the record's span.
    pub expect: Items,
    /// Each `late` event as column → value, with its span.
    pub late: Items,
    /// Per `late` event, the source its item names with `source:` beside `event:`.
    pub late_sources: Vec<Option<(String, Range<usize>)>>,
    /// Per `late` event, the number messages call it by (its place among all `late`
    /// events), also in a shape cut down to one source's.
    pub late_numbers: Vec<usize>,
    /// The file's text, to turn value positions into spans.
    pub text: String,
}

impl FixtureShape {
    /// The shape of the items for source `name` alone: its `given` events (keeping their
    /// numbers), the deletes among them, the watermark items that name it or no source
    /// (counted against its events), and no `late` events.
    pub fn for_source(&self, name: &str) -> FixtureShape {
        let mine: Vec<usize> = (0..self.given.len())
            .filter(|&i| {
                self.given_sources[i]
                    .as_ref()
                    .is_some_and(|(n, _)| n == name)
            })
            .collect();
        let position = |i: usize| mine.partition_point(|&m| m < i);
        let mut watermarks = Vec::new();
        let mut watermark_sources = Vec::new();
        for (w, source) in self.watermarks.iter().zip(&self.watermark_sources) {
            if source.as_ref().is_none_or(|(n, _)| n == name) {
                watermarks.push((position(w.0), w.1.clone(), w.2.clone()));
                watermark_sources.push(source.clone());
            }
        }
        FixtureShape {
            model: self.model.clone(),
            model_span: self.model_span.clone(),
            given: mine.iter().map(|&i| self.given[i].clone()).collect(),
            deletes: self
                .deletes
                .iter()
                .filter(|d| mine.binary_search(d).is_ok())
                .map(|&d| position(d))
                .collect(),
            given_sources: mine
                .iter()
                .map(|&i| self.given_sources[i].clone())
                .collect(),
            given_numbers: mine.iter().map(|&i| self.given_numbers[i]).collect(),
            watermark_sources,
            watermarks,
            expect: Vec::new(),
            late: Vec::new(),
            late_sources: Vec::new(),
            late_numbers: Vec::new(),
            text: self.text.clone(),
        }
    }

    /// The number messages call item `i` of `rows` by: a `given` event's own number, a
    /// `late` event's place in `late`.
    fn number(&self, rows: &Items, i: usize) -> usize {
        if std::ptr::eq(rows, &self.given) {
            self.given_numbers.get(i).copied().unwrap_or(i + 1)
        } else if std::ptr::eq(rows, &self.late) {
            self.late_numbers.get(i).copied().unwrap_or(i + 1)
        } else {
            i + 1
        }
    }

    /// The span of the value of `column` (key and value), for a diagnostic about it.
    pub(crate) fn field_span(&self, column: &str, v: &Node) -> Range<usize> {
        let value = v.span.clone();
        let key = crate::config::key_span(&self.text, column, value.clone());
        key.start.min(value.start)..value.end.max(key.end)
    }
}

/// Parses the fixture's YAML structure (not yet typed).
///
/// # Errors
/// Diagnostics for YAML errors, unknown fields and items that are not maps.
pub fn parse_shape(path: &str, text: &str) -> Result<FixtureShape, Vec<Diagnostic>> {
    shape_of(parse_document(path, text).map_err(|d| vec![d])?, text)
}

/// The document of a fixture file, read by the YAML parser.
fn parse_document(path: &str, text: &str) -> Result<Document, Diagnostic> {
    let raw: RawFixture = yaml::parse_large(path, text)?;
    let nodes = |list: Vec<Spanned<Raw>>| list.iter().map(|v| yaml::node(v, text)).collect();
    Ok(Document {
        model: (raw.model.value.clone(), span_of(&raw.model, text)),
        given: nodes(raw.given),
        expect: nodes(raw.expect),
        late: raw.late.map(nodes).unwrap_or_default(),
    })
}

/// The shape of a fixture read by the fast reader, if the file is written in the part of
/// YAML it reads and its items are well formed. The YAML parser reads the same file to
/// the same shape (`parse_shape`); what this leaves to it, it reports on.
pub fn fast_shape(text: &str) -> Option<FixtureShape> {
    shape_of(fast::document(text)?, text).ok()
}

/// A fixture file read, before its items are sorted out: what both readers make, the YAML
/// parser (through [`RawFixture`]) and the fast reader ([`fast`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Document {
    /// The `model:` value and its span.
    pub model: (String, Range<usize>),
    /// The items of `given:`.
    pub given: Vec<Node>,
    /// The items of `expect:`.
    pub expect: Vec<Node>,
    /// The items of `late:`; none when it is absent.
    pub late: Vec<Node>,
}

/// The shape of a fixture read as `document` from `text`: its items sorted into events,
/// deletes, watermarks and records, each with the source it names.
///
/// # Errors
/// Diagnostics for items that are not maps.
pub(crate) fn shape_of(document: Document, text: &str) -> Result<FixtureShape, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let mut watermarks = Vec::new();
    let mut deletes = Vec::new();
    let mut given_sources = Vec::new();
    let mut watermark_sources = Vec::new();
    let mut late_sources = Vec::new();
    // `unwrap_event`: items may be written `- event: {...}`; `given`: and may be
    // `- watermark: <timestamp>` or `- delete: {...}`.
    let mut items = |list: Vec<Node>, what: &str, unwrap_event: bool, given: bool| {
        let mut out = Vec::new();
        for (i, mut item) in list.into_iter().enumerate() {
            let span = item.span.clone();
            // `source: <name>` beside `event:`, `delete:` or `watermark:` names the source the
            // item is for (docs/fixtures.md).
            let mut named = None;
            if let YamlValue::Map(m) = &mut item.value
                && (given || what == "late")
                && m.len() == 2
                && ["event", "delete", "watermark"]
                    .iter()
                    .any(|k| m.contains_key(*k))
                && let Some(YamlValue::String(name)) = m.get("source").map(|v| &v.value)
            {
                let name = name.clone();
                let at = m.remove("source").expect("present");
                let value = at.span;
                let key = crate::config::key_span(text, "source", value.clone());
                named = Some((name, key.start.min(value.start)..value.end));
            }
            // `- watermark: <timestamp>`: a single key holding a value, not a map.
            if let YamlValue::Map(m) = &item.value
                && given
                && m.len() == 1
                && let Some(w) = m.get("watermark")
                && !matches!(w.value, YamlValue::Map(_) | YamlValue::Seq(_))
            {
                watermarks.push((out.len(), w.clone(), span));
                watermark_sources.push(named);
                continue;
            }
            let map = match item.value {
                YamlValue::Map(m)
                    if given
                        && m.len() == 1
                        && matches!(m.get("delete").map(|v| &v.value), Some(YamlValue::Map(_))) =>
                {
                    deletes.push(out.len());
                    match m.into_values().next().map(|v| v.value) {
                        Some(YamlValue::Map(inner)) => inner,
                        _ => unreachable!("matched a map under `delete:`"),
                    }
                }
                YamlValue::Map(m)
                    if unwrap_event
                        && m.len() == 1
                        && matches!(m.get("event").map(|v| &v.value), Some(YamlValue::Map(_))) =>
                {
                    match m.into_values().next().map(|v| v.value) {
                        Some(YamlValue::Map(inner)) => inner,
                        _ => {
                            diags.push(
                                Diagnostic::error(
                                    Code::FixtureShape,
                                    format!(
                                        "{what} item {} has an `event:` that is not a map",
                                        i + 1
                                    ),
                                )
                                .with_span(Some(span))
                                .with_help("write - event: { column: value, ... }"),
                            );
                            continue;
                        }
                    }
                }
                YamlValue::Map(m) => m,
                other => {
                    diags.push(
                        Diagnostic::error(
                            Code::FixtureShape,
                            format!(
                                "{what} item {} is {}, not a map of columns",
                                i + 1,
                                other.describe()
                            ),
                        )
                        .with_span(Some(span))
                        .with_help("write each item as column: value pairs"),
                    );
                    continue;
                }
            };
            if given {
                given_sources.push(named);
            } else if what == "late" {
                late_sources.push(named);
            }
            out.push((map, span));
        }
        out
    };
    let given = items(document.given, "given", true, true);
    let expect = items(document.expect, "expect", false, false);
    let late = items(document.late, "late", true, false);
    if !diags.is_empty() {
        return Err(diags);
    }
    Ok(FixtureShape {
        model: document.model.0,
        model_span: document.model.1,
        given_numbers: (1..=given.len()).collect(),
        given,
        deletes,
        given_sources,
        watermark_sources,
        watermarks,
        expect,
        late_numbers: (1..=late.len()).collect(),
        late,
        late_sources,
        text: text.to_string(),
    })
}

/// Types one YAML value against a column type, exactly (docs/fixtures.md, "Given: input
/// events").
///
/// # Errors
/// A message saying what the value is and why it does not fit.
pub fn type_value(v: &YamlValue, ty: DataType) -> Result<Value, String> {
    let article = if matches!(ty, DataType::Int32 | DataType::Int64) {
        "an"
    } else {
        "a"
    };
    let wrong = || format!("{} is not {article} {ty}", v.describe());
    match (v, ty) {
        (YamlValue::Null, _) => Ok(Value::Null),
        (YamlValue::Number(n), DataType::Int32 | DataType::Int64) => {
            let i: i64 = without_underscores(n).parse().map_err(|_| {
                if n.contains(['.', 'e', 'E']) { format!("{n} is not a whole number; the column is {ty}") } else { format!("{n} does not fit {ty}") }
            })?;
            if ty == DataType::Int32 {
                i32::try_from(i).map(Value::Int32).map_err(|_| format!("{n} does not fit int32"))
            } else {
                Ok(Value::Int64(i))
            }
        }
        (YamlValue::Number(n), DataType::Decimal { precision, scale }) => {
            let d = Decimal::parse(&without_underscores(n)).ok_or_else(|| {
                if n.contains(['e', 'E']) { format!("{n} is not a plain decimal number; write it without an exponent") } else { format!("{n} has more digits than {ty} holds") }
            })?;
            d.fit(precision, scale).map(Value::Decimal).map_err(|e| match e {
                FitError::Rounding => format!("{n} has more than {scale} fractional digits, so it does not fit {ty} without rounding"),
                FitError::Overflow => format!("{n} has more digits than {ty} holds"),
            })
        }
        (YamlValue::Number(n), DataType::Float64) => match n.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::Float64(F64(f))),
            Ok(_) => Err(format!("{n} is beyond what a float64 holds; write .inf or -.inf for an infinity")),
            Err(_) => Err(wrong()),
        },
        (YamlValue::Number(n), DataType::Timestamp) => n
            .parse::<i64>()
            .map_err(|_| format!("{n} is not a timestamp; write an RFC 3339 instant such as 2026-08-30T10:00:00Z or whole milliseconds since the epoch"))
            .and_then(|ms| in_range(n, ms)),
        (YamlValue::String(s), DataType::Float64) if crate::yaml::is_non_finite(s) => {
            let f = match s.trim_start_matches('+') {
                n if n.starts_with('-') => f64::NEG_INFINITY,
                n if n.ends_with(['f', 'F']) => f64::INFINITY,
                _ => f64::NAN,
            };
            Ok(Value::Float64(F64(f)))
        }
        (YamlValue::String(s), DataType::String) => Ok(Value::String(s.clone())),
        (YamlValue::String(s), DataType::Timestamp) => match streamform_ir::time::parse_rfc3339(s) {
            Some(ms) => in_range(&format!("{s:?}"), ms),
            None if s.contains(":60") && streamform_ir::time::is_rfc3339(s) => Err(format!("{s:?} is a leap second, which a timestamp does not hold")),
            None if streamform_ir::time::is_rfc3339(s) => Err(format!("{s:?} has digits below a millisecond; timestamps keep milliseconds")),
            None if streamform_ir::time::is_time_of_day(s) => {
                let clock = if s.matches(':').count() == 1 { format!("{s}:00") } else { s.clone() };
                Err(format!("{s:?} is a time of day without a date, which would make the fixture depend on the day it runs; write an RFC 3339 instant such as 2026-08-30T{clock}Z"))
            }
            None => Err(format!("{s:?} is not an RFC 3339 instant; write e.g. 2026-08-30T10:00:00Z")),
        },
        (YamlValue::String(s), DataType::Date) => streamform_ir::time::parse_iso_date(s)
            .map(Value::Date)
            .ok_or_else(|| format!("{s:?} is not a date; write it yyyy-MM-dd, such as 2026-08-30, of the years 0 to 9999")),
        (YamlValue::Bool(b), DataType::Boolean) => Ok(Value::Boolean(*b)),
        _ => Err(wrong()),
    }
}

/// `n` without the `_` that may group its digits.
fn without_underscores(n: &str) -> std::borrow::Cow<'_, str> {
    if n.contains('_') {
        n.replace('_', "").into()
    } else {
        n.into()
    }
}

/// A timestamp value `written` as `ms`, if it lies in the years 1 to 9999.
fn in_range(written: &str, ms: i64) -> Result<Value, String> {
    if streamform_ir::time::in_range(ms) {
        Ok(Value::Timestamp(ms))
    } else {
        Err(format!(
            "{written} lies outside the years 1 to 9999, which a timestamp holds"
        ))
    }
}

/// One typed record of `expect`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Expected {
    /// The record's operation: insert, update or delete.
    pub op: Op,
    /// In the model's output column order.
    pub values: Vec<Value>,
}

/// Types the `given` events against the top source's columns.
pub fn type_events(
    shape: &FixtureShape,
    source: &str,
    columns: &[(String, DataType)],
    diags: &mut Vec<Diagnostic>,
) -> Vec<Vec<Value>> {
    type_rows(shape, &shape.given, "event", source, columns, diags)
}

/// Every `given` event, and every `late` one, of a source on event time needs its time:
/// one without it (missing or null) is an error at the event, found before anything runs.
pub fn require_event_time(
    shape: &FixtureShape,
    column: &str,
    source: &str,
    columns: &[(String, DataType)],
    diags: &mut Vec<Diagnostic>,
) {
    for (what, rows) in [("event", &shape.given), ("late event", &shape.late)] {
        for (i, (map, item)) in rows.iter().enumerate() {
            // A delete is a tombstone, which has no time (refused on its own).
            if what == "event" && shape.deletes.binary_search(&i).is_ok() {
                continue;
            }
            let n = shape.number(rows, i);
            let span = match map.get(column) {
                // Reported as an `event:` without columns.
                None if stray_event(map, columns).is_some() => continue,
                None => item.clone(),
                Some(v) if matches!(v.value, YamlValue::Null) => shape.field_span(column, v),
                // A value that is not a timestamp is reported where it is typed.
                Some(_) => continue,
            };
            diags.push(
                Diagnostic::error(
                    Code::FixtureShape,
                    format!(
                        "{what} {n} has no `{column}`; source `{source}` runs on event time, so every event needs one"
                    ),
                )
                .with_span(Some(span))
                .with_help(format!(
                    "give the event its time, `{column}: 2026-08-30T10:00:00Z`; an event without one is neither on time nor late"
                )),
            );
        }
    }
}

/// An event time before 1970 on a source on event time is refused at the event: Flink
/// starts its watermarks at the epoch and loses windows that end before it, so the
/// simulator could not promise Flink's result (docs/event-time.md). `rows` are the typed
/// `given` (or `late`) events, `index` the event-time column's.
pub fn refuse_event_time_before_1970(
    shape: &FixtureShape,
    column: &str,
    index: usize,
    (given, late): (&[Vec<Value>], &[Vec<Value>]),
    source: &str,
    diags: &mut Vec<Diagnostic>,
) {
    for (what, rows, typed) in [
        ("event", &shape.given, given),
        ("late event", &shape.late, late),
    ] {
        for (i, ((map, _), row)) in rows.iter().zip(typed).enumerate() {
            let n = shape.number(rows, i);
            let (Some(Value::Timestamp(ms)), Some(written)) = (row.get(index), map.get(column))
            else {
                continue;
            };
            if *ms >= 0 {
                continue;
            }
            diags.push(
                Diagnostic::error(
                    Code::InvalidValue,
                    format!(
                        "{what} {n} is at {}, before 1970; source `{source}` runs on event time, and Flink's event time starts at 1970-01-01T00:00:00Z",
                        streamform_ir::time::format_rfc3339(*ms)
                    ),
                )
                .with_span(Some(shape.field_span(column, written)))
                .with_help(format!(
                    "give `{column}` a time from 1970 on: Flink starts a watermark at the epoch and loses windows that end before it, so no result before it can be promised"
                )),
            );
        }
    }
}

/// The value of an item written `- event:` with no map under it (empty, or a single
/// value), when the source has no column named `event` that it could be.
fn stray_event<'a>(
    map: &'a BTreeMap<String, Node>,
    columns: &[(String, DataType)],
) -> Option<&'a Node> {
    match map.get("event") {
        Some(v) if map.len() == 1 && !columns.iter().any(|(c, _)| c == "event") => Some(v),
        _ => None,
    }
}

/// Types the `late` events against the top source's columns.
pub fn type_late(
    shape: &FixtureShape,
    source: &str,
    columns: &[(String, DataType)],
    diags: &mut Vec<Diagnostic>,
) -> Vec<Vec<Value>> {
    type_rows(shape, &shape.late, "late event", source, columns, diags)
}

/// Types the `- watermark:` items as timestamps: (events before each, milliseconds).
pub fn type_watermarks(shape: &FixtureShape, diags: &mut Vec<Diagnostic>) -> Vec<(usize, i64)> {
    let mut out = Vec::new();
    for (n, (before, v, _)) in shape.watermarks.iter().enumerate() {
        match type_value(&v.value, DataType::Timestamp) {
            Ok(Value::Timestamp(ms)) => out.push((*before, ms)),
            other => {
                let m = other
                    .err()
                    .unwrap_or_else(|| format!("{} is not a timestamp", v.value.describe()));
                diags.push(
                    Diagnostic::error(Code::InvalidValue, format!("watermark item {}: {m}", n + 1))
                        .with_span(Some(shape.field_span("watermark", v)))
                        .with_help("a watermark item is - watermark: <timestamp>, an RFC 3339 instant such as 2026-08-30T10:20:00Z"),
                );
            }
        }
    }
    out
}

/// Checks the sources the `given` items name with `source:` against the sources the model
/// reads (`reads`, the ones its chain starts from): an item for a source the model does not
/// read is an error at its name.
pub fn check_sources(shape: &FixtureShape, reads: &[String], diags: &mut Vec<Diagnostic>) {
    let named = shape
        .given_sources
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.as_ref().map(|s| (format!("event {}", i + 1), s)))
        .chain(
            shape
                .watermark_sources
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.as_ref().map(|s| (format!("watermark item {}", i + 1), s))),
        )
        .chain(
            shape
                .late_sources
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.as_ref().map(|s| (format!("late event {}", i + 1), s))),
        );
    for (what, (name, at)) in named {
        if reads.contains(name) {
            continue;
        }
        let listed: Vec<String> = reads.iter().map(|r| format!("`{r}`")).collect();
        let help = match crate::diagnostic::did_you_mean(name, reads.iter().map(String::as_str)) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!(
                "model `{}` reads {}; name one of them",
                shape.model,
                listed.join(", ")
            ),
        };
        diags.push(
            Diagnostic::error(
                Code::FixtureShape,
                format!(
                    "{what} names source `{name}`, which model `{}` does not read",
                    shape.model
                ),
            )
            .with_span(Some(at.clone()))
            .with_help(help),
        );
    }
}

/// When the model reads several sources, every `given` event names its own with `source:`
/// (docs/fixtures.md, "Several sources"): one that does not is an error at the event, whose
/// help names a source the item fits. `shapes` holds, per source read, its columns and
/// whether it is an upsert source (the only kind a delete fits).
pub fn require_source_names(
    shape: &FixtureShape,
    reads: &[String],
    shapes: &[(Vec<String>, bool)],
    diags: &mut Vec<Diagnostic>,
) {
    let listed: Vec<String> = reads.iter().map(|r| format!("`{r}`")).collect();
    for (i, named) in shape.given_sources.iter().enumerate() {
        if named.is_some() {
            continue;
        }
        let (map, item) = &shape.given[i];
        let kind = if shape.deletes.binary_search(&i).is_ok() {
            "delete"
        } else {
            "event"
        };
        // `source:` written among the event's columns, where it reads as a column.
        let inside = map
            .get("source")
            .filter(|v| matches!(&v.value, YamlValue::String(n) if reads.contains(n)));
        // `source:` beside `event:` or `delete:` and something more: not an item of any
        // form, whatever the extra key is.
        let extra: Vec<&str> = map
            .iter()
            .filter(|(k, v)| {
                matches!(k.as_str(), "event" | "delete" | "late")
                    || matches!(v.value, YamlValue::Map(_) | YamlValue::Seq(_))
            })
            .map(|(k, _)| k.as_str())
            .collect();
        let mixed = inside.is_some() && !extra.is_empty();
        let (message, span, help) = match inside {
            Some(_) if mixed => {
                let keys: Vec<String> = map.keys().map(|k| format!("`{k}:`")).collect();
                (
                    format!(
                        "event {} has the keys {}, which make no item",
                        shape.given_numbers[i],
                        keys.join(", ")
                    ),
                    item.clone(),
                    "an item is `- event: {...}` or `- delete: {...}`, with only `source:` beside it; write one item per event".to_string(),
                )
            }
            Some(v) => (
                format!(
                    "event {} writes `source:` among its columns, where it reads as a column",
                    shape.given_numbers[i]
                ),
                shape.field_span("source", v),
                format!(
                    "write `source:` beside `{kind}:`, on the next line of the item, not inside its `{{...}}`"
                ),
            ),
            None => (
                format!(
                    "event {} does not name its source, and model `{}` reads {}",
                    shape.given_numbers[i],
                    shape.model,
                    listed.join(", ")
                ),
                item.clone(),
                format!(
                    "write the item as `- {kind}: {{...}}` with `source: {}` on the next line",
                    fitting(map, kind == "delete", reads, shapes)
                ),
            ),
        };
        diags.push(
            Diagnostic::error(Code::FixtureShape, message)
                .with_span(Some(span))
                .with_help(help),
        );
    }
}

/// The first source an item fits, for a help line: one with every column the item names
/// (an upsert source, for a delete); the first source read when none does.
fn fitting<'a>(
    map: &BTreeMap<String, Node>,
    delete: bool,
    reads: &'a [String],
    shapes: &[(Vec<String>, bool)],
) -> &'a str {
    let fits = |(columns, upsert): &(Vec<String>, bool)| {
        (!delete || *upsert)
            && map
                .keys()
                .all(|k| k.as_str() == "source" || columns.iter().any(|c| c == k))
    };
    reads
        .get(shapes.iter().position(fits).unwrap_or(0))
        .map_or("<name>", String::as_str)
}

/// A delete of an upsert source on event time (a versioned table, docs/joins.md): its
/// tombstone carries no time, and Flink 2.0 and 2.2 read a deleted version differently, so
/// no fixture can say what Flink does with it.
pub fn refuse_versioned_deletes(shape: &FixtureShape, source: &str, diags: &mut Vec<Diagnostic>) {
    for &i in &shape.deletes {
        diags.push(
            Diagnostic::error(
                Code::FixtureShape,
                format!(
                    "event {} deletes a key of `{source}`, an upsert source on event time, whose deletes Flink 2.0 and 2.2 read differently",
                    shape.given_numbers[i]
                ),
            )
            .with_span(Some(shape.given[i].1.clone()))
            .with_help(
                "a tombstone carries no time: Flink 2.0 stops a temporal join from matching the key after it, Flink 2.2 ignores it; give the key a new version instead, a row whose other columns say it no longer applies (null, say)",
            ),
        );
    }
}

/// Checks the `given` events against the source's changelog (docs/changing-tables.md): a
/// `- delete:` only on an upsert source, naming exactly its key's columns; every event of
/// an upsert source with its key, since the key is the Kafka record's key and never null.
/// `key` is the upsert source's key, `None` for an append source.
pub fn check_changes(
    shape: &FixtureShape,
    (key, columns): (Option<&[String]>, &[(String, DataType)]),
    source: &str,
    diags: &mut Vec<Diagnostic>,
) {
    let Some(key) = key else {
        for &i in &shape.deletes {
            diags.push(
                Diagnostic::error(
                    Code::FixtureShape,
                    format!("event {} deletes a key, but source `{source}` is an append source", shape.given_numbers[i]),
                )
                .with_span(Some(shape.given[i].1.clone()))
                .with_help(format!(
                    "a delete is a tombstone of an upsert source; declare `changelog: upsert` and its `key:` on source `{source}` in sources.yml, or give the event as `- event:`"
                )),
            );
        }
        return;
    };
    let listed = key.join(", ");
    for (i, (map, span)) in shape.given.iter().enumerate() {
        let delete = shape.deletes.binary_search(&i).is_ok();
        if !delete && stray_delete(map, columns).is_some() {
            // Reported when the events are typed.
            continue;
        }
        let n = shape.given_numbers[i];
        let what = if delete {
            format!("event {n} (a delete)")
        } else {
            format!("event {n}")
        };
        if delete {
            // A column the source does not declare is reported when the events are typed.
            let declared = |c: &String| columns.iter().any(|(n, _)| n == c);
            for (col, v) in map.iter().filter(|(c, _)| !key.contains(c) && declared(c)) {
                diags.push(
                    Diagnostic::error(
                        Code::FixtureShape,
                        format!("{what} names `{col}`, which is not in the key of upsert source `{source}`"),
                    )
                    .with_span(Some(shape.field_span(col, v)))
                    .with_help(format!(
                        "a delete is a tombstone: it names the key's columns only, [{listed}]"
                    )),
                );
            }
        }
        let missing: Vec<&String> = key.iter().filter(|k| !map.contains_key(*k)).collect();
        if !missing.is_empty() {
            let names: Vec<String> = missing.iter().map(|k| format!("`{k}`")).collect();
            diags.push(
                Diagnostic::error(
                    Code::FixtureShape,
                    format!(
                        "{what} has no {}, {} of upsert source `{source}`",
                        names.join(", "),
                        if missing.len() == 1 {
                            "a key column"
                        } else {
                            "key columns"
                        }
                    ),
                )
                .with_span(Some(span.clone()))
                .with_help(if delete {
                    format!("a delete names the key it deletes: give [{listed}]")
                } else {
                    format!("each event of an upsert source is its key's new row: give [{listed}]")
                }),
            );
        }
        for (k, v) in key
            .iter()
            .filter_map(|k| map.get(k).map(|v| (k, v)))
            .filter(|(_, v)| matches!(v.value, YamlValue::Null))
        {
            diags.push(
                Diagnostic::error(
                    Code::InvalidValue,
                    format!("{what} gives `{k}` as null, a key column of upsert source `{source}`"),
                )
                .with_span(Some(shape.field_span(k, v)))
                .with_help(format!(
                    "a key column is never null (Flink's primary key is NOT NULL): give `{k}` a value"
                )),
            );
        }
    }
}

/// The value of an item's `delete:` that was not read as a delete (not a map, or beside
/// other keys), when the source has no column named `delete` that it could be.
fn stray_delete<'a>(
    map: &'a BTreeMap<String, Node>,
    columns: &[(String, DataType)],
) -> Option<&'a Node> {
    map.get("delete")
        .filter(|_| !columns.iter().any(|(c, _)| c == "delete"))
}

/// Types rows of source columns (`what` names one in messages: `event 2`).
fn type_rows(
    shape: &FixtureShape,
    rows: &Items,
    what: &str,
    source: &str,
    columns: &[(String, DataType)],
    diags: &mut Vec<Diagnostic>,
) -> Vec<Vec<Value>> {
    let mut events = Vec::new();
    for (i, (map, _)) in rows.iter().enumerate() {
        let n = shape.number(rows, i);
        let mut row = vec![Value::Null; columns.len()];
        if let Some(v) = stray_delete(map, columns) {
            diags.push(
                Diagnostic::error(
                    Code::FixtureShape,
                    format!(
                        "{what} {n} has a `delete:` that is not a map of the key's columns on its own"
                    ),
                )
                .with_span(Some(shape.field_span("delete", v)))
                .with_help("a delete stands alone in its item and names the key it deletes, as a map of the key's columns: - delete: { column: value, ... }"),
            );
            events.push(row);
            continue;
        }
        if let Some(v) = stray_event(map, columns) {
            let (message, help) = match v.value {
                YamlValue::Null => (
                    format!("{what} {n} has an empty `event:`"),
                    "write the event's columns under it: - event: { column: value, ... }",
                ),
                _ => (
                    format!("{what} {n} has an `event:` that is not a map of columns"),
                    "write - event: { column: value, ... }",
                ),
            };
            diags.push(
                Diagnostic::error(Code::FixtureShape, message)
                    .with_span(Some(shape.field_span("event", v)))
                    .with_help(help),
            );
            events.push(row);
            continue;
        }
        for (col, v) in map {
            let Some(idx) = columns.iter().position(|(c, _)| c == col) else {
                let names: Vec<&str> = columns.iter().map(|(c, _)| c.as_str()).collect();
                let help = if col == "watermark" {
                    // Meant as a watermark item, which stands alone and holds one time.
                    "a watermark item is `- watermark: <timestamp>` on its own, with nothing else in the item and one time (2026-08-30T10:20:00Z), and only in `given:`".to_string()
                } else {
                    suggest(col, &names, &format!("source `{source}` declares"))
                };
                diags.push(
                    Diagnostic::error(
                        Code::UnknownColumn,
                        format!(
                            "{what} {n} has column `{col}`, which source `{source}` does not declare"
                        ),
                    )
                    .with_span(Some(shape.field_span(col, v)))
                    .with_help(help),
                );
                continue;
            };
            let ty = columns[idx].1;
            match type_value(&v.value, ty) {
                Ok(val) => row[idx] = val,
                Err(m) => diags.push(
                    Diagnostic::error(
                        Code::InvalidValue,
                        format!("{what} {n}, column `{col}`: {m}"),
                    )
                    .with_span(Some(shape.field_span(col, v)))
                    .with_help(format!("`{col}` is declared {ty} in sources.yml")),
                ),
            }
        }
        events.push(row);
    }
    events
}

/// Types the `expect` records against the model's output columns; a record must name
/// exactly those columns plus `op`.
pub fn type_expectations(
    shape: &FixtureShape,
    schema: &[Field],
    diags: &mut Vec<Diagnostic>,
) -> Vec<Expected> {
    let names: Vec<&str> = schema.iter().map(|f| f.name.as_str()).collect();
    if names.contains(&"op") && !shape.expect.is_empty() {
        diags.push(
            Diagnostic::error(Code::OutputColumns, format!("model `{}` outputs a column named `op`, which an expect record cannot name: `op` is the record's operation", shape.model))
                .with_span(Some(shape.expect[0].1.clone()))
                .with_help("rename the column in the model's SELECT with AS"),
        );
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, (map, span)) in shape.expect.iter().enumerate() {
        let n = i + 1;
        let op = match map.get("op").map(|v| &v.value) {
            Some(YamlValue::String(s)) if s == "insert" => Some(Op::Insert),
            Some(YamlValue::String(s)) if s == "update" => Some(Op::Update),
            Some(YamlValue::String(s)) if s == "delete" => Some(Op::Delete),
            Some(other) => {
                diags.push(
                    Diagnostic::error(
                        Code::FixtureShape,
                        format!("expect record {n} has op {}", other.describe()),
                    )
                    .with_span(Some(span.clone()))
                    .with_help(match other {
                        YamlValue::String(s) => crate::diagnostic::suggest(
                            s,
                            &["insert", "update", "delete"],
                            "op is one of",
                        ),
                        _ => "op is insert, update or delete".into(),
                    }),
                );
                None
            }
            None => {
                // Written as a given item is (`- delete: {...}`): one key naming the op.
                let written = ["insert", "update", "delete", "event"]
                    .into_iter()
                    .find(|k| {
                        map.len() == 1 && map.contains_key(*k) && !names.iter().any(|c| c == k)
                    });
                let help = match written {
                    Some(k) => format!(
                        "an expected record is a map of the row's columns with its op beside them: - {{op: {}, column: value, ...}}",
                        if k == "event" { "insert" } else { k }
                    ),
                    None => "add op: insert, update or delete".to_string(),
                };
                diags.push(
                    Diagnostic::error(Code::FixtureShape, format!("expect record {n} has no `op`"))
                        .with_span(Some(span.clone()))
                        .with_help(help),
                );
                if written.is_some() {
                    continue;
                }
                None
            }
        };
        let mut values = vec![Value::Null; schema.len()];
        let mut ok = op.is_some();
        for (col, v) in map.iter().filter(|(k, _)| k.as_str() != "op") {
            let Some(idx) = names.iter().position(|c| c == col) else {
                let help = suggest(col, &names, "the model's columns are");
                diags.push(
                    Diagnostic::error(
                        Code::UnknownColumn,
                        format!(
                            "expect record {n} names `{col}`, which model `{}` does not output",
                            shape.model
                        ),
                    )
                    .with_span(Some(shape.field_span(col, v)))
                    .with_help(help),
                );
                ok = false;
                continue;
            };
            match type_value(&v.value, schema[idx].ty) {
                Ok(val) => values[idx] = val,
                Err(m) => {
                    diags.push(
                        Diagnostic::error(
                            Code::InvalidValue,
                            format!("expect record {n}, column `{col}`: {m}"),
                        )
                        .with_span(Some(shape.field_span(col, v)))
                        .with_help(format!(
                            "`{col}` is {} in the model's output",
                            schema[idx].ty
                        )),
                    );
                    ok = false;
                }
            }
        }
        let named_unknown = map
            .keys()
            .any(|k| k != "op" && !names.contains(&k.as_str()));
        for name in names.iter().filter(|_| !named_unknown) {
            if !map.contains_key(*name) {
                diags.push(
                    Diagnostic::error(
                        Code::FixtureShape,
                        format!("expect record {n} has no value for `{name}`"),
                    )
                    .with_span(Some(span.clone()))
                    .with_help(format!(
                        "every record names each output column ({}); write null for a null",
                        names.join(", ")
                    )),
                );
                ok = false;
            }
        }
        if ok {
            out.push(Expected {
                op: op.expect("checked"),
                values,
            });
        }
    }
    out
}

/// One position of the side-by-side comparison.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RowComparison {
    /// The expected record at this position; `None` past the end of `expect`.
    pub expected: Option<Expected>,
    /// The emitted record at this position; `None` when the model emitted fewer.
    pub actual: Option<Expected>,
    /// An emitted update's row as it was (the simulator's before-image).
    pub before: Option<Vec<Value>>,
    /// `None` when the two match; otherwise the first difference, e.g.
    /// `total_spend: expected 27, got 28`.
    pub problem: Option<String>,
}

/// One position of the `late` list against the events dropped as late.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LateComparison {
    /// The event listed at this position; `None` past the end of `late`.
    pub listed: Option<Vec<Value>>,
    /// The number of the listed event's source (0 when none is listed).
    pub listed_source: usize,
    /// The event dropped at this position; `None` when fewer were dropped.
    pub dropped: Option<Vec<Value>>,
    /// The number of the dropped event's source (0 when none was dropped).
    pub dropped_source: usize,
    /// The window node that dropped it because every window it belongs to had fired;
    /// `None` when the source dropped it as behind the watermark, or none was dropped.
    pub by_window: Option<String>,
    /// The interval join that dropped it, which it reached after its last chance to match
    /// and met none of the rows kept (docs/joins.md, "Joins in time").
    pub by_join: Option<String>,
    /// The deduplication that dropped it, keeping the first row by time, as behind the
    /// watermark (docs/ranking.md).
    pub by_rank: Option<String>,
    /// The OVER aggregation that dropped it, at or behind the watermark, or at or before
    /// the last time its partition emitted (docs/over.md).
    pub by_over: Option<String>,
    /// `None` when the two are the same event; otherwise what is wrong.
    pub problem: Option<String>,
}

/// Compares the `late` list with the events dropped, position by position: every dropped
/// event must be listed, in order, and every listed event dropped. Each is (the number of
/// its source, its values), and `columns` are each source's, which its values follow.
pub fn compare_late(
    columns: &[Vec<Field>],
    sources: &[String],
    listed: &[(usize, Vec<Value>)],
    dropped: &[(usize, Vec<Value>, Option<String>)],
) -> Vec<LateComparison> {
    let differs = |(ls, l): (usize, &[Value]), (ds, d): (usize, &[Value])| {
        if ls != ds {
            let name = |s: usize| sources.get(s).map_or("?", String::as_str).to_string();
            return Some(format!(
                "listed an event of source `{}`, but an event of source `{}` was dropped here; list the dropped events as given, with their sources, in the order they arrive",
                name(ls),
                name(ds)
            ));
        }
        columns
            .get(ls)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .zip(l.iter().zip(d))
            .find(|(_, (x, y))| !values_match(x, y))
            .map(|(f, (x, y))| {
                format!(
                    "{}: listed {}, dropped {}; list the dropped events as given, in the order they arrive",
                    f.name,
                    x.render(),
                    y.render()
                )
            })
    };
    (0..listed.len().max(dropped.len()))
        .map(|i| {
            let (l, d) = (listed.get(i), dropped.get(i));
            let by = d.and_then(|(_, _, by)| by.clone());
            let kind = by
                .as_deref()
                .and_then(streamform_ir::NodeId::parse)
                .map(|id| id.kind);
            let (mut by_window, mut by_join, mut by_rank, mut by_over) = (None, None, None, None);
            match kind {
                Some(streamform_ir::NodeKind::IntervalJoin) => by_join = by,
                Some(streamform_ir::NodeKind::Rank) => by_rank = by,
                Some(streamform_ir::NodeKind::Over) => by_over = by,
                _ => by_window = by,
            }
            let problem = match (l, d) {
                (Some((ls, l)), Some((ds, d, _))) => differs((*ls, l), (*ds, d)),
                (None, Some(_)) => Some(match (&by_window, &by_join) {
                    _ if by_over.is_some() => format!("dropped by the OVER aggregation `{}`, which it reached at or behind the watermark (or, with a bounded frame, at or before the last time its partition emitted), but not acknowledged; list it under `late:` (`late_events: keep` does not bring it back)", by_over.as_deref().unwrap_or_default()),
                    _ if by_rank.is_some() => format!("dropped by rank `{}`, which it reached behind the watermark (a deduplication keeping the first row by time) or after every window it belongs to had closed (a rank per window), but not acknowledged; list it under `late:` (`late_events: keep` does not bring it back)", by_rank.as_deref().unwrap_or_default()),
                    (Some(node), _) => format!("dropped by window `{node}`, whose windows for it had already closed, but not acknowledged; list it under `late:` (`late_events: keep` does not bring it back: a window never reopens)"),
                    (_, Some(node)) => format!("dropped by interval join `{node}`, which it reached after its last chance to match and which kept no row it meets, but not acknowledged; list it under `late:` (`late_events: keep` does not bring it back: the join no longer keeps the rows it could have met)"),
                    _ => "dropped as late but not acknowledged; list it under `late:` or set `late_events: keep` on the source".to_string(),
                }),
                (Some(_), None) => Some("listed under `late:` but not dropped; remove it from `late:`".to_string()),
                (None, None) => None,
            };
            LateComparison {
                listed: l.map(|(_, v)| v.clone()),
                listed_source: l.map_or(0, |(s, _)| *s),
                dropped: d.map(|(_, v, _)| v.clone()),
                dropped_source: d.map_or(0, |(s, _, _)| *s),
                by_window,
                by_join,
                by_rank,
                by_over,
                problem,
            }
        })
        .collect()
}

/// Whether two typed values are equal under the fixture rules: numbers by value, null only
/// equal to null.
pub fn values_match(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Null, _) | (_, Value::Null) => false,
        _ => a.sql_cmp(b) == Some(std::cmp::Ordering::Equal) || a == b,
    }
}

/// Compares expected and actual record by record.
pub fn compare(schema: &[Field], expected: &[Expected], actual: &[Expected]) -> Vec<RowComparison> {
    let n = expected.len().max(actual.len());
    (0..n)
        .map(|i| {
            let (e, a) = (expected.get(i), actual.get(i));
            let problem = match (e, a) {
                (Some(e), Some(a)) => {
                    if e.op != a.op {
                        Some(format!("op: expected {}, got {}", e.op, a.op))
                    } else {
                        schema
                            .iter()
                            .enumerate()
                            .find(|(j, _)| !values_match(&e.values[*j], &a.values[*j]))
                            .map(|(j, f)| {
                                format!(
                                    "{}: expected {}, got {}",
                                    f.name,
                                    e.values[j].render(),
                                    a.values[j].render()
                                )
                            })
                    }
                }
                (Some(_), None) => {
                    Some("expected this record, but the model emitted nothing more".into())
                }
                (None, Some(_)) => {
                    Some("the model emitted this record, but nothing more was expected".into())
                }
                (None, None) => None,
            };
            RowComparison {
                before: None,
                expected: e.cloned(),
                actual: a.cloned(),
                problem,
            }
        })
        .collect()
}
