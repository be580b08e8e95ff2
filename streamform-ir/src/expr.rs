//! The expression tree of Filter and Project nodes: every variant typed.
//!
//! See docs/architecture.md, "`streamform-ir`" (the expression tree), and docs/sql.md,
//! "Expressions" (types).

use std::fmt;

use crate::types::{ArithOp, DataType};
use crate::value::Value;

/// Comparison and logical operators (arithmetic is [`ArithOp`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// An arithmetic operator: `+`, `-`, `*`, `/` or `%`.
    Arith(ArithOp),
    /// `=`.
    Eq,
    /// `<>`.
    NotEq,
    /// `<`.
    Lt,
    /// `<=`.
    LtEq,
    /// `>`.
    Gt,
    /// `>=`.
    GtEq,
    /// Logical `AND`.
    And,
    /// Logical `OR`.
    Or,
}

/// A scalar function, with Flink's semantics (docs/sql.md); the frontend checks the argument
/// types, and [`Func::result_type`] gives the result's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Func {
    /// `UPPER(s)`.
    Upper,
    /// `LOWER(s)`.
    Lower,
    /// `TRIM(s)`: spaces (only the space character) off both ends.
    Trim,
    /// `TRIM(LEADING FROM s)`.
    TrimLeading,
    /// `TRIM(TRAILING FROM s)`.
    TrimTrailing,
    /// `CHAR_LENGTH(s)`: the number of characters (code points).
    CharLength,
    /// `CONCAT(a, b, ...)` and `a || b`: null when any argument is null.
    Concat,
    /// `SUBSTRING(s, start[, length])`: 1-based; a start of 0 counts as 1 and a negative
    /// start counts from the end, as Flink does.
    Substring,
    /// `ABS(x)`, in the argument's type.
    Abs,
    /// `FLOOR(x)`: a decimal(p,s) gives decimal(p,0); integers and float64 keep their type.
    Floor,
    /// `CEIL(x)`, typed as `FLOOR`.
    Ceil,
    /// `ROUND(x, n)` over a decimal with a literal `n`: half away from zero.
    Round,
    /// `s LIKE pattern`: `%` any run of characters, `_` one; no escape character.
    Like,
    /// `REPLACE(s, search, replacement)`: every occurrence of `search`, left to right and
    /// not overlapping, replaced (Java's `String.replace`).
    Replace,
    /// `POSITION(seek IN s)` and `LOCATE(seek, s)`: the 1-based character position of the
    /// first `seek` in `s`, 0 when there is none, 1 for an empty `seek`.
    Position,
    /// `SPLIT_INDEX(s, separator, index)`: the 0-based `index`-th piece of `s` cut at each
    /// `separator`; null for a negative index, an index past the last piece or an empty `s`.
    SplitIndex,
    /// `REGEXP(s, pattern)`: whether the Java pattern matches somewhere in `s`
    /// ([`crate::java_regex`]); false for an empty pattern.
    Regexp,
    /// `REGEXP_EXTRACT(s, pattern[, group])`: the group (0, the whole match, when left out)
    /// of the first match; null without a match, for a group the pattern does not have,
    /// or one that did not take part.
    RegexpExtract,
    /// `REGEXP_REPLACE(s, pattern, replacement)`: every match replaced by the replacement,
    /// taken literally (`$1` is not a group).
    RegexpReplace,
    /// `DATE_FORMAT(t, pattern)`: the timestamp printed by a Java pattern, read as UTC
    /// ([`crate::date_format`]).
    DateFormat,
    /// `TO_TIMESTAMP(s, pattern)`: the string read with a Java pattern, or null where it
    /// does not read ([`crate::date_format::TimestampParser`]).
    ToTimestamp,
    /// `EXTRACT(field FROM t)`: an int64 field of a timestamp read as UTC.
    Extract(TimeField),
    /// `FLOOR(t TO unit)`: the timestamp rounded down to a whole unit (UTC).
    FloorTo(TimeUnit),
    /// `CEIL(t TO unit)`: the timestamp rounded up to a whole unit; one already whole stays.
    CeilTo(TimeUnit),
}

/// A unit a timestamp is rounded to by `FLOOR(t TO unit)` and `CEIL(t TO unit)`: a fixed
/// number of milliseconds. Flink's calendar units (WEEK, MONTH, QUARTER, YEAR) are not
/// among them: Flink starts a week on Sunday and rounds some weeks before 1970 up, and
/// reads dates before 1582 on the Julian calendar (docs/sql.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    /// A second.
    Second,
    /// A minute.
    Minute,
    /// An hour.
    Hour,
    /// A day, from midnight UTC.
    Day,
}

impl TimeUnit {
    /// Every unit.
    pub const ALL: [TimeUnit; 4] = [
        TimeUnit::Second,
        TimeUnit::Minute,
        TimeUnit::Hour,
        TimeUnit::Day,
    ];

    /// The unit a name (any case) stands for.
    pub fn from_name(name: &str) -> Option<TimeUnit> {
        TimeUnit::ALL
            .into_iter()
            .find(|u| u.name().eq_ignore_ascii_case(name))
    }

    /// The name as SQL writes it: `SECOND`, `MINUTE`, `HOUR`, `DAY`.
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::Second => "SECOND",
            TimeUnit::Minute => "MINUTE",
            TimeUnit::Hour => "HOUR",
            TimeUnit::Day => "DAY",
        }
    }

    /// Its length in milliseconds.
    pub fn millis(self) -> i64 {
        match self {
            TimeUnit::Second => 1_000,
            TimeUnit::Minute => 60_000,
            TimeUnit::Hour => 3_600_000,
            TimeUnit::Day => 86_400_000,
        }
    }
}

/// A field of a timestamp, for EXTRACT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeField {
    /// The year.
    Year,
    /// 1 to 12.
    Month,
    /// The day of the month, 1 to 31.
    Day,
    /// 0 to 23.
    Hour,
    /// 0 to 59.
    Minute,
    /// 0 to 59 (the fraction is dropped).
    Second,
    /// 1 (Sunday) to 7 (Saturday), as Flink counts.
    DayOfWeek,
}

impl TimeField {
    /// Every field, in the order EXTRACT's help lists them.
    pub const ALL: [TimeField; 7] = [
        TimeField::Year,
        TimeField::Month,
        TimeField::Day,
        TimeField::Hour,
        TimeField::Minute,
        TimeField::Second,
        TimeField::DayOfWeek,
    ];

    /// The field a name (any case) stands for: `YEAR`, ..., `DOW` or `DAYOFWEEK`.
    pub fn from_name(name: &str) -> Option<TimeField> {
        if name.eq_ignore_ascii_case("DAYOFWEEK") {
            return Some(TimeField::DayOfWeek);
        }
        TimeField::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
    }

    /// The field as EXTRACT writes it.
    pub fn name(self) -> &'static str {
        match self {
            TimeField::Year => "YEAR",
            TimeField::Month => "MONTH",
            TimeField::Day => "DAY",
            TimeField::Hour => "HOUR",
            TimeField::Minute => "MINUTE",
            TimeField::Second => "SECOND",
            TimeField::DayOfWeek => "DOW",
        }
    }
}

impl Func {
    /// The name as SQL writes the call.
    pub fn name(self) -> &'static str {
        match self {
            Func::Upper => "UPPER",
            Func::Lower => "LOWER",
            Func::Trim | Func::TrimLeading | Func::TrimTrailing => "TRIM",
            Func::CharLength => "CHAR_LENGTH",
            Func::Concat => "CONCAT",
            Func::Substring => "SUBSTRING",
            Func::Abs => "ABS",
            Func::Floor => "FLOOR",
            Func::Ceil => "CEIL",
            Func::Round => "ROUND",
            Func::Like => "LIKE",
            Func::Replace => "REPLACE",
            Func::Position => "POSITION",
            Func::SplitIndex => "SPLIT_INDEX",
            Func::Regexp => "REGEXP",
            Func::RegexpExtract => "REGEXP_EXTRACT",
            Func::RegexpReplace => "REGEXP_REPLACE",
            Func::DateFormat => "DATE_FORMAT",
            Func::ToTimestamp => "TO_TIMESTAMP",
            Func::Extract(_) => "EXTRACT",
            Func::FloorTo(_) => "FLOOR",
            Func::CeilTo(_) => "CEIL",
        }
    }

    /// Whether the call can be null where none of its arguments is: a piece past the last,
    /// a group that did not match, a string that does not read as a time.
    pub fn may_return_null(self) -> bool {
        matches!(
            self,
            Func::SplitIndex | Func::RegexpExtract | Func::ToTimestamp
        )
    }

    /// The result type over arguments of `args`' types (`digits`: ROUND's literal number
    /// of decimals), or `None` when the function does not take them.
    pub fn result_type(self, args: &[DataType], digits: Option<u8>) -> Option<DataType> {
        use DataType::*;
        let strings = !args.is_empty() && args.iter().all(|t| *t == String);
        Some(match (self, args) {
            (
                Func::Upper | Func::Lower | Func::Trim | Func::TrimLeading | Func::TrimTrailing,
                [String],
            ) => String,
            (Func::CharLength, [String]) => Int32,
            (Func::Concat, _) if strings => String,
            (Func::Substring, [String, Int32 | Int64])
            | (Func::Substring, [String, Int32 | Int64, Int32 | Int64]) => String,
            (Func::Abs, [t]) if t.is_numeric() => *t,
            (Func::Floor | Func::Ceil, [Decimal { precision, .. }]) => Decimal {
                precision: *precision,
                scale: 0,
            },
            (Func::Floor | Func::Ceil, [t]) if t.is_numeric() => *t,
            // Flink's rule: rounding may carry a digit, so the precision grows by one.
            (Func::Round, [Decimal { precision, scale }, Int32 | Int64]) => {
                let n = digits?;
                if n >= *scale {
                    Decimal {
                        precision: *precision,
                        scale: *scale,
                    }
                } else {
                    Decimal {
                        precision: (1 + precision - scale + n)
                            .min(crate::types::MAX_DECIMAL_PRECISION),
                        scale: n,
                    }
                }
            }
            (Func::Like, [String, String]) => Boolean,
            (Func::Replace | Func::RegexpReplace, [String, String, String]) => String,
            (Func::Position, [String, String]) => Int32,
            // Flink's index is an INT.
            (Func::SplitIndex, [String, String, Int32]) => String,
            (Func::Regexp, [String, String]) => Boolean,
            (Func::RegexpExtract, [String, String] | [String, String, Int32]) => String,
            (Func::DateFormat, [Timestamp, String]) => String,
            (Func::ToTimestamp, [String, String]) => Timestamp,
            (Func::Extract(_), [Timestamp]) => Int64,
            (
                Func::Extract(
                    TimeField::Year | TimeField::Month | TimeField::Day | TimeField::DayOfWeek,
                ),
                [Date],
            ) => Int64,
            (Func::FloorTo(_) | Func::CeilTo(_), [Timestamp]) => Timestamp,
            _ => return None,
        })
    }
}

impl BinaryOp {
    /// How the operator is written in renderings: `+`, `<>`, `AND`.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Arith(ArithOp::Add) => "+",
            BinaryOp::Arith(ArithOp::Sub) => "-",
            BinaryOp::Arith(ArithOp::Mul) => "*",
            BinaryOp::Arith(ArithOp::Div) => "/",
            BinaryOp::Arith(ArithOp::Mod) => "%",
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::LtEq => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::GtEq => ">=",
            BinaryOp::And => "AND",
            BinaryOp::Or => "OR",
        }
    }
}

/// A span of time as an INTERVAL literal writes it (docs/sql.md): a number of calendar months
/// (`INTERVAL '1' MONTH`, `INTERVAL '1-6' YEAR TO MONTH`) and a number of milliseconds
/// (`INTERVAL '5' MINUTE`, `INTERVAL '1 02:00:00' DAY TO SECOND`). Either may be negative;
/// one literal has only one of the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Interval {
    /// Calendar months; added with the day of the month kept, or cut to the month's last
    /// day where the month is shorter.
    pub months: i32,
    /// Milliseconds.
    pub millis: i64,
}

impl Interval {
    /// The interval with its sign turned: what `t - i` adds.
    pub fn negated(self) -> Interval {
        Interval {
            months: -self.months,
            millis: -self.millis,
        }
    }

    /// Whether the interval moves backward (is below zero).
    pub fn is_negative(self) -> bool {
        self.months < 0 || self.millis < 0
    }
}

/// The largest of DAY, HOUR, MINUTE and SECOND that holds `ms` whole, with its size in
/// milliseconds; `None` for a fraction of a second.
pub fn largest_unit(ms: u64) -> Option<(u64, &'static str)> {
    [
        (86_400_000, "DAY"),
        (3_600_000, "HOUR"),
        (60_000, "MINUTE"),
        (1000, "SECOND"),
    ]
    .into_iter()
    .find(|(size, _)| ms.is_multiple_of(*size))
}

impl fmt::Display for Interval {
    /// As SQL writes the literal, without its sign, in the largest unit that holds it
    /// exactly: `INTERVAL '5' MINUTE`, `INTERVAL '1.250' SECOND`, `INTERVAL '1-6' YEAR TO
    /// MONTH`, `INTERVAL '2' MONTH`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let months = self.months.unsigned_abs();
        let millis = self.millis.unsigned_abs();
        let mut parts = Vec::new();
        if months != 0 || millis == 0 {
            parts.push(if months.is_multiple_of(12) && months != 0 {
                format!("INTERVAL '{}' YEAR", months / 12)
            } else if months > 12 {
                format!("INTERVAL '{}-{}' YEAR TO MONTH", months / 12, months % 12)
            } else {
                format!("INTERVAL '{months}' MONTH")
            });
        }
        if millis != 0 {
            let unit = largest_unit(millis);
            const DAY: u64 = 86_400_000;
            parts.push(match unit {
                Some((size, name)) if size == DAY || millis < DAY => {
                    format!("INTERVAL '{}' {name}", millis / size)
                }
                None if millis < DAY => {
                    format!("INTERVAL '{}.{:03}' SECOND", millis / 1000, millis % 1000)
                }
                // A day and more that is not whole days: the range form.
                _ => {
                    let rest = millis % DAY;
                    let (h, m, sec, ms) = (
                        rest / 3_600_000,
                        rest % 3_600_000 / 60_000,
                        rest % 60_000 / 1000,
                        rest % 1000,
                    );
                    let fraction = if ms == 0 {
                        String::new()
                    } else {
                        format!(".{ms:03}")
                    };
                    format!(
                        "INTERVAL '{} {h:02}:{m:02}:{sec:02}{fraction}' DAY TO SECOND",
                        millis / DAY
                    )
                }
            });
        }
        f.write_str(&parts.join(" + "))
    }
}

/// A typed scalar expression over the columns of one input row.
///
/// Every variant knows its result type ([`Expr::data_type`]); columns are referenced by
/// name and resolved against the input schema by the executor.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    /// A reference to a column of the input row.
    Column {
        /// The column's name in the input schema.
        name: String,
        /// The column's type.
        ty: DataType,
    },
    /// A literal; `Value::Null` is a typed null.
    Literal {
        /// The constant.
        value: Value,
        /// The literal's type.
        ty: DataType,
    },
    /// `NOT e`: negation of a boolean expression.
    Not(Box<Expr>),
    /// `-e`: arithmetic negation, in the operand's type.
    Negative(Box<Expr>),
    /// A binary operator applied to two operands.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// The left operand.
        left: Box<Expr>,
        /// The right operand.
        right: Box<Expr>,
        /// The result type: boolean for comparisons and logic; for arithmetic, as
        /// [`crate::types::arithmetic_type`] computes it (docs/sql.md).
        ty: DataType,
    },
    /// `e IS NULL` or `e IS NOT NULL`: a boolean that is never null itself.
    IsNull {
        /// The operand tested.
        expr: Box<Expr>,
        /// `true` for `IS NOT NULL`.
        negated: bool,
    },
    /// `CAST(e AS ty)`; which conversions are allowed is [`crate::types::castable`].
    Cast {
        /// The operand converted.
        expr: Box<Expr>,
        /// The target type.
        ty: DataType,
    },
    /// `TRY_CAST(e AS ty)`: as [`Expr::Cast`], but null where the cast fails (a string that
    /// is not a number, a value out of the type's range) instead of stopping the run.
    TryCast {
        /// The operand converted.
        expr: Box<Expr>,
        /// The target type.
        ty: DataType,
    },
    /// A scalar function applied to its arguments.
    Call {
        /// The function.
        func: Func,
        /// Its arguments, in order.
        args: Vec<Expr>,
        /// The result type, [`Func::result_type`].
        ty: DataType,
    },
    /// `t + INTERVAL ...` and `t - INTERVAL ...` (the interval then negated): the
    /// timestamp `t` moved by the interval, months first; null when `t` is null.
    PlusInterval {
        /// The timestamp moved.
        expr: Box<Expr>,
        /// How far, with its sign.
        interval: Interval,
    },
    /// `CASE WHEN c THEN r ... [ELSE e] END`: the result of the first branch whose
    /// condition is true (a null condition is not), else `otherwise`, else null. Every
    /// result has the type `ty` (the frontend casts them to it); a simple CASE, COALESCE
    /// and NULLIF are written in this form.
    Case {
        /// (condition, result) pairs, in order.
        branches: Vec<(Expr, Expr)>,
        /// The ELSE result.
        otherwise: Option<Box<Expr>>,
        /// The result type, [`crate::types::common_type`] of the results.
        ty: DataType,
    },
}

impl Expr {
    /// The type the expression evaluates to.
    pub fn data_type(&self) -> DataType {
        match self {
            Expr::Column { ty, .. }
            | Expr::Literal { ty, .. }
            | Expr::Binary { ty, .. }
            | Expr::Cast { ty, .. }
            | Expr::TryCast { ty, .. }
            | Expr::Case { ty, .. }
            | Expr::Call { ty, .. } => *ty,
            Expr::Not(_) | Expr::IsNull { .. } => DataType::Boolean,
            Expr::Negative(e) => e.data_type(),
            Expr::PlusInterval { .. } => DataType::Timestamp,
        }
    }

    /// Names of the columns this expression reads, in first-use order.
    pub fn columns(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_columns(&mut out);
        out
    }

    fn collect_columns<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expr::Column { name, .. } => {
                if !out.contains(&name.as_str()) {
                    out.push(name);
                }
            }
            Expr::Literal { .. } => {}
            Expr::Not(e)
            | Expr::Negative(e)
            | Expr::IsNull { expr: e, .. }
            | Expr::PlusInterval { expr: e, .. }
            | Expr::Cast { expr: e, .. }
            | Expr::TryCast { expr: e, .. } => e.collect_columns(out),
            Expr::Call { args, .. } => {
                for a in args {
                    a.collect_columns(out);
                }
            }
            Expr::Case {
                branches,
                otherwise,
                ..
            } => {
                for (c, r) in branches {
                    c.collect_columns(out);
                    r.collect_columns(out);
                }
                if let Some(e) = otherwise {
                    e.collect_columns(out);
                }
            }
            Expr::Binary { left, right, .. } => {
                left.collect_columns(out);
                right.collect_columns(out);
            }
        }
    }
}

/// Renders the literal the way SQL would write it.
fn literal_sql(value: &Value) -> String {
    match value {
        Value::Null => "NULL".into(),
        Value::String(s) => format!("'{}'", s.replace('\'', "''")),
        Value::Boolean(b) => if *b { "TRUE" } else { "FALSE" }.into(),
        Value::Decimal(d) => d.to_string(),
        Value::Timestamp(ms) => {
            // As SQL writes it, so the rendering can be pasted back into a model.
            let text = crate::time::format_sql_timestamp(*ms);
            format!("TIMESTAMP '{}'", text.strip_suffix(".000").unwrap_or(&text))
        }
        Value::Date(d) => format!("DATE '{}'", crate::time::format_date(*d)),
        other => other.render(),
    }
}

impl fmt::Display for Expr {
    /// The canonical rendering used in explain, inspect-plan and definitions:
    /// `(total_spend > 100)`, `(customer_id IS NOT NULL)`, `CAST(x AS int64)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Column { name, .. } => f.write_str(name),
            Expr::Literal { value, .. } => f.write_str(&literal_sql(value)),
            Expr::Not(e) => write!(f, "(NOT {e})"),
            Expr::Negative(e) => write!(f, "(-{e})"),
            Expr::Binary {
                op, left, right, ..
            } => write!(f, "({left} {} {right})", op.symbol()),
            Expr::IsNull {
                expr,
                negated: false,
            } => write!(f, "({expr} IS NULL)"),
            Expr::IsNull {
                expr,
                negated: true,
            } => write!(f, "({expr} IS NOT NULL)"),
            Expr::Cast { expr, ty } => write!(f, "CAST({expr} AS {ty})"),
            Expr::TryCast { expr, ty } => write!(f, "TRY_CAST({expr} AS {ty})"),
            Expr::PlusInterval { expr, interval } => {
                let sign = if interval.is_negative() { "-" } else { "+" };
                write!(f, "({expr} {sign} {interval})")
            }
            Expr::Call {
                func: Func::Like,
                args,
                ..
            } if args.len() == 2 => write!(f, "({} LIKE {})", args[0], args[1]),
            Expr::Call {
                func: Func::Extract(field),
                args,
                ..
            } if args.len() == 1 => write!(f, "EXTRACT({} FROM {})", field.name(), args[0]),
            Expr::Call {
                func: func @ (Func::FloorTo(unit) | Func::CeilTo(unit)),
                args,
                ..
            } if args.len() == 1 => write!(f, "{}({} TO {})", func.name(), args[0], unit.name()),
            Expr::Call {
                func: func @ (Func::TrimLeading | Func::TrimTrailing),
                args,
                ..
            } if args.len() == 1 => {
                let side = if *func == Func::TrimLeading {
                    "LEADING"
                } else {
                    "TRAILING"
                };
                write!(f, "TRIM({side} FROM {})", args[0])
            }
            Expr::Call { func, args, .. } => {
                let args: Vec<std::string::String> = args.iter().map(ToString::to_string).collect();
                write!(f, "{}({})", func.name(), args.join(", "))
            }
            Expr::Case {
                branches,
                otherwise,
                ..
            } => {
                f.write_str("CASE")?;
                for (c, r) in branches {
                    write!(f, " WHEN {c} THEN {r}")?;
                }
                if let Some(e) = otherwise {
                    write!(f, " ELSE {e}")?;
                }
                f.write_str(" END")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_renders_in_the_largest_unit_that_holds_it() {
        let show = |months: i32, millis: i64| Interval { months, millis }.to_string();
        assert_eq!(show(0, 300_000), "INTERVAL '5' MINUTE");
        assert_eq!(show(0, -300_000), "INTERVAL '5' MINUTE");
        assert_eq!(show(0, 1_250), "INTERVAL '1.250' SECOND");
        assert_eq!(show(0, 2 * 86_400_000), "INTERVAL '2' DAY");
        assert_eq!(show(0, 90 * 60_000), "INTERVAL '90' MINUTE");
        assert_eq!(
            show(0, 86_400_000 + 9_000_000),
            "INTERVAL '1 02:30:00' DAY TO SECOND"
        );
        assert_eq!(
            show(0, 86_400_000 + 1),
            "INTERVAL '1 00:00:00.001' DAY TO SECOND"
        );
        assert_eq!(show(1, 0), "INTERVAL '1' MONTH");
        assert_eq!(show(12, 0), "INTERVAL '1' YEAR");
        assert_eq!(show(-18, 0), "INTERVAL '1-6' YEAR TO MONTH");
        assert_eq!(show(0, 0), "INTERVAL '0' MONTH");
        let t = Expr::Column {
            name: "t".into(),
            ty: DataType::Timestamp,
        };
        let moved = Expr::PlusInterval {
            expr: Box::new(t),
            interval: Interval {
                months: 0,
                millis: -3_600_000,
            },
        };
        assert_eq!(moved.to_string(), "(t - INTERVAL '1' HOUR)");
        assert_eq!(moved.data_type(), DataType::Timestamp);
        assert_eq!(moved.columns(), vec!["t"]);
    }
}
