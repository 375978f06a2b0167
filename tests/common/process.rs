//! Tests that need a process of their own inside a grouped test binary.
//!
//! Some tests must be alone in their process: they configure the runtime
//! before its first use (`clfuse::configure`), count process-wide kernel
//! builds, read the profile of every launch, empty the buffer pool or the
//! kernel cache, or measure the process's memory. They used to be test
//! binaries of their own; in a grouped binary each starts with
//!
//! ```ignore
//! if common::process::run_alone("module::test_name") {
//!     return Ok(());
//! }
//! ```
//!
//! which runs the binary again as a child filtered to exactly that test
//! (with this process's environment, so `make test`'s variables apply) and
//! asserts that the child ran it and passed. In the child the call returns
//! `false` and the test's body runs, alone in a fresh process.
#![allow(dead_code)]

use std::process::Command;

/// Set in the child to the name of the one test it runs.
const CHILD: &str = "FUSION_TEST_ALONE";

/// `false` in the child (run the test's body); in the parent, runs `test`
/// (its full name, `module::function`) in a child process, asserts that it
/// passed, and returns `true` (the test is done).
pub fn run_alone(test: &str) -> bool {
    if std::env::var_os(CHILD).is_some_and(|name| name == test) {
        return false;
    }
    let output = Command::new(std::env::current_exe().expect("the test binary's path"))
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, test)
        .output()
        .expect("the child test process starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Forwarded, so that libtest shows it as this test's output.
    print!("{stdout}");
    eprint!("{stderr}");
    assert!(
        output.status.success(),
        "{test} failed in its own process ({})",
        output.status
    );
    // A misspelt name would run no test and still succeed.
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "the child process did not run {test}"
    );
    true
}
