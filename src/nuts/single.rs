//! One chain of any `nuts-rs` density with fixed settings ([`sample_chain`]).

use clfuse_core::{Error, Result};
use nuts_rs::{Chain, CpuLogpFunc, CpuMath, DiagNutsSettings, Settings};
use std::time::{Duration, Instant};

/// How long to run one chain ([`sample_chain`]).
///
/// ```
/// use clfuse::nuts::RunLength;
/// let length = RunLength { warmup: 500, draws: 1000, seed: 1 };
/// assert_eq!(length.warmup + length.draws, 1500);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct RunLength {
    /// Warm-up (adaptation) iterations, not kept.
    pub warmup: u64,
    /// Draws kept.
    pub draws: u64,
    /// The chain's random seed.
    pub seed: u64,
}

/// What one chain of [`sample_chain`] produced (unconstrained draws).
///
/// ```
/// use clfuse::nuts::ChainResult;
/// let r = ChainResult { draws: vec![vec![0.5]], divergences: 0, leapfrog_steps: 3, elapsed: Default::default() };
/// assert_eq!(r.draws[0], [0.5]);
/// ```
#[derive(Debug, Clone)]
pub struct ChainResult {
    /// The kept draws, `draws x dim`, one row per draw.
    pub draws: Vec<Vec<f64>>,
    /// Divergent transitions after warm-up.
    pub divergences: u64,
    /// Leapfrog steps over the whole run (each one gradient evaluation).
    pub leapfrog_steps: u64,
    /// Wall time of the whole run, warm-up included.
    pub elapsed: Duration,
}

impl ChainResult {
    /// The posterior mean and standard deviation of each parameter.
    ///
    /// ```
    /// use clfuse::nuts::ChainResult;
    /// let r = ChainResult { draws: vec![vec![1.0], vec![3.0]], divergences: 0, leapfrog_steps: 0, elapsed: Default::default() };
    /// assert_eq!(r.mean_and_sd(), vec![(2.0, 2f64.sqrt())]);
    /// ```
    pub fn mean_and_sd(&self) -> Vec<(f64, f64)> {
        let n = self.draws.len() as f64;
        let dim = self.draws.first().map_or(0, Vec::len);
        (0..dim)
            .map(|k| {
                let mean = self.draws.iter().map(|d| d[k]).sum::<f64>() / n;
                let var = self
                    .draws
                    .iter()
                    .map(|d| (d[k] - mean).powi(2))
                    .sum::<f64>()
                    / (n - 1.0).max(1.0);
                (mean, var.sqrt())
            })
            .collect()
    }
}

/// Runs one NUTS chain (diagonal mass matrix adapted during warm-up) over
/// any `nuts-rs` density from `init`, with `nuts-rs`'s other default
/// settings, and keeps its unconstrained draws. [`sample`](super::sample)
/// runs several chains of a [`Model`](super::Model) with Stan-like settings
/// and diagnostics.
///
/// ```
/// use clfuse::nuts::{DeviceDensity, RunLength, sample_chain};
/// use clfuse::prelude::*;
/// let density = DeviceDensity::new(1, |theta| colwise_sum(-0.5f64 * square(theta)).eval())?;
/// let run = sample_chain(density, &[0.5], RunLength { warmup: 100, draws: 200, seed: 7 })?;
/// assert_eq!(run.draws.len(), 200);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn sample_chain<D: CpuLogpFunc>(
    density: D,
    init: &[f64],
    length: RunLength,
) -> Result<ChainResult> {
    let sampler_error = |e: &dyn std::fmt::Display| Error::InvalidArgument {
        function: "nuts::sample_chain",
        argument: "density",
        reason: format!("the sampler stopped: {e}"),
    };
    let settings = DiagNutsSettings {
        num_tune: length.warmup,
        num_draws: length.draws,
        seed: length.seed,
        ..DiagNutsSettings::default()
    };
    let mut rng =
        <nuts_rs::rand::rngs::StdRng as nuts_rs::rand::SeedableRng>::seed_from_u64(length.seed);
    let mut chain = settings
        .new_chain(0, CpuMath::new(density), &mut rng)
        .map_err(|e| sampler_error(&e))?;
    let start = Instant::now();
    chain.set_position(init).map_err(|e| sampler_error(&e))?;
    let mut result = ChainResult {
        draws: Vec::with_capacity(length.draws as usize),
        divergences: 0,
        leapfrog_steps: 0,
        elapsed: Duration::ZERO,
    };
    for _ in 0..length.warmup + length.draws {
        let (draw, progress) = chain.draw().map_err(|e| sampler_error(&e))?;
        result.leapfrog_steps += progress.num_steps;
        if !progress.tuning {
            result.divergences += progress.diverging as u64;
            result.draws.push(draw.into_vec());
        }
    }
    result.elapsed = start.elapsed();
    Ok(result)
}
