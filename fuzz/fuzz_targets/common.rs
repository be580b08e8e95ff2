#![allow(dead_code)]
// Shared by the fuzz targets: the customer-metrics project, whose files a target replaces,
// and what `check` and `test` ask of the database.

use streamform_db::Database;
use streamform_db::db::{check_report, fixture_result};
use streamform_db::load::project_from_files;

pub const CONFIG: &str = "name: fuzz\nversion: 1\nmodels:\n  customer_metrics:\n    materialized: upsert\n    key: [customer_id]\n";
pub const SOURCES: &str = "sources:\n  orders:\n    connector: kafka\n    topic: orders\n    format: json\n    schema:\n      customer_id: int64\n      amount: decimal\n      note: string\n";
pub const MODEL: &str = "SELECT customer_id, SUM(amount) AS total_spend FROM source('orders') GROUP BY customer_id\n";
pub const FIXTURE: &str = "model: customer_metrics\ngiven:\n  - {customer_id: 42, amount: 10, note: a}\n  - {customer_id: 42, amount: 18, note: b}\nexpect:\n  - {op: insert, customer_id: 42, total_spend: 10}\n  - {op: update, customer_id: 42, total_spend: 28}\n";

/// The customer-metrics project with the file at `path` replaced by `text`, checked and
/// tested; input that is not UTF-8 is no project file and is skipped.
pub fn with_file(path: &str, data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut files = [
        ("streamform.yml", CONFIG),
        ("sources.yml", SOURCES),
        ("models/customer_metrics.sql", MODEL),
        ("tests/customer_metrics.yml", FIXTURE),
    ];
    for file in files.iter_mut().filter(|(p, _)| *p == path) {
        file.1 = text;
    }
    check_and_test(&files);
}

/// Checks the project of `files` and runs every fixture, as `streamform test` does.
pub fn check_and_test(files: &[(&str, &str)]) {
    let db = Database::default();
    let project = project_from_files(&db, files);
    let _ = check_report(&db, project);
    for file in project.fixtures(&db).iter() {
        let _ = fixture_result(&db, project, *file);
    }
}
