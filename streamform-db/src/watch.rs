//! What `watch` computes: after each batch of edits, the project's diagnostics and every
//! fixture's run, asked of one live database, and what changed since the previous run.
//! Rendering is the CLI's; so are the file watcher and the worker thread.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use crate::Project;
use crate::db::{Database, Db, FixtureRun};
use crate::diagnostic::{Diagnostic, Severity};
use crate::load::{FileSystem, LoadError, Workspace};

/// One run: every diagnostic, and the run of every fixture that could run (those of
/// `model` only, when given), in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// What `check` reports.
    pub diagnostics: Vec<Diagnostic>,
    /// The fixtures that ran.
    pub runs: Vec<FixtureRun>,
    /// The fixtures that could not run (their file or their model does not check).
    pub blocked: Vec<String>,
}

impl Snapshot {
    /// Asks the database for every diagnostic and every fixture's run.
    pub fn take(db: &Database, project: Project, model: Option<&str>) -> Snapshot {
        let fixtures = project.fixtures(db).clone();
        let (diagnostics, results) = crate::parallel::check_and_run(db, project, &fixtures);
        let mut runs = Vec::new();
        let mut blocked = Vec::new();
        for (file, result) in fixtures.iter().zip(results) {
            match result {
                Some(run) if model.is_none_or(|m| m == run.model) => runs.push(run),
                Some(_) => {}
                None if model.is_none_or(|m| {
                    crate::db::fixture_def(db, project, *file).model.as_deref() == Some(m)
                }) =>
                {
                    blocked.push(file.path(db).clone())
                }
                None => {}
            }
        }
        Snapshot {
            diagnostics,
            runs,
            blocked,
        }
    }

    /// The number of diagnostics of `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    }

    /// The number of fixtures that ran and failed.
    pub fn failed(&self) -> usize {
        self.runs.iter().filter(|r| !r.passed).count()
    }
}

/// What changed from one run to the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changes {
    /// Fixtures that fail now and did not before (or are new), in file order.
    pub new_failures: Vec<FixtureRun>,
    /// Fixtures that failed before and pass now.
    pub fixed: Vec<FixtureRun>,
    /// Fixtures that still fail, but differently.
    pub still_failing: Vec<FixtureRun>,
    /// Fixtures that did not run before and pass now (new, or unblocked).
    pub passing: Vec<FixtureRun>,
    /// Fixtures that ran before and no longer do (deleted, or blocked by an error).
    pub gone: Vec<String>,
    /// The diagnostics of the files that changed, and any diagnostic that is new.
    pub diagnostics: Vec<Diagnostic>,
    /// Diagnostics of the previous run that no longer hold (the same code, file and
    /// message are not reported now).
    pub resolved: Vec<Diagnostic>,
}

/// What changed between `before` and `after`, given the files that changed.
pub fn compare(db: &dyn Db, before: &Snapshot, after: &Snapshot, touched: &[String]) -> Changes {
    let earlier: BTreeMap<&str, &FixtureRun> =
        before.runs.iter().map(|r| (r.path.as_str(), r)).collect();
    let later: BTreeMap<&str, &FixtureRun> =
        after.runs.iter().map(|r| (r.path.as_str(), r)).collect();
    let mut changes = Changes {
        new_failures: Vec::new(),
        fixed: Vec::new(),
        still_failing: Vec::new(),
        passing: Vec::new(),
        gone: Vec::new(),
        diagnostics: Vec::new(),
        resolved: Vec::new(),
    };
    for run in &after.runs {
        match earlier.get(run.path.as_str()) {
            Some(old) if old.passed && run.passed => {}
            Some(old) if !old.passed && run.passed => changes.fixed.push(run.clone()),
            Some(old) if !old.passed && !run.passed && *old != run => {
                changes.still_failing.push(run.clone());
            }
            Some(old) if !old.passed && !run.passed => {}
            // Passed before, fails now; or new and failing.
            Some(_) | None if !run.passed => changes.new_failures.push(run.clone()),
            Some(_) => {}
            None => changes.passing.push(run.clone()),
        }
    }
    changes.gone = before
        .runs
        .iter()
        .filter(|r| !later.contains_key(r.path.as_str()))
        .map(|r| r.path.clone())
        .collect();
    // Sets, not scans: a run may report tens of thousands of diagnostics.
    let earlier: HashSet<&Diagnostic> = before.diagnostics.iter().collect();
    changes.diagnostics = after
        .diagnostics
        .iter()
        .filter(|d| {
            d.path(db).is_some_and(|p| touched.iter().any(|t| t == p)) || !earlier.contains(d)
        })
        .cloned()
        .collect();
    let key = |d: &Diagnostic| (d.code, d.file, d.message.clone());
    let now: HashSet<_> = after.diagnostics.iter().map(key).collect();
    changes.resolved = before
        .diagnostics
        .iter()
        .filter(|d| !now.contains(&key(d)))
        .cloned()
        .collect();
    changes
}

/// A project kept live across edits: the database, its file registry and the last run.
pub struct Session {
    /// The database; the only writer is this session.
    pub db: Database,
    workspace: Workspace,
    model: Option<String>,
}

impl Session {
    /// Loads the project at `root`.
    ///
    /// # Errors
    /// When `root` is not a project.
    pub fn load(
        db: Database,
        fs: &dyn FileSystem,
        root: &Path,
        model: Option<String>,
    ) -> Result<Session, LoadError> {
        let workspace = Workspace::load(&db, fs, root)?;
        Ok(Session {
            db,
            workspace,
            model,
        })
    }

    /// The project input.
    pub fn project(&self) -> Project {
        self.workspace.project()
    }

    /// The project's folder.
    pub fn root(&self) -> &Path {
        self.workspace.root()
    }

    /// Applies a batch of changed paths (project-relative; anything that is not a project
    /// file is ignored) and returns the files whose contents changed: an empty list means
    /// nothing needs to run again.
    pub fn apply(&mut self, fs: &dyn FileSystem, changed: &[String]) -> Vec<String> {
        self.workspace.refresh(&mut self.db, fs, changed)
    }

    /// Reads every project file again and lists both folders again, as after a change to
    /// all of them (another folder was put in the project's place). Returns the paths
    /// whose contents changed.
    pub fn reread_all(&mut self, fs: &dyn FileSystem) -> Vec<String> {
        let mut everything = self.workspace.paths();
        everything.extend(["models".to_string(), "tests".to_string()]);
        self.apply(fs, &everything)
    }

    /// Runs check and the fixtures on `db` (this session's database, or a clone of it on
    /// another thread).
    pub fn run(db: &Database, project: Project, model: Option<&str>) -> Snapshot {
        Snapshot::take(db, project, model)
    }

    /// [`Session::run`] on a clone of the database, on another thread: `None` when the
    /// run was cancelled because the session set new inputs meanwhile.
    pub fn run_cancellable(
        db: Database,
        project: Project,
        model: Option<&str>,
    ) -> Option<Snapshot> {
        let snapshot = salsa::Cancelled::catch(|| Snapshot::take(&db, project, model)).ok();
        drop(db);
        snapshot
    }

    /// The model `--model` names, if any.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }
}
