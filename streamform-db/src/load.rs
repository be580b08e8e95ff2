//! Loading a project directory into database inputs: the one place that reads the disk.
//!
//! Spec: streamform-docs "Project layout" (streamform.yml, sources.yml, models/*.sql,
//! tests/*.yml).

use std::path::{Path, PathBuf};

use crate::db::{Database, FileContents, Project, SourceFile};

/// Why a directory cannot be loaded as a project at all (exit 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// The path does not exist or is not a directory.
    NotADirectory(PathBuf),
    /// The directory has no streamform.yml.
    NoProjectFile(PathBuf),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::NotADirectory(p) if !p.exists() => {
                write!(f, "{} does not exist", p.display())
            }
            LoadError::NotADirectory(p) => write!(f, "{} is not a directory", p.display()),
            LoadError::NoProjectFile(p) => write!(f, "no streamform.yml in {}", p.display()),
        }
    }
}

/// Reads one file's contents; a missing file is `Missing`, bytes that are not UTF-8 are
/// `NotUtf8`.
pub fn read_contents(path: &Path) -> FileContents {
    match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            // A byte-order mark is not part of the text.
            Ok(t) => {
                FileContents::Text(t.strip_prefix('\u{feff}').map(str::to_string).unwrap_or(t))
            }
            Err(_) => FileContents::NotUtf8,
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => FileContents::Missing,
        Err(e) => FileContents::Unreadable(e.to_string()),
    }
}

/// The files directly under `dir` with extension `ext`, as project-relative paths, sorted.
fn list(root: &Path, dir: &str, ext: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| std::fs::metadata(e.path()).is_ok_and(|m| m.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.'))
        .filter(|n| {
            Path::new(n)
                .extension()
                .is_some_and(|x| x == ext || (ext == "yml" && x == "yaml"))
        })
        .map(|n| format!("{dir}/{n}"))
        .collect();
    out.sort();
    out
}

/// Loads the project at `root` into a new input set of `db`.
///
/// # Errors
/// `root` is not a directory, or has no streamform.yml.
pub fn load_project(db: &Database, root: &Path) -> Result<Project, LoadError> {
    if !root.is_dir() {
        return Err(LoadError::NotADirectory(root.to_path_buf()));
    }
    if !root.join("streamform.yml").exists() {
        return Err(LoadError::NoProjectFile(root.to_path_buf()));
    }
    let file = |rel: &str| SourceFile::new(db, rel.to_string(), read_contents(&root.join(rel)));
    let models = list(root, "models", "sql")
        .iter()
        .map(|p| file(p))
        .collect();
    let fixtures = list(root, "tests", "yml").iter().map(|p| file(p)).collect();
    Ok(Project::new(
        db,
        file("streamform.yml"),
        file("sources.yml"),
        models,
        fixtures,
    ))
}

/// Loads one file outside the project's layout as an input: the running plan, a target's
/// applied record or a file named by `--against`. `shown` is the path messages use for it.
pub fn load_file(db: &Database, shown: &str, path: &Path) -> SourceFile {
    SourceFile::new(db, shown.to_string(), read_document(path))
}

/// The largest running-plan file read: a manifest of ten thousand models is a few
/// megabytes.
pub const MAX_DOCUMENT_BYTES: u64 = 256 * 1024 * 1024;

/// Reads a document file, refusing what is not a regular file of a sane size (a FIFO would
/// block forever, a device never ends) and a symbolic link to nothing (it is not "no file").
fn read_document(path: &Path) -> FileContents {
    match std::fs::symlink_metadata(path) {
        // A folder on the way that does not exist, or is a file: nothing can be there.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return FileContents::Missing;
        }
        Err(e) => return FileContents::Unreadable(e.to_string()),
        Ok(_) => {}
    }
    let metadata = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return FileContents::Unreadable(
                "it is a symbolic link to a file that does not exist".into(),
            );
        }
        Err(e) => return FileContents::Unreadable(e.to_string()),
    };
    if !metadata.is_file() {
        return FileContents::Unreadable("it is not a regular file".into());
    }
    if metadata.len() > MAX_DOCUMENT_BYTES {
        return FileContents::Unreadable(format!(
            "it is {} bytes long; a plan manifest or record is at most {MAX_DOCUMENT_BYTES}",
            metadata.len()
        ));
    }
    read_contents(path)
}

/// Builds a project from in-memory files (`(relative path, text)`), for tests and tools.
pub fn project_from_files(db: &Database, files: &[(&str, &str)]) -> Project {
    let get = |rel: &str| {
        let contents = files
            .iter()
            .find(|(p, _)| *p == rel)
            .map_or(FileContents::Missing, |(_, t)| {
                FileContents::Text((*t).to_string())
            });
        SourceFile::new(db, rel.to_string(), contents)
    };
    let under = |dir: &str, ext: &str| {
        let mut paths: Vec<&str> = files
            .iter()
            .map(|(p, _)| *p)
            .filter(|p| p.starts_with(dir) && p.ends_with(ext))
            .collect();
        paths.sort();
        paths.into_iter().map(get).collect::<Vec<_>>()
    };
    let models = under("models/", ".sql");
    let fixtures = under("tests/", ".yml");
    Project::new(
        db,
        get("streamform.yml"),
        get("sources.yml"),
        models,
        fixtures,
    )
}
