//! The Gaussian-process regression model of `gp_nuts` (paper Figure 7):
//! synthetic data drawn from the model, the device model written by hand on
//! the log scale (`bench_report --suite seeds` times it; `gp_nuts` declares
//! the same model with `clfuse::params` instead) and the same model on the
//! CPU with faer. Shared by the example and `bench_report --suite seeds`.

use clfuse::nuts::DensityError;
use clfuse::nuts::nuts_rs::{CpuLogpFunc, CpuMathError, HasDims};
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use clfuse::{Error, Result, dist};
use faer::linalg::solvers::{DenseSolveCore, Solve};
use faer::{Mat, Side};

/// Prior means of (log ℓ, log σ, log τ); prior sd 1.
pub const PRIOR_MEAN: [f64; 3] = [-std::f64::consts::LN_2, 0.0, -1.203_972_804_326_936];
/// The values that generate the data: ℓ = 0.6, σ = 1.0, τ = 0.3.
pub const TRUTH: [f64; 3] = [-0.510_825_623_765_990_7, 0.0, -1.203_972_804_326_936];
const HALF_LOG_TWO_PI: f64 = 0.918_938_533_204_672_8;

pub struct Data {
    /// n x d points, column-major.
    pub x: Vec<f64>,
    pub y: Vec<f64>,
}

pub fn uniforms(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The squared-exponential covariance at `theta` = (log ℓ, log σ, log τ).
pub fn covariance(x: &Mat<f64>, theta: &[f64]) -> Mat<f64> {
    let (inv_l2, s2, t2) = (
        (-2.0 * theta[0]).exp(),
        (2.0 * theta[1]).exp(),
        (2.0 * theta[2]).exp(),
    );
    let n = x.nrows();
    Mat::from_fn(n, n, |i, j| {
        let d2: f64 = (0..x.ncols())
            .map(|k| (x[(i, k)] - x[(j, k)]).powi(2))
            .sum();
        s2 * (-0.5 * d2 * inv_l2).exp() + if i == j { t2 } else { 0.0 }
    })
}

pub fn synthetic(n: usize, d: usize) -> Result<Data> {
    let mut uniform = uniforms(0x2545_f491_4f6c_dd1d);
    let x: Vec<f64> = (0..n * d).map(|_| 3.0 * uniform()).collect();
    let points = Mat::from_fn(n, d, |i, k| x[i + n * k]);
    let k = covariance(&points, &TRUTH);
    let l = k.llt(Side::Lower).map_err(|e| Error::InvalidArgument {
        function: "gp synthetic",
        argument: "covariance",
        reason: format!("{e:?}"),
    })?;
    // Standard normals by Box-Muller, coloured by the factor.
    let z = Mat::from_fn(n, 1, |_, _| {
        let (u, v) = (uniform().max(f64::MIN_POSITIVE), uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    });
    let y = l.L() * &z;
    Ok(Data {
        x,
        y: (0..n).map(|i| y[(i, 0)]).collect(),
    })
}

/// The model on the device: these lines are all a user writes. `d2` holds
/// the squared distances between the points (data, computed once); the
/// covariance is one kernel, and `multi_normal_lpdf` factors it and gives
/// it its adjoint `½ (α αᵀ - K⁻¹)` in one reverse step.
pub fn device_model(
    d2: &MatrixCl<f64>,
    y: &MatrixCl<f64>,
    prior_mean: &MatrixCl<f64>,
    theta: &Var,
) -> Result<Var> {
    let k = covariance_of(d2, theta)?;
    let fit = dist::multi_normal_lpdf(y, 0.0, &k).eval()?;
    let prior = colwise_sum(square(theta - prior_mean)).eval()?;
    (&fit - 0.5f64 * &prior - 3.0 * HALF_LOG_TWO_PI).eval()
}

/// The same model differentiated through `rev::cholesky_decompose`, a
/// triangular solve and the log-determinant, as it was written before
/// `multi_normal_lpdf` (the benchmark's comparison row).
pub fn device_model_through_cholesky(
    d2: &MatrixCl<f64>,
    y: &MatrixCl<f64>,
    prior_mean: &MatrixCl<f64>,
    theta: &Var,
) -> Result<Var> {
    let n = y.rows();
    let k = covariance_of(d2, theta)?;
    let l = rev::cholesky_decompose(&k)?;
    let z = rev::tri_solve(&l, Op::N, y)?;
    let fit = colwise_sum(square(&z)).eval()?;
    let log_det = log_determinant_cholesky(&l).eval()?;
    let prior = colwise_sum(square(theta - prior_mean)).eval()?;
    let constant = (n + 3) as f64 * HALF_LOG_TWO_PI;
    (-0.5f64 * (fit + log_det + prior) - constant).eval()
}

/// The squared-exponential covariance of points `d2` apart at
/// `theta` = (log ℓ, log σ, log τ), one step.
fn covariance_of(d2: &MatrixCl<f64>, theta: &Var) -> Result<Var> {
    let n = d2.rows();
    // Each hyperparameter as its own 1 x 1 variable: its adjoint is then a
    // work-group sum over the n x n covariance, not n² atomic adds.
    let inv_l2 = exp(-2.0f64 * block(theta, 0, 0, 1, 1)).eval()?;
    let s2 = exp(2.0f64 * block(theta, 1, 0, 1, 1)).eval()?;
    let t2 = exp(2.0f64 * block(theta, 2, 0, 1, 1)).eval()?;
    let diagonal = eq(row_index(n, n), col_index(n, n));
    (elt_multiply(
        optional_broadcast(&s2, n, n),
        exp(-0.5f64 * elt_multiply(d2, optional_broadcast(&inv_l2, n, n))),
    ) + select(diagonal, optional_broadcast(&t2, n, n), 0.0f64))
    .eval()
}

/// The same model on the CPU with faer: Cholesky, solve, and the gradient
/// `½ tr((α αᵀ − K⁻¹) ∂K/∂θ)` with `α = K⁻¹ y`.
pub struct CpuGp {
    pub x: Mat<f64>,
    pub y: Mat<f64>,
}

impl HasDims for CpuGp {
    fn dim_sizes(&self) -> std::collections::HashMap<String, u64> {
        [("unconstrained_parameter".to_string(), 3)].into()
    }
}

impl CpuLogpFunc for CpuGp {
    type LogpError = DensityError;
    type FlowParameters = ();
    type ExpandedVector = Vec<f64>;

    fn dim(&self) -> usize {
        3
    }

    fn logp(&mut self, theta: &[f64], grad: &mut [f64]) -> std::result::Result<f64, DensityError> {
        let n = self.x.nrows();
        let k = covariance(&self.x, theta);
        let llt = k.llt(Side::Lower).map_err(|_| {
            DensityError(Error::NotPositiveDefinite {
                function: "CpuGp::logp",
                argument: "K",
                index: 0,
            })
        })?;
        let alpha = llt.solve(&self.y);
        let fit = (0..n).map(|i| alpha[(i, 0)] * self.y[(i, 0)]).sum::<f64>();
        let log_det = 2.0 * (0..n).map(|i| llt.L()[(i, i)].ln()).sum::<f64>();
        let k_inv = llt.inverse();
        let (inv_l2, t2) = ((-2.0 * theta[0]).exp(), (2.0 * theta[2]).exp());
        let mut g = [0.0; 3];
        for j in 0..n {
            for i in 0..n {
                let w = alpha[(i, 0)] * alpha[(j, 0)] - k_inv[(i, j)];
                let e = k[(i, j)] - if i == j { t2 } else { 0.0 };
                let d2: f64 = (0..self.x.ncols())
                    .map(|c| (self.x[(i, c)] - self.x[(j, c)]).powi(2))
                    .sum();
                g[0] += w * e * d2 * inv_l2;
                g[1] += w * 2.0 * e;
                if i == j {
                    g[2] += w * 2.0 * t2;
                }
            }
        }
        let mut prior = 0.0;
        for c in 0..3 {
            let centred = theta[c] - PRIOR_MEAN[c];
            prior += centred * centred;
            grad[c] = 0.5 * g[c] - centred;
        }
        Ok(-0.5 * (fit + log_det + prior) - (n + 3) as f64 * HALF_LOG_TWO_PI)
    }

    fn expand_vector<R: clfuse::nuts::nuts_rs::rand::Rng + ?Sized>(
        &mut self,
        _rng: &mut R,
        array: &[f64],
    ) -> std::result::Result<Vec<f64>, CpuMathError> {
        Ok(array.to_vec())
    }
}
