//! The string functions that search and cut (docs/sql.md, "Strings"): REPLACE, POSITION,
//! SPLIT_INDEX, and the regular expressions REGEXP, REGEXP_EXTRACT and REGEXP_REPLACE,
//! each as Flink's runtime computes it (Java's `String.replace`, commons-lang's
//! `splitByWholeSeparatorPreserveAllTokens`, `java.util.regex`). A pattern is read into
//! the Rust pattern that matches as Java's does by `streamform_ir::java_regex`; where the
//! simulator cannot promise Flink's result (a pattern outside that common part, Java's `$`
//! before a final line break), the run stops and says so rather than guess.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::thread::LocalKey;

use streamform_ir::date_format::{self, DatePattern, Parsed, TimestampParser};
use streamform_ir::java_regex::{self, JavaRegex};
use streamform_ir::value::ArithError;
use streamform_ir::{Func, Value};

use crate::eval::EvalError;

/// `REPLACE(s, search, replacement)`: Java's `String.replace`. An empty `search` puts the
/// replacement between every two UTF-16 units, which splits a character outside the Basic
/// Multilingual Plane in Java: the simulator stops there.
pub(crate) fn replace(s: &str, search: &str, replacement: &str) -> Result<Value, EvalError> {
    if search.is_empty() && s.chars().any(|c| u32::from(c) > 0xFFFF) {
        return Err(EvalError::Unfollowed(
            "REPLACE with an empty search string over a character outside the Basic Multilingual Plane, which Flink splits in two; the simulator cannot promise Flink's result".into(),
        ));
    }
    Ok(Value::String(s.replace(search, replacement)))
}

/// `POSITION(seek IN s)`: the 1-based character position of the first `seek`, 0 without
/// one, 1 for an empty `seek`.
pub(crate) fn position(seek: &str, s: &str) -> Value {
    let at = s.find(seek).map_or(0, |byte| s[..byte].chars().count() + 1);
    Value::Int32(i32::try_from(at).unwrap_or(i32::MAX))
}

/// `SPLIT_INDEX(s, separator, index)`: the `index`-th piece (from 0) of `s` cut at every
/// `separator`, empty pieces kept; null for a negative index, one past the last piece, or
/// an empty `s` (which has no piece in Flink). An empty separator splits on whitespace in
/// Flink, by Java's own rule of what is whitespace: the simulator stops there.
pub(crate) fn split_index(s: &str, separator: &str, index: i64) -> Result<Value, EvalError> {
    if separator.is_empty() {
        return Err(EvalError::Unfollowed(
            "SPLIT_INDEX with an empty separator, which Flink reads as splitting on whitespace by Java's rule; the simulator cannot promise Flink's result".into(),
        ));
    }
    if s.is_empty() {
        return Ok(Value::Null);
    }
    Ok(usize::try_from(index)
        .ok()
        .and_then(|i| s.split(separator).nth(i))
        .map_or(Value::Null, |piece| Value::String(piece.to_string())))
}

/// A pattern read and compiled, or why the simulator cannot run it.
type Compiled = Result<Rc<(regex::Regex, JavaRegex)>, String>;

thread_local! {
    /// The patterns met so far, by their Java text: a pattern is usually a literal, read
    /// once per run.
    static PATTERNS: RefCell<HashMap<String, Compiled>> = RefCell::new(HashMap::new());
    /// The date patterns met so far (DATE_FORMAT, TO_TIMESTAMP), likewise.
    static DATE_PATTERNS: RefCell<HashMap<String, DatePatterns>> = RefCell::new(HashMap::new());
}

/// A date pattern read, with its parser for TO_TIMESTAMP, or why each is refused.
type DatePatterns = Rc<(Result<DatePattern, String>, Result<TimestampParser, String>)>;

/// What `make` gives for `key`, remembered in `cache` (emptied past 1024 patterns, which
/// only patterns read from a column reach).
fn remembered<T: Clone>(
    cache: &'static LocalKey<RefCell<HashMap<String, T>>>,
    key: &str,
    make: impl FnOnce() -> T,
) -> T {
    cache.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(c) = cache.get(key) {
            return c.clone();
        }
        let c = make();
        if cache.len() >= 1024 {
            cache.clear();
        }
        cache.insert(key.to_string(), c.clone());
        c
    })
}

/// The compiled form of the Java pattern `pattern`.
fn compiled(pattern: &str) -> Compiled {
    remembered(&PATTERNS, pattern, || {
        java_regex::translate(pattern)
            .map_err(|r| format!("the pattern '{pattern}' uses {}, which Java and the simulator read differently", r.0))
            .and_then(|j| {
                regex::Regex::new(&j.rust)
                    .map(|re| Rc::new((re, j)))
                    .map_err(|e| format!("the pattern '{pattern}' does not compile: {e}"))
            })
    })
}

/// The date pattern `pattern` read, and its TO_TIMESTAMP parser.
fn date_patterns(pattern: &str) -> DatePatterns {
    remembered(&DATE_PATTERNS, pattern, || {
        let read = date_format::read(pattern);
        let parser = read
            .as_ref()
            .map_err(Clone::clone)
            .and_then(DatePattern::parser);
        Rc::new((read, parser))
    })
}

/// `DATE_FORMAT(t, pattern)` of the timestamp `ms`.
pub(crate) fn date_format(ms: i64, pattern: &str) -> Result<Value, EvalError> {
    let p = date_patterns(pattern);
    let read = p.0.as_ref().map_err(|what| {
        EvalError::Unfollowed(format!(
            "DATE_FORMAT: the pattern '{pattern}' uses {what}, which Flink's Java formatter and the simulator print differently (or Java refuses, failing the job)"
        ))
    })?;
    Ok(Value::String(read.format(ms).ok_or(ArithError::TimeRange)?))
}

/// `TO_TIMESTAMP(s, pattern)`: `s` read with the pattern (docs/sql.md, "Reading
/// timestamps"), null where nothing reads it.
pub(crate) fn to_timestamp(s: &str, pattern: &str) -> Result<Value, EvalError> {
    let p = date_patterns(pattern);
    let parser = p.1.as_ref().map_err(|what| {
        EvalError::Unfollowed(format!(
            "TO_TIMESTAMP: the pattern '{pattern}' uses {what}, which the simulator does not read as Flink's Java parser does"
        ))
    })?;
    match parser.parse(s) {
        Parsed::Time(ms) => Ok(Value::Timestamp(ms)),
        Parsed::Null => Ok(Value::Null),
        Parsed::Unfollowed(why) => Err(EvalError::Unfollowed(format!(
            "TO_TIMESTAMP('{s}', '{pattern}') reads {why}, which the simulator does not follow"
        ))),
    }
}

/// The compiled pattern, ready to match `s` as Java would.
fn matcher(func: Func, pattern: &str, s: &str) -> Result<Rc<(regex::Regex, JavaRegex)>, EvalError> {
    let c =
        compiled(pattern).map_err(|m| EvalError::Unfollowed(format!("{}: {m}", func.name())))?;
    if c.1.dollar && java_regex::ends_with_line_terminator(s) {
        return Err(EvalError::Unfollowed(format!(
            "{}: the pattern '{pattern}' has a `$`, which Java also matches before the line break that ends this string; the simulator cannot promise Flink's result",
            func.name()
        )));
    }
    Ok(c)
}

/// `REGEXP(s, pattern)`: whether the pattern matches somewhere in `s`; false for an empty
/// pattern, as Flink has it.
pub(crate) fn regexp(s: &str, pattern: &str) -> Result<Value, EvalError> {
    if pattern.is_empty() {
        return Ok(Value::Boolean(false));
    }
    let m = matcher(Func::Regexp, pattern, s)?;
    Ok(Value::Boolean(m.0.is_match(s)))
}

/// `REGEXP_EXTRACT(s, pattern, group)`: the group of the first match; null without a
/// match, for a group the pattern does not have, and for one that took no part.
pub(crate) fn regexp_extract(s: &str, pattern: &str, group: i64) -> Result<Value, EvalError> {
    let m = matcher(Func::RegexpExtract, pattern, s)?;
    let Some(caps) = m.0.captures(s) else {
        return Ok(Value::Null);
    };
    Ok(usize::try_from(group)
        .ok()
        .and_then(|g| caps.get(g))
        .map_or(Value::Null, |g| Value::String(g.as_str().to_string())))
}

/// `REGEXP_REPLACE(s, pattern, replacement)`: every match replaced by the replacement,
/// taken literally. A pattern that can match the empty string is not run: Java steps past
/// an empty match one UTF-16 unit at a time, which splits a character outside the Basic
/// Multilingual Plane.
pub(crate) fn regexp_replace(
    s: &str,
    pattern: &str,
    replacement: &str,
) -> Result<Value, EvalError> {
    let m = matcher(Func::RegexpReplace, pattern, s)?;
    if m.1.matches_empty {
        return Err(EvalError::Unfollowed(format!(
            "REGEXP_REPLACE: the pattern '{pattern}' can match an empty string, where Flink's replacement steps through the string in UTF-16 units; the simulator cannot promise Flink's result"
        )));
    }
    Ok(Value::String(
        m.0.replace_all(s, regex::NoExpand(replacement))
            .into_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(v: Result<Value, EvalError>) -> Option<String> {
        match v.unwrap() {
            Value::String(s) => Some(s),
            Value::Null => None,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn split_index_keeps_empty_pieces_and_an_empty_string_has_none() {
        let piece = |s: &str, sep: &str, i: i64| string(split_index(s, sep, i));
        assert_eq!(piece("a,,b", ",", 1).as_deref(), Some(""));
        assert_eq!(piece("a,,b", ",", 2).as_deref(), Some("b"));
        assert_eq!(piece("a,", ",", 1).as_deref(), Some(""));
        assert_eq!(piece("aaa", "aa", 1).as_deref(), Some("a"));
        assert_eq!(piece("a,b", ",", 2), None);
        assert_eq!(piece("a,b", ",", -1), None);
        assert_eq!(piece("", ",", 0), None);
        assert!(split_index("a b", "", 0).is_err());
    }

    #[test]
    fn position_counts_characters_from_one() {
        assert_eq!(position("c", "abc"), Value::Int32(3));
        assert_eq!(position("é", "aéé"), Value::Int32(2));
        assert_eq!(position("x", "abc"), Value::Int32(0));
        assert_eq!(position("", "abc"), Value::Int32(1));
        assert_eq!(position("", ""), Value::Int32(1));
    }

    #[test]
    fn regular_expressions_follow_java() {
        assert_eq!(
            string(regexp_extract("order-42-x", r"(\d+)", 1)).as_deref(),
            Some("42")
        );
        assert_eq!(string(regexp_extract("abc", r"(\d+)", 1)), None);
        assert_eq!(
            string(regexp_extract("a1", r"(\d)", 2)),
            None,
            "no such group"
        );
        assert_eq!(
            string(regexp_extract("a", r"(b)?a", 1)),
            None,
            "took no part"
        );
        assert_eq!(
            string(regexp_replace("a1b22", r"\d+", "$1")).as_deref(),
            Some("a$1b$1"),
            "the replacement is literal"
        );
        assert!(regexp_replace("ab", "x*", "-").is_err());
        assert_eq!(regexp("abc", "").unwrap(), Value::Boolean(false));
        assert_eq!(regexp("abc", "^b").unwrap(), Value::Boolean(false));
        assert!(regexp("ab\n", "b$").is_err());
        assert_eq!(regexp("ab", "b$").unwrap(), Value::Boolean(true));
        assert!(regexp("ab", "(?i)B").is_err());
    }

    #[test]
    fn replace_is_javas() {
        assert_eq!(string(replace("a-b-c", "-", "+")).as_deref(), Some("a+b+c"));
        assert_eq!(string(replace("ab", "", "-")).as_deref(), Some("-a-b-"));
        assert!(replace("a😀", "", "-").is_err());
    }
}
