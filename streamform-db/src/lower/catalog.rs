//! What DataFusion's planner sees of a model (docs/architecture.md): the input as one table
//! of Arrow-typed columns, and the functions a model may call, registered for planning only
//! (nothing is ever executed by DataFusion).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType as ArrowType, Field as ArrowField, Schema as ArrowSchema, TimeUnit};
use datafusion_common::TableReference;
use datafusion_common::config::ConfigOptions;
use datafusion_expr::logical_plan::builder::LogicalTableSource;
use datafusion_expr::{
    AggregateUDF, AggregateUDFImpl, Expr as DfExpr, ScalarUDF, ScalarUDFImpl, Signature,
    TableSource, Volatility, WindowUDF,
};
use datafusion_sql::planner::ContextProvider;
use sqlparser::ast::{Ident, ObjectName, ObjectNamePart, Query, TableFactor};
use streamform_ir::{AggFunc, DataType, Field};

pub(super) fn arrow_type(t: DataType) -> ArrowType {
    match t {
        DataType::Int32 => ArrowType::Int32,
        DataType::Int64 => ArrowType::Int64,
        DataType::Float64 => ArrowType::Float64,
        DataType::Decimal { precision, scale } => ArrowType::Decimal128(precision, scale as i8),
        DataType::String => ArrowType::Utf8,
        DataType::Boolean => ArrowType::Boolean,
        DataType::Timestamp => ArrowType::Timestamp(TimeUnit::Millisecond, None),
        DataType::Date => ArrowType::Date32,
    }
}

pub(super) fn from_arrow(t: &ArrowType) -> Option<DataType> {
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
        ArrowType::Date32 => DataType::Date,
        _ => return None,
    })
}

/// A planning-only aggregate or scalar function: DataFusion needs to know that sum, upper
/// and the rest exist, and a plausible return type; the types that matter are computed by
/// our lowering, and nothing is ever executed in DataFusion.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(super) struct Planning {
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
        if let Some(aggregate) = crate::surface::aggregate(self.name) {
            return match args.first() {
                Some(t) if aggregate.func != AggFunc::Count => t.clone(),
                _ => ArrowType::Int64,
            };
        }
        match (self.name, args.first()) {
            ("char_length" | "character_length" | "position" | "locate", _) => ArrowType::Int32,
            ("regexp", _) => ArrowType::Boolean,
            ("to_timestamp", _) => ArrowType::Timestamp(arrow_schema::TimeUnit::Millisecond, None),
            ("date_part", _) => ArrowType::Int64,
            ("abs" | "floor" | "ceil" | "round" | "mod" | FLOOR_TO | CEIL_TO, Some(t)) => t.clone(),
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

/// The planning-only `ROW_NUMBER()` window function (docs/ranking.md): DataFusion plans
/// `ROW_NUMBER() OVER (…)` into a Window node with it, which lowering reads into a Rank.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(super) struct RowNumber {
    signature: Signature,
}

/// The name DataFusion's plan gives the row number function.
pub(super) const ROW_NUMBER: &str = "row_number";

impl datafusion_expr::WindowUDFImpl for RowNumber {
    fn name(&self) -> &str {
        ROW_NUMBER
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn partition_evaluator(
        &self,
        _: datafusion_expr::function::PartitionEvaluatorArgs,
    ) -> datafusion_common::Result<Box<dyn datafusion_expr::PartitionEvaluator>> {
        datafusion_common::not_impl_err!(
            "Streamform plans ranking but never executes it in DataFusion"
        )
    }
    fn field(
        &self,
        args: datafusion_expr::function::WindowUDFFieldArgs,
    ) -> datafusion_common::Result<arrow_schema::FieldRef> {
        Ok(Arc::new(ArrowField::new(
            args.name(),
            ArrowType::Int64,
            false,
        )))
    }
}

/// Plans `SUBSTRING(s FROM a FOR b)` and `EXTRACT(f FROM t)` as calls of the planning-only
/// `substr` and `date_part`.
#[derive(Debug)]
pub(super) struct Planner {
    substr: Arc<ScalarUDF>,
    date_part: Arc<ScalarUDF>,
}

pub(super) fn planned(
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

pub(super) struct Catalog {
    /// Each relation the model reads, by its plain name, with its columns.
    tables: HashMap<String, Arc<ArrowSchema>>,
    options: ConfigOptions,
    aggregates: HashMap<&'static str, Arc<AggregateUDF>>,
    functions: HashMap<&'static str, Arc<ScalarUDF>>,
    planners: Vec<Arc<dyn datafusion_expr::planner::ExprPlanner>>,
}

impl Catalog {
    pub(super) fn new(tables: &[(String, Vec<Field>)]) -> Catalog {
        let tables = tables
            .iter()
            .map(|(name, fields)| {
                let arrow: Vec<ArrowField> = fields
                    .iter()
                    .map(|f| ArrowField::new(&f.name, arrow_type(f.ty), f.nullable))
                    .collect();
                (name.clone(), Arc::new(ArrowSchema::new(arrow)))
            })
            .collect();
        // LAG is planned as an aggregate too: lowering reads it only in an OVER window.
        let aggregates = crate::surface::AGGREGATE_FUNCTIONS
            .iter()
            .map(|f| f.name)
            .chain(std::iter::once("lag"))
            .map(|name| {
                let planning = Planning::new(name);
                (name, Arc::new(AggregateUDF::new_from_impl(planning)))
            })
            .collect();
        let functions: HashMap<&'static str, Arc<ScalarUDF>> = crate::surface::planned()
            .map(|(n, _)| (n, Arc::new(ScalarUDF::new_from_impl(Planning::new(n)))))
            .collect();
        let planners: Vec<Arc<dyn datafusion_expr::planner::ExprPlanner>> =
            vec![Arc::new(Planner {
                substr: functions["substr"].clone(),
                date_part: functions["date_part"].clone(),
            })];
        Catalog {
            tables,
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
        if let Some(schema) = self.tables.get(name.table()) {
            Ok(Arc::new(LogicalTableSource::new(schema.clone())))
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
    fn get_window_meta(&self, name: &str) -> Option<Arc<WindowUDF>> {
        name.eq_ignore_ascii_case(ROW_NUMBER).then(|| {
            Arc::new(WindowUDF::new_from_impl(RowNumber {
                signature: Signature::nullary(Volatility::Immutable),
            }))
        })
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

/// Replaces every `source('x')` / `ref('m')` in FROM (in each branch of a UNION ALL and in
/// each subquery), or the window table function that reads it, with the plain name `x` /
/// `m`, for DataFusion (whose catalog gives a window table's name the window's columns too).
pub(super) fn with_plain_relation(query: &Query) -> Query {
    let mut q = query.clone();
    plain_in_body(q.body.as_mut());
    let _ = sqlparser::ast::visit_expressions_mut(&mut q, |e| {
        if let Some(case) = as_case(e) {
            *e = case;
        }
        unfilter(e);
        as_position_call(e);
        if let Some(call) = as_rounding_call(e) {
            *e = call;
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

/// `POSITION(seek IN s)`, which DataFusion plans only through an expression planner, as the
/// call `position(seek, s)` (docs/sql.md).
fn as_position_call(e: &mut sqlparser::ast::Expr) {
    use sqlparser::ast::{
        Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentList, FunctionArguments,
        Ident, ObjectName,
    };
    let Expr::Position { expr, r#in } = e else {
        return;
    };
    let arg = |x: &Expr| FunctionArg::Unnamed(FunctionArgExpr::Expr(x.clone()));
    *e = Expr::Function(Function {
        name: ObjectName::from(vec![Ident::new("position")]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args: vec![arg(expr), arg(r#in)],
            clauses: Vec::new(),
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    });
}

fn plain_in_body(body: &mut sqlparser::ast::SetExpr) {
    use sqlparser::ast::SetExpr;
    match body {
        SetExpr::SetOperation { left, right, .. } => {
            plain_in_body(left);
            plain_in_body(right);
        }
        SetExpr::Query(q) => plain_in_body(q.body.as_mut()),
        SetExpr::Select(s) => {
            for t in &mut s.from {
                plain_relation(&mut t.relation);
                for j in &mut t.joins {
                    plain_relation(&mut j.relation);
                }
            }
        }
        _ => {}
    }
}

/// One FROM item: a read by its plain name, a window table over a read as that name (the
/// window table's alias kept, so `w.page` reads as on a source), a subquery rewritten within.
fn plain_relation(relation: &mut TableFactor) {
    match relation {
        TableFactor::Derived { subquery, .. } => plain_in_body(subquery.body.as_mut()),
        TableFactor::Table { name, args, .. } if args.is_some() => {
            if let Some(read) = read_name(args.as_ref().map(|a| a.args.as_slice())) {
                *name = plain_name(&read);
                *args = None;
            }
        }
        TableFactor::TableFunction {
            expr: sqlparser::ast::Expr::Function(f),
            alias,
        } => {
            // The window's input, `TABLE source('x')`, is its first argument.
            let read = match &f.args {
                sqlparser::ast::FunctionArguments::List(list) => {
                    list.args.first().and_then(|a| quoted_read(&a.to_string()))
                }
                _ => None,
            };
            if let Some(read) = read {
                *relation = TableFactor::Table {
                    name: plain_name(&read),
                    alias: alias.take(),
                    args: None,
                    with_hints: Vec::new(),
                    version: None,
                    with_ordinality: false,
                    partitions: Vec::new(),
                    json_path: None,
                    sample: None,
                    index_hints: Vec::new(),
                };
            }
        }
        _ => {}
    }
}

fn plain_name(name: &str) -> ObjectName {
    ObjectName(vec![ObjectNamePart::Identifier(Ident::with_quote(
        '"', name,
    ))])
}

/// The name a `source('x')` / `ref('m')` call's arguments hold.
fn read_name(args: Option<&[sqlparser::ast::FunctionArg]>) -> Option<String> {
    use sqlparser::ast::{Expr, FunctionArg, FunctionArgExpr, Value};
    match args? {
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))] => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// The name in `TABLE source('x')` or `TABLE ref('m')`, as a window's argument prints.
fn quoted_read(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let at = lower
        .find("source(")
        .map(|i| i + 7)
        .or_else(|| lower.find("ref(").map(|i| i + 4))?;
    let rest = text[at..].trim_start();
    let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let end = rest[1..].find(quote)?;
    Some(rest[1..1 + end].to_string())
}

/// The planned name of `FLOOR(t TO unit)` and of `CEIL(t TO unit)`, which DataFusion's
/// planner does not read: each becomes a call of that name, `floor_to(t, 'MINUTE')`, which
/// lowering turns into the IR function.
pub(super) const FLOOR_TO: &str = "floor_to";
/// See [`FLOOR_TO`].
pub(super) const CEIL_TO: &str = "ceil_to";

/// `FLOOR(t TO unit)` and `CEIL(t TO unit)` as calls DataFusion plans (see [`FLOOR_TO`]);
/// the SQL check refused every unit the IR has not.
fn as_rounding_call(e: &sqlparser::ast::Expr) -> Option<sqlparser::ast::Expr> {
    use sqlparser::ast::{
        CeilFloorKind, DateTimeField, Expr as SqlExpr, Function, FunctionArg, FunctionArgExpr,
        FunctionArgumentList, FunctionArguments, Value as SqlValue,
    };
    let (name, expr, unit) = match e {
        SqlExpr::Floor {
            expr,
            field: CeilFloorKind::DateTimeField(unit),
        } => (FLOOR_TO, expr, unit),
        SqlExpr::Ceil {
            expr,
            field: CeilFloorKind::DateTimeField(unit),
        } => (CEIL_TO, expr, unit),
        _ => return None,
    };
    if matches!(unit, DateTimeField::NoDateTime) {
        return None;
    }
    let arg = |x: SqlExpr| FunctionArg::Unnamed(FunctionArgExpr::Expr(x));
    Some(SqlExpr::Function(Function {
        name: ObjectName(vec![ObjectNamePart::Identifier(Ident::new(name))]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args: vec![
                arg((**expr).clone()),
                arg(SqlExpr::value(SqlValue::SingleQuotedString(
                    unit.to_string(),
                ))),
            ],
            clauses: Vec::new(),
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    }))
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
        // IF(c, a, b) is `a` when c is true, else (false or null) `b`: Flink's IF, and the
        // searched CASE (docs/sql.md).
        ("if", [c, a, b]) if f.filter.is_none() => Some(case(
            vec![CaseWhen {
                condition: (*c).clone(),
                result: (*a).clone(),
            }],
            b,
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

/// An aggregate's `FILTER (WHERE c)` moved into its argument (docs/sql.md, "Aggregates"):
/// `COUNT(*) FILTER (WHERE c)` is `COUNT(CASE WHEN c THEN 1 END)`, `SUM(x) FILTER (WHERE c)`
/// is `SUM(CASE WHEN c THEN x END)`: every aggregate ignores the nulls the rows left out
/// become, so each takes exactly the rows the filter keeps, as Flink's does.
fn unfilter(e: &mut sqlparser::ast::Expr) {
    use sqlparser::ast::{
        CaseWhen, Expr as SqlExpr, FunctionArg, FunctionArgExpr, FunctionArguments,
        Value as SqlValue, helpers::attached_token::AttachedToken,
    };
    let SqlExpr::Function(f) = e else {
        return;
    };
    let FunctionArguments::List(list) = &mut f.args else {
        return;
    };
    let Some(condition) = f.filter.take() else {
        return;
    };
    let only_when = |result: SqlExpr| SqlExpr::Case {
        case_token: AttachedToken::empty(),
        end_token: AttachedToken::empty(),
        operand: None,
        conditions: vec![CaseWhen {
            condition: (*condition).clone(),
            result,
        }],
        else_result: None,
    };
    for arg in &mut list.args {
        match arg {
            FunctionArg::Unnamed(FunctionArgExpr::Wildcard) => {
                *arg = FunctionArg::Unnamed(FunctionArgExpr::Expr(only_when(SqlExpr::value(
                    SqlValue::Number("1".into(), false),
                ))));
            }
            FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) => *x = only_when(x.clone()),
            _ => {}
        }
    }
}
