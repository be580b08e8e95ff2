//! The dependency graph: each model reads one source or model, so the graph is walked once
//! per model (a chain of thousands of models used to cost the cube of its length).

use streamform_db::db::{Database, dependency_graph};
use streamform_db::load::project_from_files;

const SOURCES: &str = "sources:\n  ev:\n    connector: kafka\n    topic: ev\n    format: json\n    schema:\n      id: int64\n";

#[test]
fn orders_chains_and_lists_each_cycle_from_its_first_model() {
    let db = Database::default();
    let project = project_from_files(
        &db,
        &[
            ("streamform.yml", "name: g\nversion: 1\n"),
            ("sources.yml", SOURCES),
            ("models/c.sql", "SELECT * FROM ref('b')"),
            ("models/b.sql", "SELECT * FROM ref('a')"),
            ("models/a.sql", "SELECT * FROM source('ev')"),
            ("models/d.sql", "SELECT * FROM source('ev')"),
            ("models/z.sql", "SELECT * FROM ref('x')"),
            ("models/y.sql", "SELECT * FROM ref('z')"),
            ("models/x.sql", "SELECT * FROM ref('y')"),
            ("models/w.sql", "SELECT * FROM ref('y')"),
            ("models/s.sql", "SELECT * FROM ref('s')"),
        ],
    );
    let graph = dependency_graph(&db, project);
    assert_eq!(graph.order, ["a", "d", "b", "c"]);
    assert_eq!(
        graph.cycles,
        [
            vec!["s".to_string()],
            vec!["x".into(), "y".into(), "z".into()]
        ]
    );
    assert_eq!(
        graph.cyclic.iter().collect::<Vec<_>>(),
        ["s", "x", "y", "z"]
    );
}

#[test]
fn a_chain_of_three_thousand_models_is_ordered_along_its_reads() {
    let db = Database::default();
    let texts: Vec<(String, String)> = (0..3000)
        .map(|i| {
            let from = if i == 0 {
                "source('ev')".to_string()
            } else {
                format!("ref('m{}')", i - 1)
            };
            (format!("models/m{i}.sql"), format!("SELECT * FROM {from}"))
        })
        .collect();
    let mut files: Vec<(&str, &str)> = vec![
        ("streamform.yml", "name: g\nversion: 1\n"),
        ("sources.yml", SOURCES),
    ];
    files.extend(texts.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    let project = project_from_files(&db, &files);
    let graph = dependency_graph(&db, project);
    let expected: Vec<String> = (0..3000).map(|i| format!("m{i}")).collect();
    assert_eq!(graph.order, expected);
    assert!(graph.cycles.is_empty());
}
