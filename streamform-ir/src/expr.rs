//! The expression tree of Filter and Project nodes: seven variants, each typed.
//!
//! Spec: streamform-docs "From SQL to a plan" (the expression tree); DECISIONS.md D4 (types).

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
        /// [`crate::types::arithmetic_type`] computes it (D4).
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
            | Expr::Case { ty, .. } => *ty,
            Expr::Not(_) | Expr::IsNull { .. } => DataType::Boolean,
            Expr::Negative(e) => e.data_type(),
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
            | Expr::Cast { expr: e, .. } => e.collect_columns(out),
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
        Value::Timestamp(ms) => format!("TIMESTAMP '{}'", crate::time::format_rfc3339(*ms)),
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
