//! INTERVAL literals as Flink SQL writes them (docs/sql.md): one unit (`INTERVAL '5' MINUTE`,
//! `INTERVAL '1.5' SECOND`) or a range of units (`INTERVAL '1-6' YEAR TO MONTH`,
//! `INTERVAL '1 02:30:00' DAY TO SECOND`), read into months and milliseconds.
//!
//! A leading precision (`DAY(3)`) is accepted and not enforced: the Flink backend writes
//! every interval in a form Flink computes whatever its size.

use sqlparser::ast::{DateTimeField, Expr as SqlExpr, Interval as SqlInterval, Value as SqlValue};
use streamform_ir::Interval;

/// Why an INTERVAL literal is refused: the message and the help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// What is wrong, naming the literal's form.
    pub message: String,
    /// What to write instead.
    pub help: &'static str,
}

/// The help for an interval that does not read, when nothing more specific applies.
pub const HELP: &str = "write e.g. INTERVAL '5' MINUTE, INTERVAL '1.5' SECOND, INTERVAL '1' MONTH or INTERVAL '1 02:30:00' DAY TO SECOND";

/// A unit of an interval literal, from largest to smallest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Unit {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
}

impl Unit {
    fn of(field: &DateTimeField) -> Option<Unit> {
        Some(match field {
            DateTimeField::Year | DateTimeField::Years => Unit::Year,
            DateTimeField::Month | DateTimeField::Months => Unit::Month,
            DateTimeField::Day | DateTimeField::Days => Unit::Day,
            DateTimeField::Hour | DateTimeField::Hours => Unit::Hour,
            DateTimeField::Minute | DateTimeField::Minutes => Unit::Minute,
            DateTimeField::Second | DateTimeField::Seconds => Unit::Second,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Unit::Year => "YEAR",
            Unit::Month => "MONTH",
            Unit::Day => "DAY",
            Unit::Hour => "HOUR",
            Unit::Minute => "MINUTE",
            Unit::Second => "SECOND",
        }
    }

    /// The unit's size in its family's base (months, or milliseconds).
    fn size(self) -> i64 {
        match self {
            Unit::Year => 12,
            Unit::Month => 1,
            Unit::Day => 86_400_000,
            Unit::Hour => 3_600_000,
            Unit::Minute => 60_000,
            Unit::Second => 1000,
        }
    }

    /// The largest value the unit takes after a larger one (`HOUR` in `DAY TO HOUR`).
    fn limit(self) -> i64 {
        match self {
            Unit::Year | Unit::Day => i64::MAX,
            Unit::Month => 11,
            Unit::Hour => 23,
            Unit::Minute | Unit::Second => 59,
        }
    }
}

/// The interval an INTERVAL literal stands for.
///
/// # Errors
/// A form Flink does not write (a unit other than YEAR, MONTH, DAY, HOUR, MINUTE and
/// SECOND, a range mixing months with days, a value that is not a quoted string), a value
/// that does not match its units, or a fraction finer than a millisecond.
pub fn read(interval: &SqlInterval) -> Result<Interval, Refusal> {
    let refuse = |message: String| Refusal {
        message,
        help: HELP,
    };
    // `INTERVAL -'5' MINUTE`: a sign before the quoted value.
    let (signed, value) = match interval.value.as_ref() {
        SqlExpr::UnaryOp {
            op: sqlparser::ast::UnaryOperator::Minus,
            expr,
        } => (true, expr.as_ref()),
        SqlExpr::UnaryOp {
            op: sqlparser::ast::UnaryOperator::Plus,
            expr,
        } => (false, expr.as_ref()),
        other => (false, other),
    };
    let SqlExpr::Value(v) = value else {
        return Err(refuse(format!(
            "INTERVAL {} (the value must be a quoted string)",
            interval.value
        )));
    };
    let text = match &v.value {
        SqlValue::SingleQuotedString(s) => s.as_str(),
        _ => {
            return Err(refuse(format!(
                "INTERVAL {v} (the value must be a quoted string)"
            )));
        }
    };
    let Some(leading) = interval.leading_field.as_ref() else {
        return Err(refuse(format!("INTERVAL '{text}' without a unit")));
    };
    let unit = |f: &DateTimeField| {
        Unit::of(f).ok_or_else(|| refuse(format!("INTERVAL with the unit {f}")))
    };
    let first = unit(leading)?;
    let last = match &interval.last_field {
        Some(f) => unit(f)?,
        None => first,
    };
    let form = if first == last {
        first.name().to_string()
    } else {
        format!("{} TO {}", first.name(), last.name())
    };
    let months = first <= Unit::Month;
    if last < first || (months && last > Unit::Month) {
        return Err(refuse(format!("INTERVAL ... {form}")));
    }
    let bad = || Refusal {
        message: format!("INTERVAL '{text}' {form} (the value does not match the units)"),
        // A fraction of a larger unit than a second: say how to write it in seconds.
        help: if text.contains('.') && last != Unit::Second {
            "only SECOND takes a fraction: write a minute and a half as INTERVAL '90' SECOND, an hour and a half as INTERVAL '90' MINUTE"
        } else {
            HELP
        },
    };
    let (negative, body) = match text.trim().strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.trim().strip_prefix('+').unwrap_or(text.trim())),
    };
    // The fields of the value, largest first: `1 02:30:00.5` → 1, 02, 30, 00.5; `1-6` → 1, 6.
    let fields: Vec<&str> = if months {
        body.split('-').collect()
    } else {
        body.split([' ', ':']).collect()
    };
    let units: Vec<Unit> = [
        Unit::Year,
        Unit::Month,
        Unit::Day,
        Unit::Hour,
        Unit::Minute,
        Unit::Second,
    ]
    .into_iter()
    .filter(|u| (first..=last).contains(u))
    .collect();
    if fields.len() != units.len() {
        return Err(bad());
    }
    let mut total: i64 = 0;
    for (i, (field, unit)) in fields.iter().zip(&units).enumerate() {
        let (whole, fraction) = match field.split_once('.') {
            Some((w, f)) if *unit == Unit::Second => (w, f),
            Some(_) => return Err(bad()),
            None => (*field, ""),
        };
        if whole.is_empty()
            || !whole.bytes().all(|b| b.is_ascii_digit())
            || !fraction.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(bad());
        }
        let n: i64 = whole
            .parse()
            .map_err(|_| refuse(format!("INTERVAL '{text}' {form} (too large)")))?;
        if i > 0 && n > unit.limit() {
            return Err(bad());
        }
        if fraction.trim_end_matches('0').len() > 3 {
            return Err(refuse(format!(
                "INTERVAL '{text}' {form} (finer than a millisecond)"
            )));
        }
        let millis: i64 = format!("{fraction:0<3}")[..3].parse().unwrap_or(0);
        total = n
            .checked_mul(unit.size())
            .and_then(|v| v.checked_add(millis))
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| refuse(format!("INTERVAL '{text}' {form} (too large)")))?;
    }
    let total = if negative != signed { -total } else { total };
    // Days beyond what a planner's interval holds are far past any timestamp anyway.
    if total / 86_400_000 > i64::from(i32::MAX) {
        return Err(refuse(format!("INTERVAL '{text}' {form} (too large)")));
    }
    if months {
        let months = i32::try_from(total)
            .map_err(|_| refuse(format!("INTERVAL '{text}' {form} (too large)")))?;
        Ok(Interval { months, millis: 0 })
    } else {
        Ok(Interval {
            months: 0,
            millis: total,
        })
    }
}

/// The interval as a literal DataFusion plans (a plain string of months, days and
/// milliseconds: DataFusion keeps nanoseconds, so the days are kept apart for intervals of
/// centuries), which lowering reads back into the same [`Interval`].
pub fn for_planning(interval: Interval) -> SqlInterval {
    const DAY: i64 = 86_400_000;
    SqlInterval {
        value: Box::new(SqlExpr::value(SqlValue::SingleQuotedString(format!(
            "{} months {} days {} milliseconds",
            interval.months,
            interval.millis / DAY,
            interval.millis % DAY
        )))),
        leading_field: None,
        leading_precision: None,
        last_field: None,
        fractional_seconds_precision: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::GenericDialect;
    use sqlparser::parser::Parser;

    fn read_sql(sql: &str) -> Result<Interval, String> {
        let e = Parser::new(&GenericDialect {})
            .try_with_sql(sql)
            .unwrap()
            .parse_expr()
            .unwrap();
        let SqlExpr::Interval(i) = e else {
            panic!("not an interval: {sql}");
        };
        read(&i).map_err(|r| r.message)
    }

    fn ms(millis: i64) -> Result<Interval, String> {
        Ok(Interval { months: 0, millis })
    }

    #[test]
    fn flinks_interval_forms_read_as_months_or_milliseconds() {
        assert_eq!(read_sql("INTERVAL '5' MINUTE"), ms(300_000));
        assert_eq!(read_sql("INTERVAL '1.25' SECOND"), ms(1_250));
        assert_eq!(read_sql("INTERVAL '300.250' SECOND(3, 3)"), ms(300_250));
        assert_eq!(read_sql("INTERVAL '100' DAY(3)"), ms(8_640_000_000));
        assert_eq!(read_sql("INTERVAL '-1' DAY"), ms(-86_400_000));
        assert_eq!(read_sql("INTERVAL -'5' MINUTE"), ms(-300_000));
        assert_eq!(read_sql("INTERVAL -'-5' MINUTE"), ms(300_000));
        assert_eq!(
            read_sql("INTERVAL '2000000' DAY"),
            ms(2_000_000 * 86_400_000)
        );
        assert_eq!(
            read_sql("INTERVAL '10 00:00:00.004' DAY TO SECOND"),
            ms(864_000_004)
        );
        assert_eq!(read_sql("INTERVAL '1 02' DAY TO HOUR"), ms(93_600_000));
        assert_eq!(read_sql("INTERVAL '02:30' HOUR TO MINUTE"), ms(9_000_000));
        assert_eq!(read_sql("INTERVAL '01:30.5' MINUTE TO SECOND"), ms(90_500));
        assert_eq!(read_sql("INTERVAL '0.5000' SECOND"), ms(500));
        assert_eq!(
            read_sql("INTERVAL '1-6' YEAR TO MONTH"),
            Ok(Interval {
                months: 18,
                millis: 0
            })
        );
        assert_eq!(
            read_sql("INTERVAL '2' YEAR"),
            Ok(Interval {
                months: 24,
                millis: 0
            })
        );
        assert_eq!(
            read_sql("INTERVAL '-13' MONTH"),
            Ok(Interval {
                months: -13,
                millis: 0
            })
        );
    }

    #[test]
    fn other_forms_are_refused_naming_what_is_wrong() {
        for (sql, want) in [
            (
                "INTERVAL '0.0005' SECOND",
                "INTERVAL '0.0005' SECOND (finer than a millisecond)",
            ),
            (
                "INTERVAL '1 25:00' DAY TO MINUTE",
                "INTERVAL '1 25:00' DAY TO MINUTE (the value does not match the units)",
            ),
            (
                "INTERVAL '1.5' MINUTE",
                "INTERVAL '1.5' MINUTE (the value does not match the units)",
            ),
            (
                "INTERVAL '1 2' YEAR TO MONTH",
                "INTERVAL '1 2' YEAR TO MONTH (the value does not match the units)",
            ),
            ("INTERVAL '1' WEEK", "INTERVAL with the unit WEEK"),
            ("INTERVAL '1-1' MONTH TO DAY", "INTERVAL ... MONTH TO DAY"),
            ("INTERVAL '1 day'", "INTERVAL '1 day' without a unit"),
            (
                "INTERVAL 5 MINUTE",
                "INTERVAL 5 (the value must be a quoted string)",
            ),
            (
                "INTERVAL '99999999999999999' YEAR",
                "INTERVAL '99999999999999999' YEAR (too large)",
            ),
            (
                "INTERVAL '9223372036854775807' SECOND",
                "INTERVAL '9223372036854775807' SECOND (too large)",
            ),
        ] {
            assert_eq!(read_sql(sql), Err(want.to_string()), "{sql}");
        }
    }
}
