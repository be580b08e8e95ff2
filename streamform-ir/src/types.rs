//! The column type vocabulary shared by sources.yml, the plan, fingerprints and the simulator.
//!
//! See docs/project-format.md, "Column types" (the types and decimals); docs/sql.md,
//! "Expressions" and "Aggregates" (expression and accumulator types).

use std::fmt;

/// Largest decimal precision Streamform (and Flink) can hold: 38 digits.
pub const MAX_DECIMAL_PRECISION: u8 = 38;

/// A column type in Streamform's own vocabulary.
///
/// `Display` renders the canonical spelling used in fingerprints and diagnostics
/// (`int64`, `decimal(38,9)`), which is also what `sources.yml` accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataType {
    /// 32-bit signed integer, `int32`.
    Int32,
    /// 64-bit signed integer, `int64`.
    Int64,
    /// 64-bit IEEE 754 float, `float64`.
    Float64,
    /// `decimal(precision, scale)`: `precision` in 1..=38, `scale` in 0..=precision.
    Decimal {
        /// Total number of digits, 1 to 38.
        precision: u8,
        /// Digits after the decimal point, 0 to `precision`.
        scale: u8,
    },
    /// UTF-8 text, `string`.
    String,
    /// `true` or `false`, `boolean`.
    Boolean,
    /// Milliseconds since the Unix epoch, in UTC.
    Timestamp,
    /// A day of the calendar, days since 1970-01-01, years 0 to 9999 (Flink's DATE).
    Date,
}

impl DataType {
    /// `decimal` without arguments: `decimal(38,9)`.
    pub const DEFAULT_DECIMAL: DataType = DataType::Decimal {
        precision: 38,
        scale: 9,
    };

    /// Parses a type as written in `sources.yml` (`int64`, `decimal`, `decimal(12,2)`).
    ///
    /// # Errors
    /// A message naming what is wrong (unknown name, precision or scale out of range).
    pub fn parse(text: &str) -> Result<DataType, String> {
        let t = text.trim();
        let compact: String = t.chars().filter(|c| !c.is_whitespace()).collect();
        let lower = compact.to_ascii_lowercase();
        Ok(match lower.as_str() {
            "int32" => DataType::Int32,
            "int64" => DataType::Int64,
            "float64" => DataType::Float64,
            "decimal" => DataType::DEFAULT_DECIMAL,
            "string" => DataType::String,
            "boolean" => DataType::Boolean,
            "timestamp" => DataType::Timestamp,
            "date" => DataType::Date,
            other => {
                let Some(args) = other
                    .strip_prefix("decimal(")
                    .and_then(|r| r.strip_suffix(')'))
                else {
                    return Err(format!("unknown type `{t}`"));
                };
                let mut parts = args.split(',');
                let (Some(p), Some(s), None) = (parts.next(), parts.next(), parts.next()) else {
                    return Err(format!(
                        "`{t}` is not a decimal type; write decimal(precision,scale)"
                    ));
                };
                let (Ok(precision), Ok(scale)) = (p.parse::<u32>(), s.parse::<u32>()) else {
                    return Err(format!("`{t}`: precision and scale must be whole numbers"));
                };
                if precision == 0 || precision > u32::from(MAX_DECIMAL_PRECISION) {
                    return Err(format!("`{t}`: precision must be between 1 and 38"));
                }
                if scale > precision {
                    return Err(format!("`{t}`: scale must be between 0 and the precision"));
                }
                DataType::Decimal {
                    precision: precision as u8,
                    scale: scale as u8,
                }
            }
        })
    }

    /// What to write for a type named as Flink SQL names it (`BIGINT`, `VARCHAR(20)`,
    /// `TIMESTAMP(3)`), for the help of a type `parse` refuses; `None` for other names.
    pub fn flink_equivalent(text: &str) -> Option<&'static str> {
        let lower: String = text
            .trim()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        let base = lower.split('(').next().unwrap_or("");
        Some(match base {
            "bigint" => "write int64, Streamform's name for Flink's BIGINT",
            "int" | "integer" => "write int32, Streamform's name for Flink's INT",
            "tinyint" | "smallint" => {
                "Streamform has no integer smaller than int32 (Flink's INT): write int32, which holds every value"
            }
            "double" | "doubleprecision" => "write float64, Streamform's name for Flink's DOUBLE",
            "float" | "real" => {
                "Streamform's one floating type is float64 (Flink's DOUBLE); a 32-bit FLOAT rounds differently: write float64, or decimal(p,s) for exact values"
            }
            "varchar" | "char" | "character" => {
                "strings have no length here: write string (Flink's STRING)"
            }
            "bool" => "write boolean",
            "numeric" | "dec" => "write decimal(p,s), Streamform's name for Flink's DECIMAL(p, s)",
            "timestamp" | "timestamp_ltz" | "datetime" => {
                "timestamps are milliseconds read as UTC (Flink's TIMESTAMP(3)): write timestamp"
            }
            "time" => "a TIME column is not supported: declare it string",
            _ => return None,
        })
    }

    /// Every type name `parse` accepts, for did-you-mean suggestions.
    pub const NAMES: &'static [&'static str] = &[
        "int32",
        "int64",
        "float64",
        "decimal",
        "string",
        "boolean",
        "timestamp",
        "date",
    ];

    /// Whether the type is a number: int32, int64, float64 or a decimal.
    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            DataType::Int32 | DataType::Int64 | DataType::Float64 | DataType::Decimal { .. }
        )
    }

    /// The exact decimal type an integer type widens to (Flink: INT is DECIMAL(10,0), BIGINT
    /// is DECIMAL(19,0)); decimals are themselves; other types have none.
    pub fn as_decimal(self) -> Option<(u8, u8)> {
        match self {
            DataType::Int32 => Some((10, 0)),
            DataType::Int64 => Some((19, 0)),
            DataType::Decimal { precision, scale } => Some((precision, scale)),
            _ => None,
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Int32 => f.write_str("int32"),
            DataType::Int64 => f.write_str("int64"),
            DataType::Float64 => f.write_str("float64"),
            DataType::Decimal { precision, scale } => write!(f, "decimal({precision},{scale})"),
            DataType::String => f.write_str("string"),
            DataType::Boolean => f.write_str("boolean"),
            DataType::Timestamp => f.write_str("timestamp"),
            DataType::Date => f.write_str("date"),
        }
    }
}

impl DataType {
    /// The type as a model's SQL writes it in a CAST: `INT`, `BIGINT`, `DOUBLE`,
    /// `DECIMAL(10, 2)`, `STRING`, `BOOLEAN`, `TIMESTAMP`.
    pub fn sql_name(self) -> String {
        match self {
            DataType::Int32 => "INT".into(),
            DataType::Int64 => "BIGINT".into(),
            DataType::Float64 => "DOUBLE".into(),
            DataType::Decimal { precision, scale } => format!("DECIMAL({precision}, {scale})"),
            DataType::String => "STRING".into(),
            DataType::Boolean => "BOOLEAN".into(),
            DataType::Timestamp => "TIMESTAMP".into(),
            DataType::Date => "DATE".into(),
        }
    }
}

/// Flink's rule for fitting a decimal result wider than 38 digits (`adjustPrecisionScale`):
/// keep the integral digits and shrink the scale, but never below `min(scale, 6)`.
fn adjust_precision_scale(precision: u32, scale: u32) -> DataType {
    if precision <= u32::from(MAX_DECIMAL_PRECISION) {
        return DataType::Decimal {
            precision: precision as u8,
            scale: scale as u8,
        };
    }
    let integral = precision - scale;
    let min_scale = scale.min(6);
    let adjusted = (u32::from(MAX_DECIMAL_PRECISION).saturating_sub(integral)).max(min_scale);
    DataType::Decimal {
        precision: MAX_DECIMAL_PRECISION,
        scale: adjusted as u8,
    }
}

/// Arithmetic operators of the expression tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArithOp {
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`; a zero divisor is an error.
    Div,
    /// `%`, the remainder; a zero divisor is an error.
    Mod,
}

/// The result type of `left op right`, following Flink SQL's rules (docs/sql.md).
///
/// Integers stay integers (the wider of the two); any float makes a float64; otherwise an
/// integer meets a decimal as its exact decimal form and Flink's decimal rules apply.
///
/// # Errors
/// A message when either side is not numeric.
pub fn arithmetic_type(op: ArithOp, left: DataType, right: DataType) -> Result<DataType, String> {
    if !left.is_numeric() || !right.is_numeric() {
        return Err(format!("arithmetic needs numbers, got {left} and {right}"));
    }
    use DataType::*;
    Ok(match (left, right) {
        (Float64, _) | (_, Float64) => Float64,
        (Int32, Int32) => Int32,
        (Int32 | Int64, Int32 | Int64) => Int64,
        _ => {
            let (p1, s1) = left.as_decimal().expect("numeric");
            let (p2, s2) = right.as_decimal().expect("numeric");
            let (p1, s1, p2, s2) = (u32::from(p1), u32::from(s1), u32::from(p2), u32::from(s2));
            match op {
                ArithOp::Add | ArithOp::Sub => {
                    let scale = s1.max(s2);
                    adjust_precision_scale((p1 - s1).max(p2 - s2) + scale + 1, scale)
                }
                ArithOp::Mul => adjust_precision_scale(p1 + p2 + 1, s1 + s2),
                ArithOp::Div => {
                    let scale = 6.max(s1 + p2 + 1);
                    adjust_precision_scale(p1 - s1 + s2 + scale, scale)
                }
                ArithOp::Mod => {
                    let scale = s1.max(s2);
                    adjust_precision_scale((p1 - s1).min(p2 - s2) + scale, scale)
                }
            }
        }
    })
}

/// The type that values of both `a` and `b` convert to exactly, as Flink chooses it for the
/// branches of a CASE (its least restrictive type): the wider integer; an integer and a
/// decimal as two decimals (int32 as decimal(10,0), int64 as decimal(19,0)); two decimals
/// keep the larger scale and the larger number of integer digits, at most 38 digits in
/// all; anything numeric with float64 is float64; otherwise only a type with itself.
pub fn common_type(a: DataType, b: DataType) -> Option<DataType> {
    use DataType::*;
    if a == b {
        return Some(a);
    }
    Some(match (a, b) {
        (Float64, t) | (t, Float64) if t.is_numeric() => Float64,
        (Int32 | Int64, Int32 | Int64) => Int64,
        _ if a.is_numeric() && b.is_numeric() => {
            let (p1, s1) = a.as_decimal()?;
            let (p2, s2) = b.as_decimal()?;
            let scale = s1.max(s2);
            let precision = ((p1 - s1).max(p2 - s2) + scale).min(MAX_DECIMAL_PRECISION);
            Decimal { precision, scale }
        }
        _ => return None,
    })
}

/// Whether values of `a` and `b` can be compared with `=`, `<` and friends.
pub fn comparable(a: DataType, b: DataType) -> bool {
    (a.is_numeric() && b.is_numeric()) || a == b
}

/// Whether `CAST(x AS to)` is supported from `from`.
pub fn castable(from: DataType, to: DataType) -> bool {
    use DataType::*;
    match (from, to) {
        _ if from == to => true,
        (String, Timestamp) | (Timestamp, String) => true,
        (String | Timestamp, Date) | (Date, String | Timestamp) => true,
        (Timestamp | Date, _) | (_, Timestamp | Date) => false,
        (a, b) if a.is_numeric() && b.is_numeric() => true,
        // Flink writes a double as Java does (`1.0E10`, digits Java 17 chooses), which the
        // simulator could not promise to reproduce.
        (Float64, String) => false,
        (_, String) => true,
        (String, _) => true,
        (Boolean, a) | (a, Boolean) => a.is_numeric() && !matches!(a, Float64 | Decimal { .. }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_renders_types() {
        assert_eq!(
            DataType::parse("decimal").unwrap().to_string(),
            "decimal(38,9)"
        );
        assert_eq!(
            DataType::parse("decimal(12, 2)").unwrap().to_string(),
            "decimal(12,2)"
        );
        assert_eq!(DataType::parse("int64").unwrap(), DataType::Int64);
        assert!(
            DataType::parse("decimal(39,2)")
                .unwrap_err()
                .contains("between 1 and 38")
        );
        assert!(
            DataType::parse("decimal(4,5)")
                .unwrap_err()
                .contains("scale")
        );
        assert!(
            DataType::parse("int")
                .unwrap_err()
                .contains("unknown type `int`")
        );
    }

    #[test]
    fn arithmetic_follows_flink() {
        use DataType::*;
        let d = |p, s| Decimal {
            precision: p,
            scale: s,
        };
        assert_eq!(arithmetic_type(ArithOp::Add, Int32, Int32).unwrap(), Int32);
        assert_eq!(arithmetic_type(ArithOp::Add, Int32, Int64).unwrap(), Int64);
        assert_eq!(
            arithmetic_type(ArithOp::Add, d(12, 2), d(10, 4)).unwrap(),
            d(15, 4)
        );
        assert_eq!(
            arithmetic_type(ArithOp::Add, d(38, 9), Int32).unwrap(),
            d(38, 8)
        );
        assert_eq!(
            arithmetic_type(ArithOp::Mul, d(12, 2), d(12, 2)).unwrap(),
            d(25, 4)
        );
        assert_eq!(
            arithmetic_type(ArithOp::Div, d(12, 2), d(12, 2)).unwrap(),
            d(27, 15)
        );
        assert_eq!(
            arithmetic_type(ArithOp::Mul, d(38, 9), d(38, 9)).unwrap(),
            d(38, 6)
        );
        assert_eq!(
            arithmetic_type(ArithOp::Add, Float64, d(12, 2)).unwrap(),
            Float64
        );
        assert!(arithmetic_type(ArithOp::Add, String, Int32).is_err());
    }
}
