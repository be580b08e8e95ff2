//! `streamform`: the command-line interface. It parses arguments, loads the project into the
//! query database, asks queries, renders their results and chooses the exit code; all
//! semantics live in the library crates.
//!
//! Exit codes (docs/commands.md, "Common behaviour"): 0 success, 1 the project or fixtures
//! are not valid, 2 the command could not run.

mod apply;
mod build;
mod lifecycle;
mod plan;
mod render;
mod status;
mod watch;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use streamform_db::db::{
    self, application_manifest, check_report, dependency_graph, model_files, project_config,
};
use streamform_db::load::load_project;
use streamform_db::{Database, Diagnostic, Project, Severity};
use streamform_ir::ModelPlan;
use streamform_ir::manifest::ModelSlice;

/// Test stateful streaming SQL: check, explain and test a Streamform project, build it as
/// Flink SQL, say what a change costs the running state, and apply it to a Flink cluster.
#[derive(Parser)]
#[command(name = "streamform", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args)]
struct ProjectArg {
    /// The project directory (the one holding streamform.yml).
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
}

#[derive(Subcommand)]
enum Command {
    /// Load and validate a Streamform project.
    Check {
        #[command(flatten)]
        project: ProjectArg,
        /// Treat warnings as errors.
        #[arg(long)]
        strict: bool,
        /// Print the check report (check_version 1) instead, and nothing else on stdout;
        /// printed even when the project cannot be loaded (loaded: false, exit 2).
        #[arg(long)]
        json: bool,
    },
    /// Print the streaming plan for a model (every model, in dependency order, without one).
    ///
    /// With --json, print the model's slice of the plan manifest (a model must be named).
    /// Exit 2 for an unknown model or a model that does not compile.
    Explain {
        /// The model to explain.
        model: Option<String>,
        #[command(flatten)]
        project: ProjectArg,
        /// Print the model's slice of the plan manifest as JSON instead.
        #[arg(long)]
        json: bool,
    },
    /// Run every fixture in tests/ through the simulator and assert its changelog.
    Test {
        #[command(flatten)]
        project: ProjectArg,
        /// Run only the fixtures for this model.
        #[arg(long, value_name = "NAME")]
        model: Option<String>,
        /// Print the test report (report_version 1) instead: every fixture with every
        /// comparison row, values rendered after typing.
        #[arg(long)]
        json: bool,
        /// Also write a JUnit XML report to FILE: one test case per fixture, a failure's
        /// message its first difference and its body the side-by-side listing.
        #[arg(long, value_name = "FILE")]
        junit: Option<std::path::PathBuf>,
    },
    /// Print the model dependency graph: sources, models, and sinks.
    Graph {
        #[command(flatten)]
        project: ProjectArg,
        /// Output format.
        #[arg(long, value_enum, default_value_t = GraphFormat::Text)]
        format: GraphFormat,
        /// Print the graph document (graph_version 1) instead; a reference cycle is listed
        /// in it, with exit 1.
        #[arg(long, conflicts_with = "format")]
        json: bool,
    },
    /// Print the JSON Schema (draft 2020-12) of a document this build reads or writes.
    ///
    /// The schema is generated from the type the binary reads or writes the document with.
    /// --list names every document, the version this build speaks and where it appears.
    /// --version N exits 2 when this build speaks another version of the document.
    #[command(
        override_usage = "streamform schema [OPTIONS] <DOCUMENT>\n       streamform schema --list"
    )]
    Schema {
        /// Accepted like every command's; a schema does not depend on the project.
        #[command(flatten)]
        _project: ProjectArg,
        /// The document: project, sources, fixture, plan-manifest, plan-manifest-slice,
        /// applied-record, diff, status, check-report, test-report or graph.
        #[arg(required_unless_present = "list")]
        document: Option<String>,
        /// List the documents instead.
        #[arg(long, conflicts_with = "document")]
        list: bool,
        /// Refuse (exit 2) unless this build speaks this version of the document.
        #[arg(long, value_name = "N", conflicts_with = "list")]
        version: Option<u32>,
    },
    /// Generate the application for a backend, without submitting it.
    ///
    /// Writes build/flink/application.sql and build/plan.json under the project, or prints
    /// the SQL with --stdout and writes nothing. Exit 1 when the backend cannot represent the
    /// application, 2 when the project does not pass check or the target is unknown.
    Build {
        #[command(flatten)]
        project: ProjectArg,
        /// The backend to generate for.
        #[arg(long, value_enum)]
        backend: Backend,
        /// The target whose Kafka settings the application uses (required when the project
        /// declares more than one).
        #[arg(long, value_name = "NAME")]
        target: Option<String>,
        /// Print the SQL to standard output and write nothing.
        #[arg(long)]
        stdout: bool,
    },
    /// Build the application and deploy it to a target's Flink, keeping its state.
    ///
    /// First compares the plan with the target's applied record, as `plan` does, and prints
    /// the verdict. Then: when the recorded job runs this plan, nothing to apply (no new
    /// job); when the recorded job was stopped (or ended) and the plan is unchanged, a new
    /// job continues from its savepoint, and the restore is checked with Flink; when nothing
    /// is recorded, a new job starts; going back to statements that ran before continues
    /// from the savepoint their job left. Any other change is refused before anything is
    /// touched, because Flink carries state only across identical statements: --rebuild
    /// stops the job with a savepoint (kept) and starts the new plan with empty state. Each job
    /// gets an id chosen by streamform and recorded before submission, and apply reports
    /// success only once the job runs. Exit 1 when apply refuses, Flink rejects a statement
    /// or the job fails while starting, or the backend cannot represent the application; 2
    /// when the project does not pass check, the target is unknown, the record cannot be
    /// read or written, another apply holds the target's lock, or Flink cannot be reached,
    /// does not answer in time, or cannot take a savepoint.
    Apply {
        #[command(flatten)]
        project: ProjectArg,
        /// The target to apply to (required when the project declares more than one).
        #[arg(long, value_name = "NAME")]
        target: Option<String>,
        /// How long to wait for each statement, for the job to run and for a savepoint, in
        /// seconds (1 to 86400).
        #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
        timeout: u64,
        /// Replace the recorded job even though its state cannot be carried: stop it with a
        /// savepoint (kept for rollback) and start this plan with empty state.
        #[arg(long)]
        rebuild: bool,
    },
    /// Compare the target's applied record with what its Flink cluster runs (read-only).
    ///
    /// Shows the recorded job's state and uptime, its last checkpoint, the last savepoint
    /// on record, and any other job of this application. Exit 0 when the cluster matches
    /// the record (the recorded job runs the recorded plan, or is stopped as recorded), 1
    /// on drift (the recorded job gone, failed, restarting or running another plan, an
    /// unfinished apply, a second job of this application), 2 when streamform.yml has
    /// errors, the cluster cannot be asked, or the record cannot be read or belongs to
    /// another target or project.
    Status {
        #[command(flatten)]
        project: ProjectArg,
        /// The target to look at (required when the project declares more than one).
        #[arg(long, value_name = "NAME")]
        target: Option<String>,
        /// Print the status document (status_version 1) instead.
        #[arg(long)]
        json: bool,
        /// How long to wait for each request to Flink, in seconds (1 to 86400).
        #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86_400))]
        timeout: u64,
    },
    /// Stop the target's recorded job with a savepoint and record the savepoint.
    ///
    /// The next apply of the same plan starts a job that continues from it. Exit 0 when the
    /// job was stopped (or nothing runs), 1 when the recorded job ended without streamform
    /// (no savepoint can be taken), 2 when the savepoint cannot be taken (the job runs on),
    /// streamform.yml has errors, Flink cannot be reached, another command holds the
    /// target's lock, or the record cannot be read or written or belongs to another target
    /// or project.
    Stop {
        #[command(flatten)]
        project: ProjectArg,
        /// The target to stop (required when the project declares more than one).
        #[arg(long, value_name = "NAME")]
        target: Option<String>,
        /// How long to wait for the savepoint and for each request to Flink, in seconds
        /// (1 to 86400).
        #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
        timeout: u64,
    },
    /// Keep checking and testing the project as its files change.
    ///
    /// Runs check and every fixture, prints the results, then watches the project folder:
    /// after each batch of saves it reruns exactly what the edited files reach and prints
    /// what changed (new failures first, fixed fixtures, the diagnostics of the edited
    /// files) and a summary line with the time taken. Files under build/, .streamform/,
    /// target/ or hidden folders never trigger a run. A broken file, streamform.yml
    /// included, is reported and watching goes on. Ctrl-C stops it (exit 0); exit 2 when the
    /// folder is not a project (no streamform.yml), cannot be watched, or disappears.
    Watch {
        #[command(flatten)]
        project: ProjectArg,
        /// Run only the fixtures of this model.
        #[arg(long, value_name = "NAME")]
        model: Option<String>,
        /// Clear the terminal before each report.
        #[arg(long)]
        clear: bool,
    },
    /// Print the stable identity of the plan: node ids, digests, schemas, and contracts.
    ///
    /// Without a model, every model in dependency order followed by the application digest.
    /// Exit 2 for an unknown model, a model that does not compile, or a reference cycle.
    InspectPlan {
        /// The model to inspect.
        model: Option<String>,
        #[command(flatten)]
        project: ProjectArg,
        /// Print the plan manifest (or the model's slice of it) as JSON instead.
        #[arg(long)]
        json: bool,
    },
    /// Compare the running plan with the desired plan and classify every change.
    ///
    /// The desired plan is compiled from the project; the running plan is the target's
    /// applied record (.streamform/applied/<target>.json, written by apply) or, with
    /// --against, a plan manifest (build/plan.json) or an applied record. Each change is
    /// SAFE, COMPATIBLE, STATE MIGRATION REQUIRED, BACKFILL REQUIRED or STATE INCOMPATIBLE.
    /// Exit 0 when the verdict is SAFE or COMPATIBLE, 1 above, 2 when the project does not
    /// pass check, no target can be chosen, or the running plan cannot be read.
    Plan {
        #[command(flatten)]
        project: ProjectArg,
        /// The target whose applied record is the running plan (required when the project
        /// declares more than one, unless --against names the running plan).
        #[arg(long, value_name = "NAME")]
        target: Option<String>,
        /// Compare with this plan manifest or applied record instead of the target's record.
        #[arg(long, value_name = "FILE")]
        against: Option<PathBuf>,
        /// Print the diff document (diff_version 1) instead.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Backend {
    /// Apache Flink SQL, submitted through the SQL Gateway.
    Flink,
}

#[derive(Clone, Copy, ValueEnum)]
enum GraphFormat {
    Text,
    Dot,
}

/// The simulator allocates a row per record: mimalloc runs it about half again as fast
/// as the system allocator (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Exit codes of every command.
pub(crate) const OK: u8 = 0;
pub(crate) const INVALID: u8 = 1;
pub(crate) const CANNOT_RUN: u8 = 2;

/// Stack for the command thread: SQL and YAML are trees, and deeply nested input (a long
/// chain of ORs, a long chain of models) recurses deeply in the parser and the planner. The
/// same stack as the database's own second thread.
pub(crate) use streamform_db::parallel::STACK_BYTES;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let worker = std::thread::Builder::new()
        .stack_size(STACK_BYTES)
        .spawn(move || run(cli));
    match worker.map(|h| h.join()) {
        Ok(Ok(code)) => code,
        _ => ExitCode::from(CANNOT_RUN),
    }
}

fn run(cli: Cli) -> ExitCode {
    let color = std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let db = Database::default();
    let shown = match &cli.command {
        Command::Build { stdout: true, .. } => render::Shown::Exact,
        Command::Check { json: true, .. }
        | Command::Explain { json: true, .. }
        | Command::InspectPlan { json: true, .. }
        | Command::Test { json: true, .. }
        | Command::Status { json: true, .. }
        | Command::Plan { json: true, .. }
        | Command::Graph { json: true, .. } => render::Shown::Json,
        _ => render::Shown::Text,
    };
    let (out, code) = match cli.command {
        Command::Check {
            project,
            strict,
            json: true,
        } => check_json(&db, &project, strict),
        Command::Check {
            project, strict, ..
        } => with_project(&db, &project, color, |p| check(&db, p, strict, color)),
        Command::Explain {
            model,
            project,
            json,
        } => with_project(&db, &project, color, |p| {
            explain(&db, p, model.as_deref(), json, color)
        }),
        Command::InspectPlan {
            model,
            project,
            json,
        } => with_project(&db, &project, color, |p| {
            inspect_plan(&db, p, model.as_deref(), json, color)
        }),
        Command::Test {
            project,
            model,
            json,
            junit,
        } => with_project(&db, &project, color, |p| {
            let junit = junit
                .as_deref()
                .map(|file| (file, project.project.as_path()));
            test(&db, p, model.as_deref(), json, junit, color)
        }),
        Command::Build {
            project,
            backend: Backend::Flink,
            target,
            stdout,
        } => with_project(&db, &project, color, |p| {
            build::build(&db, p, &project.project, target.as_deref(), stdout, color)
        }),
        Command::Apply {
            project,
            target,
            timeout,
            rebuild,
        } => with_project(&db, &project, color, |p| {
            apply::apply(
                &db,
                p,
                &project.project,
                target.as_deref(),
                std::time::Duration::from_secs(timeout.max(1)),
                rebuild,
                color,
            )
        }),
        Command::Status {
            project,
            target,
            json,
            timeout,
        } => with_project(&db, &project, color, |p| {
            status::status(
                &db,
                p,
                &project.project,
                target.as_deref(),
                std::time::Duration::from_secs(timeout.max(1)),
                json,
                color,
            )
        }),
        Command::Stop {
            project,
            target,
            timeout,
        } => with_project(&db, &project, color, |p| {
            status::stop(
                &db,
                p,
                &project.project,
                target.as_deref(),
                std::time::Duration::from_secs(timeout.max(1)),
                color,
            )
        }),
        Command::Plan {
            project,
            target,
            against,
            json,
        } => with_project(&db, &project, color, |p| {
            plan::plan(
                &db,
                p,
                &project.project,
                target.as_deref(),
                against.as_deref(),
                json,
                color,
            )
        }),
        Command::Watch {
            project,
            model,
            clear,
        } => watch::watch(&project.project, model, clear, color),
        Command::Graph {
            project,
            json: true,
            ..
        } => with_project(&db, &project, color, |p| graph_json(&db, p)),
        Command::Graph {
            project, format, ..
        } => with_project(&db, &project, color, |p| graph(&db, p, format, color)),
        Command::Schema {
            document,
            list,
            version,
            ..
        } => schema(document.as_deref(), list, version),
    };
    // The last line of defence: text from the project reaches the terminal only as text.
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(render::harmless_output(&out.stdout, shown, color).as_bytes())
        .and_then(|()| stdout.flush());
    let _ = std::io::stderr()
        .write_all(render::harmless_output(&out.stderr, render::Shown::Text, color).as_bytes());
    if let Err(e) = written {
        // A report that did not reach its reader (a full disk, a closed pipe) is not a
        // result a script may act on.
        let _ = writeln!(
            std::io::stderr(),
            "error: could not write to standard output: {e}"
        );
        return ExitCode::from(CANNOT_RUN);
    }
    ExitCode::from(code)
}

/// What a command prints.
#[derive(Default)]
pub(crate) struct Output {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

fn with_project(
    db: &Database,
    arg: &ProjectArg,
    color: bool,
    f: impl FnOnce(Project) -> (Output, u8),
) -> (Output, u8) {
    match load_project(db, &arg.project) {
        Ok(p) => {
            if project_config(db, p).config.is_none() {
                let mut out = Output::default();
                for d in &project_config(db, p).diagnostics {
                    out.stderr.push_str(&render::diagnostic(db, d, color));
                }
                out.stderr
                    .push_str("error: the project could not be loaded\n");
                return (out, CANNOT_RUN);
            }
            f(p)
        }
        Err(e) => {
            let stderr = format!(
                "error: {e}\n  help: run streamform inside a project directory, or pass --project DIR\n"
            );
            (
                Output {
                    stdout: String::new(),
                    stderr,
                },
                CANNOT_RUN,
            )
        }
    }
}

/// `check`'s exit code: 2 when a file cannot be read (the check is incomplete), else 1 when
/// it found problems.
fn check_exit(diags: &[Diagnostic], failed: bool) -> u8 {
    if diags.iter().any(|d| d.code.means_unreadable()) {
        CANNOT_RUN
    } else if failed {
        INVALID
    } else {
        OK
    }
}

fn count_severity(diags: &[Diagnostic], s: Severity) -> usize {
    diags.iter().filter(|d| d.severity == s).count()
}

fn check(db: &Database, project: Project, strict: bool, color: bool) -> (Output, u8) {
    let diags = &streamform_db::parallel::check(db, project);
    let mut out = Output {
        stdout: render::check_summary(db, project),
        stderr: String::new(),
    };
    out.stdout
        .push_str(&render::diagnostics(db, diags.iter(), color));
    let errors = count_severity(diags, Severity::Error);
    let warnings = count_severity(diags, Severity::Warning);
    let failed = errors > 0 || (strict && warnings > 0);
    out.stdout
        .push_str(&render::check_count(db, project, errors, warnings, failed));
    (out, check_exit(diags, failed))
}

/// Prints the diagnostics that stop a command and says to run check.
pub(crate) fn refuse_with_errors(
    db: &Database,
    project: Project,
    color: bool,
) -> Option<(Output, u8)> {
    let diags = &streamform_db::parallel::check(db, project);
    let errors = count_severity(diags, Severity::Error);
    if errors == 0 {
        return None;
    }
    let mut out = Output {
        stdout: String::new(),
        stderr: render::diagnostics(
            db,
            diags.iter().filter(|d| d.severity == Severity::Error),
            color,
        ),
    };
    out.stderr.push_str(&format!(
        "error: the project has {} that `streamform check` reports; fix {} first\n",
        render::plural(errors, "error"),
        if errors == 1 { "it" } else { "them" }
    ));
    Some((out, CANNOT_RUN))
}

fn unknown_model(db: &Database, project: Project, name: &str) -> (Output, u8) {
    let help = db::unknown_model_help(db, project, name);
    (
        Output {
            stdout: String::new(),
            stderr: format!(
                "error: there is no model `{name}` (no models/{name}.sql)\n  help: {help}\n",
                name = streamform_ir::printable(name)
            ),
        },
        CANNOT_RUN,
    )
}

/// The model's plan, or the output that refuses it: its compile errors (or, when the model
/// is only blocked by another one, every error check reports) and exit 2.
fn compiled_plan(
    db: &Database,
    project: Project,
    name: &str,
    color: bool,
) -> Result<ModelPlan, (Output, u8)> {
    let lowered = db::lower_model(db, project, name.to_string());
    if let Some(plan) = &lowered.plan {
        return Ok(plan.clone());
    }
    let mut diags: Vec<Diagnostic> = db::lowering_diagnostics(db, project, name);
    if diags.is_empty() {
        diags = check_report(db, project)
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .cloned()
            .collect();
    }
    let mut out = Output::default();
    for d in &diags {
        out.stderr.push_str(&render::diagnostic(db, d, color));
        out.stderr.push('\n');
    }
    out.stderr
        .push_str(&format!("error: model `{name}` does not compile\n"));
    Err((out, CANNOT_RUN))
}

/// The plans a command is about: the named model's (exit 2 when there is no such model),
/// or every model's in dependency order; the first model that does not compile stops with
/// its errors. Fixture errors do not matter here.
fn compiled_plans(
    db: &Database,
    project: Project,
    model: Option<&str>,
    color: bool,
) -> Result<Vec<ModelPlan>, (Output, u8)> {
    let names = match model {
        Some(m) if !model_files(db, project).contains_key(m) => {
            return Err(unknown_model(db, project, m));
        }
        Some(m) => vec![m.to_string()],
        None => {
            let graph = dependency_graph(db, project);
            // The models of a cycle have no place in the order: say so rather than leave
            // them out.
            if !graph.cycles.is_empty() {
                return Err(graph_cycle(db, project, color));
            }
            graph.order.clone()
        }
    };
    names
        .iter()
        .map(|name| compiled_plan(db, project, name, color))
        .collect()
}

fn explain(
    db: &Database,
    project: Project,
    model: Option<&str>,
    json: bool,
    color: bool,
) -> (Output, u8) {
    if json && model.is_none() {
        return (
            Output {
                stdout: String::new(),
                stderr: "error: explain --json prints one model's slice of the plan manifest; name the model\n  help: `streamform inspect-plan --json` prints the manifest of the whole application\n".into(),
            },
            CANNOT_RUN,
        );
    }
    let plans = match compiled_plans(db, project, model, color) {
        Ok(plans) => plans,
        Err(refused) => return refused,
    };
    let mut out = Output::default();
    for (i, plan) in plans.iter().enumerate() {
        if i > 0 {
            out.stdout.push('\n');
        }
        if json {
            out.stdout
                .push_str(&ModelSlice::from_plan(plan).to_json_pretty());
        } else {
            out.stdout
                .push_str(&streamform_ir::explain::render_model(plan));
        }
    }
    (out, OK)
}

fn inspect_plan(
    db: &Database,
    project: Project,
    model: Option<&str>,
    json: bool,
    color: bool,
) -> (Output, u8) {
    let plans = match compiled_plans(db, project, model, color) {
        Ok(plans) => plans,
        Err(refused) => return refused,
    };
    let stdout = match (model, json) {
        (Some(_), _) => {
            let slice = ModelSlice::from_plan(&plans[0]);
            if json {
                slice.to_json_pretty()
            } else {
                streamform_ir::inspect::render_model(&slice.model, &slice.nodes)
            }
        }
        (None, _) => {
            let Some(manifest) = application_manifest(db, project) else {
                // Every model in the order compiled, so the graph has a cycle.
                return graph_cycle(db, project, color);
            };
            if json {
                manifest.to_json_pretty()
            } else {
                streamform_ir::inspect::render_manifest(manifest)
            }
        }
    };
    (
        Output {
            stdout,
            stderr: String::new(),
        },
        OK,
    )
}

/// `test`; `junit` is the report's file and the project's folder.
fn test(
    db: &Database,
    project: Project,
    model: Option<&str>,
    json: bool,
    junit: Option<(&std::path::Path, &std::path::Path)>,
    color: bool,
) -> (Output, u8) {
    if let Some(m) = model
        && !model_files(db, project).contains_key(m)
    {
        return unknown_model(db, project, m);
    }
    if let Some((path, root)) = junit
        && streamform_db::load::is_project_input(root, path)
    {
        let stderr = format!(
            "error: --junit {} names a file of the project, which the report would overwrite\n  help: write the report elsewhere, e.g. --junit build/reports/streamform.xml\n",
            streamform_ir::printable(&path.display().to_string())
        );
        return (
            Output {
                stdout: String::new(),
                stderr,
            },
            CANNOT_RUN,
        );
    }
    if let Some(refused) = refuse_with_errors(db, project, color) {
        return refused;
    }
    let fixtures = project.fixtures(db).clone();
    let (_, results) = streamform_db::parallel::check_and_run(db, project, &fixtures);
    let runs: Vec<_> = results
        .into_iter()
        .flatten()
        .filter(|run| model.is_none_or(|m| m == run.model))
        .collect();
    let (mut out, code) = test_output(db, project, model, json, &runs);
    if let Some((path, _)) = junit {
        let name = project_config(db, project)
            .config
            .as_ref()
            .map_or("streamform", |c| c.name.as_str());
        if let Err(e) = render::write_junit(path, name, &runs) {
            // The run's own output stands; the missing report makes it exit 2.
            out.stderr.push_str(&format!(
                "error: cannot write the JUnit report {}: {e}\n  help: name a file in a folder you can write to\n",
                streamform_ir::printable(&path.display().to_string())
            ));
            return (out, CANNOT_RUN);
        }
    }
    (out, code)
}

/// What `test` prints for `runs`, and its exit code.
fn test_output(
    db: &Database,
    project: Project,
    model: Option<&str>,
    json: bool,
    runs: &[streamform_db::db::FixtureRun],
) -> (Output, u8) {
    let mut out = Output::default();
    if json {
        let report = streamform_db::report::TestReport::new(runs);
        out.stdout = document(&report);
        return (out, if report.passed { OK } else { INVALID });
    }
    if runs.is_empty() {
        out.stdout = match model {
            Some(m) if !project.fixtures(db).is_empty() => {
                format!("ok: no fixtures for model `{m}` under tests/\n")
            }
            _ => "ok: no fixtures under tests/\n".to_string(),
        };
        return (out, OK);
    }
    for run in runs {
        out.stdout.push_str(&render::fixture_run(run, runs));
        out.stdout.push('\n');
    }
    let failed = runs.iter().filter(|r| !r.passed).count();
    if failed == 0 {
        out.stdout.push_str(&format!(
            "ok: {} passed\n",
            render::plural(runs.len(), "fixture")
        ));
        (out, OK)
    } else {
        out.stdout.push_str(&format!(
            "failed: {failed} of {}\n",
            render::plural(runs.len(), "fixture")
        ));
        (out, INVALID)
    }
}

/// Refuses to draw a graph that would leave part of the project out (a file that cannot
/// be read, a source declared with errors): the diagnostics that say why, exit 2.
fn refuse_unreadable(db: &Database, project: Project, color: bool) -> Option<(Output, u8)> {
    let gaps = streamform_db::report::graph_gaps(db, project);
    if gaps.is_empty() {
        return None;
    }
    let mut out = Output::default();
    for d in &gaps {
        out.stderr.push_str(&render::diagnostic(db, d, color));
    }
    out.stderr.push_str(
        "error: part of the project cannot be read, so the graph would be incomplete\n  help: fix the errors above (streamform check lists every problem) and draw the graph again\n",
    );
    Some((out, CANNOT_RUN))
}

fn graph(db: &Database, project: Project, format: GraphFormat, color: bool) -> (Output, u8) {
    if let Some(refused) = refuse_unreadable(db, project, color) {
        return refused;
    }
    if !dependency_graph(db, project).cycles.is_empty() {
        return graph_cycle(db, project, color);
    }
    let text = match format {
        GraphFormat::Text => render::graph_text(db, project),
        GraphFormat::Dot => render::graph_dot(db, project),
    };
    (
        Output {
            stdout: text,
            stderr: String::new(),
        },
        OK,
    )
}

/// `graph --json`: the graph document; exit 1 when it lists a reference cycle.
fn graph_json(db: &Database, project: Project) -> (Output, u8) {
    if let Some(refused) = refuse_unreadable(db, project, false) {
        return refused;
    }
    let graph = streamform_db::report::Graph::new(db, project);
    let code = if graph.cycles.is_empty() { OK } else { INVALID };
    (
        Output {
            stdout: document(&graph),
            stderr: String::new(),
        },
        code,
    )
}

/// A document as `--json` prints it: pretty JSON and a newline.
fn document(value: &impl serde::Serialize) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("a report serializes");
    text.push('\n');
    text
}

/// `check --json`: the check report, also when the project does not load (exit 2).
fn check_json(db: &Database, arg: &ProjectArg, strict: bool) -> (Output, u8) {
    use streamform_db::report::{CheckReport, DiagnosticEntry};
    let not_loaded = |message: String, help: Option<String>, path: Option<String>| {
        let reason = DiagnosticEntry {
            severity: "error".into(),
            code: "file-missing".into(),
            path,
            line: None,
            column: None,
            message,
            help,
        };
        (
            Output {
                stdout: document(&CheckReport::not_loaded(strict, reason)),
                stderr: String::new(),
            },
            CANNOT_RUN,
        )
    };
    let project = match load_project(db, &arg.project) {
        Ok(p) => p,
        Err(e) => {
            return not_loaded(
                e.to_string(),
                Some("run streamform inside a project directory, or pass --project DIR".into()),
                None,
            );
        }
    };
    if project_config(db, project).config.is_none() {
        // streamform.yml's own diagnostics say why, the first of them as the reason.
        let (mut out, code) = not_loaded(
            "the project could not be loaded".into(),
            None,
            Some("streamform.yml".into()),
        );
        let diags = &project_config(db, project).diagnostics;
        if !diags.is_empty() {
            let mut report = CheckReport::not_loaded(strict, DiagnosticEntry::of(db, &diags[0]));
            report.diagnostics = diags.iter().map(|d| DiagnosticEntry::of(db, d)).collect();
            out.stdout = document(&report);
        }
        return (out, code);
    }
    let diags = &streamform_db::parallel::check(db, project);
    let report = CheckReport::new(db, project, diags, strict);
    let code = check_exit(diags, !report.passed);
    (
        Output {
            stdout: document(&report),
            stderr: String::new(),
        },
        code,
    )
}

/// `schema`: the list of documents, or one document's JSON Schema.
fn schema(name: Option<&str>, list: bool, version: Option<u32>) -> (Output, u8) {
    use streamform_db::report::DOCUMENTS;
    let mut out = Output::default();
    if list {
        for d in DOCUMENTS {
            out.stdout
                .push_str(&format!("{:<20} {}  {}\n", d.name, d.version, d.appears));
        }
        return (out, OK);
    }
    let name = name.unwrap_or_default();
    let Some(doc) = DOCUMENTS.iter().find(|d| d.name == name) else {
        let names: Vec<&str> = DOCUMENTS.iter().map(|d| d.name).collect();
        out.stderr = format!(
            "error: `{}` is not a document this build has a schema for\n  help: {}; streamform schema --list says where each appears\n",
            streamform_ir::printable(name),
            streamform_db::diagnostic::suggest(name, &names, "the documents are")
        );
        return (out, CANNOT_RUN);
    };
    if let Some(v) = version
        && v != doc.version
    {
        let help = if v == 0 {
            format!(
                "versions start at 1; this build speaks version {}",
                doc.version
            )
        } else {
            format!(
                "this build publishes version {} only: update what reads the document to it, or use the Streamform release that speaks version {v}",
                doc.version
            )
        };
        out.stderr = format!(
            "error: this build speaks {} version {}, not version {v}\n  help: {help}\n",
            doc.name, doc.version
        );
        return (out, CANNOT_RUN);
    }
    let schema =
        streamform_db::report::schema(doc.name).expect("every listed document has a schema");
    out.stdout = document(&schema);
    (out, OK)
}

/// Refuses a project whose models form a reference cycle: the cycle diagnostics, exit 2.
fn graph_cycle(db: &Database, project: Project, color: bool) -> (Output, u8) {
    let mut out = Output::default();
    for d in &db::cycle_diagnostics(db, project) {
        out.stderr.push_str(&render::diagnostic(db, d, color));
        out.stderr.push('\n');
    }
    out.stderr
        .push_str("error: the model graph has a reference cycle\n");
    (out, CANNOT_RUN)
}
