//! `streamform watch` with real file writes in a temporary folder: the first run, an edit
//! that breaks a fixture (reported as a failure), a write under build/ (ignored), an edit
//! that fixes it, another folder moved into the project's place (followed), and Ctrl-C
//! (exit 0). What reruns after each kind of edit is proven by
//! execution counts in streamform-db/tests/watch.rs.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Reads lines until one starts with `watch: ` (a report's last line), returning the report.
fn report(lines: &mpsc::Receiver<String>) -> String {
    let mut out = String::new();
    loop {
        let line = lines
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no report within 30 s; so far:\n{out}"));
        out.push_str(&line);
        out.push('\n');
        if line.starts_with("watch: ") {
            return out;
        }
    }
}

#[test]
fn watch_reports_each_save_and_stops_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(
        &common::repo_root().join("examples/order-pipeline"),
        dir.path(),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_streamform"))
        .args(["watch", "--project"])
        .arg(dir.path())
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A failing assertion must not leave the watcher running.
    struct Reap(u32);
    impl Drop for Reap {
        fn drop(&mut self) {
            let _ = Command::new("kill").arg(self.0.to_string()).status();
        }
    }
    let _reap = Reap(child.id());
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let first = report(&lines);
    assert!(
        first.contains("watch: 4 fixtures: 4 passed, 0 failed; 0 errors, 0 warnings; "),
        "{first}"
    );
    // The watcher is set up before the first report is printed; the next line says so.
    assert!(
        lines
            .recv_timeout(Duration::from_secs(10))
            .unwrap()
            .starts_with("watching ")
    );

    let model = dir.path().join("models/big_customers.sql");
    let text = std::fs::read_to_string(&model).unwrap();
    std::fs::write(&model, text.replace("> 100", "> 1000")).unwrap();
    let broken = report(&lines);
    assert!(
        broken.starts_with("\n── models/big_customers.sql\n"),
        "{broken}"
    );
    assert!(
        broken.contains("FAIL\n  --> tests/big_customers.yml\n"),
        "{broken}"
    );
    assert!(
        broken.contains("watch: 4 fixtures: 3 passed, 1 failed; 0 errors, 0 warnings; "),
        "{broken}"
    );

    std::fs::create_dir_all(dir.path().join("build")).unwrap();
    std::fs::write(dir.path().join("build/plan.json"), "{}").unwrap();
    std::fs::write(&model, &text).unwrap();
    let fixed = report(&lines);
    assert!(fixed.contains("── models/big_customers.sql\n"), "{fixed}");
    assert!(
        !fixed.contains("build/"),
        "build/ never triggers a run: {fixed}"
    );
    assert!(
        fixed.contains("fixed: tests/big_customers.yml (big_customers)\n"),
        "{fixed}"
    );
    assert!(
        fixed.contains("watch: 4 fixtures: 4 passed, 0 failed; "),
        "{fixed}"
    );

    // Another folder moved into the project's place: the watcher follows it, reads it
    // all again, and watches it from then on.
    let fresh = dir.path().with_extension("new");
    let old = dir.path().with_extension("old");
    common::copy_dir(&common::repo_root().join("examples/order-pipeline"), &fresh);
    std::fs::rename(dir.path(), &old).unwrap();
    std::fs::rename(&fresh, dir.path()).unwrap();
    std::fs::write(&model, text.replace("> 100", "> 1000")).unwrap();
    let swapped = report(&lines);
    let _ = std::fs::remove_dir_all(&old);
    assert!(
        swapped.contains("FAIL\n  --> tests/big_customers.yml\n"),
        "{swapped}"
    );

    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}
