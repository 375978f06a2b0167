//! Gaussian-process regression sampled with NUTS (the paper's Figure 7):
//! a squared-exponential covariance built on the device by fused
//! operations, its Cholesky factor, one substitution and the
//! log-determinant, differentiated by the tape through the blocked
//! Cholesky adjoint; against the same model on the CPU with faer (one
//! thread), both sampled by `nuts-rs` from the same seed.
//!
//! ```text
//! y ~ MultiNormal(0, K),  K_ij = σ² exp(-‖x_i − x_j‖² / (2ℓ²)) + τ² δ_ij
//! log ℓ ~ Normal(log 0.5, 1),  log σ ~ Normal(0, 1),  log τ ~ Normal(log 0.3, 1)
//! ```
//!
//! Synthetic data (n points in [0, 3]^D) drawn from the model itself with a
//! fixed seed. The device and CPU densities must agree to 1e-9, and the
//! posterior means of (log ℓ, log σ, log τ) must lie within 3 posterior
//! standard deviations of the values that generated the data.
//!
//! `cargo run --release --features nuts --example gp_nuts -- [--n N] [--d D] [--warmup W] [--draws D] [--cpu-run 0|1] [--quick]`

#[path = "support/gp.rs"]
mod gp;
mod support;

use clfuse::Result;
use clfuse::nuts::{DeviceDensity, RunLength, sample_chain};
use clfuse::prelude::*;
use faer::Mat;
use gp::{CpuGp, PRIOR_MEAN, TRUTH, device_model, synthetic};
use support::{agree, check_posterior, flag, per_gradient, report_run};

const EXAMPLE: &str = "gp_nuts";
fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let n = flag(&args, "--n", if quick { 60 } else { 1000 });
    let d = flag(&args, "--d", 2);
    let length = RunLength {
        warmup: flag(&args, "--warmup", if quick { 200 } else { 1000 }) as u64,
        draws: flag(&args, "--draws", if quick { 200 } else { 1000 }) as u64,
        seed: 20261123,
    };
    let cpu_run = flag(&args, "--cpu-run", 1) == 1;
    let data = synthetic(n, d)?;
    println!(
        "GP regression, n = {n}, D = {d}: {} warm-up + {} draws, {}",
        length.warmup,
        length.draws,
        clfuse::Runtime::get()?.device_info().name
    );

    // Pairwise squared distances once, on the device (data, not parameters).
    let x = MatrixCl::from_slice(n, d, &data.x)?;
    let d2 = squared_distance(&x, &x)?.eval()?;
    let y = MatrixCl::from_slice(n, 1, &data.y)?;
    let prior_mean = MatrixCl::from_slice(3, 1, &PRIOR_MEAN)?;
    let mut device = DeviceDensity::new(3, |theta| device_model(&d2, &y, &prior_mean, theta))?;
    let mut cpu = CpuGp {
        x: Mat::from_fn(n, d, |i, k| data.x[i + n * k]),
        y: Mat::from_fn(n, 1, |i, _| data.y[i]),
    };

    // The two densities agree (value and gradient) at the truth and elsewhere.
    let value = agree(EXAMPLE, &mut device, &mut cpu, &TRUTH, 1e-9)?;
    agree(EXAMPLE, &mut device, &mut cpu, &[0.3, -0.4, -2.0], 1e-9)?;
    println!("log density at the truth: {value:.10} (device = CPU to 1e-9)");

    let calls = if quick { 5 } else { 20 };
    let (_, t_device) = per_gradient(&mut device, &TRUTH, calls)?;
    let (_, t_cpu) = per_gradient(&mut cpu, &TRUTH, calls.min(5))?;
    println!(
        "per gradient (host waits for value and gradient): device {:.1} µs, CPU (faer, 1 thread) {:.1} µs, speedup {:.2}x",
        t_device * 1e6,
        t_cpu * 1e6,
        t_cpu / t_device
    );

    let init = [0.0; 3];
    let device_run = sample_chain(device, &init, length)?;
    report_run("device", &device_run);
    check_posterior(EXAMPLE, "device", &device_run, &TRUTH)?;
    if cpu_run {
        let cpu_result = sample_chain(cpu, &init, length)?;
        report_run("CPU", &cpu_result);
        check_posterior(EXAMPLE, "CPU", &cpu_result, &TRUTH)?;
        println!(
            "whole-run speedup {:.2}x",
            cpu_result.elapsed.as_secs_f64() / device_run.elapsed.as_secs_f64()
        );
    }
    println!("posterior means within 3 sd of the truth:");
    let names = ["log lengthscale", "log sigma", "log noise"];
    for ((name, (m, s)), t) in names.iter().zip(device_run.mean_and_sd()).zip(TRUTH) {
        println!("  {name:>15}: mean {m:+.4} sd {s:.4} (truth {t:+.4})");
    }
    Ok(())
}
