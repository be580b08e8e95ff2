//! Lowering expressions: DataFusion's typed expressions into the IR's, typed by
//! Streamform's own rules (docs/sql.md), not DataFusion's coercion.

use datafusion_common::{DFSchemaRef, ScalarValue};
use datafusion_expr::{Expr as DfExpr, Operator as DfOp};
use streamform_ir::expr::{TimeField, TimeUnit};
use streamform_ir::types::{arithmetic_type, castable, common_type, comparable};
use streamform_ir::{ArithOp, BinaryOp, DataType, Expr, Field, Func, Value};

use crate::diagnostic::Code;

use super::catalog::from_arrow;
use super::lowering::*;

impl Lowering<'_> {
    pub(super) fn column(
        &self,
        df: &DFSchemaRef,
        col: &datafusion_common::Column,
    ) -> Lowered<Field> {
        match df.index_of_column(col) {
            Ok(i) => self.schema.get(i).cloned().ok_or_else(|| {
                self.err(
                    Code::Internal,
                    format!("column `{}` could not be resolved", col.name),
                    "this is a bug in Streamform's lowering",
                )
            }),
            Err(_) => Err(self.err(
                Code::UnknownColumn,
                format!("unknown column `{}`", col.name),
                "check the column names of the input",
            )),
        }
    }

    /// `e` in the IR, typed; a problem without a position points at the earliest column
    /// of the innermost expression that has the problem.
    pub(super) fn expr(&self, df: &DFSchemaRef, e: &DfExpr) -> Lowered<Expr> {
        self.expr_at(df, e).map_err(|d| {
            if d.span.is_none() {
                let span = self.span_of(e);
                d.with_span(span)
            } else {
                d
            }
        })
    }

    /// Where `e` is in the model's text: the earliest column it reads, when the planner
    /// recorded where.
    pub(super) fn span_of(&self, e: &DfExpr) -> Option<std::ops::Range<usize>> {
        let at = |l: &datafusion_common::Location| {
            crate::diagnostic::offset_of(self.text, l.line as usize, l.column as usize)
        };
        // Past an aggregation, a column of its output is placed at the FROM relation.
        let outside_from = |r: &std::ops::Range<usize>| {
            self.from_span
                .as_ref()
                .is_none_or(|from| r.end <= from.start || r.start >= from.end)
        };
        e.column_refs()
            .into_iter()
            .filter_map(|c| c.spans().first())
            .map(|span| {
                let start = at(&span.start);
                start..at(&span.end).max(start + 1).min(self.text.len())
            })
            .filter(outside_from)
            .min_by_key(|r| r.start)
    }

    /// `CAST(operand AS target)`, or `TRY_CAST` when `try_cast`, typed by the rules of
    /// docs/sql.md.
    fn cast(
        &self,
        df: &DFSchemaRef,
        operand: &DfExpr,
        target: &arrow_schema::DataType,
        try_cast: bool,
    ) -> Lowered<Expr> {
        let inner = self.expr(df, operand)?;
        let Some(to) = from_arrow(target) else {
            return Err(self.err(
                Code::UnsupportedSql,
                format!("CAST to {target} is not supported"),
                "cast to INT, BIGINT, DOUBLE, DECIMAL(p,s), STRING or BOOLEAN",
            ));
        };
        let inner = retype_null(inner, to);
        if try_cast && matches!(to, DataType::Decimal { .. }) {
            return Err(self.err(
                Code::UnsupportedSql,
                format!("TRY_CAST of `{inner}` to {to} is not supported yet"),
                "Flink reads some text that is not a decimal as one (a short one with a letter after its digits, `1x`, is 1), which the simulator does not copy yet; TRY_CAST to DOUBLE or INT, then CAST to the decimal",
            ));
        }
        if try_cast && inner.data_type() != DataType::String {
            return Err(self.err(
                Code::UnsupportedSql,
                format!(
                    "TRY_CAST of the {} `{inner}` is not supported yet",
                    inner.data_type()
                ),
                "TRY_CAST reads strings, giving null for one that does not read; convert other values with CAST",
            ));
        }
        if inner.data_type() == DataType::Float64 && to == DataType::String {
            return Err(self.err(
                Code::UnsupportedSql,
                format!("CAST of the float64 `{inner}` to STRING is not supported"),
                "Flink writes a double as Java does (1.0E10, with the digits Java chooses), which Streamform cannot promise to match; CAST to DECIMAL(p, s) first, then to STRING",
            ));
        }
        if !castable(inner.data_type(), to) {
            return Err(self.err(
                Code::TypeMismatch,
                format!("cannot CAST `{inner}` from {} to {to}", inner.data_type()),
                "casts convert between numbers, strings and booleans, and between strings, timestamps and dates",
            ));
        }
        // A timestamp written as a string (TIMESTAMP '...', CAST('...' AS TIMESTAMP))
        // is read now, so a bad one is a check error rather than a failed run.
        if let (
            false,
            Expr::Literal {
                value: v @ Value::String(_),
                ..
            },
            DataType::Timestamp | DataType::Date,
        ) = (try_cast, &inner, to)
        {
            let value = v.cast(to).map_err(|e| {
                // A literal carries no position; its text in the model does.
                let quoted = format!("'{}'", v.render().trim_matches('"'));
                let span = self.text.find(&quoted).map(|at| at..at + quoted.len());
                self.err(
                    Code::InvalidValue,
                    e.to_string(),
                    if to == DataType::Date {
                        "write a date as 'yyyy-MM-dd', of the years 0 to 9999"
                    } else {
                        "write a timestamp as 'yyyy-MM-dd HH:mm:ss' (a fraction of up to three digits may follow) or a date 'yyyy-MM-dd'"
                    },
                )
                .with_span(span)
            })?;
            return Ok(Expr::Literal { value, ty: to });
        }
        if try_cast {
            return Ok(Expr::TryCast {
                expr: Box::new(inner),
                ty: to,
            });
        }
        Ok(Expr::Cast {
            expr: Box::new(inner),
            ty: to,
        })
    }

    pub(super) fn expr_at(&self, df: &DFSchemaRef, e: &DfExpr) -> Lowered<Expr> {
        Ok(match e {
            DfExpr::Alias(a) => self.expr(df, &a.expr)?,
            DfExpr::Column(c) => {
                let f = self.column(df, c)?;
                Expr::Column {
                    name: f.name,
                    ty: f.ty,
                }
            }
            DfExpr::Literal(..) if interval(e).is_some() => {
                return Err(self.err(
                    Code::TypeMismatch,
                    "an INTERVAL stands on its own".into(),
                    "an INTERVAL is added to or subtracted from a timestamp: seen_at + INTERVAL '5' MINUTE",
                ));
            }
            DfExpr::Literal(v, _) => literal(v).ok_or_else(|| {
                self.err(
                    Code::UnsupportedSql,
                    format!("the literal {v} is not supported"),
                    "literals are numbers, 'strings', TRUE, FALSE and NULL",
                )
            })?,
            DfExpr::Not(inner) => {
                let inner = self.expr(df, inner)?;
                self.expect_boolean(&inner, "NOT")?;
                Expr::Not(Box::new(inner))
            }
            DfExpr::Negative(inner) => {
                let inner = self.expr(df, inner)?;
                if !inner.data_type().is_numeric() {
                    return Err(self.err(
                        Code::TypeMismatch,
                        format!("cannot negate `{inner}` of type {}", inner.data_type()),
                        "unary minus applies to numbers",
                    ));
                }
                Expr::Negative(Box::new(inner))
            }
            // `x BETWEEN lo AND hi` is `x >= lo AND x <= hi`, nulls included; NOT BETWEEN
            // its negation.
            DfExpr::Between(b) => {
                let within = (*b.expr)
                    .clone()
                    .gt_eq((*b.low).clone())
                    .and((*b.expr).clone().lt_eq((*b.high).clone()));
                let within = self.expr(df, &within)?;
                if b.negated {
                    Expr::Not(Box::new(within))
                } else {
                    within
                }
            }
            // `x IN (a, b)` is `x = a OR x = b`, nulls included (SQL's three-valued OR).
            DfExpr::InList(l) => {
                let any = l
                    .list
                    .iter()
                    .map(|v| (*l.expr).clone().eq(v.clone()))
                    .reduce(DfExpr::or)
                    .ok_or_else(|| {
                        self.err(
                            Code::UnsupportedSql,
                            "IN () with an empty list".into(),
                            "list at least one value",
                        )
                    })?;
                let any = self.expr(df, &any)?;
                if l.negated {
                    Expr::Not(Box::new(any))
                } else {
                    any
                }
            }
            DfExpr::BinaryExpr(b)
                if matches!(b.op, DfOp::Plus | DfOp::Minus)
                    && (interval(&b.left).is_some() || interval(&b.right).is_some()) =>
            {
                self.plus_interval(df, b)?
            }
            DfExpr::Case(c) => self.case(df, c)?,
            DfExpr::ScalarFunction(f) => self.call(df, f.func.name(), &f.args)?,
            DfExpr::BinaryExpr(b) if b.op == DfOp::StringConcat => self.function(
                Func::Concat,
                vec![self.expr(df, &b.left)?, self.expr(df, &b.right)?],
                None,
            )?,
            DfExpr::Like(l) => {
                if l.escape_char.is_some() || l.case_insensitive {
                    return Err(self.err(
                        Code::UnsupportedSql,
                        "this form of LIKE is not supported yet".into(),
                        "write `x LIKE 'pattern'`: `%` matches any run of characters and `_` one; there is no escape character",
                    ));
                }
                let like = self.function(
                    Func::Like,
                    vec![self.expr(df, &l.expr)?, self.expr(df, &l.pattern)?],
                    None,
                )?;
                if l.negated {
                    Expr::Not(Box::new(like))
                } else {
                    like
                }
            }
            DfExpr::IsNull(inner) => Expr::IsNull {
                expr: Box::new(self.expr(df, inner)?),
                negated: false,
            },
            DfExpr::IsNotNull(inner) => Expr::IsNull {
                expr: Box::new(self.expr(df, inner)?),
                negated: true,
            },
            DfExpr::Cast(c) => self.cast(df, &c.expr, c.field.data_type(), false)?,
            // TRY_CAST: null where CAST would fail (docs/sql.md).
            DfExpr::TryCast(c) => self.cast(df, &c.expr, c.field.data_type(), true)?,
            DfExpr::BinaryExpr(b) => {
                let left = self.expr(df, &b.left)?;
                let right = self.expr(df, &b.right)?;
                let (left_ty, right_ty) = (left.data_type(), right.data_type());
                let (left, right) = (retype_null(left, right_ty), retype_null(right, left_ty));
                let op = match b.op {
                    DfOp::Plus => BinaryOp::Arith(ArithOp::Add),
                    DfOp::Minus => BinaryOp::Arith(ArithOp::Sub),
                    DfOp::Multiply => BinaryOp::Arith(ArithOp::Mul),
                    DfOp::Divide => BinaryOp::Arith(ArithOp::Div),
                    DfOp::Modulo => BinaryOp::Arith(ArithOp::Mod),
                    DfOp::Eq => BinaryOp::Eq,
                    DfOp::NotEq => BinaryOp::NotEq,
                    DfOp::Lt => BinaryOp::Lt,
                    DfOp::LtEq => BinaryOp::LtEq,
                    DfOp::Gt => BinaryOp::Gt,
                    DfOp::GtEq => BinaryOp::GtEq,
                    DfOp::And => BinaryOp::And,
                    DfOp::Or => BinaryOp::Or,
                    other => {
                        return Err(self.err(
                            Code::UnsupportedSql,
                            format!("the operator `{other}` is not supported yet"),
                            "comparison, arithmetic, AND, OR and NOT are supported",
                        ));
                    }
                };
                let (lt, rt) = (left.data_type(), right.data_type());
                let ty = match op {
                    BinaryOp::Arith(a) => arithmetic_type(a, lt, rt).map_err(|m| {
                        self.err(
                            Code::TypeMismatch,
                            format!("`{} {} {}`: {m}", left, op.symbol(), right),
                            "arithmetic applies to int32, int64, float64 and decimal columns",
                        )
                    })?,
                    BinaryOp::And | BinaryOp::Or => {
                        self.expect_boolean(&left, op.symbol())?;
                        self.expect_boolean(&right, op.symbol())?;
                        DataType::Boolean
                    }
                    _ => {
                        if !comparable(lt, rt) {
                            return Err(self.err(
                                Code::TypeMismatch,
                                format!("cannot compare `{left}` ({lt}) with `{right}` ({rt})"),
                                "compare values of the same kind, or CAST one side",
                            ));
                        }
                        DataType::Boolean
                    }
                };
                Expr::Binary {
                    op,
                    left: Box::new(left),
                    right: Box::new(right),
                    ty,
                }
            }
            other => {
                return Err(self.err(
                    Code::UnsupportedSql,
                    format!("the expression `{other}` is not supported yet"),
                    crate::sql_help(),
                ));
            }
        })
    }

    /// Where the model writes `NULL AS name` (a literal has no position of its own).
    /// Where the first NULL written as a word is in the model's text, for an error about a
    /// NULL without a type (the planner keeps no position for a literal).
    pub(super) fn bare_null(&self) -> Option<std::ops::Range<usize>> {
        let upper = self.text.to_ascii_uppercase();
        let bytes = upper.as_bytes();
        let word = |i: usize| {
            bytes
                .get(i)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        };
        upper
            .match_indices("NULL")
            .map(|(at, _)| at)
            .find(|&at| {
                // Not the NULL of `IS [NOT] NULL`, which is no literal.
                let before = upper[..at].trim_end();
                let inside_a_word = (at > 0 && word(at - 1)) || word(at + 4);
                let is_null_test = before.ends_with(" IS") || before.ends_with(" NOT");
                !(inside_a_word || is_null_test)
            })
            .map(|at| at..at + 4)
    }

    pub(super) fn null_named(&self, name: &str) -> Option<std::ops::Range<usize>> {
        let upper = self.text.to_ascii_uppercase();
        upper.match_indices("NULL").find_map(|(at, _)| {
            let mut rest = upper[at + 4..].split_whitespace();
            let alias = self.text.get(at + 4..)?.split_whitespace().nth(1)?;
            (rest.next() == Some("AS") && alias.trim_matches(['`', '"', ',']) == name)
                .then_some(at..at + 4)
        })
    }

    pub(super) fn expect_boolean(&self, e: &Expr, what: &str) -> Lowered<()> {
        if e.data_type() == DataType::Boolean {
            Ok(())
        } else {
            Err(self.err(
                Code::TypeMismatch,
                format!("{what} needs a boolean, but `{e}` is {}", e.data_type()),
                "use a comparison such as x > 0",
            ))
        }
    }

    /// A scalar function call by DataFusion's name for it.
    pub(super) fn call(&self, df: &DFSchemaRef, name: &str, args: &[DfExpr]) -> Lowered<Expr> {
        if name == "mod"
            && let [a, b] = args
        {
            // MOD(a, b) is a % b.
            let rem = DfExpr::BinaryExpr(datafusion_expr::BinaryExpr::new(
                Box::new(a.clone()),
                DfOp::Modulo,
                Box::new(b.clone()),
            ));
            return self.expr(df, &rem);
        }
        // TO_TIMESTAMP(s) reads `s` as CAST does, and is null where it does not read:
        // Flink parses both with the same default pattern (docs/sql.md).
        if name == "to_timestamp"
            && let [s, pattern] = args
        {
            let lowered = vec![self.expr(df, s)?, self.expr(df, pattern)?];
            self.string_pattern(Func::ToTimestamp, &lowered, args)?;
            return self.function(Func::ToTimestamp, lowered, None);
        }
        if name == "to_timestamp"
            && let [s] = args
        {
            let ty = self.expr(df, s)?.data_type();
            if ty != DataType::String {
                return Err(self
                    .err(
                        Code::TypeMismatch,
                        format!("TO_TIMESTAMP does not take ({ty})"),
                        if ty == DataType::Timestamp {
                            "it reads a string written yyyy-MM-dd HH:mm:ss; a timestamp needs no reading"
                        } else {
                            "it reads a string written yyyy-MM-dd HH:mm:ss, or with a pattern as its second argument; CAST other values to STRING first"
                        },
                    )
                    .with_span(self.span_of(s)));
            }
            let timestamp =
                arrow_schema::DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, None);
            return self.cast(df, s, &timestamp, true);
        }
        if name == "date_part"
            && let [DfExpr::Literal(field, _), ts] = args
        {
            let name = field.to_string();
            let name = name.trim_matches('\'');
            let Some(field) = TimeField::from_name(name) else {
                return Err(self.err(
                    Code::UnsupportedSql,
                    format!("EXTRACT({name} ...) is not supported yet"),
                    "extract YEAR, MONTH, DAY, HOUR, MINUTE, SECOND or DOW",
                ));
            };
            return self.function(Func::Extract(field), vec![self.expr(df, ts)?], None);
        }
        if let [t, DfExpr::Literal(unit, _)] = args
            && (name == super::catalog::FLOOR_TO || name == super::catalog::CEIL_TO)
        {
            let unit = unit.to_string();
            let unit = unit.trim_matches('\'');
            let Some(unit) = TimeUnit::from_name(unit) else {
                return Err(self.err(
                    Code::UnsupportedSql,
                    format!("rounding a timestamp to {unit} is not supported yet"),
                    crate::surface::TIME_ROUNDING_HELP,
                ));
            };
            let func = if name == super::catalog::FLOOR_TO {
                Func::FloorTo(unit)
            } else {
                Func::CeilTo(unit)
            };
            return self.function(func, vec![self.expr(df, t)?], None);
        }
        let Some(func) = crate::surface::planned()
            .find(|(n, _)| *n == name)
            .and_then(|(_, f)| f)
        else {
            return Err(self.err(
                Code::UnsupportedSql,
                format!("the function `{name}` is not supported yet"),
                crate::sql_help(),
            ));
        };
        let mut lowered = args
            .iter()
            .map(|a| self.expr(df, a))
            .collect::<Lowered<Vec<Expr>>>()?;
        // TRIM(LEADING ' ' FROM s) plans as ltrim(s, ' '): spaces are what TRIM removes
        // anyway (the check refuses any other characters).
        if matches!(func, Func::Trim | Func::TrimLeading | Func::TrimTrailing) {
            lowered.truncate(1);
        }
        // ROUND's digits, and SUBSTRING's length, must be numbers written in the query:
        // Flink's result type depends on the first, and a negative length is not defined.
        let literal_int = |e: &Expr| match e {
            Expr::Literal {
                value: Value::Int32(n),
                ..
            } => Some(i64::from(*n)),
            Expr::Literal {
                value: Value::Int64(n),
                ..
            } => Some(*n),
            _ => None,
        };
        let digits = match (func, lowered.get(1).map(literal_int)) {
            (Func::Round, Some(Some(n))) => {
                Some(u8::try_from(n).ok().filter(|n| *n <= 38).ok_or_else(|| {
                    self.err(
                        Code::UnsupportedSql,
                        format!("ROUND to {n} digits is not supported"),
                        "round to 0 to 38 digits after the point",
                    )
                })?)
            }
            (Func::Round, _) => {
                return Err(self
                    .err(
                        Code::UnsupportedSql,
                        "ROUND's number of digits must be written as a number".into(),
                        "write e.g. ROUND(price, 2)",
                    )
                    .with_span(args.get(1).and_then(|a| self.span_of(a))));
            }
            _ => None,
        };
        if func == Func::Substring
            && let Some(length) = lowered.get(2)
            && literal_int(length).is_none_or(|n| n < 0)
        {
            return Err(self
                .err(
                    Code::UnsupportedSql,
                    "SUBSTRING's length must be written as a number of 0 or more".into(),
                    "write e.g. SUBSTRING(code, 1, 3)",
                )
                .with_span(args.get(2).and_then(|a| self.span_of(a))));
        }
        self.string_pattern(func, &lowered, args)?;
        self.function(func, lowered, digits)
    }

    /// A regular expression or a separator written in the query, checked as the simulator
    /// will run it (docs/sql.md, "Regular expressions"): a pattern outside the part of the
    /// syntax Java and the simulator read alike, a REGEXP_REPLACE pattern that can match an
    /// empty string, an empty SPLIT_INDEX separator.
    fn string_pattern(&self, func: Func, lowered: &[Expr], args: &[DfExpr]) -> Lowered<()> {
        let Some(Expr::Literal {
            value: Value::String(text),
            ..
        }) = lowered.get(1)
        else {
            return Ok(());
        };
        let span = || args.get(1).and_then(|a| self.span_of(a));
        match func {
            Func::ToTimestamp => match streamform_ir::date_format::read(text)
                .and_then(|p| p.parser())
            {
                Ok(_) => Ok(()),
                Err(what) => Err(self
                    .err(
                        Code::UnsupportedSql,
                        format!("the TO_TIMESTAMP pattern '{text}', which uses {what}, is not supported"),
                        crate::surface::TO_TIMESTAMP_HELP,
                    )
                    .with_span(span())),
            },
            Func::SplitIndex if text.is_empty() => Err(self
                .err(
                    Code::UnsupportedSql,
                    "SPLIT_INDEX with an empty separator is not supported".into(),
                    "Flink splits on whitespace then, by Java's own rule of what whitespace is; name the separator: SPLIT_INDEX(s, ' ', 0)",
                )
                .with_span(span())),
            Func::Regexp | Func::RegexpExtract | Func::RegexpReplace if !text.is_empty() => {
                match streamform_ir::java_regex::translate(text) {
                    Err(refused) => Err(self
                        .err(
                            Code::UnsupportedSql,
                            format!("the pattern '{text}' uses {}, which Flink's Java regular expressions and the simulator read differently", refused.0),
                            crate::surface::REGEX_HELP,
                        )
                        .with_span(span())),
                    Ok(p) if func == Func::RegexpReplace && p.matches_empty => Err(self
                        .err(
                            Code::UnsupportedSql,
                            format!("REGEXP_REPLACE with the pattern '{text}', which can match an empty string, is not supported"),
                            "make the pattern match at least one character (`+` rather than `*`): Flink steps over an empty match one UTF-16 unit at a time",
                        )
                        .with_span(span())),
                    Ok(_) => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    /// `func` over `args`, typed by [`Func::result_type`].
    pub(super) fn function(
        &self,
        func: Func,
        args: Vec<Expr>,
        digits: Option<u8>,
    ) -> Lowered<Expr> {
        let types: Vec<DataType> = args.iter().map(Expr::data_type).collect();
        let Some(ty) = func.result_type(&types, digits) else {
            let listed: Vec<String> = args.iter().map(type_or_null).collect();
            return Err(self.err(
                Code::TypeMismatch,
                format!("{} does not take ({})", func.name(), listed.join(", ")),
                match func {
                    _ if args.iter().any(untyped_null) => {
                        return Err(self
                            .err(
                                Code::TypeMismatch,
                                format!("{} does not take ({})", func.name(), listed.join(", ")),
                                "a bare NULL has no type: write CAST(NULL AS <type>)",
                            )
                            .with_span(self.bare_null()));
                    }
                    Func::Floor | Func::Ceil
                        if args.iter().any(|a| a.data_type() == DataType::Timestamp) =>
                    {
                        "it takes a number; a timestamp is rounded to a unit: FLOOR(t TO MINUTE), CEIL(t TO HOUR)"
                    }
                    Func::Abs | Func::Floor | Func::Ceil => "it takes a number",
                    Func::Extract(_) if args.iter().any(|a| a.data_type() == DataType::Date) => {
                        "a date has a YEAR, a MONTH, a DAY and a DOW; CAST it to TIMESTAMP for the time of day (midnight)"
                    }
                    Func::Extract(_) => "it takes a timestamp or a date",
                    Func::FloorTo(_) | Func::CeilTo(_) => "it takes a timestamp",
                    Func::Like => "it takes a string and a string pattern",
                    Func::Round => "it takes a decimal and a number of digits; CAST other numbers to DECIMAL(p, s) first",
                    Func::Substring => "it takes a string, a start and a length (integers)",
                    Func::SplitIndex => "it takes a string, a separator and an INT index from 0; CAST a BIGINT index to INT",
                    Func::RegexpExtract => "it takes a string, a pattern and, optionally, an INT group number",
                    Func::Position => "it takes two strings: POSITION(seek IN s)",
                    Func::DateFormat => "it takes a timestamp and a pattern; CAST a string to TIMESTAMP first",
                    Func::ToTimestamp => "it takes a string and a pattern; CAST other values to STRING first",
                    _ => "it takes strings; CAST other values to STRING first",
                },
            ));
        };
        Ok(Expr::Call { func, args, ty })
    }

    /// A CASE, searched or simple (`CASE x WHEN v THEN ...` compares `x = v`), with every
    /// result cast to the results' common type; a bare NULL result takes that type.
    pub(super) fn case(&self, df: &DFSchemaRef, c: &datafusion_expr::expr::Case) -> Lowered<Expr> {
        let mut branches = Vec::with_capacity(c.when_then_expr.len());
        for (when, then) in &c.when_then_expr {
            let condition = match &c.expr {
                Some(operand) => (**operand).clone().eq((**when).clone()),
                None => (**when).clone(),
            };
            let condition = self.expr(df, &condition)?;
            self.expect_boolean(&condition, "CASE WHEN")?;
            branches.push((condition, self.expr(df, then)?));
        }
        let otherwise = c
            .else_expr
            .as_deref()
            .map(|e| self.expr(df, e))
            .transpose()?;
        let untyped = |e: &Expr| matches!(e, Expr::Literal { value, .. } if value.is_null());
        // The results as written, to point at the one that does not fit. COALESCE and
        // NULLIF arrive here as CASE, so the message names values rather than a CASE.
        let written = c
            .when_then_expr
            .iter()
            .map(|(_, then)| &**then)
            .chain(c.else_expr.as_deref());
        let mut ty: Option<(DataType, &Expr)> = None;
        for (r, source) in branches
            .iter()
            .map(|(_, r)| r)
            .chain(otherwise.as_ref())
            .zip(written)
        {
            if untyped(r) {
                continue;
            }
            let t = r.data_type();
            ty = Some(match ty {
                None => (t, r),
                Some((so_far, first)) => match common_type(so_far, t) {
                    Some(common) => (common, first),
                    None => {
                        return Err(self
                            .err(
                                Code::TypeMismatch,
                                format!(
                                    "`{first}` ({so_far}) and `{r}` ({t}) cannot be values of one column: they have no common type"
                                ),
                                "make the values the same kind, or CAST them",
                            )
                            .with_span(self.span_of(source)));
                    }
                },
            });
        }
        let ty = ty.map(|(t, _)| t);
        let Some(ty) = ty else {
            return Err(self.err(
                Code::TypeMismatch,
                "every result of the CASE is NULL, so it has no type".into(),
                "CAST one of the results, e.g. CAST(NULL AS INT)",
            ));
        };
        let fit = |e: Expr| -> Expr {
            if untyped(&e) {
                Expr::Literal {
                    value: Value::Null,
                    ty,
                }
            } else if e.data_type() == ty {
                e
            } else {
                Expr::Cast {
                    expr: Box::new(e),
                    ty,
                }
            }
        };
        Ok(Expr::Case {
            branches: branches.into_iter().map(|(c, r)| (c, fit(r))).collect(),
            otherwise: otherwise.map(|e| Box::new(fit(e))),
            ty,
        })
    }

    /// `t + INTERVAL ...`, `INTERVAL ... + t` and `t - INTERVAL ...`, over a timestamp `t`.
    pub(super) fn plus_interval(
        &self,
        df: &DFSchemaRef,
        b: &datafusion_expr::BinaryExpr,
    ) -> Lowered<Expr> {
        let refuse = |what: String| {
            self.err(
                Code::TypeMismatch,
                what,
                "an INTERVAL is added to or subtracted from a timestamp: seen_at + INTERVAL '5' MINUTE, seen_at - INTERVAL '1' DAY",
            )
        };
        let (t, by) = match (interval(&b.left), interval(&b.right)) {
            (None, Some(by)) => (&b.left, by),
            (Some(by), None) if b.op == DfOp::Plus => (&b.right, by),
            (Some(_), None) => {
                return Err(refuse(
                    "a timestamp cannot be subtracted from an INTERVAL".into(),
                ));
            }
            _ => {
                return Err(refuse(
                    "INTERVAL arithmetic on two intervals is not supported".into(),
                ));
            }
        };
        let t = self.expr(df, t)?;
        if t.data_type() != DataType::Timestamp {
            let verb = if b.op == DfOp::Minus {
                "subtracted from"
            } else {
                "added to"
            };
            if untyped_null(&t) {
                return Err(refuse(format!(
                    "an INTERVAL cannot be {verb} a bare NULL, which has no type"
                ))
                .with_span(self.bare_null()));
            }
            let message = format!(
                "an INTERVAL cannot be {verb} `{t}` of type {}",
                t.data_type()
            );
            if t.data_type() == DataType::Date {
                return Err(self.err(
                    Code::TypeMismatch,
                    message,
                    "an INTERVAL moves a timestamp: move the date's midnight and take its date, CAST(CAST(d AS TIMESTAMP) + INTERVAL '1' DAY AS DATE)",
                ));
            }
            return Err(refuse(message));
        }
        let by = if b.op == DfOp::Minus {
            by.negated()
        } else {
            by
        };
        Ok(Expr::PlusInterval {
            expr: Box::new(t),
            interval: by,
        })
    }
}

/// Whether `e` is a NULL written without a type (the planner types it boolean).
pub(super) fn untyped_null(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Literal {
            value: Value::Null,
            ty: DataType::Boolean
        }
    )
}

/// An argument's type for a message: `NULL` for a NULL written without a type.
pub(super) fn type_or_null(e: &Expr) -> String {
    if untyped_null(e) {
        "NULL".into()
    } else {
        e.data_type().to_string()
    }
}

/// The name of the column computing an aggregate's argument: the expression as explain
/// renders it, without its outer parentheses (`sum(price * qty)`).
pub(super) fn argument_name(expr: &Expr) -> String {
    let text = expr.to_string();
    match text.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
        Some(inner) if matches!(expr, Expr::Binary { .. } | Expr::IsNull { .. }) => {
            inner.to_string()
        }
        _ => text,
    }
}

/// Whether an expression can evaluate to null over rows of `input` (docs/concepts.md: nullability is
/// inferred, never declared).
pub(super) fn may_be_null(e: &Expr, input: &[Field]) -> bool {
    match e {
        Expr::Column { name, .. } => input.iter().any(|f| &f.name == name && f.nullable),
        Expr::Literal { value, .. } => value.is_null(),
        Expr::IsNull { .. } => false,
        Expr::Not(inner)
        | Expr::Negative(inner)
        | Expr::PlusInterval { expr: inner, .. }
        | Expr::Cast { expr: inner, .. } => may_be_null(inner, input),
        Expr::TryCast { .. } => true,
        Expr::Call { func, args, .. } => {
            func.may_return_null() || args.iter().any(|a| may_be_null(a, input))
        }
        Expr::Case {
            branches,
            otherwise,
            ..
        } => {
            // A branch's result is computed only where its condition holds, so a column
            // the condition tests IS NOT NULL is not null there: COALESCE(x, 'none'),
            // written CASE WHEN x IS NOT NULL THEN x ELSE 'none' END, is never null.
            let within = |cond: &Expr| -> Vec<Field> {
                let known = not_null_columns(cond);
                input
                    .iter()
                    .map(|f| Field {
                        nullable: f.nullable && !known.contains(&f.name),
                        ..f.clone()
                    })
                    .collect()
            };
            otherwise.as_deref().is_none_or(|e| may_be_null(e, input))
                || branches
                    .iter()
                    .any(|(cond, r)| may_be_null(r, &within(cond)))
        }
        Expr::Binary { left, right, .. } => may_be_null(left, input) || may_be_null(right, input),
    }
}

/// Gives an untyped NULL literal the type its context needs.
pub(super) fn retype_null(e: Expr, ty: DataType) -> Expr {
    match e {
        Expr::Literal {
            value: Value::Null, ..
        } => Expr::Literal {
            value: Value::Null,
            ty,
        },
        other => other,
    }
}

/// Columns that a predicate guarantees are not null (`x IS NOT NULL` conjuncts).
pub(super) fn not_null_columns(p: &Expr) -> Vec<String> {
    match p {
        Expr::IsNull {
            expr,
            negated: true,
        } => match expr.as_ref() {
            Expr::Column { name, .. } => vec![name.clone()],
            _ => Vec::new(),
        },
        Expr::Binary {
            op: BinaryOp::And,
            left,
            right,
            ..
        } => {
            let mut v = not_null_columns(left);
            v.extend(not_null_columns(right));
            v
        }
        _ => Vec::new(),
    }
}

/// Types a literal as Flink would: an integer is int32 when it fits, else int64; an exact
/// numeric is decimal(p,s) with its own digits.
pub(super) fn literal(v: &ScalarValue) -> Option<Expr> {
    let (value, ty) = match v {
        ScalarValue::Int64(Some(i)) => match i32::try_from(*i) {
            Ok(small) => (Value::Int32(small), DataType::Int32),
            Err(_) => (Value::Int64(*i), DataType::Int64),
        },
        ScalarValue::Int32(Some(i)) => (Value::Int32(*i), DataType::Int32),
        ScalarValue::UInt64(Some(i)) => (Value::Int64(i64::try_from(*i).ok()?), DataType::Int64),
        ScalarValue::Decimal128(Some(m), p, s) if *s >= 0 => {
            let d = streamform_ir::Decimal::new(*m, *s as u8);
            (
                Value::Decimal(d),
                DataType::Decimal {
                    precision: (*p).max(1),
                    scale: *s as u8,
                },
            )
        }
        ScalarValue::Float64(Some(f)) => (
            Value::Float64(streamform_ir::value::F64(*f)),
            DataType::Float64,
        ),
        ScalarValue::Utf8(Some(s))
        | ScalarValue::Utf8View(Some(s))
        | ScalarValue::LargeUtf8(Some(s)) => (Value::String(s.clone()), DataType::String),
        ScalarValue::Boolean(Some(b)) => (Value::Boolean(*b), DataType::Boolean),
        ScalarValue::Date32(Some(d)) => (Value::Date(*d), DataType::Date),
        other if other.is_null() => (Value::Null, DataType::Boolean),
        _ => return None,
    };
    Some(Expr::Literal { value, ty })
}

/// The interval a planned INTERVAL literal holds (see [`crate::interval::for_planning`]).
pub(super) fn interval(e: &DfExpr) -> Option<streamform_ir::Interval> {
    match e {
        DfExpr::Literal(ScalarValue::IntervalMonthDayNano(Some(v)), _) => {
            let millis = i64::from(v.days)
                .checked_mul(86_400_000)?
                .checked_add(v.nanoseconds / 1_000_000)?;
            Some(streamform_ir::Interval {
                months: v.months,
                millis,
            })
        }
        _ => None,
    }
}
