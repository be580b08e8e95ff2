//! Compiled expressions: the IR's [`Expr`] with every column resolved to a row index once,
//! at construction, and evaluated per row with SQL semantics.
//!
//! See docs/architecture.md, "`streamform-ir`" (the expression tree); docs/sql.md,
//! "Expressions" (types are the plan's); docs/concepts.md, "Accumulators" (arithmetic is
//! checked and never wraps).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

use streamform_ir::value::{ArithError, F64};
use streamform_ir::{ArithOp, BinaryOp, DataType, Decimal, Expr, Field, Func, Interval, Value};

/// Why evaluating an expression failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EvalError {
    /// Overflow, division by zero or a failed CAST: the errors docs/sql.md names.
    Arith(ArithError),
    /// A value of the wrong type reached an operator: a malformed plan, not bad data.
    Type(String),
    /// A value for which the simulator cannot promise Flink's result.
    Unfollowed(String),
}

impl From<ArithError> for EvalError {
    fn from(e: ArithError) -> EvalError {
        match e {
            ArithError::Unfollowed(why) => EvalError::Unfollowed(why),
            e => EvalError::Arith(e),
        }
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Arith(e) => e.fmt(f),
            EvalError::Type(m) | EvalError::Unfollowed(m) => f.write_str(m),
        }
    }
}

/// An expression whose columns are row indices.
#[derive(Debug, Clone)]
pub(crate) enum CExpr {
    Column(usize),
    Literal(Value),
    Not(Box<CExpr>),
    Negative(Box<CExpr>),
    Arith {
        op: ArithOp,
        left: Box<CExpr>,
        right: Box<CExpr>,
        ty: DataType,
    },
    Compare {
        op: BinaryOp,
        left: Box<CExpr>,
        right: Box<CExpr>,
    },
    And(Box<CExpr>, Box<CExpr>),
    Or(Box<CExpr>, Box<CExpr>),
    IsNull {
        expr: Box<CExpr>,
        negated: bool,
    },
    Cast {
        expr: Box<CExpr>,
        ty: DataType,
    },
    TryCast {
        expr: Box<CExpr>,
        ty: DataType,
    },
    Case {
        branches: Vec<(CExpr, CExpr)>,
        otherwise: Option<Box<CExpr>>,
    },
    Call {
        func: Func,
        args: Vec<CExpr>,
    },
    PlusInterval {
        expr: Box<CExpr>,
        interval: Interval,
    },
}

/// Resolves `name` against `schema`: the index of its first column of that name.
pub(crate) fn resolve(schema: &[Field], name: &str) -> Result<usize, String> {
    schema.iter().position(|f| f.name == name).ok_or_else(|| {
        let cols: Vec<&str> = schema.iter().map(|f| f.name.as_str()).collect();
        format!(
            "column `{name}` is not in the input (columns: {})",
            cols.join(", ")
        )
    })
}

impl CExpr {
    /// Compiles `expr` against the input `schema`.
    ///
    /// # Errors
    /// A message naming a column that is not in the schema, or whose type in the schema
    /// differs from the type the expression gives it.
    pub(crate) fn compile(expr: &Expr, schema: &[Field]) -> Result<CExpr, String> {
        let b = |e: &Expr| CExpr::compile(e, schema).map(Box::new);
        Ok(match expr {
            Expr::Column { name, ty } => {
                let i = resolve(schema, name)?;
                if schema[i].ty != *ty {
                    return Err(format!(
                        "column `{name}` is {} in the input, but the expression types it {ty}",
                        schema[i].ty
                    ));
                }
                CExpr::Column(i)
            }
            Expr::Literal { value, .. } => CExpr::Literal(value.clone()),
            Expr::Not(e) => CExpr::Not(b(e)?),
            Expr::Negative(e) => CExpr::Negative(b(e)?),
            Expr::Binary {
                op,
                left,
                right,
                ty,
            } => match op {
                BinaryOp::Arith(a) => CExpr::Arith {
                    op: *a,
                    left: b(left)?,
                    right: b(right)?,
                    ty: *ty,
                },
                BinaryOp::And => CExpr::And(b(left)?, b(right)?),
                BinaryOp::Or => CExpr::Or(b(left)?, b(right)?),
                BinaryOp::Eq
                | BinaryOp::NotEq
                | BinaryOp::Lt
                | BinaryOp::LtEq
                | BinaryOp::Gt
                | BinaryOp::GtEq => CExpr::Compare {
                    op: *op,
                    left: b(left)?,
                    right: b(right)?,
                },
            },
            Expr::IsNull { expr, negated } => CExpr::IsNull {
                expr: b(expr)?,
                negated: *negated,
            },
            Expr::Cast { expr, ty } => CExpr::Cast {
                expr: b(expr)?,
                ty: *ty,
            },
            Expr::TryCast { expr, ty } => CExpr::TryCast {
                expr: b(expr)?,
                ty: *ty,
            },
            Expr::PlusInterval { expr, interval } => CExpr::PlusInterval {
                expr: b(expr)?,
                interval: *interval,
            },
            Expr::Call { func, args, .. } => CExpr::Call {
                func: *func,
                args: args
                    .iter()
                    .map(|a| CExpr::compile(a, schema))
                    .collect::<Result<_, _>>()?,
            },
            Expr::Case {
                branches,
                otherwise,
                ty,
            } => {
                let mut compiled = Vec::with_capacity(branches.len());
                for (c, r) in branches {
                    if r.data_type() != *ty {
                        return Err(format!(
                            "a CASE result is {}, but the CASE is {ty}",
                            r.data_type()
                        ));
                    }
                    compiled.push((CExpr::compile(c, schema)?, CExpr::compile(r, schema)?));
                }
                if let Some(e) = otherwise
                    && e.data_type() != *ty
                {
                    return Err(format!(
                        "the ELSE result is {}, but the CASE is {ty}",
                        e.data_type()
                    ));
                }
                CExpr::Case {
                    branches: compiled,
                    otherwise: otherwise.as_deref().map(b).transpose()?,
                }
            }
        })
    }

    /// The column index when this expression is a bare column reference.
    pub(crate) fn as_column(&self) -> Option<usize> {
        match self {
            CExpr::Column(i) => Some(*i),
            _ => None,
        }
    }

    /// Evaluates over `row` (which must have the compiled schema's shape). Columns and
    /// literals are borrowed, computed values owned. Nulls propagate; AND and OR follow SQL's
    /// three-valued logic and skip their right side when the left decides (as Flink's
    /// generated code does).
    ///
    /// # Errors
    /// Overflow, division by zero and failed casts (docs/sql.md), or a value of the wrong type.
    pub(crate) fn eval<'r>(&'r self, row: &'r [Value]) -> Result<Cow<'r, Value>, EvalError> {
        Ok(match self {
            CExpr::Column(i) => Cow::Borrowed(&row[*i]),
            CExpr::Literal(v) => Cow::Borrowed(v),
            CExpr::Not(e) => Cow::Owned(match truth(&*e.eval(row)?, "NOT")? {
                None => Value::Null,
                Some(b) => Value::Boolean(!b),
            }),
            CExpr::Negative(e) => Cow::Owned(negate(&*e.eval(row)?)?),
            CExpr::Arith {
                op,
                left,
                right,
                ty,
            } => {
                let l = left.eval(row)?;
                let r = right.eval(row)?;
                Cow::Owned(l.arith(*op, &r, *ty)?)
            }
            CExpr::Compare { op, left, right } => {
                let l = left.eval(row)?;
                let r = right.eval(row)?;
                Cow::Owned(compare(*op, &l, &r)?)
            }
            CExpr::And(left, right) => {
                let l = truth(&*left.eval(row)?, "AND")?;
                if l == Some(false) {
                    return Ok(Cow::Owned(Value::Boolean(false)));
                }
                let r = truth(&*right.eval(row)?, "AND")?;
                Cow::Owned(match (l, r) {
                    (_, Some(false)) => Value::Boolean(false),
                    (Some(true), Some(true)) => Value::Boolean(true),
                    _ => Value::Null,
                })
            }
            CExpr::Or(left, right) => {
                let l = truth(&*left.eval(row)?, "OR")?;
                if l == Some(true) {
                    return Ok(Cow::Owned(Value::Boolean(true)));
                }
                let r = truth(&*right.eval(row)?, "OR")?;
                Cow::Owned(match (l, r) {
                    (_, Some(true)) => Value::Boolean(true),
                    (Some(false), Some(false)) => Value::Boolean(false),
                    _ => Value::Null,
                })
            }
            CExpr::IsNull { expr, negated } => {
                Cow::Owned(Value::Boolean(expr.eval(row)?.is_null() != *negated))
            }
            CExpr::Cast { expr, ty } => Cow::Owned(expr.eval(row)?.cast(*ty)?),
            // A failing conversion is null; a failure computing the operand is not the
            // cast's and still stops the run, as on Flink.
            CExpr::TryCast { expr, ty } => {
                // Null where the cast fails, but not where the simulator cannot follow it.
                Cow::Owned(match expr.eval(row)?.cast(*ty) {
                    Err(ArithError::Unfollowed(why)) => return Err(EvalError::Unfollowed(why)),
                    cast => cast.unwrap_or(Value::Null),
                })
            }
            CExpr::Call { func, args } => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    let v = a.eval(row)?;
                    // Every function here is null when an argument is.
                    if v.is_null() {
                        return Ok(Cow::Owned(Value::Null));
                    }
                    values.push(v);
                }
                Cow::Owned(call(*func, &values)?)
            }
            CExpr::PlusInterval { expr, interval } => Cow::Owned(match &*expr.eval(row)? {
                Value::Null => Value::Null,
                Value::Timestamp(ms) => streamform_ir::time::add_interval(*ms, *interval)
                    .map(Value::Timestamp)
                    .ok_or(ArithError::TimeRange)?,
                other => {
                    return Err(EvalError::Type(format!(
                        "an INTERVAL is added to {}, not a timestamp",
                        other.render()
                    )));
                }
            }),
            CExpr::Case {
                branches,
                otherwise,
            } => {
                // Conditions in order; only the chosen result is evaluated, as in Flink.
                for (c, r) in branches {
                    if truth(&*c.eval(row)?, "CASE WHEN")? == Some(true) {
                        return r.eval(row);
                    }
                }
                match otherwise {
                    Some(e) => e.eval(row)?,
                    None => Cow::Owned(Value::Null),
                }
            }
        })
    }

    /// Evaluates a predicate: `true` only when the result is TRUE (null and FALSE reject).
    ///
    /// # Errors
    /// As [`CExpr::eval`], and a non-boolean result.
    pub(crate) fn test(&self, row: &[Value]) -> Result<bool, EvalError> {
        Ok(truth(&*self.eval(row)?, "a predicate")? == Some(true))
    }
}

/// A scalar function over non-null arguments, with Flink's semantics.
fn call(func: Func, args: &[Cow<'_, Value>]) -> Result<Value, EvalError> {
    let wrong = || {
        EvalError::Type(format!(
            "{} cannot take ({})",
            func.name(),
            args.iter()
                .map(|a| a.render())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    };
    let text = |i: usize| match args.get(i).map(|a| a.as_ref()) {
        Some(Value::String(s)) => Ok(s.as_str()),
        _ => Err(wrong()),
    };
    let int = |i: usize| match args.get(i).map(|a| a.as_ref()) {
        Some(Value::Int32(n)) => Ok(i64::from(*n)),
        Some(Value::Int64(n)) => Ok(*n),
        _ => Err(wrong()),
    };
    Ok(match func {
        Func::Upper => Value::String(text(0)?.to_uppercase()),
        Func::Lower => Value::String(text(0)?.to_lowercase()),
        Func::Trim => Value::String(text(0)?.trim_matches(' ').to_string()),
        Func::TrimLeading => Value::String(text(0)?.trim_start_matches(' ').to_string()),
        Func::TrimTrailing => Value::String(text(0)?.trim_end_matches(' ').to_string()),
        Func::CharLength => {
            Value::Int32(i32::try_from(text(0)?.chars().count()).map_err(|_| ArithError::Overflow)?)
        }
        Func::Concat => {
            let mut out = String::new();
            for i in 0..args.len() {
                out.push_str(text(i)?);
            }
            Value::String(out)
        }
        Func::Substring => {
            let chars: Vec<char> = text(0)?.chars().collect();
            let n = chars.len() as i64;
            let pos = int(1)?;
            let start = match pos {
                p if p > 0 => p - 1,
                // Counting from the end; a start before the string gives '' (Flink).
                p if p < 0 && n + p < 0 => return Ok(Value::String(String::new())),
                p if p < 0 => n + p,
                _ => 0,
            };
            let end = match args.len() {
                3 => start.saturating_add(int(2)?),
                _ => n,
            }
            .min(n);
            let start = start.max(0);
            Value::String(if start >= end {
                String::new()
            } else {
                chars[start as usize..end as usize].iter().collect()
            })
        }
        Func::Abs => match args[0].as_ref() {
            Value::Int32(v) => Value::Int32(v.checked_abs().ok_or(ArithError::Overflow)?),
            Value::Int64(v) => Value::Int64(v.checked_abs().ok_or(ArithError::Overflow)?),
            Value::Float64(v) => Value::Float64(F64(v.0.abs())),
            Value::Decimal(d) => Value::Decimal(Decimal::new(
                d.mantissa.checked_abs().ok_or(ArithError::Overflow)?,
                d.scale,
            )),
            _ => return Err(wrong()),
        },
        Func::Floor | Func::Ceil => match args[0].as_ref() {
            v @ (Value::Int32(_) | Value::Int64(_)) => v.clone(),
            Value::Float64(v) => Value::Float64(F64(if func == Func::Floor {
                v.0.floor()
            } else {
                v.0.ceil()
            })),
            Value::Decimal(d) => {
                let unit = 10i128.pow(u32::from(d.scale));
                let down = d.mantissa.div_euclid(unit);
                let whole = if func == Func::Ceil && d.mantissa.rem_euclid(unit) != 0 {
                    down + 1
                } else {
                    down
                };
                Value::Decimal(Decimal::new(whole, 0))
            }
            _ => return Err(wrong()),
        },
        Func::Round => {
            let (Value::Decimal(d), Ok(digits)) = (args[0].as_ref(), int(1)) else {
                return Err(wrong());
            };
            let digits = u8::try_from(digits).map_err(|_| wrong())?;
            if digits >= d.scale {
                Value::Decimal(*d)
            } else {
                let unit = 10i128.pow(u32::from(d.scale - digits));
                let (q, r) = (d.mantissa / unit, d.mantissa % unit);
                let q = if r.abs() * 2 >= unit {
                    q + d.mantissa.signum()
                } else {
                    q
                };
                Value::Decimal(Decimal::new(q, digits))
            }
        }
        Func::Like => Value::Boolean(like(text(0)?, text(1)?)),
        Func::Replace => crate::strings::replace(text(0)?, text(1)?, text(2)?)?,
        Func::Position => crate::strings::position(text(0)?, text(1)?),
        Func::SplitIndex => crate::strings::split_index(text(0)?, text(1)?, int(2)?)?,
        Func::Regexp => crate::strings::regexp(text(0)?, text(1)?)?,
        Func::RegexpExtract => {
            let group = if args.len() > 2 { int(2)? } else { 0 };
            crate::strings::regexp_extract(text(0)?, text(1)?, group)?
        }
        Func::RegexpReplace => crate::strings::regexp_replace(text(0)?, text(1)?, text(2)?)?,
        Func::DateFormat => {
            let Value::Timestamp(ms) = args[0].as_ref() else {
                return Err(wrong());
            };
            crate::strings::date_format(*ms, text(1)?)?
        }
        Func::ToTimestamp => crate::strings::to_timestamp(text(0)?, text(1)?)?,
        Func::Extract(field) => {
            let ms = match args[0].as_ref() {
                Value::Timestamp(ms) => *ms,
                // A date's fields are its midnight's.
                Value::Date(d) => i64::from(*d) * 86_400_000,
                _ => return Err(wrong()),
            };
            Value::Int64(streamform_ir::time::extract(field, ms).ok_or(ArithError::Overflow)?)
        }
        Func::FloorTo(unit) => {
            let Value::Timestamp(ms) = args[0].as_ref() else {
                return Err(wrong());
            };
            Value::Timestamp(streamform_ir::time::floor_to(*ms, unit))
        }
        Func::CeilTo(unit) => {
            let Value::Timestamp(ms) = args[0].as_ref() else {
                return Err(wrong());
            };
            Value::Timestamp(streamform_ir::time::ceil_to(*ms, unit).ok_or(ArithError::TimeRange)?)
        }
    })
}

/// SQL LIKE without an escape character: `%` matches any run of characters (none
/// included), `_` exactly one but not a line break (Flink matches `_` with a regular
/// expression's `.`), anything else itself. Greedy with one backtrack point, linear in
/// practice.
fn like(text: &str, pattern: &str) -> bool {
    let t: Vec<char> = text.chars().collect();
    let p: Vec<char> = pattern.chars().collect();
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while i < t.len() {
        let one = |c: char| !matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}');
        if j < p.len()
            && ((p[j] == '_' && one(t[i])) || (p[j] != '%' && p[j] != '_' && p[j] == t[i]))
        {
            i += 1;
            j += 1;
        } else if j < p.len() && p[j] == '%' {
            star = Some((j, i));
            j += 1;
        } else if let Some((sj, si)) = star {
            j = sj + 1;
            i = si + 1;
            star = Some((sj, si + 1));
        } else {
            return false;
        }
    }
    p[j..].iter().all(|c| *c == '%')
}

/// A boolean operand: `None` for null.
fn truth(v: &Value, what: &str) -> Result<Option<bool>, EvalError> {
    match v {
        Value::Null => Ok(None),
        Value::Boolean(b) => Ok(Some(*b)),
        other => Err(EvalError::Type(format!(
            "{what} expects a boolean, got {}",
            other.render()
        ))),
    }
}

/// Unary minus at the operand's own type; the negation of the smallest integer overflows.
fn negate(v: &Value) -> Result<Value, EvalError> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Int32(i) => Value::Int32(i.checked_neg().ok_or(ArithError::Overflow)?),
        Value::Int64(i) => Value::Int64(i.checked_neg().ok_or(ArithError::Overflow)?),
        Value::Float64(f) => Value::Float64(F64(-f.0)),
        Value::Decimal(d) => {
            let mut d = *d;
            d.mantissa = d.mantissa.checked_neg().ok_or(ArithError::Overflow)?;
            Value::Decimal(d)
        }
        other => return Err(EvalError::Type(format!("cannot negate {}", other.render()))),
    })
}

/// SQL comparison: null when either side is null. A float NaN compares unequal to
/// everything (Java's double comparison).
fn compare(op: BinaryOp, l: &Value, r: &Value) -> Result<Value, EvalError> {
    if l.is_null() || r.is_null() {
        return Ok(Value::Null);
    }
    let Some(ord) = l.sql_cmp(r) else {
        if matches!(l, Value::Float64(_)) || matches!(r, Value::Float64(_)) {
            return Ok(Value::Boolean(op == BinaryOp::NotEq));
        }
        return Err(EvalError::Type(format!(
            "cannot compare {} with {}",
            l.render(),
            r.render()
        )));
    };
    Ok(Value::Boolean(match op {
        BinaryOp::Eq => ord == Ordering::Equal,
        BinaryOp::NotEq => ord != Ordering::Equal,
        BinaryOp::Lt => ord == Ordering::Less,
        BinaryOp::LtEq => ord != Ordering::Greater,
        BinaryOp::Gt => ord == Ordering::Greater,
        BinaryOp::GtEq => ord != Ordering::Less,
        BinaryOp::Arith(_) | BinaryOp::And | BinaryOp::Or => {
            unreachable!("compile() routes only comparisons here")
        }
    }))
}

#[cfg(test)]
mod function_tests {
    use super::*;

    fn s(v: &str) -> Cow<'static, Value> {
        Cow::Owned(Value::String(v.to_string()))
    }

    fn i(v: i32) -> Cow<'static, Value> {
        Cow::Owned(Value::Int32(v))
    }

    fn dec(v: &str) -> Cow<'static, Value> {
        Cow::Owned(Value::Decimal(Decimal::parse(v).unwrap()))
    }

    #[test]
    fn like_matches_percent_and_underscore_without_an_escape() {
        assert!(like("abc", "a_c"));
        assert!(like("abc", "%"));
        assert!(like("", "%"));
        assert!(!like("", "_"));
        assert!(like("a%c", "a%c"));
        assert!(
            !like("a%c", "a\\%c"),
            "a backslash is an ordinary character"
        );
        assert!(like("aXbYb", "a%b"));
        assert!(!like("aXbYc", "a%b"));
        assert!(like("ab", "a%%b"));
        assert!(!like("a\nc", "a_c"), "`_` is not a line break (Flink)");
        assert!(like("a\nc", "a%c"));
    }

    #[test]
    fn substring_counts_from_one_and_from_the_end() {
        let sub = |args: &[Cow<'static, Value>]| call(Func::Substring, args).unwrap();
        assert_eq!(sub(&[s("hello"), i(2), i(3)]), Value::String("ell".into()));
        assert_eq!(sub(&[s("hello"), i(0), i(2)]), Value::String("he".into()));
        assert_eq!(sub(&[s("hello"), i(-2)]), Value::String("lo".into()));
        assert_eq!(sub(&[s("hello"), i(9), i(2)]), Value::String(String::new()));
        assert_eq!(sub(&[s("héllo"), i(2), i(1)]), Value::String("é".into()));
        // Flink: a negative start reaching before the string gives ''.
        assert_eq!(sub(&[s("abc"), i(-4)]), Value::String(String::new()));
        assert_eq!(
            sub(&[s("abc"), i(-10), i(20)]),
            Value::String(String::new())
        );
        assert_eq!(sub(&[s("abc"), i(-3), i(2)]), Value::String("ab".into()));
    }

    #[test]
    fn rounding_and_floors_of_decimals() {
        let f = |func, args: &[Cow<'static, Value>]| call(func, args).unwrap();
        assert_eq!(
            f(Func::Round, &[dec("2.345"), i(2)]),
            dec("2.35").into_owned()
        );
        assert_eq!(
            f(Func::Round, &[dec("-2.345"), i(2)]),
            dec("-2.35").into_owned()
        );
        assert_eq!(
            f(Func::Round, &[dec("2.344"), i(2)]),
            dec("2.34").into_owned()
        );
        assert_eq!(f(Func::Floor, &[dec("-1.55")]), dec("-2").into_owned());
        assert_eq!(f(Func::Ceil, &[dec("-1.55")]), dec("-1").into_owned());
        assert_eq!(f(Func::Ceil, &[dec("2.00")]), dec("2").into_owned());
        assert_eq!(
            call(Func::Abs, &[Cow::Owned(Value::Int32(i32::MIN))]),
            Err(EvalError::Arith(ArithError::Overflow)),
            "never wraps (docs/sql.md)"
        );
        assert_eq!(f(Func::Trim, &[s(" \ta ")]), Value::String("\ta".into()));
    }
}
