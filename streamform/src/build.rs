//! `streamform build --backend flink`: choose the target, generate the application, render
//! capability errors and warnings, write build/flink/application.sql and build/plan.json.
//!
//! See docs/commands.md, "streamform build", and docs/flink-backend.md.

use std::io::Write;
use std::path::{Path, PathBuf};

use streamform_db::backend::flink_application;
use streamform_db::db::{application_manifest, application_plans, project_config};
use streamform_db::target::{ChosenTarget, Need, choose_target};
use streamform_db::{Database, Diagnostic, Project};
use streamform_flink::Application;
use streamform_ir::ModelPlan;

use crate::{CANNOT_RUN, INVALID, OK, Output, refuse_with_errors, render};

/// The SQL script, relative to the project.
const SCRIPT_PATH: &str = "build/flink/application.sql";
/// The plan manifest, relative to the project.
const MANIFEST_PATH: &str = "build/plan.json";

/// The chosen target, the application and its warnings.
pub type Prepared = (Option<ChosenTarget>, Application, Vec<Diagnostic>);

/// What `build` and `apply` share: the project passes check, the target is chosen, and the
/// application is generated. `need` says when a project without targets is refused.
pub fn prepare(
    db: &Database,
    project: Project,
    target: Option<&str>,
    need: Need,
    color: bool,
) -> Result<Prepared, (Output, u8)> {
    let plans = compiled(db, project, color)?;
    let chosen = choose(db, project, target, need, plans)?;
    let kafka = chosen.as_ref().and_then(|c| c.kafka.clone());
    let Some(built) = flink_application(db, project, kafka) else {
        return Err(cannot_run(
            "the application could not be planned".into(),
            None,
        ));
    };
    match &built.app {
        Some(app) => Ok((chosen, app.clone(), built.warnings.clone())),
        None => {
            let mut out = Output::default();
            for e in &built.errors {
                out.stderr.push_str(&render::diagnostic(db, e, color));
                out.stderr.push('\n');
            }
            out.stderr.push_str(&format!(
                "error: the application cannot run on Flink ({})\n",
                render::plural(built.errors.len(), "capability error")
            ));
            Err((out, INVALID))
        }
    }
}

/// Every model's plan, in dependency order, or the refusal of a project check rejects.
pub fn compiled(
    db: &Database,
    project: Project,
    color: bool,
) -> Result<&Vec<ModelPlan>, (Output, u8)> {
    if let Some(refused) = refuse_with_errors(db, project, color) {
        return Err(refused);
    }
    application_plans(db, project).as_ref().ok_or_else(|| {
        // check passed, so every model compiles and the graph has no cycle.
        cannot_run("the application could not be planned".into(), None)
    })
}

/// The target a command works against (see [`choose_target`]), or the refusal (exit 2).
pub fn choose(
    db: &Database,
    project: Project,
    requested: Option<&str>,
    need: Need,
    plans: &[ModelPlan],
) -> Result<Option<ChosenTarget>, (Output, u8)> {
    let config = project_config(db, project)
        .config
        .as_ref()
        .expect("the project loaded");
    choose_target(config, requested, need, plans).map_err(|r| cannot_run(r.message, Some(r.help)))
}

/// Runs `build`; `root` is the project directory the outputs go under.
pub fn build(
    db: &Database,
    project: Project,
    root: &Path,
    target: Option<&str>,
    stdout: bool,
    color: bool,
) -> (Output, u8) {
    let (chosen, app, warnings) = match prepare(db, project, target, Need::ForKafka, color) {
        Ok(prepared) => prepared,
        Err(refused) => return refused,
    };
    let target = chosen.map(|c| c.name);
    let mut out = Output::default();
    for w in &warnings {
        out.stderr.push_str(&render::diagnostic(db, w, color));
        out.stderr.push('\n');
    }
    let script = app.script();
    if stdout {
        out.stdout = script;
        return (out, OK);
    }
    let manifest = application_manifest(db, project)
        .as_ref()
        .expect("every model compiled");
    let manifest_text = manifest.to_json_pretty();
    if let Err((path, e)) = write_together(&[
        (root.join(SCRIPT_PATH), script.as_bytes()),
        (root.join(MANIFEST_PATH), manifest_text.as_bytes()),
    ]) {
        out.stderr.push_str(&format!(
            "error: could not write {}: {e}\n  help: check that build/ can be written: no file where a folder belongs, no folder where a file belongs, and write permission; nothing was written\n",
            streamform_ir::printable(&path.display().to_string())
        ));
        return (out, CANNOT_RUN);
    }
    let for_target = target
        .map(|t| format!(" for target `{t}`"))
        .unwrap_or_default();
    out.stdout = format!(
        "ok: wrote {SCRIPT_PATH} ({}{for_target})\nok: wrote {MANIFEST_PATH} (application digest {})\n",
        render::plural(app.statements.len(), "statement"),
        streamform_ir::identity::short(&manifest.application_digest)
    );
    (out, OK)
}

/// A refusal that stops a command: `error:` and an optional `help:` line, exit 2.
pub fn cannot_run(message: String, help: Option<String>) -> (Output, u8) {
    // Messages quote what the user typed (a target's name) and what files hold.
    let mut stderr = format!("error: {}\n", streamform_ir::printable(&message));
    if let Some(help) = help {
        stderr.push_str(&format!("  help: {}\n", streamform_ir::printable(&help)));
    }
    (
        Output {
            stdout: String::new(),
            stderr,
        },
        CANNOT_RUN,
    )
}

/// Writes files that belong together (a script and its manifest): each is written to a
/// temporary file beside it first, and only when all are written are they moved into place;
/// if a move fails, the files already moved get their previous contents back. A reader never
/// sees the new script beside the old manifest for long, and a failure leaves the old pair.
///
/// # Errors
/// The path that could not be written, and why.
pub fn write_together(files: &[(PathBuf, &[u8])]) -> Result<(), (PathBuf, std::io::Error)> {
    let mut staged = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        let stage = || -> std::io::Result<tempfile::NamedTempFile> {
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::IsADirectory,
                    "it is a folder",
                ));
            }
            let dir = path.parent().unwrap_or(Path::new("."));
            std::fs::create_dir_all(dir)?;
            let mut builder = tempfile::Builder::new();
            #[cfg(unix)]
            builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
            let mut file = builder.tempfile_in(dir)?;
            file.write_all(bytes)?;
            file.as_file().sync_all()?;
            Ok(file)
        };
        staged.push(stage().map_err(|e| (path.clone(), in_words(e)))?);
    }
    let mut moved: Vec<(&PathBuf, Option<Vec<u8>>)> = Vec::new();
    for ((path, _), file) in files.iter().zip(staged) {
        let previous = std::fs::read(path).ok();
        if let Err(e) = file.persist(path) {
            for (done, before) in moved {
                let _ = match before {
                    Some(bytes) => write_atomically(done, &bytes),
                    None => std::fs::remove_file(done),
                };
            }
            return Err((path.clone(), in_words(e.error)));
        }
        moved.push((path, previous));
    }
    Ok(())
}

/// An error writing a file, said in words: the kinds a project folder meets, without the
/// operating system's error number or the temporary file's name.
fn in_words(e: std::io::Error) -> std::io::Error {
    use std::io::ErrorKind as K;
    let words = match e.kind() {
        K::PermissionDenied | K::ReadOnlyFilesystem => "permission denied".to_string(),
        K::NotADirectory | K::AlreadyExists => {
            "a file is in the way of a folder on its path".to_string()
        }
        K::IsADirectory => "it is a folder".to_string(),
        K::StorageFull => "the disk is full".to_string(),
        _ => {
            let text = e.to_string();
            let text = text.split(" (os error").next().unwrap_or(&text);
            text.split(" at path ").next().unwrap_or(text).to_string()
        }
    };
    std::io::Error::new(e.kind(), words)
}

/// Writes `bytes` to `path` through a temporary file in the same directory, so a reader
/// sees the old file or the new one, never a part.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_together(&[(path.to_path_buf(), bytes)]).map_err(|(_, e)| e)
}
