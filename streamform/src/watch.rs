//! `streamform watch`: one live database across edits. The first run prints every
//! diagnostic and fixture; after each batch of file changes (debounced), only the inputs
//! whose text changed are set, check and the fixtures run again on a worker thread (a newer
//! batch cancels a stale run), and what changed since the last run is printed.
//!
//! The session (file registry, snapshot, comparison) is `streamform_db::watch`; this module
//! owns the file watcher, the worker and the rendering.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use notify_debouncer_full::notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, new_debouncer};
use streamform_db::load::RealFs;
use streamform_db::watch::{Changes, Session, Snapshot, compare};
use streamform_db::{Database, Severity};

use crate::{CANNOT_RUN, OK, Output, render};

/// How long the watcher waits for a burst of saves to settle.
pub const DEBOUNCE: Duration = Duration::from_millis(50);

/// What the loop waits for.
enum Message {
    /// Paths the watcher saw change.
    Changed(Vec<PathBuf>),
    /// A run finished: its generation, and its snapshot (`None` when it was cancelled).
    Ran(u64, Option<Snapshot>),
    /// Ctrl-C.
    Stop,
}

/// Runs `watch` until Ctrl-C (exit 0); exit 2 when the project cannot be loaded or watched.
pub fn watch(root: &Path, model: Option<String>, clear: bool, color: bool) -> (Output, u8) {
    use std::io::IsTerminal;
    let clear = clear && std::io::stdout().is_terminal();
    let fail = |message: String| {
        (
            Output {
                stdout: String::new(),
                stderr: format!("error: {message}\n"),
            },
            CANNOT_RUN,
        )
    };
    // One absolute form of the folder, so the watcher's paths and the project's agree
    // whatever form `--project` took (`..`, a symbolic link).
    let root = &match std::fs::canonicalize(root) {
        Ok(root) => root,
        Err(e) => return fail(format!("{}: {e}", root.display())),
    };
    let mut session = match Session::load(Database::default(), &RealFs, root, model) {
        Ok(session) => session,
        Err(e) => return fail(e.to_string()),
    };
    if let Some(m) = session.model()
        && !streamform_db::db::model_files(&session.db, session.project()).contains_key(m)
    {
        let help = streamform_db::db::unknown_model_help(&session.db, session.project(), m);
        return fail(format!(
            "there is no model `{m}` (no models/{m}.sql)\n  help: {help}"
        ));
    }
    let (tx, rx) = mpsc::channel::<Message>();
    let stop = tx.clone();
    if ctrlc::set_handler(move || {
        let _ = stop.send(Message::Stop);
    })
    .is_err()
    {
        return fail("cannot take Ctrl-C".into());
    }
    let changes = tx.clone();
    let mut debouncer = match new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| {
        if let Ok(events) = result {
            // Opening or reading a file is an event too (ours included: reading the project
            // would wake the watcher again); only changes count.
            let paths: Vec<PathBuf> = events
                .into_iter()
                .filter(|e| !matches!(e.kind, EventKind::Access(_)))
                .flat_map(|e| e.event.paths)
                .collect();
            if !paths.is_empty() {
                let _ = changes.send(Message::Changed(paths));
            }
        }
    }) {
        Ok(d) => d,
        Err(e) => return fail(format!("cannot watch {}: {e}", root.display())),
    };
    if let Err(e) = debouncer.watch(root, RecursiveMode::Recursive) {
        return fail(format!("cannot watch {}: {e}", root.display()));
    }

    let started = Instant::now();
    let mut last = Session::run(&session.db, session.project(), session.model());
    say(
        &first_report(&session, &last, started.elapsed(), color),
        clear,
        color,
    );
    say(
        &format!("watching {} for changes (Ctrl-C to stop)\n", root.display()),
        false,
        color,
    );

    let mut generation = 0u64;
    let mut touched_since: Vec<String> = Vec::new();
    let mut batch_started = Instant::now();
    loop {
        let Ok(message) = rx.recv() else {
            return (Output::default(), OK);
        };
        match message {
            Message::Stop => return (Output::default(), OK),
            Message::Changed(paths) => {
                let relative: Vec<String> = paths
                    .iter()
                    .filter_map(|p| p.strip_prefix(root).ok())
                    .filter_map(|p| p.to_str())
                    .map(|p| p.replace('\\', "/"))
                    .collect();
                if !root.is_dir() {
                    return (
                        Output {
                            stdout: String::new(),
                            stderr: format!(
                                "error: the project folder {} is gone; watching stopped\n",
                                root.display()
                            ),
                        },
                        CANNOT_RUN,
                    );
                }
                // Setting inputs cancels a run still going on a clone of the database.
                let mut touched = session.apply(&RealFs, &relative);
                // The folder itself was removed or moved, and another is in its place now
                // (removed and created again, or moved in): the watch on the old one sees
                // nothing more, so watch the new one, and read everything again.
                if paths.iter().any(|p| p == root) {
                    let _ = debouncer.unwatch(root);
                    if let Err(e) = debouncer.watch(root, RecursiveMode::Recursive) {
                        return fail(format!("cannot watch {}: {e}", root.display()));
                    }
                    touched.extend(session.reread_all(&RealFs));
                    touched.sort();
                    touched.dedup();
                }
                if touched.is_empty() {
                    continue;
                }
                if touched_since.is_empty() {
                    batch_started = Instant::now();
                }
                for t in touched {
                    if !touched_since.contains(&t) {
                        touched_since.push(t);
                    }
                }
                generation += 1;
                let db = session.db.clone();
                let project = session.project();
                let model = session.model().map(str::to_string);
                let done = tx.clone();
                let this = generation;
                // A deep expression recurses deeply in the planner: the same stack as the
                // command's own thread.
                let spawned = std::thread::Builder::new()
                    .stack_size(crate::STACK_BYTES)
                    .spawn(move || {
                        let snapshot = Session::run_cancellable(db, project, model.as_deref());
                        let _ = done.send(Message::Ran(this, snapshot));
                    });
                if let Err(e) = spawned {
                    return fail(format!("cannot start a run: {e}"));
                }
            }
            Message::Ran(run, Some(snapshot)) if run == generation => {
                let changes = compare(&session.db, &last, &snapshot, &touched_since);
                let report = change_report(
                    &session,
                    &touched_since,
                    &changes,
                    &snapshot,
                    batch_started.elapsed(),
                    color,
                );
                say(&report, clear, color);
                last = snapshot;
                touched_since.clear();
            }
            // A stale or cancelled run: a newer one is on its way.
            Message::Ran(..) => {}
        }
    }
}

/// Prints `text`, after clearing the terminal when asked; text from the project cannot
/// drive the terminal (see [`crate::render::harmless_output`]).
fn say(text: &str, clear: bool, color: bool) {
    let mut stdout = std::io::stdout().lock();
    if clear {
        let _ = write!(stdout, "\x1b[2J\x1b[H");
    }
    let text = crate::render::harmless_output(text, crate::render::Shown::Text, color);
    let _ = write!(stdout, "{text}");
    let _ = stdout.flush();
}

/// The first run: every diagnostic and every fixture, then the summary line.
fn first_report(session: &Session, snapshot: &Snapshot, elapsed: Duration, color: bool) -> String {
    let mut out = String::new();
    for d in &snapshot.diagnostics {
        out.push_str(&render::diagnostic(&session.db, d, color));
        out.push('\n');
    }
    for run in &snapshot.runs {
        out.push_str(&render::fixture_run(run, &snapshot.runs));
        out.push('\n');
    }
    out.push_str(&summary(snapshot, elapsed));
    out
}

/// What changed: new failures first, then fixed fixtures, failures that changed, fixtures
/// that no longer run, the diagnostics of the touched files, and the summary line.
fn change_report(
    session: &Session,
    touched: &[String],
    changes: &Changes,
    snapshot: &Snapshot,
    elapsed: Duration,
    color: bool,
) -> String {
    let mut out = format!("\n── {}\n", touched.join(", "));
    for run in changes.new_failures.iter().chain(&changes.still_failing) {
        out.push_str(&render::fixture_run(run, &snapshot.runs));
        out.push('\n');
    }
    for run in &changes.fixed {
        out.push_str(&format!("fixed: {} ({})\n", run.path, run.model));
    }
    for run in &changes.passing {
        out.push_str(&format!("pass: {} ({})\n", run.path, run.model));
    }
    for path in &changes.gone {
        out.push_str(&format!("not run: {path}\n"));
    }
    for d in &changes.resolved {
        let severity = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let place = d.path(&session.db).unwrap_or("the application");
        out.push_str(&format!(
            "resolved: {severity} in {place}: {}\n",
            streamform_ir::printable(&d.message)
        ));
    }
    for d in &changes.diagnostics {
        out.push_str(&render::diagnostic(&session.db, d, color));
        out.push('\n');
    }
    out.push_str(&summary(snapshot, elapsed));
    out
}

/// `watch: 3 fixtures: 2 passed, 1 failed; 0 errors, 1 warning; 12 ms`.
fn summary(snapshot: &Snapshot, elapsed: Duration) -> String {
    let failed = snapshot.failed();
    let mut line = format!(
        "watch: {}: {} passed, {failed} failed",
        // Every fixture the run is about, including those that could not run.
        render::plural(snapshot.runs.len() + snapshot.blocked.len(), "fixture"),
        snapshot.runs.len() - failed
    );
    if !snapshot.blocked.is_empty() {
        line.push_str(&format!(", {} not run", snapshot.blocked.len()));
    }
    line.push_str(&format!(
        "; {}, {}; {} ms\n",
        render::plural(snapshot.count(Severity::Error), "error"),
        render::plural(snapshot.count(Severity::Warning), "warning"),
        elapsed.as_millis()
    ));
    line
}
