//! The normal-inverse-Wishart prior of a component's mean and covariance:
//! `Σ ~ IW(ν, Ψ)`, `μ | Σ ~ N(m, Σ / κ)`, conjugate to the normal
//! likelihood.

use super::{Statistics, invalid, precision_factor};
use crate::Result;
use clfuse_kernels::RandomKey;
use nalgebra::{DMatrix, DVector};

/// A normal-inverse-Wishart distribution over `(μ, Σ)`.
#[derive(Debug, Clone, PartialEq)]
pub struct NormalInverseWishart {
    /// `m` (`p`).
    pub mean: Vec<f64>,
    /// `κ > 0`: the prior's weight on `m`, in points.
    pub kappa: f64,
    /// `ν > p - 1`: the degrees of freedom.
    pub nu: f64,
    /// `Ψ` (`p x p`, column-major, symmetric positive definite).
    pub scale: Vec<f64>,
}

/// A draw or mode of `(μ, Σ)` in the mixture's form: the mean and the lower
/// Cholesky factor of the precision `Σ⁻¹`.
pub(crate) struct MeanPrecision {
    pub mean: Vec<f64>,
    pub precision_cholesky: Vec<f64>,
}

impl NormalInverseWishart {
    /// A weak prior centred on `mean`: `κ = 0.01`, `ν = p + 2` (the
    /// smallest with a finite mean of `Σ`), `Ψ = scale² I`, so `E[Σ] = scale² I`.
    ///
    /// ```
    /// let prior = clfuse::mixture::NormalInverseWishart::weakly_informative(&[0.0, 0.0], 2.0);
    /// assert_eq!(prior.nu, 4.0);
    /// assert_eq!(prior.scale, vec![4.0, 0.0, 0.0, 4.0]);
    /// ```
    pub fn weakly_informative(mean: &[f64], scale: f64) -> Self {
        let p = mean.len();
        let mut psi = vec![0.0; p * p];
        for a in 0..p {
            psi[a + p * a] = scale * scale;
        }
        NormalInverseWishart {
            mean: mean.to_vec(),
            kappa: 0.01,
            nu: p as f64 + 2.0,
            scale: psi,
        }
    }

    fn p(&self) -> usize {
        self.mean.len()
    }

    pub(crate) fn check(&self, function: &'static str, p: usize) -> Result<()> {
        let ok = self.mean.len() == p
            && self.scale.len() == p * p
            && self.kappa > 0.0
            && self.kappa.is_finite()
            && self.nu > p as f64 - 1.0
            && self.nu.is_finite();
        if !ok {
            return Err(invalid(
                function,
                "prior",
                format!(
                    "must be {p}-dimensional with κ > 0 and ν > p - 1 (got mean of {}, scale of {}, κ = {}, ν = {})",
                    self.mean.len(),
                    self.scale.len(),
                    self.kappa,
                    self.nu
                ),
            ));
        }
        DMatrix::from_column_slice(p, p, &self.scale)
            .cholesky()
            .map(|_| ())
            .ok_or_else(|| {
                invalid(
                    function,
                    "prior",
                    "its scale Ψ is not positive definite".into(),
                )
            })
    }

    /// The posterior after observing a component's statistics (`count`,
    /// `Σx`, `Σxxᵀ`; weighted ones for BEM).
    pub(crate) fn posterior(&self, stats: &Statistics, c: usize) -> NormalInverseWishart {
        let p = self.p();
        let n = stats.count(c);
        let m0 = DVector::from_column_slice(&self.mean);
        let psi0 = DMatrix::from_column_slice(p, p, &self.scale);
        if n <= 0.0 {
            return self.clone();
        }
        let sum = stats.sum(c);
        let mean = &sum / n;
        let scatter = stats.outer(c) - &mean * mean.transpose() * n;
        let kappa = self.kappa + n;
        let shift = &mean - &m0;
        let psi = psi0 + scatter + &shift * shift.transpose() * (self.kappa * n / kappa);
        let m = (m0 * self.kappa + sum) / kappa;
        NormalInverseWishart {
            mean: m.as_slice().to_vec(),
            kappa,
            nu: self.nu + n,
            scale: ((&psi + psi.transpose()) * 0.5).as_slice().to_vec(),
        }
    }

    /// A draw of `(μ, Σ)`: `Σ⁻¹ ~ Wishart(ν, Ψ⁻¹)` by Bartlett's
    /// decomposition, then `μ ~ N(m, Σ/κ)`. The numbers are element `(c, ·)`
    /// of `key`'s streams: reproducible, independent per component.
    pub(crate) fn draw(&self, key: RandomKey, c: u32) -> Result<MeanPrecision> {
        const F: &str = "NormalInverseWishart::draw";
        let p = self.p();
        let psi = DMatrix::from_column_slice(p, p, &self.scale);
        let l_psi = psi
            .cholesky()
            .ok_or_else(|| {
                invalid(
                    F,
                    "scale",
                    format!("component {c}: Ψ is not positive definite"),
                )
            })?
            .unpack();
        // Ψ⁻¹ = B Bᵀ with B = L_Ψ⁻ᵀ; Bartlett: W = B A Aᵀ Bᵀ.
        let mut a = DMatrix::<f64>::zeros(p, p);
        for i in 0..p {
            a[(i, i)] = (2.0 * key.gamma(c, i as u32, 0, 0.5 * (self.nu - i as f64))).sqrt();
            for j in 0..i {
                a[(i, j)] = key.normal(c, (p + i * p + j) as u32, 0);
            }
        }
        let b = l_psi
            .transpose()
            .solve_upper_triangular(&a)
            .ok_or_else(|| invalid(F, "scale", format!("component {c}: Ψ is singular")))?;
        let precision = &b * b.transpose();
        let l = precision_factor(F, &precision)?;
        // μ = m + L⁻ᵀ z / √κ has covariance Σ / κ.
        let z = DVector::from_fn(p, |i, _| key.normal(c, (p + p * p + i) as u32, 0));
        let offset = l
            .transpose()
            .solve_upper_triangular(&z)
            .ok_or_else(|| invalid(F, "precision", format!("component {c}: singular draw")))?;
        let mean = DVector::from_column_slice(&self.mean) + offset / self.kappa.sqrt();
        Ok(MeanPrecision {
            mean: mean.as_slice().to_vec(),
            precision_cholesky: l.as_slice().to_vec(),
        })
    }

    /// The joint mode: `μ = m`, `Σ = Ψ / (ν + p + 2)`.
    pub(crate) fn mode(&self) -> Result<MeanPrecision> {
        let p = self.p();
        let sigma = DMatrix::from_column_slice(p, p, &self.scale) / (self.nu + p as f64 + 2.0);
        let precision = sigma
            .cholesky()
            .ok_or_else(|| {
                invalid(
                    "NormalInverseWishart::mode",
                    "scale",
                    "is not positive definite".into(),
                )
            })?
            .inverse();
        Ok(MeanPrecision {
            mean: self.mean.clone(),
            precision_cholesky: precision_factor("NormalInverseWishart::mode", &precision)?
                .as_slice()
                .to_vec(),
        })
    }

    /// `log p(μ, Σ)` up to nothing (normalised), for `Σ⁻¹ = L Lᵀ`.
    pub(crate) fn log_density(&self, mean: &[f64], precision_cholesky: &[f64]) -> f64 {
        let p = self.p();
        let pf = p as f64;
        let l = DMatrix::from_column_slice(p, p, precision_cholesky);
        let precision = &l * l.transpose();
        let log_det_precision: f64 = 2.0 * (0..p).map(|a| l[(a, a)].ln()).sum::<f64>();
        let psi = DMatrix::from_column_slice(p, p, &self.scale);
        let log_det_psi = psi.clone().cholesky().map_or(f64::NAN, |c| {
            2.0 * c.l().diagonal().iter().map(|d| d.ln()).sum::<f64>()
        });
        let shift = DVector::from_column_slice(mean) - DVector::from_column_slice(&self.mean);
        let quadratic = (shift.transpose() * &precision * &shift)[(0, 0)];
        let normal = -0.5 * pf * (super::LOG_2PI - self.kappa.ln()) + 0.5 * log_det_precision
            - 0.5 * self.kappa * quadratic;
        let log_multi_gamma = 0.25 * pf * (pf - 1.0) * std::f64::consts::PI.ln()
            + (0..p)
                .map(|j| statrs::function::gamma::ln_gamma(0.5 * (self.nu - j as f64)))
                .sum::<f64>();
        // log IW(Σ | ν, Ψ), with log|Σ| = -log|Σ⁻¹|.
        let inverse_wishart = 0.5 * self.nu * log_det_psi
            - 0.5 * self.nu * pf * std::f64::consts::LN_2
            - log_multi_gamma
            + 0.5 * (self.nu + pf + 1.0) * log_det_precision
            - 0.5 * (psi * precision).trace();
        normal + inverse_wishart
    }
}
