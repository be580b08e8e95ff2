//! Each kind of problem carries its stable code and the file input it is about: tools and
//! tests match on these, never on the wording.

use streamform_db::backend::flink_application;
use streamform_db::db::{Database, check_report};
use streamform_db::diagnostic::Code;
use streamform_db::load::project_from_files;
use streamform_flink::FindingKind;

const CONFIG: &str = "name: p\nversion: 1\n";
const SOURCES: &str = "sources:\n  orders:\n    connector: kafka\n    topic: orders\n    format: json\n    schema:\n      id: int64\n      amount: decimal\n";
const MODEL: &str = "SELECT id, amount FROM source('orders')";

/// The codes and paths `check` reports for the project made of the defaults with `files`
/// replacing or adding to them.
fn codes(files: &[(&str, &str)]) -> Vec<(Code, String)> {
    let mut all = vec![
        ("streamform.yml", CONFIG),
        ("sources.yml", SOURCES),
        ("models/m.sql", MODEL),
    ];
    for (path, text) in files {
        all.retain(|(p, _)| p != path);
        all.push((path, text));
    }
    let db = Database::default();
    let project = project_from_files(&db, &all);
    check_report(&db, project)
        .iter()
        .map(|d| (d.code, d.path(&db).unwrap_or("").to_string()))
        .collect()
}

fn one(code: Code, path: &str) -> Vec<(Code, String)> {
    vec![(code, path.to_string())]
}

#[test]
fn a_valid_project_has_none() {
    assert_eq!(codes(&[]), []);
}

#[test]
fn yaml_problems() {
    assert_eq!(
        codes(&[("streamform.yml", "name: 'p\nversion: 1\n")]),
        one(Code::YamlSyntax, "streamform.yml")
    );
    assert_eq!(
        codes(&[("streamform.yml", "name: p\nversion: 1\nmodles: {}\n")]),
        one(Code::UnknownField, "streamform.yml")
    );
    assert_eq!(
        codes(&[("streamform.yml", "version: 1\n")]),
        one(Code::MissingField, "streamform.yml")
    );
    assert_eq!(
        codes(&[("streamform.yml", "name: p\nname: q\nversion: 1\n")]),
        one(Code::DuplicateKey, "streamform.yml")
    );
    assert_eq!(
        codes(&[("streamform.yml", "name: p\nversion: [1]\n")]),
        one(Code::WrongShape, "streamform.yml")
    );
    assert_eq!(
        codes(&[("sources.yml", "# nothing yet\n")]),
        one(Code::FileEmpty, "sources.yml")
    );
}

#[test]
fn a_duplicate_key_inside_a_fixture_event() {
    let fixture = "model: m\ngiven:\n  - {id: 1, id: 2, amount: 1}\nexpect: []\n";
    assert_eq!(
        codes(&[("tests/m.yml", fixture)]),
        one(Code::DuplicateKey, "tests/m.yml")
    );
}

#[test]
fn project_file_problems() {
    assert_eq!(
        codes(&[("streamform.yml", "name: p\nversion: 2\n")]),
        one(Code::UnsupportedVersion, "streamform.yml")
    );
    assert_eq!(
        codes(&[(
            "streamform.yml",
            "name: p\nversion: 1\nmodels:\n  m:\n    materialized: append\n    key: [id]\n"
        )]),
        one(Code::KeyOnAppend, "streamform.yml")
    );
    assert_eq!(
        codes(&[(
            "streamform.yml",
            "name: p\nversion: 1\nmodels:\n  m:\n    materialized: upsert\n    key: [id, id]\n"
        )]),
        one(Code::RepeatedKeyColumn, "streamform.yml")
    );
    assert_eq!(
        codes(&[(
            "streamform.yml",
            "name: p\nversion: 1\nmodels:\n  gone:\n    materialized: append\n"
        )]),
        one(Code::UnknownModel, "streamform.yml")
    );
    assert_eq!(
        codes(&[(
            "streamform.yml",
            "name: p\nversion: 1\ntargets:\n  local:\n    backend: flink\n    flink:\n      gateway: http://user:pw@localhost:8083\n    kafka:\n      bootstrap_servers: localhost:9092\n"
        )]),
        one(Code::CredentialInConfig, "streamform.yml")
    );
}

#[test]
fn sources_file_problems() {
    assert_eq!(
        codes(&[(
            "sources.yml",
            "sources:\n  orders:\n    connector: kafak\n    topic: orders\n    format: json\n    schema:\n      id: int64\n      amount: decimal\n"
        )]),
        // The model reading the broken source says nothing more.
        one(Code::UnknownConnector, "sources.yml")
    );
    assert_eq!(
        codes(&[(
            "sources.yml",
            "sources:\n  orders:\n    connector: kafka\n    topic: orders\n    format: json\n    schema:\n      id: int46\n      amount: decimal\n"
        )]),
        one(Code::UnknownType, "sources.yml")
    );
    assert_eq!(
        codes(&[(
            "sources.yml",
            "sources:\n  orders:\n    connector: kafka\n    topic: orders\n    format: json\n    schema:\n      id: int64\n      amount: decimal\n      \"\": string\n"
        )]),
        one(Code::InvalidName, "sources.yml")
    );
    let wide: String = (0..1001).map(|i| format!("      c{i}: int64\n")).collect();
    assert_eq!(
        codes(&[(
            "sources.yml",
            &format!(
                "sources:\n  orders:\n    connector: kafka\n    topic: orders\n    format: json\n    schema:\n      id: int64\n      amount: decimal\n{wide}"
            )
        )]),
        one(Code::SchemaTooWide, "sources.yml")
    );
}

#[test]
fn model_problems() {
    assert_eq!(
        codes(&[("models/m.sql", "SELECT id FROM source('orders') WHERE")]),
        one(Code::SqlSyntax, "models/m.sql")
    );
    assert_eq!(
        codes(&[("models/m.sql", "SELECT idd FROM source('orders')")]),
        one(Code::UnknownColumn, "models/m.sql")
    );
    assert_eq!(
        codes(&[("models/m.sql", "SELECT id FROM source('order')")]),
        one(Code::UnknownSource, "models/m.sql")
    );
    assert_eq!(
        codes(&[("models/m.sql", "SELECT id FROM ref('other')")]),
        one(Code::UnknownModel, "models/m.sql")
    );
    assert_eq!(
        codes(&[("models/m.sql", "SELECT id FROM orders")]),
        one(Code::InvalidRead, "models/m.sql")
    );
    assert_eq!(
        codes(&[("models/m.sql", "SELECT id FROM source('orders') LIMIT 3")]),
        one(Code::UnsupportedSql, "models/m.sql")
    );
    assert_eq!(
        codes(&[(
            "models/m.sql",
            "SELECT id FROM source('orders') WHERE amount + 'x' > 1"
        )]),
        one(Code::TypeMismatch, "models/m.sql")
    );
    assert_eq!(
        codes(&[
            ("models/m.sql", "SELECT id FROM ref('n')"),
            ("models/n.sql", "SELECT id FROM ref('m')"),
        ]),
        vec![(Code::ReferenceCycle, "models/m.sql".to_string()),]
    );
}

#[test]
fn a_declaration_that_disagrees_points_at_streamform_yml() {
    assert_eq!(
        codes(&[(
            "models/m.sql",
            "SELECT id, SUM(amount) AS total FROM source('orders') GROUP BY id"
        )]),
        one(Code::DeclarationMismatch, "streamform.yml")
    );
}

#[test]
fn fixture_problems() {
    assert_eq!(
        codes(&[(
            "tests/m.yml",
            "model: m\ngiven:\n  - {id: 1, amount: x}\nexpect: []\n"
        )]),
        one(Code::InvalidValue, "tests/m.yml")
    );
    assert_eq!(
        codes(&[(
            "tests/m.yml",
            "model: m\ngiven:\n  - {id: 1, amont: 1}\nexpect: []\n"
        )]),
        one(Code::UnknownColumn, "tests/m.yml")
    );
    assert_eq!(
        codes(&[(
            "tests/m.yml",
            "model: m\ngiven: []\nexpect:\n  - {id: 1, amount: 1}\n"
        )]),
        one(Code::FixtureShape, "tests/m.yml")
    );
    assert_eq!(
        codes(&[("tests/m.yml", "model: nope\ngiven: []\nexpect: []\n")]),
        one(Code::UnknownModel, "tests/m.yml")
    );
}

#[test]
fn flink_findings_carry_codes_and_files() {
    let db = Database::default();
    let project = project_from_files(
        &db,
        &[
            ("streamform.yml", CONFIG),
            (
                "sources.yml",
                &format!(
                    "{SOURCES}  archive:\n    connector: file\n    path: archive.json\n    format: json\n    schema:\n      id: int64\n"
                ),
            ),
            ("models/m.sql", MODEL),
            (
                "models/sorted.sql",
                "SELECT id FROM source('archive') ORDER BY id",
            ),
        ],
    );
    let build = flink_application(&db, project, None)
        .as_ref()
        .expect("the project compiles");
    let errors: Vec<(Code, Option<&str>)> =
        build.errors.iter().map(|d| (d.code, d.path(&db))).collect();
    // A Kafka source without a target is about the application as a whole; the sort is
    // about the model's file.
    assert!(
        errors.contains(&(Code::Flink(FindingKind::NoKafkaTarget), None)),
        "{errors:?}"
    );
    assert!(
        errors.contains(&(
            Code::Flink(FindingKind::StreamingSort),
            Some("models/sorted.sql")
        )),
        "{errors:?}"
    );
}

#[test]
fn every_code_has_a_unique_name_and_is_documented() {
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/diagnostics.md"
    ))
    .expect("docs/diagnostics.md");
    let mut seen = std::collections::BTreeSet::new();
    for code in Code::all() {
        let name = code.name();
        assert!(seen.insert(name), "{name} twice");
        assert!(
            name.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{name} is not kebab-case"
        );
        assert!(
            docs.contains(&format!("`{name}`")),
            "docs/diagnostics.md does not explain `{name}`"
        );
    }
}
