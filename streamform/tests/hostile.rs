//! Hostile input through the binary: values, names and paths that nobody writes by hand
//! must give a clear answer and the documented exit code, never a panic or lost output.

mod common;

use std::path::Path;

use common::{copy_dir, repo_root, streamform};

fn customer_metrics() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo_root().join("examples/customer-metrics"), dir.path());
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A project of one append model over a string column, with one fixture expecting `name`.
fn names_project(dir: &Path, expected_name: &str) {
    std::fs::create_dir_all(dir.join("models")).unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(
        dir.join("streamform.yml"),
        "name: names\nversion: 1\nmodels:\n  names:\n    materialized: append\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("sources.yml"),
        "sources:\n  ev:\n    connector: kafka\n    topic: ev\n    format: json\n    schema:\n      id: int64\n      name: string\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("models/names.sql"),
        "SELECT id, name FROM source('ev')\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("tests/long.yml"),
        format!(
            "model: names\ngiven:\n  - {{id: 1, name: a}}\nexpect:\n  - op: insert\n    id: 1\n    name: {expected_name}\n"
        ),
    )
    .unwrap();
}

#[test]
fn a_failing_row_wider_than_a_format_width_is_listed() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(70_000);
    names_project(dir.path(), &long);
    let out = streamform(&["test"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains(&format!(
        "insert id=1 name=\"{long}\"  insert id=1 name=\"a\"\n"
    )));
    assert!(
        stdout.ends_with("failed: 1 of 1 fixture\n"),
        "{}",
        &stdout[stdout.len() - 200..]
    );
}

/// Past the parser's recursion limit, nested CASTs sent it retrying alternatives at every
/// level: 48 of them (about 1 kB) made every command spin without end.
#[test]
fn casts_nested_48_deep_are_refused_at_once_not_a_hang() {
    let dir = customer_metrics();
    let mut e = String::from("customer_id");
    for _ in 0..48 {
        e = format!("CAST({e} AS BIGINT)");
    }
    let model = format!(
        "SELECT {e} AS customer_id, SUM(amount) AS total_spend FROM source('orders') GROUP BY 1\n"
    );
    std::fs::write(dir.path().join("models/customer_metrics.sql"), model).unwrap();
    let out = streamform(&["check"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(
        "error: model `customer_metrics` nests parentheses, subqueries, CASE expressions or prefix operators (NOT, a sign) more than 32 levels deep\n  --> models/customer_metrics.sql:1:172\n"
    ));
}

/// NULLIF(a, b) is evaluated as CASE WHEN a = b THEN NULL ELSE a END, so each level of
/// nesting doubled the model: 20 levels (300 bytes) made `check` run without end.
#[test]
fn nullif_nested_20_deep_is_refused_at_once_not_a_hang() {
    let dir = customer_metrics();
    let e = (0..20).fold("amount".to_string(), |e, _| format!("NULLIF({e}, 1)"));
    let model = format!(
        "SELECT customer_id, SUM({e}) AS total_spend FROM source('orders') GROUP BY customer_id\n"
    );
    std::fs::write(dir.path().join("models/customer_metrics.sql"), model).unwrap();
    for command in ["check", "test"] {
        let out = streamform(&[command], dir.path());
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(
            all.contains("error: model `customer_metrics` grows past 10000 expressions once COALESCE, NULLIF, IN, BETWEEN and CASE x WHEN are written out\n  --> models/customer_metrics.sql:1:88\n"),
            "{command}: {all}"
        );
        assert!(all.contains("  help: each of these repeats its first argument, so nesting them multiplies the size; compute the inner part as a column of a model this one reads with ref()\n"), "{command}: {all}");
    }
}

/// `x IN (1, 2, 3)` compares `x` once per value: twelve nested `CASE WHEN ... IN (...)`
/// built 29 MB of Flink SQL.
#[test]
fn in_lists_nested_12_deep_are_refused_not_built() {
    let dir = customer_metrics();
    let e = (0..12).fold("customer_id".to_string(), |e, _| {
        format!("CASE WHEN {e} IN (1, 2, 3) THEN 1 ELSE 2 END")
    });
    let model = format!(
        "SELECT {e} AS customer_id, SUM(amount) AS total_spend FROM source('orders') GROUP BY 1\n"
    );
    std::fs::write(dir.path().join("models/customer_metrics.sql"), model).unwrap();
    let out = streamform(&["build", "--backend", "flink"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("error: model `customer_metrics` grows past 10000 expressions once COALESCE, NULLIF, IN, BETWEEN and CASE x WHEN are written out\n"),
        "{}",
        text(&out.stderr)
    );
    assert!(!dir.path().join("build").exists());
}

/// Past the parser's recursion limit a run of NOTs read as a syntax error at its operand,
/// and a run of signs as "recursion limit exceeded".
#[test]
fn a_run_of_48_nots_is_refused_as_too_deep() {
    let dir = customer_metrics();
    let model = format!(
        "SELECT customer_id, SUM(amount) AS total_spend FROM source('orders') WHERE {}customer_id > 1 GROUP BY customer_id\n",
        "NOT ".repeat(48)
    );
    std::fs::write(dir.path().join("models/customer_metrics.sql"), model).unwrap();
    let out = streamform(&["check"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(
        "error: model `customer_metrics` nests parentheses, subqueries, CASE expressions or prefix operators (NOT, a sign) more than 32 levels deep\n  --> models/customer_metrics.sql:1:204\n"
    ), "{}", text(&out.stdout));
}

/// `1_000` read as the number 1 with the alias `_000`, a column nobody asked for.
#[test]
fn a_number_run_into_a_name_is_refused_not_read_as_an_alias() {
    let dir = customer_metrics();
    std::fs::write(
        dir.path().join("models/customer_metrics.sql"),
        "SELECT customer_id, SUM(amount) AS total_spend, 1_000 FROM source('orders') GROUP BY customer_id\n",
    )
    .unwrap();
    let out = streamform(&["check"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(
        "error: model `customer_metrics`: `1_000` is a number run into a name\n  --> models/customer_metrics.sql:1:49\n"
    ), "{}", text(&out.stdout));
}

/// An IN list becomes a chain of ORs, one per value: 30,000 values overflowed the stack
/// (abort, exit 134) in every command.
#[test]
fn an_in_list_of_thirty_thousand_values_is_refused_not_a_stack_overflow() {
    let dir = customer_metrics();
    let values: Vec<String> = (0..30_000).map(|v| v.to_string()).collect();
    let model = format!(
        "SELECT customer_id, SUM(amount) AS total_spend FROM source('orders') WHERE customer_id IN ({}) GROUP BY customer_id\n",
        values.join(",")
    );
    std::fs::write(dir.path().join("models/customer_metrics.sql"), model).unwrap();
    for command in ["check", "explain"] {
        let out = streamform(&[command], dir.path());
        assert_ne!(
            out.status.code(),
            Some(134),
            "{command}: {}",
            text(&out.stderr)
        );
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(
            all.contains("error: model `customer_metrics` holds more than 1000 operators and list items\n  --> models/customer_metrics.sql:1:3981\n"),
            "{command}: {}",
            &all[..all.len().min(2000)]
        );
    }
}

#[cfg(unix)]
#[test]
fn a_fixture_whose_name_is_not_utf8_is_reported_not_skipped() {
    use std::os::unix::ffi::OsStrExt;
    let dir = customer_metrics();
    let name = std::ffi::OsStr::from_bytes(b"bad\xff.yml");
    std::fs::copy(
        dir.path().join("tests/customer_metrics.yml"),
        dir.path().join("tests").join(name),
    )
    .unwrap();
    let out = streamform(&["check"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stdout).contains(
            "error: tests/bad\u{fffd}.yml could not be read: its name is not UTF-8\n  --> tests/bad\u{fffd}.yml\n  help: rename the file: project file names are UTF-8\n"
        ),
        "{}",
        text(&out.stdout)
    );
    // The other fixture is still read.
    assert!(
        text(&out.stdout)
            .contains("  customer_metrics         tests/customer_metrics.yml 2 given, 2 expect\n")
    );
    // Another file with such a name is none of the project's business.
    std::fs::rename(
        dir.path().join("tests").join(name),
        dir.path()
            .join("tests")
            .join(std::ffi::OsStr::from_bytes(b"notes\xff.txt")),
    )
    .unwrap();
    assert_eq!(streamform(&["check"], dir.path()).status.code(), Some(0));
}

#[test]
fn a_junit_report_is_not_written_over_the_projects_own_files() {
    let dir = customer_metrics();
    let record = dir.path().join(".streamform/applied/local.json");
    std::fs::create_dir_all(record.parent().unwrap()).unwrap();
    std::fs::write(&record, "{}").unwrap();
    for target in [
        "streamform.yml",
        "models/customer_metrics.sql",
        "tests/../sources.yml",
        "tests/report.yml",
        ".streamform/applied/local.json",
        "missing/../streamform.yml",
    ] {
        let before = std::fs::read_to_string(dir.path().join("streamform.yml")).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_streamform"))
            .args(["test", "--junit", target])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{target}");
        assert_eq!(
            text(&out.stderr),
            format!(
                "error: --junit {target} names a file of the project, which the report would overwrite\n  help: write the report elsewhere, e.g. --junit build/reports/streamform.xml\n"
            )
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("streamform.yml")).unwrap(),
            before
        );
    }
    assert_eq!(std::fs::read_to_string(&record).unwrap(), "{}");
    assert!(!dir.path().join("tests/report.yml").exists());
    assert!(!dir.path().join("missing").exists());
}

#[test]
fn a_junit_report_that_cannot_be_written_keeps_the_runs_output_and_is_exit_2() {
    let dir = customer_metrics();
    let folder = dir.path().join("reports");
    std::fs::create_dir(&folder).unwrap();
    let out = streamform(
        &["test", "--json", "--junit", folder.to_str().unwrap()],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the report");
    assert_eq!(report["passed"], true);
    assert!(
        text(&out.stderr).ends_with(
            ": it is not a regular file\n  help: name a file in a folder you can write to\n"
        ),
        "{}",
        text(&out.stderr)
    );
}

#[cfg(unix)]
#[test]
fn a_junit_report_at_a_link_to_nothing_leaves_the_link() {
    let dir = customer_metrics();
    let link = dir.path().join("report.xml");
    std::os::unix::fs::symlink("nowhere.xml", &link).unwrap();
    let out = streamform(&["test", "--junit", link.to_str().unwrap()], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("it is a symbolic link to nothing"));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(!dir.path().join("nowhere.xml").exists());
}

#[test]
fn a_project_name_with_a_control_character_is_an_error() {
    let dir = customer_metrics();
    let config = dir.path().join("streamform.yml");
    let text_of = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text_of.replace("name: customer-metrics", "name: \"customer\\u202Emetrics\""),
    )
    .unwrap();
    let out = streamform(&["check"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("customer\\u{202e}metrics (schema version 1)\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "error: the project name `customer\\u{202e}metrics` holds a control character\n"
        ),
        "{stdout}"
    );
}

#[test]
fn a_fixture_with_an_error_on_every_one_of_20000_events_gets_a_bounded_report() {
    let dir = customer_metrics();
    let mut fixture = String::from("model: customer_metrics\n\ngiven:\n");
    for i in 0..20_000 {
        fixture.push_str(&format!("  - customer_id: x{i}\n    amount: 1\n"));
    }
    fixture.push_str("\nexpect: []\n");
    std::fs::write(dir.path().join("tests/big.yml"), fixture).unwrap();
    let out = streamform(&["check"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    // The first fifty, in the file's order, then how many more.
    assert_eq!(stdout.matches("\nerror: ").count(), 50);
    assert!(
        stdout.contains("error: event 1, column `customer_id`: \"x0\" is not an int64\n  --> tests/big.yml:4:5\n"),
        "{stdout}"
    );
    assert!(stdout.contains("error: event 50, column `customer_id`: \"x49\" is not an int64\n"));
    assert!(!stdout.contains("event 51,"));
    assert!(stdout.ends_with(
        "note: 19950 more problems in tests/big.yml not shown (the first 50 of a file are)\n  help: fix these and check again; check --json lists every one\n\nfailed: 1 model, 1 source, 2 fixtures, 20000 errors, 0 warnings\n"
    ), "{}", &stdout[stdout.len().saturating_sub(400)..]);
    // The document lists every one.
    let json = streamform(&["check", "--json"], dir.path());
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["diagnostics"].as_array().unwrap().len(), 20_000);
}

/// A SQL string and a quoted column name are the user's text: `explain` printed them raw,
/// so a model could clear the screen of whoever explains it.
#[test]
fn explain_shows_escape_sequences_in_sql_as_text() {
    let dir = customer_metrics();
    std::fs::write(
        dir.path().join("models/customer_metrics.sql"),
        "SELECT customer_id, SUM(amount) AS \"to\u{1b}[2Jtal\", MAX(CONCAT('a\u{1b}[31m', 'b')) AS m FROM source('orders') GROUP BY customer_id\n",
    )
    .unwrap();
    let out = streamform(&["explain", "customer_metrics"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(!stdout.contains('\u{1b}'), "{stdout}");
    assert!(
        stdout.contains("  columns=customer_id, sum(amount) AS to\\u{1b}[2Jtal, max(CONCAT('a\\u{1b}[31m', 'b')) AS m\n"),
        "{stdout}"
    );
}

/// serde_json leaves DEL, the C1 controls and the bidirectional overrides raw; they are
/// escaped as JSON escapes, so the document reads back the same.
#[test]
fn json_output_escapes_del_c1_and_overrides() {
    let dir = customer_metrics();
    std::fs::write(
        dir.path().join("models/customer_metrics.sql"),
        "SELECT customer_id, SUM(amount) AS total_spend, MAX(CONCAT('\u{7f}\u{9b}\u{202e}', 'b')) AS m FROM source('orders') GROUP BY customer_id\n",
    )
    .unwrap();
    let out = streamform(&["explain", "--json", "customer_metrics"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        !stdout.contains(['\u{7f}', '\u{9b}', '\u{202e}']),
        "{stdout}"
    );
    assert!(
        stdout.contains("CONCAT('\\u007f\\u009b\\u202e', 'b')"),
        "{stdout}"
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(doc.to_string().contains("\u{7f}\u{9b}\u{202e}"));
}

/// `build` wrote application.sql, then failed on a plan.json that was a folder, leaving a
/// new script beside no manifest. Both are staged first now: a failure writes neither.
#[test]
fn a_build_that_cannot_write_its_manifest_leaves_the_previous_script() {
    let dir = customer_metrics();
    let out = streamform(&["build", "--backend", "flink"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let script = dir.path().join("build/flink/application.sql");
    let before = std::fs::read_to_string(&script).unwrap();
    std::fs::remove_file(dir.path().join("build/plan.json")).unwrap();
    std::fs::create_dir(dir.path().join("build/plan.json")).unwrap();
    std::fs::write(
        dir.path().join("models/customer_metrics.sql"),
        "SELECT customer_id, SUM(amount) AS total_spend FROM source('orders') WHERE amount > 0 GROUP BY customer_id\n",
    )
    .unwrap();
    let out = streamform(&["build", "--backend", "flink"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("build/plan.json: it is a folder\n  help: check that build/ can be written: no file where a folder belongs, no folder where a file belongs, and write permission; nothing was written\n"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&script).unwrap(), before);
}

#[test]
fn a_model_of_thirty_thousand_operators_is_refused_not_a_stack_overflow() {
    let dir = customer_metrics();
    let model = format!(
        "SELECT customer_id, SUM(amount) AS total_spend FROM source('orders') WHERE amount > 1{} GROUP BY customer_id\n",
        " + 1".repeat(30_000)
    );
    std::fs::write(dir.path().join("models/customer_metrics.sql"), model).unwrap();
    let out = streamform(&["check"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            "error: model `customer_metrics` holds more than 1000 operators and list items\n  --> models/customer_metrics.sql:1:4079\n"
        ),
        "{}",
        &stdout[..stdout.len().min(2000)]
    );
    assert!(
        stdout.contains(
            "  help: split the computation into models that read one another with ref()\n"
        )
    );
}

#[cfg(unix)]
#[test]
fn a_tests_folder_that_links_to_nothing_makes_the_check_incomplete() {
    let dir = customer_metrics();
    std::fs::remove_dir_all(dir.path().join("tests")).unwrap();
    std::os::unix::fs::symlink("nowhere", dir.path().join("tests")).unwrap();
    let out = streamform(&["check"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stdout).contains(
            "error: tests could not be read: it is a symbolic link to something that does not exist\n"
        ),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_project_path_that_steers_the_terminal_is_shown_escaped() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_streamform"))
        .args(["check", "--project", "/nonexistent\u{1b}[31m"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with("error: /nonexistent\\u{1b}[31m does not exist\n"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_fixture_whose_aliases_expand_too_far_is_refused_in_words() {
    let dir = customer_metrics();
    let mut bomb =
        String::from("model: customer_metrics\nlate:\n  - &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let prev = i - 1;
        bomb.push_str(&format!(
            "  - &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
        ));
    }
    bomb.push_str("given: *a11\nexpect: []\n");
    std::fs::write(dir.path().join("tests/bomb.yml"), bomb).unwrap();
    let out = streamform(&["check"], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("error: the YAML is not read: its aliases expand to too much\n"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("Breach") && !stdout.contains("{ "),
        "{stdout}"
    );
}
