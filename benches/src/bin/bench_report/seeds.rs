//! `--suite seeds`: the seeds' workflows as the paper's figures, each
//! against the CPU in the same run. Figure 5: Cholesky against faer on all
//! cores. Figures 6 and 7: one value-and-gradient call (the host waits for
//! both, as a sampler does) and whole NUTS runs of the logistic and GP
//! models, against the same models on the CPU with faer on one thread.
//! Seed 004: the mixture E-step against a serial loop and threaded faer.
//! The models are the examples' own (`examples/support/`), so the report
//! measures exactly what a user runs.

#[path = "../../../../examples/support/gp.rs"]
mod gp;
#[path = "../../../../examples/support/logistic.rs"]
mod logistic;
#[path = "../../../../examples/support/mixture.rs"]
mod mixture;
#[path = "../../../../examples/support/mod.rs"]
mod support;

use crate::timing::measure;
use crate::workloads::Ctx;
use clfuse::Result;
use clfuse::nuts::nuts_rs::CpuLogpFunc;
use clfuse::nuts::{DeviceDensity, RunLength, sample_chain};
use clfuse::prelude::*;
use faer::{Mat, Side};
use std::time::Instant;

/// Workload names: the tables and plots group by them.
pub const CHOLESKY: &str = "Figure 5: Cholesky";
pub const LOGISTIC_GRADIENT: &str = "Figure 6: logistic regression, one gradient";
pub const LOGISTIC_RUN: &str = "Figure 6: logistic regression, whole NUTS run";
pub const GP_GRADIENT: &str = "Figure 7: GP regression, one gradient";
pub const GP_RUN: &str = "Figure 7: GP regression, whole NUTS run";
pub const ESTEP: &str = "Seed 004: mixture E-step (p = 14, k = 256)";
pub const DEVICE: &str = "fusion (OpenCL)";
/// The CPU peer of the density figures (the same model written with faer).
const CPU: &str = "faer (CPU, 1 thread)";
/// The GP row of the model differentiated through the Cholesky adjoint.
const GP_BEFORE: &str = "fusion, through rev::cholesky_decompose (before #37)";

/// Whether `workload` is one of this suite's (its table and plot differ).
pub fn is_seed_workload(workload: &str) -> bool {
    workload.starts_with("Figure ") || workload.starts_with("Seed 004")
}

/// Sizes and run lengths of the suite.
pub struct SeedSizes {
    pub cholesky: Vec<usize>,
    /// Largest Cholesky the CPU also runs.
    pub cholesky_cpu_max: usize,
    pub logistic: Vec<usize>,
    pub logistic_runs: Vec<usize>,
    pub gp: Vec<usize>,
    pub gp_cpu_max: usize,
    pub gp_runs: Vec<usize>,
    pub run_length: (u64, u64),
    pub estep_n: usize,
}

impl SeedSizes {
    pub fn new(quick: bool, gpu: bool) -> Self {
        if quick {
            return SeedSizes {
                cholesky: vec![256, 512],
                cholesky_cpu_max: 512,
                logistic: vec![1_000, 10_000],
                logistic_runs: vec![1_000],
                gp: vec![50, 100],
                gp_cpu_max: 100,
                gp_runs: vec![40],
                run_length: (50, 50),
                estep_n: 2_000,
            };
        }
        SeedSizes {
            cholesky: if gpu {
                vec![1000, 2000, 4096, 8192, 16384, 24000, 32000, 40000]
            } else {
                vec![500, 1000, 2000, 4096]
            },
            cholesky_cpu_max: 40000,
            logistic: if gpu {
                vec![1_000, 10_000, 100_000, 1_000_000, 10_000_000]
            } else {
                vec![1_000, 10_000, 100_000, 1_000_000]
            },
            logistic_runs: vec![1_000, 10_000, 100_000],
            gp: if gpu {
                vec![250, 500, 1000, 2000, 4000, 10000]
            } else {
                vec![100, 250, 500, 1000]
            },
            gp_cpu_max: 2000,
            gp_runs: vec![100, 250],
            run_length: (300, 300),
            estep_n: if gpu { 1_000_000 } else { 100_000 },
        }
    }
}

/// The median of up to `reps` timings of `f`, after a warm-up call when
/// `warm_up` (kernels compile on a device's first call), stopping early
/// once `budget_s` seconds are spent (at least one timing).
fn timed(
    reps: usize,
    budget_s: f64,
    warm_up: bool,
    mut f: impl FnMut() -> Result<()>,
) -> Result<(f64, f64, f64)> {
    if warm_up {
        f()?;
    }
    let mut times = Vec::new();
    let mut spent = 0.0;
    while times.len() < reps && (times.is_empty() || spent < budget_s) {
        let t = Instant::now();
        f()?;
        let t = t.elapsed().as_secs_f64();
        spent += t;
        times.push(t);
    }
    Ok(crate::timing::median_min_max(times))
}

fn toeplitz(n: usize) -> Vec<f64> {
    let mut v = Vec::with_capacity(n * n);
    for j in 0..n {
        for i in 0..n {
            let d = (i as f64 - j as f64).abs();
            v.push(if i == j { (n * n) as f64 } else { n as f64 - d });
        }
    }
    v
}

/// Figure 5: the blocked Cholesky against faer's on all cores (the paper's
/// Toeplitz input); large sizes are timed once.
pub fn cholesky(ctx: &mut Ctx, sizes: &SeedSizes, memory: u64) -> Result<()> {
    for &n in &sizes.cholesky {
        // The input, its copy and the factor, with room to spare.
        if (n * n * 8 * 4) as u64 > memory {
            continue;
        }
        ctx.progress.set_message(format!("cholesky n = {n}"));
        let data = toeplitz(n);
        let a = MatrixCl::from_slice(n, n, &data)?;
        let flops = (n as f64).powi(3) / 3.0;
        let reps = if n >= 16384 { 3 } else { ctx.reps };
        let t = measure(reps, || clfuse::linalg::cholesky_decompose(&a).map(drop))?;
        ctx.push(CHOLESKY, DEVICE, n, 0.0, flops, t);
        ctx.profile(format!("cholesky n = {n}"), || {
            clfuse::linalg::cholesky_decompose(&a).map(drop)
        })?;
        drop(a);
        if ctx.baselines && n <= sizes.cholesky_cpu_max {
            let fa = Mat::from_fn(n, n, |i, j| data[i + n * j]);
            // Nothing to compile on the CPU: the large sizes run once.
            let t = timed(ctx.reps, 20.0, n < 16384, || {
                fa.llt(Side::Lower)
                    .map(drop)
                    .map_err(|e| Error::InvalidArgument {
                        function: "faer llt",
                        argument: "toeplitz",
                        reason: format!("{e:?}"),
                    })
            })?;
            ctx.push(CHOLESKY, "faer (CPU, all cores)", n, 0.0, flops, t);
        }
    }
    Ok(())
}

fn per_call<F: clfuse::nuts::nuts_rs::CpuLogpFunc<LogpError = clfuse::nuts::DensityError>>(
    f: &mut F,
    theta: &[f64],
    reps: usize,
    budget_s: f64,
) -> Result<(f64, f64, f64)> {
    let mut grad = vec![0.0; theta.len()];
    timed(reps, budget_s, true, || {
        f.logp(theta, &mut grad).map(drop).map_err(|e| e.0)
    })
}

/// Records a whole run's wall time (after one warm-up evaluation).
fn run_chain<D>(
    ctx: &mut Ctx,
    workload: &str,
    variant: &str,
    n: usize,
    mut density: D,
    init: &[f64],
    length: RunLength,
) -> Result<()>
where
    D: clfuse::nuts::nuts_rs::CpuLogpFunc<LogpError = clfuse::nuts::DensityError>,
{
    // One evaluation first, so that the run does not include compiling.
    density
        .logp(init, &mut vec![0.0; init.len()])
        .map_err(|e| e.0)?;
    let run = sample_chain(density, init, length)?;
    let t = run.elapsed.as_secs_f64();
    ctx.push(workload, variant, n, 0.0, 0.0, (t, t, t));
    eprintln!(
        "{workload}, n = {n}, {variant}: {t:.2} s, {} leapfrog steps, {} divergences",
        run.leapfrog_steps, run.divergences
    );
    Ok(())
}

fn length(sizes: &SeedSizes) -> RunLength {
    RunLength {
        warmup: sizes.run_length.0,
        draws: sizes.run_length.1,
        seed: 20261123,
    }
}

/// The sizes a figure visits: those of its gradient sweep, then those only
/// its whole runs use (a size of 0 among the runs stands for none).
fn visited(gradients: &[usize], runs: &[usize]) -> Vec<usize> {
    let mut all = gradients.to_vec();
    all.extend(runs.iter().filter(|&&n| n > 0 && !gradients.contains(&n)));
    all
}

/// Figure 6: logistic regression, K = 10.
pub fn logistic(ctx: &mut Ctx, sizes: &SeedSizes) -> Result<()> {
    let k = 10;
    for n in visited(&sizes.logistic, &sizes.logistic_runs) {
        ctx.progress.set_message(format!("logistic N = {n}"));
        let data = logistic::synthetic(n, k);
        let x = MatrixCl::from_slice(n, k, &data.x)?;
        let sign_host: Vec<f64> = data.y.iter().map(|&y| 2.0 * y as f64 - 1.0).collect();
        let sign = MatrixCl::from_slice(n, 1, &sign_host)?;
        let model = |theta: &clfuse::rev::Var| logistic::device_model(&x, &sign, theta);
        let mut device = DeviceDensity::new(k + 1, model)?;
        let mut cpu = logistic::CpuLogistic::new(&data);
        if sizes.logistic.contains(&n) {
            let t = per_call(&mut device, &data.truth, ctx.reps.max(20), 5.0)?;
            ctx.push(LOGISTIC_GRADIENT, DEVICE, n, 0.0, 0.0, t);
            if ctx.baselines {
                let t = per_call(&mut cpu, &data.truth, ctx.reps.max(20), 5.0)?;
                ctx.push(LOGISTIC_GRADIENT, CPU, n, 0.0, 0.0, t);
            }
        }
        if sizes.logistic_runs.contains(&n) {
            let init = vec![0.0; k + 1];
            run_chain(ctx, LOGISTIC_RUN, DEVICE, n, device, &init, length(sizes))?;
            if ctx.baselines {
                run_chain(ctx, LOGISTIC_RUN, CPU, n, cpu, &init, length(sizes))?;
            }
        }
    }
    Ok(())
}

/// Figure 7: GP regression in D = 2.
pub fn gp(ctx: &mut Ctx, sizes: &SeedSizes) -> Result<()> {
    let d = 2;
    for n in visited(&sizes.gp, &sizes.gp_runs) {
        ctx.progress.set_message(format!("GP n = {n}"));
        let data = gp::synthetic(n, d)?;
        let x = MatrixCl::from_slice(n, d, &data.x)?;
        let d2 = squared_distance(&x, &x)?.eval()?;
        let y = MatrixCl::from_slice(n, 1, &data.y)?;
        let prior_mean = MatrixCl::from_slice(3, 1, &gp::PRIOR_MEAN)?;
        let model = |theta: &clfuse::rev::Var| gp::device_model(&d2, &y, &prior_mean, theta);
        let mut device = DeviceDensity::new(3, model)?;
        let before = |theta: &clfuse::rev::Var| {
            gp::device_model_through_cholesky(&d2, &y, &prior_mean, theta)
        };
        let mut device_before = DeviceDensity::new(3, before)?;
        // Both forms give the same value and gradient before either is timed.
        support::agree(
            "bench GP",
            &mut device,
            &mut device_before,
            &gp::TRUTH,
            1e-8,
        )?;
        let mut cpu = gp::CpuGp {
            x: Mat::from_fn(n, d, |i, k| data.x[i + n * k]),
            y: Mat::from_fn(n, 1, |i, _| data.y[i]),
        };
        if sizes.gp.contains(&n) {
            let t = per_call(&mut device, &gp::TRUTH, ctx.reps, 5.0)?;
            ctx.push(GP_GRADIENT, DEVICE, n, 0.0, 0.0, t);
            let t = per_call(&mut device_before, &gp::TRUTH, ctx.reps, 5.0)?;
            ctx.push(GP_GRADIENT, GP_BEFORE, n, 0.0, 0.0, t);
            // Where one call's time goes (FUSION_PROFILING=1): every
            // launch, read and host wait on the timeline.
            let mut grad = [0.0; 3];
            ctx.profile(format!("GP value and gradient, n = {n}"), || {
                device
                    .logp(&gp::TRUTH, &mut grad)
                    .map(drop)
                    .map_err(|e| e.0)
            })?;
            if ctx.baselines && n <= sizes.gp_cpu_max {
                let t = per_call(&mut cpu, &gp::TRUTH, ctx.reps, 10.0)?;
                ctx.push(GP_GRADIENT, CPU, n, 0.0, 0.0, t);
            }
        }
        if sizes.gp_runs.contains(&n) {
            run_chain(ctx, GP_RUN, DEVICE, n, device, &[0.0; 3], length(sizes))?;
            if ctx.baselines {
                run_chain(ctx, GP_RUN, CPU, n, cpu, &[0.0; 3], length(sizes))?;
            }
        }
    }
    Ok(())
}

/// Seed 004: the E-step with the host waiting for each.
pub fn estep(ctx: &mut Ctx, sizes: &SeedSizes) -> Result<()> {
    let (n, p, k) = (sizes.estep_n, 14, 256);
    ctx.progress.set_message(format!("E-step n = {n}"));
    let m = mixture::synthetic(n, p, k);
    let expanded_host = m.expanded_data();
    let expanded = MatrixCl::from_slice(n, 2 * p, &expanded_host)?;
    let (w_host, constant_host) = m.expanded_parameters();
    let log_resp = MatrixCl::<f64>::zeros(n, k)?;
    let t = measure(ctx.reps, || {
        let w = MatrixCl::from_slice(2 * p, k, &w_host)?;
        let constant = MatrixCl::from_slice(1, k, &constant_host)?;
        mixture::e_step(&expanded, &w, &constant, &log_resp)
    })?;
    ctx.push(ESTEP, DEVICE, n, 0.0, 0.0, t);
    let t = measure(ctx.reps, || {
        let w = MatrixCl::from_slice(2 * p, k, &w_host)?;
        let constant = MatrixCl::from_slice(1, k, &constant_host)?;
        mixture::e_step_two_passes(&expanded, &w, &constant, &log_resp)
    })?;
    ctx.push(ESTEP, "fusion, two passes (before #37)", n, 0.0, 0.0, t);
    ctx.profile(format!("E-step, n = {n}"), || {
        let w = MatrixCl::from_slice(2 * p, k, &w_host)?;
        let constant = MatrixCl::from_slice(1, k, &constant_host)?;
        mixture::e_step(&expanded, &w, &constant, &log_resp)
    })?;
    if ctx.baselines {
        let t = timed(3, 10.0, false, || {
            std::hint::black_box(m.serial());
            Ok(())
        })?;
        ctx.push(ESTEP, "serial loop (CPU, 1 thread)", n, 0.0, 0.0, t);
        let expanded_faer = Mat::from_fn(n, 2 * p, |i, j| expanded_host[i + n * j]);
        let w_faer = Mat::from_fn(2 * p, k, |i, j| w_host[i + 2 * p * j]);
        let t = timed(3, 10.0, false, || {
            std::hint::black_box(m.threaded(&expanded_faer, &w_faer, &constant_host));
            Ok(())
        })?;
        ctx.push(ESTEP, "faer (CPU, all cores)", n, 0.0, 0.0, t);
    }
    Ok(())
}
