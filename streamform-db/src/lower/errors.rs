//! Turning the planner's errors into Streamform's diagnostics: which code, what to say and
//! where, in Streamform's type names.

use datafusion_common::{DataFusionError, SchemaError};
use datafusion_sql::planner::SqlToRel;
use sqlparser::ast::{Query, Statement};
use streamform_ir::Field;

use crate::diagnostic::Code;

use super::catalog::{Catalog, with_plain_relation};
use super::lowering::*;

/// Rewrites DataFusion's unknown-column error into ours: the message and a did-you-mean
/// help naming the input's columns.
pub(super) fn unknown_column(e: &DataFusionError, fields: &[Field]) -> Option<(String, String)> {
    let DataFusionError::SchemaError(schema_error, _) = e.find_root() else {
        return None;
    };
    let SchemaError::FieldNotFound {
        field,
        valid_fields,
    } = schema_error.as_ref()
    else {
        return None;
    };
    let name = field.name.as_str();
    // The planner knows what the relation read there holds (a subquery's own columns);
    // without it, the input's.
    let mut names: Vec<&str> = valid_fields.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        names = fields.iter().map(|f| f.name.as_str()).collect();
    }
    let help = crate::diagnostic::suggest(name, &names, "the input's columns are");
    Some((format!("unknown column `{name}`"), help))
}

/// What a HAVING condition may read.
pub(super) const HAVING_HELP: &str = "filter rows with WHERE; a HAVING condition reads GROUP BY columns and aggregates such as SUM(x) > 10";

/// The planner's type errors in Streamform's words, with their code: operands that do not
/// combine, a condition or a `NOT` or `-` over a value of the wrong type, two output columns
/// with one name, and two aggregate calls the planner names alike (it leaves a CAST out of
/// a call's name).
pub(super) fn type_problem(
    e: &DataFusionError,
    at: Option<&str>,
) -> Option<(Code, String, String)> {
    let raw = datafusion_message(e);
    // `Ambiguous reference to unqualified field customer_id`: two relations of a join
    // have it.
    if let Some(name) = raw
        .split("Ambiguous reference to unqualified field ")
        .nth(1)
        .map(|rest| rest.split_whitespace().next().unwrap_or(rest))
    {
        return Some((
            Code::UnknownColumn,
            format!("`{name}` is a column of more than one relation the model reads"),
            format!("name the relation it comes from with its alias, e.g. o.{name}"),
        ));
    }
    if raw.contains("UNION queries have different number of columns") {
        return Some((
            Code::OutputColumns,
            "UNION ALL: the SELECTs list different numbers of columns".into(),
            "each SELECT of a UNION ALL lists the same number of columns, in the same order".into(),
        ));
    }
    if let Some(rest) = raw.strip_prefix("Source table contains ") {
        // `FROM source('x') AS s(a, b)` with another number of names than columns.
        let numbers: Vec<&str> = rest
            .split(' ')
            .filter(|w| w.chars().all(|c| c.is_ascii_digit()) && !w.is_empty())
            .collect();
        if let [columns, names] = numbers.as_slice() {
            return Some((
                Code::OutputColumns,
                format!("the alias names {names} columns, but the input has {columns}"),
                "name every column of the input in order, or leave the list out and rename columns in the SELECT list".into(),
            ));
        }
    }
    let help = "combine values of the same kind (numbers with numbers, strings with strings, a timestamp with a timestamp or an INTERVAL), or CAST one side".to_string();
    if let Some(rest) = raw.strip_prefix("Cannot coerce arithmetic expression ") {
        let operands = rest.strip_suffix(" to valid types").unwrap_or(rest);
        return Some((
            Code::TypeMismatch,
            format!(
                "the operands of `{}` do not combine",
                our_type_names(operands)
            ),
            help,
        ));
    }
    let diagnostic = e.diagnostic().map(|d| d.message.as_str()).unwrap_or("");
    if raw.contains("incompatible types") || diagnostic.contains("incompatible types") {
        let what = at.map_or_else(String::new, |t| format!("`{t}` "));
        return Some((
            Code::TypeMismatch,
            format!("{what}meets a value of a type it does not combine or compare with"),
            help,
        ));
    }
    if let Some(rest) = raw.strip_prefix("Cannot create filter with non-boolean predicate ") {
        let ty = rest.rsplit_once(" returning ").map_or("", |(_, t)| t);
        return Some((
            Code::TypeMismatch,
            format!(
                "a WHERE or HAVING condition is {}, not a boolean",
                our_type_names(ty)
            ),
            "write a condition that is true or false, such as `qty > 0` or `note IS NOT NULL`"
                .into(),
        ));
    }
    let what = at.map_or_else(|| "its operand ".to_string(), |t| format!("`{t}` "));
    if let Some(ty) = raw.strip_prefix("Unary operator 'NOT' requires a boolean expression, got ") {
        // Without a position the planner may name the type before an aggregation.
        let is = match at {
            Some(_) => format!("is {}", our_type_names(ty)),
            None => "is not one".into(),
        };
        return Some((
            Code::TypeMismatch,
            format!("NOT applies to a boolean, and {what}{is}"),
            "negate a condition, such as NOT (qty > 0), or compare the value: qty = 0".into(),
        ));
    }
    if let Some(rest) = raw.strip_prefix("Unary operator '") {
        let sign = rest.split('\'').next().unwrap_or("-");
        return Some((
            Code::TypeMismatch,
            format!(
                "unary {sign} applies to a number, an INTERVAL or a timestamp, and {what}is not one"
            ),
            "apply it to a numeric column, or CAST the value to a number first".into(),
        ));
    }
    if raw.starts_with("Projections require unique expression names") {
        // `... the expression "t.id AS a" at position 0 and "t.cat AS a" at position 1
        // have the same name ...`: the name is the last one's alias, or its column.
        let name = raw
            .split(" have the same name")
            .next()
            .and_then(|head| head.rsplit_once('"'))
            .and_then(|(head, _)| head.rsplit_once('"'))
            .map(|(_, expr)| {
                let name = expr.rsplit_once(" AS ").map_or(expr, |(_, alias)| alias);
                name.rsplit_once('.').map_or(name, |(_, n)| n).to_string()
            })
            // An unnamed column is named in the planner's notation (`sum(t.a + Int64(1))`).
            .filter(|n| crate::config::is_identifier(n));
        return Some((
            Code::OutputColumns,
            match name {
                Some(n) => format!("two output columns are both named `{n}`"),
                None => "two output columns have the same name".into(),
            },
            "give each output column its own name with AS".into(),
        ));
    }
    if let Some(rest) = raw.strip_prefix("Cannot get result type for decimal operation ") {
        // `Decimal128(38, 36) * Decimal128(38, 9): Invalid argument error: Output scale ...`
        let operation = rest.split(':').next().unwrap_or(rest);
        return Some((
            Code::UnsupportedSql,
            format!(
                "{} is not supported yet: its exact result needs more places than a DECIMAL's 38 digits hold (Flink would give some up; Streamform's planner cannot type it)",
                our_type_names(operation)
            ),
            "CAST an operand to a DECIMAL with fewer places first, e.g. CAST(x AS DECIMAL(18, 2))"
                .into(),
        ));
    }
    if raw.starts_with("HAVING clause references") {
        return Some((
            Code::InvalidAggregate,
            "HAVING filters groups, and its condition uses a column that is neither grouped nor inside an aggregate".into(),
            HAVING_HELP.into(),
        ));
    }
    // `Column in SELECT must be in GROUP BY or an aggregate function: ... column
    // "orders.amount" must appear ...`, for a column, a wildcard or a HAVING condition.
    if let Some(rest) = raw.strip_prefix("Column in ") {
        let column = raw
            .split("column \"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .map_or("", |c| c.rsplit_once('.').map_or(c, |(_, n)| n));
        return Some(if rest.starts_with("HAVING") {
            (
                Code::InvalidAggregate,
                format!(
                    "HAVING reads `{column}`, which is neither in GROUP BY nor inside an aggregate"
                ),
                HAVING_HELP.into(),
            )
        } else {
            (
                Code::InvalidAggregate,
                format!(
                    "`{column}` is selected, but is neither in GROUP BY nor inside an aggregate"
                ),
                if streamform_ir::WINDOW_COLUMNS.contains(&column) {
                    format!("add `{column}` to the GROUP BY, beside window_start and window_end")
                } else {
                    "group by it or aggregate it (sum, count, min, max); with GROUP BY, list the columns rather than SELECT *".into()
                },
            )
        });
    }
    if let Some(rest) = raw.strip_prefix("Schema contains qualified field name ") {
        // `orders.customer_id and unqualified field name customer_id which would be ...`
        let name = rest
            .split(" and unqualified field name ")
            .nth(1)
            .and_then(|n| n.split(' ').next())
            .unwrap_or("");
        return Some((
            Code::OutputColumns,
            format!("two output columns are both named `{name}`"),
            "give each output column its own name with AS".into(),
        ));
    }
    if raw.starts_with("Schema contains duplicate unqualified field name ") {
        // The planner names an unnamed column after its expression in its own notation
        // (`sum(t.a + Int64(1))`), and leaves a CAST out of an aggregate call's name.
        return Some((
            Code::OutputColumns,
            "two columns of the query would get the same name".into(),
            "name each output column with AS; two aggregate calls that differ only by a CAST inside, avg(x) and avg(CAST(x AS DOUBLE)), collide even so: compute the CAST as a column in an upstream model".into(),
        ));
    }
    None
}

/// A planner's rendering of operand types (`Utf8 + Interval(MonthDayNano)`) with Streamform's
/// type names (`string + INTERVAL`).
pub(super) fn our_type_names(text: &str) -> String {
    let mut out = text.to_string();
    for (theirs, ours) in [
        ("Interval(MonthDayNano)", "INTERVAL"),
        ("Timestamp(ms)", "timestamp"),
        ("Timestamp(Millisecond, None)", "timestamp"),
        ("Utf8View", "string"),
        ("Date32", "date"),
        ("LargeUtf8", "string"),
        ("Utf8", "string"),
        ("Int32", "int32"),
        ("Int64", "int64"),
        ("Float64", "float64"),
        ("Boolean", "boolean"),
        ("Decimal128", "decimal"),
    ] {
        out = out.replace(theirs, ours);
    }
    // `decimal(12, 2)` as Streamform writes it: `decimal(12,2)`.
    let mut rest = out.as_str();
    let mut written = String::with_capacity(out.len());
    while let Some(at) = rest.find("decimal(") {
        let (head, tail) = rest.split_at(at + "decimal(".len());
        written.push_str(head);
        let end = tail.find(')').map_or(tail.len(), |e| e + 1);
        written.push_str(&tail[..end].replace(", ", ","));
        rest = &tail[end..];
    }
    written.push_str(rest);
    written
}

/// Where in the query the planner failed, found by planning parts of it: in a UNION ALL, the
/// SELECT that fails on its own (or the second, when only the union fails); in a SELECT, the
/// first select item that fails with the items before it (WHERE, HAVING and ORDER BY left
/// out), else the WHERE, else the HAVING.
pub(super) fn failing_part(
    planner: &SqlToRel<'_, Catalog>,
    query: &Query,
    text: &str,
) -> Option<std::ops::Range<usize>> {
    use sqlparser::ast::{SetExpr, Spanned};
    let plans = |q: &Query| {
        let statement = Statement::Query(Box::new(with_plain_relation(q)));
        planner.sql_statement_to_plan(statement).is_ok()
    };
    // In a UNION ALL, the first SELECT that does not plan on its own, or else the SELECT
    // after the operator (the union itself failed: its columns differ).
    if let SetExpr::SetOperation { left, right, .. } = query.body.as_ref() {
        return [left, right]
            .into_iter()
            .find_map(|branch| {
                let mut one = query.clone();
                one.body = branch.clone();
                one.order_by = None;
                (!plans(&one))
                    .then(|| failing_part(planner, &one, text))
                    .flatten()
            })
            .or_else(|| crate::sql::byte_span(text, right.span()));
    }
    let SetExpr::Select(select) = query.body.as_ref() else {
        return None;
    };
    // A subquery in FROM that does not plan on its own holds the failing part.
    if let Some(sqlparser::ast::TableFactor::Derived { subquery, .. }) =
        select.from.first().map(|t| &t.relation)
        && !plans(subquery)
    {
        return failing_part(planner, subquery, text);
    }
    for i in 0..select.projection.len() {
        let mut one = query.clone();
        one.order_by = None;
        one.limit_clause = None;
        if let SetExpr::Select(s) = one.body.as_mut() {
            s.projection.truncate(i + 1);
            s.selection = None;
            s.having = None;
        }
        if !plans(&one) {
            return item_span(select, i, text);
        }
    }
    let mut without_having = query.clone();
    if let SetExpr::Select(s) = without_having.body.as_mut() {
        s.having = None;
    }
    match (&select.selection, &select.having) {
        (Some(w), _) if !plans(&without_having) => crate::sql::byte_span(text, w.span()),
        (_, Some(h)) => crate::sql::byte_span(text, h.span()),
        _ => None,
    }
}

/// The code of a DataFusion planning error.
pub(super) fn planning_code(e: &DataFusionError) -> Code {
    match e.find_root() {
        DataFusionError::SchemaError(e, _)
            if matches!(e.as_ref(), SchemaError::FieldNotFound { .. }) =>
        {
            Code::UnknownColumn
        }
        DataFusionError::NotImplemented(_) => Code::UnsupportedSql,
        DataFusionError::SQL(..) => Code::SqlSyntax,
        _ => Code::InvalidQuery,
    }
}

/// Cleans a DataFusion error into one line for a diagnostic.
pub(super) fn datafusion_message(e: &datafusion_common::DataFusionError) -> String {
    let raw = e.strip_backtrace();
    let mut m = raw.as_str();
    for prefix in [
        "Error during planning: ",
        "Schema error: ",
        "This feature is not implemented: ",
        "SQL error: ",
    ] {
        m = m.strip_prefix(prefix).unwrap_or(m);
    }
    m.lines().next().unwrap_or(m).to_string()
}
