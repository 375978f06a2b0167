//! Bayesian EM: the posterior mode of the mixture's parameters (seed 004's
//! BEM), each iteration one scan over the data on the device.

use super::{Component, Mixture, NormalInverseWishart, Statistics, invalid};
use crate::Result;
use clfuse_core::MatrixCl;
use clfuse_kernels::{
    LOG_SOFTMAX_MAX_COLUMNS, LOG_SOFTMAX_MAX_INNER, Op, mixture_features,
    mixture_log_responsibilities, multiply_transposed, softmax_rows_of_product,
};
use clfuse_ops::prelude::*;
use rayon::prelude::*;

/// What one BEM iteration saw: the objective at the parameters it started
/// from (non-decreasing from one step to the next).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BemStep {
    /// `Σ_i log g(x_i)`, the observed-data log likelihood.
    pub log_likelihood: f64,
    /// The log likelihood plus each component's normal-inverse-Wishart
    /// log prior density: what BEM maximises.
    pub log_posterior: f64,
}

/// Bayesian EM for a mixture of `k` multivariate normals with a
/// normal-inverse-Wishart prior on each component (weights by maximum
/// likelihood). Each [`step`](Self::step) runs the E-step on the device
/// (one kernel, [`clfuse_kernels::softmax_rows_of_product`] of the
/// features and [`Mixture::expanded_parameters`]), the weighted
/// statistics as one product `featuresᵀ · responsibilities`
/// (`features` formed once, [`clfuse_kernels::mixture_features`]), and the
/// M-step (each component's posterior mode) on the host.
///
/// ```
/// use clfuse::mixture::{Bem, Mixture, NormalInverseWishart};
/// use clfuse::prelude::*;
/// let x: Vec<f64> = (0..400).map(|i| if i % 4 == 0 { 4.0 } else { -1.0 } + 0.1 * ((i * 7 % 11) as f64 - 5.0)).collect();
/// let x = MatrixCl::from_slice(400, 1, &x)?;
/// let prior = NormalInverseWishart::weakly_informative(&[0.0], 1.0);
/// let mut bem = Bem::new(&x, Mixture::from_points(&[vec![-2.0], vec![2.0]], 1.0)?, prior)?;
/// let mut last = f64::NEG_INFINITY;
/// for _ in 0..20 {
///     let step = bem.step()?;
///     assert!(step.log_posterior >= last - 1e-9 * last.abs());
///     last = step.log_posterior;
/// }
/// let c = bem.mixture().components();
/// assert!((c[0].mean[0] + 1.0).abs() < 0.05 && (c[1].mean[0] - 4.0).abs() < 0.05);
/// assert!((c[1].log_weight.exp() - 0.25).abs() < 0.01);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub struct Bem<'a> {
    x: &'a MatrixCl<f64>,
    features: MatrixCl<f64>,
    prior: NormalInverseWishart,
    mixture: Mixture,
}

impl<'a> Bem<'a> {
    /// A fit of `x` (`n x p`, at least one row) from `initial`.
    pub fn new(
        x: &'a MatrixCl<f64>,
        initial: Mixture,
        prior: NormalInverseWishart,
    ) -> Result<Self> {
        const F: &str = "Bem::new";
        if x.cols() != initial.p() || x.rows() == 0 {
            return Err(invalid(
                F,
                "x",
                format!(
                    "is {} x {}; needs rows and {} columns (the mixture's dimension)",
                    x.rows(),
                    x.cols(),
                    initial.p()
                ),
            ));
        }
        prior.check(F, initial.p())?;
        Ok(Bem {
            x,
            features: mixture_features(x)?,
            prior,
            mixture: initial,
        })
    }

    /// One E-step and M-step.
    pub fn step(&mut self) -> Result<BemStep> {
        let (n, k) = (self.x.rows(), self.mixture.k());
        let (responsibilities, row_log_density) = self.e_step()?;
        let log_likelihood = clfuse_ops::sum(&row_log_density)?;
        if !log_likelihood.is_finite() {
            return Err(invalid(
                "Bem::step",
                "x",
                format!(
                    "its log likelihood is {log_likelihood} (NaN or infinite data, or a degenerate start?)"
                ),
            ));
        }
        let weighted = multiply_transposed(&self.features, Op::T, &responsibilities, Op::N)?;
        let stats = Statistics::from_device_layout(self.mixture.p(), weighted.to_vec()?)?;
        let log_prior: f64 = self
            .mixture
            .components()
            .iter()
            .map(|c| self.prior.log_density(&c.mean, &c.precision_cholesky))
            .sum();
        let components = (0..k)
            .into_par_iter()
            .map(|c| {
                let mode = self.prior.posterior(&stats, c).mode()?;
                Ok(Component {
                    log_weight: (stats.count(c) / n as f64).ln(),
                    mean: mode.mean,
                    precision_cholesky: mode.precision_cholesky,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        self.mixture = Mixture::new(components)?;
        Ok(BemStep {
            log_likelihood,
            log_posterior: log_likelihood + log_prior,
        })
    }

    /// The responsibilities (`n x k`) and each point's log density
    /// (`n x 1`) under the current parameters. Up to
    /// [`LOG_SOFTMAX_MAX_COLUMNS`] components and [`LOG_SOFTMAX_MAX_INNER`]
    /// features (p ≤ 14): one kernel, the features times the expanded
    /// parameters ([`Mixture::expanded_parameters`]) on the tensor cores
    /// where the device has them, each row's softmax stored once (3.5 ms at
    /// n = 1e6, p = 14, k = 256 on an H200, against 4.2 ms for the packed
    /// log densities alone; BENCHMARKS.md). Above: the log densities from
    /// the packed components, then their exponentials.
    fn e_step(&self) -> Result<(MatrixCl<f64>, MatrixCl<f64>)> {
        let (n, k) = (self.x.rows(), self.mixture.k());
        let q = self.features.cols();
        if q <= LOG_SOFTMAX_MAX_INNER && k <= LOG_SOFTMAX_MAX_COLUMNS {
            let w = MatrixCl::from_slice(q, k, &self.mixture.expanded_parameters())?;
            // The constant is w's first row (the features' first column is 1).
            let c = MatrixCl::<f64>::zeros(1, k)?;
            let responsibilities = MatrixCl::<f64>::uninitialized(n, k)?;
            let row_log_density =
                softmax_rows_of_product(&self.features, &w, &c, &responsibilities)?;
            return Ok((responsibilities, row_log_density));
        }
        let components = self.mixture.upload()?;
        let (log_r, row_log_density) = mixture_log_responsibilities(self.x, &components)?;
        Ok((exp(&log_r).eval()?, row_log_density))
    }

    /// The current parameters.
    pub fn mixture(&self) -> &Mixture {
        &self.mixture
    }
}
