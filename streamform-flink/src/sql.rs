//! Flink SQL text for the IR's names, types and expressions.
//!
//! See docs/flink-backend.md: "Types" (the type mapping), "Identifiers" (every identifier
//! backtick-quoted) and "Making Flink compute the simulator's types".

use std::fmt::Write;

use streamform_ir::expr::BinaryOp;
use streamform_ir::time::format_rfc3339;
use streamform_ir::types::ArithOp;
use streamform_ir::{DataType, Expr, Func, Interval, Value};

/// A backtick-quoted identifier; a backtick inside the name is doubled: `` `a``b` ``.
pub fn ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// A single-quoted string literal; a quote inside is doubled: `'it''s'`.
pub fn string_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Flink's name for a Streamform type: int32 → `INT`, int64 → `BIGINT`, float64 → `DOUBLE`,
/// decimal(p,s) → `DECIMAL(p, s)`, string → `STRING`, boolean → `BOOLEAN`, timestamp →
/// `TIMESTAMP(3)`, date → `DATE`.
pub fn data_type(ty: DataType) -> String {
    match ty {
        DataType::Int32 => "INT".into(),
        DataType::Int64 => "BIGINT".into(),
        DataType::Float64 => "DOUBLE".into(),
        DataType::Decimal { precision, scale } => format!("DECIMAL({precision}, {scale})"),
        DataType::String => "STRING".into(),
        DataType::Boolean => "BOOLEAN".into(),
        DataType::Timestamp => "TIMESTAMP(3)".into(),
        DataType::Date => "DATE".into(),
    }
}

/// An expression in Flink SQL. Every compound expression is parenthesized, so the text
/// never depends on operator precedence; a decimal literal, and any literal whose Flink type
/// would differ from the IR's type, is wrapped in a CAST to the IR's type (Flink counts a
/// leading zero in a literal's precision: `0.13` is DECIMAL(3, 2) to it).
pub fn expr(e: &Expr) -> String {
    match e {
        Expr::Column { name, .. } => ident(name),
        Expr::Literal { value, ty } => literal(value, *ty),
        Expr::Not(inner) => format!("(NOT {})", expr(inner)),
        Expr::Negative(inner) => format!("(- {})", expr(inner)),
        // Flink's MOD over integers takes the divisor's type; cast both operands to the IR's
        // result type so it computes that one (over decimals its rule is the IR's).
        Expr::Binary {
            op: BinaryOp::Arith(ArithOp::Mod),
            left,
            right,
            ty,
        } => {
            let operand = |e: &Expr| {
                if matches!(ty, DataType::Int32 | DataType::Int64) && e.data_type() != *ty {
                    format!("CAST({} AS {})", expr(e), data_type(*ty))
                } else {
                    expr(e)
                }
            };
            format!("MOD({}, {})", operand(left), operand(right))
        }
        Expr::Binary {
            op, left, right, ..
        } => format!("({} {} {})", expr(left), op.symbol(), expr(right)),
        Expr::IsNull {
            expr: inner,
            negated,
        } => format!(
            "({} IS {}NULL)",
            expr(inner),
            if *negated { "NOT " } else { "" }
        ),
        Expr::Cast { expr: inner, ty } => format!("CAST({} AS {})", expr(inner), data_type(*ty)),
        Expr::TryCast { expr: inner, ty } => {
            format!("TRY_CAST({} AS {})", expr(inner), data_type(*ty))
        }
        Expr::PlusInterval {
            expr: inner,
            interval,
        } => plus_interval(expr(inner), *interval),
        Expr::Call { func, args, .. } => call(*func, args),
        // Every result cast to the CASE's type: Flink would otherwise type string literals
        // as CHAR(n) and pad the shorter ones with spaces.
        Expr::Case {
            branches,
            otherwise,
            ty,
        } => {
            let result = |e: &Expr| format!("CAST({} AS {})", expr(e), data_type(*ty));
            let mut out = String::from("CASE");
            for (c, r) in branches {
                let _ = write!(out, " WHEN {} THEN {}", expr(c), result(r));
            }
            if let Some(e) = otherwise {
                let _ = write!(out, " ELSE {}", result(e));
            }
            out.push_str(" END");
            out
        }
    }
}

/// `t` moved by `interval` in forms Flink computes whatever the size: the months as
/// `INTERVAL 'y-m' YEAR(p) TO MONTH`, then the milliseconds as `INTERVAL 'd hh:mm:ss.fff'
/// DAY(3) TO SECOND(3)`, in steps of under 1000 days (Flink's code generation takes a day
/// precision of at most 3).
fn plus_interval(t: String, interval: Interval) -> String {
    const DAY: u64 = 86_400_000;
    const MAX_STEP: u64 = 1000 * DAY - 1;
    let sign = |negative: bool| if negative { "-" } else { "+" };
    let mut out = t;
    let months = interval.months.unsigned_abs();
    if months != 0 {
        let years = months / 12;
        let precision = years.to_string().len().max(2);
        out = format!(
            "({out} {} INTERVAL '{years}-{}' YEAR({precision}) TO MONTH)",
            sign(interval.months < 0),
            months % 12
        );
    }
    let mut left = interval.millis.unsigned_abs();
    while left > 0 {
        let step = left.min(MAX_STEP);
        left -= step;
        let (days, rest) = (step / DAY, step % DAY);
        let (h, m) = (rest / 3_600_000, rest % 3_600_000 / 60_000);
        let (sec, ms) = (rest % 60_000 / 1000, rest % 1000);
        out = format!(
            "({out} {} INTERVAL '{days} {h:02}:{m:02}:{sec:02}.{ms:03}' DAY(3) TO SECOND(3))",
            sign(interval.millis < 0)
        );
    }
    out
}

/// A literal as Flink reads it, cast to `ty` when Flink would type the bare text otherwise.
/// A scalar function call. String literals are cast to STRING first: Flink types them as
/// CHAR(n), and UPPER of a CHAR(n) is cut to n characters. SUBSTRING takes INT positions.
fn call(func: Func, args: &[Expr]) -> String {
    let arg = |e: &Expr| match e {
        Expr::Literal {
            value: Value::String(_),
            ..
        } => format!("CAST({} AS STRING)", expr(e)),
        _ => expr(e),
    };
    let position = |e: &Expr| match e.data_type() {
        DataType::Int64 => format!("CAST({} AS INT)", expr(e)),
        _ => expr(e),
    };
    match (func, args) {
        (Func::Like, [value, pattern]) => format!("({} LIKE {})", arg(value), expr(pattern)),
        (Func::Position, [seek, s]) => format!("POSITION({} IN {})", arg(seek), arg(s)),
        (Func::Extract(field), [t]) => format!("EXTRACT({} FROM {})", field.name(), expr(t)),
        (Func::FloorTo(unit) | Func::CeilTo(unit), [t]) => {
            format!("{}({} TO {})", func.name(), expr(t), unit.name())
        }
        (Func::TrimLeading, [s]) => format!("TRIM(LEADING FROM {})", arg(s)),
        (Func::TrimTrailing, [s]) => format!("TRIM(TRAILING FROM {})", arg(s)),
        (Func::Trim, [s]) => format!("TRIM(BOTH FROM {})", arg(s)),
        (Func::Substring, [s, rest @ ..]) => {
            let mut parts = vec![arg(s)];
            parts.extend(rest.iter().map(position));
            format!("SUBSTRING({})", parts.join(", "))
        }
        _ => format!(
            "{}({})",
            func.name(),
            args.iter().map(arg).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn literal(value: &Value, ty: DataType) -> String {
    let (text, natural) = match value {
        Value::Null => return format!("CAST(NULL AS {})", data_type(ty)),
        Value::Int32(i) => (i.to_string(), DataType::Int32),
        Value::Int64(i) => (
            i.to_string(),
            if i32::try_from(*i).is_ok() {
                DataType::Int32
            } else {
                DataType::Int64
            },
        ),
        Value::Float64(f) => {
            let text = format!("{:e}", f.0).replace('e', "E");
            (text, DataType::Float64)
        }
        Value::Decimal(d) => {
            // Always cast: a bare `2` would be an INT, and Flink types `0.13` as
            // DECIMAL(3, 2) where the IR may say DECIMAL(2, 2).
            let text = d.to_string();
            let text = if text.starts_with('-') {
                format!("({text})")
            } else {
                text
            };
            return format!("CAST({text} AS {})", data_type(ty));
        }
        Value::String(s) => (string_literal(s), DataType::String),
        Value::Boolean(b) => (
            (if *b { "TRUE" } else { "FALSE" }).to_string(),
            DataType::Boolean,
        ),
        Value::Timestamp(ms) => {
            let iso = format_rfc3339(*ms);
            let text = iso.trim_end_matches('Z').replacen('T', " ", 1);
            // Flink types the literal by its digits (TIMESTAMP(0) here); ours is (3).
            return format!("CAST(TIMESTAMP '{text}' AS {})", data_type(ty));
        }
        Value::Date(d) => (
            format!("DATE '{}'", streamform_ir::time::format_date(*d)),
            DataType::Date,
        ),
    };
    let text = if text.starts_with('-') {
        format!("({text})")
    } else {
        text
    };
    if natural == ty {
        text
    } else {
        format!("CAST({text} AS {})", data_type(ty))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use streamform_ir::Decimal;
    use streamform_ir::value::F64;

    fn col(name: &str, ty: DataType) -> Expr {
        Expr::Column {
            name: name.into(),
            ty,
        }
    }

    fn lit(value: Value, ty: DataType) -> Expr {
        Expr::Literal { value, ty }
    }

    #[test]
    fn quotes_identifiers_and_strings() {
        assert_eq!(ident("sum(amount)"), "`sum(amount)`");
        assert_eq!(ident("we`ird"), "`we``ird`");
        assert_eq!(string_literal("it's"), "'it''s'");
    }

    #[test]
    fn maps_every_type() {
        assert_eq!(data_type(DataType::Int32), "INT");
        assert_eq!(data_type(DataType::Int64), "BIGINT");
        assert_eq!(data_type(DataType::Float64), "DOUBLE");
        assert_eq!(data_type(DataType::DEFAULT_DECIMAL), "DECIMAL(38, 9)");
        assert_eq!(data_type(DataType::String), "STRING");
        assert_eq!(data_type(DataType::Boolean), "BOOLEAN");
        assert_eq!(data_type(DataType::Timestamp), "TIMESTAMP(3)");
    }

    #[test]
    fn renders_expressions_fully_parenthesized() {
        let dec = DataType::Decimal {
            precision: 3,
            scale: 0,
        };
        let gt = Expr::Binary {
            op: BinaryOp::Gt,
            left: Box::new(col("total_spend", DataType::DEFAULT_DECIMAL)),
            right: Box::new(lit(Value::Int32(100), DataType::Int32)),
            ty: DataType::Boolean,
        };
        assert_eq!(expr(&gt), "(`total_spend` > 100)");
        let modulo = Expr::Binary {
            op: BinaryOp::Arith(ArithOp::Mod),
            left: Box::new(col("big", DataType::Int64)),
            right: Box::new(lit(Value::Int32(3), DataType::Int32)),
            ty: DataType::Int64,
        };
        assert_eq!(expr(&modulo), "MOD(`big`, CAST(3 AS BIGINT))");
        let neg = Expr::Negative(Box::new(lit(Value::Int32(-5), DataType::Int32)));
        assert_eq!(expr(&neg), "(- (-5))");
        let not_null = Expr::IsNull {
            expr: Box::new(col("c", DataType::String)),
            negated: true,
        };
        assert_eq!(expr(&not_null), "(`c` IS NOT NULL)");
        let cast = Expr::Cast {
            expr: Box::new(col("qty", DataType::Int32)),
            ty: dec,
        };
        assert_eq!(expr(&cast), "CAST(`qty` AS DECIMAL(3, 0))");
    }

    #[test]
    fn literals_keep_the_ir_type() {
        let quarter = Decimal::parse("0.25").unwrap();
        assert_eq!(
            literal(
                &Value::Decimal(quarter),
                DataType::Decimal {
                    precision: 2,
                    scale: 2
                }
            ),
            "CAST(0.25 AS DECIMAL(2, 2))"
        );
        assert_eq!(
            literal(
                &Value::Decimal(Decimal::parse("2").unwrap()),
                DataType::Decimal {
                    precision: 1,
                    scale: 0
                }
            ),
            "CAST(2 AS DECIMAL(1, 0))"
        );
        assert_eq!(
            literal(&Value::Decimal(quarter), DataType::DEFAULT_DECIMAL),
            "CAST(0.25 AS DECIMAL(38, 9))"
        );
        assert_eq!(
            literal(&Value::Int64(7), DataType::Int64),
            "CAST(7 AS BIGINT)"
        );
        assert_eq!(
            literal(&Value::Int64(5_000_000_000), DataType::Int64),
            "5000000000"
        );
        assert_eq!(
            literal(&Value::Float64(F64(1.5)), DataType::Float64),
            "1.5E0"
        );
        assert_eq!(
            literal(&Value::Null, DataType::Boolean),
            "CAST(NULL AS BOOLEAN)"
        );
        assert_eq!(
            literal(&Value::String("vip".into()), DataType::String),
            "'vip'"
        );
        assert_eq!(
            literal(&Value::Timestamp(1_788_084_000_000), DataType::Timestamp),
            "CAST(TIMESTAMP '2026-08-30 10:00:00' AS TIMESTAMP(3))"
        );
    }
}
