//! YAML reading through serde-saphyr: strict structs, errors with positions, and a scalar
//! value type that keeps the text a number was written with.
//!
//! See docs/project-format.md, whose opening states the rule: unknown fields and duplicate
//! keys are refused everywhere.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
pub use serde_saphyr::Spanned;

use crate::diagnostic::{Code, Diagnostic, did_you_mean, offset_of};

/// Byte range of a spanned YAML node in its file.
pub fn span_of<T>(s: &Spanned<T>, text: &str) -> Range<usize> {
    let loc = &s.referenced;
    let start = loc
        .span()
        .byte_offset()
        .map_or_else(
            || offset_of(text, loc.line() as usize, loc.column() as usize),
            |o| o as usize,
        )
        .min(text.len());
    let len = loc.span().byte_len().unwrap_or(0) as usize;
    let end = (start + len.max(1)).min(text.len()).max(start);
    start..end
}

/// Parses `text` into `T`, turning a serde-saphyr error into a diagnostic for `path` with
/// its position and, for an unknown field, a did-you-mean.
///
/// # Errors
/// One diagnostic: YAML syntax, unknown field, duplicate key, missing field, wrong type.
pub fn parse<T: for<'de> Deserialize<'de>>(path: &str, text: &str) -> Result<T, Diagnostic> {
    parse_with(path, text, yaml_12())
}

/// The parser's options for YAML 1.2's core schema: `yes`, `no`, `on` and `off` are text,
/// not booleans, and so is `1_000` (YAML 1.1 read it as a number).
fn yaml_12() -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    options.underscored_numbers_as_strings = true;
    // `.nan`, `.inf` and `-.inf` reach the reader as text, which a float64 column reads.
    options.non_finite_float_policy = serde_saphyr::options::NonFiniteFloatPolicy::AsString;
    options
}

/// Whether `text` is YAML 1.2's spelling of a float that is not finite: `.nan`, `.inf`,
/// `-.inf`, `+.inf`, in lower case, capitalized or upper case.
pub fn is_non_finite(text: &str) -> bool {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    matches!(unsigned, ".inf" | ".Inf" | ".INF") || matches!(text, ".nan" | ".NaN" | ".NAN")
}

/// Like [`parse`], for fixtures: a fixture may hold hundreds of thousands of events, so the
/// node and event budgets are raised (alias expansion stays bounded).
pub fn parse_large<T: for<'de> Deserialize<'de>>(path: &str, text: &str) -> Result<T, Diagnostic> {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_events = 100_000_000;
    budget.max_nodes = 50_000_000;
    let mut options = yaml_12();
    options.budget = Some(budget);
    parse_with(path, text, options)
}

fn parse_with<T: for<'de> Deserialize<'de>>(
    path: &str,
    text: &str,
    options: serde_saphyr::Options,
) -> Result<T, Diagnostic> {
    if text.trim().is_empty()
        || text
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        return Err(
            Diagnostic::error(Code::FileEmpty, format!("{path} is empty"))
                .with_help("see docs/project-format.md for what this file holds"),
        );
    }
    serde_saphyr::from_str_with_options::<T>(text, options).map_err(|e| {
        let span = e.location().map(|l| {
            let start = offset_of(text, l.line() as usize, l.column() as usize);
            start..(start + 1).min(text.len()).max(start)
        });
        let at = span.as_ref().map_or(0, |s| s.start);
        let (code, help) = classify(innermost(&e));
        let (message, code, help) = match (innermost(&e), value_problem(innermost(&e), text, at)) {
            (_, Some((message, help))) => (message, Code::WrongShape, help),
            (serde_saphyr::Error::Budget { breach, .. }, None) => (over_budget(breach), code, help),
            (serde_saphyr::Error::MultipleDocuments { .. }, None) => (
                format!("{path} holds more than one YAML document"),
                code,
                "a file holds one document: remove the `---` line, or move what follows it into a file of its own".into(),
            ),
            _ => (clean_message(&e.without_snippet().to_string()), code, help),
        };
        // A missing field is about the whole mapping; the parser reports wherever it noticed
        // (a key of that mapping), so the span moves to the key that names the mapping.
        let span = if code == Code::MissingField {
            span.map(|s| mapping_of(text, s.start))
                .map(|start| start..(start + 1).min(text.len()).max(start))
        } else {
            span
        };
        Diagnostic::error(code, message)
            .with_span(span)
            .with_help(help)
    })
}

/// Why a file past one of the parser's limits is not read, in words (the parser's own
/// message is its internal record).
fn over_budget(breach: &serde_saphyr::budget::BudgetBreach) -> String {
    use serde_saphyr::budget::BudgetBreach as B;
    let why = match breach {
        B::Depth { .. } | B::InclusionDepth { .. } => "it nests values too deeply",
        B::Aliases { .. }
        | B::Anchors { .. }
        | B::RecordedAnchorEvents { .. }
        | B::RecordedAnchorBytes { .. }
        | B::AliasAnchorRatio { .. }
        | B::MergeKeys { .. } => "its aliases expand to too much",
        B::ScalarBytes { .. } | B::CommentBytes { .. } => "its text is too large",
        _ => "it holds too many values",
    };
    format!("the YAML is not read: {why}")
}

/// The error itself, out of the wrappers that add a snippet or an alias's position.
fn innermost(mut e: &serde_saphyr::Error) -> &serde_saphyr::Error {
    loop {
        match e {
            serde_saphyr::Error::WithSnippet { error, .. }
            | serde_saphyr::Error::AliasError { error, .. } => e = error,
            _ => return e,
        }
    }
}

/// Where the block mapping holding the key at `offset` is named: the key it is the value of
/// (`orders:` above `connector: kafka`), else its first key (a file's top level, or a
/// sequence item). A key in a flow mapping (`{ a: 1 }`) stays where it is.
fn mapping_of(text: &str, offset: usize) -> usize {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let column = offset - line_start;
    if !text[line_start..offset].trim().is_empty() {
        return offset;
    }
    // The column a line's key starts at, past its indentation and any `- ` markers.
    let key_column = |line: &str| {
        let mut rest = line.trim_start_matches(' ');
        while let Some(r) = rest.strip_prefix("- ") {
            rest = r.trim_start_matches(' ');
        }
        line.len() - rest.len()
    };
    let mut first = offset;
    let mut end = line_start;
    while end > 0 {
        let start = text[..end - 1].rfind('\n').map_or(0, |i| i + 1);
        let line = text[start..end - 1].trim_end_matches('\r');
        end = start;
        let content = line.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let at = key_column(line);
        if at > column {
            continue;
        }
        if at < column {
            // The parent key, if the mapping is its value.
            let parent = line.split(" #").next().unwrap_or(line).trim_end();
            if parent.ends_with(':') {
                return start + at;
            }
            return first;
        }
        first = start + at;
        if line.trim_start().starts_with("- ") {
            return first;
        }
    }
    first
}

/// The code of a parse error and what to do about it.
fn classify(e: &serde_saphyr::Error) -> (Code, String) {
    use serde_saphyr::Error as E;
    match e {
        E::SerdeUnknownField {
            field, expected, ..
        }
        | E::SerdeUnknownVariant {
            variant: field,
            expected,
            ..
        } => {
            let help = match did_you_mean(field, expected.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None if expected.is_empty() => {
                    "remove the field; unknown fields are refused".into()
                }
                None => format!("the known fields here are: {}", expected.join(", ")),
            };
            (Code::UnknownField, help)
        }
        E::DuplicateMappingKey { .. } => (
            Code::DuplicateKey,
            "each key may appear once; remove or rename the repeated one".into(),
        ),
        E::SerdeMissingField { field, .. } => (
            Code::MissingField,
            format!("add `{field}:`; it is required"),
        ),
        E::SerdeInvalidType { .. }
        | E::SerdeInvalidValue { .. }
        | E::SerdeInvalidLength { .. }
        | E::Unexpected { .. } => (
            Code::WrongShape,
            "this value has the wrong shape; see docs/project-format.md".into(),
        ),
        E::Budget { .. } => (
            Code::YamlSyntax,
            "write the values out rather than through aliases, and nest them less deeply".into(),
        ),
        _ => (
            Code::YamlSyntax,
            "fix the YAML at this position (indentation, a missing `:` or an unclosed bracket are the usual causes)".into(),
        ),
    }
}

/// A value of the wrong kind at byte `at` of `text`, in words with its help: an empty value
/// where text or a number belongs (`name:`), or text where a number or a boolean does
/// (`version: one`).
fn value_problem(e: &serde_saphyr::Error, text: &str, at: usize) -> Option<(String, String)> {
    use serde_saphyr::Error as E;
    let line_start = text[..at.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let through = text.get(line_start..(at + 1).min(text.len())).unwrap_or("");
    // A value that starts on the line below its key (`given:` then `  id: 1`) belongs to
    // the key that ends the line above.
    let before = text.get(line_start..at).unwrap_or("").trim();
    let through = if before.is_empty() || before == "-" {
        text[..line_start]
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .filter(|l| l.trim_end().ends_with(':'))
            .unwrap_or(through)
    } else {
        through
    };
    let key = through.rfind(':').and_then(|colon| {
        let key = through[..colon]
            .rsplit(|c: char| c.is_whitespace() || c == '{' || c == ',')
            .next()?
            .trim_matches(['"', '\'']);
        (!key.is_empty()).then_some(key)
    });
    // The parser points at an empty value's `:`.
    let value = text
        .get(at..)
        .unwrap_or("")
        .trim_start_matches(':')
        .split(['\n', '#', ',', '}', ']'])
        .next()
        .unwrap_or("")
        .trim();
    let expected = match e {
        E::NullIntoString { .. } => "text",
        E::InvalidScalar { ty, .. } if *ty == "bool" => "true or false",
        E::InvalidScalar { ty, .. } if ty.starts_with(['i', 'u']) => "a whole number",
        E::InvalidScalar { .. } => "a number",
        E::TaggedScalarCannotDeserializeIntoString { .. } => {
            return Some((
                "a tag (`!!...`) makes this value something other than text".into(),
                "remove the tag; quote the value to keep it as text".into(),
            ));
        }
        E::UnknownAnchor { .. } => {
            return Some((
                "this alias names no anchor defined before it".into(),
                "define the anchor with `&name` before the alias `*name`, or write the value out"
                    .into(),
            ));
        }
        E::Unexpected { expected, .. } => {
            let shape = match *expected {
                "sequence start" => "a list",
                "mapping start" | "empty mapping start" => "a mapping of keys and values",
                "string scalar" | "scalar" => "a single value",
                _ => return None,
            };
            let message = match key {
                Some(key) if value.is_empty() => format!("`{key}` has no value"),
                Some(key) => format!("`{key}` should hold {shape}"),
                None => format!("{shape} belongs here"),
            };
            let example = match shape {
                "a list" => ", as [a, b] or one `- item` per line",
                "a mapping of keys and values" => ", one `key: value` per line below it",
                _ => "",
            };
            let help = match key {
                Some(key) => format!("write {shape} after `{key}:`{example}"),
                None => format!("write {shape} here{example}"),
            };
            return Some((message, help));
        }
        _ => return None,
    };
    let help = match key {
        Some(key) => format!("write {expected} after `{key}:`"),
        None => format!("write {expected} here"),
    };
    let message = match (
        key,
        value.is_empty() || matches!(e, E::NullIntoString { .. }),
    ) {
        (Some(key), true) => format!("`{key}` has no value"),
        (None, true) => "a value is missing here".to_string(),
        (_, false) => format!("`{value}` is not {expected}"),
    };
    Some((message, help))
}

/// Strips serde-saphyr's `error: line N column M:` prefix and its advice about options.
fn clean_message(raw: &str) -> String {
    let mut m = raw.trim();
    m = m.strip_prefix("error: ").unwrap_or(m);
    if let Some(rest) = m.strip_prefix("line ")
        && let Some((_, after)) = rest.split_once(": ")
    {
        m = after;
    }
    let m = m.split(", set DuplicateKeyPolicy").next().unwrap_or(m);
    let m = m.lines().next().unwrap_or(m);
    let m = match m.rfind(" at line ") {
        Some(i) if m[i..].contains(", column ") => &m[..i],
        _ => m,
    };
    m.to_string()
}

/// A YAML value as written: scalars keep their source text so that numbers are typed
/// exactly (a decimal is never read through a float).
#[derive(Debug, Clone, PartialEq)]
pub enum YamlValue {
    /// `null`, `~` or an empty value.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as its source text (`0.1234`, `28`, `-5`).
    Number(String),
    /// A string, quoted or plain.
    String(String),
    /// A mapping, by key, each value with its position.
    Map(BTreeMap<String, Node>),
    /// A sequence, each item with its position.
    Seq(Vec<Node>),
}

/// A value with the byte range it is written at in its file (for an alias, where the alias
/// is). Both readers of a fixture make these: the YAML parser's values go through [`node`],
/// and the fast reader of fixtures (`fixture::fast`) writes them directly.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The value.
    pub value: YamlValue,
    /// Where it is written: a byte range of its file.
    pub span: Range<usize>,
}

impl YamlValue {
    /// A short description for error messages: `the number 0.1234`, `the string "x"`.
    pub fn describe(&self) -> String {
        match self {
            YamlValue::Null => "null".into(),
            YamlValue::Bool(b) => b.to_string(),
            YamlValue::Number(n) => n.clone(),
            YamlValue::String(s) => format!("{s:?}"),
            YamlValue::Map(_) => "a map".into(),
            YamlValue::Seq(_) => "a list".into(),
        }
    }
}

/// Any YAML value as the parser hands it over, with the parser's locations: read by
/// fields whose value is checked by hand, then made a [`Node`] by [`node`].
#[derive(Debug, Clone, PartialEq)]
pub enum Raw {
    /// `null`, `~` or an empty value.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number, as the parser formats it ([`node`] takes its text from the file).
    Number(String),
    /// A string.
    String(String),
    /// A mapping.
    Map(BTreeMap<String, Spanned<Raw>>),
    /// A sequence.
    Seq(Vec<Spanned<Raw>>),
}

/// Any YAML value: its schema accepts everything (the fields holding one are checked by
/// hand, against the project's own types).
impl schemars::JsonSchema for Raw {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AnyValue".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::Schema::default()
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Raw;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a YAML value")
            }
            fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
                Ok(Raw::String(v.into()))
            }
            fn visit_string<E>(self, v: String) -> Result<Raw, E> {
                Ok(Raw::String(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Raw, E> {
                Ok(Raw::Number(v.to_string()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Raw, E> {
                Ok(Raw::Number(v.to_string()))
            }
            fn visit_i128<E>(self, v: i128) -> Result<Raw, E> {
                Ok(Raw::Number(v.to_string()))
            }
            fn visit_u128<E>(self, v: u128) -> Result<Raw, E> {
                Ok(Raw::Number(v.to_string()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Raw, E> {
                // The exact text is recovered from the span by `node`.
                Ok(Raw::Number(format!("{v:?}")))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
                Ok(Raw::Bool(v))
            }
            fn visit_unit<E>(self) -> Result<Raw, E> {
                Ok(Raw::Null)
            }
            fn visit_none<E>(self) -> Result<Raw, E> {
                Ok(Raw::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
                Raw::deserialize(d)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Raw, A::Error> {
                let mut out = BTreeMap::new();
                while let Some((k, v)) = m.next_entry::<String, Spanned<Raw>>()? {
                    out.insert(k, v);
                }
                Ok(Raw::Map(out))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Raw, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = s.next_element::<Spanned<Raw>>()? {
                    out.push(v);
                }
                Ok(Raw::Seq(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// The parser's value `v` of the file `source` as a [`Node`]: its span where it is written,
/// and every number with the exact text at its span in `source`, so that
/// `12345678901234567890.123456789` is not the float serde saw. An alias's number is read
/// where its anchor defines it.
pub fn node(v: &Spanned<Raw>, source: &str) -> Node {
    let span = span_of(v, source);
    // The text where the value is defined (an alias's anchor), up to the end of a scalar.
    let defined = || {
        let at = &v.defined;
        let start = at.span().byte_offset().map_or(0, |o| o as usize);
        let len = at.span().byte_len().unwrap_or(0) as usize;
        source.get(start..start + len).unwrap_or("")
    };
    let value = match &v.value {
        Raw::Null => YamlValue::Null,
        Raw::Bool(b) => YamlValue::Bool(*b),
        // A number too large for a float (`1e400`) reaches the reader as `.inf`: it is the
        // number written, which a column then refuses in its own words.
        Raw::String(text) if matches!(text.as_str(), ".nan" | ".inf" | "-.inf") => {
            let raw = defined().trim();
            if !raw.is_empty() && !raw.starts_with(['\'', '"']) && !is_non_finite(raw) {
                YamlValue::Number(raw.to_string())
            } else {
                YamlValue::String(text.clone())
            }
        }
        Raw::String(text) => YamlValue::String(text.clone()),
        Raw::Number(n) => {
            let raw = defined()
                .split(['#', ',', '}', ']', '\n'])
                .next()
                .unwrap_or("")
                .trim();
            if raw.is_empty() {
                YamlValue::Number(n.clone())
            } else if raw
                .chars()
                .all(|c| c.is_ascii_digit() || "+-.eE".contains(c))
            {
                YamlValue::Number(raw.to_string())
            } else if raw.contains(['x', 'o', 'b', 'X', 'O', 'B']) && !raw.starts_with(['\'', '"'])
            {
                // `0x10`, `0o7`: numbers to YAML 1.2's core schema, text here; a fixture
                // says what it means in decimal.
                YamlValue::String(raw.to_string())
            } else {
                YamlValue::Number(n.clone())
            }
        }
        Raw::Map(m) => YamlValue::Map(
            m.iter()
                .map(|(k, x)| (k.clone(), node(x, source)))
                .collect(),
        ),
        Raw::Seq(s) => YamlValue::Seq(s.iter().map(|x| node(x, source)).collect()),
    };
    Node { value, span }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct M {
        materialized: Option<String>,
        key: Option<Vec<String>>,
    }

    #[test]
    fn a_missing_field_points_at_the_mapping_that_lacks_it() {
        let text = "# a comment\nmodel: m\ngiven: []\n";
        assert_eq!(mapping_of(text, text.find("given").unwrap()), 12);
        let text = "sources:\n  orders:\n    connector: kafka\n\n    topic: t\n";
        assert_eq!(
            mapping_of(text, text.find("topic").unwrap()),
            text.find("orders").unwrap()
        );
        let text = "given:\n  - a: 1\n    b: 2\n";
        assert_eq!(
            mapping_of(text, text.find("b:").unwrap()),
            text.find("a:").unwrap()
        );
        let text = "given:\n  - { a: 1, b: 2 }\n";
        let b = text.find("b:").unwrap();
        assert_eq!(mapping_of(text, b), b);
    }

    #[test]
    fn a_missing_field_names_the_field_and_its_mapping() {
        let text = "key: [a]\n";
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Required {
            materialized: String,
            key: Vec<String>,
        }
        let d = parse::<Required>("streamform.yml", text).unwrap_err();
        assert_eq!(d.message, "missing field `materialized`");
        assert_eq!(d.code, Code::MissingField);
        assert_eq!(
            d.help.as_deref(),
            Some("add `materialized:`; it is required")
        );
        assert_eq!(d.span, Some(0..1));
    }

    #[test]
    fn unknown_field_has_position_and_suggestion() {
        let text = "materialised: upsert\n";
        let d = parse::<M>("streamform.yml", text).unwrap_err();
        assert_eq!(
            d.message,
            "unknown field `materialised`, expected one of materialized, key"
        );
        assert_eq!(d.code, Code::UnknownField);
        assert_eq!(d.help.as_deref(), Some("did you mean `materialized`?"));
        assert_eq!(d.span, Some(0..1));
    }

    #[test]
    fn duplicate_key_is_refused() {
        let d = parse::<M>("x.yml", "key: [a]\nkey: [b]\n").unwrap_err();
        assert_eq!(d.message, "duplicate mapping key: key");
        assert_eq!(d.code, Code::DuplicateKey);
        assert_eq!(d.span.map(|s| s.start), Some(9));
    }

    #[test]
    fn numbers_keep_their_text() {
        let text = "a: 0.1234\nb: 12345678901234567890.123456789\nc: '10'\n";
        let v: Spanned<Raw> = serde_saphyr::from_str(text).unwrap();
        let YamlValue::Map(m) = node(&v, text).value else {
            panic!("map")
        };
        assert_eq!(m["a"].value, YamlValue::Number("0.1234".into()));
        assert_eq!(
            m["b"].value,
            YamlValue::Number("12345678901234567890.123456789".into())
        );
        assert_eq!(m["c"].value, YamlValue::String("10".into()));
    }
}
