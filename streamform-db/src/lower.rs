//! The SQL frontend's second half: plan a validated model with DataFusion against the
//! declared schemas, then lower the logical plan at once into the Streaming IR.
//!
//! DataFusion's `LogicalPlan` lives only inside [`lower_model`] and is never stored.
//! Expression and accumulator types are Streamform's own (D4), not DataFusion's coercion.
//!
//! Spec: streamform-docs "From SQL to a plan", "Declared and derived must agree",
//! "Boundedness"; DECISIONS.md D4, D5, D9.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType as ArrowType, Field as ArrowField, Schema as ArrowSchema, TimeUnit};
use datafusion_common::config::ConfigOptions;
use datafusion_common::{DFSchemaRef, DataFusionError, ScalarValue, SchemaError, TableReference};
use datafusion_expr::expr::AggregateFunction;
use datafusion_expr::logical_plan::builder::LogicalTableSource;
use datafusion_expr::{
    AggregateUDF, AggregateUDFImpl, Expr as DfExpr, LogicalPlan, Operator as DfOp, ScalarUDF,
    ScalarUDFImpl, Signature, TableSource, Volatility, WindowUDF,
};
use datafusion_sql::planner::{ContextProvider, ParserOptions, SqlToRel};
use sqlparser::ast::{Ident, ObjectName, ObjectNamePart, Query, Statement, TableFactor};
use streamform_ir::expr::TimeField;
use streamform_ir::types::{arithmetic_type, castable, common_type, comparable};
use streamform_ir::{
    AggCall, AggFunc, ArithOp, BinaryOp, Boundedness, Changelog, DataType, Expr, Field, Func,
    Input, KeyedState, Materialized, ModelPlan, Node, NodeKind, Operator, ProjectItem, Retention,
    SinkTarget, SortKey, State, Value, assign_id,
};

use crate::config::SourceDef;
use crate::diagnostic::{Anchor, Code, Diagnostic};
use crate::sql::Reads;

/// What a reader of `ref(model)` depends on: the model's Sink schema, changelog and
/// boundedness. Narrow on purpose, so that readers are re-lowered only when it changes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Contract {
    /// The Sink's output columns.
    pub schema: Vec<Field>,
    /// The Sink's changelog mode.
    pub changelog: Changelog,
    /// The Sink's boundedness.
    pub boundedness: Boundedness,
    /// The Sink's time attribute: the event-time column it still carries.
    pub time: Option<String>,
    /// Whether an event-time source is upstream, which gives a reader's state a clock to
    /// expire by (true even when the time attribute was grouped away).
    pub clock: bool,
}

/// The relation a model reads, resolved.
pub enum Upstream<'a> {
    /// `source('name')`: the declared source.
    Source(&'a SourceDef),
    /// `ref('name')`: the model's name and its contract.
    Model(&'a str, &'a Contract),
}

/// The declaration streamform.yml makes for a model (defaults: append, no sink). Span-free:
/// diagnostics about it are anchored to the model's entry and positioned later.
pub struct Declared<'a> {
    /// The declared materialization (`Append` when the model has no entry).
    pub materialized: &'a Materialized,
    /// The `sink:` destination, if declared.
    pub sink: Option<&'a SinkTarget>,
    /// `retention:` in milliseconds, if declared.
    pub retention: Option<u64>,
}

fn arrow_type(t: DataType) -> ArrowType {
    match t {
        DataType::Int32 => ArrowType::Int32,
        DataType::Int64 => ArrowType::Int64,
        DataType::Float64 => ArrowType::Float64,
        DataType::Decimal { precision, scale } => ArrowType::Decimal128(precision, scale as i8),
        DataType::String => ArrowType::Utf8,
        DataType::Boolean => ArrowType::Boolean,
        DataType::Timestamp => ArrowType::Timestamp(TimeUnit::Millisecond, None),
    }
}

fn from_arrow(t: &ArrowType) -> Option<DataType> {
    Some(match t {
        ArrowType::Int8 | ArrowType::Int16 | ArrowType::Int32 => DataType::Int32,
        ArrowType::Int64 => DataType::Int64,
        ArrowType::Float32 | ArrowType::Float64 => DataType::Float64,
        ArrowType::Decimal128(p, s) if *s >= 0 && *p <= 38 && (*s as u8) <= *p => {
            DataType::Decimal {
                precision: *p,
                scale: *s as u8,
            }
        }
        ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View => DataType::String,
        ArrowType::Boolean => DataType::Boolean,
        ArrowType::Timestamp(_, None) => DataType::Timestamp,
        _ => return None,
    })
}

/// A planning-only aggregate or scalar function: DataFusion needs to know that sum, upper
/// and the rest exist, and a plausible return type; the types that matter are computed by
/// our lowering, and nothing is ever executed in DataFusion.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Planning {
    name: &'static str,
    signature: Signature,
}

impl Planning {
    fn new(name: &'static str) -> Planning {
        Planning {
            name,
            signature: Signature::variadic_any(Volatility::Immutable),
        }
    }

    fn return_type(&self, args: &[ArrowType]) -> ArrowType {
        match (self.name, args.first()) {
            ("count", _) => ArrowType::Int64,
            ("char_length" | "character_length", _) => ArrowType::Int32,
            ("date_part", _) => ArrowType::Int64,
            (
                "sum" | "min" | "max" | "avg" | "abs" | "floor" | "ceil" | "round" | "mod",
                Some(t),
            ) => t.clone(),
            ("sum" | "min" | "max" | "avg", None) => ArrowType::Int64,
            _ => ArrowType::Utf8,
        }
    }
}

impl AggregateUDFImpl for Planning {
    fn name(&self) -> &str {
        self.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, args: &[ArrowType]) -> datafusion_common::Result<ArrowType> {
        Ok(Planning::return_type(self, args))
    }
    fn accumulator(
        &self,
        _: datafusion_expr::function::AccumulatorArgs,
    ) -> datafusion_common::Result<Box<dyn datafusion_expr::Accumulator>> {
        datafusion_common::not_impl_err!(
            "Streamform plans aggregates but never executes them in DataFusion"
        )
    }
}

impl ScalarUDFImpl for Planning {
    fn name(&self) -> &str {
        self.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, args: &[ArrowType]) -> datafusion_common::Result<ArrowType> {
        Ok(Planning::return_type(self, args))
    }
    fn invoke_with_args(
        &self,
        _: datafusion_expr::ScalarFunctionArgs,
    ) -> datafusion_common::Result<datafusion_expr::ColumnarValue> {
        datafusion_common::not_impl_err!(
            "Streamform plans functions but never executes them in DataFusion"
        )
    }
}

/// The scalar functions a model may call, by DataFusion's name for them (TRIM plans as
/// trim, btrim, ltrim or rtrim; SUBSTRING as substr), with the function each stands for:
/// `None` for the two lowered otherwise (`date_part` is EXTRACT, whose field is an
/// argument; `mod` is `%`). The one list: planning registers it, lowering reads it.
const FUNCTIONS: [(&str, Option<Func>); 16] = [
    ("date_part", None),
    ("mod", None),
    ("upper", Some(Func::Upper)),
    ("lower", Some(Func::Lower)),
    ("trim", Some(Func::Trim)),
    ("btrim", Some(Func::Trim)),
    ("ltrim", Some(Func::TrimLeading)),
    ("rtrim", Some(Func::TrimTrailing)),
    ("char_length", Some(Func::CharLength)),
    ("character_length", Some(Func::CharLength)),
    ("concat", Some(Func::Concat)),
    ("substr", Some(Func::Substring)),
    ("abs", Some(Func::Abs)),
    ("floor", Some(Func::Floor)),
    ("ceil", Some(Func::Ceil)),
    ("round", Some(Func::Round)),
];

/// Plans `SUBSTRING(s FROM a FOR b)` and `EXTRACT(f FROM t)` as calls of the planning-only
/// `substr` and `date_part`.
#[derive(Debug)]
struct Planner {
    substr: Arc<ScalarUDF>,
    date_part: Arc<ScalarUDF>,
}

fn planned(
    udf: &Arc<ScalarUDF>,
    args: Vec<DfExpr>,
) -> datafusion_common::Result<datafusion_expr::planner::PlannerResult<Vec<DfExpr>>> {
    Ok(datafusion_expr::planner::PlannerResult::Planned(
        DfExpr::ScalarFunction(datafusion_expr::expr::ScalarFunction::new_udf(
            udf.clone(),
            args,
        )),
    ))
}

impl datafusion_expr::planner::ExprPlanner for Planner {
    fn plan_substring(
        &self,
        args: Vec<DfExpr>,
    ) -> datafusion_common::Result<datafusion_expr::planner::PlannerResult<Vec<DfExpr>>> {
        planned(&self.substr, args)
    }
    fn plan_extract(
        &self,
        args: Vec<DfExpr>,
    ) -> datafusion_common::Result<datafusion_expr::planner::PlannerResult<Vec<DfExpr>>> {
        planned(&self.date_part, args)
    }
}

struct Catalog {
    table: String,
    schema: Arc<ArrowSchema>,
    options: ConfigOptions,
    aggregates: HashMap<&'static str, Arc<AggregateUDF>>,
    functions: HashMap<&'static str, Arc<ScalarUDF>>,
    planners: Vec<Arc<dyn datafusion_expr::planner::ExprPlanner>>,
}

impl Catalog {
    fn new(table: &str, fields: &[Field]) -> Catalog {
        let arrow: Vec<ArrowField> = fields
            .iter()
            .map(|f| ArrowField::new(&f.name, arrow_type(f.ty), f.nullable))
            .collect();
        let aggregates = ["sum", "count", "min", "max", "avg"]
            .into_iter()
            .map(|n| (n, Arc::new(AggregateUDF::new_from_impl(Planning::new(n)))))
            .collect();
        let functions: HashMap<&'static str, Arc<ScalarUDF>> = FUNCTIONS
            .into_iter()
            .map(|(n, _)| (n, Arc::new(ScalarUDF::new_from_impl(Planning::new(n)))))
            .collect();
        let planners: Vec<Arc<dyn datafusion_expr::planner::ExprPlanner>> =
            vec![Arc::new(Planner {
                substr: functions["substr"].clone(),
                date_part: functions["date_part"].clone(),
            })];
        Catalog {
            table: table.to_string(),
            schema: Arc::new(ArrowSchema::new(arrow)),
            options: ConfigOptions::default(),
            aggregates,
            functions,
            planners,
        }
    }
}

impl ContextProvider for Catalog {
    fn get_table_source(
        &self,
        name: TableReference,
    ) -> datafusion_common::Result<Arc<dyn TableSource>> {
        if name.table() == self.table {
            Ok(Arc::new(LogicalTableSource::new(self.schema.clone())))
        } else {
            datafusion_common::plan_err!("unknown relation `{name}`")
        }
    }
    fn get_function_meta(&self, name: &str) -> Option<Arc<ScalarUDF>> {
        self.functions
            .get(name.to_ascii_lowercase().as_str())
            .cloned()
    }
    fn get_higher_order_meta(&self, _: &str) -> Option<Arc<datafusion_expr::HigherOrderUDF>> {
        None
    }
    fn get_aggregate_meta(&self, name: &str) -> Option<Arc<AggregateUDF>> {
        self.aggregates
            .get(name.to_ascii_lowercase().as_str())
            .cloned()
    }
    fn get_window_meta(&self, _: &str) -> Option<Arc<WindowUDF>> {
        None
    }
    fn get_variable_type(&self, _: &[String]) -> Option<ArrowType> {
        None
    }
    fn options(&self) -> &ConfigOptions {
        &self.options
    }
    fn get_expr_planners(&self) -> &[Arc<dyn datafusion_expr::planner::ExprPlanner>] {
        &self.planners
    }
    fn udf_names(&self) -> Vec<String> {
        self.functions.keys().map(|k| k.to_string()).collect()
    }
    fn higher_order_function_names(&self) -> Vec<String> {
        Vec::new()
    }
    fn udaf_names(&self) -> Vec<String> {
        self.aggregates.keys().map(|k| k.to_string()).collect()
    }
    fn udwf_names(&self) -> Vec<String> {
        Vec::new()
    }
}

/// The working state of one lowering: the chain built so far and the current output.
struct Lowering<'a> {
    model: &'a str,
    /// The model's SQL, to position diagnostics.
    text: &'a str,
    nodes: Vec<Node>,
    /// The current output schema (ours), positionally aligned with DataFusion's.
    schema: Vec<Field>,
    changelog: Changelog,
    boundedness: Boundedness,
    /// Where the FROM clause is, for diagnostics about the input.
    from_span: Option<std::ops::Range<usize>>,
    /// The time attribute of the current output (the event-time column, by its name here).
    time: Option<String>,
    /// Whether an event-time source is upstream.
    clock: bool,
    /// The query, to find where its parts are for an error past the aggregation, where the
    /// planner's columns no longer say where they were written (read only on an error).
    query: &'a Query,
    /// Whether an aggregation has been lowered: a filter after it is the HAVING.
    aggregated: bool,
    /// The window table the model reads, until its aggregation is lowered: the planner's
    /// schema then has the window's three columns after the input's, which no node before
    /// the window has.
    window: Option<&'a crate::window::WindowRead>,
}

/// Where a query's select items, WHERE and HAVING are in the model's text.
#[derive(Default)]
struct Parts {
    items: Vec<std::ops::Range<usize>>,
    selection: Option<std::ops::Range<usize>>,
    having: Option<std::ops::Range<usize>>,
}

impl Parts {
    fn of(query: &Query, text: &str) -> Parts {
        use sqlparser::ast::{SetExpr, Spanned};
        let SetExpr::Select(select) = query.body.as_ref() else {
            return Parts::default();
        };
        Parts {
            items: (0..select.projection.len())
                .map_while(|i| item_span(select, i, text))
                .collect(),
            selection: select
                .selection
                .as_ref()
                .and_then(|w| crate::sql::byte_span(text, w.span())),
            having: select
                .having
                .as_ref()
                .and_then(|h| crate::sql::byte_span(text, h.span())),
        }
    }
}

/// Where select item `i` is: the parser's span of `-x` or `CAST(x AS t)` starts at `x`, so
/// the item starts where the one before it (or SELECT) ends, past the comma.
fn item_span(
    select: &sqlparser::ast::Select,
    i: usize,
    text: &str,
) -> Option<std::ops::Range<usize>> {
    use sqlparser::ast::Spanned;
    let at = crate::sql::byte_span(text, select.projection.get(i)?.span())?;
    let before = match i {
        0 => select.select_token.0.span,
        _ => select.projection[i - 1].span(),
    };
    let start = crate::sql::byte_span(text, before)
        .map(|b| b.end)
        .filter(|&end| end <= at.start)
        .map_or(at.start, |end| {
            let gap = &text[end..at.start];
            end + gap.len()
                - gap
                    .trim_start_matches(|c: char| c.is_whitespace() || c == ',')
                    .len()
        });
    Some(start..at.end)
}

type Lowered<T> = Result<T, Diagnostic>;

impl Lowering<'_> {
    fn err(&self, code: Code, message: String, help: &str) -> Diagnostic {
        Diagnostic::error(code, format!("model `{}`: {message}", self.model)).with_help(help)
    }

    fn push(&mut self, op: Operator, schema: Vec<Field>, state: State) {
        let id = assign_id(self.model, &self.nodes, op.kind());
        // Before its window, a node's rows do not have the window's columns yet.
        let own: Vec<Field> = match self.window {
            Some(_) => schema
                .iter()
                .filter(|f| !streamform_ir::WINDOW_COLUMNS.contains(&f.name.as_str()))
                .cloned()
                .collect(),
            None => schema.clone(),
        };
        self.nodes.push(Node {
            id,
            op,
            schema: own,
            boundedness: self.boundedness,
            changelog: self.changelog.clone(),
            state,
            time: self.time.clone(),
        });
        self.schema = schema;
    }

    /// After the input's scan, for a model that reads a window table: the window's column
    /// must be the input's time attribute, and the planner's schema has the window's three
    /// columns after the input's.
    fn window_scan(&mut self, w: &crate::window::WindowRead) -> Lowered<()> {
        let at = |d: Diagnostic| d.with_span(w.time_span.clone().or_else(|| w.span.clone()));
        match &self.time {
            None => {
                // No Source node yet: the model reads another model, whose rows lost their
                // time attribute (an aggregate drops it, a window keeps window_time only when
                // it groups by it).
                let help = if self.nodes.is_empty() {
                    "the model this one reads carries no event-time attribute: a window's output carries one when it groups by window_time (GROUP BY window_start, window_end, window_time), and a source's when the source declares `event_time:` (docs/windows.md)"
                } else {
                    "declare `event_time:` on the source the model reads (sources.yml): a window closes when the watermark passes its end"
                };
                return Err(at(self.err(
                    Code::EventTime,
                    format!(
                        "a window needs event time, and the input of DESCRIPTOR({}) has none",
                        w.time
                    ),
                    help,
                )));
            }
            Some(t) if *t != w.time => {
                return Err(at(self.err(
                    Code::EventTime,
                    format!("DESCRIPTOR({}) names a column that is not the input's event-time attribute, `{t}`", w.time),
                    &format!("windows are measured on the event time: write DESCRIPTOR({t})"),
                )));
            }
            Some(_) => {}
        }
        for name in streamform_ir::WINDOW_COLUMNS {
            self.schema.push(Field {
                name: name.to_string(),
                ty: DataType::Timestamp,
                nullable: false,
            });
        }
        Ok(())
    }

    /// A SESSION's PARTITION BY must be its aggregation's key (the grouping columns that
    /// are not the window's), in any order: otherwise Flink sessions the rows by one key and
    /// aggregates them by another in an updating aggregate, never final (docs/windows.md).
    fn session_key(&self, w: &crate::window::WindowRead, group_by: &[String]) -> Lowered<()> {
        let key: Vec<&String> = group_by
            .iter()
            .filter(|g| !streamform_ir::WINDOW_COLUMNS.contains(&g.as_str()))
            .collect();
        let same = key.len() == w.partition.len() && key.iter().all(|k| w.partition.contains(k));
        if same {
            return Ok(());
        }
        let list = |cols: &[&String]| match cols {
            [] => "nothing".to_string(),
            cols => cols
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        };
        let partition: Vec<&String> = w.partition.iter().collect();
        let help = match key.as_slice() {
            [] => "remove the PARTITION BY to keep one session for all rows, or group by its columns too".to_string(),
            [one] => format!("partition the sessions by the key you group by: SESSION(TABLE ... PARTITION BY {one}, DESCRIPTOR(...), ...)"),
            more => format!(
                "partition the sessions by the key you group by: SESSION(TABLE ... PARTITION BY ({}), DESCRIPTOR(...), ...)",
                list(more)
            ),
        };
        let message = if partition.is_empty() {
            format!(
                "a SESSION window without PARTITION BY keeps one session for all rows, but this aggregation groups them by {}; Flink then builds an updating aggregate instead of a window",
                list(&key)
            )
        } else {
            format!(
                "a SESSION window's PARTITION BY ({}) must be the columns it groups by besides the window's ({}); otherwise Flink builds an updating aggregate instead of a window",
                list(&partition),
                list(&key)
            )
        };
        Err(self
            .err(Code::InvalidAggregate, message, &help)
            .with_span(w.partition_span.clone().or_else(|| w.span.clone())))
    }

    /// A window table read without aggregating it by window.
    fn unaggregated_window(&self, w: &crate::window::WindowRead) -> Diagnostic {
        self.err(
            Code::UnsupportedSql,
            "reading a window table without aggregating it is not supported yet".into(),
            "aggregate it by window: SELECT window_start, window_end, COUNT(*) AS views ... GROUP BY window_start, window_end",
        )
        .with_span(w.span.clone())
    }

    fn column(&self, df: &DFSchemaRef, col: &datafusion_common::Column) -> Lowered<Field> {
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
    fn expr(&self, df: &DFSchemaRef, e: &DfExpr) -> Lowered<Expr> {
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
    fn span_of(&self, e: &DfExpr) -> Option<std::ops::Range<usize>> {
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

    fn expr_at(&self, df: &DFSchemaRef, e: &DfExpr) -> Lowered<Expr> {
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
            DfExpr::Cast(c) => {
                let inner = self.expr(df, &c.expr)?;
                let Some(to) = from_arrow(c.field.data_type()) else {
                    return Err(self.err(
                        Code::UnsupportedSql,
                        format!("CAST to {} is not supported", c.field.data_type()),
                        "cast to INT, BIGINT, DOUBLE, DECIMAL(p,s), STRING or BOOLEAN",
                    ));
                };
                let inner = retype_null(inner, to);
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
                        "casts convert between numbers, strings and booleans, and between strings and timestamps",
                    ));
                }
                // A timestamp written as a string (TIMESTAMP '...', CAST('...' AS TIMESTAMP))
                // is read now, so a bad one is a check error rather than a failed run.
                if let (
                    Expr::Literal {
                        value: v @ Value::String(_),
                        ..
                    },
                    DataType::Timestamp,
                ) = (&inner, to)
                {
                    let value = v.cast(to).map_err(|e| {
                        // A literal carries no position; its text in the model does.
                        let quoted = format!("'{}'", v.render().trim_matches('"'));
                        let span = self.text.find(&quoted).map(|at| at..at + quoted.len());
                        self.err(
                            Code::InvalidValue,
                            e.to_string(),
                            "write a timestamp as 'yyyy-MM-dd HH:mm:ss' (a fraction of up to three digits may follow) or a date 'yyyy-MM-dd'",
                        )
                        .with_span(span)
                    })?;
                    return Ok(Expr::Literal { value, ty: to });
                }
                Expr::Cast {
                    expr: Box::new(inner),
                    ty: to,
                }
            }
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
    fn bare_null(&self) -> Option<std::ops::Range<usize>> {
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

    fn null_named(&self, name: &str) -> Option<std::ops::Range<usize>> {
        let upper = self.text.to_ascii_uppercase();
        upper.match_indices("NULL").find_map(|(at, _)| {
            let mut rest = upper[at + 4..].split_whitespace();
            let alias = self.text.get(at + 4..)?.split_whitespace().nth(1)?;
            (rest.next() == Some("AS") && alias.trim_matches(['`', '"', ',']) == name)
                .then_some(at..at + 4)
        })
    }

    fn expect_boolean(&self, e: &Expr, what: &str) -> Lowered<()> {
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

    fn plan(&mut self, plan: &LogicalPlan, upstream: &Upstream<'_>) -> Lowered<()> {
        match plan {
            LogicalPlan::TableScan(_) => {
                match upstream {
                    Upstream::Source(def) => {
                        self.boundedness = def.connector.boundedness();
                        self.changelog = Changelog::Append;
                        self.time = def.event_time.as_ref().map(|t| t.column.clone());
                        self.clock = def.event_time.is_some();
                        let schema = source_fields(def);
                        self.push(
                            Operator::Source {
                                name: def.name.clone(),
                                connector: def.connector.clone(),
                                format: def.format.clone(),
                                event_time: def.event_time.clone(),
                            },
                            schema,
                            State::Stateless,
                        );
                    }
                    Upstream::Model(_, c) => {
                        self.boundedness = c.boundedness;
                        self.changelog = c.changelog.clone();
                        self.schema = c.schema.clone();
                        self.time = c.time.clone();
                        self.clock = c.clock;
                    }
                }
                if let Some(w) = self.window {
                    self.window_scan(w)?;
                }
                Ok(())
            }
            LogicalPlan::SubqueryAlias(a) => self.plan(&a.input, upstream),
            LogicalPlan::Filter(f) => {
                self.plan(&f.input, upstream)?;
                let df = f.input.schema();
                let predicate = self.expr(df, &f.predicate).map_err(|d| {
                    if d.span.is_some() {
                        return d;
                    }
                    let parts = Parts::of(self.query, self.text);
                    d.with_span(if self.aggregated {
                        parts.having
                    } else {
                        parts.selection
                    })
                })?;
                let predicate = retype_null(predicate, DataType::Boolean);
                self.expect_boolean(&predicate, "a filter")?;
                if self.window.is_some()
                    && let Some(col) = predicate
                        .columns()
                        .into_iter()
                        .find(|c| streamform_ir::WINDOW_COLUMNS.contains(c))
                {
                    return Err(self
                        .err(
                            Code::UnsupportedSql,
                            format!("a WHERE over the window's column `{col}` is not supported yet"),
                            "filter windows after aggregating them, with HAVING, or filter rows on their own columns",
                        )
                        .with_span(Parts::of(self.query, self.text).selection));
                }
                let mut schema = self.schema.clone();
                for col in not_null_columns(&predicate) {
                    if let Some(field) = schema.iter_mut().find(|f| f.name == col) {
                        field.nullable = false;
                    }
                }
                self.push(Operator::Filter { predicate }, schema, State::Stateless);
                Ok(())
            }
            LogicalPlan::Projection(p) => {
                self.plan(&p.input, upstream)?;
                if let Some(w) = self.window {
                    return Err(self.unaggregated_window(w));
                }
                let df = p.input.schema();
                let mut items = Vec::new();
                let mut schema = Vec::new();
                for (i, e) in p.expr.iter().enumerate() {
                    let lowered = self.expr(df, e).map_err(|d| {
                        if d.span.is_some() {
                            return d;
                        }
                        let items = Parts::of(self.query, self.text).items;
                        match items.get(i) {
                            Some(at) if items.len() == p.expr.len() => {
                                d.with_span(Some(at.clone()))
                            }
                            _ => d,
                        }
                    })?;
                    let name = match e {
                        DfExpr::Alias(a) => a.name.clone(),
                        DfExpr::Column(_) => lowered.to_string(),
                        other => {
                            return Err(self
                                .err(
                                    Code::OutputColumns,
                                    format!(
                                        "the column `{}` needs a name",
                                        argument_name(&lowered)
                                    ),
                                    "name it with AS, e.g. amount * 2 AS doubled",
                                )
                                .with_span(self.span_of(other)));
                        }
                    };
                    if let Expr::Literal {
                        value: Value::Null, ..
                    } = lowered
                    {
                        return Err(self
                            .err(
                                Code::OutputColumns,
                                format!("the column `{name}` is an untyped NULL"),
                                "write CAST(NULL AS <type>)",
                            )
                            .with_span(self.null_named(&name)));
                    }
                    let nullable = may_be_null(&lowered, &self.schema);
                    schema.push(Field {
                        name: name.clone(),
                        ty: lowered.data_type(),
                        nullable,
                    });
                    items.push(ProjectItem {
                        expr: lowered,
                        name,
                    });
                }
                let mut seen = std::collections::HashSet::new();
                if let Some(dup) = schema.iter().find(|f| !seen.insert(f.name.clone())) {
                    return Err(self.err(
                        Code::OutputColumns,
                        format!("the column `{}` appears twice in the output", dup.name),
                        "give each output column its own name with AS",
                    ));
                }
                if let Changelog::Upsert(key) = &self.changelog {
                    let mut out_key = Vec::new();
                    for k in key {
                        let Some(item) = items
                            .iter()
                            .find(|i| matches!(&i.expr, Expr::Column { name, .. } if name == k))
                        else {
                            return Err(self.err(
                                Code::UpdatingInput,
                                format!(
                                    "the SELECT list drops `{k}`, the key of its updating input"
                                ),
                                "keep the key columns in the SELECT list",
                            ));
                        };
                        out_key.push(item.name.clone());
                    }
                    self.changelog = Changelog::Upsert(out_key);
                }
                let identity = items.len() == self.schema.len()
                    && items.iter().zip(&self.schema).all(|(i, f)| {
                        matches!(&i.expr, Expr::Column { name, .. } if *name == f.name)
                            && i.name == f.name
                    });
                if identity {
                    self.schema = schema;
                } else {
                    // The time attribute goes through a projection that selects its
                    // column, under the column's new name.
                    self.time = self.time.as_ref().and_then(|t| {
                        items.iter().find_map(|i| match &i.expr {
                            Expr::Column { name, .. } if name == t => Some(i.name.clone()),
                            _ => None,
                        })
                    });
                    self.push(Operator::Project { items }, schema, State::Stateless);
                }
                Ok(())
            }
            LogicalPlan::Aggregate(a) => {
                self.plan(&a.input, upstream)?;
                self.aggregated = true;
                if self.changelog.is_updating() {
                    return Err(Diagnostic::error(Code::UpdatingInput, format!("model `{}`: aggregation over an updating stream is not supported yet", self.model))
                        .with_span(self.from_span.clone())
                        .with_help("its input emits updates; folding an update into an aggregate needs retractions, which are on the roadmap"));
                }
                let df = a.input.schema();
                let mut group_by = Vec::new();
                let mut schema = Vec::new();
                for g in &a.group_expr {
                    let DfExpr::Column(c) = g else {
                        return Err(self.err(
                            Code::UnsupportedSql,
                            format!("GROUP BY `{g}` is not a column"),
                            "group by plain columns",
                        ));
                    };
                    let f = self.column(df, c)?;
                    group_by.push(f.name.clone());
                    schema.push(f);
                }
                if let Some(w) = self.window {
                    let has = |c: &str| group_by.iter().any(|g| g == c);
                    if !has(streamform_ir::WINDOW_START) || !has(streamform_ir::WINDOW_END) {
                        let missing = if has(streamform_ir::WINDOW_START) {
                            "window_end"
                        } else {
                            "window_start"
                        };
                        return Err(self
                            .err(
                                Code::InvalidAggregate,
                                format!("a window aggregation must group by window_start and window_end; this one leaves out {missing}"),
                                "group by both, and by your key columns: GROUP BY window_start, window_end, page; without both, Flink silently builds an updating aggregate instead of a window",
                            )
                            .with_span(w.span.clone()));
                    }
                    if matches!(w.kind, streamform_ir::WindowKind::Session { .. }) {
                        self.session_key(w, &group_by)?;
                    }
                }
                let mut calls: Vec<AggCall> = Vec::new();
                // Arguments that are expressions (`sum(price * qty)`) are computed by a
                // projection in front of the aggregate, as a column named after the
                // expression; the aggregate then reads plain columns, as Flink's plan does.
                let mut computed: Vec<ProjectItem> = Vec::new();
                for e in &a.aggr_expr {
                    let (call, argument) = self.agg_call(df, e)?;
                    if let Some(item) = argument
                        && !computed.iter().any(|c| c.name == item.name)
                    {
                        computed.push(item);
                    }
                    schema.push(Field {
                        name: call.name(),
                        ty: call.ty,
                        nullable: !matches!(call.func, AggFunc::Count | AggFunc::CountDistinct),
                    });
                    calls.push(call);
                }
                if let Some(dup) = group_by
                    .iter()
                    .find(|g| calls.iter().any(|c| c.name() == **g))
                {
                    return Err(self.err(
                        Code::OutputColumns,
                        format!("the aggregate's output would have two columns named `{dup}`: the grouping column and the aggregate call"),
                        "rename the source column, or group by it under another name in an upstream model",
                    ));
                }
                // A call reads a window column directly, or through an argument computed
                // before the window, where the window's columns do not exist yet.
                let reads_window = |c: &&AggCall| {
                    c.arg.as_ref().is_some_and(|a| {
                        streamform_ir::WINDOW_COLUMNS.contains(&a.as_str())
                            || computed.iter().any(|item| {
                                &item.name == a
                                    && item
                                        .expr
                                        .columns()
                                        .iter()
                                        .any(|c| streamform_ir::WINDOW_COLUMNS.contains(c))
                            })
                    })
                };
                if let Some(w) = self.window
                    && let Some(call) = calls.iter().find(reads_window)
                {
                    return Err(self
                        .err(
                            Code::UnsupportedSql,
                            format!("the aggregate `{}` over the window's own column is not supported yet", call.name()),
                            "aggregate the input's columns; the window's bounds are in window_start and window_end",
                        )
                        .with_span(w.span.clone()));
                }
                // An aggregate groups the time attribute away; a window keeps window_time
                // as its output's time attribute when it groups by it.
                self.time = match self.window {
                    Some(_) if group_by.iter().any(|g| g == streamform_ir::WINDOW_TIME) => {
                        Some(streamform_ir::WINDOW_TIME.to_string())
                    }
                    _ => None,
                };
                let window = self.window.map(|w| streamform_ir::Window {
                    kind: w.kind,
                    time: w.time.clone(),
                });
                let state = KeyedState {
                    key: group_by.clone(),
                    accumulators: calls
                        .iter()
                        .map(|c| streamform_ir::Accumulator {
                            name: c.name(),
                            ty: c.ty,
                        })
                        .collect(),
                    retention: Retention::Unbounded,
                    window: window.clone(),
                };
                if !computed.is_empty() {
                    let input = self.schema.clone();
                    // What the aggregate reads: its grouping columns and the columns its
                    // calls take, in input order, then the computed arguments (and the
                    // time column a window needs).
                    let read: Vec<&Field> = input
                        .iter()
                        .filter(|f| {
                            !(window.is_some()
                                && streamform_ir::WINDOW_COLUMNS.contains(&f.name.as_str()))
                                && (group_by.contains(&f.name)
                                    || calls.iter().any(|c| c.arg.as_ref() == Some(&f.name))
                                    || window.as_ref().is_some_and(|w| w.time == f.name))
                        })
                        .collect();
                    let mut items: Vec<ProjectItem> = read
                        .iter()
                        .map(|f| ProjectItem {
                            expr: Expr::Column {
                                name: f.name.clone(),
                                ty: f.ty,
                            },
                            name: f.name.clone(),
                        })
                        .collect();
                    let mut fields: Vec<Field> = read.into_iter().cloned().collect();
                    for item in computed {
                        if fields.iter().any(|f| f.name == item.name) {
                            return Err(self.err(
                                Code::OutputColumns,
                                format!(
                                    "the aggregate's argument `{}` has the name of an input column",
                                    item.name
                                ),
                                "rename the input column in an upstream model",
                            ));
                        }
                        fields.push(Field {
                            name: item.name.clone(),
                            ty: item.expr.data_type(),
                            nullable: may_be_null(&item.expr, &input),
                        });
                        items.push(item);
                    }
                    self.push(
                        Operator::Project { items },
                        fields.clone(),
                        State::Stateless,
                    );
                    self.schema = fields;
                }
                if let Some(window) = window {
                    self.window = None;
                    self.changelog = Changelog::Append;
                    self.push(
                        Operator::Window {
                            window,
                            group_by,
                            calls,
                        },
                        schema,
                        State::Keyed(state),
                    );
                    return Ok(());
                }
                self.changelog = Changelog::Upsert(group_by.clone());
                self.push(
                    Operator::Aggregate { group_by, calls },
                    schema,
                    State::Keyed(state),
                );
                Ok(())
            }
            LogicalPlan::Sort(s) => {
                self.plan(&s.input, upstream)?;
                if s.fetch.is_some() {
                    return Err(self.err(
                        Code::UnsupportedSql,
                        "LIMIT is not supported yet".into(),
                        "filter with WHERE instead",
                    ));
                }
                if self.boundedness == Boundedness::Unbounded {
                    return Err(Diagnostic::error(
                        Code::UnboundedSort,
                        format!(
                            "could not compile model `{m}`: model `{m}`: ORDER BY cannot produce a final ordering over an unbounded input; remove it, or sort downstream of a bounded materialization",
                            m = self.model
                        ),
                    )
                    .with_help("ORDER BY needs an input that ends, such as a file source"));
                }
                if self.changelog.is_updating() {
                    return Err(self.err(
                        Code::UpdatingInput,
                        "ORDER BY over an updating input is not supported yet".into(),
                        "sort an append-only input",
                    ));
                }
                let df = s.input.schema();
                let mut keys = Vec::new();
                for k in &s.expr {
                    let DfExpr::Column(c) = &k.expr else {
                        return Err(self.err(
                            Code::UnsupportedSql,
                            format!("ORDER BY `{}` is not a column", k.expr),
                            "order by output columns",
                        ));
                    };
                    keys.push(SortKey {
                        column: self.column(df, c)?.name,
                        descending: !k.asc,
                    });
                }
                let schema = self.schema.clone();
                self.push(Operator::Sort { keys }, schema, State::Stateless);
                Ok(())
            }
            other => Err(self.err(
                Code::UnsupportedSql,
                format!("`{}` is not supported yet", other.display()),
                crate::sql_help(),
            )),
        }
    }

    /// A scalar function call by DataFusion's name for it.
    fn call(&self, df: &DFSchemaRef, name: &str, args: &[DfExpr]) -> Lowered<Expr> {
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
        let Some(func) = FUNCTIONS
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, f)| *f)
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
        self.function(func, lowered, digits)
    }

    /// `func` over `args`, typed by [`Func::result_type`].
    fn function(&self, func: Func, args: Vec<Expr>, digits: Option<u8>) -> Lowered<Expr> {
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
                    Func::Abs | Func::Floor | Func::Ceil => "it takes a number",
                    Func::Extract(_) => "it takes a timestamp",
                    Func::Like => "it takes a string and a string pattern",
                    Func::Round => "it takes a decimal and a number of digits; CAST other numbers to DECIMAL(p, s) first",
                    Func::Substring => "it takes a string, a start and a length (integers)",
                    _ => "it takes strings; CAST other values to STRING first",
                },
            ));
        };
        Ok(Expr::Call { func, args, ty })
    }

    /// A CASE, searched or simple (`CASE x WHEN v THEN ...` compares `x = v`), with every
    /// result cast to the results' common type; a bare NULL result takes that type.
    fn case(&self, df: &DFSchemaRef, c: &datafusion_expr::expr::Case) -> Lowered<Expr> {
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
    fn plus_interval(&self, df: &DFSchemaRef, b: &datafusion_expr::BinaryExpr) -> Lowered<Expr> {
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
            return Err(refuse({
                format!(
                    "an INTERVAL cannot be {verb} `{t}` of type {}",
                    t.data_type()
                )
            }));
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

    /// The aggregate call `e`, and the projection item computing its argument when the
    /// argument is an expression rather than a column.
    fn agg_call(&self, df: &DFSchemaRef, e: &DfExpr) -> Lowered<(AggCall, Option<ProjectItem>)> {
        let inner = match e {
            DfExpr::Alias(a) => &*a.expr,
            other => other,
        };
        let DfExpr::AggregateFunction(AggregateFunction { func, params }) = inner else {
            return Err(self.err(
                Code::InvalidAggregate,
                format!("`{e}` is not an aggregate call"),
                crate::sql_help(),
            ));
        };
        let func_kind = match (AggFunc::from_name(func.name()), params.distinct) {
            (Some(AggFunc::Count), true) => AggFunc::CountDistinct,
            (Some(f), false) => f,
            // The SQL check refuses the rest, pointing at the call.
            _ => {
                return Err(self.err(
                    Code::UnsupportedSql,
                    format!("the aggregate `{e}` is not supported yet"),
                    "the aggregates are sum, count, count(distinct x), min, max and avg",
                ));
            }
        };
        let mut computed = None;
        let arg = match params.args.as_slice() {
            [DfExpr::Column(c)] => Some(self.column(df, c)?),
            // count(1), count(*): every row.
            [DfExpr::Literal(v, ..)] if func_kind == AggFunc::Count && !v.is_null() => None,
            [] if func_kind == AggFunc::Count => None,
            #[allow(deprecated)]
            [DfExpr::Wildcard { .. }] if func_kind == AggFunc::Count => None,
            [arg] => {
                let expr = self.expr(df, arg)?;
                let name = argument_name(&expr);
                let field = Field {
                    name: name.clone(),
                    ty: expr.data_type(),
                    nullable: true,
                };
                computed = Some(ProjectItem { expr, name });
                Some(field)
            }
            _ => {
                return Err(self.err(
                    Code::InvalidAggregate,
                    format!("`{e}`: an aggregate takes one argument"),
                    "write e.g. sum(amount) or sum(price * qty)",
                ));
            }
        };
        let name = func_kind.call_name(arg.as_ref().map(|f| f.name.as_str()));
        let arg_type = arg.as_ref().map(|f| f.ty);
        if computed.as_ref().is_some_and(|c| untyped_null(&c.expr)) {
            return Err(self
                .err(
                    Code::TypeMismatch,
                    format!("`{name}` aggregates a bare NULL, which has no type"),
                    "write CAST(NULL AS <type>), or aggregate a column",
                )
                .with_span(self.bare_null()));
        }
        let ty = match (func_kind.accumulator_type(arg_type), arg_type) {
            (Some(t), _) => t,
            (None, Some(t)) => {
                return Err(self
                    .err(
                        Code::TypeMismatch,
                        format!("`{name}` is not supported over a {t} column"),
                        "sum and avg take numbers; min and max take numbers, strings and timestamps",
                    )
                    .with_span(self.span_of(inner)));
            }
            (None, None) => {
                return Err(self.err(
                    Code::InvalidAggregate,
                    format!("`{name}` needs a column"),
                    "write e.g. sum(amount)",
                ));
            }
        };
        Ok((
            AggCall {
                func: func_kind,
                arg: arg.map(|f| f.name),
                ty,
            },
            computed,
        ))
    }
}

/// Whether `e` is a NULL written without a type (the planner types it boolean).
fn untyped_null(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Literal {
            value: Value::Null,
            ty: DataType::Boolean
        }
    )
}

/// An argument's type for a message: `NULL` for a NULL written without a type.
fn type_or_null(e: &Expr) -> String {
    if untyped_null(e) {
        "NULL".into()
    } else {
        e.data_type().to_string()
    }
}

/// The name of the column computing an aggregate's argument: the expression as explain
/// renders it, without its outer parentheses (`sum(price * qty)`).
fn argument_name(expr: &Expr) -> String {
    let text = expr.to_string();
    match text.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
        Some(inner) if matches!(expr, Expr::Binary { .. } | Expr::IsNull { .. }) => {
            inner.to_string()
        }
        _ => text,
    }
}

/// Whether an expression can evaluate to null over rows of `input` (D9: nullability is
/// inferred, never declared).
fn may_be_null(e: &Expr, input: &[Field]) -> bool {
    match e {
        Expr::Column { name, .. } => input.iter().any(|f| &f.name == name && f.nullable),
        Expr::Literal { value, .. } => value.is_null(),
        Expr::IsNull { .. } => false,
        Expr::Not(inner)
        | Expr::Negative(inner)
        | Expr::PlusInterval { expr: inner, .. }
        | Expr::Cast { expr: inner, .. } => may_be_null(inner, input),
        Expr::Call { args, .. } => args.iter().any(|a| may_be_null(a, input)),
        Expr::Case {
            branches,
            otherwise,
            ..
        } => {
            otherwise.as_deref().is_none_or(|e| may_be_null(e, input))
                || branches.iter().any(|(_, r)| may_be_null(r, input))
        }
        Expr::Binary { left, right, .. } => may_be_null(left, input) || may_be_null(right, input),
    }
}

/// A source's columns as plan fields: every source column may be null.
fn source_fields(def: &SourceDef) -> Vec<Field> {
    def.schema
        .iter()
        .map(|(n, t)| Field {
            name: n.clone(),
            ty: *t,
            nullable: true,
        })
        .collect()
}

/// Gives an untyped NULL literal the type its context needs.
fn retype_null(e: Expr, ty: DataType) -> Expr {
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
fn not_null_columns(p: &Expr) -> Vec<String> {
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
fn literal(v: &ScalarValue) -> Option<Expr> {
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
        other if other.is_null() => (Value::Null, DataType::Boolean),
        _ => return None,
    };
    Some(Expr::Literal { value, ty })
}

/// The interval a planned INTERVAL literal holds (see [`crate::interval::for_planning`]).
fn interval(e: &DfExpr) -> Option<streamform_ir::Interval> {
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

/// Replaces `source('x')` / `ref('m')` in FROM, or the window table function that reads
/// it, with the plain name, for DataFusion (whose catalog gives a window table's name the
/// window's columns too).
fn with_plain_relation(query: &Query, name: &str) -> Query {
    let mut q = query.clone();
    if let sqlparser::ast::SetExpr::Select(s) = q.body.as_mut()
        && let Some(relation) = s.from.first_mut().map(|t| &mut t.relation)
        && matches!(relation, TableFactor::TableFunction { .. })
        && let Ok(plain) = sqlparser::parser::Parser::parse_sql(
            &sqlparser::dialect::GenericDialect {},
            "SELECT * FROM t",
        )
        && let Some(Statement::Query(plain)) = plain.into_iter().next()
        && let sqlparser::ast::SetExpr::Select(plain) = *plain.body
        && let Some(from) = plain.from.into_iter().next()
    {
        *relation = from.relation;
    }
    if let sqlparser::ast::SetExpr::Select(s) = q.body.as_mut()
        && let Some(TableFactor::Table {
            name: table, args, ..
        }) = s.from.first_mut().map(|t| &mut t.relation)
    {
        *table = ObjectName(vec![ObjectNamePart::Identifier(Ident::with_quote(
            '"', name,
        ))]);
        *args = None;
    }
    let _ = sqlparser::ast::visit_expressions_mut(&mut q, |e| {
        if let Some(case) = as_case(e) {
            *e = case;
        }
        // An INTERVAL in a form DataFusion plans; the SQL check refused the ones that do
        // not read.
        if let sqlparser::ast::Expr::Interval(i) = e
            && let Ok(interval) = crate::interval::read(i)
        {
            *i = crate::interval::for_planning(interval);
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    q
}

/// COALESCE and NULLIF as the CASE expressions they stand for (their null behaviour is
/// exactly that): `COALESCE(a, b, c)` is `CASE WHEN a IS NOT NULL THEN a WHEN b IS NOT NULL
/// THEN b ELSE c END`, `NULLIF(a, b)` is `CASE WHEN a = b THEN NULL ELSE a END`.
fn as_case(e: &sqlparser::ast::Expr) -> Option<sqlparser::ast::Expr> {
    use sqlparser::ast::{
        BinaryOperator, CaseWhen, Expr as SqlExpr, FunctionArg, FunctionArgExpr, FunctionArguments,
        Value as SqlValue, helpers::attached_token::AttachedToken,
    };
    let SqlExpr::Function(f) = e else {
        return None;
    };
    let name = f.name.to_string().to_ascii_lowercase();
    let FunctionArguments::List(list) = &f.args else {
        return None;
    };
    let args: Vec<&SqlExpr> = list
        .args
        .iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) => Some(x),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let case = |conditions: Vec<CaseWhen>, otherwise: &SqlExpr| SqlExpr::Case {
        case_token: AttachedToken::empty(),
        end_token: AttachedToken::empty(),
        operand: None,
        conditions,
        else_result: Some(Box::new(otherwise.clone())),
    };
    match (name.as_str(), args.as_slice()) {
        ("coalesce", [only]) => Some((*only).clone()),
        ("coalesce", [first @ .., last]) => Some(case(
            first
                .iter()
                .map(|a| CaseWhen {
                    condition: SqlExpr::IsNotNull(Box::new((*a).clone())),
                    result: (*a).clone(),
                })
                .collect(),
            last,
        )),
        ("nullif", [a, b]) => Some(case(
            vec![CaseWhen {
                condition: SqlExpr::BinaryOp {
                    left: Box::new((*a).clone()),
                    op: BinaryOperator::Eq,
                    right: Box::new((*b).clone()),
                },
                result: SqlExpr::value(SqlValue::Null),
            }],
            a,
        )),
        _ => None,
    }
}

/// Rewrites DataFusion's unknown-column error into ours: the message and a did-you-mean
/// help naming the input's columns.
fn unknown_column(e: &DataFusionError, fields: &[Field]) -> Option<(String, String)> {
    let DataFusionError::SchemaError(schema_error, _) = e.find_root() else {
        return None;
    };
    let SchemaError::FieldNotFound { field, .. } = schema_error.as_ref() else {
        return None;
    };
    let name = field.name.as_str();
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    let help = crate::diagnostic::suggest(name, &names, "the input's columns are");
    Some((format!("unknown column `{name}`"), help))
}

/// What a HAVING condition may read.
const HAVING_HELP: &str = "filter rows with WHERE; a HAVING condition reads GROUP BY columns and aggregates such as SUM(x) > 10";

/// The planner's type errors in Streamform's words, with their code: operands that do not
/// combine, a condition or a `NOT` or `-` over a value of the wrong type, two output columns
/// with one name, and two aggregate calls the planner names alike (it leaves a CAST out of
/// a call's name).
fn type_problem(e: &DataFusionError, at: Option<&str>) -> Option<(Code, String, String)> {
    let raw = datafusion_message(e);
    let help = "combine values of the same kind (numbers with numbers, strings with strings, a timestamp with a timestamp or an INTERVAL), or CAST one side".to_string();
    if let Some(rest) = raw.strip_prefix("Cannot coerce arithmetic expression ") {
        let operands = rest.strip_suffix(" to valid types").unwrap_or(rest);
        return Some((
            Code::TypeMismatch,
            format!(
                "the operands of `{}` do not combine",
                our_type_names(operands)
            ),
            help,
        ));
    }
    let diagnostic = e.diagnostic().map(|d| d.message.as_str()).unwrap_or("");
    if raw.contains("incompatible types") || diagnostic.contains("incompatible types") {
        let what = at.map_or_else(String::new, |t| format!("`{t}` "));
        return Some((
            Code::TypeMismatch,
            format!("{what}meets a value of a type it does not combine or compare with"),
            help,
        ));
    }
    if let Some(rest) = raw.strip_prefix("Cannot create filter with non-boolean predicate ") {
        let ty = rest.rsplit_once(" returning ").map_or("", |(_, t)| t);
        return Some((
            Code::TypeMismatch,
            format!(
                "a WHERE or HAVING condition is {}, not a boolean",
                our_type_names(ty)
            ),
            "write a condition that is true or false, such as `qty > 0` or `note IS NOT NULL`"
                .into(),
        ));
    }
    let what = at.map_or_else(|| "its operand ".to_string(), |t| format!("`{t}` "));
    if let Some(ty) = raw.strip_prefix("Unary operator 'NOT' requires a boolean expression, got ") {
        // Without a position the planner may name the type before an aggregation.
        let is = match at {
            Some(_) => format!("is {}", our_type_names(ty)),
            None => "is not one".into(),
        };
        return Some((
            Code::TypeMismatch,
            format!("NOT applies to a boolean, and {what}{is}"),
            "negate a condition, such as NOT (qty > 0), or compare the value: qty = 0".into(),
        ));
    }
    if let Some(rest) = raw.strip_prefix("Unary operator '") {
        let sign = rest.split('\'').next().unwrap_or("-");
        return Some((
            Code::TypeMismatch,
            format!(
                "unary {sign} applies to a number, an INTERVAL or a timestamp, and {what}is not one"
            ),
            "apply it to a numeric column, or CAST the value to a number first".into(),
        ));
    }
    if raw.starts_with("Projections require unique expression names") {
        // `... the expression "t.id AS a" at position 0 and "t.cat AS a" at position 1
        // have the same name ...`: the name is the last one's alias, or its column.
        let name = raw
            .split(" have the same name")
            .next()
            .and_then(|head| head.rsplit_once('"'))
            .and_then(|(head, _)| head.rsplit_once('"'))
            .map(|(_, expr)| {
                let name = expr.rsplit_once(" AS ").map_or(expr, |(_, alias)| alias);
                name.rsplit_once('.').map_or(name, |(_, n)| n).to_string()
            })
            // An unnamed column is named in the planner's notation (`sum(t.a + Int64(1))`).
            .filter(|n| crate::config::is_identifier(n));
        return Some((
            Code::OutputColumns,
            match name {
                Some(n) => format!("two output columns are both named `{n}`"),
                None => "two output columns have the same name".into(),
            },
            "give each output column its own name with AS".into(),
        ));
    }
    if let Some(rest) = raw.strip_prefix("Cannot get result type for decimal operation ") {
        // `Decimal128(38, 36) * Decimal128(38, 9): Invalid argument error: Output scale ...`
        let operation = rest.split(':').next().unwrap_or(rest);
        return Some((
            Code::UnsupportedSql,
            format!(
                "{} is not supported yet: its exact result needs more places than a DECIMAL's 38 digits hold (Flink would give some up; Streamform's planner cannot type it)",
                our_type_names(operation)
            ),
            "CAST an operand to a DECIMAL with fewer places first, e.g. CAST(x AS DECIMAL(18, 2))"
                .into(),
        ));
    }
    if raw.starts_with("HAVING clause references") {
        return Some((
            Code::InvalidAggregate,
            "HAVING filters groups, and its condition uses a column that is neither grouped nor inside an aggregate".into(),
            HAVING_HELP.into(),
        ));
    }
    // `Column in SELECT must be in GROUP BY or an aggregate function: ... column
    // "orders.amount" must appear ...`, for a column, a wildcard or a HAVING condition.
    if let Some(rest) = raw.strip_prefix("Column in ") {
        let column = raw
            .split("column \"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .map_or("", |c| c.rsplit_once('.').map_or(c, |(_, n)| n));
        return Some(if rest.starts_with("HAVING") {
            (
                Code::InvalidAggregate,
                format!(
                    "HAVING reads `{column}`, which is neither in GROUP BY nor inside an aggregate"
                ),
                HAVING_HELP.into(),
            )
        } else {
            (
                Code::InvalidAggregate,
                format!("`{column}` is selected, but is neither in GROUP BY nor inside an aggregate"),
                "group by it or aggregate it (sum, count, min, max); with GROUP BY, list the columns rather than SELECT *".into(),
            )
        });
    }
    if let Some(rest) = raw.strip_prefix("Schema contains qualified field name ") {
        // `orders.customer_id and unqualified field name customer_id which would be ...`
        let name = rest
            .split(" and unqualified field name ")
            .nth(1)
            .and_then(|n| n.split(' ').next())
            .unwrap_or("");
        return Some((
            Code::OutputColumns,
            format!("two output columns are both named `{name}`"),
            "give each output column its own name with AS".into(),
        ));
    }
    if raw.starts_with("Schema contains duplicate unqualified field name ") {
        // The planner names an unnamed column after its expression in its own notation
        // (`sum(t.a + Int64(1))`), and leaves a CAST out of an aggregate call's name.
        return Some((
            Code::OutputColumns,
            "two columns of the query would get the same name".into(),
            "name each output column with AS; two aggregate calls that differ only by a CAST inside, avg(x) and avg(CAST(x AS DOUBLE)), collide even so: compute the CAST as a column in an upstream model".into(),
        ));
    }
    None
}

/// A planner's rendering of operand types (`Utf8 + Interval(MonthDayNano)`) with Streamform's
/// type names (`string + INTERVAL`).
fn our_type_names(text: &str) -> String {
    let mut out = text.to_string();
    for (theirs, ours) in [
        ("Interval(MonthDayNano)", "INTERVAL"),
        ("Timestamp(ms)", "timestamp"),
        ("Timestamp(Millisecond, None)", "timestamp"),
        ("Utf8View", "string"),
        ("LargeUtf8", "string"),
        ("Utf8", "string"),
        ("Int32", "int32"),
        ("Int64", "int64"),
        ("Float64", "float64"),
        ("Boolean", "boolean"),
        ("Decimal128", "decimal"),
    ] {
        out = out.replace(theirs, ours);
    }
    // `decimal(12, 2)` as Streamform writes it: `decimal(12,2)`.
    let mut rest = out.as_str();
    let mut written = String::with_capacity(out.len());
    while let Some(at) = rest.find("decimal(") {
        let (head, tail) = rest.split_at(at + "decimal(".len());
        written.push_str(head);
        let end = tail.find(')').map_or(tail.len(), |e| e + 1);
        written.push_str(&tail[..end].replace(", ", ","));
        rest = &tail[end..];
    }
    written.push_str(rest);
    written
}

/// Where in the query the planner failed, found by planning parts of it: the first select
/// item that fails with the items before it (WHERE, HAVING and ORDER BY left out), else the
/// WHERE, else the HAVING.
fn failing_part(
    planner: &SqlToRel<'_, Catalog>,
    query: &Query,
    table: &str,
    text: &str,
) -> Option<std::ops::Range<usize>> {
    use sqlparser::ast::{SetExpr, Spanned};
    let SetExpr::Select(select) = query.body.as_ref() else {
        return None;
    };
    let plans = |q: &Query| {
        let statement = Statement::Query(Box::new(with_plain_relation(q, table)));
        planner.sql_statement_to_plan(statement).is_ok()
    };
    for i in 0..select.projection.len() {
        let mut one = query.clone();
        one.order_by = None;
        one.limit_clause = None;
        if let SetExpr::Select(s) = one.body.as_mut() {
            s.projection.truncate(i + 1);
            s.selection = None;
            s.having = None;
        }
        if !plans(&one) {
            return item_span(select, i, text);
        }
    }
    let mut without_having = query.clone();
    if let SetExpr::Select(s) = without_having.body.as_mut() {
        s.having = None;
    }
    match (&select.selection, &select.having) {
        (Some(w), _) if !plans(&without_having) => crate::sql::byte_span(text, w.span()),
        (_, Some(h)) => crate::sql::byte_span(text, h.span()),
        _ => None,
    }
}

/// The code of a DataFusion planning error.
fn planning_code(e: &DataFusionError) -> Code {
    match e.find_root() {
        DataFusionError::SchemaError(e, _)
            if matches!(e.as_ref(), SchemaError::FieldNotFound { .. }) =>
        {
            Code::UnknownColumn
        }
        DataFusionError::NotImplemented(_) => Code::UnsupportedSql,
        DataFusionError::SQL(..) => Code::SqlSyntax,
        _ => Code::InvalidQuery,
    }
}

/// Cleans a DataFusion error into one line for a diagnostic.
fn datafusion_message(e: &datafusion_common::DataFusionError) -> String {
    let raw = e.strip_backtrace();
    let mut m = raw.as_str();
    for prefix in [
        "Error during planning: ",
        "Schema error: ",
        "This feature is not implemented: ",
        "SQL error: ",
    ] {
        m = m.strip_prefix(prefix).unwrap_or(m);
    }
    m.lines().next().unwrap_or(m).to_string()
}

/// Plans and lowers one model into its chain of IR nodes, ending in the Sink, and checks
/// the declared materialization against what the SQL derives.
///
/// # Errors
/// One diagnostic for the first problem that stops lowering (an unknown column, a type
/// error, ORDER BY over an unbounded input, a declared key that disagrees, ...).
pub fn lower_model(
    model: &str,
    text: &str,
    query: &Query,
    reads: &Reads,
    upstream: &Upstream<'_>,
    declared: &Declared<'_>,
) -> Result<ModelPlan, Diagnostic> {
    let input_fields: Vec<Field> = match upstream {
        Upstream::Source(def) => source_fields(def),
        Upstream::Model(_, c) => c.schema.clone(),
    };
    let table = match &reads.input {
        Input::Source(n) | Input::Model(n) => n.clone(),
    };
    let mut planned_fields = input_fields.clone();
    if let Some(w) = &reads.window {
        if let Some(clash) = input_fields
            .iter()
            .find(|f| streamform_ir::WINDOW_COLUMNS.contains(&f.name.as_str()))
        {
            return Err(Diagnostic::error(
                Code::OutputColumns,
                format!("model `{model}`: the window's input already has a column `{}`, which the window adds", clash.name),
            )
            .with_span(w.span.clone())
            .with_help(format!("rename it where it is made, e.g. `{} AS minute_{}` in the model this one reads", clash.name, clash.name.trim_start_matches("window_"))));
        }
        planned_fields.extend(streamform_ir::WINDOW_COLUMNS.iter().map(|c| Field {
            name: c.to_string(),
            ty: DataType::Timestamp,
            nullable: false,
        }));
    }
    let catalog = Catalog::new(&table, &planned_fields);
    let options = ParserOptions::new()
        .with_parse_float_as_decimal(true)
        .with_enable_ident_normalization(false);
    let options = ParserOptions {
        collect_spans: true,
        ..options
    };
    let planner = SqlToRel::new_with_options(&catalog, options);
    let statement = Statement::Query(Box::new(with_plain_relation(query, &table)));
    let plan = planner.sql_statement_to_plan(statement).map_err(|e| {
        let span = e.diagnostic().and_then(|d| d.span).map(|s| {
            let start =
                crate::diagnostic::offset_of(text, s.start.line as usize, s.start.column as usize);
            let end =
                crate::diagnostic::offset_of(text, s.end.line as usize, s.end.column as usize);
            start..end.max(start + 1).min(text.len())
        });
        // Past an aggregation the planner points at the FROM relation, whatever failed:
        // no position is better, and the query's parts are tried below.
        let span = span.filter(|at| {
            reads
                .span
                .as_ref()
                .is_none_or(|from| at.end <= from.start || at.start >= from.end)
        });
        // The planner's own advice, unless it names a function Streamform does not have
        // (for a column outside GROUP BY it suggests ANY_VALUE).
        let help = e
            .diagnostic()
            .and_then(|d| d.helps.first().map(|h| h.message.clone()))
            .filter(|h| !h.contains("ANY_VALUE"))
            .unwrap_or_else(|| {
                if datafusion_message(&e).contains("GROUP BY") {
                    "every selected column must be in GROUP BY or inside an aggregate (sum, count, min, max); docs/sql.md lists what a model can use".into()
                } else {
                    "docs/sql.md lists what a model can use".into()
                }
            });
        // With a position, the planner's short message and the text it points at read
        // better than its full one, which names columns by internal qualified names.
        let short = e.diagnostic().zip(span.clone()).map(|(d, at)| {
            // The planner qualifies columns with the relation's name, which the model
            // never wrote (it wrote source('orders')).
            let message = d.message.replace(&format!("'{table}."), "'");
            format!("`{}`: {}", text[at].trim(), message.trim_end_matches('.'))
        });
        let (code, message, help) = unknown_column(&e, &input_fields)
            .map(|(m, h)| (Code::UnknownColumn, m, h))
            .or_else(|| type_problem(&e, span.as_ref().map(|at| text[at.clone()].trim())))
            .unwrap_or_else(|| {
                (
                    planning_code(&e),
                    short.unwrap_or_else(|| datafusion_message(&e)),
                    help,
                )
            });
        // Without a position from the planner, find the part of the query it failed on.
        let span = span.or_else(|| failing_part(&planner, query, &table, text));
        Diagnostic::error(code, format!("model `{model}`: {message}"))
            .with_span(span)
            .with_help(help)
    })?;
    let mut l = Lowering {
        model,
        text,
        nodes: Vec::new(),
        schema: Vec::new(),
        changelog: Changelog::Append,
        boundedness: Boundedness::Unbounded,
        from_span: reads.span.clone(),
        time: None,
        clock: false,
        query,
        aggregated: false,
        window: reads.window.as_ref(),
    };
    l.plan(&plan, upstream).map_err(|d| {
        if d.span.is_none() {
            d.with_span(reads.span.clone())
        } else {
            d
        }
    })?;
    if let Some(w) = l.window {
        return Err(l.unaggregated_window(w));
    }
    let changelog = sink_changelog(&l, declared)?;
    // An upsert model over an append input keeps the last row per key (D13): a keyed node
    // whose state is that row.
    if let (false, Changelog::Upsert(key)) = (l.changelog.is_updating(), &changelog)
        && !key.is_empty()
        && !keys_every_window(&l.nodes, key)
    {
        l.changelog = changelog.clone();
        let schema = l.schema.clone();
        let state = State::Keyed(KeyedState::last_row(key, &schema));
        l.push(Operator::Deduplicate { key: key.clone() }, schema, state);
    }
    l.changelog = changelog;
    let schema = l.schema.clone();
    l.push(
        Operator::Sink {
            model: model.to_string(),
            materialized: declared.materialized.clone(),
            target: declared.sink.cloned(),
        },
        schema,
        State::Stateless,
    );
    if let Some(ms) = declared.retention {
        retain(&mut l, ms)?;
    }
    Ok(ModelPlan {
        name: model.to_string(),
        input: reads.input.clone(),
        nodes: l.nodes,
    })
}

/// Whether `key` (output columns) holds every grouping column of the model's window node,
/// seen through the projections after it: then each key is emitted once, when its window
/// fires, and an upsert sink keyed so needs no last-row state (docs/windows.md).
fn keys_every_window(nodes: &[Node], key: &[String]) -> bool {
    let Some(at) = nodes.iter().rposition(|n| n.id.kind == NodeKind::Window) else {
        return false;
    };
    let Operator::Window { group_by, .. } = &nodes[at].op else {
        return false;
    };
    // Each key column's name at the window's output, traced back through projections.
    let mut names: Vec<Option<String>> = key.iter().cloned().map(Some).collect();
    for node in nodes[at + 1..].iter().rev() {
        if let Operator::Project { items } = &node.op {
            for name in &mut names {
                *name = name.as_ref().and_then(|n| {
                    items
                        .iter()
                        .find(|i| &i.name == n)
                        .and_then(|i| match &i.expr {
                            Expr::Column { name, .. } => Some(name.clone()),
                            _ => None,
                        })
                });
            }
        }
    }
    group_by
        .iter()
        .filter(|g| g.as_str() != streamform_ir::WINDOW_TIME)
        .all(|g| names.iter().any(|n| n.as_ref() == Some(g)))
}

/// Gives every keyed node of the model the declared retention, which needs a clock (an
/// event-time source upstream) and state to expire.
fn retain(l: &mut Lowering<'_>, ms: u64) -> Result<(), Diagnostic> {
    let model = l.model;
    let err = |message: String, help: &str| {
        Err(Diagnostic::error(Code::EventTime, message)
            .anchored(Anchor::ModelRetention(model.to_string()))
            .with_help(help))
    };
    if !l.clock {
        return err(
            format!(
                "model `{model}` declares retention, but no source upstream runs on event time"
            ),
            "retention is enforced in event time: declare `event_time:` on the source the model reads (sources.yml), or remove `retention:`",
        );
    }
    let mut keyed = false;
    for node in &mut l.nodes {
        // A window frees its state when it fires; retention does not apply to it.
        if let State::Keyed(k) = &mut node.state
            && k.window.is_none()
        {
            k.retention = Retention::After(ms);
            keyed = true;
        }
    }
    if !keyed {
        return err(
            format!("model `{model}` declares retention, but keeps no state to expire"),
            "retention applies to a model that keeps state per key (GROUP BY, or upsert over an append input); remove `retention:`",
        );
    }
    Ok(())
}

/// Checks the declared materialization against the derived changelog and returns the
/// Sink's changelog (spec: "Declared and derived must agree").
fn sink_changelog(l: &Lowering<'_>, declared: &Declared<'_>) -> Result<Changelog, Diagnostic> {
    let model = l.model;
    let config_err = |message: String, help: String| {
        Diagnostic::error(Code::DeclarationMismatch, message)
            .anchored(Anchor::ModelEntry(model.to_string()))
            .with_help(help)
    };
    let key_err = |message: String, help: String| {
        Diagnostic::error(Code::DeclarationMismatch, message)
            .anchored(Anchor::ModelKey(model.to_string()))
            .with_help(help)
    };
    let has_aggregate = l.nodes.iter().any(|n| n.id.kind == NodeKind::Aggregate);
    match (declared.materialized, &l.changelog) {
        (Materialized::Append, Changelog::Upsert(key)) if has_aggregate && key.is_empty() => Err(config_err(
            format!("model `{model}` is a global aggregate (no GROUP BY), which produces one updating row, but it is declared append"),
            format!("declare `materialized: upsert` with no `key:` for {model} in streamform.yml"),
        )),
        (Materialized::Append, Changelog::Upsert(key)) if has_aggregate => Err(config_err(
            format!("model `{model}` has a GROUP BY, so it produces an updating result keyed by [{}], but it is declared append", key.join(", ")),
            format!("declare `materialized: upsert` with `key: [{}]` for {model} in streamform.yml", key.join(", ")),
        )),
        (Materialized::Append, c) if c.is_updating() => Err(config_err(
            format!("model `{model}` is declared append, but its input emits updates ({})", c.title()),
            "declare it `materialized: upsert` with the key of its input; an append model cannot carry updates".into(),
        )),
        (Materialized::Append, c) => Ok(c.clone()),
        (Materialized::Upsert { key }, Changelog::Upsert(derived)) => {
            if derived.is_empty() && !key.is_empty() {
                return Err(key_err(
                    format!("model `{model}` is a global aggregate (no GROUP BY), which has no key, but declares key [{}]", key.join(", ")),
                    format!("remove `key:` from {model} in streamform.yml"),
                ));
            }
            if key != derived {
                let what = if has_aggregate { "its GROUP BY" } else { "its input" };
                let declared_key = if key.is_empty() { "no key".to_string() } else { format!("key [{}]", key.join(", ")) };
                return Err(key_err(
                    format!("model `{model}` declares {declared_key}, but {what} produces upsert({})", derived.join(", ")),
                    format!("declare `key: [{}]`", derived.join(", ")),
                ));
            }
            Ok(Changelog::Upsert(derived.clone()))
        }
        (Materialized::Upsert { key }, _) => {
            if key.is_empty() {
                return Err(config_err(
                    format!("model `{model}` is declared upsert but has no key"),
                    format!("declare `key:` with the columns that identify a row of {model}, or materialize it as append"),
                ));
            }
            if let Some((i, missing)) = key.iter().enumerate().find(|(_, k)| !l.schema.iter().any(|f| &f.name == *k)) {
                let cols: Vec<&str> = l.schema.iter().map(|f| f.name.as_str()).collect();
                return Err(Diagnostic::error(
                    Code::DeclarationMismatch,
                    format!("model `{model}` declares key column `{missing}`, which it does not output"),
                )
                .anchored(Anchor::ModelKeyColumn(model.to_string(), i))
                .with_help(crate::diagnostic::suggest(missing, &cols, "its columns are")));
            }
            Ok(Changelog::Upsert(key.clone()))
        }
    }
}
