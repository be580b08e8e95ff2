//! Runtime values: exact decimals, checked arithmetic, SQL comparison and rendering.
//!
//! A decimal is an i128 mantissa with a scale, so decimal(38,s) is exact, with checked
//! arithmetic (docs/architecture.md, "`streamform-ir`"); nothing wraps or silently rounds
//! (docs/concepts.md, "Accumulators").

use std::cmp::Ordering;
use std::fmt;

use crate::types::{ArithOp, DataType, MAX_DECIMAL_PRECISION};

/// An exact decimal: `mantissa / 10^scale`. Precision is checked against a column type by
/// [`Decimal::fit`], never by the representation.
///
/// Packed to 8-byte alignment (an `i128` alone asks for 16): a decimal then takes 24 bytes
/// rather than 32, and a [`Value`] 32 rather than 48, which is a third of the memory of
/// every row and every key of keyed state. Fields are read by copy, never by reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(Rust, packed(8))]
pub struct Decimal {
    /// The unscaled digits with their sign: `-1250` for `-12.50` at scale 2.
    pub mantissa: i128,
    /// Number of digits after the decimal point.
    pub scale: u8,
}

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// Number of decimal digits of `|m|` (0 has one digit).
fn digits(m: i128) -> u32 {
    let mut n = m.unsigned_abs();
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

impl Decimal {
    /// The decimal `mantissa / 10^scale`, without a precision check.
    pub fn new(mantissa: i128, scale: u8) -> Decimal {
        Decimal { mantissa, scale }
    }

    /// Parses a plain decimal literal (`-12.50`, `28`, `1e3` is refused).
    pub fn parse(text: &str) -> Option<Decimal> {
        let t = text.trim();
        let (neg, body) = match t.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, t.strip_prefix('+').unwrap_or(t)),
        };
        let (int, frac) = body.split_once('.').unwrap_or((body, ""));
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        if !int.chars().all(|c| c.is_ascii_digit()) || !frac.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let scale = u8::try_from(frac.len()).ok()?;
        let mut m: i128 = 0;
        for c in int.chars().chain(frac.chars()) {
            m = m.checked_mul(10)?.checked_add(i128::from(c as u8 - b'0'))?;
        }
        Some(Decimal {
            mantissa: if neg { -m } else { m },
            scale,
        })
    }

    /// The same value at `scale`, if it is representable there without rounding.
    pub fn rescale(self, scale: u8) -> Option<Decimal> {
        match scale.cmp(&self.scale) {
            Ordering::Equal => Some(self),
            Ordering::Greater => {
                let f = pow10(u32::from(scale - self.scale))?;
                Some(Decimal {
                    mantissa: self.mantissa.checked_mul(f)?,
                    scale,
                })
            }
            Ordering::Less => {
                let f = pow10(u32::from(self.scale - scale))?;
                (self.mantissa % f == 0).then(|| Decimal {
                    mantissa: self.mantissa / f,
                    scale,
                })
            }
        }
    }

    /// The same value at `scale`, rounding half away from zero when digits are dropped
    /// (Flink's HALF_UP), or `None` on overflow.
    pub fn round_to(self, scale: u8) -> Option<Decimal> {
        if scale >= self.scale {
            return self.rescale(scale);
        }
        let f = pow10(u32::from(self.scale - scale))?;
        let q = self.mantissa / f;
        let r = self.mantissa % f;
        let adj = if r.unsigned_abs() * 2 >= f.unsigned_abs() {
            self.mantissa.signum()
        } else {
            0
        };
        Some(Decimal {
            mantissa: q + adj,
            scale,
        })
    }

    /// This value divided by a count, at `scale` (at least the value's own), rounded half
    /// away from zero (Flink's HALF_UP), as AVG computes its result from its sum and count.
    /// Divides digit by digit, so a sum near 38 digits does not overflow on the way. `None`
    /// when `count` is not positive, `scale` is below the value's, or the quotient has more
    /// than 38 digits.
    pub fn div_count(self, count: i64, scale: u8) -> Option<Decimal> {
        if count <= 0 || scale < self.scale {
            return None;
        }
        let n = i128::from(count);
        let f = pow10(u32::from(scale - self.scale))?;
        let (q, r) = (self.mantissa / n, self.mantissa % n);
        // |r| < count < 2^63, so r * f stays in range unless the scales differ by more
        // than 19 digits (AVG's differ by at most 6).
        let scaled = r.checked_mul(f)?;
        let (q2, r2) = (scaled / n, scaled % n);
        let away = if r2.unsigned_abs() * 2 >= n.unsigned_abs() {
            self.mantissa.signum()
        } else {
            0
        };
        let mantissa = q.checked_mul(f)?.checked_add(q2)?.checked_add(away)?;
        let d = Decimal { mantissa, scale };
        d.in_max_precision().then_some(d)
    }

    /// This value as a `decimal(precision, scale)`: exact rescale and a digit check.
    ///
    /// # Errors
    /// `FitError::Rounding` when fractional digits would be lost, `FitError::Overflow` when
    /// the value has more digits than the precision allows.
    pub fn fit(self, precision: u8, scale: u8) -> Result<Decimal, FitError> {
        let d = match self.rescale(scale) {
            Some(d) => d,
            None if scale < self.scale => return Err(FitError::Rounding),
            None => return Err(FitError::Overflow),
        };
        if digits(d.mantissa) > u32::from(precision) && d.mantissa != 0 {
            return Err(FitError::Overflow);
        }
        Ok(d)
    }

    /// Whether the mantissa fits in 38 digits.
    pub fn in_max_precision(self) -> bool {
        digits(self.mantissa) <= u32::from(MAX_DECIMAL_PRECISION)
    }

    /// Exact comparison of two decimals of any scales.
    pub fn cmp_exact(self, other: Decimal) -> Ordering {
        let s = self.scale.max(other.scale);
        match (self.rescale(s), other.rescale(s)) {
            (Some(a), Some(b)) => { a.mantissa }.cmp(&{ b.mantissa }),
            // Rescaling overflowed i128: compare through f64, which only happens for values
            // far outside 38 digits and cannot tie.
            _ => self
                .to_f64()
                .partial_cmp(&other.to_f64())
                .unwrap_or(Ordering::Equal),
        }
    }

    /// The nearest float64; lossy, used when a decimal meets a float.
    pub fn to_f64(self) -> f64 {
        self.mantissa as f64 / 10f64.powi(i32::from(self.scale))
    }

    /// Renders with trailing fractional zeros trimmed (`28.000000000` → `28`), as fixtures
    /// write numbers.
    pub fn to_trimmed_string(self) -> String {
        let mut d = self;
        while d.scale > 0 && d.mantissa % 10 == 0 {
            d = Decimal {
                mantissa: d.mantissa / 10,
                scale: d.scale - 1,
            };
        }
        d.to_string()
    }
}

impl fmt::Display for Decimal {
    /// Renders at the decimal's own scale (`28.000000000` for scale 9).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let neg = self.mantissa < 0;
        let digits = self.mantissa.unsigned_abs().to_string();
        let scale = usize::from(self.scale);
        let sign = if neg { "-" } else { "" };
        if scale == 0 {
            return write!(f, "{sign}{digits}");
        }
        let padded = format!("{digits:0>width$}", width = scale + 1);
        let (i, frac) = padded.split_at(padded.len() - scale);
        write!(f, "{sign}{i}.{frac}")
    }
}

/// Why a decimal does not fit a column type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FitError {
    /// More fractional digits than the scale; Streamform never rounds silently.
    Rounding,
    /// More digits than the precision.
    Overflow,
}

/// A float64 with total equality and hashing (by bit pattern), so rows can be keys.
#[derive(Debug, Clone, Copy)]
pub struct F64(pub f64);

impl PartialEq for F64 {
    fn eq(&self, other: &F64) -> bool {
        self.0.to_bits() == other.0.to_bits() || (self.0 == 0.0 && other.0 == 0.0)
    }
}
impl Eq for F64 {}
impl std::hash::Hash for F64 {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let v = if self.0 == 0.0 { 0.0f64 } else { self.0 };
        v.to_bits().hash(state);
    }
}

/// One value of a row. The variant matches the column's [`DataType`]; `Null` fits any.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Value {
    /// SQL null; fits a column of any type.
    Null,
    /// An `int32` value.
    Int32(i32),
    /// An `int64` value.
    Int64(i64),
    /// A `float64` value.
    Float64(F64),
    /// An exact `decimal(p,s)` value.
    Decimal(Decimal),
    /// A `string` value.
    String(String),
    /// A `boolean` value.
    Boolean(bool),
    /// Milliseconds since the Unix epoch, UTC.
    Timestamp(i64),
    /// Days since 1970-01-01 (a `date`).
    Date(i32),
}

/// An arithmetic failure; the caller adds the model, column and event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArithError {
    /// The result does not fit the result type (also used when an operand is not a number).
    Overflow,
    /// Division or remainder by zero.
    DivisionByZero,
    /// A value that a CAST cannot convert, with the reason.
    Cast(String),
    /// A timestamp computed outside the years 1 to 9999, which a timestamp holds.
    TimeRange,
    /// A value for which the simulator cannot promise Flink's result (a TRY_CAST does not
    /// make it null), and why.
    Unfollowed(String),
}

impl fmt::Display for ArithError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArithError::Overflow => f.write_str("arithmetic overflow"),
            ArithError::TimeRange => f.write_str("the timestamp falls outside the years 1 to 9999"),
            ArithError::DivisionByZero => f.write_str("division by zero"),
            ArithError::Cast(m) | ArithError::Unfollowed(m) => f.write_str(m),
        }
    }
}

impl Value {
    /// Whether this is [`Value::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The value as an exact decimal, for integers and decimals.
    pub fn as_decimal(&self) -> Option<Decimal> {
        match self {
            Value::Int32(v) => Some(Decimal::new(i128::from(*v), 0)),
            Value::Int64(v) => Some(Decimal::new(i128::from(*v), 0)),
            Value::Decimal(d) => Some(*d),
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Float64(v) => Some(v.0),
            other => other.as_decimal().map(Decimal::to_f64),
        }
    }

    /// SQL comparison: `None` when either side is null or the two are not comparable.
    pub fn sql_cmp(&self, other: &Value) -> Option<Ordering> {
        match (self, other) {
            (Value::Null, _) | (_, Value::Null) => None,
            (Value::Float64(_), _) | (_, Value::Float64(_)) => {
                self.as_f64()?.partial_cmp(&other.as_f64()?)
            }
            (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
            (Value::Boolean(a), Value::Boolean(b)) => Some(a.cmp(b)),
            (Value::Timestamp(a), Value::Timestamp(b)) => Some(a.cmp(b)),
            (Value::Date(a), Value::Date(b)) => Some(a.cmp(b)),
            // Integers of one type, and decimals of one scale, compare as they are; mixed
            // ones exactly, as decimals.
            (Value::Int64(a), Value::Int64(b)) => Some(a.cmp(b)),
            (Value::Int32(a), Value::Int32(b)) => Some(a.cmp(b)),
            (Value::Decimal(a), Value::Decimal(b)) if a.scale == b.scale => {
                Some({ a.mantissa }.cmp(&{ b.mantissa }))
            }
            _ => Some(self.as_decimal()?.cmp_exact(other.as_decimal()?)),
        }
    }

    /// Total order for sorting: nulls first, then by `sql_cmp`, with NaN after every
    /// other number and equal to itself, and -0.0 before 0.0 (as Java's `Double.compare`
    /// orders them: Flink tells the two apart as grouping keys).
    pub fn sort_cmp(&self, other: &Value) -> Ordering {
        let nan = |v: &Value| matches!(v, Value::Float64(f) if f.0.is_nan());
        match (self.is_null(), other.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => match (nan(self), nan(other)) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                _ => self
                    .sql_cmp(other)
                    .unwrap_or(Ordering::Equal)
                    .then_with(|| match (self, other) {
                        (Value::Float64(a), Value::Float64(b)) => {
                            b.0.is_sign_negative().cmp(&a.0.is_sign_negative())
                        }
                        _ => Ordering::Equal,
                    }),
            },
        }
    }

    /// `self op other` computed at `result` type (from [`crate::types::arithmetic_type`]).
    /// Nulls propagate.
    ///
    /// # Errors
    /// Overflow of the result type and division by zero; never wraps.
    pub fn arith(&self, op: ArithOp, other: &Value, result: DataType) -> Result<Value, ArithError> {
        if self.is_null() || other.is_null() {
            return Ok(Value::Null);
        }
        match result {
            DataType::Float64 => {
                let (a, b) = (
                    self.as_f64().ok_or(ArithError::Overflow)?,
                    other.as_f64().ok_or(ArithError::Overflow)?,
                );
                let v = match op {
                    ArithOp::Add => a + b,
                    ArithOp::Sub => a - b,
                    ArithOp::Mul => a * b,
                    ArithOp::Div => {
                        if b == 0.0 {
                            return Err(ArithError::DivisionByZero);
                        }
                        a / b
                    }
                    ArithOp::Mod => {
                        if b == 0.0 {
                            return Err(ArithError::DivisionByZero);
                        }
                        a % b
                    }
                };
                // Finite operands whose result is not finite overflowed; a NaN or an
                // infinity given goes on as Java computes it.
                if v.is_finite() || !(a.is_finite() && b.is_finite()) {
                    Ok(Value::Float64(F64(v)))
                } else {
                    Err(ArithError::Overflow)
                }
            }
            DataType::Int32 | DataType::Int64 => {
                let a = self.as_decimal().ok_or(ArithError::Overflow)?.mantissa;
                let b = other.as_decimal().ok_or(ArithError::Overflow)?.mantissa;
                let v = int_op(op, a, b)?;
                if result == DataType::Int32 {
                    i32::try_from(v)
                        .map(Value::Int32)
                        .map_err(|_| ArithError::Overflow)
                } else {
                    i64::try_from(v)
                        .map(Value::Int64)
                        .map_err(|_| ArithError::Overflow)
                }
            }
            DataType::Decimal { precision, scale } => {
                let a = self.as_decimal().ok_or(ArithError::Overflow)?;
                let b = other.as_decimal().ok_or(ArithError::Overflow)?;
                let exact = decimal_op(op, a, b, scale)?;
                let d = exact.round_to(scale).ok_or(ArithError::Overflow)?;
                d.fit(precision, scale)
                    .map(Value::Decimal)
                    .map_err(|_| ArithError::Overflow)
            }
            _ => Err(ArithError::Overflow),
        }
    }

    /// `CAST(self AS to)`: exact where the target holds the value; decimal targets round
    /// half up as Flink does; out-of-range values are errors.
    ///
    /// # Errors
    /// A value the target type cannot hold, or a string that does not parse.
    pub fn cast(&self, to: DataType) -> Result<Value, ArithError> {
        let out_of_range = || ArithError::Cast(format!("{} does not fit {to}", self.render()));
        Ok(match (self, to) {
            (Value::Null, _) => Value::Null,
            (Value::String(s), DataType::String) => Value::String(s.clone()),
            (Value::Decimal(d), DataType::String) => Value::String(d.to_string()),
            (Value::Boolean(b), DataType::String) => {
                Value::String(if *b { "TRUE" } else { "FALSE" }.to_string())
            }
            (Value::Timestamp(ms), DataType::String) => {
                Value::String(crate::time::format_sql_timestamp(*ms))
            }
            (Value::Date(d), DataType::String) => Value::String(crate::time::format_date(*d)),
            (Value::String(s), DataType::Date) => {
                Value::Date(crate::time::parse_sql_date(s).ok_or_else(|| {
                    ArithError::Cast(format!("the string {} is not a date", self.render()))
                })?)
            }
            (Value::Timestamp(ms), DataType::Date) => Value::Date(crate::time::date_of(*ms)),
            (Value::Date(d), DataType::Timestamp) => {
                Value::Timestamp(crate::time::midnight(*d).ok_or(ArithError::TimeRange)?)
            }
            (Value::Date(d), DataType::Date) => Value::Date(*d),
            (v, DataType::String) => Value::String(v.render()),
            (Value::String(s), DataType::Timestamp) => match crate::date_format::parse_cast(s) {
                crate::date_format::Parsed::Time(ms) => Value::Timestamp(ms),
                crate::date_format::Parsed::Null => {
                    return Err(ArithError::Cast(format!(
                        "the string {} is not a timestamp (yyyy-MM-dd HH:mm:ss[.fff], or a date)",
                        self.render()
                    )));
                }
                crate::date_format::Parsed::Unfollowed(why) => {
                    return Err(ArithError::Unfollowed(format!(
                        "CAST of the string {} to TIMESTAMP reads {why}, which the simulator does not follow",
                        self.render()
                    )));
                }
            },
            (Value::String(s), t) => {
                let parsed = match t {
                    DataType::Boolean => string_to_boolean(s).map(Value::Boolean),
                    DataType::Float64 => java_double(s).map(|f| Value::Float64(F64(f))),
                    DataType::Decimal { .. } => number_text(s, true).map(Value::Decimal),
                    _ => number_text(s, false).map(Value::Decimal),
                };
                let v = parsed.ok_or_else(|| {
                    ArithError::Cast(format!("the string {} is not a valid {to}", self.render()))
                })?;
                if matches!(v, Value::Decimal(_)) {
                    v.cast(to)?
                } else {
                    v
                }
            }
            (Value::Boolean(b), t) if t.is_numeric() => Value::Int64(i64::from(*b)).cast(t)?,
            (v, DataType::Boolean) if v.as_decimal().is_some() => {
                Value::Boolean(v.as_decimal().map(|d| d.mantissa != 0).unwrap_or(false))
            }
            (Value::Float64(f), DataType::Int32 | DataType::Int64) => {
                // Flink truncates toward zero, as for decimals.
                let t = f.0.trunc();
                if !t.is_finite() || t.abs() >= 9.3e18 {
                    return Err(out_of_range());
                }
                Value::Int64(t as i64).cast(to)?
            }
            (Value::Float64(f), t) if t != DataType::Float64 => {
                if !f.0.is_finite() {
                    return Err(out_of_range());
                }
                let text = format!("{:.*}", 17, f.0);
                let d = Decimal::parse(&text).ok_or_else(out_of_range)?;
                Value::Decimal(
                    d.round_to(match t {
                        DataType::Decimal { scale, .. } => scale,
                        _ => 0,
                    })
                    .ok_or_else(out_of_range)?,
                )
                .cast(t)?
            }
            (v, DataType::Float64) => Value::Float64(F64(v.as_f64().ok_or_else(out_of_range)?)),
            (v, DataType::Int32 | DataType::Int64) => {
                let d = v.as_decimal().ok_or_else(out_of_range)?;
                // Flink truncates toward zero when casting a decimal to an integer.
                let m = d.mantissa / pow10(u32::from(d.scale)).ok_or_else(out_of_range)?;
                if to == DataType::Int32 {
                    Value::Int32(i32::try_from(m).map_err(|_| out_of_range())?)
                } else {
                    Value::Int64(i64::try_from(m).map_err(|_| out_of_range())?)
                }
            }
            (v, DataType::Decimal { precision, scale }) => {
                let d = v.as_decimal().ok_or_else(out_of_range)?;
                let d = d.round_to(scale).ok_or_else(out_of_range)?;
                Value::Decimal(d.fit(precision, scale).map_err(|_| out_of_range())?)
            }
            (Value::Timestamp(t), DataType::Timestamp) => Value::Timestamp(*t),
            _ => return Err(out_of_range()),
        })
    }

    /// Human rendering used by `test` and diagnostics: decimals trimmed, strings quoted,
    /// timestamps in RFC 3339, `null`.
    pub fn render(&self) -> String {
        match self {
            Value::Null => "null".into(),
            Value::Int32(v) => v.to_string(),
            Value::Int64(v) => v.to_string(),
            Value::Float64(v) => format_f64(v.0),
            Value::Decimal(d) => d.to_trimmed_string(),
            Value::String(s) => format!("{s:?}"),
            Value::Boolean(b) => b.to_string(),
            Value::Timestamp(ms) => crate::time::format_rfc3339(*ms),
            Value::Date(d) => crate::time::format_date(*d),
        }
    }
}

/// Shortest round-trip rendering of a float, always with a fraction or exponent
/// (`1.5`, `3.0`).
pub fn format_f64(v: f64) -> String {
    let s = format!("{v}");
    if s.contains(['.', 'e', 'E', 'N', 'i']) {
        s
    } else {
        format!("{s}.0")
    }
}

fn int_op(op: ArithOp, a: i128, b: i128) -> Result<i128, ArithError> {
    match op {
        ArithOp::Add => a.checked_add(b).ok_or(ArithError::Overflow),
        ArithOp::Sub => a.checked_sub(b).ok_or(ArithError::Overflow),
        ArithOp::Mul => a.checked_mul(b).ok_or(ArithError::Overflow),
        ArithOp::Div | ArithOp::Mod if b == 0 => Err(ArithError::DivisionByZero),
        ArithOp::Div => a.checked_div(b).ok_or(ArithError::Overflow),
        ArithOp::Mod => a.checked_rem(b).ok_or(ArithError::Overflow),
    }
}

/// Exact decimal arithmetic; division is computed to one digit beyond `scale` so that the
/// caller's half-up rounding is exact.
fn decimal_op(op: ArithOp, a: Decimal, b: Decimal, scale: u8) -> Result<Decimal, ArithError> {
    let common = a.scale.max(b.scale);
    let (ra, rb) = (
        a.rescale(common).ok_or(ArithError::Overflow)?,
        b.rescale(common).ok_or(ArithError::Overflow)?,
    );
    match op {
        ArithOp::Add => Ok(Decimal::new(
            ra.mantissa
                .checked_add(rb.mantissa)
                .ok_or(ArithError::Overflow)?,
            common,
        )),
        ArithOp::Sub => Ok(Decimal::new(
            ra.mantissa
                .checked_sub(rb.mantissa)
                .ok_or(ArithError::Overflow)?,
            common,
        )),
        ArithOp::Mul => {
            let s = a.scale.checked_add(b.scale).ok_or(ArithError::Overflow)?;
            Ok(Decimal::new(
                a.mantissa
                    .checked_mul(b.mantissa)
                    .ok_or(ArithError::Overflow)?,
                s,
            ))
        }
        ArithOp::Mod => {
            if rb.mantissa == 0 {
                return Err(ArithError::DivisionByZero);
            }
            Ok(Decimal::new(ra.mantissa % rb.mantissa, common))
        }
        ArithOp::Div => {
            if b.mantissa == 0 {
                return Err(ArithError::DivisionByZero);
            }
            // a/b at scale+1: (a.m * 10^(scale+1+b.s-a.s)) / b.m
            let target = i32::from(scale) + 1 + i32::from(b.scale) - i32::from(a.scale);
            let (num, den) = if target >= 0 {
                let f = pow10(target as u32).ok_or(ArithError::Overflow)?;
                (
                    a.mantissa.checked_mul(f).ok_or(ArithError::Overflow)?,
                    b.mantissa,
                )
            } else {
                let f = pow10((-target) as u32).ok_or(ArithError::Overflow)?;
                (
                    a.mantissa,
                    b.mantissa.checked_mul(f).ok_or(ArithError::Overflow)?,
                )
            };
            Ok(Decimal::new(num / den, scale + 1))
        }
    }
}

/// A string as Flink's CAST to BOOLEAN reads it: `t`, `true`, `y`, `yes`, `1` or `f`,
/// `false`, `n`, `no`, `0`, in any case, with no spaces around.
fn string_to_boolean(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "t" | "true" | "y" | "yes" | "1" => Some(true),
        "f" | "false" | "n" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// Java's whitespace trim: every character up to U+0020 off both ends.
fn java_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

/// A string as Java's `Double.parseDouble` (and so Flink's CAST to DOUBLE) reads it:
/// trimmed, an optional sign, then `NaN`, `Infinity`, a hexadecimal float (`0x1p3`), or
/// decimal digits with an optional point and exponent and an optional `f`/`d` suffix.
fn java_double(s: &str) -> Option<f64> {
    let t = java_trim(s);
    let (negative, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let signed = |v: f64| if negative { -v } else { v };
    match body {
        "NaN" => return Some(f64::NAN),
        "Infinity" => return Some(signed(f64::INFINITY)),
        _ => {}
    }
    let body = body.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(body);
    if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        return hex_double(hex).map(signed);
    }
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |x: &str| x.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() && frac.is_empty() || !digits(int) || !digits(frac) {
        return None;
    }
    if let Some(e) = exponent {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        if e.is_empty() || !digits(e) {
            return None;
        }
    }
    let plain = match exponent {
        Some(e) => format!("{int}.{frac}0e{e}"),
        None => format!("{int}.{frac}0"),
    };
    plain.parse::<f64>().ok().map(signed)
}

/// The digits after `0x` of a Java hexadecimal float: hex digits with an optional point,
/// then a binary exponent `p` (required).
fn hex_double(hex: &str) -> Option<f64> {
    let (mantissa, exponent) = hex.split_once(['p', 'P'])?;
    let exponent: i32 = exponent.parse().ok()?;
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut value = 0f64;
    for c in int.chars() {
        value = value * 16.0 + f64::from(c.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for c in frac.chars() {
        value += f64::from(c.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    Some(value * 2f64.powi(exponent))
}

/// A string as Flink's CAST to an exact number reads it: trimmed, an optional sign,
/// digits with an optional point (`.5`, `5.`); for a decimal target also an exponent
/// (`1e2`) and an `f`/`d` suffix. The exact value, before the target's rounding.
fn number_text(s: &str, decimal: bool) -> Option<Decimal> {
    // Flink trims an integer's text of spaces only (its string `trim`), so a tab or a
    // line break around it does not read.
    let t = if decimal {
        let t = java_trim(s);
        t.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(t)
    } else {
        s.trim_matches(' ')
    };
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) if decimal => (&t[..i], Some(&t[i + 1..])),
        Some(_) => return None,
        None => (t, None),
    };
    let (sign, body) = match mantissa.as_bytes().first() {
        Some(b'-') => ("-", &mantissa[1..]),
        Some(b'+') => ("", &mantissa[1..]),
        _ => ("", mantissa),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let exponent: i64 = match exponent {
        None => 0,
        Some(e) => e.parse().ok()?,
    };
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let scale = i64::try_from(frac.len()).ok()? - exponent;
    if digits.is_empty() {
        return Some(Decimal::new(0, 0));
    }
    if scale > 76 {
        // Below 10^-38: zero at any scale a column can have.
        return Some(Decimal::new(0, 0));
    }
    let text = if scale >= 0 {
        let scale = usize::try_from(scale).ok()?;
        let padded = format!("{digits:0>width$}", width = scale + 1);
        let (i, f) = padded.split_at(padded.len() - scale);
        format!("{sign}{i}.{f}")
    } else {
        let zeros = usize::try_from(-scale).ok()?;
        if digits.len() + zeros > 39 {
            return None;
        }
        format!("{sign}{digits}{}", "0".repeat(zeros))
    };
    Decimal::parse(text.trim_end_matches('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_cast_to_numbers_and_booleans_as_flink_reads_them() {
        let cast = |s: &str, t: DataType| Value::String(s.into()).cast(t).ok();
        // An integer's text is trimmed of spaces only, as Flink's string trim does; a
        // double's of all whitespace, as Java's parseDouble does.
        assert_eq!(cast(" 12 ", DataType::Int32), Some(Value::Int32(12)));
        assert_eq!(cast("\t12", DataType::Int32), None);
        assert_eq!(cast("12\n", DataType::Int64), None);
        assert_eq!(
            cast("\t12", DataType::Float64),
            Some(Value::Float64(F64(12.0)))
        );
        let d52 = DataType::Decimal {
            precision: 5,
            scale: 2,
        };
        // Each checked on Flink.
        for (s, want) in [
            ("yes", true),
            ("t", true),
            ("1", true),
            ("Y", true),
            ("TRUE", true),
            ("0", false),
            ("no", false),
            ("n", false),
        ] {
            assert_eq!(
                cast(s, DataType::Boolean),
                Some(Value::Boolean(want)),
                "{s}"
            );
        }
        assert_eq!(cast(" true ", DataType::Boolean), None);
        for (s, want) in [
            ("1e2", 100.0),
            ("1E-2", 0.01),
            (" 1.5 ", 1.5),
            ("1.5d", 1.5),
            ("1.5f", 1.5),
            ("0x1p3", 8.0),
            (" 2 ", 2.0),
            ("-Infinity", f64::NEG_INFINITY),
        ] {
            assert_eq!(
                cast(s, DataType::Float64),
                Some(Value::Float64(F64(want))),
                "{s}"
            );
        }
        assert!(matches!(cast("NaN", DataType::Float64), Some(Value::Float64(f)) if f.0.is_nan()));
        for refused in ["inf", "nan", "infinity", "1e", "e5", ".", "0x1"] {
            assert_eq!(cast(refused, DataType::Float64), None, "{refused}");
        }
        for (s, want) in [
            ("1e2", "100.00"),
            ("1.5f", "1.50"),
            ("1e-5", "0.00"),
            ("+1.25", "1.25"),
            (".5", "0.50"),
            ("5.", "5.00"),
            ("1.005", "1.01"),
            ("-1.005", "-1.01"),
        ] {
            let got = match cast(s, d52) {
                Some(Value::Decimal(d)) => Some(d.to_string()),
                _ => None,
            };
            assert_eq!(got, Some(want.to_string()), "{s}");
        }
        assert_eq!(cast("0x1p3", d52), None);
        for (s, want) in [
            (" 12 ", 12),
            ("+3", 3),
            ("1.0", 1),
            ("1.5", 1),
            ("-1.7", -1),
        ] {
            assert_eq!(cast(s, DataType::Int32), Some(Value::Int32(want)), "{s}");
        }
        assert_eq!(cast("1e2", DataType::Int32), None);
    }

    fn dec(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    #[test]
    fn a_value_is_four_words() {
        // Rows and keyed state are vectors of values: their size is the simulator's memory.
        assert_eq!(std::mem::size_of::<Decimal>(), 24);
        assert_eq!(std::mem::size_of::<Value>(), 32);
    }

    #[test]
    fn a_decimal_divides_by_a_count_half_away_from_zero() {
        // 4.75 / 3 = 1.58333.. at scale 6, as Flink's AVG over decimal(10,2).
        assert_eq!(dec("4.75").div_count(3, 6).unwrap().to_string(), "1.583333");
        // 3.1234568 / 3 = 1.04115226.. → 1.0411523 at scale 7.
        assert_eq!(
            dec("3.1234568").div_count(3, 7).unwrap().to_string(),
            "1.0411523"
        );
        assert_eq!(
            dec("-0.000005").div_count(2, 6).unwrap().to_string(),
            "-0.000003"
        );
        assert_eq!(
            dec("0.000005").div_count(2, 6).unwrap().to_string(),
            "0.000003"
        );
        assert_eq!(dec("2").div_count(4, 6).unwrap().to_string(), "0.500000");
        // A sum of 38 digits divides without overflowing on the way.
        let big = Decimal::new(9_999_999_999_999_999_999_999_999_999_999_999_999, 6);
        assert_eq!(
            { big.div_count(3, 6).unwrap().mantissa },
            3_333_333_333_333_333_333_333_333_333_333_333_333
        );
        assert_eq!(dec("1").div_count(0, 6), None);
        assert_eq!(dec("1.5").div_count(1, 0), None);
    }

    #[test]
    fn decimals_fit_exactly_or_fail() {
        assert_eq!(dec("28").fit(38, 9).unwrap().to_string(), "28.000000000");
        assert_eq!(dec("0.1234").fit(38, 2), Err(FitError::Rounding));
        assert_eq!(dec("0.1200").fit(38, 2).unwrap().to_string(), "0.12");
        assert_eq!(dec("123456").fit(5, 0), Err(FitError::Overflow));
        assert_eq!(dec("-0.5").to_string(), "-0.5");
        assert_eq!(dec("28.000000000").to_trimmed_string(), "28");
        assert_eq!(
            dec("0.000000027").fit(38, 9).unwrap().to_string(),
            "0.000000027"
        );
    }

    #[test]
    fn arithmetic_is_checked() {
        let t = DataType::Decimal {
            precision: 38,
            scale: 9,
        };
        let big = Value::Decimal(Decimal::new(10i128.pow(37), 9));
        let r = big.arith(ArithOp::Mul, &Value::Int32(1000), t);
        assert_eq!(r, Err(ArithError::Overflow));
        assert_eq!(
            Value::Int32(i32::MAX).arith(ArithOp::Add, &Value::Int32(1), DataType::Int32),
            Err(ArithError::Overflow)
        );
        assert_eq!(
            Value::Int64(1).arith(ArithOp::Div, &Value::Int64(0), DataType::Int64),
            Err(ArithError::DivisionByZero)
        );
        // decimal(12,2) / decimal(12,2) is decimal(27,15) and rounds half up.
        let div = |a: &str, b: &str| {
            let ty = DataType::Decimal {
                precision: 27,
                scale: 15,
            };
            Value::Decimal(dec(a))
                .arith(ArithOp::Div, &Value::Decimal(dec(b)), ty)
                .unwrap()
                .render()
        };
        assert_eq!(div("1.00", "3.00"), "0.333333333333333");
        assert_eq!(div("2.00", "3.00"), "0.666666666666667");
        assert_eq!(
            Value::Null.arith(ArithOp::Add, &Value::Int32(1), DataType::Int32),
            Ok(Value::Null)
        );
    }

    #[test]
    fn comparison_crosses_numeric_types() {
        assert_eq!(
            Value::Int64(28).sql_cmp(&Value::Decimal(dec("28.000000000"))),
            Some(Ordering::Equal)
        );
        assert_eq!(Value::Int32(1).sql_cmp(&Value::Null), None);
        assert_eq!(
            Value::Float64(F64(1.5)).sql_cmp(&Value::Decimal(dec("1.4"))),
            Some(Ordering::Greater)
        );
    }

    #[test]
    fn casts() {
        assert_eq!(
            Value::Int32(7).cast(DataType::Int64).unwrap(),
            Value::Int64(7)
        );
        assert_eq!(
            Value::Decimal(dec("7.9")).cast(DataType::Int32).unwrap(),
            Value::Int32(7)
        );
        assert_eq!(
            Value::Decimal(dec("7.25"))
                .cast(DataType::Decimal {
                    precision: 10,
                    scale: 1
                })
                .unwrap()
                .render(),
            "7.3"
        );
        assert!(Value::Int64(i64::MAX).cast(DataType::Int32).is_err());
        assert_eq!(
            Value::String("12.5".into())
                .cast(DataType::Decimal {
                    precision: 10,
                    scale: 2
                })
                .unwrap()
                .render(),
            "12.5"
        );
        assert!(Value::String("x".into()).cast(DataType::Int64).is_err());
        assert_eq!(
            Value::Int64(5).cast(DataType::String).unwrap(),
            Value::String("5".into())
        );
        assert_eq!(
            Value::Float64(F64(2.75)).cast(DataType::Int32).unwrap(),
            Value::Int32(2)
        );
        assert_eq!(
            Value::Float64(F64(-2.5)).cast(DataType::Int64).unwrap(),
            Value::Int64(-2)
        );
    }
}
