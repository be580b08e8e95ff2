//! Wall time of a cold `check` on examples/order-pipeline: a fresh database, the files read
//! from disk, every model planned and lowered, every fixture typed.
//!
//! Run: `cargo bench -j 2 -p streamform-db --bench check`.

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use streamform_db::Database;
use streamform_db::db::check_report;
use streamform_db::load::load_project;

fn cold_check(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/order-pipeline");
    c.bench_function("cold check order-pipeline", |b| {
        b.iter(|| {
            let db = Database::default();
            let project = load_project(&db, &root).expect("example loads");
            let diags = check_report(&db, project);
            assert!(diags.is_empty());
            diags.len()
        });
    });
}

criterion_group!(benches, cold_check);
criterion_main!(benches);
