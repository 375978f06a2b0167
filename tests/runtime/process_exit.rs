//! A process that exits with commands still queued exits cleanly: the
//! runtime waits for its queues at exit (OpenCL leaves exiting with
//! commands in flight undefined; PoCL and NVIDIA's driver have crashed or
//! hung then).
//!
//! The test runs this binary again as a child that queues work on leaked
//! matrices and calls `std::process::exit` without waiting for anything.

use clfuse::Result;
use clfuse::prelude::*;
use std::process::Command;

const CHILD: &str = "FUSION_TEST_EXIT_CHILD";

/// The child: products and fused kernels queued, nothing waited for.
fn queue_work_and_exit() -> Result<()> {
    // Big enough that the device is still busy at exit: with make test's
    // unoptimized PoCL kernels each child runs for seconds (1200 x 1200,
    // as before, took over 40 s a child).
    let n = 600;
    let a = MatrixCl::constant(n, n, 0.5f64)?;
    let b = MatrixCl::constant(n, n, 0.25f64)?;
    let c = MatrixCl::<f64>::uninitialized(n, n)?;
    for _ in 0..2 {
        c.assign(exp(&a) + (&a * &b) * 2.0f64)?;
        a.assign(&c - &b)?;
    }
    // Leaked: not even their drops may wait for the queued commands.
    std::mem::forget((a, b, c));
    std::process::exit(0)
}

#[test]
fn exiting_with_commands_queued_is_clean() {
    if std::env::var_os(CHILD).is_some() {
        if let Err(e) = queue_work_and_exit() {
            eprintln!("child failed before exiting: {e}");
            std::process::exit(2);
        }
        return;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    for round in 0..2 {
        let status = Command::new(&exe)
            .args([
                "process_exit::exiting_with_commands_queued_is_clean",
                "--exact",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .status()
            .expect("the child process starts");
        assert!(
            status.success(),
            "round {round}: child exited with {status}"
        );
    }
}
