//! The batch oracle: random programs within the supported surface and random fixtures, run
//! through the simulator; the emitted changelog replayed into a final table (insert and
//! update set the row of its key, delete removes it) must equal what a batch engine,
//! DataFusion's, computes with the same SELECT over every delivered event.
//!
//! The programs: a filter and projection (append); an aggregate over expressions with
//! `GROUP BY` one or two columns and an optional `HAVING` (upsert by the group); a filter over
//! such an upsert model; an upsert that keeps the last row of each key; and an append model
//! read by an aggregate through `ref()`. The events: nulls, zero, negative values, decimals
//! at the limits of their type, int32 and int64 extremes.
//!
//! Over an upsert source (docs/changing-tables.md), the programs are an aggregate with an
//! optional WHERE and HAVING, a filter keyed like the source, and an aggregate over that
//! filter; the input is a random history of keys' rows and tombstones, and the batch engine
//! computes over the table the history leaves.
//!
//! A run the simulator refuses compares as an error: a division by zero must stop the batch
//! engine too; an overflow, which Flink and DataFusion wrap silently and Streamform makes an
//! error (docs/sql.md), has no batch result to compare with, and is counted. A refusal of any other
//! kind fails the test. The simulator, as Flink, stops `AND` and `OR` at a left side that
//! decides; DataFusion computes both sides over whole columns, so when it overflows on a
//! side no event needed, the condition is judged event by event instead.
//!
//! `PROPTEST_CASES=N` runs more cases (CI runs the default below, from a fixed seed);
//! `ORACLE_SEED=N` (0 to 255) draws them from another seed;
//! `ORACLE_DEBUG=1` prints each case the simulator refused, with what the batch engine made
//! of it (DataFusion wraps an integer overflow silently, as Flink does).

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, BooleanArray, Decimal128Array, Int32Array, Int64Array, StringArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use streamform_db::Database;
use streamform_db::db::{check_report, fixture_result};
use streamform_db::load::project_from_files;
use streamform_ir::Value;
use streamform_sim::Op;

/// `1.5` as DataFusion reads a Flink literal with a fraction: exact, `DECIMAL(2,1)` (left
/// alone, DataFusion reads it as a float).
const DECIMAL_LITERAL: &str = "CAST(1.5 AS DECIMAL(2,1))";

/// The cases CI runs; `PROPTEST_CASES` overrides it.
const CASES: u32 = 256;

/// The source every program reads: `k` a small key, `a`, `b` and `d` numbers, `s` a string.
const SOURCES: &str = "sources:\n  ev:\n    connector: kafka\n    topic: ev\n    format: json\n    schema:\n      k: int32\n      a: int32\n      b: int64\n      d: decimal(10,2)\n      s: string\n  up:\n    connector: kafka\n    topic: up\n    format: json\n    changelog: upsert\n    key: [id]\n    schema:\n      id: int32\n      k: int32\n      a: int32\n      b: int64\n      d: decimal(10,2)\n      s: string\n";

/// One event of `ev`; `None` is null.
#[derive(Debug, Clone)]
struct Event {
    k: Option<i32>,
    a: Option<i32>,
    b: Option<i64>,
    /// Hundredths.
    d: Option<i64>,
    s: Option<&'static str>,
}

fn event() -> impl Strategy<Value = Event> {
    let int32 = prop_oneof![
        4 => (-5i32..=5).prop_map(Some),
        1 => Just(None),
        1 => prop_oneof![Just(i32::MAX), Just(i32::MIN), Just(i32::MAX - 1)].prop_map(Some),
        1 => any::<i32>().prop_map(Some),
    ];
    let int64 = prop_oneof![
        4 => (-5i64..=5).prop_map(Some),
        1 => Just(None),
        1 => prop_oneof![Just(i64::MAX), Just(i64::MIN)].prop_map(Some),
        1 => any::<i64>().prop_map(Some),
    ];
    let decimal = prop_oneof![
        4 => (-1000i64..=1000).prop_map(Some),
        1 => Just(None),
        1 => prop_oneof![Just(9_999_999_999i64), Just(-9_999_999_999i64)].prop_map(Some),
    ];
    let key = prop_oneof![6 => (0i32..3).prop_map(Some), 1 => Just(None)];
    let string = prop_oneof![Just(Some("x")), Just(Some("y")), Just(Some("")), Just(None)];
    (key, int32, int64, decimal, string).prop_map(|(k, a, b, d, s)| Event { k, a, b, d, s })
}

/// A number-valued expression over the source's columns.
fn number() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("a".to_string()),
        Just("b".to_string()),
        Just("d".to_string()),
        Just("k".to_string()),
        (-3i64..=3).prop_map(|v| v.to_string()),
        Just("1.5".to_string()),
    ];
    leaf.prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} + {y})")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} - {y})")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} * {y})")),
            inner
                .clone()
                .prop_map(|x| format!("CASE WHEN {x} > 0 THEN {x} ELSE 0 END")),
            (inner.clone(), inner).prop_map(|(x, y)| format!("COALESCE({x}, {y})")),
        ]
    })
}

/// An integer-valued expression, dividing too: `/` cuts toward zero and `%` takes the
/// sign of its left side in both engines (decimal division rounds differently in
/// DataFusion, so it is left out).
fn integer() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("a".to_string()),
        Just("b".to_string()),
        Just("k".to_string()),
        (-3i64..=3).prop_map(|v| v.to_string()),
    ];
    leaf.prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} + {y})")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} / {y})")),
            // DataFusion's simplifier rewrites `x % 1` to 0 when `x` cannot be null, which
            // drops a division by zero in a constant `x` that Flink and the simulator
            // compute and stop at; a column on the left keeps the batch engine computing it.
            (inner.clone(), inner)
                .prop_filter("a constant left of %", |(x, _)| x
                    .chars()
                    .any(|c| c.is_ascii_alphabetic()))
                .prop_map(|(x, y)| format!("({x} % {y})")),
        ]
    })
}

/// A condition over the source's columns.
fn condition() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (number(), comparison(), number()).prop_map(|(x, op, y)| format!("{x} {op} {y}")),
        prop_oneof![Just("a"), Just("b"), Just("d"), Just("s"), Just("k")]
            .prop_map(|c| format!("{c} IS NULL")),
        prop_oneof![Just("a"), Just("d"), Just("s")].prop_map(|c| format!("{c} IS NOT NULL")),
        prop_oneof![Just("'x'"), Just("''")].prop_map(|v| format!("s = {v}")),
    ];
    leaf.prop_recursive(2, 4, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} AND {y})")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} OR {y})")),
            inner.prop_map(|x| format!("(NOT {x})")),
        ]
    })
}

fn comparison() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("="),
        Just("<>"),
        Just("<"),
        Just("<="),
        Just(">"),
        Just(">=")
    ]
}

/// The aggregates of an aggregate model: `SUM` of an expression, `COUNT(*)`, and the
/// `COUNT`, `MIN` and `MAX` of a column.
fn aggregates() -> impl Strategy<Value = Vec<String>> {
    (
        number(),
        prop_oneof![Just("a"), Just("b"), Just("d"), Just("s")],
        prop_oneof![Just("MIN"), Just("MAX"), Just("COUNT")],
    )
        .prop_map(|(sum, col, agg)| {
            vec![
                format!("SUM({sum}) AS total"),
                "COUNT(*) AS n".to_string(),
                format!("{agg}({col}) AS m"),
            ]
        })
}

/// A program: its models (name, SQL, upsert key or `None` for append), the model under test
/// last; and the SELECT the batch engine runs for that model.
#[derive(Debug, Clone)]
struct Program {
    models: Vec<(String, String, Option<Vec<String>>)>,
    batch: String,
    /// The `WHERE` condition over `ev`, as the batch engine reads it, if there is one.
    condition: Option<String>,
}

/// A model's SQL as the batch engine runs it: `source('ev')` is the table `ev`, and a literal
/// with a fraction is exact, as in Flink.
fn in_batch(sql: &str) -> String {
    sql.replace("source('ev')", "ev")
        .replace("1.5", DECIMAL_LITERAL)
}

/// An append model computing `x` and `i` (and three string columns) for the events that
/// pass `c`.
fn filter(x: &str, i: &str, c: &str) -> Program {
    let sql = format!(
        "SELECT k, {x} AS x, {i} AS i, s, UPPER(s) AS u, s || '!' AS t FROM source('ev') WHERE {c}"
    );
    Program {
        batch: in_batch(&sql),
        models: vec![("m".into(), sql, None)],
        condition: Some(in_batch(c)),
    }
}

fn program() -> impl Strategy<Value = Program> {
    let filter = (number(), integer(), condition()).prop_map(|(x, i, c)| filter(&x, &i, &c));
    let keys = prop_oneof![Just(vec!["k"]), Just(vec!["k", "s"])];
    let aggregate = (
        keys.clone(),
        aggregates(),
        proptest::option::of(condition()),
        proptest::option::of(comparison()),
    )
        .prop_map(|(keys, aggs, filter, having)| {
            let cols = keys.join(", ");
            let mut sql = format!("SELECT {cols}, {} FROM source('ev')", aggs.join(", "));
            if let Some(c) = &filter {
                sql.push_str(&format!(" WHERE {c}"));
            }
            sql.push_str(&format!(" GROUP BY {cols}"));
            if let Some(op) = having {
                sql.push_str(&format!(" HAVING COUNT(*) {op} 2"));
            }
            Program {
                batch: in_batch(&sql),
                models: vec![(
                    "m".into(),
                    sql,
                    Some(keys.iter().map(|k| k.to_string()).collect()),
                )],
                condition: filter.as_deref().map(in_batch),
            }
        });
    let over_upsert = (aggregates(), comparison(), -2i64..=2).prop_map(|(aggs, op, v)| {
        let inner = format!("SELECT k, {} FROM source('ev') GROUP BY k", aggs.join(", "));
        let sql = format!("SELECT k, total, n FROM ref('agg') WHERE n {op} {v} OR total IS NULL");
        Program {
            batch: in_batch(&sql.replace("ref('agg')", &format!("({inner}) AS agg"))),
            models: vec![
                ("agg".into(), inner, Some(vec!["k".into()])),
                ("m".into(), sql, Some(vec!["k".into()])),
            ],
            condition: None,
        }
    });
    let last_row = number().prop_map(|x| {
        let sql = format!("SELECT k, {x} AS x, s FROM source('ev')");
        let batch = format!(
            "SELECT k, x, s FROM (SELECT k, {} AS x, s, ROW_NUMBER() OVER (PARTITION BY k ORDER BY seq DESC) AS rn FROM ev) AS last WHERE rn = 1",
            in_batch(&x)
        );
        Program {
            batch,
            models: vec![("m".into(), sql, Some(vec!["k".into()]))],
            condition: None,
        }
    });
    let chain = (condition(), aggregates()).prop_map(|(c, aggs)| {
        let first = format!("SELECT k, a, b, d, s FROM source('ev') WHERE {c}");
        let sql = format!("SELECT k, {} FROM ref('clean') GROUP BY k", aggs.join(", "));
        Program {
            batch: in_batch(&sql.replace("ref('clean')", &format!("({first}) AS clean"))),
            models: vec![
                ("clean".into(), first, None),
                ("m".into(), sql, Some(vec!["k".into()])),
            ],
            condition: Some(in_batch(&c)),
        }
    });
    prop_oneof![filter, aggregate, over_upsert, last_row, chain]
}

/// One record of the upsert source `up`: key `id`'s new row, or its tombstone (`None`).
#[derive(Debug, Clone)]
struct Upsert {
    id: i32,
    row: Option<Event>,
}

fn upsert() -> impl Strategy<Value = Upsert> {
    (
        0i32..4,
        prop_oneof![4 => event().prop_map(Some), 1 => Just(None)],
    )
        .prop_map(|(id, row)| Upsert { id, row })
}

/// The table `up` holds after `history`: each key's last row unless a tombstone came
/// after it, in key order.
fn final_table(history: &[Upsert]) -> (Vec<i32>, Vec<Event>) {
    let mut table = std::collections::BTreeMap::new();
    for u in history {
        match &u.row {
            Some(row) => table.insert(u.id, row.clone()),
            None => table.remove(&u.id),
        };
    }
    table.into_iter().unzip()
}

/// A program over the upsert source `up`: an aggregate (with a WHERE and a HAVING, or
/// not), a filter keyed like the source, or an aggregate over that filter through `ref()`.
fn program_over_upserts() -> impl Strategy<Value = Program> {
    let of_up = |sql: &str| in_batch(&sql.replace("source('up')", "up"));
    let keys = prop_oneof![Just(vec!["k"]), Just(vec!["k", "s"])];
    let aggregate = (
        keys,
        aggregates(),
        proptest::option::of(condition()),
        proptest::option::of(comparison()),
    )
        .prop_map(move |(keys, aggs, filter, having)| {
            let cols = keys.join(", ");
            let mut sql = format!("SELECT {cols}, {} FROM source('up')", aggs.join(", "));
            if let Some(c) = &filter {
                sql.push_str(&format!(" WHERE {c}"));
            }
            sql.push_str(&format!(" GROUP BY {cols}"));
            if let Some(op) = having {
                sql.push_str(&format!(" HAVING COUNT(*) {op} 2"));
            }
            Program {
                batch: of_up(&sql),
                models: vec![(
                    "m".into(),
                    sql,
                    Some(keys.iter().map(|k| k.to_string()).collect()),
                )],
                condition: None,
            }
        });
    let filter = (number(), condition()).prop_map(move |(x, c)| {
        let sql = format!("SELECT id, k, {x} AS x, s FROM source('up') WHERE {c}");
        Program {
            batch: of_up(&sql),
            models: vec![("m".into(), sql, Some(vec!["id".into()]))],
            condition: None,
        }
    });
    let chain = (condition(), aggregates()).prop_map(move |(c, aggs)| {
        let first = format!("SELECT id, k, a, b, d, s FROM source('up') WHERE {c}");
        let sql = format!("SELECT k, {} FROM ref('clean') GROUP BY k", aggs.join(", "));
        Program {
            batch: of_up(&sql.replace("ref('clean')", &format!("({first}) AS clean"))),
            models: vec![
                ("clean".into(), first, Some(vec!["id".into()])),
                ("m".into(), sql, Some(vec!["k".into()])),
            ],
            condition: None,
        }
    });
    prop_oneof![aggregate, filter, chain]
}

/// Runs `program` over the history of `up` through the simulator and, over the table the
/// history leaves, through the batch engine, and compares them.
fn compare_upserts(program: &Program, history: &[Upsert]) -> Result<Outcome, TestCaseError> {
    let given: Vec<String> = history
        .iter()
        .map(|u| match &u.row {
            Some(row) => fixture_row(Some(u.id), row),
            None => format!("delete: {{id: {}}}", u.id),
        })
        .collect();
    let (ids, rows) = final_table(history);
    compare_runs(
        program,
        simulated_given(program, &given),
        &|| run_table(&program.batch, "up", &rows, Some(&ids)),
        &|| None,
    )
}

/// A value as both sides are compared: numbers without trailing zeros, strings quoted.
fn rendered(v: &Value) -> String {
    v.render()
}

/// An event as a fixture's flow map of `ev`'s columns (`id` first when given).
fn fixture_row(id: Option<i32>, e: &Event) -> String {
    let json = |v: Option<String>| v.unwrap_or_else(|| "null".into());
    let id = id.map(|i| format!("id: {i}, ")).unwrap_or_default();
    format!(
        "{{{id}k: {}, a: {}, b: {}, d: {}, s: {}}}",
        json(e.k.map(|v| v.to_string())),
        json(e.a.map(|v| v.to_string())),
        json(e.b.map(|v| v.to_string())),
        json(e.d.map(|v| {
            let sign = if v < 0 { "-" } else { "" };
            let (whole, cents) = (v.unsigned_abs() / 100, v.unsigned_abs() % 100);
            format!("{sign}{whole}.{cents:02}")
        })),
        json(e.s.map(|v| format!("{v:?}"))),
    )
}

/// The simulator's final table for `program` over `events` of `ev`, or why it refused them.
fn simulated(program: &Program, events: &[Event]) -> Result<Vec<Vec<String>>, String> {
    let given: Vec<String> = events.iter().map(|e| fixture_row(None, e)).collect();
    simulated_given(program, &given)
}

/// The simulator's final table for `program` over the fixture's `given` items, or why it
/// refused them.
fn simulated_given(program: &Program, given: &[String]) -> Result<Vec<Vec<String>>, String> {
    let mut config = String::from("name: oracle\nversion: 1\nmodels:\n");
    let mut files: Vec<(String, String)> = Vec::new();
    for (name, sql, key) in &program.models {
        match key {
            Some(key) => config.push_str(&format!(
                "  {name}:\n    materialized: upsert\n    key: [{}]\n",
                key.join(", ")
            )),
            None => config.push_str(&format!("  {name}:\n    materialized: append\n")),
        }
        files.push((format!("models/{name}.sql"), sql.clone()));
    }
    let mut fixture = String::from(if given.is_empty() {
        "model: m\ngiven: []\n"
    } else {
        "model: m\ngiven:\n"
    });
    for item in given {
        fixture.push_str(&format!("  - {item}\n"));
    }
    fixture.push_str("expect: []\n");
    files.push(("streamform.yml".into(), config));
    files.push(("sources.yml".into(), SOURCES.into()));
    files.push(("tests/m.yml".into(), fixture));
    let db = Database::default();
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let project = project_from_files(&db, &borrowed);
    let errors: Vec<String> = check_report(&db, project)
        .iter()
        .filter(|d| d.severity == streamform_db::Severity::Error)
        .map(|d| d.message.clone())
        .collect();
    assert!(
        errors.is_empty(),
        "the generated program does not check: {errors:?}\n{program:#?}"
    );
    let file = project.fixtures(&db)[0];
    let run = fixture_result(&db, project, file)
        .as_ref()
        .expect("the fixture runs");
    if let Some(e) = &run.error {
        return Err(e.message.clone());
    }
    let key = program.models.last().and_then(|m| m.2.clone());
    let key_positions: Vec<usize> = key
        .iter()
        .flatten()
        .map(|k| {
            run.schema
                .iter()
                .position(|f| &f.name == k)
                .expect("key column")
        })
        .collect();
    let mut table: Vec<Vec<String>> = Vec::new();
    for row in &run.rows {
        let Some(record) = &row.actual else { continue };
        let values: Vec<String> = record.values.iter().map(rendered).collect();
        let of_key = |r: &Vec<String>| key_positions.iter().all(|&i| r[i] == values[i]);
        match (record.op, key.is_some()) {
            (Op::Insert, false) => table.push(values),
            (Op::Insert | Op::Update, true) => {
                table.retain(|r| !of_key(r));
                table.push(values);
            }
            (Op::Delete, true) => table.retain(|r| !of_key(r)),
            (op, false) => panic!("an append model emitted {op:?}"),
        }
    }
    table.sort();
    Ok(table)
}

/// DataFusion's result of `program.batch` over `events`.
fn batch(program: &Program, events: &[Event]) -> Result<Vec<Vec<String>>, String> {
    run(&program.batch, events)
}

/// DataFusion's result of `program.batch` with its condition judged one event at a time.
///
/// The simulator, as Flink, stops evaluating `AND` at a false left side and `OR` at a true
/// one; DataFusion evaluates both sides over a whole column unless every row of the left
/// decides, so it may overflow computing a side no row needed. Judged on its own, an
/// event's condition short-circuits as in the simulator; the query then runs with the
/// condition replaced by the events that passed. `None` if the program has no condition.
fn batch_row_by_row(
    program: &Program,
    events: &[Event],
) -> Option<Result<Vec<Vec<String>>, String>> {
    let condition = program.condition.as_ref()?;
    let mut passed = Vec::new();
    for (seq, event) in events.iter().enumerate() {
        let one = std::slice::from_ref(event);
        match run(&format!("SELECT COUNT(*) FROM ev WHERE {condition}"), one) {
            Ok(count) if count == [["1"]] => passed.push(seq.to_string()),
            Ok(_) => {}
            Err(why) => return Some(Err(why)),
        }
    }
    let rows = if passed.is_empty() {
        "FALSE".to_string()
    } else {
        format!("seq IN ({})", passed.join(", "))
    };
    let where_ = format!("WHERE {condition}");
    assert!(
        program.batch.contains(&where_),
        "{} has no {where_}",
        program.batch
    );
    Some(run(
        &program.batch.replacen(&where_, &format!("WHERE {rows}"), 1),
        events,
    ))
}

/// DataFusion's result of `sql` over `events` as the table `ev`, rows sorted.
fn run(sql: &str, events: &[Event]) -> Result<Vec<Vec<String>>, String> {
    run_table(sql, "ev", events, None)
}

/// DataFusion's result of `sql` over `events` as the table `name`, with an `id` column
/// when `ids` gives one per event, rows sorted.
fn run_table(
    sql: &str,
    name: &str,
    events: &[Event],
    ids: Option<&[i32]>,
) -> Result<Vec<Vec<String>>, String> {
    let mut fields = vec![Field::new("seq", DataType::Int64, false)];
    let mut columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::from_iter_values(
        0..events.len() as i64,
    ))];
    if let Some(ids) = ids {
        fields.push(Field::new("id", DataType::Int32, false));
        columns.push(Arc::new(Int32Array::from_iter_values(ids.iter().copied())));
    }
    fields.extend([
        Field::new("k", DataType::Int32, true),
        Field::new("a", DataType::Int32, true),
        Field::new("b", DataType::Int64, true),
        Field::new("d", DataType::Decimal128(10, 2), true),
        Field::new("s", DataType::Utf8, true),
    ]);
    let schema = Arc::new(Schema::new(fields));
    columns.extend::<[ArrayRef; 5]>([
        Arc::new(events.iter().map(|e| e.k).collect::<Int32Array>()),
        Arc::new(events.iter().map(|e| e.a).collect::<Int32Array>()),
        Arc::new(events.iter().map(|e| e.b).collect::<Int64Array>()),
        Arc::new(
            events
                .iter()
                .map(|e| e.d.map(i128::from))
                .collect::<Decimal128Array>()
                .with_precision_and_scale(10, 2)
                .unwrap(),
        ),
        Arc::new(events.iter().map(|e| e.s).collect::<StringArray>()),
    ]);
    let data = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1));
    ctx.register_table(
        name,
        Arc::new(MemTable::try_new(schema, vec![vec![data]]).unwrap()),
    )
    .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let batches = runtime
        .block_on(async {
            let frame = ctx.sql(sql).await?;
            frame.collect().await
        })
        .map_err(|e| e.to_string())?;
    let mut table = Vec::new();
    for b in &batches {
        for row in 0..b.num_rows() {
            table.push(b.columns().iter().map(|c| cell(c, row)).collect());
        }
    }
    table.sort();
    Ok(table)
}

/// One cell of a batch result, rendered as [`Value::render`] renders the simulator's.
fn cell(column: &ArrayRef, row: usize) -> String {
    if column.is_null(row) {
        return "null".into();
    }
    let any = column.as_any();
    if let Some(c) = any.downcast_ref::<Int32Array>() {
        c.value(row).to_string()
    } else if let Some(c) = any.downcast_ref::<Int64Array>() {
        c.value(row).to_string()
    } else if let Some(c) = any.downcast_ref::<Decimal128Array>() {
        let d = streamform_ir::Decimal::new(c.value(row), c.scale() as u8);
        Value::Decimal(d).render()
    } else if let Some(c) = any.downcast_ref::<StringArray>() {
        format!("{:?}", c.value(row))
    } else if let Some(c) = any.downcast_ref::<BooleanArray>() {
        c.value(row).to_string()
    } else {
        panic!("a batch column of type {}", column.data_type())
    }
}

/// How one case compared, when it did not fail.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// Both engines computed the same table.
    Same,
    /// The same table, the batch engine judging the condition event by event (see
    /// [`batch_row_by_row`]).
    SameRowByRow,
    /// The simulator refused with an arithmetic error the batch engine agrees with or, for
    /// an overflow, cannot see.
    Refused,
}

/// Runs `program` over `events` through both engines and compares them.
fn compare(program: &Program, events: &[Event]) -> Result<Outcome, TestCaseError> {
    compare_runs(
        program,
        simulated(program, events),
        &|| batch(program, events),
        &|| batch_row_by_row(program, events),
    )
}

type Table = Result<Vec<Vec<String>>, String>;

/// Compares the simulator's final table (or refusal) with the batch engine's, which
/// `batch` computes, and `row_by_row` with the condition judged event by event.
fn compare_runs(
    program: &Program,
    simulated: Table,
    batch: &dyn Fn() -> Table,
    row_by_row: &dyn Fn() -> Option<Table>,
) -> Result<Outcome, TestCaseError> {
    let models = || {
        program
            .models
            .iter()
            .map(|m| format!("{}: {}", m.0, m.1))
            .collect::<Vec<_>>()
            .join("\n")
    };
    match simulated {
        Ok(table) => {
            let mut expected = batch();
            let mut outcome = Outcome::Same;
            if matches!(&expected, Err(why) if why.contains("overflow"))
                && let Some(judged) = row_by_row()
            {
                expected = judged;
                outcome = Outcome::SameRowByRow;
            }
            prop_assert_eq!(
                Ok(table),
                expected,
                "\n{}\nbatch: {}",
                models(),
                program.batch
            );
            Ok(outcome)
        }
        Err(why) => {
            prop_assert!(
                why.contains("overflow")
                    || why.contains("out of range")
                    || why.contains("division by zero"),
                "the simulator refused with something other than an arithmetic error: {why}"
            );
            // A division by zero stops both engines (the batch engine, computing whole
            // columns without short-circuiting AND and OR, may stop first at an overflow the
            // simulator never computed); an overflow only the simulator (DataFusion wraps
            // integers, as Flink does).
            if why.contains("division by zero") {
                let batch = batch();
                prop_assert!(
                    batch.is_err(),
                    "the simulator refused ({why}), the batch engine gave {batch:?}\n{}",
                    program.batch
                );
            }
            if std::env::var("ORACLE_DEBUG").is_ok() {
                eprintln!(
                    "REFUSED {why}\n  batch: {:?}\n  {}",
                    batch().map(|t| t.len()),
                    program.batch
                );
            }
            Ok(Outcome::Refused)
        }
    }
}

/// The cases to run and a runner drawing them from the seed: `PROPTEST_CASES` and
/// `ORACLE_SEED` override the defaults.
fn runner() -> (u32, TestRunner) {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(CASES);
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let seed = [std::env::var("ORACLE_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(7u8); 32];
    let runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
    (cases, runner)
}

#[test]
fn the_simulators_final_table_is_what_batch_sql_computes() {
    let (cases, mut runner) = runner();
    let refused = std::cell::Cell::new(0usize);
    let row_by_row = std::cell::Cell::new(0usize);
    let result = runner.run(
        &(program(), proptest::collection::vec(event(), 0..12)),
        |(program, events)| {
            match compare(&program, &events)? {
                Outcome::Same => {}
                Outcome::SameRowByRow => row_by_row.set(row_by_row.get() + 1),
                Outcome::Refused => refused.set(refused.get() + 1),
            }
            Ok(())
        },
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    eprintln!(
        "{cases} cases, {} refused by the simulator (an overflow or a division by zero), {} \
         compared with the condition judged event by event",
        refused.get(),
        row_by_row.get()
    );
}

/// The same over an upsert source: random programs over random histories of keys' rows and
/// tombstones; the batch engine computes over the table the history leaves, which every
/// update and delete the simulator retracted must reach (docs/changing-tables.md).
#[test]
fn the_simulators_final_table_over_upserts_is_what_batch_sql_computes() {
    let (cases, mut runner) = runner();
    let refused = std::cell::Cell::new(0usize);
    let result = runner.run(
        &(
            program_over_upserts(),
            proptest::collection::vec(upsert(), 0..16),
        ),
        |(program, history)| {
            if compare_upserts(&program, &history)? == Outcome::Refused {
                refused.set(refused.get() + 1);
            }
            Ok(())
        },
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    eprintln!(
        "{cases} cases over upserts, {} refused by the simulator (an overflow or a division by zero)",
        refused.get()
    );
}

fn known(k: i32, a: i32, b: i64, d: i64, s: Option<&'static str>) -> Event {
    Event {
        k: Some(k),
        a: Some(a),
        b: Some(b),
        d: Some(d),
        s,
    }
}

/// Found with `ORACLE_SEED=1`: DataFusion's simplifier makes `x % 1` zero when `x` cannot
/// be null, dropping the division by zero in `0 / 0` that the simulator computes and stops
/// at, as Flink does. The generator keeps a column left of `%` since; here the simulator
/// refuses and the batch engine, given a column, agrees.
#[test]
fn a_division_by_zero_under_modulo_one_stops_both_engines() {
    let program = filter("a", "((a / (a - a)) % 1)", "a = a");
    let events = [known(0, 2_147_483_647, 0, 0, Some("x"))];
    assert_eq!(
        simulated(&program, &events),
        Err("model `m`, column `i`, event 1: division by zero".to_string())
    );
    assert_eq!(compare(&program, &events).unwrap(), Outcome::Refused);
    // The case as found: the batch engine simplifies the division away.
    let constant = filter("a", "((0 / 0) % 1)", "a = a");
    assert!(simulated(&constant, &events).is_err());
    assert!(batch(&constant, &events).is_ok());
}

/// Found with `ORACLE_SEED=1`: the false left side of `AND` decides, so the simulator (as
/// Flink) never multiplies the int64 extreme by itself; DataFusion computes the right side
/// for the whole column and overflows its decimal, so the condition is judged event by
/// event.
#[test]
fn an_overflow_on_the_side_and_never_computes_is_no_error() {
    let program = filter("a", "a", "(0 >= d AND ((1.5 * b) * b) = a)");
    let events = [known(0, 0, i64::MAX, 1, None), known(0, 0, 0, 0, Some("x"))];
    assert!(batch(&program, &events).unwrap_err().contains("overflow"));
    assert_eq!(
        simulated(&program, &events),
        Ok(vec![
            vec!["0", "0", "0", "\"x\"", "\"X\"", "\"x!\""]
                .into_iter()
                .map(String::from)
                .collect()
        ])
    );
    assert_eq!(compare(&program, &events).unwrap(), Outcome::SameRowByRow);
}
