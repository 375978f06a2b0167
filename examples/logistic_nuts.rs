//! Bayesian logistic regression sampled with NUTS (the paper's Figure 6):
//! the log density written as device expressions and differentiated by the
//! tape, against the same model on the CPU with faer, both sampled by
//! `nuts-rs` from the same seed.
//!
//! ```text
//! y_i ~ Bernoulli(inv_logit(α + x_i·β))    α, β_k ~ Normal(0, 5)
//! ```
//!
//! Synthetic data from a fixed seed; the posterior means must lie within 3
//! posterior standard deviations of the coefficients that generated the
//! data, and the device and CPU log densities must agree to 1e-9.
//!
//! `cargo run --release --features nuts --example logistic_nuts -- [--n N] [--k K] [--warmup W] [--draws D] [--quick]`

#[path = "support/logistic.rs"]
mod logistic;
mod support;

use clfuse::Result;
use clfuse::nuts::nuts_rs::CpuLogpFunc;
use clfuse::nuts::{DeviceDensity, RunLength, sample_chain};
use clfuse::prelude::*;
use logistic::{CpuLogistic, device_model, synthetic};
use support::{agree, check_posterior, flag, per_gradient, report_run};

const EXAMPLE: &str = "logistic_nuts";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let n = flag(&args, "--n", if quick { 400 } else { 100_000 });
    let k = flag(&args, "--k", if quick { 3 } else { 10 });
    let length = RunLength {
        warmup: flag(&args, "--warmup", 1000) as u64,
        draws: flag(&args, "--draws", 1000) as u64,
        seed: 20261123,
    };
    let data = synthetic(n, k);
    println!(
        "logistic regression, N = {n}, K = {k}: {} warm-up + {} draws, {}",
        length.warmup,
        length.draws,
        clfuse::Runtime::get()?.device_info().name
    );

    let x = MatrixCl::from_slice(n, k, &data.x)?;
    let sign_host: Vec<f64> = data.y.iter().map(|&y| 2.0 * y as f64 - 1.0).collect();
    let sign = MatrixCl::from_slice(n, 1, &sign_host)?;
    let mut device = DeviceDensity::new(k + 1, |theta| device_model(&x, &sign, theta))?;
    let mut cpu = CpuLogistic::new(&data);

    // The two densities agree (value and gradient) at the truth.
    let v_device = agree(EXAMPLE, &mut device, &mut cpu, &data.truth, 1e-9)?;
    let v_cpu = cpu
        .logp(&data.truth, &mut vec![0.0; k + 1])
        .map_err(|e| e.0)?;
    println!("log density at the truth: device {v_device:.10} = CPU {v_cpu:.10}");

    let calls = if quick { 20 } else { 200 };
    let (_, t_device) = per_gradient(&mut device, &data.truth, calls)?;
    let (_, t_cpu) = per_gradient(&mut cpu, &data.truth, calls)?;
    println!(
        "per gradient (host waits for value and gradient): device {:.1} µs, CPU (faer, 1 thread) {:.1} µs, speedup {:.2}x",
        t_device * 1e6,
        t_cpu * 1e6,
        t_cpu / t_device
    );

    let init = vec![0.0; k + 1];
    let device_run = sample_chain(device, &init, length)?;
    let cpu_run = sample_chain(cpu, &init, length)?;
    for (name, run) in [("device", &device_run), ("CPU", &cpu_run)] {
        report_run(name, run);
        check_posterior(EXAMPLE, name, run, &data.truth)?;
    }
    println!(
        "whole-run speedup {:.2}x; posterior means within 3 sd of the truth:",
        cpu_run.elapsed.as_secs_f64() / device_run.elapsed.as_secs_f64()
    );
    for (j, ((m, s), t)) in device_run.mean_and_sd().iter().zip(&data.truth).enumerate() {
        let name = if j == 0 {
            "alpha".to_string()
        } else {
            format!("beta[{}]", j - 1)
        };
        println!("  {name:>9}: mean {m:+.4} sd {s:.4} (truth {t:+.4})");
    }
    Ok(())
}
