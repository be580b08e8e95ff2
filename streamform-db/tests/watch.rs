//! The watch session driven by injected change events: each batch of changed paths sets
//! only the inputs whose text changed, and a run afterwards recomputes only what those
//! inputs reach, counted through salsa's execution log.

use std::path::Path;

use streamform_db::db::{Database, ExecutionLog};
use streamform_db::diagnostic::Code;
use streamform_db::load::MemoryFs;
use streamform_db::watch::{Session, Snapshot, compare};

const CONFIG: &str = "name: shop\nversion: 1\nmodels:\n  customer_metrics:\n    materialized: upsert\n    key: [customer_id]\n";
const SOURCES: &str = "sources:\n  orders:\n    connector: kafka\n    topic: orders\n    format: json\n    schema:\n      customer_id: int64\n      amount: decimal\n  refunds:\n    connector: kafka\n    topic: refunds\n    format: json\n    schema:\n      customer_id: int64\n      amount: decimal\n";
const CLEAN: &str =
    "SELECT customer_id, amount FROM source('orders') WHERE customer_id IS NOT NULL";
const METRICS: &str =
    "SELECT customer_id, SUM(amount) AS total_spend FROM ref('clean_orders') GROUP BY customer_id";
const REFUNDS: &str = "SELECT customer_id FROM source('refunds') WHERE amount > 0";
const FIX_CLEAN: &str = "model: clean_orders\ngiven:\n  - {customer_id: 1, amount: 5}\nexpect:\n  - {op: insert, customer_id: 1, amount: 5}\n";
const FIX_METRICS: &str = "model: customer_metrics\ngiven:\n  - {customer_id: 1, amount: 5}\nexpect:\n  - {op: insert, customer_id: 1, total_spend: 5}\n";
const FIX_REFUNDS: &str = "model: big_refunds\ngiven:\n  - {customer_id: 1, amount: 5}\nexpect:\n  - {op: insert, customer_id: 1}\n";

const ROOT: &str = "/shop";

struct Fixture {
    fs: MemoryFs,
    session: Session,
    log: ExecutionLog,
    last: Snapshot,
}

impl Fixture {
    fn new() -> Fixture {
        let root = Path::new(ROOT);
        let fs = MemoryFs::new(
            root,
            &[
                ("streamform.yml", CONFIG),
                ("sources.yml", SOURCES),
                ("models/clean_orders.sql", CLEAN),
                ("models/customer_metrics.sql", METRICS),
                ("models/big_refunds.sql", REFUNDS),
                ("tests/clean_orders.yml", FIX_CLEAN),
                ("tests/customer_metrics.yml", FIX_METRICS),
                ("tests/big_refunds.yml", FIX_REFUNDS),
            ],
        );
        let (db, log) = Database::with_execution_log();
        let session = Session::load(db, &fs, root, None).unwrap();
        let last = Session::run(&session.db, session.project(), None);
        assert!(last.diagnostics.is_empty(), "{:?}", last.diagnostics);
        assert_eq!(last.runs.len(), 3);
        assert!(last.runs.iter().all(|r| r.passed));
        std::mem::take(&mut *log.lock().unwrap());
        Fixture {
            fs,
            session,
            log,
            last,
        }
    }

    fn write(&self, path: &str, text: &str) {
        self.fs.write(&Path::new(ROOT).join(path), text);
    }

    fn remove(&self, path: &str) {
        self.fs.remove(&Path::new(ROOT).join(path));
    }

    /// Applies a batch of events and runs again: the files that changed, the new snapshot,
    /// and the queries that executed.
    fn batch(&mut self, events: &[&str]) -> (Vec<String>, Snapshot, Vec<String>) {
        let events: Vec<String> = events.iter().map(|e| e.to_string()).collect();
        let touched = self.session.apply(&self.fs, &events);
        let snapshot = Session::run(&self.session.db, self.session.project(), None);
        let executed = std::mem::take(&mut *self.log.lock().unwrap());
        (touched, snapshot, executed)
    }
}

fn count(log: &[String], query: &str) -> usize {
    log.iter()
        .filter(|e| e.starts_with(&format!("{query}(")))
        .count()
}

#[test]
fn editing_a_leaf_model_reruns_only_its_fixture() {
    let mut f = Fixture::new();
    f.write(
        "models/customer_metrics.sql",
        "SELECT customer_id, SUM(amount) AS total_spend FROM ref('clean_orders') WHERE amount > 1 GROUP BY customer_id",
    );
    let (touched, after, log) = f.batch(&["models/customer_metrics.sql"]);
    assert_eq!(touched, ["models/customer_metrics.sql"]);
    assert_eq!(count(&log, "lower_model"), 1, "{log:?}");
    assert_eq!(count(&log, "fixture_result"), 1, "{log:?}");
    let changes = compare(&f.session.db, &f.last, &after, &touched);
    assert!(changes.new_failures.is_empty() && changes.fixed.is_empty());
}

#[test]
fn a_change_that_breaks_a_fixture_shows_as_a_new_failure_and_then_as_fixed() {
    let mut f = Fixture::new();
    f.write(
        "tests/clean_orders.yml",
        &FIX_CLEAN.replace(
            "insert, customer_id: 1, amount: 5",
            "insert, customer_id: 1, amount: 6",
        ),
    );
    let (touched, broken, log) = f.batch(&["tests/clean_orders.yml"]);
    assert_eq!(count(&log, "fixture_result"), 1, "{log:?}");
    assert_eq!(count(&log, "lower_model"), 0, "{log:?}");
    let changes = compare(&f.session.db, &f.last, &broken, &touched);
    assert_eq!(
        changes
            .new_failures
            .iter()
            .map(|r| r.path.as_str())
            .collect::<Vec<_>>(),
        ["tests/clean_orders.yml"]
    );
    f.write("tests/clean_orders.yml", FIX_CLEAN);
    let (touched, fixed, _) = f.batch(&["tests/clean_orders.yml"]);
    let changes = compare(&f.session.db, &broken, &fixed, &touched);
    assert_eq!(changes.fixed.len(), 1);
    assert!(changes.new_failures.is_empty());
}

#[test]
fn a_broken_intermediate_save_is_a_diagnostic_and_the_next_save_clears_it() {
    let mut f = Fixture::new();
    f.write(
        "models/big_refunds.sql",
        "SELECT customer_id FROM source('refunds') WHERE",
    );
    let (touched, broken, _) = f.batch(&["models/big_refunds.sql"]);
    let changes = compare(&f.session.db, &f.last, &broken, &touched);
    assert_eq!(changes.diagnostics.len(), 1, "{:?}", changes.diagnostics);
    assert_eq!(
        changes.diagnostics[0].path(&f.session.db),
        Some("models/big_refunds.sql")
    );
    assert_eq!(changes.diagnostics[0].code, Code::SqlSyntax);
    assert_eq!(
        changes.gone,
        ["tests/big_refunds.yml"],
        "its fixture cannot run"
    );
    assert_eq!(broken.runs.len(), 2, "the other fixtures still run");
    f.write("models/big_refunds.sql", REFUNDS);
    let (touched, healed, _) = f.batch(&["models/big_refunds.sql"]);
    assert!(healed.diagnostics.is_empty());
    assert_eq!(healed.runs.len(), 3);
    let changes = compare(&f.session.db, &broken, &healed, &touched);
    assert!(changes.diagnostics.is_empty());
    assert_eq!(
        changes.resolved.iter().map(|d| d.code).collect::<Vec<_>>(),
        [Code::SqlSyntax],
        "the error that went away is named"
    );
    assert!(
        compare(&f.session.db, &f.last, &broken, &touched)
            .resolved
            .is_empty()
    );
    assert_eq!(
        changes
            .passing
            .iter()
            .map(|r| r.path.as_str())
            .collect::<Vec<_>>(),
        ["tests/big_refunds.yml"],
        "the fixture runs again"
    );
}

#[test]
fn a_created_model_and_fixture_run_and_nothing_else_does() {
    let mut f = Fixture::new();
    f.write(
        "models/small_refunds.sql",
        "SELECT customer_id FROM source('refunds') WHERE amount < 10",
    );
    f.write(
        "tests/small_refunds.yml",
        &FIX_REFUNDS.replace("big_refunds", "small_refunds"),
    );
    let (touched, after, log) = f.batch(&["models/small_refunds.sql", "tests/small_refunds.yml"]);
    assert_eq!(
        touched,
        ["models/small_refunds.sql", "tests/small_refunds.yml"]
    );
    assert_eq!(after.runs.len(), 4);
    assert_eq!(count(&log, "fixture_result"), 1, "{log:?}");
    assert!(after.runs.iter().all(|r| r.passed));
}

#[test]
fn a_deleted_fixture_is_gone_and_a_renamed_one_runs_under_its_new_name() {
    let mut f = Fixture::new();
    f.remove("tests/big_refunds.yml");
    f.write("tests/refunds_over_zero.yml", FIX_REFUNDS);
    let (touched, after, log) = f.batch(&["tests/big_refunds.yml", "tests/refunds_over_zero.yml"]);
    assert_eq!(
        touched,
        ["tests/big_refunds.yml", "tests/refunds_over_zero.yml"]
    );
    let paths: Vec<&str> = after.runs.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "tests/clean_orders.yml",
            "tests/customer_metrics.yml",
            "tests/refunds_over_zero.yml"
        ]
    );
    assert_eq!(count(&log, "fixture_result"), 1, "{log:?}");
    let changes = compare(&f.session.db, &f.last, &after, &touched);
    assert_eq!(changes.gone, ["tests/big_refunds.yml"]);
}

#[test]
fn an_editors_temporary_file_and_an_unchanged_save_run_nothing() {
    let mut f = Fixture::new();
    // The editor writes a swap file, then renames it over the model with the same text.
    f.write("models/.big_refunds.sql.swp", "garbage");
    f.write("models/big_refunds.sql", REFUNDS);
    let (touched, _, log) = f.batch(&["models/.big_refunds.sql.swp", "models/big_refunds.sql"]);
    assert_eq!(touched, Vec::<String>::new());
    assert_eq!(log, Vec::<String>::new());
}

#[test]
fn a_burst_of_saves_in_one_batch_runs_once_with_the_last_text() {
    let mut f = Fixture::new();
    f.write(
        "models/big_refunds.sql",
        "SELECT customer_id FROM source('refunds') WHERE amount > 1",
    );
    f.write(
        "models/big_refunds.sql",
        "SELECT customer_id FROM source('refunds') WHERE amount > 2",
    );
    let (touched, _, log) = f.batch(&["models/big_refunds.sql", "models/big_refunds.sql"]);
    assert_eq!(touched, ["models/big_refunds.sql"]);
    assert_eq!(count(&log, "lower_model"), 1, "{log:?}");
    assert_eq!(count(&log, "fixture_result"), 1, "{log:?}");
}

#[test]
fn files_outside_the_project_layout_are_ignored() {
    let mut f = Fixture::new();
    for path in [
        "build/plan.json",
        ".streamform/applied/local.json",
        "target/debug/x",
        "models/nested/a.sql",
        "notes.md",
    ] {
        f.write(path, "anything");
    }
    let (touched, _, log) = f.batch(&[
        "build/plan.json",
        ".streamform/applied/local.json",
        "target/debug/x",
        "models/nested/a.sql",
        "notes.md",
    ]);
    assert_eq!(touched, Vec::<String>::new());
    assert_eq!(log, Vec::<String>::new());
}

#[test]
fn editing_one_source_relowers_only_the_models_that_read_it() {
    let mut f = Fixture::new();
    f.write(
        "sources.yml",
        &SOURCES.replace("    topic: refunds\n", "    topic: refunds-v2\n"),
    );
    let (touched, after, log) = f.batch(&["sources.yml"]);
    assert_eq!(touched, ["sources.yml"]);
    assert!(after.runs.iter().all(|r| r.passed));
    // Only big_refunds reads `refunds`: one model re-lowered, one fixture re-run.
    assert_eq!(count(&log, "lower_model"), 1, "{log:?}");
    assert_eq!(count(&log, "fixture_result"), 1, "{log:?}");
}

#[test]
fn a_streamform_yml_edit_reruns_what_it_changes() {
    let mut f = Fixture::new();
    f.write(
        "streamform.yml",
        &CONFIG.replace("    key: [customer_id]\n", "    key: [customer_id]\n    sink:\n      connector: kafka\n      topic: metrics\n      format: json\n"),
    );
    let (touched, after, _) = f.batch(&["streamform.yml"]);
    assert_eq!(touched, ["streamform.yml"]);
    assert!(after.diagnostics.is_empty(), "{:?}", after.diagnostics);
    assert_eq!(after.runs.len(), 3);
}

#[test]
fn a_comment_or_another_models_entry_in_streamform_yml_relowers_nothing() {
    let mut f = Fixture::new();
    f.write("streamform.yml", &format!("# the shop's streams\n{CONFIG}"));
    let (touched, after, log) = f.batch(&["streamform.yml"]);
    assert_eq!(touched, ["streamform.yml"]);
    assert!(after.runs.iter().all(|r| r.passed));
    assert_eq!(count(&log, "lower_model"), 0, "{log:?}");
    assert_eq!(count(&log, "fixture_result"), 0, "{log:?}");
    // Declaring a sink for customer_metrics touches that model's settings alone.
    f.write(
        "streamform.yml",
        &format!(
            "# the shop's streams\n{CONFIG}    sink:\n      connector: kafka\n      topic: metrics\n      format: json\n"
        ),
    );
    let (_, after, log) = f.batch(&["streamform.yml"]);
    assert!(after.diagnostics.is_empty(), "{:?}", after.diagnostics);
    assert_eq!(count(&log, "lower_model"), 1, "{log:?}");
}

#[test]
fn a_folder_moved_as_a_whole_is_rediscovered() {
    let mut f = Fixture::new();
    for name in ["big_refunds", "clean_orders", "customer_metrics"] {
        f.remove(&format!("tests/{name}.yml"));
    }
    f.write("elsewhere/clean_orders.yml", FIX_CLEAN);
    let (touched, after, _) = f.batch(&["tests", "elsewhere"]);
    assert_eq!(
        touched,
        [
            "tests/big_refunds.yml",
            "tests/clean_orders.yml",
            "tests/customer_metrics.yml"
        ]
    );
    assert!(after.runs.is_empty(), "{:?}", after.runs);
    let changes = compare(&f.session.db, &f.last, &after, &touched);
    assert_eq!(changes.gone.len(), 3);
}

#[test]
fn a_file_that_cannot_be_read_says_what_to_do_about_it() {
    use streamform_db::db::check_report;
    use streamform_db::load::load_project;
    let dir = std::env::temp_dir().join(format!("sf-unreadable-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("models")).unwrap();
    std::fs::write(dir.join("streamform.yml"), "name: x\nversion: 1\n").unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(dir.join("models/a.sql"))
        .status()
        .unwrap();
    assert!(fifo.success());
    std::os::unix::fs::symlink(dir.join("nowhere.sql"), dir.join("models/b.sql")).unwrap();
    let db = Database::default();
    let project = load_project(&db, &dir).unwrap();
    let helps: Vec<(String, Option<String>)> = check_report(&db, project)
        .iter()
        .map(|d| (d.path(&db).unwrap_or_default().to_string(), d.help.clone()))
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        helps.contains(&(
            "models/a.sql".into(),
            Some("a project file must be a regular file; replace it with one, or remove it".into())
        )),
        "{helps:?}"
    );
    assert!(
        helps.contains(&(
            "models/b.sql".into(),
            Some("the symbolic link points at nothing; point it at the file, or remove it".into())
        )),
        "{helps:?}"
    );
}
