//! What the NUTS examples share: flags, per-gradient timing, and the checks
//! that make each example verify its own answer.

#![allow(dead_code)]

use clfuse::nuts::diagnostics::mcse_mean;
use clfuse::nuts::nuts_rs::CpuLogpFunc;
use clfuse::nuts::{ChainDraws, ChainResult, DensityError, Fit, Summary};
use clfuse::{Error, Result};
use std::borrow::Cow;
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
    // More calls before the clock starts: a replaying density records
    // twice, builds its replay (compiling any compact variant) at the third
    // call, and builds the kernels that run the position write as its first
    // step over its first replays (one per sequence of launches found
    // pending before it): on a fresh machine a build inside the timed calls
    // made a density look 50x slower than it is (2026-11-29, H200).
    for _ in 0..6 {
        f.logp(theta, &mut grad).map_err(|e| e.0)?;
    }
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

/// A published posterior summary of one column: its mean and mean square,
/// each with its Monte Carlo standard error (posteriordb's form).
pub struct Reference {
    pub name: Cow<'static, str>,
    pub mean: (f64, f64),
    pub mean_square: (f64, f64),
}

impl Reference {
    pub const fn new(name: &'static str, mean: (f64, f64), mean_square: (f64, f64)) -> Self {
        Reference {
            name: Cow::Borrowed(name),
            mean,
            mean_square,
        }
    }

    /// A reference computed exactly (no Monte Carlo error).
    pub fn exact(name: String, mean: f64, sd: f64) -> Self {
        Reference {
            name: Cow::Owned(name),
            mean: (mean, 0.0),
            mean_square: (mean * mean + sd * sd, 0.0),
        }
    }

    /// The sd and its MCSE: `sqrt(E[x²] - E[x]²)`, the error of `E[x²]`
    /// carried by the delta method (it dominates that of `E[x]²`).
    pub fn sd(&self) -> (f64, f64) {
        let sd = (self.mean_square.0 - self.mean.0 * self.mean.0).sqrt();
        (sd, self.mean_square.1 / (2.0 * sd))
    }
}

/// The Monte Carlo standard error of the draws' sd: the delta method on
/// the mean of the squared deviations, with that mean's own ESS (the
/// `posterior` package's `mcse_sd` in its simple form).
pub fn mcse_sd(chains: &[Vec<f64>]) -> f64 {
    let all: Vec<f64> = chains.concat();
    let n = all.len() as f64;
    let mean = all.iter().sum::<f64>() / n;
    let squares: Vec<Vec<f64>> = chains
        .iter()
        .map(|c| c.iter().map(|v| (v - mean).powi(2)).collect())
        .collect();
    let variance = squares.concat().iter().sum::<f64>() / (n - 1.0);
    mcse_mean(&squares) / (2.0 * variance.sqrt())
}

/// Checks one column of `fit` against a published reference: mean and sd
/// each within 4 combined Monte Carlo standard errors (this run's and the
/// reference's, independent runs).
pub fn check_reference(
    example: &'static str,
    fit: &Fit,
    summary: &Summary,
    reference: &Reference,
) -> Result<()> {
    let name = &*reference.name;
    let chains = fit
        .column(name)
        .ok_or_else(|| failed(example, "fit", format!("has no column `{name}`")))?;
    let row = summary
        .row(name)
        .ok_or_else(|| failed(example, "fit", format!("has no column `{name}`")))?;
    let (mean, mean_error) = reference.mean;
    let tolerance = 4.0 * row.mcse_mean.hypot(mean_error);
    // Written so that a NaN (mean or MCSE) fails.
    let within = (row.mean - mean).abs() <= tolerance;
    if !within {
        return Err(failed(
            example,
            "posterior mean",
            format!(
                "{name}: {:.4} vs reference {mean:.4} (4 MCSE = {tolerance:.4})",
                row.mean
            ),
        ));
    }
    let (sd, sd_error) = reference.sd();
    let tolerance = 4.0 * mcse_sd(&chains).hypot(sd_error);
    let within = (row.sd - sd).abs() <= tolerance;
    if !within {
        return Err(failed(
            example,
            "posterior sd",
            format!(
                "{name}: {:.4} vs reference {sd:.4} (4 MCSE = {tolerance:.4})",
                row.sd
            ),
        ));
    }
    Ok(())
}

/// `fit` with more columns, each draw's computed from its values (Stan's
/// transformed parameters and generated quantities).
pub fn with_columns(fit: &Fit, names: &[String], f: impl Fn(&[f64]) -> Vec<f64>) -> Result<Fit> {
    let chains = fit
        .chains()
        .iter()
        .map(|c| ChainDraws {
            draws: c.draws.iter().map(|d| [d.clone(), f(d)].concat()).collect(),
            ..c.clone()
        })
        .collect();
    Fit::new([fit.column_names(), names].concat(), chains)
}

/// Standard normal draws from a fixed seed (xorshift64 and Box-Muller):
/// synthetic data that every run and platform reproduces.
pub fn normals(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed.max(1);
    let mut uniform = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    move || {
        let (u, v) = (uniform().max(f64::MIN_POSITIVE), uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}
