//! Loading a project directory into database inputs: the one place that reads the disk.
//!
//! See docs/concepts.md, "Project", and docs/project-format.md (streamform.yml,
//! sources.yml, models/*.sql, tests/*.yml).

use std::path::{Path, PathBuf};

use crate::db::{Database, FileContents, Project, SourceFile, Unreadable};

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
                write!(f, "{} does not exist", shown(p))
            }
            LoadError::NotADirectory(p) => write!(f, "{} is not a directory", shown(p)),
            LoadError::NoProjectFile(p) => write!(f, "no streamform.yml in {}", shown(p)),
        }
    }
}

/// A path as a message shows it: what a terminal would obey escaped.
fn shown(path: &Path) -> String {
    streamform_ir::printable(&path.display().to_string()).into_owned()
}

/// What to do about a symbolic link to nothing.
const DANGLING: &str = "the symbolic link points at nothing; point it at the file, or remove it";

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
                Some(folder) => FileContents::Unreadable(Unreadable {
                    reason: format!(
                        "{} is a symbolic link to something that does not exist",
                        folder.display()
                    ),
                    help: DANGLING,
                }),
                None => FileContents::Missing,
            };
        }
        Err(e) => return FileContents::Unreadable(Unreadable::io(e.to_string())),
        Ok(_) => {}
    }
    let metadata = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return FileContents::Unreadable(Unreadable {
                reason: "it is a symbolic link to a file that does not exist".into(),
                help: DANGLING,
            });
        }
        Err(e) => return FileContents::Unreadable(Unreadable::io(e.to_string())),
    };
    if !metadata.is_file() {
        return FileContents::Unreadable(Unreadable {
            reason: "it is not a regular file".into(),
            help: "a project file must be a regular file; replace it with one, or remove it",
        });
    }
    if metadata.len() > MAX_FILE_BYTES {
        return FileContents::Unreadable(Unreadable {
            reason: format!(
                "it is {} bytes long; Streamform reads files of at most {MAX_FILE_BYTES} bytes",
                metadata.len()
            ),
            help: "split the file, or remove it",
        });
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
        Err(e) => FileContents::Unreadable(Unreadable::io(e.to_string())),
    }
}

/// The nearest folder on `path` that is a symbolic link to nothing, if any.
fn dangling_folder(path: &Path) -> Option<&Path> {
    path.ancestors().skip(1).find(|folder| {
        std::fs::symlink_metadata(folder).is_ok_and(|m| m.file_type().is_symlink())
            && std::fs::metadata(folder).is_err()
    })
}

/// Where project files come from: the disk, or memory (tests, tools). Every loader goes
/// through this, so discovery and reading follow one set of rules.
pub trait FileSystem {
    /// What is at `path` (absolute, or relative to the process for the real disk).
    fn read(&self, path: &Path) -> FileContents;
    /// The names of the entries directly under `dir`, whatever they are (a FIFO or a folder
    /// named like a model is listed, and reported when read, rather than skipped); none
    /// when `dir` does not exist. A name that is not UTF-8 comes with why it cannot be read
    /// (and is shown with U+FFFD in the place of what is not).
    ///
    /// # Errors
    /// Why `dir` cannot be listed: it is not a folder, or the OS refuses.
    fn entries(&self, dir: &Path) -> Result<Vec<(String, Option<Unreadable>)>, Unreadable>;
    /// Whether `path` is a folder.
    fn is_dir(&self, path: &Path) -> bool;
}

/// The real disk.
pub struct RealFs;

impl FileSystem for RealFs {
    fn read(&self, path: &Path) -> FileContents {
        read_contents(path)
    }

    fn entries(&self, dir: &Path) -> Result<Vec<(String, Option<Unreadable>)>, Unreadable> {
        match std::fs::read_dir(dir) {
            Ok(entries) => {
                let mut names = Vec::new();
                for entry in entries {
                    let entry = entry.map_err(|e| Unreadable {
                        reason: format!("the folder cannot be listed: {e}"),
                        help: "check the folder's permissions (reading and entering it)",
                    })?;
                    match entry.file_name().into_string() {
                        Ok(name) => names.push((name, None)),
                        // Listed, so that a project file named so is reported, not left
                        // out unseen.
                        Err(name) => names.push((
                            name.to_string_lossy().into_owned(),
                            Some(Unreadable {
                                reason: "its name is not UTF-8".into(),
                                help: "rename the file: project file names are UTF-8",
                            }),
                        )),
                    }
                }
                Ok(names)
            }
            Err(_) if dir.is_symlink() && std::fs::metadata(dir).is_err() => Err(Unreadable {
                reason: "it is a symbolic link to something that does not exist".into(),
                help: DANGLING,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(_) if !dir.is_dir() && dir.symlink_metadata().is_ok() => Err(Unreadable {
                reason: "it is not a folder".into(),
                help: "models/ and tests/ are folders of project files; move this file away",
            }),
            Err(e) => Err(Unreadable {
                reason: format!("the folder cannot be listed: {e}"),
                help: "check the folder's permissions (reading and entering it)",
            }),
        }
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }
}

/// Files in memory, by path: for tests and tools.
#[derive(Default)]
pub struct MemoryFs {
    files: std::sync::Mutex<std::collections::BTreeMap<PathBuf, String>>,
}

impl MemoryFs {
    /// A file system holding `files` (`(path, text)`) under `root`.
    pub fn new(root: &Path, files: &[(&str, &str)]) -> MemoryFs {
        let fs = MemoryFs::default();
        for (path, text) in files {
            fs.write(&root.join(path), text);
        }
        fs
    }

    /// Writes (or overwrites) a file.
    pub fn write(&self, path: &Path, text: &str) {
        self.files
            .lock()
            .expect("memory fs")
            .insert(path.to_path_buf(), text.to_string());
    }

    /// Removes a file.
    pub fn remove(&self, path: &Path) {
        self.files.lock().expect("memory fs").remove(path);
    }
}

impl FileSystem for MemoryFs {
    fn read(&self, path: &Path) -> FileContents {
        match self.files.lock().expect("memory fs").get(path) {
            Some(text) => FileContents::Text(text.clone()),
            None => FileContents::Missing,
        }
    }

    fn entries(&self, dir: &Path) -> Result<Vec<(String, Option<Unreadable>)>, Unreadable> {
        Ok(self
            .files
            .lock()
            .expect("memory fs")
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name()?.to_str().map(|n| (n.to_string(), None)))
            .collect())
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.files
            .lock()
            .expect("memory fs")
            .keys()
            .any(|p| p.starts_with(path) && p != path)
    }
}

/// The folders a project's files are discovered in, with the extension each takes.
const DISCOVERED: [(&str, &str); 2] = [("models", "sql"), ("tests", "yml")];

/// Whether a project-relative path can be a project file: `streamform.yml`,
/// `sources.yml`, `models/*.sql` or `tests/*.yml` (`.yaml` too), not hidden. What a watcher
/// sees elsewhere (`build/`, `.streamform/`, `target/`, an editor's swap file) is not.
pub fn is_project_file(relative: &str) -> bool {
    if relative == "streamform.yml" || relative == "sources.yml" {
        return true;
    }
    let Some((dir, name)) = relative.split_once('/') else {
        return false;
    };
    !name.contains('/') && is_discovered(dir, Path::new(name))
}

/// Whether `path` (as a command line gives it) names what the project at `root` is made
/// of: streamform.yml, sources.yml, a model, a fixture, or anything under `.streamform/`
/// (the applied records and their locks). A command asked to write a report there refuses
/// rather than overwrite it. Links are followed; a path that does not exist yet is judged
/// by the folder it would be made in.
pub fn is_project_input(root: &Path, path: &Path) -> bool {
    let Ok(root) = std::fs::canonicalize(root) else {
        return false;
    };
    // The longest leading part of the path that exists, resolved; the rest does not exist,
    // so it holds no link and `..` in it goes up lexically.
    let components: Vec<_> = path.components().collect();
    let Some((mut full, taken)) = (0..=components.len()).rev().find_map(|n| {
        let prefix: PathBuf = components[..n].iter().collect();
        let prefix = if n == 0 { PathBuf::from(".") } else { prefix };
        std::fs::canonicalize(prefix).ok().map(|p| (p, n))
    }) else {
        return false;
    };
    for component in &components[taken..] {
        match component {
            std::path::Component::ParentDir => {
                full.pop();
            }
            std::path::Component::Normal(name) => full.push(name),
            _ => {}
        }
    }
    let Ok(relative) = full.strip_prefix(&root) else {
        return false;
    };
    let relative = relative.to_string_lossy();
    is_project_file(&relative) || relative == ".streamform" || relative.starts_with(".streamform/")
}

/// Whether a file named `name` in the folder `dir` (`models`, `tests`) is discovered as a
/// project file: not hidden, with the folder's extension.
fn is_discovered(dir: &str, name: &Path) -> bool {
    !name.as_os_str().as_encoded_bytes().starts_with(b".")
        && DISCOVERED.iter().any(|(d, ext)| {
            *d == dir
                && name
                    .extension()
                    .is_some_and(|x| x == *ext || (*ext == "yml" && x == "yaml"))
        })
}

/// The project files in `dir` (`models` or `tests`), sorted, and the contents of those
/// known to be unreadable without reading them (a name that is not UTF-8). When the folder
/// cannot be listed, the folder itself stands in the list, with why it cannot be read as its
/// contents, so the problem is reported like an unreadable file rather than as an empty
/// folder.
fn discover(
    fs: &dyn FileSystem,
    root: &Path,
    dir: &str,
) -> (Vec<String>, Vec<(String, FileContents)>) {
    match fs.entries(&root.join(dir)) {
        Ok(names) => {
            let mut out = Vec::new();
            let mut unreadable = Vec::new();
            for (name, why) in names {
                let path = format!("{dir}/{name}");
                if !is_project_file(&path) {
                    continue;
                }
                if let Some(why) = why {
                    unreadable.push((path.clone(), FileContents::Unreadable(why)));
                }
                out.push(path);
            }
            out.sort();
            (out, unreadable)
        }
        Err(why) => (
            vec![dir.to_string()],
            vec![(dir.to_string(), FileContents::Unreadable(why))],
        ),
    }
}

/// A project loaded into a database, with one input per file path: what a long-running
/// command keeps between edits. A file that disappears keeps its input (as missing); a new
/// file gets a new one.
pub struct Workspace {
    root: PathBuf,
    project: Project,
    files: std::collections::BTreeMap<String, SourceFile>,
}

impl Workspace {
    /// Loads the project at `root`.
    ///
    /// # Errors
    /// When `root` is not a folder or holds no `streamform.yml`.
    pub fn load(db: &Database, fs: &dyn FileSystem, root: &Path) -> Result<Workspace, LoadError> {
        if !fs.is_dir(root) {
            return Err(LoadError::NotADirectory(root.to_path_buf()));
        }
        if fs.read(&root.join("streamform.yml")) == FileContents::Missing {
            return Err(LoadError::NoProjectFile(root.to_path_buf()));
        }
        Ok(Workspace::discover(db, fs, root))
    }

    /// Discovers the project's files at `root`, whatever is there.
    fn discover(db: &Database, fs: &dyn FileSystem, root: &Path) -> Workspace {
        let mut files = std::collections::BTreeMap::new();
        let mut file = |rel: &str, contents: Option<FileContents>| {
            let contents = contents.unwrap_or_else(|| fs.read(&root.join(rel)));
            let input = SourceFile::new(db, rel.to_string(), contents);
            files.insert(rel.to_string(), input);
            input
        };
        let config = file("streamform.yml", None);
        let sources = file("sources.yml", None);
        let mut listed = |dir: &str| -> Vec<SourceFile> {
            let (paths, mut unreadable) = discover(fs, root, dir);
            paths
                .iter()
                .map(|p| {
                    let known = unreadable.iter().position(|(u, _)| u == p);
                    file(p, known.map(|i| unreadable.swap_remove(i).1))
                })
                .collect()
        };
        let models = listed("models");
        let fixtures = listed("tests");
        let project = Project::new(db, config, sources, models, fixtures);
        Workspace {
            root: root.to_path_buf(),
            project,
            files,
        }
    }

    /// The project input.
    pub fn project(&self) -> Project {
        self.project
    }

    /// The project's folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Every path the registry knows, those of files that have gone included.
    pub fn paths(&self) -> Vec<String> {
        self.files.keys().cloned().collect()
    }

    /// Re-reads the project files among `changed` (project-relative paths; anything else is
    /// ignored) and discovers models and fixtures added or removed, then sets exactly the
    /// inputs whose contents changed, and the project's file lists when they changed.
    /// Returns the paths whose contents changed (a removed file reads as missing), sorted.
    pub fn refresh(
        &mut self,
        db: &mut Database,
        fs: &dyn FileSystem,
        changed: &[String],
    ) -> Vec<String> {
        use salsa::Setter;
        use std::collections::{BTreeMap, BTreeSet};
        let mut touched = BTreeSet::new();
        // Each changed project file is read once, here.
        let mut read: BTreeMap<String, FileContents> = changed
            .iter()
            .filter(|p| is_project_file(p))
            .map(|p| (p.clone(), fs.read(&self.root.join(p))))
            .collect();
        // A folder is listed again only when a file in it may have appeared or gone: the
        // folder itself moved, appeared or went (a rename of models/, a checkout), or a path
        // in it is not in the project's list or no longer reads. Editing files in place
        // costs no listing and no pass over the lists.
        let mut relisted: [Option<Vec<String>>; 2] = [None, None];
        for (k, (dir, _)) in DISCOVERED.iter().enumerate() {
            let known = if k == 0 {
                self.project.models(db)
            } else {
                self.project.fixtures(db)
            };
            let listed = |p: &str| known.iter().any(|f| f.path(db) == p);
            let moved = changed.iter().any(|p| p == dir)
                || read.iter().any(|(p, contents)| {
                    p.split_once('/').is_some_and(|(d, _)| d == *dir)
                        && (*contents == FileContents::Missing || !listed(p))
                });
            if !moved {
                continue;
            }
            let before: BTreeSet<String> = known.iter().map(|f| f.path(db).clone()).collect();
            let (now, unreadable) = discover(fs, &self.root, dir);
            read.extend(unreadable);
            let now_set: BTreeSet<&String> = now.iter().collect();
            let appeared = now.iter().filter(|p| !before.contains(*p));
            let gone = before.iter().filter(|p| !now_set.contains(p));
            for path in appeared.chain(gone) {
                if !read.contains_key(path) {
                    read.insert(path.clone(), fs.read(&self.root.join(path)));
                }
            }
            relisted[k] = Some(now);
        }
        for (path, contents) in read {
            match self.files.get(&path) {
                Some(input) if *input.contents(db) == contents => {}
                Some(input) => {
                    input.set_contents(db).to(contents);
                    touched.insert(path);
                }
                None => {
                    let input = SourceFile::new(db, path.clone(), contents);
                    self.files.insert(path.clone(), input);
                    touched.insert(path);
                }
            }
        }
        let [models, fixtures] =
            relisted.map(|l| l.map(|paths| paths.iter().map(|p| self.files[p]).collect()));
        if let Some(models) = models
            && *self.project.models(db) != models
        {
            self.project.set_models(db).to(models);
        }
        if let Some(fixtures) = fixtures
            && *self.project.fixtures(db) != fixtures
        {
            self.project.set_fixtures(db).to(fixtures);
        }
        touched.into_iter().collect()
    }
}

/// Loads the project at `root` from disk.
///
/// # Errors
/// When `root` is not a folder or holds no `streamform.yml`.
pub fn load_project(db: &Database, root: &Path) -> Result<Project, LoadError> {
    Workspace::load(db, &RealFs, root).map(|w| w.project())
}

/// Loads one file outside the project's layout as an input: the running plan, a target's
/// applied record or a file named by `--against`. `shown` is the path messages use for it.
pub fn load_file(db: &Database, shown: &str, path: &Path) -> SourceFile {
    SourceFile::new(db, shown.to_string(), read_contents(path))
}

/// Builds a project from in-memory files (`(relative path, text)`), for tests and tools,
/// discovered by the same rules as on disk.
pub fn project_from_files(db: &Database, files: &[(&str, &str)]) -> Project {
    let root = Path::new("/project");
    Workspace::discover(db, &MemoryFs::new(root, files), root).project()
}
