//! `FOR SYSTEM_TIME AS OF`, Flink's temporal join (docs/joins.md, "Joins in time"), which
//! the SQL parser does not read: the clause is blanked before parsing (every offset stays
//! where it was), and read back from the text after the relation it follows.

use std::borrow::Cow;
use std::ops::Range;

/// What a relation is joined `AS OF`: a column of the probe side, `o.ordered_at`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AsOf {
    /// The qualifier written before the column (`o`), if any.
    pub qualifier: Option<String>,
    /// The column.
    pub column: String,
    /// Where the whole clause is, `FOR SYSTEM_TIME AS OF o.ordered_at`.
    pub span: Range<usize>,
}

const WORDS: [&str; 4] = ["FOR", "SYSTEM_TIME", "AS", "OF"];

/// The clause starting at `at` in `code` (the text in capitals with strings and comments
/// blanked), and where it ends: its four words, then a column, optionally qualified.
/// `None` when the words are not there; `Some(Err(end))` when they are and what follows
/// them is no column (it ends at `end`).
fn clause(text: &str, code: &str, at: usize) -> Option<Result<AsOf, usize>> {
    let mut i = at;
    for (n, word) in WORDS.iter().enumerate() {
        if n > 0 {
            let rest = &code[i..];
            let skipped = rest.len() - rest.trim_start().len();
            if skipped == 0 {
                return None;
            }
            i += skipped;
        }
        if !code[i..].starts_with(word) {
            return None;
        }
        i += word.len();
        if code[i..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
    }
    let rest = &code[i..];
    let start = i + rest.len() - rest.trim_start().len();
    // One or two identifiers joined by a dot, each plain or quoted (`"a"`, `` `a` ``).
    let mut parts: Vec<String> = Vec::new();
    let mut end = start;
    while let Some((part, next)) = identifier(text, end) {
        parts.push(part);
        end = next;
        if !text[end..].starts_with('.') {
            break;
        }
        end += 1;
    }
    let called = text[end..]
        .trim_start()
        .starts_with(['(', '-', '+', '*', '/', '%', '|', ':', '[', '.']);
    match (parts.as_slice(), called) {
        ([column], false) => Some(Ok(AsOf {
            qualifier: None,
            column: column.clone(),
            span: at..end,
        })),
        ([q, column], false) => Some(Ok(AsOf {
            qualifier: Some(q.clone()),
            column: column.clone(),
            span: at..end,
        })),
        // A call (`PROCTIME()`), an expression (`o.ts - INTERVAL '1' HOUR`) or a longer
        // path is no column.
        _ => Some(Err(end.max(at + "FOR SYSTEM_TIME AS OF".len()))),
    }
}

/// The identifier at `at` in `text` (plain, or quoted with `"` or a backtick) and where it
/// ends.
fn identifier(text: &str, at: usize) -> Option<(String, usize)> {
    let rest = &text[at..];
    match rest.chars().next()? {
        q @ ('"' | '`') => {
            let close = rest[1..].find(q)?;
            let name = &rest[1..1 + close];
            (!name.is_empty()).then(|| (name.to_string(), at + close + 2))
        }
        c if c.is_ascii_alphabetic() || c == '_' => {
            let len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            Some((rest[..len].to_string(), at + len))
        }
        _ => None,
    }
}

/// `text` with every `FOR SYSTEM_TIME AS OF <column>` blanked to spaces (one naming no
/// column is left as it is).
pub fn for_parsing(text: &str) -> Cow<'_, str> {
    let code = crate::window::code_only(text).to_ascii_uppercase();
    let mut out: Option<String> = None;
    for (at, _) in code.match_indices("FOR") {
        if code[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        // A clause naming no column is left for the parser to stop at, and refused there.
        let Some(Ok(as_of)) = clause(text, &code, at) else {
            continue;
        };
        let end = as_of.span.end;
        let out = out.get_or_insert_with(|| text.to_string());
        out.replace_range(at..end, &" ".repeat(end - at));
    }
    out.map_or(Cow::Borrowed(text), Cow::Owned)
}

/// Where every clause naming a column is, in the order written.
pub fn all(text: &str) -> Vec<Range<usize>> {
    let code = crate::window::code_only(text).to_ascii_uppercase();
    code.match_indices("FOR")
        .filter(|(at, _)| !code[..*at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
        .filter_map(|(at, _)| match clause(text, &code, at) {
            Some(Ok(as_of)) => Some(as_of.span),
            _ => None,
        })
        .collect()
}

/// The clause written right after the relation that ends at `end`, if one is: `Ok` with
/// what it names, or `Err` with its span when no column follows its words.
pub fn after(text: &str, end: usize) -> Option<Result<AsOf, Range<usize>>> {
    let code = crate::window::code_only(text).to_ascii_uppercase();
    let rest = code.get(end..)?;
    let at = end + rest.len() - rest.trim_start().len();
    clause(text, &code, at).map(|c| c.map_err(|e| at..e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clause_is_blanked_and_read_back_after_its_relation() {
        let text = "SELECT * FROM source('o') AS o JOIN source('r') for  System_Time as of o.t AS r ON o.k = r.k";
        let blanked = for_parsing(text);
        assert_eq!(blanked.len(), text.len());
        assert!(!blanked.to_ascii_uppercase().contains("SYSTEM_TIME"));
        assert!(blanked.contains("source('r')") && blanked.contains("AS r ON"));
        let end = text.find("source('r')").unwrap() + "source('r')".len();
        let as_of = after(text, end).unwrap().unwrap();
        assert_eq!(as_of.qualifier.as_deref(), Some("o"));
        assert_eq!(as_of.column, "t");
        assert_eq!(&text[as_of.span], "for  System_Time as of o.t");
    }

    #[test]
    fn a_clause_in_a_string_or_a_comment_or_a_longer_word_is_left_alone() {
        let text = "SELECT 'FOR SYSTEM_TIME AS OF x' AS a, fortune -- FOR SYSTEM_TIME AS OF y\nFROM source('o')";
        assert_eq!(for_parsing(text), text);
        assert!(after(text, text.len()).is_none());
    }

    #[test]
    fn an_expression_after_the_words_is_no_column() {
        let text = "SELECT * FROM source('r') FOR SYSTEM_TIME AS OF PROCTIME() AS r";
        let end = text.find("source('r')").unwrap() + "source('r')".len();
        let Some(Err(span)) = after(text, end) else {
            panic!("an error")
        };
        assert_eq!(&text[span], "FOR SYSTEM_TIME AS OF PROCTIME");
        assert_eq!(for_parsing(text), text, "left for the parser to refuse");
    }
}
