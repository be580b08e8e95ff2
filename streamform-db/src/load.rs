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

/// The largest file read: a project file, or a plan manifest of ten thousand models, is a
/// few megabytes.
pub const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// Reads one file's contents: `Missing` when there is nothing at the path (nor can be: a
/// folder on the way is missing or is a file), `NotUtf8` for bytes that are not UTF-8, and
/// `Unreadable` for what is not a regular file of a sane size (a FIFO would block forever,
/// a device never ends) and for a symbolic link, on the path or at its end, to nothing (that
/// is not "no file").
pub fn read_contents(path: &Path) -> FileContents {
    use std::io::ErrorKind;
    match std::fs::symlink_metadata(path) {
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return match dangling_folder(path) {
                Some(folder) => FileContents::Unreadable(format!(
                    "{} is a symbolic link to something that does not exist",
                    folder.display()
                )),
                None => FileContents::Missing,
            };
        }
        Err(e) => return FileContents::Unreadable(e.to_string()),
        Ok(_) => {}
    }
    let metadata = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return FileContents::Unreadable(
                "it is a symbolic link to a file that does not exist".into(),
            );
        }
        Err(e) => return FileContents::Unreadable(e.to_string()),
    };
    if !metadata.is_file() {
        return FileContents::Unreadable("it is not a regular file".into());
    }
    if metadata.len() > MAX_FILE_BYTES {
        return FileContents::Unreadable(format!(
            "it is {} bytes long; Streamform reads files of at most {MAX_FILE_BYTES} bytes",
            metadata.len()
        ));
    }
    match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            // A byte-order mark is not part of the text.
            Ok(t) => {
                FileContents::Text(t.strip_prefix('\u{feff}').map(str::to_string).unwrap_or(t))
            }
            Err(_) => FileContents::NotUtf8,
        },
        Err(e) if e.kind() == ErrorKind::NotFound => FileContents::Missing,
        Err(e) => FileContents::Unreadable(e.to_string()),
    }
}

/// The nearest folder on `path` that is a symbolic link to nothing, if any.
fn dangling_folder(path: &Path) -> Option<&Path> {
    path.ancestors().skip(1).find(|folder| {
        std::fs::symlink_metadata(folder).is_ok_and(|m| m.file_type().is_symlink())
            && std::fs::metadata(folder).is_err()
    })
}

/// The files directly under `dir` with extension `ext`, as project-relative paths, sorted.
fn list(root: &Path, dir: &str, ext: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        // Anything but a folder: a FIFO or a device named like a model is reported by
        // read_contents rather than skipped without a word.
        .filter(|e| std::fs::metadata(e.path()).map_or(true, |m| !m.is_dir()))
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
    SourceFile::new(db, shown.to_string(), read_contents(path))
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
