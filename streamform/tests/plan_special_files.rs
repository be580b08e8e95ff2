//! `plan` reads the running side from a file the user names or a record anyone may have
//! replaced: a FIFO (which would block a plain read forever) or a device that never ends
//! is refused at once with exit 2, never read. Golden text cannot hold such files, so these
//! cases create them here.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::repo_root;

/// Runs `plan` with `args` on the customer-metrics example and returns (exit code, stderr),
/// failing the test if it takes more than 20 seconds.
fn plan_within_a_deadline(args: &[&str], project: &Path) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_streamform"))
        .arg("plan")
        .args(args)
        .arg("--project")
        .arg(project)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run streamform");
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
            return (status.code(), stderr);
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("plan {args:?} did not finish within 20 seconds");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_fifo_as_the_record_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&repo_root().join("examples/customer-metrics"), dir.path());
    let applied = dir.path().join(".streamform/applied");
    std::fs::create_dir_all(&applied).unwrap();
    let made = Command::new("mkfifo")
        .arg(applied.join("local.json"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let (code, stderr) = plan_within_a_deadline(&[], dir.path());
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr.lines().next().unwrap(),
        "error: cannot read the running plan from .streamform/applied/local.json: the file could not be read: it is not a regular file"
    );
}

#[test]
fn a_device_as_against_is_refused_without_reading_it() {
    let (code, stderr) = plan_within_a_deadline(
        &["--against", "/dev/zero"],
        &repo_root().join("examples/customer-metrics"),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr.lines().next().unwrap(),
        "error: cannot read the running plan from /dev/zero: the file could not be read: it is not a regular file"
    );
}
