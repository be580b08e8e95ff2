//! Salsa, for real (docs/architecture.md): an edit recomputes only what it touched, proven by counting
//! query executions.

use salsa::Setter;
use streamform_db::db::{Database, ExecutionLog, check_report, fixture_result, model_files};
use streamform_db::load::project_from_files;
use streamform_db::{FileContents, Project};

const CONFIG: &str = "name: order-pipeline\nversion: 1\nmodels:\n  customer_metrics:\n    materialized: upsert\n    key: [customer_id]\n  big_customers:\n    materialized: upsert\n    key: [customer_id]\n";
const SOURCES: &str = "sources:\n  orders:\n    connector: kafka\n    topic: orders\n    format: json\n    schema:\n      customer_id: int64\n      amount: decimal\n";
const CLEAN: &str =
    "SELECT customer_id, amount FROM source('orders') WHERE customer_id IS NOT NULL";
const METRICS: &str =
    "SELECT customer_id, SUM(amount) AS total_spend FROM ref('clean_orders') GROUP BY customer_id";
const BIG: &str =
    "SELECT customer_id, total_spend FROM ref('customer_metrics') WHERE total_spend > 100";
const SIDE: &str = "SELECT customer_id FROM source('orders') WHERE amount > 0";
const FIX_CLEAN: &str = "model: clean_orders\ngiven:\n  - {customer_id: 1, amount: 5}\nexpect:\n  - {op: insert, customer_id: 1, amount: 5}\n";
const FIX_METRICS: &str = "model: customer_metrics\ngiven:\n  - {customer_id: 1, amount: 5}\nexpect:\n  - {op: insert, customer_id: 1, total_spend: 5}\n";
const FIX_BIG: &str = "model: big_customers\ngiven:\n  - {customer_id: 1, amount: 500}\nexpect:\n  - {op: insert, customer_id: 1, total_spend: 500}\n";
const FIX_SIDE: &str = "model: side\ngiven:\n  - {customer_id: 1, amount: 5}\nexpect:\n  - {op: insert, customer_id: 1}\n";

fn setup() -> (Database, ExecutionLog, Project) {
    let (db, log) = Database::with_execution_log();
    let project = project_from_files(
        &db,
        &[
            ("streamform.yml", CONFIG),
            ("sources.yml", SOURCES),
            ("models/clean_orders.sql", CLEAN),
            ("models/customer_metrics.sql", METRICS),
            ("models/big_customers.sql", BIG),
            ("models/side.sql", SIDE),
            ("tests/big_customers.yml", FIX_BIG),
            ("tests/clean_orders.yml", FIX_CLEAN),
            ("tests/customer_metrics.yml", FIX_METRICS),
            ("tests/side.yml", FIX_SIDE),
        ],
    );
    (db, log, project)
}

/// Asks every query a `test` run asks, and returns which fixtures passed.
fn run_all(db: &Database, project: Project) -> Vec<(String, bool)> {
    assert!(
        check_report(db, project).is_empty(),
        "{:?}",
        check_report(db, project)
    );
    project
        .fixtures(db)
        .iter()
        .map(|f| {
            let run = fixture_result(db, project, *f)
                .as_ref()
                .expect("fixture runs");
            (run.model.clone(), run.passed)
        })
        .collect()
}

/// Executions since the last call, as `query(argument)` names, and clears the log.
fn executed(log: &ExecutionLog) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

fn count(log: &[String], query: &str) -> usize {
    log.iter()
        .filter(|e| e.starts_with(&format!("{query}(")))
        .count()
}

fn set_model(db: &mut Database, project: Project, name: &str, text: &str) {
    let file = model_files(db, project)[name];
    file.set_contents(db)
        .to(FileContents::Text(text.to_string()));
}

#[test]
fn cold_run_executes_everything_once_and_warm_run_nothing() {
    let (db, log, project) = setup();
    let passed = run_all(&db, project);
    assert!(passed.iter().all(|(_, p)| *p), "{passed:?}");
    let cold = executed(&log);
    assert_eq!(count(&cold, "fixture_result"), 4, "{cold:?}");
    assert_eq!(count(&cold, "parse_model"), 4);
    run_all(&db, project);
    assert_eq!(executed(&log), Vec::<String>::new());
}

#[test]
fn editing_a_leaf_model_reruns_only_its_fixture() {
    let (mut db, log, project) = setup();
    run_all(&db, project);
    executed(&log);
    set_model(
        &mut db,
        project,
        "big_customers",
        "SELECT customer_id, total_spend FROM ref('customer_metrics') WHERE total_spend > 50",
    );
    run_all(&db, project);
    let log = executed(&log);
    assert_eq!(count(&log, "parse_model"), 1, "{log:?}");
    assert_eq!(count(&log, "lower_model"), 1, "{log:?}");
    assert_eq!(count(&log, "fixture_result"), 1, "{log:?}");
}

#[test]
fn editing_an_upstream_model_reruns_its_dependents_fixtures_only() {
    let (mut db, log, project) = setup();
    run_all(&db, project);
    executed(&log);
    // Same contract (columns and changelog), different predicate.
    set_model(
        &mut db,
        project,
        "clean_orders",
        "SELECT customer_id, amount FROM source('orders') WHERE customer_id IS NOT NULL AND amount > 0",
    );
    run_all(&db, project);
    let log = executed(&log);
    // clean_orders, customer_metrics and big_customers read it; `side` does not.
    assert_eq!(count(&log, "fixture_result"), 3, "{log:?}");
    assert!(!log.iter().any(|e| e.contains("side")), "{log:?}");
    // The contract did not change, so the readers are not re-lowered.
    assert_eq!(count(&log, "lower_model"), 1, "{log:?}");
}

#[test]
fn whitespace_edit_recomputes_no_fixture() {
    let (mut db, log, project) = setup();
    run_all(&db, project);
    executed(&log);
    set_model(
        &mut db,
        project,
        "customer_metrics",
        &format!("-- totals per customer\n{METRICS}\n\n"),
    );
    run_all(&db, project);
    let log = executed(&log);
    assert_eq!(count(&log, "parse_model"), 1, "{log:?}");
    assert_eq!(count(&log, "fixture_result"), 0, "{log:?}");
}

#[test]
fn editing_one_fixture_reruns_that_fixture_only() {
    let (mut db, log, project) = setup();
    run_all(&db, project);
    executed(&log);
    let file = project.fixtures(&db)[1];
    file.set_contents(&mut db).to(FileContents::Text(
        FIX_CLEAN.replace("amount: 5}", "amount: 7}"),
    ));
    run_all(&db, project);
    let first = executed(&log);
    assert_eq!(count(&first, "fixture_result"), 1, "{first:?}");
    assert_eq!(count(&first, "lower_model"), 0, "{first:?}");
    // Writing the same values differently (5 as 5.0) types to the same fixture: nothing runs.
    file.set_contents(&mut db).to(FileContents::Text(
        FIX_CLEAN.replace("amount: 5}", "amount: 7.0}"),
    ));
    run_all(&db, project);
    let second = executed(&log);
    assert_eq!(count(&second, "fixture_def"), 1, "{second:?}");
    assert_eq!(count(&second, "fixture_result"), 0, "{second:?}");
}
