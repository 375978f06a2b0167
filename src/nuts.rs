//! Sampling a device model with NUTS (the `nuts-rs` crate, feature `nuts`).
//!
//! [`DeviceDensity`] turns a model written with [`rev`] — a
//! closure from one column of parameters to a `1 x 1` log density — into
//! `nuts-rs`'s [`CpuLogpFunc`]. Each evaluation writes the position to the
//! device, records the model, runs its reverse pass and reads value and
//! gradient back in one transfer ([`rev::value_and_grad_to_host`]); the
//! tape is truncated after each, so memory stays flat over a whole run.
//! [`sample`] runs one chain and keeps its draws.

/// The sampler crate, for its traits (`CpuLogpFunc`, `HasDims`).
pub use nuts_rs;

use crate::rev::{self, Var};
use clfuse_core::{Error, MatrixCl, Result};
use nuts_rs::{
    Chain, CpuLogpFunc, CpuMath, CpuMathError, DiagNutsSettings, HasDims, LogpError, Settings,
};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// A model's failure at one position. Non-finite values and failed
/// decompositions are recoverable (the sampler treats the position as a
/// divergence); anything else (a device error) stops sampling.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DensityError(pub Error);

impl LogpError for DensityError {
    fn is_recoverable(&self) -> bool {
        matches!(
            self.0,
            Error::NotFinite { .. }
                | Error::NotPositiveDefinite { .. }
                | Error::CheckFailed { .. }
                | Error::NaN { .. }
        )
    }
}

/// A log density on the device, for `nuts-rs`: `model(&theta)` returns the
/// `1 x 1` log density of the `dim x 1` parameter column `theta`.
///
/// ```
/// use clfuse::nuts::DeviceDensity;
/// use clfuse::prelude::*;
/// use nuts_rs::CpuLogpFunc;
/// // A standard normal in two dimensions.
/// let mut density = DeviceDensity::new(2, |theta| colwise_sum(-0.5f64 * square(theta)).eval())?;
/// let mut gradient = [0.0; 2];
/// let lp = density.logp(&[1.0, 2.0], &mut gradient)?;
/// assert_eq!((lp, gradient), (-2.5, [-1.0, -2.0]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct DeviceDensity<F> {
    theta: Var,
    model: F,
    evaluations: u64,
}

impl<F: FnMut(&Var) -> Result<Var>> DeviceDensity<F> {
    /// A density over `dim` parameters.
    pub fn new(dim: usize, model: F) -> Result<Self> {
        Ok(DeviceDensity {
            theta: Var::new(MatrixCl::zeros(dim, 1)?),
            model,
            evaluations: 0,
        })
    }

    /// How many times the density was evaluated.
    ///
    /// ```
    /// use clfuse::nuts::DeviceDensity;
    /// use clfuse::prelude::*;
    /// let density = DeviceDensity::new(1, |theta| colwise_sum(theta).eval())?;
    /// assert_eq!(density.evaluations(), 0);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// The log density at `position`, its gradient written to `gradient`.
    ///
    /// ```
    /// use clfuse::nuts::DeviceDensity;
    /// use clfuse::prelude::*;
    /// let mut density = DeviceDensity::new(1, |theta| colwise_sum(theta).eval())?;
    /// let mut g = [0.0];
    /// assert_eq!(density.value_and_grad(&[3.0], &mut g)?, 3.0);
    /// assert_eq!(g, [1.0]);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn value_and_grad(&mut self, position: &[f64], gradient: &mut [f64]) -> Result<f64> {
        let dim = self.theta.rows();
        if position.len() != dim {
            return Err(Error::InvalidArgument {
                function: "DeviceDensity::value_and_grad",
                argument: "position",
                reason: format!("has {} values for {dim} parameters", position.len()),
            });
        }
        self.theta.value().write(position)?;
        self.evaluations += 1;
        let (theta, model) = (&self.theta, &mut self.model);
        rev::value_and_grad_to_host(theta, || model(theta), gradient)
    }
}

impl<F> HasDims for DeviceDensity<F> {
    fn dim_sizes(&self) -> HashMap<String, u64> {
        HashMap::from([(
            "unconstrained_parameter".to_string(),
            self.theta.rows() as u64,
        )])
    }
}

impl<F: FnMut(&Var) -> Result<Var>> CpuLogpFunc for DeviceDensity<F> {
    type LogpError = DensityError;
    type FlowParameters = ();
    type ExpandedVector = Vec<f64>;

    fn dim(&self) -> usize {
        self.theta.rows()
    }

    fn logp(
        &mut self,
        position: &[f64],
        gradient: &mut [f64],
    ) -> std::result::Result<f64, DensityError> {
        let value = self
            .value_and_grad(position, gradient)
            .map_err(DensityError)?;
        if value.is_nan() {
            return Err(DensityError(Error::NotFinite {
                function: "DeviceDensity::logp",
                argument: "model",
                row: 0,
                col: 0,
                value,
            }));
        }
        Ok(value)
    }

    fn expand_vector<R: nuts_rs::rand::Rng + ?Sized>(
        &mut self,
        _rng: &mut R,
        array: &[f64],
    ) -> std::result::Result<Vec<f64>, CpuMathError> {
        Ok(array.to_vec())
    }
}

/// How long to run one chain.
#[derive(Debug, Clone, Copy)]
pub struct RunLength {
    /// Warm-up (adaptation) iterations, not kept.
    pub warmup: u64,
    /// Draws kept.
    pub draws: u64,
    /// The chain's random seed.
    pub seed: u64,
}

/// What one chain produced.
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
/// any `nuts-rs` density from `init`.
///
/// ```
/// use clfuse::nuts::{DeviceDensity, RunLength, sample};
/// use clfuse::prelude::*;
/// let density = DeviceDensity::new(1, |theta| colwise_sum(-0.5f64 * square(theta)).eval())?;
/// let run = sample(density, &[0.5], RunLength { warmup: 100, draws: 200, seed: 7 })?;
/// assert_eq!(run.draws.len(), 200);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn sample<D: CpuLogpFunc>(density: D, init: &[f64], length: RunLength) -> Result<ChainResult> {
    let sampler_error = |e: &dyn std::fmt::Display| Error::InvalidArgument {
        function: "nuts::sample",
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
