//! The functions a model may call, scalar and aggregate: the one table that the validator
//! (`sql.rs`: which calls are accepted, with how many arguments, and the help for a wrong
//! call) and lowering (`lower/`: what DataFusion's planner is told exists, and which IR
//! function each planned name becomes) both read, so a function is added here, once
//! (docs/sql.md lists them for users).

use streamform_ir::{AggFunc, Func};

/// The help for a TO_TIMESTAMP pattern that is refused.
pub const TO_TIMESTAMP_HELP: &str = "write a whole date (yyyy or uuuu or yy, MM or M, dd or d), a time from the hour (HH or H, then mm, ss, S…S) or both, other characters as they are and text in single quotes: 'dd/MM/yyyy HH:mm:ss' (docs/sql.md, \"Reading timestamps\")";

/// How many arguments a function takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    /// Exactly this many.
    Exactly(usize),
    /// This many or more.
    AtLeast(usize),
    /// From the first to the second, both included.
    Between(usize, usize),
}

impl Arity {
    /// Whether `n` arguments fit.
    pub fn accepts(self, n: usize) -> bool {
        match self {
            Arity::Exactly(k) => n == k,
            Arity::AtLeast(k) => n >= k,
            Arity::Between(lo, hi) => (lo..=hi).contains(&n),
        }
    }
}

/// One scalar function of the SQL surface.
#[derive(Debug, Clone, Copy)]
pub struct ScalarFunction {
    /// The name it is called by, in lowercase, when it is written as a call (`upper(s)`);
    /// `None` for a function with its own syntax (`TRIM(... FROM s)`, `SUBSTRING(s FROM
    /// a)`, `EXTRACT(f FROM t)`, `FLOOR(x)`, `CEIL(x)`), which the validator reads apart.
    pub call: Option<&'static str>,
    /// How many arguments a call takes.
    pub arity: Arity,
    /// How to write it, for the help of a wrong call.
    pub shape: &'static str,
    /// DataFusion's names for it once planned, each with the IR function it lowers to:
    /// `None` where lowering builds something else (`mod` is `%`; `date_part` is EXTRACT,
    /// whose field is an argument). Empty for the functions DataFusion plans itself
    /// (COALESCE and NULLIF become its own expressions).
    pub planned: &'static [(&'static str, Option<Func>)],
}

const fn call(
    name: &'static str,
    arity: Arity,
    shape: &'static str,
    planned: &'static [(&'static str, Option<Func>)],
) -> ScalarFunction {
    ScalarFunction {
        call: Some(name),
        arity,
        shape,
        planned,
    }
}

const fn syntax(
    shape: &'static str,
    planned: &'static [(&'static str, Option<Func>)],
) -> ScalarFunction {
    ScalarFunction {
        call: None,
        arity: Arity::AtLeast(1),
        shape,
        planned,
    }
}

use Arity::{AtLeast, Between, Exactly};

/// The help for a regular expression outside the part of the syntax Java and the
/// simulator read alike.
pub const REGEX_HELP: &str = "Flink reads a pattern with Java's regular expressions and the simulator with Rust's; write it in the part they read alike: literals, `.`, classes (`[a-z]`, `\\d`, `\\w`, `\\s`), repetitions, groups, `|` and the anchors `^` and `$` (docs/sql.md, \"Regular expressions\")";

/// Every scalar function a model may call.
pub const SCALAR_FUNCTIONS: &[ScalarFunction] = &[
    call("coalesce", AtLeast(1), "COALESCE(a, b, ...)", &[]),
    call("nullif", Exactly(2), "NULLIF(a, b)", &[]),
    // Read as CASE WHEN condition THEN a ELSE b END before planning (docs/sql.md).
    call("if", Exactly(3), "IF(condition, a, b)", &[]),
    call(
        "upper",
        Exactly(1),
        "UPPER(s)",
        &[("upper", Some(Func::Upper))],
    ),
    call(
        "lower",
        Exactly(1),
        "LOWER(s)",
        &[("lower", Some(Func::Lower))],
    ),
    call(
        "char_length",
        Exactly(1),
        "CHAR_LENGTH(s)",
        &[("char_length", Some(Func::CharLength))],
    ),
    call(
        "character_length",
        Exactly(1),
        "CHARACTER_LENGTH(s)",
        &[("character_length", Some(Func::CharLength))],
    ),
    call(
        "concat",
        AtLeast(1),
        "CONCAT(a, b, ...)",
        &[("concat", Some(Func::Concat))],
    ),
    call("abs", Exactly(1), "ABS(x)", &[("abs", Some(Func::Abs))]),
    call(
        "round",
        Exactly(2),
        "ROUND(x, digits)",
        &[("round", Some(Func::Round))],
    ),
    call("mod", Exactly(2), "MOD(a, b)", &[("mod", None)]),
    call(
        "replace",
        Exactly(3),
        "REPLACE(s, search, replacement)",
        &[("replace", Some(Func::Replace))],
    ),
    // POSITION(seek IN s) is written as a call of `position` before planning.
    syntax("POSITION(seek IN s)", &[("position", Some(Func::Position))]),
    call(
        "locate",
        Exactly(2),
        "LOCATE(seek, s)",
        &[("locate", Some(Func::Position))],
    ),
    call(
        "split_index",
        Exactly(3),
        "SPLIT_INDEX(s, separator, index)",
        &[("split_index", Some(Func::SplitIndex))],
    ),
    call(
        "regexp",
        Exactly(2),
        "REGEXP(s, pattern)",
        &[("regexp", Some(Func::Regexp))],
    ),
    call(
        "regexp_extract",
        Between(2, 3),
        "REGEXP_EXTRACT(s, pattern[, group])",
        &[("regexp_extract", Some(Func::RegexpExtract))],
    ),
    call(
        "date_format",
        Exactly(2),
        "DATE_FORMAT(t, 'yyyy-MM-dd HH:mm')",
        &[("date_format", Some(Func::DateFormat))],
    ),
    // With one argument, read as TRY_CAST(s AS TIMESTAMP), which Flink parses the same way
    // (docs/sql.md).
    call(
        "to_timestamp",
        Between(1, 2),
        "TO_TIMESTAMP(s), for a string written yyyy-MM-dd HH:mm:ss, or TO_TIMESTAMP(s, 'dd/MM/yyyy HH:mm')",
        &[("to_timestamp", None)],
    ),
    call(
        "regexp_replace",
        Exactly(3),
        "REGEXP_REPLACE(s, pattern, replacement)",
        &[("regexp_replace", Some(Func::RegexpReplace))],
    ),
    syntax(
        "TRIM([BOTH | LEADING | TRAILING] FROM s)",
        &[
            ("trim", Some(Func::Trim)),
            ("btrim", Some(Func::Trim)),
            ("ltrim", Some(Func::TrimLeading)),
            ("rtrim", Some(Func::TrimTrailing)),
        ],
    ),
    syntax(
        "SUBSTRING(s FROM start FOR length)",
        &[("substr", Some(Func::Substring))],
    ),
    syntax("EXTRACT(field FROM t)", &[("date_part", None)]),
    syntax("FLOOR(x)", &[("floor", Some(Func::Floor))]),
    syntax("CEIL(x)", &[("ceil", Some(Func::Ceil))]),
    // Lowering rewrites `FLOOR(t TO unit)` into a call of this name (lower/catalog.rs).
    syntax("FLOOR(t TO unit)", &[("floor_to", None)]),
    syntax("CEIL(t TO unit)", &[("ceil_to", None)]),
];

/// The help for a unit `FLOOR(t TO unit)` or `CEIL(t TO unit)` does not take.
pub const TIME_ROUNDING_HELP: &str = "a timestamp rounds to SECOND, MINUTE, HOUR or DAY; for a month or a year, use EXTRACT(YEAR FROM t) and EXTRACT(MONTH FROM t)";

/// The function called `name` (lowercase), if a model may call it by that name.
pub fn by_call(name: &str) -> Option<&'static ScalarFunction> {
    SCALAR_FUNCTIONS.iter().find(|f| f.call == Some(name))
}

/// Every name DataFusion's planner is told of, with the IR function it lowers to.
pub fn planned() -> impl Iterator<Item = (&'static str, Option<Func>)> {
    SCALAR_FUNCTIONS
        .iter()
        .flat_map(|f| f.planned.iter().copied())
}

/// One aggregate function of the SQL surface.
#[derive(Debug, Clone, Copy)]
pub struct AggregateFunction {
    /// Its name, in lowercase.
    pub name: &'static str,
    /// What a call of it is in the IR.
    pub func: AggFunc,
    /// What a call over the distinct values (`COUNT(DISTINCT x)`) is, for a function that
    /// takes DISTINCT.
    pub distinct: Option<AggFunc>,
    /// Whether it takes `*` for its argument (`COUNT(*)`: every row).
    pub star: bool,
}

const fn aggregate_fn(
    name: &'static str,
    func: AggFunc,
    distinct: Option<AggFunc>,
    star: bool,
) -> AggregateFunction {
    AggregateFunction {
        name,
        func,
        distinct,
        star,
    }
}

/// Every aggregate function a model may call (in a GROUP BY or a window aggregation; Flink
/// accepts each over every window kind).
pub const AGGREGATE_FUNCTIONS: &[AggregateFunction] = &[
    aggregate_fn("sum", AggFunc::Sum, None, false),
    aggregate_fn("count", AggFunc::Count, Some(AggFunc::CountDistinct), true),
    aggregate_fn("min", AggFunc::Min, None, false),
    aggregate_fn("max", AggFunc::Max, None, false),
    aggregate_fn("avg", AggFunc::Avg, None, false),
];

/// The aggregate function called `name` (lowercase), if a model may call it.
pub fn aggregate(name: &str) -> Option<&'static AggregateFunction> {
    AGGREGATE_FUNCTIONS.iter().find(|f| f.name == name)
}

/// The scalar functions as a help line lists them, by the name they are written with:
/// `COALESCE, NULLIF, UPPER, …, FLOOR and CEIL`.
pub fn scalar_names() -> String {
    let mut names: Vec<&str> = Vec::new();
    for f in SCALAR_FUNCTIONS {
        let name = f.shape.split(['(', ' ']).next().unwrap_or(f.shape);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The aggregates as a help line lists them: `sum, count, min, max and avg`, with
/// `count(distinct x)` after `count` when `distinct`.
pub fn aggregate_names(distinct: bool) -> String {
    let names: Vec<String> = AGGREGATE_FUNCTIONS
        .iter()
        .flat_map(|f| {
            let mut names = vec![f.name.to_string()];
            if distinct && f.distinct.is_some() {
                names.push(format!("{}(distinct x)", f.name));
            }
            names
        })
        .collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_is_documented_and_every_planned_name_is_unique() {
        let sql_md = include_str!("../../docs/sql.md").to_ascii_uppercase();
        for f in SCALAR_FUNCTIONS {
            let name = f.shape.split('(').next().unwrap();
            assert!(sql_md.contains(name), "docs/sql.md does not list {name}");
        }
        let names: Vec<&str> = planned().map(|(n, _)| n).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(names.len(), unique.len(), "{names:?}");
        assert!(by_call("upper").is_some_and(|f| f.arity.accepts(1) && !f.arity.accepts(2)));
        assert!(by_call("trim").is_none(), "TRIM is read as its own syntax");
    }

    #[test]
    fn every_aggregate_is_documented_and_named_once() {
        let sql_md = include_str!("../../docs/sql.md").to_ascii_lowercase();
        for f in AGGREGATE_FUNCTIONS {
            assert!(
                sql_md.contains(&format!("`{}(", f.name)),
                "docs/sql.md does not list {}",
                f.name
            );
            assert_eq!(f.func.name(), f.name);
            assert!(
                by_call(f.name).is_none(),
                "{} is a scalar function too",
                f.name
            );
        }
        assert_eq!(aggregate_names(false), "sum, count, min, max and avg");
        assert_eq!(
            aggregate_names(true),
            "sum, count, count(distinct x), min, max and avg"
        );
        assert!(
            aggregate("count")
                .is_some_and(|f| f.star && f.distinct == Some(AggFunc::CountDistinct))
        );
        assert!(aggregate("stddev").is_none());
    }
}
