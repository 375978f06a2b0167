//! Seed 004's massive mixtures (Suchard et al.): a truncated
//! Dirichlet-process mixture of multivariate normals with full covariances,
//! sampled by Gibbs ([`Gibbs`]) or fitted by Bayesian EM ([`Bem`]), with the
//! work that grows with `n` on the device:
//!
//! - the indicator draw fused with the E-step (every component's density
//!   and a Gumbel-max draw per row in one kernel; the `n x k` probabilities
//!   are never written): [`clfuse_kernels::mixture_indicators`];
//! - the per-component sufficient statistics, read once per sweep:
//!   [`clfuse_kernels::mixture_statistics`];
//! - for BEM, the E-step ([`clfuse_kernels::mixture_log_responsibilities`])
//!   and the weighted statistics as one GEMM `featuresᵀ · responsibilities`.
//!
//! What grows with `k` only (the conjugate normal-inverse-Wishart draws, the
//! stick-breaking weights, the precision factors) runs on the host from the
//! statistics: at `p = 14, k = 256` it is a few hundred 14 x 14 matrices
//! per sweep. Host and device draws come from one seed (Philox streams), so
//! a run is reproducible.
//!
//! ```
//! use clfuse::mixture::{Concentration, Gibbs, Mixture, NormalInverseWishart};
//! use clfuse::prelude::*;
//! // Two clusters on a line, at -3 and 3.
//! let x: Vec<f64> = (0..200).map(|i| if i % 2 == 0 { -3.0 } else { 3.0 } + 0.01 * (i % 7) as f64).collect();
//! let x = MatrixCl::from_slice(200, 1, &x)?;
//! let prior = NormalInverseWishart::weakly_informative(&[0.0], 1.0);
//! let start = Mixture::from_points(&[vec![-1.0], vec![0.0], vec![1.0], vec![2.0]], 1.0)?;
//! let mut gibbs = Gibbs::new(&x, start, prior, Concentration::Fixed(1.0), 7)?;
//! for _ in 0..30 {
//!     gibbs.sweep()?;
//! }
//! let mut means: Vec<f64> = gibbs.occupied(10).iter().map(|c| c.mean[0]).collect();
//! means.sort_by(f64::total_cmp);
//! assert_eq!(means.len(), 2);
//! assert!((means[0] + 3.0).abs() < 0.1 && (means[1] - 3.0).abs() < 0.1);
//! # Ok::<(), clfuse::Error>(())
//! ```

mod bem;
mod gibbs;
mod niw;

pub use bem::{Bem, BemStep};
pub use gibbs::{Concentration, Gibbs, Sweep};
pub use niw::NormalInverseWishart;

use crate::{Error, Result};
use clfuse_core::MatrixCl;
use nalgebra::{DMatrix, DVector};

const LOG_2PI: f64 = 1.837_877_066_409_345_3;

/// One component: its log weight, mean, and the lower Cholesky factor of
/// its precision matrix (`Σ⁻¹ = L Lᵀ`, `p x p`, column-major).
#[derive(Debug, Clone, PartialEq)]
pub struct Component {
    /// `log π_c`.
    pub log_weight: f64,
    /// `μ_c` (`p`).
    pub mean: Vec<f64>,
    /// `L_c`, lower triangular with a positive diagonal.
    pub precision_cholesky: Vec<f64>,
}

impl Component {
    /// The component with covariance `covariance` (`p x p`, column-major,
    /// symmetric positive definite).
    ///
    /// ```
    /// let c = clfuse::mixture::Component::new(0.0, vec![1.0], &[4.0])?;
    /// assert!((c.precision_cholesky[0] - 0.5).abs() < 1e-15);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn new(log_weight: f64, mean: Vec<f64>, covariance: &[f64]) -> Result<Self> {
        let p = mean.len();
        if covariance.len() != p * p {
            return Err(invalid(
                "Component::new",
                "covariance",
                format!(
                    "has {} elements; a {p}-dimensional mean needs {}",
                    covariance.len(),
                    p * p
                ),
            ));
        }
        let sigma = DMatrix::from_column_slice(p, p, covariance);
        let precision = sigma
            .cholesky()
            .ok_or_else(|| {
                invalid(
                    "Component::new",
                    "covariance",
                    "is not positive definite".into(),
                )
            })?
            .inverse();
        Ok(Component {
            log_weight,
            mean,
            precision_cholesky: precision_factor("Component::new", &precision)?
                .as_slice()
                .to_vec(),
        })
    }

    /// The covariance `Σ = (L Lᵀ)⁻¹` (`p x p`, column-major).
    pub fn covariance(&self) -> Vec<f64> {
        let p = self.mean.len();
        let l = DMatrix::from_column_slice(p, p, &self.precision_cholesky);
        let precision = &l * l.transpose();
        precision
            .try_inverse()
            .map_or_else(|| vec![f64::NAN; p * p], |s| s.as_slice().to_vec())
    }

    /// `log(π N(x | μ, Σ))`, on the host (a reference for the device's).
    pub fn log_density(&self, x: &[f64]) -> f64 {
        let p = self.mean.len();
        let mut quadratic = 0.0;
        let mut log_det = 0.0;
        for a in 0..p {
            let l = |b: usize| self.precision_cholesky[b + p * a];
            log_det += l(a).ln();
            let y: f64 = (a..p).map(|b| l(b) * (x[b] - self.mean[b])).sum();
            quadratic += y * y;
        }
        self.log_weight - 0.5 * p as f64 * LOG_2PI + log_det - 0.5 * quadratic
    }
}

/// The lower Cholesky factor of a precision matrix.
fn precision_factor(function: &'static str, precision: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    let symmetric = (precision + precision.transpose()) * 0.5;
    Ok(symmetric
        .cholesky()
        .ok_or_else(|| invalid(function, "precision", "is not positive definite".into()))?
        .unpack())
}

fn invalid(function: &'static str, argument: &'static str, reason: String) -> Error {
    Error::InvalidArgument {
        function,
        argument,
        reason,
    }
}

/// A mixture of `k` multivariate normals in `p` dimensions.
#[derive(Debug, Clone, PartialEq)]
pub struct Mixture {
    p: usize,
    components: Vec<Component>,
}

impl Mixture {
    /// A mixture of `components`, all of dimension `p` (at least one).
    pub fn new(components: Vec<Component>) -> Result<Self> {
        let p = components.first().map_or(0, |c| c.mean.len());
        if p == 0 || p > clfuse_kernels::MIXTURE_MAX_DIMENSION {
            return Err(invalid(
                "Mixture::new",
                "components",
                format!(
                    "needs at least one component of dimension 1 to {}",
                    clfuse_kernels::MIXTURE_MAX_DIMENSION
                ),
            ));
        }
        for (c, component) in components.iter().enumerate() {
            if component.mean.len() != p || component.precision_cholesky.len() != p * p {
                return Err(invalid(
                    "Mixture::new",
                    "components",
                    format!("component {c} is not {p}-dimensional like component 0"),
                ));
            }
            if !component.log_weight.is_finite() && component.log_weight != f64::NEG_INFINITY {
                return Err(invalid(
                    "Mixture::new",
                    "components",
                    format!("component {c} has log weight {}", component.log_weight),
                ));
            }
        }
        Ok(Mixture { p, components })
    }

    /// Equal weights, means at `points`, covariances `scale² I`: the usual
    /// start of a fit (points drawn from the data).
    pub fn from_points(points: &[Vec<f64>], scale: f64) -> Result<Self> {
        let k = points.len().max(1) as f64;
        let components = points
            .iter()
            .map(|m| {
                let p = m.len();
                let mut covariance = vec![0.0; p * p];
                for a in 0..p {
                    covariance[a + p * a] = scale * scale;
                }
                Component::new(-k.ln(), m.clone(), &covariance)
            })
            .collect::<Result<Vec<_>>>()?;
        Mixture::new(components)
    }

    /// Dimension.
    pub fn p(&self) -> usize {
        self.p
    }

    /// Number of components.
    pub fn k(&self) -> usize {
        self.components.len()
    }

    /// The components.
    pub fn components(&self) -> &[Component] {
        &self.components
    }

    /// The device layout (`component_stride(p) x k`, one column per
    /// component): the upper triangle of `Lᵀ` by rows, `Lᵀμ`, and
    /// `log π - p/2 log 2π + Σ log L_aa`.
    pub fn packed(&self) -> Vec<f64> {
        let p = self.p;
        let mut out = Vec::with_capacity(clfuse_kernels::component_stride(p) * self.k());
        for c in &self.components {
            let l = |b: usize, a: usize| c.precision_cholesky[b + p * a];
            for a in 0..p {
                out.extend((a..p).map(|b| l(b, a)));
            }
            out.extend((0..p).map(|a| (a..p).map(|b| l(b, a) * c.mean[b]).sum::<f64>()));
            let log_det: f64 = (0..p).map(|a| l(a, a).ln()).sum();
            out.push(c.log_weight - 0.5 * p as f64 * LOG_2PI + log_det);
        }
        out
    }

    /// Each component's log density as a linear function of the statistics'
    /// features ([`clfuse_kernels::mixture_features`]: 1, `x_a`, `x_a x_b`
    /// for `a <= b` by rows): `log(π_c N(x | μ_c, Σ_c)) = features(x) · w_c`,
    /// `w` `statistics_len(p) x k` column-major. With `P = L Lᵀ`: the
    /// constant `log π - p/2 log 2π + Σ log L_aa - μᵀPμ / 2`, then `Pμ`, then
    /// `-P_aa / 2` on the diagonal and `-P_ab` above it. The E-step is then
    /// one product with its row-wise softmax
    /// ([`clfuse_kernels::softmax_rows_of_product`]); the expansion loses
    /// about `1e-16 |x|² |P|` to cancellation, as the statistics' raw
    /// moments do.
    ///
    /// ```
    /// use clfuse::mixture::{Component, Mixture};
    /// let c = Component::new(0.5f64.ln(), vec![1.0, -2.0], &[2.0, 0.3, 0.3, 1.0])?;
    /// let m = Mixture::new(vec![c.clone()])?;
    /// let w = m.expanded_parameters();
    /// let x = [0.7, 0.4];
    /// let features = [1.0, x[0], x[1], x[0] * x[0], x[0] * x[1], x[1] * x[1]];
    /// let linear: f64 = features.iter().zip(&w).map(|(f, w)| f * w).sum();
    /// assert!((linear - c.log_density(&x)).abs() < 1e-12);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn expanded_parameters(&self) -> Vec<f64> {
        let p = self.p;
        let mut out = Vec::with_capacity(clfuse_kernels::statistics_len(p) * self.k());
        for c in &self.components {
            let l = DMatrix::from_column_slice(p, p, &c.precision_cholesky);
            let precision = &l * l.transpose();
            let mean = DVector::from_column_slice(&c.mean);
            let precision_mean = &precision * &mean;
            let log_det: f64 = (0..p).map(|a| l[(a, a)].ln()).sum();
            out.push(
                c.log_weight - 0.5 * p as f64 * LOG_2PI + log_det - 0.5 * mean.dot(&precision_mean),
            );
            out.extend(precision_mean.iter());
            for a in 0..p {
                out.push(-0.5 * precision[(a, a)]);
                out.extend((a + 1..p).map(|b| -precision[(a, b)]));
            }
        }
        out
    }

    /// [`packed`](Self::packed), on the device.
    pub fn upload(&self) -> Result<MatrixCl<f64>> {
        MatrixCl::from_slice(
            clfuse_kernels::component_stride(self.p),
            self.k(),
            &self.packed(),
        )
    }
}

/// Per-component sufficient statistics: count, `Σx` and `Σxxᵀ` (weighted by
/// responsibilities for BEM), read from the device's
/// `statistics_len(p) x k` layout.
#[derive(Debug, Clone, PartialEq)]
pub struct Statistics {
    p: usize,
    values: Vec<f64>,
}

impl Statistics {
    /// Wraps the device layout (`statistics_len(p)` values per component,
    /// `p` at least 1).
    ///
    /// ```
    /// use clfuse::mixture::Statistics;
    /// let s = Statistics::from_device_layout(1, vec![2.0, 3.0, 5.0])?;
    /// assert_eq!((s.k(), s.count(0)), (1, 2.0));
    /// assert!(Statistics::from_device_layout(1, vec![2.0]).is_err());
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn from_device_layout(p: usize, values: Vec<f64>) -> Result<Self> {
        let len = clfuse_kernels::statistics_len(p);
        if p == 0 || !values.len().is_multiple_of(len) {
            return Err(invalid(
                "Statistics::from_device_layout",
                "values",
                format!(
                    "has {} values; a {p}-dimensional layout takes a multiple of {len}",
                    values.len()
                ),
            ));
        }
        Ok(Statistics { p, values })
    }

    /// Dimension.
    pub fn p(&self) -> usize {
        self.p
    }

    fn column(&self, c: usize) -> &[f64] {
        let len = clfuse_kernels::statistics_len(self.p);
        &self.values[c * len..(c + 1) * len]
    }

    /// Number of components.
    pub fn k(&self) -> usize {
        self.values.len() / clfuse_kernels::statistics_len(self.p)
    }

    /// The (weighted) number of points in component `c`.
    pub fn count(&self, c: usize) -> f64 {
        self.column(c)[0]
    }

    /// `Σx` over component `c`'s points.
    pub fn sum(&self, c: usize) -> DVector<f64> {
        DVector::from_column_slice(&self.column(c)[1..=self.p])
    }

    /// `Σxxᵀ` over component `c`'s points.
    pub fn outer(&self, c: usize) -> DMatrix<f64> {
        let p = self.p;
        let column = &self.column(c)[1 + p..];
        let mut m = DMatrix::zeros(p, p);
        let mut e = 0;
        for a in 0..p {
            for b in a..p {
                m[(a, b)] = column[e];
                m[(b, a)] = column[e];
                e += 1;
            }
        }
        m
    }
}
