//! The SQL frontend's first half: parse one model file, refuse what is outside the supported
//! surface (naming the construct and pointing at it), and find what the model reads.
//!
//! See docs/sql.md (the supported surface) and docs/concepts.md, "Model" (what `check`
//! refuses in what a model reads). Planning and lowering are in `lower`.

use std::ops::Range;

use sqlparser::ast::{
    self as ast, Expr as SqlExpr, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr,
    Query, SelectItem, SetExpr, Spanned, Statement, TableFactor, Value as SqlValue,
};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;
use streamform_ir::Input;

use crate::diagnostic::{Code, Diagnostic, offset_of};

/// Byte range of an sqlparser span in `text`, or `None` when the span is empty.
pub fn byte_span(text: &str, span: sqlparser::tokenizer::Span) -> Option<Range<usize>> {
    if span.start.line == 0 {
        return None;
    }
    let start = offset_of(text, span.start.line as usize, span.start.column as usize);
    let end = if span.end.line == 0 {
        start
    } else {
        offset_of(text, span.end.line as usize, span.end.column as usize)
    };
    let end = closing_parentheses(text, start, end);
    Some(start..end.max(start + 1).min(text.len().max(start + 1)))
}

/// `end` moved past the `)`s that close what `text[start..end]` opens: the parser's span of
/// a call stops at its last argument (`sum(a` for `sum(a)`).
fn closing_parentheses(text: &str, start: usize, end: usize) -> usize {
    let Some(inside) = text.get(start..end) else {
        return end;
    };
    let mut open = 0usize;
    let mut quoted = false;
    for c in inside.chars() {
        match c {
            '\'' => quoted = !quoted,
            '(' if !quoted => open += 1,
            ')' if !quoted => open = open.saturating_sub(1),
            _ => {}
        }
    }
    let mut end = end;
    while open > 0 {
        let rest = &text[end..];
        let skipped = rest.len() - rest.trim_start().len();
        if !rest[skipped..].starts_with(')') {
            break;
        }
        end += skipped + 1;
        open -= 1;
    }
    end
}

/// The whole call `keyword(...)` around `inner`, a range inside its parentheses (the
/// nearest such call before it); `inner` when there is none.
fn call_span(text: &str, keyword: &str, inner: Range<usize>) -> Range<usize> {
    let before = text[..inner.start].to_ascii_lowercase();
    let keyword = keyword.to_ascii_lowercase();
    before
        .rmatch_indices(&keyword)
        .map(|(start, _)| start..through_parenthesis(text, start + keyword.len()))
        .find(|call| call.end >= inner.end && call.end > call.start + keyword.len())
        .unwrap_or(inner)
}

/// The INTERVAL literal `e` is, parentheses aside.
fn as_interval(e: &SqlExpr) -> Option<&ast::Interval> {
    match e {
        SqlExpr::Interval(i) => Some(i),
        SqlExpr::Nested(inner) => as_interval(inner),
        _ => None,
    }
}

/// Where an INTERVAL literal is, from the keyword through its units: the parser's span
/// covers only the value.
pub(crate) fn interval_span(
    text: &str,
    i: &ast::Interval,
    span: sqlparser::tokenizer::Span,
) -> Option<Range<usize>> {
    let value = byte_span(text, span)?;
    let before = text[..value.start].to_ascii_lowercase();
    let start = before
        .rfind("interval")
        .filter(|&k| before[k + "interval".len()..].trim().is_empty())
        .unwrap_or(value.start);
    // The words after the value: a unit with its precision, and `TO` and a unit.
    let words = if i.last_field.is_some() { 3 } else { 1 };
    let mut end = value.end;
    for _ in 0..words {
        let rest = &text[end..];
        let word = rest.trim_start();
        let len = word
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(word.len());
        if len == 0 {
            break;
        }
        end += rest.len() - word.len() + len;
        let after = &text[end..];
        if after.trim_start().starts_with('(') {
            end = through_parenthesis(text, end);
        }
    }
    Some(start..end)
}

/// The end of the parenthesized list that opens at or after `from` (past its closing
/// parenthesis), or `from` when there is none: `COUNT(DISTINCT *)` read from `COUNT`.
fn through_parenthesis(text: &str, from: usize) -> usize {
    let rest = &text[from..];
    let Some(open) = rest.find('(') else {
        return from;
    };
    if !rest[..open].trim().is_empty() {
        return from;
    }
    let mut depth = 0;
    for (i, c) in rest[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 1 => return from + open + i + 1,
            ')' => depth -= 1,
            _ => {}
        }
    }
    from
}

/// The result of parsing one model file: the single query, or the diagnostics that stop it.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedModel {
    /// The SELECT; `None` when the file is empty, not SQL, or not exactly one SELECT.
    pub query: Option<Box<Query>>,
    /// Why `query` is `None`; empty otherwise.
    pub diagnostics: Vec<Diagnostic>,
}

/// The most operators and list items a model may hold. Planning walks an expression
/// recursively, so one of tens of thousands of operators would exhaust the stack (an
/// `IN` list becomes a chain of `OR`s, one per value), and its cost grows faster than its
/// size (so does a select list's); a thousand is far beyond what a model written by hand
/// holds.
pub const MOST_OPERATORS: usize = 1_000;

/// The deepest a model may nest parentheses and CASE expressions. Past the parser's own
/// recursion limit (50), some forms (`CAST(CAST(...))`, `EXTRACT`, `SUBSTRING ... FROM`)
/// send it retrying alternatives level by level, which never ends; a model written by hand
/// nests a few levels.
pub const DEEPEST_NESTING: usize = 32;

/// The most expressions a model may hold once the constructs that repeat an argument are
/// written out: `COALESCE` and `NULLIF` test a value and then return it, and `IN`,
/// `BETWEEN` and `CASE x WHEN` compare `x` once per value. Each level of nesting multiplies
/// the size, so twenty nested `NULLIF`s in a few hundred bytes stand for a million
/// expressions; a model written by hand stays far below this.
pub const MOST_EXPANDED: u64 = 10_000;

/// The size of `e` once written out as the simulator and Flink evaluate it, counted in
/// expressions: a construct that repeats an argument counts it as often as it is repeated.
/// Counted bottom-up in one walk, so the count itself costs the text's size.
struct Expanded {
    /// The sizes of the children seen so far, one list per expression being walked.
    children: Vec<Vec<u64>>,
    /// The sum over the model's outermost expressions.
    total: u64,
}

impl Expanded {
    /// The size of `e` from its children's sizes, in the order they are walked.
    fn size(e: &SqlExpr, kids: &[u64]) -> u64 {
        let sum = |k: &[u64]| k.iter().fold(0u64, |a, b| a.saturating_add(*b));
        let twice = |k: u64| k.saturating_mul(2);
        let plain = 1u64.saturating_add(sum(kids));
        match e {
            // CASE WHEN a = b THEN NULL ELSE a END
            SqlExpr::Function(f)
                if kids.len() == 2 && f.name.to_string().eq_ignore_ascii_case("nullif") =>
            {
                twice(kids[0]).saturating_add(kids[1]).saturating_add(3)
            }
            // CASE WHEN a IS NOT NULL THEN a ... ELSE last END
            SqlExpr::Function(f)
                if !kids.is_empty() && f.name.to_string().eq_ignore_ascii_case("coalesce") =>
            {
                let (last, first) = kids.split_last().expect("not empty");
                twice(sum(first))
                    .saturating_add(*last)
                    .saturating_add(kids.len() as u64)
            }
            // x = a OR x = b ...
            SqlExpr::InList { list, .. } if kids.len() == list.len() + 1 => kids[0]
                .saturating_mul(list.len() as u64)
                .saturating_add(sum(&kids[1..]))
                .saturating_add(2 * list.len() as u64),
            // x >= low AND x <= high
            SqlExpr::Between { .. } if kids.len() == 3 => twice(kids[0])
                .saturating_add(sum(&kids[1..]))
                .saturating_add(4),
            // CASE WHEN x = v THEN ... per branch
            SqlExpr::Case {
                operand: Some(_),
                conditions,
                ..
            } if !kids.is_empty() => kids[0]
                .saturating_mul(conditions.len() as u64)
                .saturating_add(sum(&kids[1..]))
                .saturating_add(1 + conditions.len() as u64),
            _ => plain,
        }
    }
}

impl ast::Visitor for Expanded {
    /// The smallest expression past [`MOST_EXPANDED`], or the outermost one that takes the
    /// model's total past it.
    type Break = sqlparser::tokenizer::Span;

    fn pre_visit_expr(&mut self, _: &SqlExpr) -> std::ops::ControlFlow<Self::Break> {
        self.children.push(Vec::new());
        std::ops::ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &SqlExpr) -> std::ops::ControlFlow<Self::Break> {
        let kids = self.children.pop().unwrap_or_default();
        let size = Self::size(e, &kids);
        match self.children.last_mut() {
            Some(parent) => parent.push(size),
            None => self.total = self.total.saturating_add(size),
        }
        if size > MOST_EXPANDED || self.total > MOST_EXPANDED {
            return std::ops::ControlFlow::Break(e.span());
        }
        std::ops::ControlFlow::Continue(())
    }
}

/// Where `query`, read from `text`, passes [`MOST_EXPANDED`], if it does.
fn past_expansion(text: &str, query: &Query) -> Option<Range<usize>> {
    let mut walk = Expanded {
        children: Vec::new(),
        total: 0,
    };
    let span = ast::Visit::visit(query, &mut walk).break_value()?;
    // `byte_span` carries a call through its closing parenthesis.
    Some(byte_span(text, span).unwrap_or(0..text.len()))
}

/// What one pass over a model's tokens finds before it is parsed.
enum Limit {
    /// More than [`MOST_OPERATORS`] operators and list items.
    Operators,
    /// Parentheses, CASE or prefix operators (`NOT`, a sign) nested more than
    /// [`DEEPEST_NESTING`] levels.
    Nesting,
    /// A number run into a name (`1_000`, `10abc`, `1e`): the parser reads the name as the
    /// column's alias.
    GluedNumber,
}

/// The first limit `text` passes, and the token where it does, counted on the tokens in one
/// flat pass (so the count itself cannot overflow the stack): operators are arithmetic and
/// comparison operators, `||`, `AND`, `OR`, `NOT`, `WHEN` and the commas between list
/// items; nesting counts parentheses, brackets and CASE ... END, and a run of prefix
/// operators (`NOT NOT x`, `- - x`) as deep as it is long. Text that does not tokenize is
/// left to the parser, which reports it.
fn past_limits(text: &str) -> Option<(Limit, Range<usize>)> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, Tokenizer};
    let tokens = Tokenizer::new(&GenericDialect {}, text)
        .tokenize_with_location()
        .ok()?;
    let (mut operators, mut depth, mut prefixes) = (0usize, 0usize, 0usize);
    for (i, t) in tokens.iter().enumerate() {
        if let Token::Number(..) = &t.token
            && let Some(next) = tokens.get(i + 1)
            && matches!(next.token, Token::Word(_))
            && next.span.start == t.span.end
        {
            let at = byte_span(text, t.span)?;
            let end = byte_span(text, next.span).map_or(at.end, |n| n.end);
            return Some((Limit::GluedNumber, at.start..end));
        }
        let prefix = matches!(&t.token, Token::Plus | Token::Minus)
            || matches!(&t.token, Token::Word(w) if w.keyword == Keyword::NOT);
        match &t.token {
            Token::Whitespace(_) => continue,
            _ if prefix => prefixes += 1,
            _ => prefixes = 0,
        }
        match &t.token {
            Token::Plus
            | Token::Minus
            | Token::Mul
            | Token::Div
            | Token::Mod
            | Token::StringConcat
            | Token::Eq
            | Token::DoubleEq
            | Token::Neq
            | Token::Lt
            | Token::Gt
            | Token::LtEq
            | Token::GtEq
            | Token::Comma => operators += 1,
            Token::Word(w)
                if matches!(
                    w.keyword,
                    Keyword::AND | Keyword::OR | Keyword::NOT | Keyword::WHEN
                ) =>
            {
                operators += 1
            }
            Token::LParen | Token::LBracket => depth += 1,
            Token::Word(w) if w.keyword == Keyword::CASE => depth += 1,
            Token::RParen | Token::RBracket => depth = depth.saturating_sub(1),
            Token::Word(w) if w.keyword == Keyword::END => depth = depth.saturating_sub(1),
            _ => continue,
        }
        let passed = if operators > MOST_OPERATORS {
            Limit::Operators
        } else if depth + prefixes > DEEPEST_NESTING {
            Limit::Nesting
        } else {
            continue;
        };
        return byte_span(text, t.span).map(|at| (passed, at));
    }
    None
}

/// Writes each common table expression of `WITH` into the FROM that reads it, as a derived
/// table: a model's WITH clauses, like its subqueries, lower into its own nodes
/// (docs/sql.md, "Reading"). A CTE reads the ones before it, and those of the queries
/// around it; every CTE must be read, since one that is not would never be checked.
fn inline_ctes(model: &str, text: &str, q: &mut Query) -> Result<(), Diagnostic> {
    let mut scope = CteScope::default();
    scope.inline(model, text, q)
}

/// The CTEs visible where a query is inlined: name, body (already inlined), where its name
/// is written, and whether anything read it.
#[derive(Default)]
struct CteScope {
    defs: Vec<(String, Query, sqlparser::tokenizer::Span, bool)>,
}

impl CteScope {
    fn inline(&mut self, model: &str, text: &str, q: &mut Query) -> Result<(), Diagnostic> {
        let refuse = |what: &str, span: sqlparser::tokenizer::Span, help: &str| {
            Diagnostic::error(Code::UnsupportedSql, format!("model `{model}`: {what}"))
                .with_span(byte_span(text, span))
                .with_help(help)
        };
        let outer = self.defs.len();
        if let Some(with) = q.with.take() {
            if with.recursive {
                return Err(refuse(
                    "WITH RECURSIVE is not supported yet",
                    with.span(),
                    "a stream has no fixed point to recurse to; write each step as a CTE or a model",
                ));
            }
            let names: Vec<String> = with
                .cte_tables
                .iter()
                .map(|c| c.alias.name.value.clone())
                .collect();
            for (i, cte) in with.cte_tables.into_iter().enumerate() {
                let name = cte.alias.name.value.clone();
                let at = cte.alias.name.span;
                if names[..i].contains(&name) {
                    return Err(refuse(
                        &format!("the CTE `{name}` is defined twice"),
                        at,
                        "give each CTE of a WITH its own name",
                    ));
                }
                if !cte.alias.columns.is_empty() {
                    return Err(refuse(
                        "naming a CTE's columns in its header is not supported yet",
                        cte.alias.span(),
                        "name the columns in the CTE's SELECT list with AS",
                    ));
                }
                let mut body = *cte.query;
                if let Some((read, span)) = reads_name(&body)
                    && let Some(later) = names[i..].iter().position(|n| *n == read)
                {
                    return Err(if later == 0 {
                        refuse(
                            &format!(
                                "the CTE `{name}` reads itself, which is WITH RECURSIVE, and that is not supported yet"
                            ),
                            span,
                            "a stream has no fixed point to recurse to; read a source, a model or an earlier CTE",
                        )
                    } else {
                        refuse(
                            &format!("the CTE `{name}` reads `{read}`, which is defined after it"),
                            span,
                            "a CTE reads only the CTEs before it: move it after the one it reads",
                        )
                    });
                }
                self.inline(model, text, &mut body)?;
                self.defs.push((name, body, at, false));
            }
        }
        self.replace_reads(model, text, q)?;
        // The CTEs this query defined leave its scope, each read or refused.
        for (name, _, at, read) in self.defs.drain(outer..) {
            if !read {
                return Err(Diagnostic::error(
                    Code::UnsupportedSql,
                    format!("model `{model}`: the CTE `{name}` is never read"),
                )
                .with_span(byte_span(text, at))
                .with_help(
                    "read it in FROM, or remove it; a CTE nothing reads would never be checked",
                ));
            }
        }
        Ok(())
    }

    /// Replaces a FROM that names a visible CTE (following derived tables down, each with
    /// its own WITH) with that CTE's query as a derived table under the CTE's name.
    fn replace_reads(&mut self, model: &str, text: &str, q: &mut Query) -> Result<(), Diagnostic> {
        self.replace_in(model, text, q.body.as_mut())
    }

    /// [`CteScope::replace_reads`] in one SELECT, or in each branch of a UNION ALL.
    fn replace_in(
        &mut self,
        model: &str,
        text: &str,
        body: &mut SetExpr,
    ) -> Result<(), Diagnostic> {
        let s = match body {
            SetExpr::SetOperation { left, right, .. } => {
                self.replace_in(model, text, left)?;
                return self.replace_in(model, text, right);
            }
            SetExpr::Select(s) => s,
            _ => return Ok(()),
        };
        // Every relation the SELECT reads: its FROM's, and each join's.
        for from in &mut s.from {
            self.replace_relation(model, text, &mut from.relation)?;
            for join in &mut from.joins {
                self.replace_relation(model, text, &mut join.relation)?;
            }
        }
        Ok(())
    }

    /// [`CteScope::replace_reads`] in one relation a SELECT reads.
    fn replace_relation(
        &mut self,
        model: &str,
        text: &str,
        relation: &mut TableFactor,
    ) -> Result<(), Diagnostic> {
        match relation {
            TableFactor::Derived { subquery, .. } => self.inline(model, text, subquery),
            TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } if name.0.len() == 1 => {
                let named = name.0[0].as_ident().map(|i| i.value.clone());
                let Some(def) = named.and_then(|n| self.defs.iter_mut().rev().find(|d| d.0 == n))
                else {
                    return Ok(());
                };
                def.3 = true;
                let alias = alias.take().unwrap_or_else(|| ast::TableAlias {
                    explicit: true,
                    name: ast::Ident::new(def.0.clone()),
                    columns: Vec::new(),
                    at: None,
                });
                *relation = TableFactor::Derived {
                    lateral: false,
                    subquery: Box::new(def.1.clone()),
                    alias: Some(alias),
                    sample: None,
                };
                Ok(())
            }
            // A window table function whose input names a CTE.
            other => {
                let mut named = None;
                let _ = sqlparser::ast::visit_expressions(other, |e| {
                    if let SqlExpr::Identifier(i) = e
                        && self.defs.iter().any(|d| d.0 == i.value)
                    {
                        named = Some(i.clone());
                        return std::ops::ControlFlow::Break(());
                    }
                    std::ops::ControlFlow::Continue(())
                });
                match named {
                    Some(cte) => Err(Diagnostic::error(
                        Code::UnsupportedSql,
                        format!("model `{model}`: a window over the CTE `{}` is not supported yet", cte.value),
                    )
                    .with_span(byte_span(text, cte.span))
                    .with_help("give the window its input as TABLE source('<name>') or TABLE ref('<model>'), and put the CTE's step in a model of its own")),
                    None => Ok(()),
                }
            }
        }
    }
}

/// The plain name a query's FROM reads (following derived tables down), with its span.
fn reads_name(q: &Query) -> Option<(String, sqlparser::tokenizer::Span)> {
    let SetExpr::Select(s) = q.body.as_ref() else {
        return None;
    };
    match &s.from.first()?.relation {
        TableFactor::Derived { subquery, .. } => reads_name(subquery),
        TableFactor::Table {
            name, args: None, ..
        } if name.0.len() == 1 => {
            let ident = name.0[0].as_ident()?;
            Some((ident.value.clone(), name.span()))
        }
        _ => None,
    }
}

/// Parses `text` as exactly one SELECT statement.
pub fn parse_model(model: &str, text: &str) -> ParsedModel {
    let fail = |d: Diagnostic| ParsedModel {
        query: None,
        diagnostics: vec![d],
    };
    if text.trim().is_empty()
        || text
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with("--"))
    {
        return fail(
            Diagnostic::error(Code::NotOneSelect, format!("model `{model}` is empty")).with_help(
                "a model file holds one SELECT statement, e.g. SELECT * FROM source('orders')",
            ),
        );
    }
    if let Some((limit, at)) = past_limits(text) {
        let (message, help) = match limit {
            Limit::Operators => (
                format!(
                    "model `{model}` holds more than {MOST_OPERATORS} operators and list items"
                ),
                "split the computation into models that read one another with ref()",
            ),
            Limit::Nesting => (
                format!(
                    "model `{model}` nests parentheses, subqueries, CASE expressions or prefix operators (NOT, a sign) more than {DEEPEST_NESTING} levels deep"
                ),
                "compute the inner part (an expression, or a subquery) in a model this one reads with ref()",
            ),
            Limit::GluedNumber => {
                return fail(
                    Diagnostic::error(
                        Code::SqlSyntax,
                        format!(
                            "model `{model}`: `{}` is a number run into a name",
                            &text[at.clone()]
                        ),
                    )
                    .with_span(Some(at))
                    .with_help("write a number with digits only (1000, 0.5), and put a space before an alias"),
                );
            }
        };
        return fail(
            Diagnostic::error(Code::SqlTooLarge, message)
                .with_span(Some(at))
                .with_help(help),
        );
    }
    let statements = match Parser::parse_sql(
        &GenericDialect {},
        &crate::window::for_parsing(&crate::temporal::for_parsing(text)),
    ) {
        Ok(s) => s,
        // A window table function does not parse as our dialect reads FROM; say what it is
        // rather than where the parser gave up.
        Err(_) if symmetric_between(text).is_some() => {
            let at = symmetric_between(text).expect("checked");
            return fail(
                Diagnostic::error(
                    Code::UnsupportedSql,
                    format!("model `{model}`: BETWEEN SYMMETRIC is not supported yet"),
                )
                .with_span(Some(at..at + "SYMMETRIC".len()))
                .with_help(
                    "write the bounds in order, x BETWEEN low AND high, or compare with each bound",
                ),
            );
        }
        Err(_) if trim_without_characters(text).is_some() => {
            let (at, side) = trim_without_characters(text).expect("checked");
            return fail(
                Diagnostic::error(
                    Code::UnsupportedSql,
                    format!("model `{model}`: TRIM({side} FROM ...) without the characters to trim is not supported yet"),
                )
                .with_span(Some(at..at + side.len() + " FROM".len()))
                .with_help(format!("name the space: TRIM({side} ' ' FROM s), or write TRIM(s) for both sides")),
            );
        }
        Err(e) if window_call(text).is_some() => {
            let (at, name) = window_call(text).expect("checked");
            // The parser's own words and position say where the call went wrong.
            let msg = e.to_string();
            let msg = msg.strip_prefix("sql parser error: ").unwrap_or(&msg);
            let (clean, span) = split_position(msg, text);
            return fail(
                Diagnostic::error(
                    Code::UnsupportedSql,
                    format!(
                        "model `{model}`: this {name}(...) does not read as a window table function ({clean})"
                    ),
                )
                .with_span(span.or(Some(at..at + name.len())))
                .with_help(format!(
                    "a window is a table function in FROM: {}",
                    crate::window::WINDOW_FORM
                )),
            );
        }
        // Nesting the token pass does not see (a prefix operator over a parenthesis, a
        // function's arguments) can still reach the parser's own depth limit.
        Err(sqlparser::parser::ParserError::RecursionLimitExceeded) => {
            return fail(
                Diagnostic::error(
                    Code::SqlTooLarge,
                    format!("model `{model}` nests its expressions or subqueries too deeply for the parser"),
                )
                .with_help(
                    "compute the inner part (an expression, or a subquery) in a model this one reads with ref()",
                ),
            );
        }
        Err(e) => {
            let msg = e.to_string();
            let msg = msg
                .strip_prefix("sql parser error: ")
                .unwrap_or(&msg)
                .to_string();
            let (clean, span) = split_position(&msg, text);
            // `FOR SYSTEM_TIME AS OF`, Flink's temporal join, which the parser does not read.
            if let Some(at) = span.as_ref().map(|s| s.start).filter(|&at| {
                text.get(at..)
                    .is_some_and(|rest| rest.to_ascii_uppercase().starts_with("SYSTEM_TIME"))
            }) {
                // From the `FOR` before it.
                let before = text[..at].trim_end();
                let start = if before.to_ascii_uppercase().ends_with("FOR") {
                    before.len() - 3
                } else {
                    at
                };
                return fail(
                    Diagnostic::error(
                        Code::UnsupportedSql,
                        format!("model `{model}`: FOR SYSTEM_TIME AS OF names no column of the probe side here; only a temporal join on the probe side's event time is supported"),
                    )
                    .with_span(Some(start..at + "SYSTEM_TIME".len()))
                    .with_help("join AS OF the event-time column of the table on the left, FOR SYSTEM_TIME AS OF <left alias>.<event-time column>; a temporal join on processing time (PROCTIME()) and a lookup join read the table at the moment a row is processed, which no fixture can replay"),
                );
            }
            return fail(
                Diagnostic::error(Code::SqlSyntax, format!("model `{model}` is not valid SQL: {clean}"))
                    .with_span(span)
                    .with_help("a model is one SELECT statement; read a source with source('<name>') and a model with ref('<model>')"),
            );
        }
    };
    match statements.as_slice() {
        [] => fail(
            Diagnostic::error(Code::NotOneSelect, format!("model `{model}` is empty"))
                .with_help("a model file holds one SELECT statement"),
        ),
        [Statement::Query(q)] => match past_expansion(text, q) {
            Some(at) => fail(
                Diagnostic::error(
                    Code::SqlTooLarge,
                    format!("model `{model}` grows past {MOST_EXPANDED} expressions once COALESCE, NULLIF, IN, BETWEEN and CASE x WHEN are written out"),
                )
                .with_span(Some(at))
                .with_help("each of these repeats its first argument, so nesting them multiplies the size; compute the inner part as a column of a model this one reads with ref()"),
            ),
            None => {
                let mut q = q.clone();
                over::inline_named_windows(&mut q);
                match inline_ctes(model, text, &mut q) {
                    Ok(()) => ParsedModel {
                        query: Some(q),
                        diagnostics: Vec::new(),
                    },
                    Err(d) => fail(d),
                }
            }
        },
        [one] => fail(
            Diagnostic::error(
                Code::NotOneSelect,
                format!("model `{model}` is not a SELECT statement"),
            )
            .with_span(byte_span(text, one.span()))
            .with_help("a model is one SELECT; Streamform creates tables and views itself"),
        ),
        [_, second, ..] => fail(
            Diagnostic::error(
                Code::NotOneSelect,
                format!(
                    "model `{model}` holds {} statements; a model is exactly one SELECT",
                    statements.len()
                ),
            )
            .with_span(byte_span(text, second.span()))
            .with_help("split the statements into one file per model under models/"),
        ),
    }
}

/// Splits sqlparser's ` at Line: L, Column: C` suffix off a message into a byte span.
fn split_position(msg: &str, text: &str) -> (String, Option<Range<usize>>) {
    if let Some(i) = msg.find(" at Line: ") {
        let pos = &msg[i + " at Line: ".len()..];
        let mut parts = pos.split(", Column: ");
        if let (Some(l), Some(c)) = (parts.next(), parts.next()) {
            let c: String = c.chars().take_while(char::is_ascii_digit).collect();
            if let (Ok(l), Ok(c)) = (l.trim().parse::<usize>(), c.parse::<usize>()) {
                let start = offset_of(text, l, c);
                return (
                    msg[..i].to_string(),
                    Some(start..(start + 1).min(text.len()).max(start)),
                );
            }
        }
    }
    let end = text.trim_end().len();
    (
        msg.to_string(),
        Some(end.saturating_sub(1)..end.max(1).min(text.len())),
    )
}

/// One relation a FROM clause reads, with the span of the `source('x')` / `ref('m')` call.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Read {
    /// The source or model read.
    pub input: Input,
    /// Byte range of the `source('…')` or `ref('…')` call, when known.
    pub span: Option<Range<usize>>,
    /// The window table function the input is read through, if any.
    pub window: Option<crate::window::WindowRead>,
    /// The `FOR SYSTEM_TIME AS OF` it is joined with (a temporal join), if any.
    pub as_of: Option<crate::temporal::AsOf>,
}

/// What a model reads: every `source()` and `ref()` of its FROM clauses (the branches of a
/// UNION ALL, its subqueries and CTEs), in the order they are written; never empty.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reads {
    /// Each read as written; a relation read twice is listed twice.
    pub relations: Vec<Read>,
}

impl Reads {
    /// The first relation read.
    pub fn first(&self) -> &Read {
        &self.relations[0]
    }

    /// The relations read, each once, in the order they are first written.
    pub fn inputs(&self) -> Vec<Input> {
        let mut out: Vec<Input> = Vec::new();
        for r in &self.relations {
            if !out.contains(&r.input) {
                out.push(r.input.clone());
            }
        }
        out
    }

    /// Where `input` is first read.
    pub fn span_of(&self, input: &Input) -> Option<Range<usize>> {
        self.relations
            .iter()
            .find(|r| r.input == *input)
            .and_then(|r| r.span.clone())
    }

    /// The read through a window table function, if any.
    pub fn window(&self) -> Option<&crate::window::WindowRead> {
        self.relations.iter().find_map(|r| r.window.as_ref())
    }
}

/// Walks the query and refuses every construct outside the supported surface.
/// Returns what the model reads when its FROM clause is valid.
pub fn validate(model: &str, text: &str, query: &Query) -> (Option<Reads>, Vec<Diagnostic>) {
    let mut v = Validator {
        model,
        text,
        diags: Vec::new(),
        in_aggregate: false,
    };
    let reads = v.query(query);
    // `FOR SYSTEM_TIME AS OF` is read only after a `source('x')` (a versioned table); after
    // a subquery or a model it would be lost with the blanked text.
    let checked = if reads.is_some() {
        crate::temporal::all(text)
    } else {
        Vec::new()
    };
    for span in checked {
        let on_a_source = reads.iter().flat_map(|r| &r.relations).any(|r| {
            matches!(r.input, Input::Source(_)) && r.as_of.as_ref().is_some_and(|a| a.span == span)
        });
        if !on_a_source {
            v.diags.push(
                Diagnostic::error(
                    Code::UnsupportedSql,
                    format!("model `{model}`: FOR SYSTEM_TIME AS OF follows something other than a source read with source('…')"),
                )
                .with_span(Some(span))
                .with_help("read the versioned table itself, JOIN source('<name>') FOR SYSTEM_TIME AS OF <left alias>.<event-time column>: Flink reads versions only from a table with a primary key and a watermark, not from a subquery or a model"),
            );
        }
    }
    (reads, v.diags)
}

struct Validator<'a> {
    model: &'a str,
    text: &'a str,
    diags: Vec<Diagnostic>,
    /// Whether the expression being checked is an aggregate's argument.
    in_aggregate: bool,
}

pub(crate) const HELP_SURFACE: &str = "supported: column references, literals, comparison and arithmetic, AND/OR/NOT, IS [NOT] NULL, CAST, CASE, COALESCE, NULLIF, BETWEEN, IN (list), WHERE, GROUP BY columns, HAVING, sum/count/count(DISTINCT)/min/max/avg, string and numeric functions, timestamps and INTERVAL; docs/sql.md lists it all";

pub(crate) mod over;
pub(crate) mod ranking;

impl Validator<'_> {
    fn refuse(&mut self, construct: &str, span: sqlparser::tokenizer::Span, help: &str) {
        self.diags.push(
            Diagnostic::error(
                Code::UnsupportedSql,
                format!("model `{}`: {construct} is not supported yet", self.model),
            )
            .with_span(byte_span(self.text, span))
            .with_help(help),
        );
    }

    fn query(&mut self, q: &Query) -> Option<Reads> {
        if let Some(l) = &q.limit_clause {
            self.refuse(
                "LIMIT",
                l.span(),
                "a stream has no last row to stop at; for the first rows by an order, number them in a subquery and keep the first: SELECT … FROM (SELECT …, ROW_NUMBER() OVER (ORDER BY amount DESC) AS rn FROM …) WHERE rn <= 3 (docs/ranking.md); to drop rows, filter with WHERE",
            );
        }
        if let Some(f) = &q.fetch {
            self.refuse(
                "FETCH",
                f.quantity.as_ref().map_or(q.span(), Spanned::span),
                "filter with WHERE instead",
            );
        }
        if let Some(ob) = &q.order_by {
            match &ob.kind {
                ast::OrderByKind::Expressions(exprs) => {
                    for e in exprs {
                        if e.options.nulls_first.is_some() {
                            self.refuse(
                                "NULLS FIRST / NULLS LAST",
                                e.expr.span(),
                                "nulls sort first in ascending order and last in descending order; remove the clause",
                            );
                        }
                        if !matches!(
                            e.expr,
                            SqlExpr::Identifier(_) | SqlExpr::CompoundIdentifier(_)
                        ) {
                            self.refuse(
                                "ORDER BY over an expression",
                                e.expr.span(),
                                "order by a column of the model",
                            );
                        }
                    }
                }
                ast::OrderByKind::All(_) => {
                    self.refuse("ORDER BY ALL", ob.span(), "order by named columns")
                }
            }
        }
        match q.body.as_ref() {
            SetExpr::Select(s) => self.select(s),
            body @ SetExpr::SetOperation { .. } => self.set_operation(body),
            SetExpr::Query(inner) => {
                self.refuse(
                    "a SELECT in parentheses",
                    inner.span(),
                    "remove the parentheses around the SELECT; a subquery goes in FROM: SELECT … FROM (SELECT … FROM source('<name>')) AS t",
                );
                None
            }
            other => {
                self.refuse(
                    &format!("`{}`", first_word(other)),
                    other.span(),
                    "a model is one SELECT statement",
                );
                None
            }
        }
    }

    /// A UNION ALL of SELECTs (docs/sql.md, "Several inputs"): each branch checked as a
    /// SELECT of its own; the other set operations are refused.
    fn set_operation(&mut self, body: &SetExpr) -> Option<Reads> {
        match body {
            SetExpr::Select(s) => self.select(s),
            SetExpr::SetOperation {
                op,
                set_quantifier,
                left,
                right,
            } => {
                let (name, help) = match (op, set_quantifier) {
                    (ast::SetOperator::Union, ast::SetQuantifier::All) => {
                        let left = self.set_operation(left);
                        let right = self.set_operation(right);
                        let (mut left, right) = (left?, right?);
                        left.relations.extend(right.relations);
                        return Some(left);
                    }
                    (
                        ast::SetOperator::Union,
                        ast::SetQuantifier::None | ast::SetQuantifier::Distinct,
                    ) => (
                        "UNION without ALL",
                        "UNION removes duplicate rows, which keeps every row ever seen; write UNION ALL, and GROUP BY the columns over it if you need each row once",
                    ),
                    (ast::SetOperator::Union, _) => (
                        "this UNION",
                        "write UNION ALL, which passes every row of each SELECT on",
                    ),
                    (ast::SetOperator::Except | ast::SetOperator::Minus, _) => (
                        "EXCEPT",
                        "filter the rows with WHERE, or keep what the other relation has with a join when joins are supported",
                    ),
                    (ast::SetOperator::Intersect, _) => (
                        "INTERSECT",
                        "keep the rows both relations have with a join when joins are supported",
                    ),
                };
                self.refuse(name, body.span(), help);
                None
            }
            SetExpr::Query(inner) => {
                self.refuse(
                    "a SELECT in parentheses",
                    inner.span(),
                    "remove the parentheses around the SELECT; each side of UNION ALL is a plain SELECT",
                );
                None
            }
            other => {
                self.refuse(
                    &format!("`{}`", first_word(other)),
                    other.span(),
                    "each side of UNION ALL is a SELECT",
                );
                None
            }
        }
    }

    fn select(&mut self, s: &ast::Select) -> Option<Reads> {
        if let Some(d) = &s.distinct {
            let span = match d {
                ast::Distinct::On(exprs) => exprs.first().map_or(s.span(), Spanned::span),
                _ => s.select_token.0.span,
            };
            self.refuse("DISTINCT", span, "group with GROUP BY instead");
        }
        if s.top.is_some() {
            self.refuse("TOP", s.select_token.0.span, "filter with WHERE instead");
        }
        if s.into.is_some() {
            self.refuse("SELECT INTO", s.span(), "a model is a plain SELECT");
        }
        if let Some(q) = &s.qualify {
            self.refuse("QUALIFY", q.span(), HELP_SURFACE);
        }
        if !s.named_window.is_empty() {
            self.refuse(
                "a named WINDOW for OVER",
                s.span(),
                "write the window in the call: SUM(amount) OVER (PARTITION BY customer_id ORDER BY ordered_at) (docs/over.md), ROW_NUMBER() OVER (PARTITION BY … ORDER BY …) (docs/ranking.md)",
            );
        }
        if !s.lateral_views.is_empty()
            || !s.cluster_by.is_empty()
            || !s.distribute_by.is_empty()
            || !s.sort_by.is_empty()
            || s.prewhere.is_some()
            || !s.connect_by.is_empty()
        {
            self.refuse("this clause", s.span(), HELP_SURFACE);
        }
        if s.projection.is_empty() {
            self.diags.push(
                Diagnostic::error(
                    Code::OutputColumns,
                    format!("model `{}` selects no columns", self.model),
                )
                .with_span(byte_span(self.text, s.select_token.0.span))
                .with_help("list the columns after SELECT, or write SELECT * for all of them"),
            );
        }
        for item in &s.projection {
            match item {
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => match e {
                    SqlExpr::Function(f) if f.over.is_some() => self.select_item_over(e, f),
                    _ => self.expr(e, true),
                },
                SelectItem::ExprWithAliases { expr, .. } => {
                    self.refuse(
                        "several aliases for one column",
                        expr.span(),
                        "give each column one name with AS",
                    );
                }
                SelectItem::Wildcard(opts) | SelectItem::QualifiedWildcard(_, opts) => {
                    if opts.opt_exclude.is_some()
                        || opts.opt_except.is_some()
                        || opts.opt_replace.is_some()
                        || opts.opt_rename.is_some()
                        || opts.opt_ilike.is_some()
                    {
                        self.refuse(
                            "a wildcard modifier",
                            item.span(),
                            "list the columns you want",
                        );
                    }
                }
            }
        }
        if let Some(w) = &s.selection {
            self.expr(w, false);
        }
        match &s.group_by {
            GroupByExpr::All(_) => {
                self.refuse("GROUP BY ALL", s.span(), "name the grouping columns")
            }
            GroupByExpr::Expressions(exprs, modifiers) => {
                if !modifiers.is_empty() {
                    self.refuse(
                        "GROUP BY modifiers (ROLLUP, CUBE, GROUPING SETS)",
                        s.span(),
                        "group by plain columns",
                    );
                }
                let mut grouped: Vec<String> = Vec::new();
                for e in exprs {
                    // Flink would group once; the key Streamform derives would repeat the
                    // column, and a key may not.
                    let written = e.to_string();
                    if grouped.contains(&written) {
                        self.diags.push(
                            Diagnostic::error(
                                Code::InvalidAggregate,
                                format!("model `{}` groups by `{written}` twice", self.model),
                            )
                            .with_span(byte_span(self.text, e.span()))
                            .with_help("name each grouping column or expression once"),
                        );
                    }
                    grouped.push(written);
                    match e {
                        SqlExpr::Identifier(_) | SqlExpr::CompoundIdentifier(_) => {}
                        SqlExpr::Rollup(_) | SqlExpr::Cube(_) | SqlExpr::GroupingSets(_) => self
                            .refuse(
                                "ROLLUP, CUBE and GROUPING SETS",
                                e.span(),
                                "group by plain columns",
                            ),
                        SqlExpr::Function(f) if window_name(&f.name.to_string()).is_some() => self
                            .refuse(
                                &format!("a group window (GROUP BY {}(...))", f.name.to_string().to_uppercase()),
                                e.span(),
                                &format!("Flink deprecates group windows; write the window as a table function in FROM and group by its columns: {}", crate::window::WINDOW_FORM),
                            ),
                        // DataFusion reads a number as a column's position; Flink as a
                        // constant.
                        SqlExpr::Value(v) if matches!(v.value, ast::Value::Number(..)) => self
                            .refuse(
                                "GROUP BY a number",
                                e.span(),
                                "Flink reads a number in GROUP BY as a constant, not as the position of a selected column; name the column: GROUP BY category",
                            ),
                        // An expression over the row, computed before the grouping
                        // (docs/sql.md).
                        _ => self.expr(e, false),
                    }
                }
            }
        }
        if let Some(h) = &s.having {
            self.expr(h, true);
        }
        self.from(s)
    }

    fn from(&mut self, s: &ast::Select) -> Option<Reads> {
        let Some(first) = s.from.first() else {
            self.diags.push(
                Diagnostic::error(
                    Code::InvalidRead,
                    format!("model `{}` reads nothing", self.model),
                )
                .with_span(byte_span(self.text, s.select_token.0.span))
                .with_help("add FROM source('<name>') or FROM ref('<model>')"),
            );
            return None;
        };
        if let Some(second) = s.from.get(1) {
            self.refuse(
                "a join written with a comma (FROM a, b)",
                second.relation.span(),
                "write it with JOIN … ON, naming the columns that must be equal: FROM source('orders') AS o JOIN source('customers') AS c ON o.customer_id = c.customer_id",
            );
        }
        let mut reads = self.relation(&first.relation);
        for j in &first.joins {
            self.join(j);
            let more = self.relation(&j.relation);
            reads = match (reads, more) {
                (Some(mut r), Some(more)) => {
                    r.relations.extend(more.relations);
                    Some(r)
                }
                _ => None,
            };
        }
        if let Some(r) = &reads
            && r.relations.len() > 1
            && let Some(w) = r.window()
        {
            self.diags.push(
                Diagnostic::error(
                    Code::UnsupportedSql,
                    format!("model `{}`: a window in a model that reads several relations is not supported yet", self.model),
                )
                .with_span(w.span.clone())
                .with_help("a regular join ends event time, so no window can follow it in the model; window an input in a model of its own and join the windowed model"),
            );
            return None;
        }
        reads
    }

    /// The kind and condition of one JOIN: INNER, LEFT, RIGHT and FULL OUTER with ON are
    /// regular joins (docs/joins.md); the rest is refused.
    fn join(&mut self, j: &ast::Join) {
        use ast::{JoinConstraint, JoinOperator};
        let constraint = match &j.join_operator {
            JoinOperator::Join(c)
            | JoinOperator::Inner(c)
            | JoinOperator::Left(c)
            | JoinOperator::LeftOuter(c)
            | JoinOperator::Right(c)
            | JoinOperator::RightOuter(c)
            | JoinOperator::FullOuter(c) => c,
            JoinOperator::CrossJoin(_) => {
                return self.refuse(
                    "CROSS JOIN",
                    j.relation.span(),
                    "a streaming join pairs rows by equal columns, keeping both sides: write JOIN … ON a.k = b.k",
                );
            }
            JoinOperator::CrossApply | JoinOperator::OuterApply => {
                return self.refuse(
                    "APPLY",
                    j.relation.span(),
                    "write a JOIN … ON over the two relations",
                );
            }
            other => {
                return self.refuse(
                    &format!("a {} join", first_word(other).to_uppercase()),
                    j.relation.span(),
                    "write an INNER, LEFT, RIGHT or FULL JOIN … ON",
                );
            }
        };
        match constraint {
            JoinConstraint::On(e) => self.expr(e, false),
            JoinConstraint::Using(_) => self.refuse(
                "JOIN … USING",
                j.relation.span(),
                "write the condition with ON, naming each side's column: ON o.customer_id = c.customer_id",
            ),
            JoinConstraint::Natural => self.refuse(
                "NATURAL JOIN",
                j.relation.span(),
                "write the condition with ON, naming each side's column: ON o.customer_id = c.customer_id",
            ),
            JoinConstraint::None => self.refuse(
                "a join without a condition",
                j.relation.span(),
                "a streaming join pairs rows by equal columns: add ON a.k = b.k",
            ),
        }
    }

    /// One relation of FROM: a `source()` or `ref()` call, a window table function over
    /// one, or a subquery; what it reads, when it is valid.
    fn relation(&mut self, relation: &TableFactor) -> Option<Reads> {
        match relation {
            TableFactor::TableFunction {
                expr: SqlExpr::Function(f),
                alias,
            } if window_name(&f.name.to_string()).is_some() => {
                if let Some(alias) = alias.as_ref().filter(|a| !a.columns.is_empty()) {
                    let columns: Vec<String> =
                        alias.columns.iter().map(ToString::to_string).collect();
                    self.refuse(
                        &format!(
                            "a column list on the window table (`{}({})`)",
                            alias.name,
                            columns.join(", ")
                        ),
                        alias.name.span,
                        "name the columns in the SELECT list instead: window_start AS minute_start, COUNT(*) AS views",
                    );
                    return None;
                }
                let ((kind, args, span), window) =
                    match crate::window::read(self.model, self.text, f) {
                        Ok(read) => read,
                        Err(d) => {
                            self.diags.push(d);
                            return None;
                        }
                    };
                let mut reads = self.read_call(&kind, args, span)?;
                reads.relations[0].window = Some(window);
                Some(reads)
            }
            TableFactor::Table {
                version: Some(_), ..
            } => {
                self.refuse(
                    "FOR SYSTEM_TIME AS OF on this relation",
                    relation.span(),
                    "join a source read as a versioned table AS OF the probe side's event time: JOIN source('rates') FOR SYSTEM_TIME AS OF o.ordered_at AS r ON …",
                );
                None
            }
            TableFactor::Table { name, args, .. } => {
                let fname = name.to_string();
                let Some(args) = args else {
                    self.diags.push(
                        Diagnostic::error(Code::InvalidRead, format!("model `{}` reads the plain table name `{fname}`", self.model))
                            .with_span(byte_span(self.text, relation.span()))
                            .with_help(format!("read a source with source('{fname}') or a model with ref('{fname}'), so the dependency graph knows about it")),
                    );
                    return None;
                };
                let kind = fname.to_ascii_lowercase();
                if let Some(window) = window_name(&fname) {
                    self.refuse(
                        &format!("{window}(...) in FROM without TABLE(...) around it"),
                        relation.span(),
                        &format!(
                            "a window table function is written inside TABLE(...): {}",
                            crate::window::WINDOW_FORM
                        ),
                    );
                    return None;
                }
                if kind != "source" && kind != "ref" {
                    self.refuse(
                        &format!("the table function `{fname}`"),
                        relation.span(),
                        "read with source('<name>') or ref('<model>')",
                    );
                    return None;
                }
                self.read_call(&kind, &args.args, relation.span())
            }
            // A derived table lowers into the model's own nodes, below the outer SELECT's
            // (docs/sql.md, "Reading").
            TableFactor::Derived {
                subquery, lateral, ..
            } => {
                if *lateral {
                    self.refuse(
                        "LATERAL",
                        subquery.span(),
                        "write the subquery without LATERAL; it reads one relation",
                    );
                    return None;
                }
                if let Some(ob) = &subquery.order_by {
                    self.refuse(
                        "ORDER BY inside a subquery",
                        ob.span(),
                        "a subquery's rows have no order the outer query keeps; order the model's own SELECT",
                    );
                }
                self.query(subquery)
            }
            other => {
                self.refuse(
                    &format!("`{}` in FROM", first_word(other)),
                    other.span(),
                    "read with source('<name>') or ref('<model>')",
                );
                None
            }
        }
    }

    /// The input of `source('x')` or `ref('m')` (`kind`, lowercase) from its arguments,
    /// written at `span`.
    fn read_call(
        &mut self,
        kind: &str,
        args: &[FunctionArg],
        span: sqlparser::tokenizer::Span,
    ) -> Option<Reads> {
        let arg = match args {
            [FunctionArg::Unnamed(FunctionArgExpr::Expr(SqlExpr::Value(v)))] => match &v.value {
                SqlValue::SingleQuotedString(s) | SqlValue::DoubleQuotedString(s) => {
                    Some(s.clone())
                }
                _ => None,
            },
            _ => None,
        };
        let Some(arg) = arg else {
            self.diags.push(
                Diagnostic::error(
                    Code::InvalidRead,
                    format!("model `{}`: {kind}() takes one quoted name", self.model),
                )
                .with_span(byte_span(self.text, span))
                .with_help(format!("write {kind}('<name>')")),
            );
            return None;
        };
        let span = byte_span(self.text, span).map(|s| {
            let close = self.text[s.start..]
                .find(')')
                .map_or(s.end, |i| s.start + i + 1);
            s.start..close
        });
        let input = if kind == "source" {
            Input::Source(arg)
        } else {
            Input::Model(arg)
        };
        Some(Reads {
            relations: vec![Read {
                input,
                as_of: span
                    .as_ref()
                    .and_then(|s| match crate::temporal::after(self.text, s.end) {
                        Some(Ok(as_of)) => Some(as_of),
                        _ => None,
                    }),
                span,
                window: None,
            }],
        })
    }

    /// A number literal as written (`negated` after a minus sign). Flink reads exponent
    /// notation as a DOUBLE, which the planner here would read as a DECIMAL, so it is
    /// refused; and Flink reads an exact literal only when its digits, the point left out,
    /// stay within a BIGINT (`-9223372036854775808` and `922337203685477580.7` read,
    /// `9223372036854775808` and `0.12345678901234567890` do not), so neither does
    /// Streamform.
    fn number(&mut self, text: &str, negated: bool, span: sqlparser::tokenizer::Span) {
        let sign = if negated { "-" } else { "" };
        let problem = if text.contains(['e', 'E']) {
            Some((
                format!(
                    "model `{}`: a number in exponent notation (`{text}`) is not supported yet",
                    self.model
                ),
                "write the digits out, with a point for a fraction: 10000000000, 0.15".to_string(),
            ))
        } else {
            let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
            let digits = format!("{whole}{fraction}");
            let digits = digits.trim_start_matches('0');
            let most = if negated {
                1u128 << 63
            } else {
                (1u128 << 63) - 1
            };
            let fits = digits.len() <= 19
                && digits
                    .parse::<u128>()
                    .map_or(digits.is_empty(), |v| v <= most);
            (!fits).then(|| {
                (
                    format!(
                        "model `{}`: the number `{sign}{text}` has more digits than Flink reads in a literal",
                        self.model
                    ),
                    format!(
                        "a literal's digits, the point left out, must stay within a BIGINT (9223372036854775807); write fewer, or CAST text: CAST('{sign}{text}' AS DECIMAL(p, s))"
                    ),
                )
            })
        };
        if let Some((message, help)) = problem {
            self.diags.push(
                Diagnostic::error(Code::UnsupportedSql, message)
                    .with_span(byte_span(self.text, span))
                    .with_help(help),
            );
        }
    }

    fn expr(&mut self, e: &SqlExpr, aggregates_allowed: bool) {
        match e {
            SqlExpr::Identifier(_) | SqlExpr::CompoundIdentifier(_) => {}
            SqlExpr::Value(v) => match &v.value {
                SqlValue::Number(n, _) => self.number(n, false, e.span()),
                SqlValue::SingleQuotedString(_)
                | SqlValue::Boolean(_)
                | SqlValue::Null => {}
                _ => self.refuse(
                    "this literal",
                    e.span(),
                    "literals are numbers, 'strings', TRUE, FALSE and NULL",
                ),
            },
            SqlExpr::Nested(inner) => self.expr(inner, aggregates_allowed),
            SqlExpr::IsNull(inner) | SqlExpr::IsNotNull(inner) => {
                self.expr(inner, aggregates_allowed)
            }
            SqlExpr::UnaryOp { op, expr } => {
                if !matches!(
                    op,
                    ast::UnaryOperator::Not | ast::UnaryOperator::Minus | ast::UnaryOperator::Plus
                ) {
                    self.refuse(&format!("the operator `{op}`"), e.span(), HELP_SURFACE);
                }
                match (op, expr.as_ref()) {
                    (ast::UnaryOperator::Minus, SqlExpr::Value(v))
                        if matches!(v.value, SqlValue::Number(..)) =>
                    {
                        let SqlValue::Number(n, _) = &v.value else {
                            unreachable!("matched")
                        };
                        self.number(n, true, expr.span());
                    }
                    _ => self.expr(expr, aggregates_allowed),
                }
            }
            SqlExpr::BinaryOp { left, op, right } => {
                use ast::BinaryOperator as B;
                if !matches!(
                    op,
                    B::Plus
                        | B::Minus
                        | B::Multiply
                        | B::Divide
                        | B::Modulo
                        | B::Eq
                        | B::NotEq
                        | B::Lt
                        | B::LtEq
                        | B::Gt
                        | B::GtEq
                        | B::And
                        | B::Or
                        | B::StringConcat
                ) {
                    self.refuse(&format!("the operator `{op}`"), e.span(), HELP_SURFACE);
                }
                // An INTERVAL is an operand of `t + i`, `i + t` or `t - i` only.
                let (l, r) = (as_interval(left), as_interval(right));
                match (l, r, op) {
                    (Some(li), Some(ri), _) => {
                        let span = interval_span(self.text, li, left.span())
                            .zip(interval_span(self.text, ri, right.span()))
                            .map(|(a, b)| a.start..b.end);
                        self.diags.push(
                            Diagnostic::error(
                                Code::UnsupportedSql,
                                format!("model `{}`: `{op}` between two INTERVALs is not supported", self.model),
                            )
                            .with_span(span)
                            .with_help("an INTERVAL moves a timestamp: seen_at + INTERVAL '5' MINUTE"),
                        );
                        return;
                    }
                    (Some(i), None, B::Minus) => {
                        self.diags.push(
                            Diagnostic::error(
                                Code::TypeMismatch,
                                format!("model `{}`: a timestamp cannot be subtracted from an INTERVAL", self.model),
                            )
                            .with_span(interval_span(self.text, i, left.span()))
                            .with_help("subtract the INTERVAL from the timestamp: seen_at - INTERVAL '5' MINUTE"),
                        );
                        return;
                    }
                    _ => {}
                }
                for (operand, interval) in [(left, l), (right, r)] {
                    match interval {
                        Some(i) if matches!(op, B::Plus | B::Minus) => {
                            self.interval(i, operand.span());
                        }
                        _ => self.expr(operand, aggregates_allowed),
                    }
                }
            }
            SqlExpr::Cast {
                kind,
                expr,
                format,
                data_type,
                ..
            } => {
                if let Err(why) = cast_target(data_type) {
                    // The parser's span covers the operand only: point at the whole CAST.
                    let span = byte_span(self.text, e.span())
                        .map(|inner| call_span(self.text, "cast", inner));
                    self.diags.push(
                        Diagnostic::error(
                            Code::UnsupportedSql,
                            format!("model `{}`: CAST to {data_type} is not supported yet", self.model),
                        )
                        .with_span(span)
                        .with_help(why),
                    );
                }
                if !matches!(kind, ast::CastKind::Cast | ast::CastKind::TryCast) || format.is_some() {
                    self.refuse(
                        "this form of CAST",
                        e.span(),
                        "write CAST(<expr> AS <type>)",
                    );
                }
                self.expr(expr, aggregates_allowed);
            }
            SqlExpr::TypedString(t)
                if is_timestamp_type(&t.data_type) || t.data_type == ast::DataType::Date => {}
            SqlExpr::TypedString(t) => self.refuse(
                &format!("a {} literal", t.data_type),
                e.span(),
                "the typed literals supported are TIMESTAMP 'yyyy-MM-dd HH:mm:ss[.fff]' and DATE 'yyyy-MM-dd'",
            ),
            SqlExpr::Extract { field, expr, .. } => {
                if extract_field(field).is_none() {
                    // The parser's span covers the operand only: point at the whole call.
                    let span = byte_span(self.text, e.span())
                        .map(|inner| call_span(self.text, "extract", inner));
                    self.diags.push(
                        Diagnostic::error(
                            Code::UnsupportedSql,
                            format!("model `{}`: EXTRACT({field} ...) is not supported yet", self.model),
                        )
                        .with_span(span)
                        .with_help("extract YEAR, MONTH, DAY, HOUR, MINUTE, SECOND or DOW"),
                    );
                }
                self.expr(expr, aggregates_allowed);
            }
            SqlExpr::Interval(i) => {
                if self.interval(i, e.span()) {
                    self.diags.push(
                        Diagnostic::error(
                            Code::TypeMismatch,
                            format!("model `{}`: an INTERVAL stands on its own", self.model),
                        )
                        .with_span(interval_span(self.text, i, e.span()))
                        .with_help("an INTERVAL is added to or subtracted from a timestamp: seen_at + INTERVAL '5' MINUTE"),
                    );
                }
            }
            SqlExpr::Function(f) if is_clock(f) => self.refuse(
                &f.name.to_string().to_uppercase(),
                e.span(),
                "a fixture has no clock, so a model cannot read the current time or date; use a timestamp column of the source",
            ),
            SqlExpr::Function(f) => self.function(e, f, aggregates_allowed),
            SqlExpr::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                for x in operand.iter().chain(else_result) {
                    self.expr(x, aggregates_allowed);
                }
                for w in conditions {
                    self.expr(&w.condition, aggregates_allowed);
                    self.expr(&w.result, aggregates_allowed);
                }
            }
            SqlExpr::Subquery(_) | SqlExpr::Exists { .. } | SqlExpr::InSubquery { .. } => self
                .refuse(
                    "a subquery in an expression",
                    e.span(),
                    "it reads a second relation, which takes a join, and joins are not supported yet; a subquery in FROM that reads the model's one input works",
                ),
            SqlExpr::Between {
                expr, low, high, ..
            } => {
                for x in [expr, low, high] {
                    self.expr(x, aggregates_allowed);
                }
            }
            SqlExpr::InList { expr, list, .. } => {
                self.expr(expr, aggregates_allowed);
                for x in list {
                    self.expr(x, aggregates_allowed);
                }
            }
            SqlExpr::Like {
                any: false,
                escape_char: None,
                expr,
                pattern,
                ..
            } => {
                self.expr(expr, aggregates_allowed);
                self.expr(pattern, aggregates_allowed);
            }
            SqlExpr::Like { .. } => self.refuse(
                "this form of LIKE",
                e.span(),
                "write `x LIKE 'pattern'`: `%` matches any run of characters and `_` one; there is no escape character",
            ),
            SqlExpr::ILike { .. } => self.refuse(
                "ILIKE",
                e.span(),
                "compare LOWER(x) LIKE a lower-case pattern",
            ),
            SqlExpr::SimilarTo { .. } => self.refuse("SIMILAR TO", e.span(), HELP_SURFACE),
            SqlExpr::Position { expr, r#in } => {
                self.expr(expr, aggregates_allowed);
                self.expr(r#in, aggregates_allowed);
            }
            SqlExpr::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                if substring_from.is_none() {
                    self.refuse(
                        "SUBSTRING without a start",
                        e.span(),
                        "write SUBSTRING(s, start) or SUBSTRING(s, start, length)",
                    );
                }
                for x in std::iter::once(expr).chain(substring_from).chain(substring_for) {
                    self.expr(x, aggregates_allowed);
                }
            }
            SqlExpr::Trim {
                trim_what,
                trim_characters: None,
                expr,
                ..
            } if trim_what.as_deref().is_none_or(is_space_literal) => {
                self.expr(expr, aggregates_allowed)
            }
            SqlExpr::Trim { .. } => self.refuse(
                "TRIM of other characters than spaces",
                e.span(),
                "TRIM removes spaces; write TRIM(s), TRIM(LEADING ' ' FROM s) or TRIM(TRAILING ' ' FROM s)",
            ),
            SqlExpr::Ceil { expr, field } | SqlExpr::Floor { expr, field } => {
                match field {
                    ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime) => {}
                    // FLOOR(t TO MINUTE): a timestamp rounded to a unit (docs/sql.md).
                    ast::CeilFloorKind::DateTimeField(unit)
                        if streamform_ir::expr::TimeUnit::from_name(&unit.to_string())
                            .is_some() => {}
                    ast::CeilFloorKind::DateTimeField(unit) => {
                        // The parser's span covers the operand only: point at the whole call.
                        let keyword = first_word(e);
                        let span = byte_span(self.text, e.span())
                            .map(|inner| call_span(self.text, &keyword, inner));
                        self.diags.push(
                            Diagnostic::error(
                                Code::UnsupportedSql,
                                format!(
                                    "model `{}`: {keyword}(... TO {unit}) is not supported yet",
                                    self.model
                                ),
                            )
                            .with_span(span)
                            .with_help(crate::surface::TIME_ROUNDING_HELP),
                        );
                    }
                    ast::CeilFloorKind::Scale(_) => self.refuse(
                        &format!("this form of {}", first_word(e)),
                        e.span(),
                        "write FLOOR(x) or CEIL(x) over a number, or FLOOR(t TO MINUTE) over a timestamp",
                    ),
                }
                self.expr(expr, aggregates_allowed);
            }
            other => self.refuse(
                &format!("`{}`", first_word(other)),
                other.span(),
                HELP_SURFACE,
            ),
        }
    }

    fn function(&mut self, e: &SqlExpr, f: &ast::Function, aggregates_allowed: bool) {
        let name = f.name.to_string().to_ascii_lowercase();
        if f.over.is_some() && over::over_aggregate(&name) {
            self.over_call(e, f, aggregates_allowed);
            return;
        }
        if f.over.is_some() {
            let help = match name.as_str() {
                "row_number" => {
                    "ROW_NUMBER() OVER (…) is a column of its own in a SELECT list, filtered by the query around it (docs/ranking.md): SELECT … FROM (SELECT …, ROW_NUMBER() OVER (PARTITION BY category ORDER BY revenue DESC) AS rn FROM …) WHERE rn <= 3"
                }
                "rank" | "dense_rank" => {
                    "ROW_NUMBER() gives each row its own place (ties in arrival order), and is the ranking Streamform supports (docs/ranking.md): SELECT … FROM (SELECT …, ROW_NUMBER() OVER (PARTITION BY category ORDER BY revenue DESC) AS rn FROM …) WHERE rn <= 3"
                }
                "lead" => {
                    "Flink does not run LEAD in streaming mode (a row's next row has not arrived when the row is emitted); LAG(x) OVER (PARTITION BY … ORDER BY <time attribute>) reads the rows before (docs/over.md)"
                }
                "first_value" | "last_value" => {
                    "reading another row of the partition is not supported yet, but LAG(x, n) OVER (…) (docs/over.md); a join of the stream with itself within time bounds (an interval join, docs/joins.md) pairs each row with the rows near it"
                }
                _ => {
                    "OVER runs SUM, COUNT, MIN, MAX and AVG (docs/over.md), and ROW_NUMBER for a top per partition (docs/ranking.md)"
                }
            };
            self.refuse(
                &format!("{}(…) OVER (…)", name.to_uppercase()),
                e.span(),
                help,
            );
            return;
        }
        if name == "power" || name == "pow" {
            self.refuse(
                "POWER",
                e.span(),
                "POWER computes a float64 whose last digits differ between engines, so the simulator could not promise Flink's value; write the multiplication out (x * x)",
            );
            return;
        }
        if let Some(function) = crate::surface::by_call(&name) {
            self.scalar_function(e, f, function, aggregates_allowed);
            return;
        }
        let Some(aggregate) = crate::surface::aggregate(&name) else {
            let help = match name.as_str() {
                "length" | "len" => "the length of a string is CHAR_LENGTH(s)".to_string(),
                "timestampadd" | "date_add" | "dateadd" | "adddate" => {
                    "move a timestamp with an INTERVAL: seen_at + INTERVAL '1' DAY".to_string()
                }
                "substr" => "write SUBSTRING(s, start, length)".to_string(),
                "position" => "write POSITION(seek IN s), or LOCATE(seek, s)".to_string(),
                "lag" => "LAG is a window function: LAG(x) OVER (PARTITION BY … ORDER BY <time attribute>) (docs/over.md)".to_string(),
                "lead" => "Flink does not run LEAD in streaming mode; LAG(x) OVER (PARTITION BY … ORDER BY <time attribute>) reads the rows before (docs/over.md)".to_string(),
                "ceiling" => "write CEIL(x)".to_string(),
                "tumble_start" | "tumble_end" | "hop_start" | "hop_end" | "session_start"
                | "session_end" | "tumble_rowtime" | "hop_rowtime" | "session_rowtime" => format!(
                    "Flink deprecates group windows and their {}; write the window as a table function in FROM and select window_start and window_end: {}",
                    name.to_uppercase(),
                    crate::window::WINDOW_FORM
                ),
                _ => format!(
                    "the scalar functions are {}; the aggregates are {} (docs/sql.md)",
                    crate::surface::scalar_names(),
                    crate::surface::aggregate_names(false)
                ),
            };
            self.refuse(
                &format!("calling the function `{}`", f.name),
                e.span(),
                &help,
            );
            return;
        };
        if !aggregates_allowed {
            let (message, help) = if self.in_aggregate {
                (
                    "an aggregate inside another aggregate is not supported",
                    "aggregate in an upstream model, then aggregate its column here",
                )
            } else {
                (
                    "an aggregate is not allowed in WHERE",
                    "filter on an aggregate with HAVING",
                )
            };
            self.diags.push(
                Diagnostic::error(
                    Code::InvalidAggregate,
                    format!("model `{}`: {message}", self.model),
                )
                .with_span(byte_span(self.text, e.span()))
                .with_help(help),
            );
            return;
        }
        // FILTER (WHERE c): a condition over the row, as a WHERE's (docs/sql.md).
        if let Some(condition) = &f.filter {
            self.expr(condition, false);
        }
        if !f.within_group.is_empty() || f.null_treatment.is_some() {
            self.refuse(
                &format!("this form of {}()", name.to_uppercase()),
                e.span(),
                "write the aggregate over a plain column",
            );
            return;
        }
        let FunctionArguments::List(list) = &f.args else {
            self.refuse(
                &format!("{}() without arguments", name.to_uppercase()),
                e.span(),
                "write e.g. sum(amount) or count(*)",
            );
            return;
        };
        let distinct = matches!(
            list.duplicate_treatment,
            Some(ast::DuplicateTreatment::Distinct)
        );
        if (distinct && aggregate.distinct.is_none()) || !list.clauses.is_empty() {
            self.refuse(
                &format!("{}(DISTINCT ...)", name.to_uppercase()),
                e.span(),
                "COUNT(DISTINCT x) is the one aggregate over distinct values; for the others, keep one row per value in an upstream model (upsert by the value) and aggregate that",
            );
            return;
        }
        if distinct
            && matches!(
                list.args.as_slice(),
                [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)]
            )
        {
            // The parser's span ends at the name (a `*` has no position): point at the call
            // through its closing parenthesis.
            let span = byte_span(self.text, e.span())
                .map(|r| r.start..through_parenthesis(self.text, r.end));
            self.diags.push(
                Diagnostic::error(
                    Code::UnsupportedSql,
                    format!(
                        "model `{}`: COUNT(DISTINCT *) is not supported yet",
                        self.model
                    ),
                )
                .with_span(span)
                .with_help("count the distinct values of one column: COUNT(DISTINCT customer_id)"),
            );
            return;
        }
        match list.args.as_slice() {
            [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)] if aggregate.star => {}
            [
                FunctionArg::Unnamed(FunctionArgExpr::Expr(
                    SqlExpr::Identifier(_) | SqlExpr::CompoundIdentifier(_),
                )),
            ] => {}
            // An expression: validated like any other, with no aggregate inside it.
            [FunctionArg::Unnamed(FunctionArgExpr::Expr(arg))] => {
                let outer = std::mem::replace(&mut self.in_aggregate, true);
                self.expr(arg, false);
                self.in_aggregate = outer;
            }
            _ => self.refuse(
                &format!("this call of {}()", name.to_uppercase()),
                e.span(),
                "an aggregate takes one argument (count also takes *)",
            ),
        }
    }
}

impl Validator<'_> {
    /// Checks an INTERVAL literal (`span`: the parser's, its value's); whether it reads.
    fn interval(&mut self, i: &ast::Interval, span: sqlparser::tokenizer::Span) -> bool {
        match crate::interval::read(i) {
            Ok(_) => true,
            Err(refusal) => {
                self.diags.push(
                    Diagnostic::error(
                        Code::UnsupportedSql,
                        format!(
                            "model `{}`: {} is not supported",
                            self.model, refusal.message
                        ),
                    )
                    .with_span(interval_span(self.text, i, span))
                    .with_help(refusal.help),
                );
                false
            }
        }
    }

    /// COALESCE, NULLIF and the scalar functions: plain arguments, validated like any
    /// expression.
    fn scalar_function(
        &mut self,
        e: &SqlExpr,
        f: &ast::Function,
        function: &crate::surface::ScalarFunction,
        aggregates_allowed: bool,
    ) {
        let args: Option<Vec<&SqlExpr>> = match &f.args {
            FunctionArguments::List(list)
                if list.duplicate_treatment.is_none() && list.clauses.is_empty() =>
            {
                list.args
                    .iter()
                    .map(|a| match a {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) => Some(x),
                        _ => None,
                    })
                    .collect()
            }
            _ => None,
        };
        let upper = function.shape.split('(').next().unwrap_or(function.shape);
        let shape = function.shape;
        let count_ok = args
            .as_ref()
            .is_some_and(|a| function.arity.accepts(a.len()));
        match args {
            Some(args) if count_ok && f.filter.is_none() && f.over.is_none() => {
                for a in &args {
                    self.expr(a, aggregates_allowed);
                }
                self.string_pattern(upper, &args);
            }
            _ => self.refuse(
                &format!("this call of {upper}()"),
                e.span(),
                &format!("write {shape}"),
            ),
        }
    }
}

impl Validator<'_> {
    /// The pattern of REGEXP, REGEXP_EXTRACT and REGEXP_REPLACE, and the separator of
    /// SPLIT_INDEX, when written as a string in the call (`function`: the name in capitals):
    /// a pattern outside the part of the syntax Java and the simulator read alike, a
    /// REGEXP_REPLACE pattern that can match an empty string, an empty separator
    /// (docs/sql.md, "Regular expressions").
    fn string_pattern(&mut self, function: &str, args: &[&SqlExpr]) {
        let Some(arg @ SqlExpr::Value(v)) = args.get(1) else {
            return;
        };
        let ast::Value::SingleQuotedString(text) = &v.value else {
            return;
        };
        let span = arg.span();
        match function {
            "DATE_FORMAT" => {
                if let Err(what) = streamform_ir::date_format::read(text) {
                    self.refuse(
                        &format!("the DATE_FORMAT pattern '{text}', which uses {what},"),
                        span,
                        "write the pattern with yyyy, yy, MM, M, dd, d, DDD, HH, H, hh, h, mm, m, ss, s and S…S (the fraction), other characters as they are and text in single quotes: 'yyyy-MM-dd HH:mm:ss' (docs/sql.md, \"Formatting timestamps\")",
                    );
                }
            }
            "TO_TIMESTAMP" => {
                if let Err(what) = streamform_ir::date_format::read(text).and_then(|p| p.parser())
                {
                    self.refuse(
                        &format!("the TO_TIMESTAMP pattern '{text}', which uses {what},"),
                        span,
                        crate::surface::TO_TIMESTAMP_HELP,
                    );
                }
            }
            "SPLIT_INDEX" if text.is_empty() => self.refuse(
                "SPLIT_INDEX with an empty separator",
                span,
                "Flink splits on whitespace then, by Java's own rule of what whitespace is; name the separator: SPLIT_INDEX(s, ' ', 0)",
            ),
            "REGEXP" | "REGEXP_EXTRACT" | "REGEXP_REPLACE" if !text.is_empty() => {
                match streamform_ir::java_regex::translate(text) {
                    Err(refused) => self.refuse(
                        &format!("the pattern '{text}', with {},", refused.0),
                        span,
                        crate::surface::REGEX_HELP,
                    ),
                    Ok(p) if function == "REGEXP_REPLACE" && p.matches_empty => self.refuse(
                        &format!("REGEXP_REPLACE with the pattern '{text}', which can match an empty string,"),
                        span,
                        "make the pattern match at least one character (`+` rather than `*`): Flink steps over an empty match one UTF-16 unit at a time",
                    ),
                    Ok(_) => {}
                }
            }
            _ => {}
        }
    }
}

/// Where `SYMMETRIC` follows a BETWEEN in `text`, if it does.
fn symmetric_between(text: &str) -> Option<usize> {
    let upper = text.to_ascii_uppercase();
    let words: Vec<(usize, &str)> = upper
        .split_whitespace()
        .map(|w| (w.as_ptr() as usize - upper.as_ptr() as usize, w))
        .collect();
    words
        .windows(2)
        .find(|pair| pair[0].1 == "BETWEEN" && pair[1].1 == "SYMMETRIC")
        .map(|pair| pair[1].0)
}

/// Where `BOTH FROM`, `LEADING FROM` or `TRAILING FROM` follows `TRIM(` with nothing
/// between (valid SQL the parser does not read): its byte offset and the side, in capitals.
fn trim_without_characters(text: &str) -> Option<(usize, &'static str)> {
    let upper = text.to_ascii_uppercase();
    let words: Vec<(usize, &str)> = upper
        .split(|c: char| c.is_whitespace() || c == '(')
        .filter(|w| !w.is_empty())
        .map(|w| (w.as_ptr() as usize - upper.as_ptr() as usize, w))
        .collect();
    words.windows(3).find_map(|w| {
        let side = ["BOTH", "LEADING", "TRAILING"]
            .into_iter()
            .find(|s| *s == w[1].1)?;
        let opens = upper[w[0].0 + w[0].1.len()..w[1].0].contains('(');
        (w[0].1.ends_with("TRIM") && opens && w[2].1 == "FROM").then_some((w[1].0, side))
    })
}

use crate::window::window_name;

/// The first window call in `text` (`TUMBLE(`, any case, not inside a longer word): its
/// byte offset and name.
fn window_call(text: &str) -> Option<(usize, &'static str)> {
    let upper = text.to_ascii_uppercase();
    ["TUMBLE", "HOP", "SESSION", "CUMULATE"]
        .into_iter()
        .filter_map(|w| {
            upper.match_indices(w).find_map(|(at, _)| {
                let before = upper[..at].chars().next_back();
                let after = upper[at + w.len()..].trim_start().starts_with('(');
                let word_start = before.is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_');
                (after && word_start).then_some((at, w))
            })
        })
        .min()
}

/// Whether `t` is TIMESTAMP, with or without a precision (it is read as timestamp(3)).
fn is_timestamp_type(t: &ast::DataType) -> bool {
    matches!(
        t,
        ast::DataType::Timestamp(
            _,
            ast::TimezoneInfo::None | ast::TimezoneInfo::WithoutTimeZone
        )
    )
}

/// The EXTRACT field `field` is, when it is one the IR has.
fn extract_field(field: &ast::DateTimeField) -> Option<streamform_ir::expr::TimeField> {
    streamform_ir::expr::TimeField::from_name(&field.to_string())
}

/// Whether a call reads the clock (CURRENT_TIMESTAMP, NOW(), PROCTIME(), ...).
fn is_clock(f: &ast::Function) -> bool {
    let name = f.name.to_string().to_ascii_lowercase();
    // UNIX_TIMESTAMP reads the clock without arguments only.
    if name == "unix_timestamp" {
        return matches!(&f.args, ast::FunctionArguments::None)
            || matches!(&f.args, ast::FunctionArguments::List(l) if l.args.is_empty());
    }
    matches!(
        name.as_str(),
        "current_timestamp"
            | "current_date"
            | "current_time"
            | "localtimestamp"
            | "localtime"
            | "now"
            | "proctime"
            | "current_row_timestamp"
    )
}

/// Whether `e` is the string literal `' '`, the one character TRIM may remove.
fn is_space_literal(e: &SqlExpr) -> bool {
    matches!(e, SqlExpr::Value(v) if v.value == SqlValue::SingleQuotedString(" ".into()))
}

/// Whether a CAST target is one Streamform types exactly as Flink does.
///
/// # Errors
/// The help text for a target that is refused.
fn cast_target(t: &ast::DataType) -> Result<(), String> {
    let text = t.to_string().to_ascii_uppercase().replace(' ', "");
    let ok = matches!(
        text.as_str(),
        "INT"
            | "INTEGER"
            | "BIGINT"
            | "DOUBLE"
            | "DOUBLEPRECISION"
            | "STRING"
            | "VARCHAR"
            | "TEXT"
            | "BOOLEAN"
            | "BOOL"
            | "DATE"
    );
    if ok {
        return Ok(());
    }
    if is_timestamp_type(t) {
        return match t {
            ast::DataType::Timestamp(None | Some(3), _) => Ok(()),
            _ => Err("timestamps keep milliseconds: write TIMESTAMP or TIMESTAMP(3)".into()),
        };
    }
    if (text.starts_with("DECIMAL(") || text.starts_with("NUMERIC(")) && text.contains(',') {
        // The declared form's rules: precision 1 to 38, scale 0 to the precision.
        let declared = format!("decimal{}", &text[text.find('(').unwrap_or(0)..]);
        return streamform_ir::DataType::parse(&declared.to_ascii_lowercase())
            .map(|_| ())
            .map_err(|e| {
                format!("{e}; write DECIMAL(p, s) with p from 1 to 38 and s from 0 to p")
            });
    }
    if text == "DECIMAL"
        || text == "NUMERIC"
        || text.starts_with("DECIMAL(")
        || text.starts_with("NUMERIC(")
    {
        return Err(
            "write DECIMAL(precision, scale): engines disagree on what a bare DECIMAL means".into(),
        );
    }
    Err("cast to INT, BIGINT, DOUBLE, DECIMAL(p, s), STRING, BOOLEAN, TIMESTAMP or DATE".into())
}

/// The first word of a syntax node's Debug rendering: its variant name.
fn first_word(node: &impl std::fmt::Debug) -> String {
    let d = format!("{node:?}");
    let word = d
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .next()
        .unwrap_or("construct");
    // `IsDistinctFrom` → `IS DISTINCT FROM`, as SQL spells it.
    let mut out = String::new();
    for (i, c) in word.chars().enumerate() {
        if i > 0 && c.is_uppercase() {
            out.push(' ');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(sql: &str) -> Vec<String> {
        let p = parse_model("m", sql);
        let Some(q) = p.query else {
            return p.diagnostics.into_iter().map(|d| d.message).collect();
        };
        validate("m", sql, &q)
            .1
            .into_iter()
            .map(|d| d.message)
            .collect()
    }

    #[test]
    fn refuses_constructs_by_name() {
        let cases = [
            (
                "SELECT a FROM source('o') CROSS JOIN ref('x')",
                "model `m`: CROSS JOIN is not supported yet",
            ),
            (
                "SELECT a FROM source('o') JOIN ref('x') USING (a)",
                "model `m`: JOIN … USING is not supported yet",
            ),
            (
                "SELECT a FROM source('o') UNION SELECT a FROM source('o')",
                "model `m`: UNION without ALL is not supported yet",
            ),
            (
                "SELECT DISTINCT a FROM source('o')",
                "model `m`: DISTINCT is not supported yet",
            ),
            (
                "SELECT a FROM source('o') LIMIT 5",
                "model `m`: LIMIT is not supported yet",
            ),
            (
                "SELECT sum(DISTINCT a) FROM source('o')",
                "model `m`: SUM(DISTINCT ...) is not supported yet",
            ),
            (
                "SELECT count(DISTINCT *) FROM source('o')",
                "model `m`: COUNT(DISTINCT *) is not supported yet",
            ),
            (
                "SELECT stddev(a) FROM source('o')",
                "model `m`: calling the function `stddev` is not supported yet",
            ),
            (
                "SELECT a ILIKE 'x%' AS c FROM source('o')",
                "model `m`: ILIKE is not supported yet",
            ),
            (
                "SELECT NULLIF(a) AS c FROM source('o')",
                "model `m`: this call of NULLIF() is not supported yet",
            ),
            (
                "SELECT a FROM (SELECT a FROM source('o') ORDER BY a)",
                "model `m`: ORDER BY inside a subquery is not supported yet",
            ),
            (
                "WITH RECURSIVE t AS (SELECT a FROM source('o')) SELECT a FROM t",
                "model `m`: WITH RECURSIVE is not supported yet",
            ),
            (
                "WITH t AS (SELECT a FROM source('o')), u AS (SELECT a FROM t) SELECT a FROM t",
                "model `m`: the CTE `u` is never read",
            ),
            (
                "WITH t AS (SELECT a FROM u), u AS (SELECT a FROM source('o')) SELECT a FROM t",
                "model `m`: the CTE `t` reads `u`, which is defined after it",
            ),
            (
                "WITH t AS (SELECT a FROM t) SELECT a FROM t",
                "model `m`: the CTE `t` reads itself, which is WITH RECURSIVE, and that is not supported yet",
            ),
            (
                "WITH t AS (SELECT a FROM source('o')), t AS (SELECT a FROM source('o')) SELECT a FROM t",
                "model `m`: the CTE `t` is defined twice",
            ),
            (
                "SELECT row_number() OVER () AS r FROM source('o')",
                "model `m`: ROW_NUMBER without ORDER BY is not supported yet",
            ),
            (
                "SELECT a + row_number() OVER (ORDER BY a) AS r FROM source('o')",
                "model `m`: ROW_NUMBER(…) OVER (…) is not supported yet",
            ),
            (
                "SELECT rank() OVER (ORDER BY a) AS r FROM source('o')",
                "model `m`: RANK(…) OVER (…) is not supported yet",
            ),
            (
                "SELECT a FROM orders",
                "model `m` reads the plain table name `orders`",
            ),
            (
                "SELECT 1; SELECT 2",
                "model `m` holds 2 statements; a model is exactly one SELECT",
            ),
            ("", "model `m` is empty"),
        ];
        for (sql, want) in cases {
            assert_eq!(check(sql), vec![want.to_string()], "{sql}");
        }
    }

    #[test]
    fn finds_what_a_model_reads() {
        let sql = "SELECT customer_id\nFROM ref('clean_orders')";
        let q = parse_model("m", sql).query.unwrap();
        let (reads, diags) = validate("m", sql, &q);
        assert!(diags.is_empty());
        let reads = reads.unwrap();
        assert_eq!(reads.first().input, Input::Model("clean_orders".into()));
        assert_eq!(
            &sql[reads.first().span.clone().unwrap()],
            "ref('clean_orders')"
        );
    }

    #[test]
    fn syntax_errors_have_positions() {
        let p = parse_model("m", "SELECT a\nFROM source('o') WHERE");
        let d = &p.diagnostics[0];
        assert!(
            d.message.starts_with("model `m` is not valid SQL: "),
            "{}",
            d.message
        );
        assert!(d.span.is_some());
    }

    /// The written-out size of each model's one select item, or `None` past the limit.
    fn expanded(item: &str) -> u64 {
        let sql = format!("SELECT {item} FROM source('o')");
        let q = Parser::parse_sql(&GenericDialect {}, &sql).unwrap();
        let Statement::Query(q) = &q[0] else {
            unreachable!()
        };
        let mut walk = Expanded {
            children: Vec::new(),
            total: 0,
        };
        assert!(ast::Visit::visit(q.as_ref(), &mut walk).is_continue());
        walk.total
    }

    #[test]
    fn counts_a_repeated_argument_as_often_as_it_is_written_out() {
        // `a + 1` is three expressions; the source('o') argument is one more.
        assert_eq!(expanded("a + 1"), 3 + 1);
        // CASE WHEN (a + 1) = b THEN NULL ELSE (a + 1) END
        assert_eq!(expanded("NULLIF(a + 1, b)"), 2 * 3 + 1 + 3 + 1);
        // CASE WHEN a IS NOT NULL THEN a WHEN b IS NOT NULL THEN b ELSE c END
        assert_eq!(expanded("COALESCE(a, b, c)"), 2 + 2 + 1 + 3 + 1);
        // (a + 1) = 1 OR (a + 1) = 2 OR (a + 1) = 3
        assert_eq!(expanded("a + 1 IN (1, 2, 3)"), 3 * 3 + 3 + 6 + 1);
        // (a + 1) >= 1 AND (a + 1) <= 2
        assert_eq!(expanded("a + 1 BETWEEN 1 AND 2"), 2 * 3 + 2 + 4 + 1);
        // CASE WHEN (a + 1) = 1 THEN 'x' WHEN (a + 1) = 2 THEN 'y' END
        assert_eq!(
            expanded("CASE a + 1 WHEN 1 THEN 'x' WHEN 2 THEN 'y' END"),
            2 * 3 + 4 + 3 + 1
        );
    }

    #[test]
    fn nesting_that_multiplies_past_the_limit_is_refused_where_it_passes_it() {
        let nested =
            |levels: usize| (0..levels).fold("a".to_string(), |e, _| format!("NULLIF({e}, 1)"));
        // n levels write out to 5 * 2^n - 4 expressions: 5,116 for ten, 10,236 for eleven.
        assert!(
            parse_model("m", &format!("SELECT {} FROM source('o')", nested(10)))
                .query
                .is_some()
        );
        let sql = format!("SELECT {} AS x FROM source('o')", nested(20));
        let p = parse_model("m", &sql);
        let d = &p.diagnostics[0];
        assert_eq!(d.code, Code::SqlTooLarge);
        assert_eq!(
            d.message,
            "model `m` grows past 10000 expressions once COALESCE, NULLIF, IN, BETWEEN and CASE x WHEN are written out"
        );
        // The innermost call that alone passes the limit: the eleventh level.
        assert_eq!(&sql[d.span.clone().unwrap()], nested(11));
    }
}
