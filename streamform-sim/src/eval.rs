//! Compiled expressions: the IR's [`Expr`] with every column resolved to a row index once,
//! at construction, and evaluated per row with SQL semantics.
//!
//! Spec: streamform-docs "From SQL to a plan" (the seven-variant expression tree);
//! DECISIONS.md D4 (types are the plan's; arithmetic is checked and never wraps).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

use streamform_ir::value::{ArithError, F64};
use streamform_ir::{ArithOp, BinaryOp, DataType, Expr, Field, Value};

/// Why evaluating an expression failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EvalError {
    /// Overflow, division by zero or a failed CAST: the errors D4 names.
    Arith(ArithError),
    /// A value of the wrong type reached an operator: a malformed plan, not bad data.
    Type(String),
}

impl From<ArithError> for EvalError {
    fn from(e: ArithError) -> EvalError {
        EvalError::Arith(e)
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Arith(e) => e.fmt(f),
            EvalError::Type(m) => f.write_str(m),
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
    Case {
        branches: Vec<(CExpr, CExpr)>,
        otherwise: Option<Box<CExpr>>,
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
    /// Overflow, division by zero and failed casts (D4), or a value of the wrong type.
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
