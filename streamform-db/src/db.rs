//! The salsa database: every project file is an input, everything derived is a tracked
//! query (docs/architecture.md). Queries return plain data; nothing here reads the disk or renders text.
//!
//! See docs/architecture.md, "Bird's-eye view" and "`streamform-db`" (the queries and the
//! invariants that keep them incremental).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use streamform_ir::diff::{Hints, PlanDiff, UnusedHint};
use streamform_ir::manifest::Manifest;
use streamform_ir::record::Running;
use streamform_ir::{Input, Materialized, ModelPlan, Node, SinkTarget};

use crate::config::{self, ProjectConfig, SourceDef};
use crate::diagnostic::{self, Anchor, Code, Diagnostic, Severity, did_you_mean};
use crate::fixture::{self, Expected, RowComparison};
use crate::lower::{self, Contract, Declared, Upstream};
use crate::sql::{self, ParsedModel, Reads};

/// A file's contents as loaded: its text, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FileContents {
    /// The file's text.
    Text(String),
    /// The file does not exist.
    Missing,
    /// The file exists but is not valid UTF-8.
    NotUtf8,
    /// Reading failed for another reason.
    Unreadable(Unreadable),
}

/// Why a file could not be read, and what to do about it: the reader knows both.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Unreadable {
    /// What went wrong, e.g. `it is not a regular file`, or the I/O error.
    pub reason: String,
    /// What to do about it.
    pub help: &'static str,
}

impl Unreadable {
    /// A failure the operating system reported (permissions, most often).
    pub fn io(reason: impl Into<String>) -> Unreadable {
        Unreadable {
            reason: reason.into(),
            help: "check the file's permissions",
        }
    }
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// One project file: its path relative to the project root (`models/a.sql`) and contents.
#[salsa::input(debug)]
pub struct SourceFile {
    /// The path relative to the project root, with `/` separators.
    #[returns(ref)]
    pub path: String,
    /// What was loaded from the path.
    #[returns(ref)]
    pub contents: FileContents,
}

/// The project: its configuration files and the model and fixture files found on disk.
#[salsa::input(debug)]
pub struct Project {
    /// `streamform.yml`.
    pub config: SourceFile,
    /// `sources.yml`; optional, so its contents may be `Missing`.
    pub sources: SourceFile,
    /// `models/*.sql`, sorted by path.
    #[returns(ref)]
    pub models: Vec<SourceFile>,
    /// `tests/*.yml`, sorted by path.
    #[returns(ref)]
    pub fixtures: Vec<SourceFile>,
}

/// The database trait queries take (`db: &dyn Db` first, as ruff and ty do).
#[salsa::db]
pub trait Db: salsa::Database {}

/// The one database implementation. Cloning gives another handle on the same storage.
#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
}

#[salsa::db]
impl salsa::Database for Database {}

#[salsa::db]
impl Db for Database {}

impl Default for Database {
    fn default() -> Database {
        Database {
            storage: salsa::Storage::new(None),
        }
    }
}

/// The names of the queries that executed, in order, recorded by a database made with
/// [`Database::with_execution_log`].
pub type ExecutionLog = Arc<Mutex<Vec<String>>>;

impl Database {
    /// A database that records every query execution (for incrementality tests).
    pub fn with_execution_log() -> (Database, ExecutionLog) {
        let log: ExecutionLog = Arc::default();
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                sink.lock()
                    .expect("log lock")
                    .push(format!("{database_key:?}"));
            }
        })));
        (Database { storage }, log)
    }
}

fn text_of<'a>(db: &'a dyn Db, file: SourceFile, diags: &mut Vec<Diagnostic>) -> Option<&'a str> {
    let path = file.path(db);
    match file.contents(db) {
        FileContents::Text(t) => Some(t),
        FileContents::Missing => {
            diags.push(
                Diagnostic::error(Code::FileMissing, format!("{path} does not exist"))
                    .in_file(file)
                    .with_help("create it, or remove what refers to it"),
            );
            None
        }
        FileContents::NotUtf8 => {
            diags.push(
                Diagnostic::error(Code::FileNotUtf8, format!("{path} is not valid UTF-8"))
                    .in_file(file)
                    .with_help("save the file as UTF-8"),
            );
            None
        }
        FileContents::Unreadable(e) => {
            diags.push(
                Diagnostic::error(
                    Code::FileUnreadable,
                    format!("{path} could not be read: {e}"),
                )
                .in_file(file)
                .with_help(e.help),
            );
            None
        }
    }
}

/// Where each line of a file starts (empty for a file without text).
#[salsa::tracked(returns(ref))]
pub fn line_index(db: &dyn Db, file: SourceFile) -> crate::diagnostic::LineIndex {
    crate::diagnostic::LineIndex::new(file_text(db, file).unwrap_or(""))
}

/// 1-based (line, column) of byte `offset` in `file`, columns in characters.
pub fn position(db: &dyn Db, file: SourceFile, offset: usize) -> (usize, usize) {
    line_index(db, file).line_col(file_text(db, file).unwrap_or(""), offset)
}

/// The text of a file, or `None` when it is missing or unreadable.
pub fn file_text(db: &dyn Db, file: SourceFile) -> Option<&str> {
    match file.contents(db) {
        FileContents::Text(t) => Some(t),
        _ => None,
    }
}

/// The typed `streamform.yml` and its diagnostics. `config: None` means the project does
/// not load.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConfigResult {
    /// The typed config; `None` when the project does not load.
    pub config: Option<ProjectConfig>,
    /// Every problem found in streamform.yml, including why it does not load.
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads and validates the project's streamform.yml.
#[salsa::tracked(returns(ref))]
pub fn project_config(db: &dyn Db, project: Project) -> ConfigResult {
    let mut diagnostics = Vec::new();
    let file = project.config(db);
    let Some(text) = text_of(db, *file, &mut diagnostics) else {
        return ConfigResult {
            config: None,
            diagnostics,
        };
    };
    let (config, mut d) = config::parse_project(file.path(db), text);
    diagnostic::set_file(&mut d, *file);
    diagnostics.extend(d);
    ConfigResult {
        config,
        diagnostics,
    }
}

/// The typed `sources.yml` (empty when the file does not exist) and its diagnostics.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourcesResult {
    /// The sources without errors, in name order.
    pub sources: Vec<SourceDef>,
    /// Every problem found in sources.yml.
    pub diagnostics: Vec<Diagnostic>,
    /// Declared sources with errors, and whether the file was present and parsed.
    pub broken: BTreeSet<String>,
    /// Whether sources.yml exists.
    pub present: bool,
    /// Whether sources.yml was read and parsed.
    pub readable: bool,
}

/// One diagnostic per reference cycle, pointing at the first model's `ref()`: a model that
/// reads itself is a `self-reference`, a longer cycle lists its models.
pub fn cycle_diagnostics(db: &dyn Db, project: Project) -> Vec<Diagnostic> {
    let models = model_files(db, project);
    dependency_graph(db, project)
        .cycles
        .iter()
        .map(|cycle| {
            let file = models[&cycle[0]];
            // The `ref()` of the first model that reads the next one on the cycle.
            let next = Input::Model(cycle[1 % cycle.len()].clone());
            let span = model_syntax(db, file)
                .reads
                .as_ref()
                .and_then(|r| r.span_of(&next));
            let d = match cycle.as_slice() {
                [only] => Diagnostic::error(
                    Code::SelfReference,
                    format!("model `{only}` reads itself with ref('{only}')"),
                )
                .with_help("a model reads a source or another model"),
                _ => {
                    let mut listed = cycle.clone();
                    listed.push(cycle[0].clone());
                    Diagnostic::error(
                        Code::ReferenceCycle,
                        format!("models form a reference cycle: {}", listed.join(" → ")),
                    )
                    .with_help(
                        "a model cannot depend on itself, directly or through other models; break the cycle",
                    )
                }
            };
            d.in_file(file).with_span(span)
        })
        .collect()
}

/// What streamform.yml declares for one model, span-free, so an edit elsewhere in the file
/// (a comment, another model's entry, a target) re-lowers nothing.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ModelSettings {
    /// streamform.yml cannot be read; its own diagnostics say why.
    NoConfig,
    /// The model's entry has errors (its own diagnostics say which).
    Invalid,
    /// The declaration: append with no sink when the model has no entry.
    Declared {
        /// The declared materialization.
        materialized: Materialized,
        /// The sink, if declared.
        sink: Option<SinkTarget>,
        /// `retention:` in milliseconds, if declared.
        retention: Option<u64>,
    },
}

/// The declaration of model `name`.
#[salsa::tracked(returns(ref))]
pub fn model_settings(db: &dyn Db, project: Project, name: String) -> ModelSettings {
    let Some(config) = &project_config(db, project).config else {
        return ModelSettings::NoConfig;
    };
    if config.models.get(&name).is_some_and(|m| m.invalid) {
        return ModelSettings::Invalid;
    }
    let (materialized, sink) = crate::config::declaration(Some(config), &name);
    let retention = config
        .models
        .get(&name)
        .and_then(|m| m.retention.as_ref().map(|(ms, _)| *ms));
    ModelSettings::Declared {
        materialized,
        sink,
        retention,
    }
}

/// `d` with its file (streamform.yml) and span filled in from its anchor, when it has one.
pub fn resolve_anchor(db: &dyn Db, project: Project, d: &Diagnostic) -> Diagnostic {
    let mut d = d.clone();
    if d.anchor.is_some() && d.file.is_none() {
        d.file = Some(*project.config(db));
    }
    let config = project_config(db, project).config.as_ref();
    if d.span.is_none()
        && let (Some(anchor), Some(config)) = (&d.anchor, config)
    {
        d.span = match anchor.as_ref() {
            Anchor::ModelEntry(m) => config.models.get(m).map(|m| m.span.clone()),
            Anchor::ModelKey(m) => config
                .models
                .get(m)
                .map(|m| m.key_span.clone().unwrap_or_else(|| m.span.clone())),
            Anchor::ModelKeyColumn(m, i) => config.models.get(m).map(|m| {
                m.key_columns
                    .get(*i)
                    .or(m.key_span.as_ref())
                    .unwrap_or(&m.span)
                    .clone()
            }),
            Anchor::ModelRetention(m) => config.models.get(m).map(|m| {
                m.retention
                    .as_ref()
                    .map_or_else(|| m.span.clone(), |(_, at)| at.clone())
            }),
        };
    }
    d
}

/// Why model `name` does not lower, positioned in its files.
pub fn lowering_diagnostics(db: &dyn Db, project: Project, name: &str) -> Vec<Diagnostic> {
    lower_model(db, project, name.to_string())
        .diagnostics
        .iter()
        .map(|d| resolve_anchor(db, project, d))
        .collect()
}

/// What a model reading `source('name')` learns of sources.yml: narrow and span-free, so an
/// edit to another source, or one that only moves text, re-lowers nothing that reads this one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SourceLookup {
    /// The source, declared without errors (its span cleared).
    Found(SourceDef),
    /// sources.yml has errors that stop the source being read (they are its diagnostics).
    Broken,
    /// There is no sources.yml.
    NoFile,
    /// sources.yml declares no such source: the names it does declare.
    Undeclared(Vec<String>),
}

/// Looks up one source for the models that read it.
#[salsa::tracked(returns(ref))]
pub fn source_lookup(db: &dyn Db, project: Project, name: String) -> SourceLookup {
    let result = source_defs(db, project);
    match result.sources.iter().find(|d| d.name == name) {
        Some(def) => SourceLookup::Found(SourceDef {
            span: 0..0,
            ..def.clone()
        }),
        None if result.broken.contains(&name) || (result.present && !result.readable) => {
            SourceLookup::Broken
        }
        None if !result.present => SourceLookup::NoFile,
        None => SourceLookup::Undeclared(result.sources.iter().map(|d| d.name.clone()).collect()),
    }
}

/// Reads and validates sources.yml; a missing file gives no sources and no diagnostics.
#[salsa::tracked(returns(ref))]
pub fn source_defs(db: &dyn Db, project: Project) -> SourcesResult {
    let file = project.sources(db);
    let empty = |diagnostics, present| SourcesResult {
        sources: Vec::new(),
        diagnostics,
        broken: BTreeSet::new(),
        present,
        readable: false,
    };
    if matches!(file.contents(db), FileContents::Missing) {
        return empty(Vec::new(), false);
    }
    let mut diagnostics = Vec::new();
    let Some(text) = text_of(db, *file, &mut diagnostics) else {
        return empty(diagnostics, true);
    };
    let mut parsed = config::parse_sources(file.path(db), text);
    diagnostic::set_file(&mut parsed.diagnostics, *file);
    SourcesResult {
        sources: parsed.sources,
        diagnostics: parsed.diagnostics,
        broken: parsed.broken,
        present: true,
        readable: parsed.readable,
    }
}

/// A model's name: its file stem.
pub fn model_name(db: &dyn Db, file: SourceFile) -> String {
    let path = file.path(db);
    let stem = path.rsplit('/').next().unwrap_or(path);
    stem.strip_suffix(".sql").unwrap_or(stem).to_string()
}

/// The model files by name.
#[salsa::tracked(returns(ref))]
pub fn model_files(db: &dyn Db, project: Project) -> BTreeMap<String, SourceFile> {
    project
        .models(db)
        .iter()
        .map(|f| (model_name(db, *f), *f))
        .collect()
}

/// Parses one model file. Not compared (`no_eq`): sqlparser's syntax tree compares equal
/// when only positions move, so backdating here would leave spans stale.
#[salsa::tracked(returns(ref), no_eq)]
pub fn parse_model(db: &dyn Db, file: SourceFile) -> ParsedModel {
    let mut diagnostics = Vec::new();
    let name = model_name(db, file);
    let Some(text) = text_of(db, file, &mut diagnostics) else {
        return ParsedModel {
            query: None,
            diagnostics,
        };
    };
    let mut parsed = sql::parse_model(&name, text);
    diagnostic::set_file(&mut parsed.diagnostics, file);
    parsed
}

/// What the model reads and the diagnostics of its syntax (refused constructs included).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelSyntax {
    /// The `source('…')` or `ref('…')` the model reads, when its FROM clause is valid.
    pub reads: Option<Reads>,
    /// Parse errors, refused constructs and an invalid model name.
    pub diagnostics: Vec<Diagnostic>,
}

/// Checks a model's SQL against the supported surface and finds what it reads.
#[salsa::tracked(returns(ref))]
pub fn model_syntax(db: &dyn Db, file: SourceFile) -> ModelSyntax {
    let parsed = parse_model(db, file);
    let name = model_name(db, file);
    let mut diagnostics = parsed.diagnostics.clone();
    if !config::is_identifier(&name) {
        diagnostics.push(
            Diagnostic::error(
                Code::InvalidName,
                format!("model name `{name}` is not an SQL identifier"),
            )
            .in_file(file)
            .with_help("rename the file: letters, digits and underscores, starting with a letter"),
        );
    }
    let Some(q) = &parsed.query else {
        return ModelSyntax {
            reads: None,
            diagnostics,
        };
    };
    let text = file_text(db, file).unwrap_or("");
    let (reads, mut d) = sql::validate(&name, text, q);
    diagnostic::set_file(&mut d, file);
    diagnostics.extend(d);
    ModelSyntax { reads, diagnostics }
}

/// What the model reads (each relation once, in the order first written), without
/// positions: editing anything else backdates it. Empty when its FROM clauses do not check.
#[salsa::tracked(returns(ref))]
pub fn model_reads(db: &dyn Db, file: SourceFile) -> Vec<Input> {
    model_syntax(db, file)
        .reads
        .as_ref()
        .map(Reads::inputs)
        .unwrap_or_default()
}

/// The dependency graph of models.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Graph {
    /// Models in dependency order (a model after the one it reads; ties by name). Models in
    /// a cycle are left out.
    pub order: Vec<String>,
    /// Each cycle, listed in full from its alphabetically first model.
    pub cycles: Vec<Vec<String>>,
    /// Every model that is part of a cycle.
    pub cyclic: BTreeSet<String>,
}

/// Orders the models along their `ref()` edges and finds reference cycles.
#[salsa::tracked(returns(ref))]
pub fn dependency_graph(db: &dyn Db, project: Project) -> Graph {
    let files = model_files(db, project);
    let reads: BTreeMap<&String, Vec<&String>> = files
        .iter()
        .map(|(n, f)| {
            let ups = model_reads(db, *f)
                .iter()
                .filter_map(|i| match i {
                    Input::Model(m) => files.get_key_value(m).map(|(k, _)| k),
                    Input::Source(_) => None,
                })
                .collect();
            (n, ups)
        })
        .collect();
    // Each model's depth (one more than the deepest model it reads, 0 when it reads only
    // sources), by a depth-first walk kept on an explicit stack; `None` is a model on a
    // cycle or reading into one: it cannot be planned.
    let mut depth: HashMap<&String, Option<usize>> = HashMap::new();
    let mut on_path: HashMap<&String, usize> = HashMap::new();
    let mut cycles: BTreeSet<Vec<String>> = BTreeSet::new();
    for start in reads.keys() {
        if depth.contains_key(start) {
            continue;
        }
        // (model, index of the next model it reads to visit, its depth so far)
        let mut stack: Vec<(&String, usize, Option<usize>)> = vec![(*start, 0, Some(0))];
        on_path.insert(*start, 0);
        while let Some(&(model, next, _)) = stack.last() {
            let top = stack.len() - 1;
            match reads[model].get(next) {
                Some(&up) => {
                    stack[top].1 += 1;
                    if let Some(&pos) = on_path.get(up) {
                        let mut cycle: Vec<String> =
                            stack[pos..].iter().map(|(m, _, _)| m.to_string()).collect();
                        let first = (0..cycle.len()).min_by_key(|&i| &cycle[i]).unwrap_or(0);
                        cycle.rotate_left(first);
                        cycles.insert(cycle);
                        stack[top].2 = None;
                    } else if let Some(known) = depth.get(up) {
                        stack[top].2 = stack[top].2.zip(*known).map(|(d, k)| d.max(k + 1));
                    } else {
                        on_path.insert(up, stack.len());
                        stack.push((up, 0, Some(0)));
                    }
                }
                None => {
                    let (done, _, d) = stack.pop().expect("the loop looked at it");
                    on_path.remove(done);
                    depth.insert(done, d);
                    if let Some(parent) = stack.last_mut() {
                        parent.2 = parent.2.zip(d).map(|(p, d)| p.max(d + 1));
                    }
                }
            }
        }
    }
    let cycles: Vec<Vec<String>> = cycles.into_iter().collect();
    let cyclic: BTreeSet<String> = cycles.iter().flatten().cloned().collect();
    let mut order: Vec<(usize, &String)> = depth
        .into_iter()
        .filter_map(|(n, d)| Some((d?, n)))
        .collect();
    order.sort();
    Graph {
        order: order.into_iter().map(|(_, n)| n.clone()).collect(),
        cycles,
        cyclic,
    }
}

/// A model's lowered plan, or the diagnostics that stop it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LowerResult {
    /// The lowered plan; `None` when the model, or something it reads, does not compile.
    pub plan: Option<ModelPlan>,
    /// Why lowering failed; empty when another query already reports the cause.
    pub diagnostics: Vec<Diagnostic>,
}

/// Lowers one model (DataFusion planning happens in here and is not stored).
#[salsa::tracked(returns(ref))]
pub fn lower_model(db: &dyn Db, project: Project, name: String) -> LowerResult {
    let fail = |diagnostics: Vec<Diagnostic>| LowerResult {
        plan: None,
        diagnostics,
    };
    let Some(&file) = model_files(db, project).get(&name) else {
        return fail(Vec::new());
    };
    let syntax = model_syntax(db, file);
    if syntax
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error)
    {
        return fail(Vec::new());
    }
    let Some(reads) = &syntax.reads else {
        return fail(Vec::new());
    };
    let Some(query) = &parse_model(db, file).query else {
        return fail(Vec::new());
    };
    let text = file_text(db, file).unwrap_or("");
    let (materialized, sink, retention) = match model_settings(db, project, name.clone()) {
        ModelSettings::Declared {
            materialized,
            sink,
            retention,
        } => (materialized, sink, *retention),
        ModelSettings::NoConfig | ModelSettings::Invalid => return fail(Vec::new()),
    };
    let models = model_files(db, project);
    let inputs = reads.inputs();
    // A relation is planned under its name, so a source and a model of one name cannot
    // both be read.
    // sources.yml's check reports the name both carry (`name-clash`).
    if inputs.iter().any(|i| match i {
        Input::Source(s) => inputs.contains(&Input::Model(s.clone())),
        Input::Model(_) => false,
    }) {
        return fail(Vec::new());
    }
    let mut contracts: Vec<(&str, Contract)> = Vec::new();
    let mut sources: Vec<&SourceDef> = Vec::new();
    for input in &inputs {
        let err = |code: Code, message: String, help: String| {
            Diagnostic::error(code, message)
                .in_file(file)
                .with_span(reads.span_of(input))
                .with_help(help)
        };
        match input {
            Input::Source(s) => match source_lookup(db, project, s.clone()) {
                SourceLookup::Found(def) => sources.push(def),
                // sources.yml's own diagnostics say what is wrong with it.
                SourceLookup::Broken => return fail(Vec::new()),
                SourceLookup::NoFile => {
                    return fail(vec![err(
                        Code::UnknownSource,
                        format!("model `{name}` reads source('{s}'), but there is no sources.yml"),
                        format!("declare `{s}` in sources.yml beside streamform.yml"),
                    )]);
                }
                SourceLookup::Undeclared(names) => {
                    let help = if models.contains_key(s) {
                        format!("`{s}` is a model; read it with ref('{s}')")
                    } else if let Some(close) = did_you_mean(s, names.iter().map(String::as_str)) {
                        format!("did you mean source('{close}')?")
                    } else {
                        "source() names a source declared in sources.yml".into()
                    };
                    return fail(vec![err(
                        Code::UnknownSource,
                        format!(
                            "model `{name}` reads source('{s}'), but sources.yml declares no source `{s}`"
                        ),
                        help,
                    )]);
                }
            },
            Input::Model(m) => {
                // A model that reads itself is a cycle; `cycle_diagnostics` reports it.
                if *m == name {
                    return fail(Vec::new());
                }
                if !models.contains_key(m) {
                    let help = if source_defs(db, project)
                        .sources
                        .iter()
                        .any(|d| &d.name == m)
                    {
                        format!("`{m}` is a source; read it with source('{m}')")
                    } else if let Some(close) =
                        did_you_mean(m, models.keys().map(String::as_str).filter(|k| *k != name))
                    {
                        format!("did you mean ref('{close}')?")
                    } else {
                        "ref() names another model in this project".into()
                    };
                    return fail(vec![err(
                        Code::UnknownModel,
                        format!("model `{name}` reads ref('{m}'), but there is no models/{m}.sql"),
                        help,
                    )]);
                }
                if dependency_graph(db, project).cyclic.contains(&name) {
                    return fail(Vec::new());
                }
                match model_contract(db, project, m.clone()) {
                    Some(c) => contracts.push((m.as_str(), c.clone())),
                    None => return fail(Vec::new()),
                }
            }
        }
    }
    let mut sources = sources.into_iter();
    let mut contracts = contracts.iter();
    let upstream: Vec<(String, Upstream<'_>)> = inputs
        .iter()
        .map(|input| {
            let up = match input {
                Input::Source(_) => Upstream::Source(sources.next().expect("one per source")),
                Input::Model(_) => {
                    let (m, c) = contracts.next().expect("one per model");
                    Upstream::Model(m, c)
                }
            };
            (input.name().to_string(), up)
        })
        .collect();
    let declared = Declared {
        materialized,
        sink: sink.as_ref(),
        retention,
    };
    match lower::lower_model(&name, text, query, reads, &upstream, &declared) {
        Ok(plan) => LowerResult {
            plan: Some(plan),
            diagnostics: Vec::new(),
        },
        Err(d) => {
            let mut d = vec![d];
            diagnostic::set_file(&mut d, file);
            fail(d)
        }
    }
}

/// The model's plan alone: fixtures depend on this, so an edit that leaves the plan equal
/// re-runs no fixture.
#[salsa::tracked(returns(ref))]
pub fn model_plan(db: &dyn Db, project: Project, name: String) -> Option<ModelPlan> {
    lower_model(db, project, name).plan.clone()
}

/// Every model's plan in dependency order; `None` when any model does not compile or the
/// graph has a cycle (build and inspect-plan refuse such a project; check says why).
#[salsa::tracked(returns(ref))]
pub fn application_plans(db: &dyn Db, project: Project) -> Option<Vec<ModelPlan>> {
    let graph = dependency_graph(db, project);
    if !graph.cycles.is_empty() {
        return None;
    }
    graph
        .order
        .iter()
        .map(|name| model_plan(db, project, name.clone()).clone())
        .collect()
}

/// The plan manifest of the whole application (docs/plan-identity.md, "The plan
/// manifest"); `None` as for [`application_plans`].
#[salsa::tracked(returns(ref))]
pub fn application_manifest(db: &dyn Db, project: Project) -> Option<Manifest> {
    application_plans(db, project)
        .as_ref()
        .map(Manifest::from_plans)
}

/// Where a model's ORDER BY clause is in its file (byte range), for errors about it.
pub fn order_by_span(db: &dyn Db, file: SourceFile) -> Option<std::ops::Range<usize>> {
    use sqlparser::ast::Spanned;
    let query = parse_model(db, file).query.as_ref()?;
    let span = query.order_by.as_ref()?.span();
    sql::byte_span(file_text(db, file)?, span)
}

/// What a reader of `ref(name)` depends on.
#[salsa::tracked]
pub fn model_contract(db: &dyn Db, project: Project, name: String) -> Option<Contract> {
    let plan = model_plan(db, project, name).as_ref()?;
    let sink: &Node = plan.sink();
    Some(Contract {
        schema: sink.schema.clone(),
        changelog: sink.changelog.clone(),
        boundedness: sink.boundedness,
        time: sink.time.clone(),
        clock: plan_has_clock(db, project, plan),
        window_bounds: streamform_ir::window_bounds(&plan.nodes, &sink.id, &|m| {
            model_contract(db, project, m.to_string())
                .as_ref()
                .and_then(|c| c.window_bounds.clone())
        }),
    })
}

/// Whether every relation `plan` reads has event time upstream: each of its Sources runs on
/// event time, and each model it reads has a clock.
fn plan_has_clock(db: &dyn Db, project: Project, plan: &ModelPlan) -> bool {
    let sources = plan
        .nodes
        .iter()
        .all(|n| n.id.kind != streamform_ir::NodeKind::Source || runs_on_event_time(n));
    sources
        && plan.models_read().all(|m| {
            model_contract(db, project, m.to_string())
                .as_ref()
                .is_some_and(|c| c.clock)
        })
}

/// The `help:` for a name that is not a model: the closest model, else every model.
pub fn unknown_model_help(db: &dyn Db, project: Project, name: &str) -> String {
    let names: Vec<&str> = model_files(db, project)
        .keys()
        .map(String::as_str)
        .collect();
    match did_you_mean(name, names.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => diagnostic::suggest(name, &names, "the models are"),
    }
}

/// The models `name` reads, directly or through others, and `name` last: every model after
/// the models it reads (the order the simulator takes them in). `None` when one of them
/// does not compile.
#[salsa::tracked(returns(ref))]
pub fn upstream_chain(db: &dyn Db, project: Project, name: String) -> Option<Vec<ModelPlan>> {
    let mut out: Vec<ModelPlan> = Vec::new();
    // Depth first, each model after the models it reads (post-order), on an explicit stack.
    let mut stack: Vec<(ModelPlan, usize)> = vec![(model_plan(db, project, name).clone()?, 0)];
    while let Some((plan, next)) = stack.last() {
        let read: Option<String> = plan.models_read().nth(*next).map(str::to_string);
        let top = stack.len() - 1;
        match read {
            Some(m) => {
                stack[top].1 += 1;
                let seen =
                    out.iter().any(|p| p.name == m) || stack.iter().any(|(p, _)| p.name == m);
                if !seen {
                    let up = model_plan(db, project, m).clone()?;
                    stack.push((up, 0));
                }
            }
            None => {
                let (done, _) = stack.pop().expect("the loop looked at it");
                out.push(done);
            }
        }
    }
    Some(out)
}

/// A fixture typed against its model: the events, the expected records and counts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FixtureDef {
    /// The fixture file, relative to the project root.
    pub path: String,
    /// The model under test, once it is known to exist.
    pub model: Option<String>,
    /// Number of `given` items in the file.
    pub given: usize,
    /// Number of `expect` records in the file.
    pub expect_count: usize,
    /// The typed events, one row per event in the top source's column order (by name).
    pub events: Vec<Vec<streamform_ir::Value>>,
    /// The events that are deletes of an upsert source (tombstones: the key's columns set,
    /// the others null), by index in `events`, in order.
    pub deletes: Vec<usize>,
    /// The typed `expect` records.
    pub expect: Vec<Expected>,
    /// The `- watermark:` items: how many events come before each, the instant, and the
    /// source it moves (by its number in `sources`; `None` for every source).
    pub watermarks: Vec<(usize, i64, Option<usize>)>,
    /// The sources the model reads, in the simulator's order.
    pub sources: Vec<String>,
    /// Per event, the number of its source in `sources`; empty when there is one source.
    pub event_sources: Vec<usize>,
    /// The typed `late` events, each in its source's column order.
    pub late: Vec<Vec<streamform_ir::Value>>,
    /// Per `late` event, the number of its source in `sources`; empty when there is one
    /// source.
    pub late_sources: Vec<usize>,
    /// The top source's columns, which `events` and `late` follow.
    pub source_columns: Vec<streamform_ir::Field>,
    /// Each source's columns, by its number in `sources`, which its events follow.
    pub columns: Vec<Vec<streamform_ir::Field>>,
    /// Problems with the fixture; it runs only when there are none.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses one fixture and types it against its model's source and output columns.
#[salsa::tracked(returns(ref))]
pub fn fixture_def(db: &dyn Db, project: Project, file: SourceFile) -> FixtureDef {
    let path = file.path(db).clone();
    let mut diagnostics = Vec::new();
    let mut def = FixtureDef {
        path: path.clone(),
        model: None,
        given: 0,
        expect_count: 0,
        events: Vec::new(),
        deletes: Vec::new(),
        expect: Vec::new(),
        watermarks: Vec::new(),
        sources: Vec::new(),
        event_sources: Vec::new(),
        late: Vec::new(),
        late_sources: Vec::new(),
        source_columns: Vec::new(),
        columns: Vec::new(),
        diagnostics: Vec::new(),
    };
    let Some(text) = text_of(db, file, &mut diagnostics) else {
        def.diagnostics = diagnostics;
        return def;
    };
    // Read fast first (docs/performance.md, "Reading fixtures"); a fixture with a problem
    // is read again by the YAML parser, whose spans and messages the diagnostics carry.
    if let Some(shape) = fixture::fast_shape(text) {
        let fast = typed_fixture(db, project, file, shape, def.clone());
        if fast.diagnostics.is_empty() {
            return fast;
        }
    }
    match fixture::parse_shape(&path, text) {
        Ok(shape) => typed_fixture(db, project, file, shape, def),
        Err(mut d) => {
            diagnostic::set_file(&mut d, file);
            def.diagnostics = d;
            def
        }
    }
}

/// [`fixture_def`] of a fixture read as `shape`, filling the empty `def`.
fn typed_fixture(
    db: &dyn Db,
    project: Project,
    file: SourceFile,
    shape: fixture::FixtureShape,
    mut def: FixtureDef,
) -> FixtureDef {
    let mut diagnostics = Vec::new();
    def.given = shape.given.len();
    def.expect_count = shape.expect.len();
    let models = model_files(db, project);
    if !models.contains_key(&shape.model) {
        let help = unknown_model_help(db, project, &shape.model);
        def.diagnostics = vec![
            Diagnostic::error(
                Code::UnknownModel,
                format!(
                    "fixture tests model `{}`, but there is no models/{}.sql",
                    shape.model, shape.model
                ),
            )
            .in_file(file)
            .with_span(Some(shape.model_span))
            .with_help(help),
        ];
        return def;
    }
    def.model = Some(shape.model.clone());
    let Some(chain) = upstream_chain(db, project, shape.model.clone()) else {
        return def;
    };
    // The sources in the order the simulator numbers them: the order their first Source
    // node appears in the plans.
    let mut sources: Vec<&Node> = Vec::new();
    for node in chain.iter().flat_map(|p| &p.nodes) {
        if let streamform_ir::Operator::Source { name, .. } = &node.op
            && !sources.iter().any(|s| source_name(s) == name)
        {
            sources.push(node);
        }
    }
    let names: Vec<String> = sources.iter().map(|s| source_name(s).to_string()).collect();
    fixture::check_sources(&shape, &names, &mut diagnostics);
    if let [only] = sources.as_slice() {
        def.events = type_source_events(&shape, only, &mut def, &mut diagnostics);
    } else {
        let shapes: Vec<(Vec<String>, bool)> = sources
            .iter()
            .map(|s| {
                (
                    s.schema.iter().map(|f| f.name.clone()).collect(),
                    matches!(s.changelog, streamform_ir::Changelog::Upsert(_)),
                )
            })
            .collect();
        fixture::require_source_names(&shape, &names, &shapes, &mut diagnostics);
        def.events = vec![Vec::new(); shape.given.len()];
        def.event_sources = vec![0; shape.given.len()];
        let mut watermarks: BTreeMap<usize, (usize, i64, Option<usize>)> = BTreeMap::new();
        // Each late event is its source's: the one it names, or, when every source has
        // the same columns, the first (its values tell it either way).
        let same_columns = sources.iter().all(|s| s.schema == sources[0].schema);
        let mut late_of: Vec<Option<usize>> = Vec::with_capacity(shape.late.len());
        for (i, named) in shape.late_sources.iter().enumerate() {
            late_of.push(match named {
                Some((n, _)) => names.iter().position(|name| name == n),
                None if same_columns => Some(0),
                None => {
                    diagnostics.push(
                        Diagnostic::error(
                            Code::FixtureShape,
                            format!(
                                "late event {} does not name its source, and the sources model `{}` reads have different columns",
                                i + 1,
                                shape.model
                            ),
                        )
                        .with_span(Some(shape.late[i].1.clone()))
                        .with_help(format!(
                            "write it as `- event: {{...}}` with `source: {}` on the next line",
                            names[0]
                        )),
                    );
                    None
                }
            });
        }
        let mut late: Vec<(usize, Vec<streamform_ir::Value>)> = Vec::new();
        for (si, node) in sources.iter().enumerate() {
            let name = source_name(node);
            let mut own = shape.for_source(name);
            // A watermark item that names no source moves the sources on event time; one
            // on processing time has no clock to move.
            let clockless = !runs_on_event_time(node);
            if clockless {
                let named: Vec<bool> = own.watermark_sources.iter().map(Option::is_some).collect();
                let mut keep = named.iter();
                own.watermarks.retain(|_| *keep.next().unwrap_or(&true));
                own.watermark_sources.retain(Option::is_some);
            }
            let mine: Vec<usize> = (0..shape.late.len())
                .filter(|&i| late_of[i] == Some(si))
                .collect();
            own.late = mine.iter().map(|&i| shape.late[i].clone()).collect();
            own.late_numbers = mine.iter().map(|&i| i + 1).collect();
            let mut one = FixtureDef {
                watermarks: Vec::new(),
                ..def.clone()
            };
            let events = type_source_events(&own, node, &mut one, &mut diagnostics);
            late.extend(mine.iter().copied().zip(one.late.iter().cloned()));
            for ((event, &number), i) in events.into_iter().zip(&own.given_numbers).zip(0..) {
                def.events[number - 1] = event;
                def.event_sources[number - 1] = si;
                if one.deletes.binary_search(&i).is_ok() {
                    def.deletes.push(number - 1);
                }
            }
            // A watermark item naming this source, or (typed once) one naming none.
            let mut mine = shape
                .watermarks
                .iter()
                .enumerate()
                .filter(|(w, _)| match &shape.watermark_sources[*w] {
                    Some((n, _)) => n == name,
                    None => !clockless,
                })
                .map(|(w, _)| w);
            for &(_, at, _) in &one.watermarks {
                if let Some(w) = mine.next() {
                    let named = shape.watermark_sources[w].as_ref().map(|_| si);
                    watermarks.insert(w, (shape.watermarks[w].0, at, named));
                }
            }
            if si == 0 {
                def.source_columns = one.source_columns.clone();
            }
            def.columns.push(one.source_columns.clone());
        }
        def.deletes.sort_unstable();
        def.watermarks = watermarks.into_values().collect();
        let clocks = sources.iter().any(|s| runs_on_event_time(s));
        if let (false, Some((_, value, _))) = (
            clocks,
            shape
                .watermarks
                .iter()
                .zip(&shape.watermark_sources)
                .find(|(_, named)| named.is_none())
                .map(|(w, _)| w),
        ) {
            diagnostics.push(
                Diagnostic::error(
                    Code::FixtureShape,
                    format!(
                        "a watermark item means nothing here: no source model `{}` reads runs on event time",
                        shape.model
                    ),
                )
                .with_span(Some(shape.field_span("watermark", value)))
                .with_help("declare `event_time:` on a source in sources.yml to give it a clock, or remove the item"),
            );
        }
        late.sort_by_key(|(i, _)| *i);
        def.late_sources = late.iter().map(|(i, _)| late_of[*i].unwrap_or(0)).collect();
        def.late = late.into_iter().map(|(_, row)| row).collect();
    }
    def.sources = names;
    let sink = chain.last().expect("a chain has a model").sink();
    def.expect = fixture::type_expectations(&shape, &sink.schema, &mut diagnostics);
    diagnostic::set_file(&mut diagnostics, file);
    def.diagnostics = diagnostics;
    def
}

/// Whether `node` is a Source on event time.
fn runs_on_event_time(node: &Node) -> bool {
    matches!(
        &node.op,
        streamform_ir::Operator::Source {
            event_time: Some(_),
            ..
        }
    )
}

/// The name of a Source node's source.
fn source_name(node: &Node) -> &str {
    match &node.op {
        streamform_ir::Operator::Source { name, .. } => name,
        _ => "",
    }
}

/// Types the `given` events of `shape` (all for the Source `node`) against its columns,
/// checks them against its changelog and clock, and fills `def`'s deletes, watermarks,
/// late events and source columns.
fn type_source_events(
    shape: &fixture::FixtureShape,
    node: &Node,
    def: &mut FixtureDef,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Vec<streamform_ir::Value>> {
    let source_name = source_name(node);
    let columns: Vec<(String, streamform_ir::DataType)> =
        node.schema.iter().map(|f| (f.name.clone(), f.ty)).collect();
    let events = fixture::type_events(shape, source_name, &columns, diagnostics);
    let key = match &node.changelog {
        streamform_ir::Changelog::Upsert(key) => Some(key.as_slice()),
        _ => None,
    };
    fixture::check_changes(shape, (key, &columns), source_name, diagnostics);
    def.deletes = shape.deletes.clone();
    def.source_columns = node.schema.clone();
    def.columns = vec![node.schema.clone()];
    let event_time = match &node.op {
        streamform_ir::Operator::Source {
            event_time: Some(t),
            ..
        } => Some(t.column.clone()),
        _ => None,
    };
    if let (Some(_), Some(_)) = (&event_time, key) {
        fixture::refuse_versioned_deletes(shape, source_name, diagnostics);
    }
    if let Some(column) = event_time {
        fixture::require_event_time(shape, &column, source_name, &columns, diagnostics);
        def.watermarks = fixture::type_watermarks(shape, diagnostics)
            .into_iter()
            .map(|(before, at)| (before, at, None))
            .collect();
        def.late = fixture::type_late(shape, source_name, &columns, diagnostics);
        if let Some(index) = columns.iter().position(|(c, _)| *c == column) {
            fixture::refuse_event_time_before_1970(
                shape,
                &column,
                index,
                (&events, &def.late),
                source_name,
                diagnostics,
            );
        }
    } else {
        let help = if key.is_some() {
            format!(
                "source `{source_name}` is an upsert source, which runs on processing time (a tombstone carries no event time): remove it"
            )
        } else {
            format!(
                "declare `event_time:` on source `{source_name}` in sources.yml to give it a clock"
            )
        };
        if let Some((_, value, _)) = shape.watermarks.first() {
            let span = shape.field_span("watermark", value);
            diagnostics.push(
                Diagnostic::error(
                    Code::FixtureShape,
                    format!("a watermark item means nothing here: source `{source_name}` runs on processing time"),
                )
                .with_span(Some(span.clone()))
                .with_help(help.clone()),
            );
        }
        if let Some((_, span)) = shape.late.first() {
            diagnostics.push(
                Diagnostic::error(
                    Code::FixtureShape,
                    format!("`late:` lists events, but source `{source_name}` runs on processing time, where nothing is late"),
                )
                .with_span(Some(span.clone()))
                .with_help(help),
            );
        }
    }
    events
}

/// Why a fixture's run stopped, with the help that fits the failure.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RunError {
    /// The model, column and event, and what went wrong.
    pub message: String,
    /// What to do about it.
    pub help: std::borrow::Cow<'static, str>,
    /// Line and column of the event that stopped the run, in the fixture.
    pub at: Option<(usize, usize)>,
}

impl From<&streamform_sim::SimError> for RunError {
    fn from(e: &streamform_sim::SimError) -> RunError {
        use streamform_sim::Failure;
        if e.failure == Failure::NullKey {
            let column = e.column.as_deref().unwrap_or("key");
            return RunError {
                message: e.to_string(),
                help: format!("keep rows whose `{column}` is null out of the sink: filter them upstream (WHERE {column} IS NOT NULL) or give the key a value (COALESCE({column}, ...)); a model without a sink keeps the null key as a group of its own").into(),
                at: None,
            };
        }
        RunError {
            // The message names the event and the column itself.
            message: match e.failure {
                Failure::MissingEventTime => format!("model `{}`: {}", e.model, e.message),
                _ => e.to_string(),
            },
            help: match e.failure {
                Failure::Overflow => {
                    "a value does not fit its type, and Streamform never wraps or rounds silently; widen the column or the CAST, or change the event's values"
                }
                Failure::TimeRange => {
                    "a timestamp holds the years 1 to 9999; change the event's time, or what moves it past them"
                }
                Failure::DivisionByZero => {
                    "guard the division: WHERE divisor <> 0, or CASE WHEN divisor = 0 THEN NULL ELSE n / divisor END"
                }
                Failure::Cast => {
                    "the value cannot be converted to the CAST's type; change the event's value, or CAST to a type that holds it"
                }
                Failure::Event => "make the event's values fit the source's columns in sources.yml",
                Failure::MissingEventTime => {
                    "give the event its time; an event without one is not late, and it is not delivered at the watermark either"
                }
                Failure::Plan => {
                    "the plan cannot run; this is a bug in Streamform, please report it with the model"
                }
                Failure::Unfollowed => {
                    "the simulator cannot promise Flink's result here, and stops rather than guess; change the value the event brings, or the expression or pattern in the model that reads it (docs/sql.md lists what is followed)"
                }
                Failure::NullKey => unreachable!("answered above, with the column"),
            }
            .into(),
            at: None,
        }
    }
}

/// The outcome of running one fixture through the simulator.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FixtureRun {
    /// The fixture file, relative to the project root.
    pub path: String,
    /// The model under test.
    pub model: String,
    /// Number of events the simulator processed.
    pub events_processed: usize,
    /// Number of changelog records the model emitted.
    pub changes_emitted: usize,
    /// Set when the simulator refused the input (overflow, division by zero, ...).
    pub error: Option<RunError>,
    /// Expected against actual, one entry per position.
    pub rows: Vec<RowComparison>,
    /// Number of late events dropped.
    pub late_dropped: usize,
    /// The `late` list against the events dropped, one entry per position.
    pub late: Vec<fixture::LateComparison>,
    /// The windows still open when the fixture ended, which emitted nothing: per window
    /// node, its id, the (key, window) pairs open, the watermark the first fires at, and
    /// the sources upstream that saw nothing and held its watermark back.
    pub open_windows: Vec<Pending>,
    /// The interval joins still keeping unmatched rows when the fixture ended, which they
    /// would pad later: as `open_windows`, with the watermark the first is padded at.
    pub waiting_rows: Vec<Pending>,
    /// The rows a window or an interval join dropped as late that no event given stands
    /// for: its id and how many.
    pub dropped_rows: Vec<(String, usize)>,
    /// The rows each interval join padded: its id, then the left and the right rows; for a
    /// temporal join, the left rows that met no version (and 0).
    pub padded: Vec<(String, [usize; 2])>,
    /// The top source's columns, which the late events' values follow.
    pub source_columns: Vec<streamform_ir::Field>,
    /// Each source's columns, by its number, which a late event of it follows.
    pub columns: Vec<Vec<streamform_ir::Field>>,
    /// The model's output columns, which the records' values follow.
    pub schema: Vec<streamform_ir::Field>,
    /// Whether every position matches and the simulator did not fail.
    pub passed: bool,
}

/// What a node still held when a fixture ended (a window's open windows, an interval
/// join's unmatched rows, a temporal join's waiting rows), and what held its watermark back.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pending {
    /// The node's id.
    pub node: String,
    /// How many windows or rows.
    pub count: usize,
    /// The watermark at which the first fires, is padded or is emitted.
    pub first_at: i64,
    /// The sources upstream that sent no event and no watermark.
    pub silent: Vec<String>,
    /// When none is silent, those whose watermark (less the delay of the interval joins on
    /// the way) is the node's, short of `first_at`: each with its watermark and that delay.
    pub behind: Vec<(String, i64, i64)>,
}

impl FixtureRun {
    /// The columns of source number `source`, which its late events follow.
    pub fn source_columns_of(&self, source: usize) -> &[streamform_ir::Field] {
        self.columns
            .get(source)
            .map_or(self.source_columns.as_slice(), Vec::as_slice)
    }
}

/// Runs one fixture. `None` when the fixture or its model does not check.
#[salsa::tracked(returns(ref))]
pub fn fixture_result(db: &dyn Db, project: Project, file: SourceFile) -> Option<FixtureRun> {
    let def = fixture_def(db, project, file);
    if !def.diagnostics.is_empty() {
        return None;
    }
    let model = def.model.clone()?;
    let chain = upstream_chain(db, project, model.clone()).as_ref()?;
    let schema = &chain.last()?.sink().schema;
    let mut run = FixtureRun {
        path: def.path.clone(),
        model,
        events_processed: def.events.len(),
        changes_emitted: 0,
        error: None,
        rows: Vec::new(),
        late_dropped: 0,
        late: Vec::new(),
        open_windows: Vec::new(),
        waiting_rows: Vec::new(),
        dropped_rows: Vec::new(),
        padded: Vec::new(),
        source_columns: def.source_columns.clone(),
        columns: def.columns.clone(),
        schema: schema.clone(),
        passed: false,
    };
    let mut dropped = Vec::new();
    match simulate(chain, def, &mut dropped) {
        Ok(out) => {
            run.events_processed = out.events_processed;
            run.changes_emitted = out.changes.len();
            run.late_dropped = dropped.len();
            let pending = |list: &[streamform_sim::OpenWindows]| -> Vec<_> {
                list.iter()
                    .map(|w| Pending {
                        node: w.node.to_string(),
                        count: w.count,
                        first_at: w.first_fires_at,
                        silent: w.held_back_by.clone(),
                        behind: w.behind.clone(),
                    })
                    .collect()
            };
            run.open_windows = pending(&out.open_windows);
            run.waiting_rows = pending(&out.waiting_rows);
            run.dropped_rows = out
                .dropped_rows
                .iter()
                .map(|(node, n)| (node.to_string(), *n))
                .collect();
            run.padded = out
                .padded
                .iter()
                .map(|(node, sides)| (node.to_string(), *sides))
                .collect();
            let actual: Vec<Expected> = out
                .changes
                .iter()
                .map(|c| Expected {
                    op: c.op,
                    values: c.row.to_vec(),
                })
                .collect();
            run.rows = fixture::compare(schema, &def.expect, &actual);
            for (row, change) in run.rows.iter_mut().zip(out.changes.iter()) {
                row.before = change.before.map(<[streamform_ir::Value]>::to_vec);
            }
            let listed: Vec<(usize, Vec<streamform_ir::Value>)> = def
                .late
                .iter()
                .enumerate()
                .map(|(i, row)| (def.late_sources.get(i).copied().unwrap_or(0), row.clone()))
                .collect();
            run.late = fixture::compare_late(&def.columns, &def.sources, &listed, &dropped);
            run.passed = run.rows.iter().all(|r| r.problem.is_none())
                && run.late.iter().all(|r| r.problem.is_none());
        }
        Err((e, delivered)) => {
            run.events_processed = delivered;
            let mut error = RunError::from(&e);
            error.at = event_position(db, file, e.event);
            run.error = Some(error);
        }
    }
    Some(run)
}

/// Line and column of `given` event `n` (1-based, as the simulator counts) in a fixture.
/// Read only when a run fails, so a passing run does not depend on where its events are
/// written (moving them re-runs nothing).
fn event_position(db: &dyn Db, file: SourceFile, n: usize) -> Option<(usize, usize)> {
    let text = file_text(db, file)?;
    let shape = fixture::parse_shape(file.path(db), text).ok()?;
    let (_, span) = shape.given.get(n.checked_sub(1)?)?;
    Some(position(db, file, span.start))
}

/// Runs a fixture's events through the chain, with its watermark items between them;
/// the events dropped as late go to `dropped`, in delivery order, with the window node that
/// dropped each (none for the source's own rule). A failure comes with the number of events
/// delivered before it.
fn simulate(
    chain: &[ModelPlan],
    def: &FixtureDef,
    dropped: &mut Vec<(usize, Vec<streamform_ir::Value>, Option<String>)>,
) -> Result<streamform_sim::Output, (streamform_sim::SimError, usize)> {
    let mut sim = streamform_sim::Simulator::new(chain).map_err(|e| (e, 0))?;
    let advance = |sim: &mut streamform_sim::Simulator, at: i64, source: Option<usize>| {
        let delivered = sim.events_processed();
        match source {
            Some(s) => sim.advance_source_watermark(s, at),
            None => sim.advance_watermark(at),
        }
        .map_err(|e| (e, delivered))
    };
    let mut watermarks = def.watermarks.iter().peekable();
    for (i, event) in def.events.iter().enumerate() {
        while let Some((_, at, source)) = watermarks.next_if(|(before, _, _)| *before <= i) {
            advance(&mut sim, *at, *source)?;
        }
        let delivered = sim.events_processed();
        let source = def.event_sources.get(i).copied().unwrap_or(0);
        let pushed = if def.deletes.binary_search(&i).is_ok() {
            sim.push_delete_to(source, event)
        } else {
            sim.push_to(source, event)
        };
        match pushed {
            Ok(streamform_sim::Arrival::Dropped) => dropped.push((source, event.clone(), None)),
            Ok(streamform_sim::Arrival::DroppedBy(node)) => {
                dropped.push((source, event.clone(), Some(node.to_string())));
            }
            Ok(streamform_sim::Arrival::Delivered) => {}
            // The failing event is counted as pushed, not as delivered.
            Err(e) => return Err((e, delivered)),
        }
    }
    for (_, at, source) in watermarks {
        advance(&mut sim, *at, *source)?;
    }
    let delivered = sim.events_processed();
    sim.finish().map_err(|e| (e, delivered))
}

/// Every diagnostic of the project, in file order: streamform.yml, sources.yml, models,
/// fixtures.
#[salsa::tracked(returns(ref))]
pub fn check_report(db: &dyn Db, project: Project) -> Vec<Diagnostic> {
    let mut out = project_config(db, project).diagnostics.clone();
    let Some(config) = &project_config(db, project).config else {
        return out;
    };
    out.extend(source_defs(db, project).diagnostics.iter().cloned());
    let models = model_files(db, project);
    let sources = &source_defs(db, project).sources;
    // Running node → the model whose hint claims it; running model → the model renamed from it.
    let mut hinted: BTreeMap<String, String> = BTreeMap::new();
    let mut renamed: BTreeMap<String, String> = BTreeMap::new();
    let config_file = *project.config(db);
    let start = out.len();
    for (name, mc) in &config.models {
        if !models.contains_key(name) {
            let help = match did_you_mean(name, models.keys().map(String::as_str)) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("create models/{name}.sql, or remove the entry"),
            };
            out.push(Diagnostic::error(Code::UnknownModel, format!("streamform.yml configures model `{name}`, but there is no models/{name}.sql")).with_span(Some(mc.span.clone())).with_help(help));
        }
        if let Some((old, span)) = &mc.renamed_from
            && models.contains_key(old)
        {
            out.push(
                Diagnostic::error(
                    Code::InvalidRename,
                    format!(
                        "model `{name}` is renamed_from `{old}`, but models/{old}.sql still exists"
                    ),
                )
                .with_span(Some(span.clone()))
                .with_help("a rename hint names a model that no longer exists; remove one of them"),
            );
        }
        for hint in &mc.nodes {
            match hinted.get(&hint.was) {
                Some(first) if first == name => out.push(
                    Diagnostic::error(
                        Code::InvalidHint,
                        format!(
                            "model `{name}` has two hints for the running node {}",
                            hint.was
                        ),
                    )
                    .with_span(Some(hint.span.clone()))
                    .with_help("each running node can be matched once"),
                ),
                Some(first) => out.push(
                    Diagnostic::error(
                        Code::InvalidHint,
                        format!(
                            "models `{first}` and `{name}` both have a hint for the running node {}",
                            hint.was
                        ),
                    )
                    .with_span(Some(hint.span.clone()))
                    .with_help("each running node can be matched once; keep the hint on the model that continues it"),
                ),
                None => {
                    hinted.insert(hint.was.clone(), name.clone());
                }
            }
        }
        if let Some((old, span)) = &mc.renamed_from {
            match renamed.get(old) {
                Some(first) => out.push(
                    Diagnostic::error(
                        Code::InvalidRename,
                        format!("models `{first}` and `{name}` are both renamed_from `{old}`"),
                    )
                    .with_span(Some(span.clone()))
                    .with_help("a running model continues as one model; remove one of the hints"),
                ),
                None => {
                    renamed.insert(old.clone(), name.clone());
                }
            }
        }
    }
    diagnostic::set_file(&mut out[start..], config_file);
    for s in sources {
        if models.contains_key(&s.name) {
            out.push(
                Diagnostic::error(
                    Code::NameClash,
                    format!("`{}` names both a source and a model", s.name),
                )
                .in_file(*project.sources(db))
                .with_span(Some(s.span.clone()))
                .with_help("sources and models share one namespace; rename one of them"),
            );
        }
    }
    out.extend(cycle_diagnostics(db, project));
    for (name, file) in models {
        out.extend(model_syntax(db, *file).diagnostics.iter().cloned());
        out.extend(lowering_diagnostics(db, project, name));
        if let (Some(plan), Some(mc)) = (
            model_plan(db, project, name.clone()),
            config.models.get(name),
        ) {
            for hint in &mc.nodes {
                if !plan
                    .nodes
                    .iter()
                    .any(|n| n.id.kind == hint.kind && n.id.ordinal == hint.ordinal)
                {
                    out.push(Diagnostic::error(Code::InvalidHint, format!("model `{name}` has a hint for {}.{}, but its plan has no such node", hint.kind.id_name(), hint.ordinal)).in_file(config_file).with_span(Some(hint.span.clone())).with_help("hints name nodes of the model's current plan as <kind>.<ordinal>, counted in plan order (streamform inspect-plan lists the node ids)"));
                }
                // A model renamed from the hint's model claims that node too, when it has
                // a node of the same kind and ordinal without a hint of its own.
                let Some((old, kind, ordinal)) = config::parse_node_id(&hint.was) else {
                    continue;
                };
                let Some(owner) = renamed.get(&old).filter(|owner| *owner != name) else {
                    continue;
                };
                let owner_claims =
                    model_plan(db, project, owner.clone())
                        .as_ref()
                        .is_some_and(|p| {
                            p.nodes
                                .iter()
                                .any(|n| n.id.kind == kind && n.id.ordinal == ordinal)
                        })
                        && !config.models[owner]
                            .nodes
                            .iter()
                            .any(|h| h.kind == kind && h.ordinal == ordinal);
                if owner_claims {
                    out.push(
                        Diagnostic::error(
                            Code::InvalidHint,
                            format!(
                                "model `{name}` has a hint for the running node {}, which model `{owner}` also claims by being renamed_from `{old}`",
                                hint.was
                            ),
                        )
                        .in_file(config_file)
                        .with_span(Some(hint.span.clone()))
                        .with_help(format!("each running node can be matched once; remove this hint, or give the node of `{owner}` a hint of its own")),
                    );
                }
            }
        }
    }
    for file in project.fixtures(db) {
        out.extend(fixture_def(db, project, *file).diagnostics.iter().cloned());
    }
    out
}

/// What a running-plan file holds (`.streamform/applied/<target>.json`, or `--against`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RunningRead {
    /// The file does not exist: nothing is recorded.
    Missing,
    /// An applied record or a plan manifest, read strictly.
    Read(Running),
    /// Why the file was refused, naming what was found (not the file).
    Refused(String),
}

/// Reads the running plan from `file`.
#[salsa::tracked(returns(ref))]
pub fn running_plan(db: &dyn Db, file: SourceFile) -> RunningRead {
    match file.contents(db) {
        FileContents::Missing => RunningRead::Missing,
        FileContents::NotUtf8 => RunningRead::Refused("the file is not valid UTF-8".into()),
        FileContents::Unreadable(e) => {
            RunningRead::Refused(format!("the file could not be read: {e}"))
        }
        FileContents::Text(text) => match Running::from_json(text) {
            Ok(running) => RunningRead::Read(running),
            Err(e) => RunningRead::Refused(e.to_string()),
        },
    }
}

/// The identity hints of the project (`renamed_from`, `nodes.<kind>.<ordinal>.was`), keyed
/// by desired model and desired node id.
#[salsa::tracked(returns(ref))]
pub fn plan_hints(db: &dyn Db, project: Project) -> Hints {
    let mut hints = Hints::default();
    let Some(config) = &project_config(db, project).config else {
        return hints;
    };
    for (name, mc) in &config.models {
        if let Some((old, _)) = &mc.renamed_from {
            hints.renamed_from.insert(name.clone(), old.clone());
        }
        for hint in &mc.nodes {
            hints.nodes.insert(
                format!("{name}::{}::{}", hint.kind.id_name(), hint.ordinal),
                hint.was.clone(),
            );
        }
    }
    hints
}

/// The comparison of a running plan with the project's plan, and what it warns about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlanComparison {
    /// The diff; every model new when nothing is recorded.
    pub diff: PlanDiff,
    /// Hints that name no running node, pointing at them in streamform.yml.
    pub warnings: Vec<Diagnostic>,
}

/// Compares the running plan in `running` with the project's plan (docs/plan-diff.md).
/// `None` when the project's plan cannot be compiled or the file is refused
/// ([`running_plan`] says why); a missing file means nothing runs.
#[salsa::tracked(returns(ref))]
pub fn plan_diff(db: &dyn Db, project: Project, running: SourceFile) -> Option<PlanComparison> {
    let desired = application_manifest(db, project).as_ref()?;
    let running = match running_plan(db, running) {
        RunningRead::Read(running) => running.manifest(),
        RunningRead::Missing => None,
        RunningRead::Refused(_) => return None,
    };
    // Nothing recorded, or a record of a target where no job has run yet.
    let Some(running) = running else {
        return Some(PlanComparison {
            diff: PlanDiff::fresh(desired),
            warnings: Vec::new(),
        });
    };
    let diff = streamform_ir::diff::diff(running, desired, plan_hints(db, project));
    let config = project_config(db, project).config.as_ref()?;
    let warnings = diff
        .unused_hints
        .iter()
        .map(|hint| unused_hint_warning(config, hint).in_file(*project.config(db)))
        .collect();
    Some(PlanComparison { diff, warnings })
}

fn unused_hint_warning(config: &ProjectConfig, hint: &UnusedHint) -> Diagnostic {
    match hint {
        UnusedHint::RenamedFrom { model, old } => {
            let span = config
                .models
                .get(model)
                .and_then(|m| m.renamed_from.as_ref())
                .map(|(_, s)| s.clone());
            Diagnostic::warning(
                Code::StaleRename,
                format!(
                    "model `{model}` is renamed_from `{old}`, but nothing running belongs to a model `{old}`"
                ),
            )
            .with_span(span)
            .with_help("once a rename is applied the hint does nothing (is the name misspelt?); delete renamed_from")
        }
        UnusedHint::Applied { node, was } | UnusedHint::Node { node, was } => {
            let (model, rest) = node.split_once("::").unwrap_or((node.as_str(), ""));
            let reference = rest.replacen("::", ".", 1);
            let span = config.models.get(model).and_then(|m| {
                m.nodes
                    .iter()
                    .find(|h| &h.was == was)
                    .map(|h| h.span.clone())
            });
            let (why, help) = match hint {
                UnusedHint::Applied { .. } => (
                    "the running plan already has the model's new node ids; the hint is not followed".to_string(),
                    "the restructure it describes has been applied; delete it from `nodes:`",
                ),
                _ => (
                    format!("nothing running has the id {was}"),
                    "once a change is applied the hint does nothing (is the id misspelt?); delete it from `nodes:`",
                ),
            };
            Diagnostic::warning(
                Code::StaleHint,
                format!("model `{model}` has the hint {reference} was {was}, but {why}"),
            )
            .with_span(span)
            .with_help(help)
        }
    }
}
