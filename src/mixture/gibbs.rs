//! The blocked Gibbs sampler of the truncated Dirichlet-process mixture
//! (Ishwaran and James 2001; seed 004's four steps per sweep).

use super::{Component, Mixture, NormalInverseWishart, Statistics, invalid};
use crate::Result;
use clfuse_core::MatrixCl;
use clfuse_kernels::{mixture_indicators, mixture_statistics};
use clfuse_ops::random::Rng;
use rayon::prelude::*;

/// The Dirichlet process's concentration `α`: fixed, or given a
/// `Gamma(shape, rate)` prior and sampled each sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Concentration {
    /// `α` stays at this value.
    Fixed(f64),
    /// `α ~ Gamma(shape, rate)`, starting at `initial`.
    Gamma {
        /// The prior's shape.
        shape: f64,
        /// The prior's rate.
        rate: f64,
        /// `α` before the first sweep.
        initial: f64,
    },
}

impl Concentration {
    fn initial(self) -> f64 {
        match self {
            Concentration::Fixed(alpha) => alpha,
            Concentration::Gamma { initial, .. } => initial,
        }
    }
}

/// What one sweep drew.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// Points per component (from the drawn indicators).
    pub counts: Vec<usize>,
    /// `Σ_i log(π_{z_i} N(x_i | μ_{z_i}, Σ_{z_i}))` under the parameters the
    /// indicators were drawn from.
    pub complete_log_likelihood: f64,
    /// `α` after the sweep.
    pub concentration: f64,
}

/// Gibbs sampling of a truncated Dirichlet-process mixture of `k`
/// multivariate normals (seed 004). Each [`sweep`](Self::sweep):
///
/// 1. draws every indicator `z_i ~ Mn(1, π(x_i))` on the device, fused with
///    the E-step ([`clfuse_kernels::mixture_indicators`]);
/// 2. reduces the per-component statistics on the device and reads them
///    (one `statistics_len(p) x k` read), then draws each `(μ_c, Σ_c)` from
///    its normal-inverse-Wishart posterior on the host;
/// 3. draws the stick-breaking weights
///    `V_c ~ Beta(1 + n_c, α + Σ_{l>c} n_l)`, `π_c = V_c Π_{l<c} (1 - V_l)`;
/// 4. draws `α | V ~ Gamma(shape + k - 1, rate - Σ log(1 - V_c))` when it
///    has a prior.
///
/// Every random number comes from one seed: the chain is reproducible.
/// See the [module](super) for an example.
pub struct Gibbs<'a> {
    x: &'a MatrixCl<f64>,
    prior: NormalInverseWishart,
    concentration: Concentration,
    alpha: f64,
    mixture: Mixture,
    rng: Rng,
    z: Option<MatrixCl<i32>>,
    counts: Vec<usize>,
}

impl<'a> Gibbs<'a> {
    /// A sampler of the data `x` (`n x p`) from `initial` (its `k` is the
    /// truncation), with the component prior `prior`, the concentration
    /// `concentration` and the seed `seed`.
    pub fn new(
        x: &'a MatrixCl<f64>,
        initial: Mixture,
        prior: NormalInverseWishart,
        concentration: Concentration,
        seed: u64,
    ) -> Result<Self> {
        const F: &str = "Gibbs::new";
        if x.cols() != initial.p() {
            return Err(invalid(
                F,
                "x",
                format!(
                    "has {} columns; the mixture is {}-dimensional",
                    x.cols(),
                    initial.p()
                ),
            ));
        }
        prior.check(F, initial.p())?;
        let alpha = concentration.initial();
        let valid = match concentration {
            Concentration::Fixed(a) => a > 0.0 && a.is_finite(),
            Concentration::Gamma {
                shape,
                rate,
                initial,
            } => shape > 0.0 && rate > 0.0 && initial > 0.0 && (shape + rate + initial).is_finite(),
        };
        if !valid {
            return Err(invalid(
                F,
                "concentration",
                format!("{concentration:?}: every value must be positive and finite"),
            ));
        }
        Ok(Gibbs {
            x,
            prior,
            concentration,
            alpha,
            counts: vec![0; initial.k()],
            mixture: initial,
            rng: Rng::new(seed),
            z: None,
        })
    }

    /// One sweep (the four steps above).
    pub fn sweep(&mut self) -> Result<Sweep> {
        let (k, n) = (self.mixture.k(), self.x.rows());
        let components = self.mixture.upload()?;
        let (z, chosen) = mixture_indicators(self.x, &components, self.indicator_key())?;
        // The statistics' read is queued before the sum's kernel, so the
        // sweep's one host wait (the sum's) brings both.
        let stats = mixture_statistics(self.x, &z, k)?.read_later()?;
        let complete_log_likelihood = if n == 0 {
            0.0
        } else {
            clfuse_ops::sum(&chosen)?
        };
        let stats = Statistics::from_device_layout(self.mixture.p(), stats.wait()?)?;
        let sweep = self.update(&stats, complete_log_likelihood)?;
        self.z = Some(z);
        Ok(sweep)
    }

    /// The host half of a sweep (steps 2 to 4) from statistics computed
    /// elsewhere, such as a CPU reference of step 1 and the reduction: it
    /// consumes the same streams as [`sweep`](Self::sweep) does, so a
    /// reference fed the same statistics draws the same parameters.
    pub fn update(&mut self, stats: &Statistics, complete_log_likelihood: f64) -> Result<Sweep> {
        let (k, n) = (self.mixture.k(), self.x.rows());
        if stats.p() != self.mixture.p() || stats.k() != k {
            return Err(invalid(
                "Gibbs::update",
                "stats",
                format!(
                    "hold {} components of dimension {}; the mixture has {k} of dimension {}",
                    stats.k(),
                    stats.p(),
                    self.mixture.p()
                ),
            ));
        }
        let counts: Vec<usize> = (0..k).map(|c| stats.count(c).round() as usize).collect();
        let assigned: usize = counts.iter().sum();
        if assigned != n {
            return Err(invalid(
                "Gibbs::sweep",
                "x",
                format!(
                    "{} of its {n} rows have no finite density under any of the {k} components (NaN or infinite data?)",
                    n.abs_diff(assigned)
                ),
            ));
        }
        let (theta_key, weight_key, alpha_key) = (
            self.rng.next_key(),
            self.rng.next_key(),
            self.rng.next_key(),
        );
        // Stick-breaking weights, in log space.
        let mut log_weights = Vec::with_capacity(k);
        let mut log_rest = 0.0; // Σ_{l<c} log(1 - V_l)
        let mut sum_log_rest = 0.0;
        let mut later: usize = n;
        for (c, &count) in counts.iter().enumerate() {
            later -= count;
            if c + 1 == k {
                log_weights.push(log_rest);
                break;
            }
            let v = weight_key.beta(c as u32, 0, 1.0 + count as f64, self.alpha + later as f64);
            log_weights.push(log_rest + v.ln());
            let log_stay = (-v).ln_1p();
            log_rest += log_stay;
            sum_log_rest += log_stay;
        }
        // Each component's draw is its own (its numbers are element c of
        // the streams), so they run in parallel and stay reproducible.
        let components = (0..k)
            .into_par_iter()
            .map(|c| {
                let draw = self.prior.posterior(stats, c).draw(theta_key, c as u32)?;
                Ok(Component {
                    log_weight: log_weights[c],
                    mean: draw.mean,
                    precision_cholesky: draw.precision_cholesky,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        if let Concentration::Gamma { shape, rate, .. } = self.concentration {
            let rate = rate - sum_log_rest;
            if rate.is_finite() && rate > 0.0 {
                self.alpha = alpha_key.gamma(0, 0, 0, shape + k as f64 - 1.0) / rate;
            }
        }
        self.mixture = Mixture::new(components)?;
        self.counts = counts.clone();
        Ok(Sweep {
            counts,
            complete_log_likelihood,
            concentration: self.alpha,
        })
    }

    /// The key the next sweep's indicators are drawn with: each sweep takes
    /// four keys of the seed's streams (indicators, component parameters,
    /// weights, concentration), this one first. A reference that draws the
    /// indicators itself takes it, then calls [`update`](Self::update).
    pub fn indicator_key(&mut self) -> clfuse_kernels::RandomKey {
        self.rng.next_key()
    }

    /// The current parameters.
    pub fn mixture(&self) -> &Mixture {
        &self.mixture
    }

    /// The indicators of the last sweep (`n x 1`, on the device).
    pub fn indicators(&self) -> Option<&MatrixCl<i32>> {
        self.z.as_ref()
    }

    /// The components that held at least `min_count` points in the last
    /// sweep, with the parameters drawn from them.
    pub fn occupied(&self, min_count: usize) -> Vec<&Component> {
        self.mixture
            .components()
            .iter()
            .zip(&self.counts)
            .filter(|(_, n)| **n >= min_count.max(1))
            .map(|(c, _)| c)
            .collect()
    }

    /// The current `α`.
    pub fn concentration(&self) -> f64 {
        self.alpha
    }
}
