//! Both cores for independent work: while one thread asks a query over the whole project,
//! a second handle of the same database lowers models or runs fixtures that the query will
//! need. Salsa computes each result once, whichever thread asks first, and makes the other
//! wait for it, so the answers are the ones one thread would give.

use crate::Project;
use crate::SourceFile;
use crate::db::{Database, FixtureRun, check_report, fixture_result, lower_model, model_files};
use crate::diagnostic::Diagnostic;

/// The stack of the second thread: a deep expression recurses deeply in the planner.
pub const STACK_BYTES: usize = 512 * 1024 * 1024;

/// From how many models or fixtures on the second core is used.
const PARALLEL_FROM: usize = 32;

/// Runs `first` here and `second` on another handle of `db` at the same time, when
/// `parallel`; else both here, `first` first.
fn both<A, B>(
    db: &Database,
    parallel: bool,
    first: impl FnOnce(&Database) -> A,
    second: impl Fn(&Database) -> B + Sync,
) -> (A, B)
where
    B: Send,
{
    if !parallel {
        let a = first(db);
        return (a, second(db));
    }
    let second = &second;
    std::thread::scope(|scope| {
        let other = db.clone();
        let helper = std::thread::Builder::new()
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, move || second(&other));
        let a = first(db);
        let b = match helper {
            Ok(helper) => match helper.join() {
                Ok(b) => b,
                // A cancelled helper (the inputs changed): cancel this run too.
                Err(panic) => std::panic::resume_unwind(panic),
            },
            // No thread to be had: do it here.
            Err(_) => second(db),
        };
        (a, b)
    })
}

/// What `check` reports, in file order (see [`crate::diagnostic::in_file_order`]), with the
/// second core lowering the later half of the models meanwhile.
pub fn check(db: &Database, project: Project) -> Vec<Diagnostic> {
    let models: Vec<String> = model_files(db, project).keys().cloned().collect();
    let half = models.len() / 2;
    let (report, ()) = both(
        db,
        half >= PARALLEL_FROM,
        |db| check_report(db, project).clone(),
        |other| {
            for name in &models[half..] {
                lower_model(other, project, name.clone());
            }
        },
    );
    crate::diagnostic::in_file_order(report)
}

/// What `check` reports and the run of each of `fixtures` (`None` for one that cannot
/// run), with the second core running the later half of the fixtures meanwhile.
pub fn check_and_run(
    db: &Database,
    project: Project,
    fixtures: &[SourceFile],
) -> (Vec<Diagnostic>, Vec<Option<FixtureRun>>) {
    let half = fixtures.len() / 2;
    let run = |db: &Database, files: &[SourceFile]| -> Vec<Option<FixtureRun>> {
        files
            .iter()
            .map(|f| fixture_result(db, project, *f).clone())
            .collect()
    };
    let ((diagnostics, mut results), rest) = both(
        db,
        half >= PARALLEL_FROM,
        |db| {
            (
                check_report(db, project).clone(),
                run(db, &fixtures[..half]),
            )
        },
        |other| run(other, &fixtures[half..]),
    );
    results.extend(rest);
    (diagnostics, results)
}
