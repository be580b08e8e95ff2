//! Large projects, generated: cold `check` and `test` at 10, 100 and 1,000 models, and, in
//! a live database (the one `watch` keeps), re-check + re-test after editing one leaf model,
//! one root model, one fixture and sources.yml.
//!
//! The generator is deterministic from a seed: chains of ten models over several sources;
//! each chain starts with a filter over a source, continues with filters over the model
//! before, and ends with an aggregate (upsert by `customer_id`); every model has a fixture.
//!
//! Run: `cargo bench -j 2 -p streamform-db --bench large` (add `-- --sample-size 10` for a
//! quicker run; `-- cold` or `-- live` for one group).

use std::fmt::Write;
use std::path::Path;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use streamform_db::Database;
use streamform_db::load::MemoryFs;
use streamform_db::watch::Session;

// The allocator the binary uses.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CHAIN: usize = 10;
const SOURCES: usize = 8;

/// A project of `models` models (a multiple of ten), as `(path, text)`.
pub fn generate(models: usize, seed: u64) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut config = String::from("name: large\nversion: 1\nmodels:\n");
    let mut sources = String::from("sources:\n");
    for s in 0..SOURCES {
        let _ = write!(
            sources,
            "  src_{s}:\n    connector: kafka\n    topic: topic-{s}\n    format: json\n    schema:\n      customer_id: int64\n      amount: decimal\n      region: string\n"
        );
    }
    let mut state = seed;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 33
    };
    for chain in 0..models / CHAIN {
        let source = next() as usize % SOURCES;
        for step in 0..CHAIN {
            let name = format!("m_{chain}_{step}");
            let threshold = next() % 3;
            let (sql, expect) = if step == 0 {
                (
                    format!("SELECT customer_id, amount, region FROM source('src_{source}') WHERE amount > {threshold}"),
                    "  - {op: insert, customer_id: 1, amount: 5, region: eu}\n  - {op: insert, customer_id: 1, amount: 7, region: eu}\n".to_string(),
                )
            } else if step < CHAIN - 1 {
                (
                    format!("SELECT customer_id, amount, region FROM ref('m_{chain}_{}') WHERE amount > {threshold}", step - 1),
                    "  - {op: insert, customer_id: 1, amount: 5, region: eu}\n  - {op: insert, customer_id: 1, amount: 7, region: eu}\n".to_string(),
                )
            } else {
                let _ = write!(
                    config,
                    "  {name}:\n    materialized: upsert\n    key: [customer_id]\n"
                );
                (
                    format!("SELECT customer_id, SUM(amount) AS total FROM ref('m_{chain}_{}') GROUP BY customer_id", step - 1),
                    "  - {op: insert, customer_id: 1, total: 5}\n  - {op: update, customer_id: 1, total: 12}\n".to_string(),
                )
            };
            files.push((format!("models/{name}.sql"), sql));
            files.push((
                format!("tests/{name}.yml"),
                format!("model: {name}\ngiven:\n  - {{customer_id: 1, amount: 5, region: eu}}\n  - {{customer_id: 1, amount: 7, region: eu}}\nexpect:\n{expect}"),
            ));
        }
    }
    files.push(("streamform.yml".into(), config));
    files.push(("sources.yml".into(), sources));
    files
}

fn fs_of(files: &[(String, String)]) -> MemoryFs {
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    MemoryFs::new(Path::new("/large"), &refs)
}

fn session(fs: &MemoryFs) -> Session {
    Session::load(Database::default(), fs, Path::new("/large"), None).expect("loads")
}

fn cold(c: &mut Criterion) {
    let mut group = c.benchmark_group("cold");
    group.sample_size(10);
    for n in [10, 100, 1000] {
        let files = generate(n, 7);
        let fs = fs_of(&files);
        group.bench_with_input(BenchmarkId::new("check", n), &n, |b, _| {
            b.iter(|| {
                let s = session(&fs);
                let report = streamform_db::parallel::check(&s.db, s.project());
                assert!(report.is_empty(), "{:?}", report.first());
                report.len()
            });
        });
        group.bench_with_input(BenchmarkId::new("check+test", n), &n, |b, _| {
            b.iter(|| {
                let s = session(&fs);
                let snapshot = Session::run(&s.db, s.project(), None);
                assert!(snapshot.diagnostics.is_empty());
                assert_eq!(snapshot.runs.len(), n);
                assert_eq!(
                    snapshot.failed(),
                    0,
                    "{:?}",
                    snapshot.runs.iter().find(|r| !r.passed).map(|r| &r.path)
                );
                snapshot.runs.len()
            });
        });
    }
    group.finish();
}

/// One edit in a live database, alternating between two texts so each iteration changes
/// something: the time to set the input and re-check + re-test.
fn live(c: &mut Criterion) {
    let n = 1000;
    let files = generate(n, 7);
    let text = |path: &str| files.iter().find(|(p, _)| p == path).unwrap().1.clone();
    let mut group = c.benchmark_group("live 1000");
    group.sample_size(10);
    let edits: [(&str, String, String); 4] = [
        (
            "models/m_0_9.sql",
            text("models/m_0_9.sql"),
            text("models/m_0_9.sql").replace("GROUP BY", "WHERE amount > -1 GROUP BY"),
        ),
        (
            "models/m_0_0.sql",
            text("models/m_0_0.sql"),
            text("models/m_0_0.sql") + " AND amount > -1",
        ),
        (
            "tests/m_0_5.yml",
            text("tests/m_0_5.yml"),
            text("tests/m_0_5.yml")
                .replace("amount: 7, region: eu}\n", "amount: 7.0, region: eu}\n"),
        ),
        (
            "sources.yml",
            text("sources.yml"),
            text("sources.yml").replace("topic: topic-0\n", "topic: topic-0b\n"),
        ),
    ];
    for (path, a, b) in edits {
        let fs = fs_of(&files);
        let mut s = session(&fs);
        Session::run(&s.db, s.project(), None);
        let mut flip = false;
        group.bench_function(path, |bench| {
            bench.iter(|| {
                flip = !flip;
                fs.write(&Path::new("/large").join(path), if flip { &b } else { &a });
                let touched = s.apply(&fs, &[path.to_string()]);
                assert_eq!(touched.len(), 1);
                let snapshot = Session::run(&s.db, s.project(), None);
                snapshot.runs.len()
            });
        });
    }
    group.finish();
}

criterion_group!(benches, cold, live);
criterion_main!(benches);
