//! Window table functions in a model's FROM clause (docs/windows.md):
//! `FROM TABLE(TUMBLE(TABLE source('x'), DESCRIPTOR(ts), INTERVAL '1' MINUTE))`, the same over
//! `ref('m')`, HOP (slide, then size), CUMULATE (step, then size) and SESSION (the gap,
//! with the sessions' key in the table argument: `TABLE source('x') PARTITION BY page`).
//!
//! The parser reads a table argument (`TABLE source('x') PARTITION BY k`) nowhere, so
//! [`for_parsing`] blanks the `TABLE` keyword of the first argument and a PARTITION BY
//! after it before parsing (keeping every offset), and [`read`] reads the call that parses
//! then, and the PARTITION BY from the text as written: which windows, over which column, and
//! what it reads. Everything Flink 2.0 to 2.2 would run differently, or not at all, is
//! refused here, naming it.

use std::borrow::Cow;
use std::ops::Range;

use sqlparser::ast::{
    self as ast, Expr as SqlExpr, FunctionArg, FunctionArgExpr, FunctionArguments, Spanned,
};
use streamform_ir::WindowKind;

use crate::diagnostic::{Code, Diagnostic};
use crate::sql::byte_span;

/// A window table function as a model reads it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WindowRead {
    /// Which windows.
    pub kind: WindowKind,
    /// The column given to DESCRIPTOR.
    pub time: String,
    /// Where that column is written.
    pub time_span: Option<Range<usize>>,
    /// Where the whole call is written.
    pub span: Option<Range<usize>>,
    /// A SESSION's PARTITION BY columns, as written (empty without one).
    pub partition: Vec<String>,
    /// Where the PARTITION BY is written.
    pub partition_span: Option<Range<usize>>,
}

/// The most windows a HOP or CUMULATE may put one row in (size / slide or size / step).
pub const MOST_WINDOWS_PER_ROW: u64 = 10_000;

/// How to write a window aggregation, for the help of every refusal that needs it.
pub const WINDOW_FORM: &str = "FROM TABLE(TUMBLE(TABLE source('x'), DESCRIPTOR(ts), INTERVAL '1' MINUTE)) GROUP BY window_start, window_end, key";

/// The window function `name` is, in capitals.
pub fn window_name(name: &str) -> Option<&'static str> {
    ["TUMBLE", "HOP", "SESSION", "CUMULATE"]
        .into_iter()
        .find(|w| w.eq_ignore_ascii_case(name.trim()))
}

/// `text` with the `TABLE` of `(TABLE source(` and `(TABLE ref(` (any case and spacing)
/// blanked to spaces, so the call parses and every offset stays where it was.
pub fn for_parsing(text: &str) -> Cow<'_, str> {
    let upper = code_only(text).to_ascii_uppercase();
    let mut out: Option<String> = None;
    for (at, _) in upper.match_indices("TABLE") {
        let before = upper[..at].trim_end();
        let after = upper[at + 5..].trim_start();
        let word_end = upper[at + 5..].starts_with(|c: char| c.is_whitespace());
        let reads = ["SOURCE", "REF"].iter().any(|f| {
            after
                .strip_prefix(f)
                .is_some_and(|rest| rest.trim_start().starts_with('('))
        })
            // A plain name (a CTE's, say): read as the argument it is, and refused as one
            // that is not a source or a model.
            || after.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '"' || c == '`');
        if (before.ends_with('(') || before.ends_with("=>")) && word_end && reads {
            let out = out.get_or_insert_with(|| text.to_string());
            out.replace_range(at..at + 5, "     ");
            if let Some(partition) = partition_by(&upper, at + 5) {
                let blank = " ".repeat(partition.len());
                out.replace_range(partition, &blank);
            }
        }
    }
    out.map_or(Cow::Borrowed(text), Cow::Owned)
}

/// Where the `PARTITION BY ...` written after the table argument that starts at `from`
/// (`source('x') PARTITION BY k, DESCRIPTOR(ts)`) is, up to the comma before DESCRIPTOR:
/// `code` is the text in capitals with strings and comments blanked.
fn partition_by(code: &str, from: usize) -> Option<Range<usize>> {
    // The end of the `source(...)` call: its parenthesis closed.
    let open = from + code[from..].find('(')?;
    let mut depth = 0usize;
    let mut close = None;
    for (i, c) in code[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i + 1);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close?;
    let rest = &code[close..];
    let start = close + (rest.len() - rest.trim_start().len());
    let after = code[start..].strip_prefix("PARTITION")?;
    if !after.starts_with(char::is_whitespace) || !after.trim_start().starts_with("BY") {
        return None;
    }
    let descriptor = start + code[start..].find("DESCRIPTOR")?;
    let comma = start + code[start..descriptor].rfind(',')?;
    Some(start..comma)
}

/// The columns of `PARTITION BY k` or `PARTITION BY (k, v)` as written in `text` at `at`,
/// or what is wrong with it.
fn partition_columns(text: &str, at: &Range<usize>) -> Result<Vec<String>, ()> {
    let written = text[at.clone()].trim();
    let list = written
        .get(9..)
        .map(str::trim_start)
        .and_then(|r| r.get(2..))
        .ok_or(())?
        .trim();
    let list = match list.strip_prefix('(') {
        Some(inner) => inner.strip_suffix(')').ok_or(())?,
        None => list,
    };
    let mut columns = Vec::new();
    for part in list.split(',') {
        let part = part.trim();
        let quoted = ['`', '"']
            .into_iter()
            .find(|&q| part.len() >= 2 && part.starts_with(q) && part.ends_with(q));
        let name = match quoted {
            Some(_) => part[1..part.len() - 1].to_string(),
            None => {
                let plain = part.starts_with(|c: char| c.is_alphabetic() || c == '_')
                    && part.chars().all(|c| c.is_alphanumeric() || c == '_');
                if !plain {
                    return Err(());
                }
                part.to_ascii_lowercase()
            }
        };
        if name.is_empty() {
            return Err(());
        }
        columns.push(name);
    }
    Ok(columns)
}

/// `text` with string literals, quoted names and comments turned into spaces (byte for
/// byte, so offsets stay), so that only SQL itself is looked at.
pub(crate) fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to.min(bytes.len())] {
            // Keep multi-byte characters' bytes out of the way: any non-space is blanked.
            *b = b' ';
        }
    };
    while i < bytes.len() {
        match bytes[i] {
            q @ (b'\'' | b'"' | b'`') => {
                let mut j = i + 1;
                while j < bytes.len() {
                    if bytes[j] == q {
                        // A doubled quote stays inside the literal.
                        if bytes.get(j + 1) == Some(&q) {
                            j += 2;
                            continue;
                        }
                        break;
                    }
                    j += 1;
                }
                blank(&mut out, i, j + 1);
                i = j + 1;
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                let end = text[i..].find('\n').map_or(bytes.len(), |e| i + e);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |e| i + 2 + e + 2);
                blank(&mut out, i, end);
                i = end;
            }
            _ => i += 1,
        }
    }
    // Only ASCII bytes were written, over whole runs that started at ASCII quotes or
    // comment marks, so the result is valid UTF-8 wherever it was not blanked.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn refuse(text: &str, message: String, span: sqlparser::tokenizer::Span, help: &str) -> Diagnostic {
    Diagnostic::error(Code::UnsupportedSql, message)
        .with_span(byte_span(text, span))
        .with_help(help)
}

/// The duration an INTERVAL argument gives, in whole positive milliseconds.
fn duration(model: &str, text: &str, what: &str, e: &SqlExpr) -> Result<u64, Diagnostic> {
    let bad = |message: String, help: &str| {
        Diagnostic::error(Code::UnsupportedSql, format!("model `{model}`: {message}"))
            .with_span(byte_span(text, e.span()))
            .with_help(help)
    };
    let SqlExpr::Interval(i) = e else {
        return Err(bad(
            format!("the window's {what} is not an INTERVAL"),
            "give it as an INTERVAL literal: INTERVAL '1' MINUTE, INTERVAL '30' SECOND",
        ));
    };
    let interval = crate::interval::read(i).map_err(|r| {
        Diagnostic::error(
            Code::UnsupportedSql,
            format!("model `{model}`: {} is not supported", r.message),
        )
        .with_span(crate::sql::interval_span(text, i, e.span()))
        .with_help(if r.help == crate::interval::HELP {
            "a window's duration is a positive INTERVAL in SECOND (to the millisecond), MINUTE, HOUR or DAY: INTERVAL '30' SECOND, INTERVAL '1.5' SECOND, INTERVAL '90' MINUTE"
        } else {
            r.help
        })
    })?;
    if interval.months != 0 {
        return Err(bad(
            format!("a window {what} in months or years is not supported"),
            "Flink's windows take SECOND, MINUTE, HOUR or DAY; write a month as days, INTERVAL '30' DAY, if that is what you mean",
        ));
    }
    if interval.millis <= 0 {
        return Err(bad(
            format!("the window's {what} must be positive"),
            "give a positive duration: INTERVAL '1' MINUTE",
        ));
    }
    // Flink's code generation reads an interval of a day range below 1000 days.
    if interval.millis >= 1000 * 86_400_000 {
        return Err(bad(
            format!("the window's {what} is 1000 days or more"),
            "a window is shorter than 1000 days",
        ));
    }
    Ok(interval.millis as u64)
}

/// What a window call reads: `source` or `ref` (lowercase), that call's arguments and
/// where the call is written.
pub type WindowInput<'q> = (String, &'q [FunctionArg], sqlparser::tokenizer::Span);

/// Reads a window call in FROM: the call that reads the input (the first argument,
/// `source('x')` or `ref('m')`, after [`for_parsing`]) and the windows.
///
/// # Errors
/// A diagnostic for a PARTITION BY anywhere but a SESSION, named arguments, an OFFSET, a wrong
/// number of arguments, a time argument that is not `DESCRIPTOR(column)`, a duration that
/// is not a positive whole number of milliseconds in SECOND to DAY units, and a HOP or
/// CUMULATE whose size is not a multiple of its slide or step.
pub fn read<'q>(
    model: &str,
    text: &str,
    f: &'q ast::Function,
) -> Result<(WindowInput<'q>, WindowRead), Diagnostic> {
    let name = window_name(&f.name.to_string()).expect("a window function");
    let span = f.span();
    let FunctionArguments::List(list) = &f.args else {
        return Err(refuse(
            text,
            format!("model `{model}`: {name} needs its arguments"),
            span,
            WINDOW_FORM,
        ));
    };
    let mut args = Vec::with_capacity(list.args.len());
    for a in &list.args {
        match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => args.push(e),
            other => {
                return Err(refuse(
                    text,
                    format!("model `{model}`: {name} with named arguments is not supported yet"),
                    other.span(),
                    "write the arguments in order: the table, DESCRIPTOR(column), then the durations",
                ));
            }
        }
    }
    let durations = match name {
        "TUMBLE" => ["size", "", ""],
        "SESSION" => ["gap", "", ""],
        "HOP" => ["slide", "size", ""],
        _ => ["step", "size", ""],
    };
    let wanted = 2 + durations.iter().filter(|d| !d.is_empty()).count();
    if args.len() == wanted + 1 && name != "SESSION" {
        return Err(refuse(
            text,
            format!("model `{model}`: a window with an OFFSET is not supported"),
            args[wanted].span(),
            "remove the offset: Flink 2.0 to 2.2 lose whole windows that have one (FLINK-36664); windows start on multiples of their size from the epoch",
        ));
    }
    let signature = match name {
        "TUMBLE" => "TUMBLE(TABLE source('x'), DESCRIPTOR(ts), size)",
        "HOP" => "HOP(TABLE source('x'), DESCRIPTOR(ts), slide, size)",
        "SESSION" => "SESSION(TABLE source('x') PARTITION BY key, DESCRIPTOR(ts), gap)",
        _ => "CUMULATE(TABLE source('x'), DESCRIPTOR(ts), step, size)",
    };
    if args.len() != wanted {
        return Err(refuse(
            text,
            format!(
                "model `{model}`: {name} takes {wanted} arguments, this call has {}",
                args.len()
            ),
            span,
            signature,
        ));
    }
    let time = match args[1] {
        SqlExpr::Function(d) if d.name.to_string().eq_ignore_ascii_case("DESCRIPTOR") => {
            match &d.args {
                FunctionArguments::List(l) => match l.args.as_slice() {
                    [FunctionArg::Unnamed(FunctionArgExpr::Expr(SqlExpr::Identifier(id)))] => {
                        Some((id.value.clone(), byte_span(text, id.span)))
                    }
                    _ => None,
                },
                _ => None,
            }
        }
        _ => None,
    };
    let Some((time, time_span)) = time else {
        return Err(refuse(
            text,
            format!("model `{model}`: {name}'s second argument must be DESCRIPTOR(column)"),
            args[1].span(),
            "name the input's event-time column in it, as in DESCRIPTOR(ts)",
        ));
    };
    let (partition, partition_span) = partition(model, text, name, args[0], args[1])?;
    let first = duration(model, text, durations[0], args[2])?;
    let kind = match name {
        "TUMBLE" => WindowKind::Tumble { size: first },
        "SESSION" => WindowKind::Session { gap: first },
        _ => {
            let size = duration(model, text, "size", args[3])?;
            if size % first != 0 {
                let rule = if name == "HOP" {
                    format!(
                        "HOP table function based aggregate requires size must be an integral multiple of slide, but got size {size} ms and slide {first} ms"
                    )
                } else {
                    format!(
                        "CUMULATE table function based aggregate requires maxSize must be an integral multiple of step, but got maxSize {size} ms and step {first} ms"
                    )
                };
                let mut refusal = refuse(
                    text,
                    format!(
                        "model `{model}`: {name}'s size must be a multiple of its {}; Flink refuses it: {rule}",
                        durations[0]
                    ),
                    args[3].span(),
                    &if first > size && first % size == 0 {
                        // Most likely the two written the other way round.
                        format!(
                            "the {} comes first, then the size: {name}(..., {}, {})",
                            durations[0], args[3], args[2]
                        )
                    } else if name == "HOP" {
                        "pick a size that is a whole number of slides: HOP(..., INTERVAL '1' MINUTE, INTERVAL '5' MINUTE)".to_string()
                    } else {
                        "pick a size that is a whole number of steps: CUMULATE(..., INTERVAL '1' MINUTE, INTERVAL '1' HOUR)".to_string()
                    },
                );
                // The parser's span of an INTERVAL covers its value only.
                if let SqlExpr::Interval(i) = args[3] {
                    refusal.span = crate::sql::interval_span(text, i, args[3].span());
                }
                return Err(refusal);
            }
            // Flink counts a HOP's or CUMULATE's windows per row in a 32-bit integer, and the
            // simulator keeps a row's every window: more than this is refused.
            if size / first > MOST_WINDOWS_PER_ROW {
                return Err(refuse(
                    text,
                    format!(
                        "model `{model}`: {name} puts each row in {} windows, more than {MOST_WINDOWS_PER_ROW}",
                        size / first
                    ),
                    args[2].span(),
                    if name == "HOP" {
                        "use a longer slide or a shorter size: each row counts in size / slide windows"
                    } else {
                        "use a longer step or a shorter size: each row counts in up to size / step windows"
                    },
                ));
            }
            if name == "HOP" {
                WindowKind::Hop { slide: first, size }
            } else {
                WindowKind::Cumulate { step: first, size }
            }
        }
    };
    let read_args = match args[0] {
        SqlExpr::Function(call)
            if ["source", "ref"]
                .iter()
                .any(|k| call.name.to_string().eq_ignore_ascii_case(k)) =>
        {
            match &call.args {
                FunctionArguments::List(l) => Some((
                    call.name.to_string().to_ascii_lowercase(),
                    l.args.as_slice(),
                    call.span(),
                )),
                _ => None,
            }
        }
        _ => None,
    };
    let Some(read_args) = read_args else {
        return Err(refuse(
            text,
            format!(
                "model `{model}`: {name} reads `{}`, not a source or a model",
                args[0]
            ),
            args[0].span(),
            "give the window its input as TABLE source('<name>') or TABLE ref('<model>'); a window over a CTE or a subquery is not supported yet, so put that step in a model of its own",
        ));
    };
    Ok((
        read_args,
        WindowRead {
            kind,
            time,
            time_span,
            span: byte_span(text, span),
            partition,
            partition_span,
        },
    ))
}

/// The PARTITION BY written between a window's table argument and its DESCRIPTOR (blanked
/// for parsing by [`for_parsing`]): a SESSION's key columns, refused on any other window.
fn partition(
    model: &str,
    text: &str,
    name: &str,
    table: &SqlExpr,
    descriptor: &SqlExpr,
) -> Result<(Vec<String>, Option<Range<usize>>), Diagnostic> {
    let (Some(after), Some(before)) = (
        byte_span(text, table.span()),
        byte_span(text, descriptor.span()),
    ) else {
        return Ok((Vec::new(), None));
    };
    let between = &text[after.end..before.start.max(after.end)];
    let Some(at) = code_only(between).to_ascii_uppercase().find("PARTITION") else {
        return Ok((Vec::new(), None));
    };
    let end = between.rfind(',').unwrap_or(between.len());
    let written = after.end + at..after.end + end;
    let span = Some(written.clone());
    let bad = |message: String, help: &str| {
        Diagnostic::error(Code::UnsupportedSql, format!("model `{model}`: {message}"))
            .with_span(span.clone())
            .with_help(help)
    };
    if name != "SESSION" {
        return Err(bad(
            format!("{name} takes no PARTITION BY"),
            "only a SESSION window is partitioned: its sessions are kept per key; remove the PARTITION BY and group by the key instead",
        ));
    }
    let columns = partition_columns(text, &written).map_err(|()| {
        bad(
            format!(
                "cannot read `{}` as the SESSION's key",
                text[written.clone()].trim()
            ),
            "name the key's columns: PARTITION BY page, or PARTITION BY (page, country)",
        )
    })?;
    Ok((columns, span))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_keyword_of_a_window_argument_is_blanked_in_place() {
        let sql =
            "SELECT * FROM TABLE(TUMBLE(table  source('x'), DESCRIPTOR(t), INTERVAL '1' MINUTE))";
        let out = for_parsing(sql);
        assert_eq!(out.len(), sql.len());
        assert!(out.contains("TUMBLE(       source('x')"));
        // The outer TABLE( stays, and so does TABLE anywhere else.
        assert!(out.contains("FROM TABLE(TUMBLE"));
        let plain = "SELECT 'TABLE source(' FROM source('x')";
        assert_eq!(for_parsing(plain), plain);
        // Inside a string it is data, and a comment between the parenthesis and TABLE is
        // skipped.
        let quoted = "SELECT '(TABLE source(' AS tag FROM source('x')";
        assert_eq!(for_parsing(quoted), quoted);
        let commented =
            "FROM TABLE(TUMBLE( /* c */ TABLE source('x'), DESCRIPTOR(t), INTERVAL '1' MINUTE))";
        assert!(for_parsing(commented).contains("/* c */       source('x')"));
    }
}
