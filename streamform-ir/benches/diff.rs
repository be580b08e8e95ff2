//! Time of the plan diff on large applications, built as manifests directly.
//!
//! - wide: 1,000 models of five nodes each (source → filter → aggregate → project → sink),
//!   every filter edited, so every aggregate is raised by propagation;
//! - deep: a chain of 1,000 models, each aggregating the one before, with the first
//!   model's filter edited, so the change propagates through every model.
//!
//! Run: `cargo bench -j 2 -p streamform-ir --bench diff`.

use criterion::{Criterion, criterion_group, criterion_main};
use streamform_ir::diff::{Classification, Hints, diff};
use streamform_ir::manifest::{
    ChangelogEntry, Column, MANIFEST_VERSION, Manifest, ModelEntry, NodeEntry, StateEntry,
};

fn col(name: &str, ty: &str) -> Column {
    Column {
        name: name.into(),
        ty: ty.into(),
    }
}

fn node(id: String, input: Option<String>, definition: &str, state: StateEntry) -> NodeEntry {
    let mut parts = id.split("::");
    let model = parts.next().unwrap().to_string();
    let operator = parts.next().unwrap().to_string();
    let keyed = matches!(state, StateEntry::Keyed { .. });
    NodeEntry {
        id: id.clone(),
        model,
        operator,
        inputs: input.into_iter().collect(),
        definition: definition.into(),
        schema: vec![col("k", "int64"), col("v", "decimal(38,9)")],
        schema_digest: "0".repeat(64),
        boundedness: "unbounded".into(),
        changelog: if keyed {
            ChangelogEntry::Upsert {
                key: vec!["k".into()],
            }
        } else {
            ChangelogEntry::Append
        },
        state,
        time: None,
    }
}

fn keyed() -> StateEntry {
    StateEntry::Keyed {
        keys: vec!["k".into()],
        accumulators: vec![col("sum(v)", "decimal(38,9)")],
        retention: "unbounded".into(),
        window: None,
        retracting: false,
        bounds: None,
        ranking: None,
        frame: None,
        digest: "4aead023aa01".repeat(6)[..64].to_string(),
    }
}

/// `models` models; `chained` makes each read the one before instead of its own source.
fn application(models: usize, chained: bool, filter: &str) -> Manifest {
    let mut manifest = Manifest {
        manifest_version: MANIFEST_VERSION,
        application_digest: String::new(),
        models: Vec::new(),
        nodes: Vec::new(),
    };
    for i in 0..models {
        let m = format!("m{i}");
        let input = if chained && i > 0 {
            Some(format!("m{}::sink::0", i - 1))
        } else {
            manifest.nodes.push(node(
                format!("{m}::source::0"),
                None,
                "orders (kafka orders)",
                StateEntry::Stateless,
            ));
            Some(format!("{m}::source::0"))
        };
        let predicate = if chained && i > 0 { "(v > 0)" } else { filter };
        for (id, input, definition, state) in [
            (
                format!("{m}::filter::0"),
                input,
                predicate,
                StateEntry::Stateless,
            ),
            (
                format!("{m}::aggregate::0"),
                Some(format!("{m}::filter::0")),
                "key=[k] aggregates=[sum(v)]",
                keyed(),
            ),
            (
                format!("{m}::project::0"),
                Some(format!("{m}::aggregate::0")),
                "k, sum(v) AS v",
                StateEntry::Stateless,
            ),
            (
                format!("{m}::sink::0"),
                Some(format!("{m}::project::0")),
                "upsert kafka out",
                StateEntry::Stateless,
            ),
        ] {
            manifest.nodes.push(node(id, input, definition, state));
        }
        manifest.models.push(ModelEntry {
            name: m.clone(),
            materialized: "upsert".into(),
            key: vec!["k".into()],
            output: format!("{m}::sink::0"),
        });
    }
    manifest
}

fn bench(c: &mut Criterion) {
    let hints = Hints::default();
    for (name, chained) in [("wide", false), ("deep", true)] {
        let running = application(1_000, chained, "(v > 0)");
        let desired = application(1_000, chained, "(v > 1)");
        c.bench_function(&format!("diff {name}: 1,000 models"), |b| {
            b.iter(|| {
                let d = diff(&running, &desired, &hints);
                assert_eq!(d.verdict, Classification::BackfillRequired);
                d.models.len()
            });
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
