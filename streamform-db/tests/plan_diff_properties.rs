//! Properties of the plan diff over random edits, checked through the `plan_diff` query:
//! the running side is the manifest of a project before the edit (read back from its
//! JSON, as `plan` reads a record), the desired side the project after it.
//!
//! - An edit that leaves every manifest node (and model entry) equal yields SAFE.
//! - A keyed node whose state digest changed is never SAFE or COMPATIBLE.
//! - A model's verdict is the most severe of its nodes', the application's the most severe
//!   of its models'.
//!
//! Two sources of edits: text edits of the example projects (comments, numbers, aggregate
//! functions, an added accumulator, topics, an added source column), and generated
//! two-model projects whose description is changed field by field (filters, grouping keys,
//! accumulators, HAVING, a downstream filter, materialization, topics).

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use streamform_db::db::{Database, application_manifest, plan_diff};
use streamform_db::load::project_from_files;
use streamform_db::{FileContents, Project, SourceFile};
use streamform_ir::diff::{Classification, PlanDiff};
use streamform_ir::manifest::{Manifest, StateEntry};

type Files = BTreeMap<String, String>;

fn load(db: &Database, files: &Files) -> Project {
    let list: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    project_from_files(db, &list)
}

/// The manifest of a project given as files, or `None` when it does not compile.
fn manifest(files: &Files) -> Option<Manifest> {
    let db = Database::default();
    application_manifest(&db, load(&db, files)).clone()
}

/// The diff of `after` against the manifest `before` compiled to, through the query layer.
fn diff_against(before: &Manifest, after: &Files) -> Option<(Manifest, PlanDiff)> {
    let db = Database::default();
    let project = load(&db, after);
    let desired = application_manifest(&db, project).clone()?;
    let running = SourceFile::new(
        &db,
        "build/plan.json".into(),
        FileContents::Text(before.to_json_pretty()),
    );
    let comparison = plan_diff(&db, project, running).clone()?;
    Some((desired, comparison.diff))
}

/// The three properties, for one before/after pair.
fn check_properties(before: &Manifest, after: &Files) -> Result<(), TestCaseError> {
    let Some((desired, diff)) = diff_against(before, after) else {
        return Ok(());
    };
    if desired.nodes == before.nodes && desired.models == before.models {
        prop_assert_eq!(diff.verdict, Classification::Safe, "{:#?}", diff);
    }
    for d in &desired.nodes {
        let Some(r) = before.nodes.iter().find(|r| r.id == d.id) else {
            continue;
        };
        if let (StateEntry::Keyed { digest: old, .. }, StateEntry::Keyed { digest: new, .. }) =
            (&r.state, &d.state)
            && old != new
        {
            let node = diff
                .models
                .iter()
                .flat_map(|m| &m.nodes)
                .find(|n| n.id == d.id);
            prop_assert!(
                node.is_some_and(|n| n.classification > Classification::Compatible),
                "{} changed its state digest but is {:?}",
                d.id,
                node.map(|n| n.classification)
            );
        }
    }
    for m in &diff.models {
        let most = m.nodes.iter().map(|n| n.classification).max();
        prop_assert_eq!(
            m.verdict,
            most.unwrap_or(Classification::Safe),
            "{}",
            &m.name
        );
    }
    let most = diff.models.iter().map(|m| m.verdict).max();
    prop_assert_eq!(diff.verdict, most.unwrap_or(Classification::Safe));
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Text edits of the example projects.

fn example(name: &str) -> Files {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name);
    let mut files = Files::new();
    for rel in ["streamform.yml", "sources.yml"] {
        files.insert(rel.into(), std::fs::read_to_string(root.join(rel)).unwrap());
    }
    for entry in std::fs::read_dir(root.join("models")).unwrap() {
        let path = entry.unwrap().path();
        let rel = format!("models/{}", path.file_name().unwrap().to_string_lossy());
        files.insert(rel, std::fs::read_to_string(&path).unwrap());
    }
    files
}

/// One text edit; the numbers choose which file and which occurrence.
#[derive(Debug, Clone)]
enum TextEdit {
    /// A comment line appended to a model.
    Comment(usize),
    /// A blank line before FROM.
    BlankLine(usize),
    /// An integer literal changed by `delta`.
    Number(usize, usize, u8),
    /// An aggregate function swapped for another (sum → min → max → sum).
    Function(usize, usize),
    /// `count(*) AS added_count` added to the SELECT list.
    AddCount(usize),
    /// A topic renamed (in sources.yml or a sink).
    Topic(usize),
    /// A column added to the first source.
    SourceColumn,
}

fn text_edit() -> impl Strategy<Value = TextEdit> {
    prop_oneof![
        any::<usize>().prop_map(TextEdit::Comment),
        any::<usize>().prop_map(TextEdit::BlankLine),
        (any::<usize>(), any::<usize>(), 1u8..50).prop_map(|(f, i, d)| TextEdit::Number(f, i, d)),
        (any::<usize>(), any::<usize>()).prop_map(|(f, i)| TextEdit::Function(f, i)),
        any::<usize>().prop_map(TextEdit::AddCount),
        any::<usize>().prop_map(TextEdit::Topic),
        Just(TextEdit::SourceColumn),
    ]
}

fn model_paths(files: &Files) -> Vec<String> {
    files
        .keys()
        .filter(|p| p.starts_with("models/"))
        .cloned()
        .collect()
}

/// Byte ranges of the integer literals in `text` (digits not inside an identifier).
fn integers(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if bytes[i].is_ascii_digit() && starts_word {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

fn apply_text_edit(files: &mut Files, edit: &TextEdit) {
    let models = model_paths(files);
    let pick = |n: usize| models[n % models.len()].clone();
    match edit {
        TextEdit::Comment(f) => files.get_mut(&pick(*f)).unwrap().push_str("\n-- edited\n"),
        TextEdit::BlankLine(f) => {
            let text = files.get_mut(&pick(*f)).unwrap();
            *text = text.replacen("\nFROM", "\n\nFROM", 1);
        }
        TextEdit::Number(f, i, delta) => {
            let text = files.get_mut(&pick(*f)).unwrap();
            let found = integers(text);
            if let Some(&(start, end)) = found.get(i % found.len().max(1)) {
                let value: u64 = text[start..end].parse().unwrap_or(0);
                text.replace_range(start..end, &(value + u64::from(*delta)).to_string());
            }
        }
        TextEdit::Function(f, i) => {
            let text = files.get_mut(&pick(*f)).unwrap();
            let lower = text.to_ascii_lowercase();
            let calls: Vec<usize> = ["sum(", "min(", "max("]
                .iter()
                .flat_map(|name| lower.match_indices(name).map(|(at, _)| at))
                .collect();
            if let Some(&at) = calls.get(i % calls.len().max(1)) {
                let next = match &lower[at..at + 3] {
                    "sum" => "min",
                    "min" => "max",
                    _ => "sum",
                };
                text.replace_range(at..at + 3, next);
            }
        }
        TextEdit::AddCount(f) => {
            let text = files.get_mut(&pick(*f)).unwrap();
            *text = text.replacen("\nFROM", ",\n    count(*) AS added_count\nFROM", 1);
        }
        TextEdit::Topic(n) => {
            let topics: Vec<(String, usize)> = ["sources.yml", "streamform.yml"]
                .iter()
                .flat_map(|p| {
                    files[*p]
                        .match_indices("topic: ")
                        .map(|(at, _)| (p.to_string(), at))
                        .collect::<Vec<_>>()
                })
                .collect();
            if let Some((path, at)) = topics.get(n % topics.len().max(1)) {
                let text = files.get_mut(path).unwrap();
                let end = text[*at..].find('\n').map_or(text.len(), |e| at + e);
                text.insert_str(end, "-v2");
            }
        }
        TextEdit::SourceColumn => {
            let text = files.get_mut("sources.yml").unwrap();
            if let Some(at) = text.find("schema:\n") {
                let line_start = at + "schema:\n".len();
                let indent: String = text[line_start..]
                    .chars()
                    .take_while(|c| *c == ' ')
                    .collect();
                text.insert_str(line_start, &format!("{indent}zz_added: int64\n"));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_edits_of_the_example_projects(
        which in 0usize..3,
        edits in prop::collection::vec(text_edit(), 0..4),
    ) {
        let name = ["customer-metrics", "order-pipeline", "coverage"][which];
        let before = example(name);
        let running = manifest(&before).expect("the examples compile");
        let mut after = before.clone();
        for edit in &edits {
            apply_text_edit(&mut after, edit);
        }
        check_properties(&running, &after)?;
    }
}

/// The edits above are not vacuous: most kinds keep the examples compiling, and between
/// them they produce SAFE, COMPATIBLE and classifications above.
#[test]
fn the_text_edits_compile_and_reach_several_classifications() {
    let mut verdicts = std::collections::BTreeSet::new();
    let mut compiled = 0;
    let kinds = [
        TextEdit::Comment(0),
        TextEdit::BlankLine(0),
        TextEdit::Number(0, 0, 1),
        TextEdit::Function(0, 0),
        TextEdit::AddCount(0),
        TextEdit::Topic(0),
        TextEdit::SourceColumn,
    ];
    for name in ["customer-metrics", "order-pipeline", "coverage"] {
        let before = example(name);
        let running = manifest(&before).unwrap();
        for (i, kind) in kinds.iter().enumerate() {
            let mut after = before.clone();
            apply_text_edit(&mut after, kind);
            if let Some((_, diff)) = diff_against(&running, &after) {
                compiled += 1;
                verdicts.insert(diff.verdict);
                if i < 2 {
                    assert_eq!(diff.verdict, Classification::Safe, "{name}: {kind:?}");
                }
            }
        }
    }
    assert!(compiled >= 15, "only {compiled} of 21 edits compiled");
    assert!(verdicts.contains(&Classification::Safe), "{verdicts:?}");
    assert!(
        verdicts.contains(&Classification::Compatible),
        "{verdicts:?}"
    );
    assert!(
        verdicts.contains(&Classification::BackfillRequired),
        "{verdicts:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Generated projects: a model over source `orders`, and one reading it.

const COLUMNS: [(&str, &str); 5] = [
    ("amount", "decimal(10,2)"),
    ("customer_id", "int64"),
    ("price", "float64"),
    ("qty", "int32"),
    ("region", "string"),
];
const NUMERIC: [&str; 4] = ["amount", "price", "qty", "customer_id"];
const KEYS: [&str; 2] = ["customer_id", "region"];

/// A generated project, described by the choices that make it.
#[derive(Debug, Clone)]
struct Spec {
    /// `WHERE <numeric column> > n` on the first model.
    filter: Option<(usize, u8)>,
    /// Grouping columns, as indexes into [`KEYS`] in order; empty: no GROUP BY.
    keys: Vec<usize>,
    /// Aggregate calls: (function, numeric column); function 0..4 = sum, min, max, count.
    aggs: Vec<(u8, usize)>,
    /// `HAVING count(*) > n`, when grouping.
    having: Option<u8>,
    /// `WHERE <first value column> > n` on the second model.
    downstream: Option<u8>,
    /// Whether the second model writes to a Kafka topic (and which).
    sink_topic: Option<u8>,
    /// The source's topic.
    source_topic: u8,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        prop::option::of((0usize..4, 0u8..100)),
        prop::sample::subsequence(vec![0usize, 1], 0..=2).prop_shuffle(),
        prop::collection::vec((0u8..4, 0usize..4), 1..4),
        prop::option::of(0u8..5),
        prop::option::of(0u8..100),
        prop::option::of(0u8..3),
        0u8..2,
    )
        .prop_map(
            |(filter, keys, aggs, having, downstream, sink_topic, source_topic)| Spec {
                filter,
                keys,
                aggs,
                having,
                downstream,
                sink_topic,
                source_topic,
            },
        )
}

/// One change to a spec.
#[derive(Debug, Clone)]
enum SpecEdit {
    Filter(Option<(usize, u8)>),
    Keys(Vec<usize>),
    AddAgg(u8, usize),
    RemoveAgg(usize),
    SwapAggs,
    Having(Option<u8>),
    Downstream(Option<u8>),
    SinkTopic(Option<u8>),
    SourceTopic(u8),
}

fn spec_edit() -> impl Strategy<Value = SpecEdit> {
    prop_oneof![
        prop::option::of((0usize..4, 0u8..100)).prop_map(SpecEdit::Filter),
        prop::sample::subsequence(vec![0usize, 1], 0..=2)
            .prop_shuffle()
            .prop_map(SpecEdit::Keys),
        (0u8..4, 0usize..4).prop_map(|(f, c)| SpecEdit::AddAgg(f, c)),
        any::<usize>().prop_map(SpecEdit::RemoveAgg),
        Just(SpecEdit::SwapAggs),
        prop::option::of(0u8..5).prop_map(SpecEdit::Having),
        prop::option::of(0u8..100).prop_map(SpecEdit::Downstream),
        prop::option::of(0u8..3).prop_map(SpecEdit::SinkTopic),
        (0u8..2).prop_map(SpecEdit::SourceTopic),
    ]
}

fn apply_spec_edit(spec: &mut Spec, edit: &SpecEdit) {
    match edit.clone() {
        SpecEdit::Filter(f) => spec.filter = f,
        SpecEdit::Keys(k) => spec.keys = k,
        SpecEdit::AddAgg(f, c) => spec.aggs.push((f, c)),
        SpecEdit::RemoveAgg(i) if spec.aggs.len() > 1 => {
            let i = i % spec.aggs.len();
            spec.aggs.remove(i);
        }
        SpecEdit::RemoveAgg(_) => {}
        SpecEdit::SwapAggs if spec.aggs.len() > 1 => spec.aggs.swap(0, 1),
        SpecEdit::SwapAggs => {}
        SpecEdit::Having(h) => spec.having = h,
        SpecEdit::Downstream(d) => spec.downstream = d,
        SpecEdit::SinkTopic(t) => spec.sink_topic = t,
        SpecEdit::SourceTopic(t) => spec.source_topic = t,
    }
}

fn call(agg: (u8, usize)) -> (String, String) {
    let column = NUMERIC[agg.1];
    let (sql, name) = match agg.0 {
        0 => (format!("SUM({column})"), format!("sum_{column}")),
        1 => (format!("MIN({column})"), format!("min_{column}")),
        2 => (format!("MAX({column})"), format!("max_{column}")),
        _ => ("COUNT(*)".to_string(), "n".to_string()),
    };
    (sql, name)
}

/// The project files a spec describes.
fn render(spec: &Spec) -> Files {
    let mut files = Files::new();
    let schema: String = COLUMNS
        .iter()
        .map(|(c, t)| format!("      {c}: {t}\n"))
        .collect();
    files.insert(
        "sources.yml".into(),
        format!(
            "sources:\n  orders:\n    connector: kafka\n    topic: orders{}\n    format: json\n    schema:\n{schema}",
            spec.source_topic
        ),
    );
    let keys: Vec<&str> = spec.keys.iter().map(|k| KEYS[*k]).collect();
    let grouped = !keys.is_empty();
    let mut items: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    let mut names: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    let mut seen = std::collections::BTreeSet::new();
    for agg in &spec.aggs {
        let (sql, name) = call(*agg);
        if seen.insert(name.clone()) {
            items.push(format!("{sql} AS {name}"));
            names.push(name);
        }
    }
    let mut first = format!("SELECT {}\nFROM source('orders')\n", items.join(", "));
    if let Some((column, n)) = spec.filter {
        first.push_str(&format!("WHERE {} > {n}\n", NUMERIC[column]));
    }
    if grouped {
        first.push_str(&format!("GROUP BY {}\n", keys.join(", ")));
        if let Some(h) = spec.having {
            first.push_str(&format!("HAVING COUNT(*) > {h}\n"));
        }
    }
    files.insert("models/first.sql".into(), first);
    let value = names[keys.len()].clone();
    let mut second = format!("SELECT {}\nFROM ref('first')\n", names.join(", "));
    if let Some(n) = spec.downstream {
        second.push_str(&format!("WHERE {value} > {n}\n"));
    }
    files.insert("models/second.sql".into(), second);
    let key_list = if keys.is_empty() {
        String::new()
    } else {
        format!("\n    key: [{}]", keys.join(", "))
    };
    let sink = spec
        .sink_topic
        .map(|t| {
            format!(
                "    sink:\n      connector: kafka\n      topic: second{t}\n      format: json\n"
            )
        })
        .unwrap_or_default();
    files.insert(
        "streamform.yml".into(),
        format!(
            "name: generated\nversion: 1\nmodels:\n  first:\n    materialized: upsert{key_list}\n  second:\n    materialized: upsert{key_list}\n{sink}"
        ),
    );
    files
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_edits_of_generated_projects(
        base in spec(),
        edits in prop::collection::vec(spec_edit(), 0..4),
    ) {
        let Some(running) = manifest(&render(&base)) else {
            return Ok(());
        };
        let mut changed = base.clone();
        for edit in &edits {
            apply_spec_edit(&mut changed, edit);
        }
        check_properties(&running, &render(&changed))?;
    }
}

/// The generator is not vacuous: its projects compile.
#[test]
fn generated_projects_compile() {
    let runner_specs = [
        Spec {
            filter: Some((0, 5)),
            keys: vec![0],
            aggs: vec![(0, 0), (3, 0)],
            having: Some(1),
            downstream: Some(10),
            sink_topic: Some(0),
            source_topic: 0,
        },
        Spec {
            filter: None,
            keys: vec![],
            aggs: vec![(1, 2)],
            having: None,
            downstream: None,
            sink_topic: None,
            source_topic: 1,
        },
        Spec {
            filter: None,
            keys: vec![1, 0],
            aggs: vec![(2, 3), (0, 1)],
            having: None,
            downstream: Some(3),
            sink_topic: Some(2),
            source_topic: 1,
        },
    ];
    for spec in runner_specs {
        assert!(
            manifest(&render(&spec)).is_some(),
            "{spec:#?}\n{:#?}",
            render(&spec)
        );
    }
}
