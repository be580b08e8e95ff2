//! Text renderings of query results: the check tables, diagnostics with source excerpts,
//! fixture results and the graph. Output text is the contract (docs/commands.md, each
//! command's output) and is tested through the binary against golden files.

use std::fmt::Write;

use annotate_snippets::{Level, Renderer, Snippet};
use streamform_db::db::{
    self, FixtureRun, dependency_graph, file_text, fixture_def, model_files, project_config,
    source_defs,
};
use streamform_db::fixture::Expected;
use streamform_db::{Database, Diagnostic, Project, Severity, SourceFile};
use streamform_ir::{Connector, Input, Materialized, SinkTarget, printable};

/// `1 model`, `3 models`.
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn declared(db: &Database, project: Project, model: &str) -> (Materialized, Option<SinkTarget>) {
    streamform_db::config::declaration(project_config(db, project).config.as_ref(), model)
}

/// `, upsert(order_id)` after an upsert source's description; empty for an append source.
fn upsert_note(s: &streamform_db::config::SourceDef) -> String {
    s.key
        .as_ref()
        .map(|k| format!(", upsert({})", k.join(", ")))
        .unwrap_or_default()
}

fn location(c: &Connector) -> String {
    match c {
        Connector::Kafka { topic } => format!("topic={topic}"),
        Connector::File { path } => format!("path={path}"),
    }
}

/// The three tables `check` prints before its diagnostics.
pub fn check_summary(db: &Database, project: Project) -> String {
    let mut out = String::new();
    let name = project_config(db, project)
        .config
        .as_ref()
        .map_or("", |c| c.name.as_str());
    // Names and paths come from the user's files: escaped, they cannot steer a terminal.
    use streamform_ir::printable;
    let _ = writeln!(out, "{} (schema version 1)\n\nmodels", printable(name));
    let models: Vec<Vec<String>> = model_files(db, project)
        .iter()
        .map(|(m, file)| {
            let (mat, _) = declared(db, project, m);
            vec![
                printable(m).into_owned(),
                mat.summary(),
                printable(file.path(db)).into_owned(),
            ]
        })
        .collect();
    let sources: Vec<Vec<String>> = source_defs(db, project)
        .sources
        .iter()
        .map(|s| {
            vec![
                printable(&s.name).into_owned(),
                format!("{}/{}", s.connector.name(), s.format),
                location(&s.connector),
                format!("{}{}", plural(s.schema.len(), "column"), upsert_note(s)),
            ]
        })
        .collect();
    let fixtures: Vec<Vec<String>> = project
        .fixtures(db)
        .iter()
        .map(|file| {
            let def = fixture_def(db, project, *file);
            vec![
                printable(def.model.as_deref().unwrap_or("?")).into_owned(),
                printable(&def.path).into_owned(),
                format!("{} given, {} expect", def.given, def.expect_count),
            ]
        })
        .collect();
    // The first columns of the three tables line up; each is at least 24 wide, and wider
    // for a longer name.
    let first = models
        .iter()
        .chain(&sources)
        .chain(&fixtures)
        .map(|r| r[0].chars().count())
        .max()
        .unwrap_or(0)
        .max(24);
    table(&mut out, "  ", &models, &[first, 24]);
    out.push_str("\nsources\n");
    table(&mut out, "  ", &sources, &[first, 12, 24]);
    out.push_str("\nfixtures\n");
    table(&mut out, "  ", &fixtures, &[first, 24]);
    out.push('\n');
    out
}

/// Rows of cells, each line after `indent`; cell `i` is padded to `widths[i]` or to the
/// column's longest cell when that is longer (a row's last cell is not padded), so that
/// columns stay aligned whatever the names' lengths.
fn table(out: &mut String, indent: &str, rows: &[Vec<String>], widths: &[usize]) {
    let mut widths = widths.to_vec();
    for (i, w) in widths.iter_mut().enumerate() {
        // A row's last cell is not padded, so it does not widen its column.
        let longest = rows
            .iter()
            .filter(|r| i + 1 < r.len())
            .map(|r| r[i].chars().count());
        *w = longest.max().unwrap_or(0).max(*w);
    }
    for row in rows {
        let mut line = String::from(indent);
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if let Some(w) = widths.get(i).filter(|_| i + 1 < row.len()) {
                let fill = w.saturating_sub(cell.chars().count());
                line.extend(std::iter::repeat_n(' ', fill + 1));
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// The count line that ends `check`.
pub fn check_count(
    db: &Database,
    project: Project,
    errors: usize,
    warnings: usize,
    failed: bool,
) -> String {
    let models = model_files(db, project).len();
    let sources = source_defs(db, project).sources.len();
    let fixtures = project.fixtures(db).len();
    format!(
        "{}: {}, {}, {}, {}, {}\n",
        if failed { "failed" } else { "ok" },
        plural(models, "model"),
        plural(sources, "source"),
        plural(fixtures, "fixture"),
        plural(errors, "error"),
        plural(warnings, "warning")
    )
}

/// The largest char boundary at or before `i` (clamped to the text).
fn floor_char(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary at or after `i` (clamped to the text).
fn ceil_char(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// One diagnostic: `error: …`, `  --> path:line:col`, a source excerpt when the position
/// is known (rendered by annotate-snippets), and `  help: …`. A diagnostic about the application as
/// a whole (no file) is its message and help.
pub fn diagnostic(db: &Database, d: &Diagnostic, color: bool) -> String {
    let severity = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut out = String::new();
    let _ = writeln!(out, "{severity}: {}", printable(&d.message));
    if let Some(file) = d.file {
        excerpt(db, file, d, color, &mut out);
    }
    if let Some(h) = &d.help {
        let _ = writeln!(out, "  help: {}", printable(h));
    }
    out
}

/// `diagnostics` as a person reads them, each followed by an empty line: at most
/// [`SHOWN_PER_FILE`](streamform_db::diagnostic::SHOWN_PER_FILE) of one file, then a note of
/// how many more that file has.
pub fn diagnostics<'a>(
    db: &Database,
    diagnostics: impl Iterator<Item = &'a Diagnostic>,
    color: bool,
) -> String {
    use streamform_db::diagnostic::SHOWN_PER_FILE;
    let (shown, left_out) = streamform_db::diagnostic::shown(diagnostics);
    let mut out = String::new();
    let mut notes = left_out.iter().peekable();
    for (i, d) in shown.iter().enumerate() {
        out.push_str(&diagnostic(db, d, color));
        out.push('\n');
        // After a file's last shown diagnostic, how many of it were left out.
        let next_file = shown.get(i + 1).map(|n| n.file);
        if next_file != Some(d.file)
            && let Some((_, n)) = notes.next_if(|(f, _)| *f == d.file)
        {
            let path = d.file.map_or_else(
                || "the application".to_string(),
                |f| printable(f.path(db)).into_owned(),
            );
            let _ = writeln!(
                out,
                "note: {n} more {} in {path} not shown (the first {SHOWN_PER_FILE} of a file are)\n  help: fix these and check again; check --json lists every one\n",
                if *n == 1 { "problem" } else { "problems" }
            );
        }
    }
    out
}

/// The `  --> path:line:col` line and the source excerpt of a diagnostic about `file`.
fn excerpt(db: &Database, file: SourceFile, d: &Diagnostic, color: bool, out: &mut String) {
    // A file name is the user's, and may hold what a terminal obeys.
    let path = &*streamform_ir::printable(file.path(db));
    match (&d.span, file_text(db, file)) {
        (Some(span), Some(text)) if !text.is_empty() => {
            let start = floor_char(text, span.start);
            let end = ceil_char(text, span.end.max(start));
            let (line, col) = db::position(db, file, start);
            let _ = writeln!(out, "  --> {path}:{line}:{col}");
            if !d.excerpt {
                return;
            }
            // Only the lines the span covers are rendered (numbered as in the file), and at
            // most a few of them, so an excerpt costs the length of its lines, not of the
            // file.
            const MOST_LINES: usize = 6;
            let index = db::line_index(db, file);
            let last = index
                .line(end.max(start + 1) - 1)
                .min(line + MOST_LINES - 1);
            let window = index.lines(text, line, last);
            // A tab or a lone carriage return is shown as one space (same byte length), so
            // the marks stay under what they mark and the line is not overwritten.
            let shown = harmless(&text[window.clone()]).replace(['\t', '\r'], " ");
            let span = (start - window.start)..(end.min(window.end) - window.start);
            // Error's marks are carets (a warning's would be dashes, which read as a rule).
            let level = Level::Error;
            let message = level.title("").snippet(
                Snippet::source(&shown)
                    .line_start(line)
                    .fold(false)
                    .annotation(level.span(span).label("here")),
            );
            let renderer = if color {
                Renderer::styled()
            } else {
                Renderer::plain()
            };
            let rendered = renderer.render(message).to_string();
            // The first line is the (empty) title, the last an empty margin: ours are the
            // message above and the help below.
            let lines: Vec<&str> = rendered.lines().skip(1).collect();
            let body = match lines.split_last() {
                Some((last, body)) if last.trim() == "|" => body,
                _ => &lines[..],
            };
            for l in body {
                let _ = writeln!(out, "{}", l.trim_end());
            }
        }
        _ => {
            let _ = writeln!(out, "  --> {path}");
        }
    }
}

/// The source text an excerpt shows, with every control character but the line breaks and
/// tabs (and every bidirectional override) replaced by `?`s of the same byte length, so
/// spans still point where they did and a file cannot drive the terminal.
pub(crate) fn harmless(text: &str) -> std::borrow::Cow<'_, str> {
    let hostile = |c: char| !matches!(c, '\n' | '\t' | '\r') && streamform_ir::is_hostile(c);
    if !text.chars().any(hostile) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.chars()
            .map(|c| {
                if hostile(c) {
                    "?".repeat(c.len_utf8())
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// What a command's standard output holds, for [`harmless_output`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// Text for a person.
    Text,
    /// A JSON document.
    Json,
    /// An artifact printed as written (`build --stdout`): Flink reads it, not a terminal.
    Exact,
}

/// A command's output as it is written: whatever a project's files put in it (a name, a SQL
/// string, a path) cannot drive the terminal. In text every control character but the line
/// break and the tab, and every bidirectional or invisible character, is escaped as Rust
/// writes it (`\u{1b}`); with colour on, the colour codes Streamform itself writes
/// (`ESC [ ... m`) pass. In JSON those characters become `\uXXXX` escapes, the same string
/// to a JSON reader.
pub fn harmless_output(text: &str, shown: Shown, color: bool) -> std::borrow::Cow<'_, str> {
    use streamform_ir::is_hostile;
    let kept = |c: char| matches!(c, '\n' | '\t') || (color && c == '\u{1b}');
    if shown == Shown::Exact || !text.chars().any(|c| is_hostile(c) && !kept(c)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let width = c.len_utf8();
        if c == '\u{1b}' && color && shown == Shown::Text {
            // A colour code: ESC [ digits and semicolons m.
            let code = rest[1..]
                .strip_prefix('[')
                .map(|r| {
                    r.len()
                        - r.trim_start_matches(|d: char| d.is_ascii_digit() || d == ';')
                            .len()
                })
                .filter(|&n| rest[2 + n..].starts_with('m'));
            if let Some(n) = code {
                out.push_str(&rest[..3 + n]);
                rest = &rest[3 + n..];
                continue;
            }
        }
        if matches!(c, '\n' | '\t') || !is_hostile(c) {
            out.push(c);
        } else if shown == Shown::Json {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.extend(c.escape_default());
        }
        rest = &rest[width..];
    }
    std::borrow::Cow::Owned(out)
}

fn record(schema: &[streamform_ir::Field], r: Option<&Expected>) -> String {
    let Some(r) = r else { return "(none)".into() };
    let mut s = r.op.to_string();
    for (f, v) in schema.iter().zip(&r.values) {
        let _ = write!(s, " {}={}", f.name, v.render());
    }
    s
}

/// One fixture's block in `test` output, ending with a newline.
///
/// `runs` are the fixtures the listing shows: when another of them tests the same model, a
/// passing fixture names its file too, so the listing tells them apart.
pub fn fixture_run(run: &FixtureRun, runs: &[FixtureRun]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}\n", run.model);
    let shared = runs.iter().filter(|r| r.model == run.model).count() > 1;
    if run.passed && shared {
        let _ = writeln!(out, "PASS\n  --> {}\n", streamform_ir::printable(&run.path));
    } else if run.passed {
        out.push_str("PASS\n\n");
    } else {
        let _ = writeln!(out, "FAIL\n  --> {}\n", streamform_ir::printable(&run.path));
    }
    if let Some(e) = &run.error {
        let _ = writeln!(out, "error: {}", e.message);
        if let Some((line, column)) = e.at {
            let _ = writeln!(
                out,
                "  --> {}:{line}:{column}",
                streamform_ir::printable(&run.path)
            );
        }
        let _ = writeln!(out, "  help: {}", e.help);
        return out;
    }
    let _ = writeln!(out, "{} processed", plural(run.events_processed, "event"));
    let _ = writeln!(out, "{} emitted", plural_records(run.changes_emitted));
    if run.late_dropped > 0 {
        let _ = writeln!(out, "{} dropped", plural(run.late_dropped, "late event"));
    }
    // The events an operator dropped, counted per node in the order they first were.
    #[derive(PartialEq)]
    enum By {
        Window,
        Join,
        Rank,
        Over,
    }
    let mut by_node: Vec<(&str, By, usize)> = Vec::new();
    let dropped_by = run.late.iter().filter_map(|l| {
        l.by_window
            .as_deref()
            .map(|n| (n, By::Window))
            .or(l.by_join.as_deref().map(|n| (n, By::Join)))
            .or(l.by_rank.as_deref().map(|n| (n, By::Rank)))
            .or(l.by_over.as_deref().map(|n| (n, By::Over)))
    });
    for (node, by) in dropped_by {
        match by_node.iter_mut().find(|(n, _, _)| *n == node) {
            Some((_, _, count)) => *count += 1,
            None => by_node.push((node, by, 1)),
        }
    }
    for (node, by, n) in &by_node {
        let one = *n == 1;
        let _ = match by {
            By::Window => writeln!(
                out,
                "  {n} of them by window `{node}`: every window {} had already closed",
                if one {
                    "it belongs to"
                } else {
                    "they belong to"
                }
            ),
            By::Join => writeln!(
                out,
                "  {n} of them by interval join `{node}`: {} after {} last chance to match, and met no row the join still kept",
                if one { "it came" } else { "they came" },
                if one { "its" } else { "their" }
            ),
            By::Rank => writeln!(
                out,
                "  {n} of them by rank `{node}`: {} behind the watermark (a deduplication keeping the first row by time) or after every window {} had closed (a rank per window)",
                if one { "it came" } else { "they came" },
                if one {
                    "it belongs to"
                } else {
                    "they belong to"
                }
            ),
            By::Over => writeln!(
                out,
                "  {n} of them by the OVER aggregation `{node}`: {} at or behind the watermark, or at or before the last time {} partition emitted",
                if one { "it came" } else { "they came" },
                if one { "its" } else { "their" }
            ),
        };
    }
    for (node, n) in &run.dropped_rows {
        let kind = streamform_ir::NodeId::parse(node).map(|id| id.kind);
        let _ = match kind {
            Some(streamform_ir::NodeKind::IntervalJoin) => writeln!(
                out,
                "{} reached interval join `{node}` on one side after {} last chance to match, met nothing and {} dropped there; the {} came from went on by another way",
                plural(*n, "row"),
                if *n == 1 { "its" } else { "their" },
                if *n == 1 { "was" } else { "were" },
                if *n == 1 { "event it" } else { "events they" }
            ),
            Some(streamform_ir::NodeKind::Rank | streamform_ir::NodeKind::Over) => writeln!(
                out,
                "{} reached `{node}` behind the watermark and {} dropped there, as late; the {} came from went on by another way, or an operator before it emitted {} late",
                plural(*n, "row"),
                if *n == 1 { "was" } else { "were" },
                if *n == 1 { "event it" } else { "events they" },
                if *n == 1 { "it" } else { "them" }
            ),
            _ => writeln!(
                out,
                "{} reached window `{node}` after every window {} to had closed, and {} dropped: an operator before it emitted {} late, which no event of the fixture stands for",
                plural(*n, "row"),
                if *n == 1 { "it belongs" } else { "they belong" },
                if *n == 1 { "was" } else { "were" },
                if *n == 1 { "it" } else { "them" }
            ),
        };
    }
    for (node, [left, right]) in &run.padded {
        let temporal = streamform_ir::NodeId::parse(node)
            .is_some_and(|id| id.kind == streamform_ir::NodeKind::TemporalJoin);
        if temporal {
            let _ = writeln!(
                out,
                "{} of `{node}` met no version valid at {} time",
                plural(*left, "left row"),
                if *left == 1 { "its" } else { "their" }
            );
            continue;
        }
        for (n, side) in [(left, "left"), (right, "right")] {
            if *n > 0 {
                let _ = writeln!(
                    out,
                    "{} padded by `{node}`: no match came within the time bounds before the watermark passed {}",
                    plural(*n, &format!("{side} row")),
                    if *n == 1 { "it" } else { "them" }
                );
            }
        }
    }
    let held_back = |out: &mut String, p: &streamform_db::db::Pending| {
        for source in &p.silent {
            let _ = writeln!(
                out,
                "  source `{}` sent no event and no watermark, which holds the watermark there back: give it an event or a `- watermark:` item naming it",
                printable(source)
            );
        }
        for (source, watermark, delay) in &p.behind {
            let at = streamform_ir::time::format_rfc3339(*watermark);
            let _ = if *delay > 0 {
                writeln!(
                    out,
                    "  source `{}` is at {at}, {} less there, as an interval join upstream holds the watermark back by that: give it later events or a `- watermark:` item naming it",
                    printable(source),
                    streamform_ir::time::format_duration(delay.unsigned_abs())
                )
            } else {
                writeln!(
                    out,
                    "  source `{}` is at {at}, which holds the watermark there back: give it a later event or a `- watermark:` item naming it",
                    printable(source)
                )
            };
        }
    };
    for p in &run.open_windows {
        let _ = writeln!(
            out,
            "{} still open in `{}` at the end, so not emitted: the first fires when the watermark reaches {}",
            plural(p.count, "window"),
            p.node,
            streamform_ir::time::format_rfc3339(p.first_at)
        );
        held_back(&mut out, p);
    }
    for p in &run.waiting_rows {
        let temporal = streamform_ir::NodeId::parse(&p.node).is_some_and(|id| {
            matches!(
                id.kind,
                streamform_ir::NodeKind::TemporalJoin
                    | streamform_ir::NodeKind::Rank
                    | streamform_ir::NodeKind::Over
            )
        });
        let (node, at) = (&p.node, streamform_ir::time::format_rfc3339(p.first_at));
        let _ = if temporal {
            writeln!(
                out,
                "{} still waiting in `{node}` at the end, so not emitted: the first is emitted when the watermark reaches {at}",
                plural(p.count, "row")
            )
        } else {
            writeln!(
                out,
                "{} still kept in `{node}` at the end, unmatched, so not padded: the first is padded when the watermark reaches {at}",
                plural(p.count, "row")
            )
        };
        held_back(&mut out, p);
    }
    if run.passed {
        return out;
    }
    if run.rows.iter().any(|r| r.problem.is_some()) {
        out.push('\n');
        expect_table(&mut out, run);
    }
    if run.late.iter().any(|r| r.problem.is_some()) {
        out.push('\n');
        late_table(&mut out, run);
    }
    out
}

/// The `late:` list against the events dropped, as `test` prints it when they differ.
fn late_table(out: &mut String, run: &FixtureRun) {
    let event = |row: Option<&Vec<streamform_ir::Value>>, source: usize, none: &str| match row {
        None => none.to_string(),
        Some(values) => {
            let parts: Vec<String> = run
                .source_columns_of(source)
                .iter()
                .zip(values)
                .filter(|(_, v)| !v.is_null())
                .map(|(f, v)| match v {
                    // Quoted, as a fixture writes an instant or a date.
                    streamform_ir::Value::Timestamp(_) | streamform_ir::Value::Date(_) => {
                        format!("{}=\"{}\"", f.name, v.render())
                    }
                    _ => format!("{}={}", f.name, v.render()),
                })
                .collect();
            parts.join(" ")
        }
    };
    let rows: Vec<(String, String, Option<&String>)> = run
        .late
        .iter()
        .map(|r| {
            (
                event(r.listed.as_ref(), r.listed_source, "(not listed)"),
                event(r.dropped.as_ref(), r.dropped_source, "(not dropped)"),
                r.problem.as_ref(),
            )
        })
        .collect();
    two_sides(out, ("late: listed", "dropped"), &rows);
}

/// The expected records against the emitted ones, as `test` prints them when they differ.
fn expect_table(out: &mut String, run: &FixtureRun) {
    let schema = &run.schema;
    let rows: Vec<(String, String, Option<&String>)> = run
        .rows
        .iter()
        .map(|r| {
            (
                record(schema, r.expected.as_ref()),
                record(schema, r.actual.as_ref()),
                r.problem.as_ref(),
            )
        })
        .collect();
    two_sides(out, ("expected", "actual"), &rows);
}

/// A numbered table of two sides, each row followed by its problem under a caret.
fn two_sides(out: &mut String, titles: (&str, &str), rows: &[(String, String, Option<&String>)]) {
    let width = rows
        .iter()
        .map(|r| r.0.chars().count())
        .max()
        .unwrap_or(0)
        .max(titles.0.chars().count());
    let idx_width = rows.len().to_string().len();
    // Padded by hand: a format width cannot exceed 65,535, and a value can.
    let padded = |text: &str| {
        let fill = width - text.chars().count();
        format!("{text}{}", " ".repeat(fill))
    };
    let _ = writeln!(
        out,
        "  {:>idx_width$}  {}  {}",
        "#",
        padded(titles.0),
        titles.1
    );
    for (i, (left, right, problem)) in rows.iter().enumerate() {
        let _ = writeln!(out, "  {:>idx_width$}  {}  {right}", i + 1, padded(left));
        if let Some(p) = problem {
            let _ = writeln!(out, "  {:idx_width$}  ^ {p}", "");
        }
    }
}

fn plural_records(n: usize) -> String {
    if n == 1 {
        "1 changelog record".into()
    } else {
        format!("{n} changelog records")
    }
}

fn sink_text(t: &SinkTarget) -> String {
    format!("→ {} {}", t.connector.name(), location(&t.connector))
}

/// `graph` as an indented tree: each source, the models that read it, and declared sinks.
pub fn graph_text(db: &Database, project: Project) -> String {
    let name = project_config(db, project)
        .config
        .as_ref()
        .map_or("", |c| c.name.as_str());
    let mut out = format!("{}\n\n", streamform_ir::printable(name));
    let readers = readers(db, project);
    let mut rows: Vec<Vec<String>> = Vec::new();
    for s in &source_defs(db, project).sources {
        let upsert = upsert_note(s);
        let third = format!("{} {}{upsert}", s.connector.name(), location(&s.connector));
        rows.push(vec![s.name.clone(), "source".into(), third]);
        tree(
            db,
            project,
            &readers,
            &Input::Source(s.name.clone()),
            "",
            &mut rows,
        );
    }
    table(&mut out, "", &rows, &[24, 21]);
    // A model no declared source leads to (its SQL does not parse, or it reads what is not
    // declared) is still shown, so the drawing leaves nothing out silently.
    let files = model_files(db, project);
    let mut drawn: Vec<&str> = Vec::new();
    let mut parents: Vec<Input> = source_defs(db, project)
        .sources
        .iter()
        .map(|s| Input::Source(s.name.clone()))
        .collect();
    while let Some(parent) = parents.pop() {
        for (m, _) in readers.iter().filter(|(_, i)| i.contains(&parent)) {
            if !drawn.contains(&m.as_str()) {
                drawn.push(m);
                parents.push(Input::Model(m.clone()));
            }
        }
    }
    let undrawn: Vec<&String> = files
        .keys()
        .filter(|m| !drawn.contains(&m.as_str()))
        .collect();
    if !undrawn.is_empty() {
        out.push_str("\nnot under a declared source\n");
        for m in undrawn {
            let reads = match readers
                .iter()
                .find(|(r, _)| r == m)
                .and_then(|(_, inputs)| inputs.first())
            {
                Some(Input::Source(s)) => {
                    format!("reads source('{}'), not declared", printable(s))
                }
                Some(Input::Model(r)) => format!("reads ref('{}'), not drawn", printable(r)),
                None => "its SQL does not say what it reads".to_string(),
            };
            let _ = writeln!(out, "{:<24} {reads}", printable(m));
        }
    }
    out
}

/// Each model in dependency order with what it reads, first relation first.
fn readers(db: &Database, project: Project) -> Vec<(String, Vec<Input>)> {
    let order = &dependency_graph(db, project).order;
    let files = model_files(db, project);
    order
        .iter()
        .filter_map(|m| Some((m.clone(), db::model_reads(db, *files.get(m)?).clone())))
        .filter(|(_, inputs)| !inputs.is_empty())
        .collect()
}

/// `source('x')` or `ref('m')`, as a model reads it.
fn read_text(input: &Input) -> String {
    match input {
        Input::Source(s) => format!("source('{}')", printable(s)),
        Input::Model(m) => format!("ref('{}')", printable(m)),
    }
}

/// The models reading `parent`, each drawn with its readers below it under the first
/// relation it reads; under the others (a UNION ALL's second input), one line says where.
fn tree(
    db: &Database,
    project: Project,
    readers: &[(String, Vec<Input>)],
    parent: &Input,
    indent: &str,
    rows: &mut Vec<Vec<String>>,
) {
    let children: Vec<(&String, &Vec<Input>)> = readers
        .iter()
        .filter(|(_, inputs)| inputs.contains(parent))
        .map(|(m, inputs)| (m, inputs))
        .collect();
    for (i, (child, inputs)) in children.iter().enumerate() {
        let last = i + 1 == children.len();
        let label = format!("{indent}{}{child}", if last { "└─ " } else { "├─ " });
        if inputs.first() != Some(parent) {
            let first = inputs.first().map(read_text).unwrap_or_default();
            rows.push(vec![label, format!("drawn under {first}")]);
            continue;
        }
        let (mat, sink) = declared(db, project, child);
        let mut row = match sink {
            Some(t) => vec![label, mat.summary(), sink_text(&t)],
            None => vec![label, mat.summary()],
        };
        if inputs.len() > 1 {
            let others: Vec<String> = inputs[1..].iter().map(read_text).collect();
            if let Some(last_cell) = row.last_mut() {
                last_cell.push_str(&format!("  (also reads {})", others.join(", ")));
            }
        }
        rows.push(row);
        let next = format!("{indent}{}", if last { "   " } else { "│  " });
        tree(
            db,
            project,
            readers,
            &Input::Model((*child).clone()),
            &next,
            rows,
        );
    }
}

fn dot_id(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// `graph --format dot`: Graphviz for `dot -Tsvg`.
pub fn graph_dot(db: &Database, project: Project) -> String {
    let name = project_config(db, project)
        .config
        .as_ref()
        .map_or("", |c| c.name.as_str());
    let mut out = format!(
        "digraph {} {{\n  rankdir=LR;\n",
        dot_id(&streamform_ir::printable(name))
    );
    for s in &source_defs(db, project).sources {
        let label = format!(
            "{}\\n{} {}",
            s.name,
            s.connector.name(),
            location(&s.connector)
        );
        let _ = writeln!(
            out,
            "  {} [shape=cylinder, label={}];",
            dot_id(&format!("source:{}", s.name)),
            dot_id(&label).replace("\\\\n", "\\n")
        );
    }
    for (m, inputs) in readers(db, project) {
        let (mat, sink) = declared(db, project, &m);
        let node = format!("model:{m}");
        let label = format!("{m}\\n{}", mat.summary());
        let _ = writeln!(
            out,
            "  {} [shape=box, label={}];",
            dot_id(&node),
            dot_id(&label).replace("\\\\n", "\\n")
        );
        for input in &inputs {
            let from = match input {
                Input::Source(s) => format!("source:{s}"),
                Input::Model(p) => format!("model:{p}"),
            };
            let _ = writeln!(out, "  {} -> {};", dot_id(&from), dot_id(&node));
        }
        if let Some(t) = sink {
            let sink_node = format!("sink:{m}");
            let label = format!("{} {}", t.connector.name(), location(&t.connector));
            let _ = writeln!(
                out,
                "  {} [shape=cds, label={}];",
                dot_id(&sink_node),
                dot_id(&label)
            );
            let _ = writeln!(out, "  {} -> {};", dot_id(&node), dot_id(&sink_node));
        }
    }
    out.push_str("}\n");
    out
}

/// Writes `runs` as a JUnit XML report to `path` (atomically: a temporary file beside it,
/// then renamed), for CI systems that show test results: one test suite, the project; one
/// test case per fixture, named after its model and file; a failing fixture's message is
/// its first difference (or why the run stopped) and its body the listing `test` prints.
/// The report keeps to the JUnit schema Jenkins and Surefire publish (junit-10.xsd), which
/// `spec/junit/check` validates it against.
pub fn write_junit(
    path: &std::path::Path,
    project: &str,
    runs: &[FixtureRun],
) -> std::io::Result<()> {
    let xml = junit_xml(project, runs)?;
    // Only a regular file is replaced, through a symbolic link to one; a device, a pipe
    // or a folder at the path is left alone.
    let target = match std::fs::metadata(path) {
        Ok(m) if m.is_file() => std::fs::canonicalize(path)?,
        Ok(_) => {
            return Err(std::io::Error::other("it is not a regular file"));
        }
        Err(_) if path.is_symlink() => {
            return Err(std::io::Error::other(
                "it is a symbolic link to nothing; point it at a file, or remove it",
            ));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => path.to_path_buf(),
        Err(e) => return Err(e),
    };
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    // Missing folders are made, as a CI job expects of `--junit build/reports/x.xml`; the
    // temporary file's name stays out of an error, which is about the report's path.
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| std::io::Error::new(e.kind(), e.kind().to_string()))?;
    std::io::Write::write_all(&mut tmp, &xml)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    }
    tmp.persist(&target).map_err(|e| e.error)?;
    Ok(())
}

/// The JUnit XML document of `runs` (see [`write_junit`]).
fn junit_xml(project: &str, runs: &[FixtureRun]) -> std::io::Result<Vec<u8>> {
    use quick_xml::events::{BytesDecl, BytesText, Event};
    let tests = runs.len().to_string();
    let failures = runs.iter().filter(|r| !r.passed).count().to_string();
    let mut w = quick_xml::Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let counts = [
        ("tests", tests.as_str()),
        ("failures", failures.as_str()),
        ("errors", "0"),
    ];
    let title = xml_chars(&format!("streamform test {project}"));
    let project = xml_chars(project);
    w.create_element("testsuites")
        .with_attribute(("name", title.as_str()))
        .with_attributes(counts)
        .write_inner_content(|w| {
            w.create_element("testsuite")
                .with_attribute(("name", project.as_str()))
                .with_attributes(counts)
                .with_attribute(("skipped", "0"))
                .write_inner_content(|w| {
                    for run in runs {
                        let name = xml_chars(&format!("{} ({})", run.model, run.path));
                        let model = xml_chars(&run.model);
                        let case = w
                            .create_element("testcase")
                            .with_attribute(("name", name.as_str()))
                            .with_attribute(("classname", model.as_str()));
                        if run.passed {
                            case.write_empty()?;
                            continue;
                        }
                        let first = run
                            .error
                            .as_ref()
                            .map(|e| e.message.clone())
                            .or_else(|| run.rows.iter().find_map(|r| r.problem.clone()))
                            .or_else(|| run.late.iter().find_map(|r| r.problem.clone()))
                            .unwrap_or_else(|| "the fixture failed".into());
                        let body = xml_chars(&fixture_run(run, runs));
                        case.write_inner_content(|w| {
                            w.create_element("failure")
                                .with_attribute(("message", xml_chars(&first).as_str()))
                                .write_text_content(BytesText::new(&body))?;
                            Ok(())
                        })?;
                    }
                    Ok(())
                })?;
            Ok(())
        })?;
    let mut xml = w.into_inner();
    xml.push(b'\n');
    Ok(xml)
}

/// `text` with the characters XML 1.0 cannot carry, even escaped (control characters other
/// than tab, line feed and carriage return, and U+FFFE and U+FFFF), shown as U+FFFD.
fn xml_chars(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => '\u{fffd}',
            _ => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn xml_chars_shows_what_xml_cannot_carry_as_the_replacement_character() {
        assert_eq!(
            super::xml_chars("a\u{1}b\tc\nd\u{ffff}é"),
            "a\u{fffd}b\tc\nd\u{fffd}é"
        );
    }

    #[test]
    fn text_output_escapes_what_would_drive_a_terminal_and_keeps_lines() {
        let shown = super::harmless_output(
            "a\u{1b}[2Jb\tc\nd\u{7f}\u{202e}e\r",
            super::Shown::Text,
            false,
        );
        assert_eq!(shown, "a\\u{1b}[2Jb\tc\nd\\u{7f}\\u{202e}e\\r");
    }

    #[test]
    fn with_colour_on_only_colour_codes_pass() {
        let shown = super::harmless_output(
            "\u{1b}[1;31merror\u{1b}[0m \u{1b}]0;title\u{7}\u{1b}[2J",
            super::Shown::Text,
            true,
        );
        assert_eq!(
            shown,
            "\u{1b}[1;31merror\u{1b}[0m \\u{1b}]0;title\\u{7}\\u{1b}[2J"
        );
    }

    #[test]
    fn json_output_escapes_as_json_reads_it() {
        let shown = super::harmless_output(
            "{\"a\": \"x\u{7f}\u{85}\u{202e}\u{e0041}\"}\n",
            super::Shown::Json,
            false,
        );
        assert_eq!(shown, "{\"a\": \"x\\u007f\\u0085\\u202e\\udb40\\udc41\"}\n");
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back["a"], "x\u{7f}\u{85}\u{202e}\u{e0041}");
    }

    #[test]
    fn an_artifact_is_printed_as_written() {
        let sql = "SELECT '\u{1b}[2J'";
        assert_eq!(super::harmless_output(sql, super::Shown::Exact, true), sql);
    }
}
