//! The logistic-regression model of `logistic_nuts` (paper Figure 6): synthetic
//! data, the device model and the same model on the CPU with faer. Shared
//! by the example and `bench_report --suite seeds`.

use clfuse::Result;
use clfuse::nuts::DensityError;
use clfuse::nuts::nuts_rs::{CpuLogpFunc, CpuMathError, HasDims};
use clfuse::prelude::*;
use clfuse::rev::Var;
use faer::{Col, Mat};

pub const PRIOR_SD: f64 = 5.0;

pub struct Data {
    pub x: Vec<f64>,
    pub y: Vec<i32>,
    pub truth: Vec<f64>,
    pub n: usize,
    pub k: usize,
}

pub fn synthetic(n: usize, k: usize) -> Data {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut uniform = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    // α first, then β.
    let truth: Vec<f64> = (0..=k).map(|j| (j as f64 * 1.3 + 0.4).sin()).collect();
    let x: Vec<f64> = (0..n * k).map(|_| uniform() * 2.0 - 1.0).collect();
    let y = (0..n)
        .map(|i| {
            let eta = truth[0] + (0..k).map(|j| x[i + n * j] * truth[j + 1]).sum::<f64>();
            (uniform() < 1.0 / (1.0 + (-eta).exp())) as i32
        })
        .collect();
    Data { x, y, truth, n, k }
}

/// The model on the device: these lines are all a user writes.
pub fn device_model(x: &MatrixCl<f64>, sign: &MatrixCl<f64>, theta: &Var) -> Result<Var> {
    let (n, k) = (x.rows(), x.cols());
    // α as its own 1 x 1 variable: its adjoint is then a work-group sum,
    // not n atomic adds to one element of θ (measured in
    // docs/benchmarks/HISTORY.md).
    let alpha = block(theta, 0, 0, 1, 1).eval()?;
    let beta = block(theta, 1, 0, k, 1);
    let eta = matrix_vector_multiply(x, beta) + optional_broadcast(&alpha, n, 1);
    let likelihood = colwise_sum(log_inv_logit(elt_multiply(sign, eta))).eval()?;
    let prior = colwise_sum(square(theta)).eval()?;
    (likelihood - prior * (0.5 / (PRIOR_SD * PRIOR_SD))).eval()
}

/// The same model on the CPU, with faer's matrix-vector products.
pub struct CpuLogistic {
    x: Mat<f64>,
    sign: Col<f64>,
}

impl CpuLogistic {
    pub fn new(d: &Data) -> Self {
        CpuLogistic {
            x: Mat::from_fn(d.n, d.k, |i, j| d.x[i + d.n * j]),
            sign: Col::from_fn(d.n, |i| 2.0 * d.y[i] as f64 - 1.0),
        }
    }
}

impl HasDims for CpuLogistic {
    fn dim_sizes(&self) -> std::collections::HashMap<String, u64> {
        [(
            "unconstrained_parameter".to_string(),
            self.x.ncols() as u64 + 1,
        )]
        .into()
    }
}

impl CpuLogpFunc for CpuLogistic {
    type LogpError = DensityError;
    type FlowParameters = ();
    type ExpandedVector = Vec<f64>;

    fn dim(&self) -> usize {
        self.x.ncols() + 1
    }

    fn logp(&mut self, theta: &[f64], grad: &mut [f64]) -> std::result::Result<f64, DensityError> {
        let beta = Col::from_fn(self.x.ncols(), |j| theta[j + 1]);
        let eta = &self.x * &beta;
        let mut lp = 0.0;
        // d/dη log_inv_logit(sη) = s · inv_logit(-sη).
        let residual = Col::from_fn(eta.nrows(), |i| {
            let s_eta = self.sign[i] * (eta[i] + theta[0]);
            lp -= (-s_eta).max(0.0) + (-s_eta.abs()).exp().ln_1p();
            self.sign[i] / (1.0 + s_eta.exp())
        });
        let d_beta = self.x.transpose() * &residual;
        let prior = 1.0 / (PRIOR_SD * PRIOR_SD);
        grad[0] = residual.iter().sum::<f64>() - theta[0] * prior;
        for j in 0..self.x.ncols() {
            grad[j + 1] = d_beta[j] - theta[j + 1] * prior;
        }
        Ok(lp - 0.5 * prior * theta.iter().map(|t| t * t).sum::<f64>())
    }

    fn expand_vector<R: clfuse::nuts::nuts_rs::rand::Rng + ?Sized>(
        &mut self,
        _rng: &mut R,
        array: &[f64],
    ) -> std::result::Result<Vec<f64>, CpuMathError> {
        Ok(array.to_vec())
    }
}
