//! First-call latency in a new process (#22): how long a program waits
//! for the runtime and for the first evaluation of expressions it has not
//! run before, with neither cache warm, with the driver's own cache, with
//! clfuse's disk cache of program binaries, and with both.
//!
//! Each measurement is a fresh process: this binary runs itself with
//! `--first-call-child`, which prints one `FIRST_CALL` line.

use crate::workloads::Ctx;
use clfuse::prelude::*;
use clfuse::{Runtime, kernel_stats};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// What one child process measured, in seconds.
#[derive(Debug, Clone, Copy)]
struct ChildTimes {
    runtime: f64,
    first_fused: f64,
    second_fused: f64,
    hand_written: f64,
    trivial: f64,
    compiled: u64,
    loaded: u64,
}

/// Seconds `f` takes, the device finished.
fn timed(f: impl FnOnce() -> clfuse::Result<()>) -> clfuse::Result<f64> {
    let start = Instant::now();
    f()?;
    Runtime::get()?.finish()?;
    Ok(start.elapsed().as_secs_f64())
}

/// The child's work: the runtime, two small fused expressions and one
/// hand-written kernel (a GEMM), each the first of its kind in the process.
pub fn child() -> clfuse::Result<()> {
    let start = Instant::now();
    Runtime::get()?;
    let runtime = start.elapsed().as_secs_f64();
    let n = 1000;
    let a = MatrixCl::from_slice(n, 1, &vec![1.0f64; n])?;
    let b = MatrixCl::from_slice(n, 1, &vec![2.0f64; n])?;
    let d = MatrixCl::<f64>::zeros(n, 1)?;
    let g = MatrixCl::from_slice(64, 64, &vec![0.5f64; 64 * 64])?;
    Runtime::get()?.finish()?;
    let before = kernel_stats();
    let first_fused = timed(|| d.assign(3.0f64 * (&a + &b)))?;
    let second_fused = timed(|| d.assign(exp(&a) - log1p(&b)))?;
    let hand_written = timed(|| (&g * &g).eval().map(drop))?;
    let built = kernel_stats() - before;
    // The driver's floor: a one-line kernel, compiled (or loaded) and run.
    let flag = MatrixCl::<i32>::zeros(1, 1)?;
    Runtime::get()?.finish()?;
    let trivial = timed(|| {
        let kernel = clfuse::clfuse_core::compile_kernel(
            "one_line",
            "__kernel void one_line(__global int* x) { x[0] += 1; }",
            "",
            "one_line",
        )?;
        let arg =
            clfuse::clfuse_core::KernelArg::buffer(&flag, clfuse::clfuse_core::Access::ReadWrite);
        clfuse::clfuse_core::enqueue(&kernel, &[arg], clfuse::clfuse_core::NdRange::d1(1)).map(drop)
    })?;
    println!(
        "FIRST_CALL {runtime} {first_fused} {second_fused} {hand_written} {trivial} {} {}",
        built.compiled, built.loaded
    );
    Ok(())
}

fn parse(stdout: &str) -> Option<ChildTimes> {
    let line = stdout.lines().find_map(|l| l.strip_prefix("FIRST_CALL "))?;
    let v: Vec<f64> = line
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    (v.len() == 7).then(|| ChildTimes {
        runtime: v[0],
        first_fused: v[1],
        second_fused: v[2],
        hand_written: v[3],
        trivial: v[4],
        compiled: v[5] as u64,
        loaded: v[6] as u64,
    })
}

/// Where the caches of one scenario live.
struct Caches<'a> {
    /// clfuse's disk cache (`None`: off).
    ours: Option<&'a Path>,
    /// The driver's cache (`None`: disabled, or a fresh folder each run).
    driver: Option<&'a Path>,
}

fn run_child(
    caches: &Caches<'_>,
    scratch: &Path,
) -> Result<ChildTimes, Box<dyn std::error::Error>> {
    let fresh = tempfile::tempdir_in(scratch)?;
    let mut command = Command::new(std::env::current_exe()?);
    command.arg("--first-call-child");
    match caches.ours {
        Some(folder) => command.env("FUSION_CACHE_DIR", folder),
        None => command.env("FUSION_CACHE_DIR", "off"),
    };
    match caches.driver {
        // NVIDIA's compute cache and PoCL's kernel cache.
        Some(folder) => command
            .env("CUDA_CACHE_PATH", folder)
            .env("POCL_CACHE_DIR", folder)
            .env_remove("CUDA_CACHE_DISABLE"),
        None => command
            .env("CUDA_CACHE_DISABLE", "1")
            .env("POCL_CACHE_DIR", fresh.path()),
    };
    let output = command.output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "first-call child failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    parse(&stdout).ok_or_else(|| format!("no FIRST_CALL line in {stdout:?}").into())
}

/// Runs each scenario `runs` times (fresh processes) and records the
/// median, fastest and slowest of each measured step.
pub fn first_call(ctx: &mut Ctx, runs: usize) -> Result<(), Box<dyn std::error::Error>> {
    let scratch = tempfile::tempdir()?;
    let ours = scratch.path().join("clfuse-programs");
    let driver = scratch.path().join("driver-cache");
    std::fs::create_dir_all(&ours)?;
    std::fs::create_dir_all(&driver)?;
    let scenarios: [(&str, Caches<'_>); 4] = [
        (
            "no cache (cold compile)",
            Caches {
                ours: None,
                driver: None,
            },
        ),
        (
            "driver's cache only",
            Caches {
                ours: None,
                driver: Some(&driver),
            },
        ),
        (
            "clfuse disk cache only",
            Caches {
                ours: Some(&ours),
                driver: None,
            },
        ),
        (
            "both caches",
            Caches {
                ours: Some(&ours),
                driver: Some(&driver),
            },
        ),
    ];
    for (name, caches) in &scenarios {
        // One unmeasured run fills whichever caches the scenario keeps.
        run_child(caches, scratch.path())?;
        let times: Vec<ChildTimes> = (0..runs)
            .map(|_| run_child(caches, scratch.path()))
            .collect::<Result<_, _>>()?;
        let built = times[0];
        let variant = format!(
            "{name} ({} compiled, {} loaded)",
            built.compiled, built.loaded
        );
        let steps: [(&str, fn(&ChildTimes) -> f64); 5] = [
            ("runtime start", |t| t.runtime),
            ("first call: d = 3*(a+b), n = 1000", |t| t.first_fused),
            ("first call: exp(a) - log1p(b)", |t| t.second_fused),
            ("first call: 64x64 GEMM (hand-written)", |t| t.hand_written),
            ("first call: a one-line kernel (the driver's floor)", |t| {
                t.trivial
            }),
        ];
        for (step, pick) in steps {
            let mut values: Vec<f64> = times.iter().map(pick).collect();
            values.sort_by(f64::total_cmp);
            let median = values[values.len() / 2];
            let (min, max) = (values[0], values[values.len() - 1]);
            ctx.push(
                &format!("new process, {step}"),
                &variant,
                1000,
                0.0,
                0.0,
                (median, min, max),
            );
        }
    }
    Ok(())
}
