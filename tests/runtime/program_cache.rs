//! The on-disk program cache across processes: this test binary runs
//! itself as the child processes (`child_process_workload`, selected by an
//! environment variable), each with `FUSION_CACHE_DIR` set to a fresh folder.

use clfuse::prelude::*;
use std::path::Path;
use std::process::{Child, Command, Stdio};

const CHILD: &str = "CLFUSE_PROGRAM_CACHE_CHILD";

/// What one child process reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ChildStats {
    compiled: u64,
    loaded: u64,
    rejected: u64,
    store_failures: u64,
}

/// In a child: a fused expression, a reduction and a hand-written kernel
/// (GEMM), each checked against the CPU; then the counters on stdout.
#[test]
fn child_process_workload() -> clfuse::Result<()> {
    if std::env::var_os(CHILD).is_none() {
        return Ok(());
    }
    let n = 37;
    let a_host: Vec<f64> = (0..n * n).map(|k| (k % 11) as f64 - 5.0).collect();
    let b_host: Vec<f64> = (0..n * n).map(|k| (k % 7) as f64 * 0.5).collect();
    let a = MatrixCl::from_slice(n, n, &a_host)?;
    let b = MatrixCl::from_slice(n, n, &b_host)?;
    let fused = (1.5f64 * (&a + &b)).eval()?.to_vec()?;
    for (k, got) in fused.iter().enumerate() {
        assert_eq!(*got, 1.5 * (a_host[k] + b_host[k]), "fused element {k}");
    }
    let total = sum(&a)?;
    assert_eq!(total, a_host.iter().sum::<f64>());
    let product = (&a * &b).eval()?.to_vec()?;
    for j in 0..n {
        for i in 0..n {
            let want: f64 = (0..n).map(|k| a_host[i + k * n] * b_host[k + j * n]).sum();
            assert!(
                (product[i + j * n] - want).abs() < 1e-9,
                "product ({i}, {j})"
            );
        }
    }
    let kernels = clfuse::kernel_stats();
    let disk = clfuse::program_cache_stats();
    println!(
        "STATS {} {} {} {}",
        kernels.compiled, kernels.loaded, disk.rejected, disk.store_failures
    );
    Ok(())
}

fn spawn_child(cache: &Path) -> Child {
    Command::new(std::env::current_exe().expect("the test binary's path"))
        .args([
            "program_cache::child_process_workload",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env("FUSION_CACHE_DIR", cache)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning the child test process")
}

fn wait_child(child: Child) -> (ChildStats, String) {
    let output = child.wait_with_output().expect("waiting for the child");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "child failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("STATS ").map(|(_, counts)| counts))
        .unwrap_or_else(|| panic!("no STATS line in:\n{stdout}"));
    let numbers: Vec<u64> = line
        .split_whitespace()
        .take(4)
        .map(|v| v.parse().expect("a count"))
        .collect();
    let stats = ChildStats {
        compiled: numbers[0],
        loaded: numbers[1],
        rejected: numbers[2],
        store_failures: numbers[3],
    };
    (stats, stderr)
}

fn run_child(cache: &Path) -> (ChildStats, String) {
    wait_child(spawn_child(cache))
}

fn entries(cache: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(cache)
        .expect("the cache folder")
        .map(|e| e.expect("an entry").path())
        .collect();
    files.sort();
    files
}

#[test]
fn a_second_process_compiles_nothing() {
    let cache = tempfile::tempdir().expect("a temporary folder");
    let (first, _) = run_child(cache.path());
    assert!(first.compiled >= 3, "{first:?}");
    assert_eq!(first.loaded, 0);
    assert_eq!(entries(cache.path()).len() as u64, first.compiled);
    let (second, _) = run_child(cache.path());
    assert_eq!(
        (second.compiled, second.loaded),
        (0, first.compiled),
        "{second:?}"
    );
}

#[test]
fn corrupt_and_truncated_entries_are_rebuilt() {
    let cache = tempfile::tempdir().expect("a temporary folder");
    let (first, _) = run_child(cache.path());
    let files = entries(cache.path());
    for (k, file) in files.iter().enumerate() {
        let mut bytes = std::fs::read(file).expect("an entry");
        if k % 2 == 0 {
            let middle = bytes.len() / 2;
            bytes[middle] ^= 0x40;
        } else {
            bytes.truncate(bytes.len() / 3);
        }
        std::fs::write(file, bytes).expect("damaging an entry");
    }
    let (damaged, _) = run_child(cache.path());
    assert_eq!(
        (damaged.compiled, damaged.loaded, damaged.rejected),
        (first.compiled, 0, files.len() as u64),
        "{damaged:?}"
    );
    // The rebuilt entries are whole again.
    let (after, _) = run_child(cache.path());
    assert_eq!((after.compiled, after.rejected), (0, 0), "{after:?}");
}

#[test]
fn an_unusable_cache_only_disables_caching() {
    let scratch = tempfile::tempdir().expect("a temporary folder");
    // A folder that cannot be created (its parent is a file).
    let blocker = scratch.path().join("a-file");
    std::fs::write(&blocker, b"").expect("a file");
    let (stats, stderr) = run_child(&blocker.join("programs"));
    assert_eq!(stats.loaded, 0);
    assert!(stderr.contains("warning: program cache folder"), "{stderr}");
    // A folder whose entries cannot be written (each name is taken by a
    // directory; this holds even for root, unlike file permissions).
    let cache = scratch.path().join("cache");
    std::fs::create_dir(&cache).expect("a folder");
    run_child(&cache);
    for file in entries(&cache) {
        std::fs::remove_file(&file).expect("removing an entry");
        std::fs::create_dir_all(file.join("occupied")).expect("a directory in its place");
    }
    let (blocked, stderr) = run_child(&cache);
    assert!(blocked.store_failures >= 1, "{blocked:?}");
    assert_eq!(blocked.loaded, 0);
    assert!(
        stderr.contains("warning: cannot store compiled programs"),
        "{stderr}"
    );
}

#[test]
fn concurrent_processes_leave_whole_entries() {
    let cache = tempfile::tempdir().expect("a temporary folder");
    let children: Vec<Child> = (0..4).map(|_| spawn_child(cache.path())).collect();
    let compiled: Vec<ChildStats> = children.into_iter().map(|c| wait_child(c).0).collect();
    assert!(compiled.iter().all(|s| s.rejected == 0), "{compiled:?}");
    assert!(
        entries(cache.path())
            .iter()
            .all(|f| f.extension().is_some_and(|e| e == "bin")),
        "only whole entries remain: {:?}",
        entries(cache.path())
    );
    let (after, _) = run_child(cache.path());
    assert_eq!((after.compiled, after.rejected), (0, 0), "{after:?}");
}
