//! What the NUTS examples share: flags, per-gradient timing, and the checks
//! that make each example verify its own answer.

#![allow(dead_code)]

use clfuse::nuts::nuts_rs::CpuLogpFunc;
use clfuse::nuts::{ChainResult, DensityError};
use clfuse::{Error, Result};
use std::time::Instant;

mod flags;
#[allow(unused_imports)]
pub use flags::flag;

/// The example's failure: `what` did not hold.
pub fn failed(example: &'static str, what: &'static str, reason: String) -> Error {
    Error::InvalidArgument {
        function: example,
        argument: what,
        reason,
    }
}

/// Seconds per value-and-gradient call at `theta` (the host waits for both).
pub fn per_gradient<F: CpuLogpFunc<LogpError = DensityError>>(
    f: &mut F,
    theta: &[f64],
    calls: usize,
) -> Result<(f64, f64)> {
    let mut grad = vec![0.0; theta.len()];
    let value = f.logp(theta, &mut grad).map_err(|e| e.0)?;
    let start = Instant::now();
    for _ in 0..calls {
        f.logp(theta, &mut grad).map_err(|e| e.0)?;
    }
    Ok((value, start.elapsed().as_secs_f64() / calls.max(1) as f64))
}

/// Checks that two densities give the same value and gradient at `theta`
/// (relative `tolerance`); returns the value.
pub fn agree<A, B>(
    example: &'static str,
    device: &mut A,
    cpu: &mut B,
    theta: &[f64],
    tolerance: f64,
) -> Result<f64>
where
    A: CpuLogpFunc<LogpError = DensityError>,
    B: CpuLogpFunc<LogpError = DensityError>,
{
    let (mut g_device, mut g_cpu) = (vec![0.0; theta.len()], vec![0.0; theta.len()]);
    let v_device = device.logp(theta, &mut g_device).map_err(|e| e.0)?;
    let v_cpu = cpu.logp(theta, &mut g_cpu).map_err(|e| e.0)?;
    for (a, b) in std::iter::once((&v_device, &v_cpu)).chain(g_device.iter().zip(&g_cpu)) {
        if (a - b).abs() > tolerance * b.abs().max(1.0) {
            return Err(failed(
                example,
                "device density",
                format!("device {a} vs CPU {b} at {theta:?}"),
            ));
        }
    }
    Ok(v_device)
}

/// Checks that every posterior mean lies within 3 posterior standard
/// deviations of the value that generated the data.
pub fn check_posterior(
    example: &'static str,
    name: &str,
    run: &ChainResult,
    truth: &[f64],
) -> Result<()> {
    for (j, ((mean, sd), t)) in run.mean_and_sd().iter().zip(truth).enumerate() {
        if (mean - t).abs() > 3.0 * sd {
            return Err(failed(
                example,
                "posterior",
                format!("{name}: parameter {j} has mean {mean:.4} (sd {sd:.4}), truth {t:.4}"),
            ));
        }
    }
    Ok(())
}

/// One line about a finished chain.
pub fn report_run(name: &str, run: &ChainResult) {
    println!(
        "{name:>6}: whole run {:.2} s, {} leapfrog steps ({:.1} µs each), {} divergences",
        run.elapsed.as_secs_f64(),
        run.leapfrog_steps,
        run.elapsed.as_secs_f64() * 1e6 / run.leapfrog_steps.max(1) as f64,
        run.divergences
    );
}
