//! Gaussian-process regression sampled with NUTS (the paper's Figure 7):
//! a squared-exponential covariance built on the device by fused
//! operations, its Cholesky factor, one substitution and the
//! log-determinant, differentiated by the tape through the blocked
//! Cholesky adjoint; against the same model on the CPU with faer (one
//! thread), both sampled by `nuts-rs` from the same seed.
//!
//! ```text
//! y ~ MultiNormal(0, K),  K_ij = σ² exp(-‖x_i − x_j‖² / (2ℓ²)) + τ² δ_ij
//! log ℓ ~ Normal(log 0.5, 1),  log σ ~ Normal(0, 1),  log τ ~ Normal(log 0.3, 1)
//! ```
//!
//! Synthetic data (n points in [0, 3]^D) drawn from the model itself with a
//! fixed seed. The device and CPU densities must agree to 1e-9, and the
//! posterior means of (log ℓ, log σ, log τ) must lie within 3 posterior
//! standard deviations of the values that generated the data.
//!
//! `cargo run --release --features nuts --example gp_nuts -- [--n N] [--d D] [--warmup W] [--draws D] [--cpu-run 0|1] [--quick]`

mod support;

use clfuse::nuts::{DensityError, DeviceDensity, RunLength, sample};
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use clfuse::{Error, Result};
use faer::linalg::solvers::{DenseSolveCore, Solve};
use faer::{Mat, Side};
use nuts_rs::{CpuLogpFunc, CpuMathError, HasDims};
use support::{agree, check_posterior, failed, flag, per_gradient, report_run};

const EXAMPLE: &str = "gp_nuts";
/// Prior means of (log ℓ, log σ, log τ); prior sd 1.
const PRIOR_MEAN: [f64; 3] = [-std::f64::consts::LN_2, 0.0, -1.203_972_804_326_936];
/// The values that generate the data: ℓ = 0.6, σ = 1.0, τ = 0.3.
const TRUTH: [f64; 3] = [-0.510_825_623_765_990_7, 0.0, -1.203_972_804_326_936];
const HALF_LOG_TWO_PI: f64 = 0.918_938_533_204_672_8;

struct Data {
    /// n x d points, column-major.
    x: Vec<f64>,
    y: Vec<f64>,
}

fn uniforms(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The squared-exponential covariance at `theta` = (log ℓ, log σ, log τ).
fn covariance(x: &Mat<f64>, theta: &[f64]) -> Mat<f64> {
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

fn synthetic(n: usize, d: usize) -> Result<Data> {
    let mut uniform = uniforms(0x2545_f491_4f6c_dd1d);
    let x: Vec<f64> = (0..n * d).map(|_| 3.0 * uniform()).collect();
    let points = Mat::from_fn(n, d, |i, k| x[i + n * k]);
    let k = covariance(&points, &TRUTH);
    let l = k
        .llt(Side::Lower)
        .map_err(|e| failed(EXAMPLE, "data", format!("{e:?}")))?;
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

/// The model on the device: these lines are all a user writes.
fn device_model(
    d2: &MatrixCl<f64>,
    y: &MatrixCl<f64>,
    prior_mean: &MatrixCl<f64>,
    theta: &Var,
) -> Result<Var> {
    let n = y.rows();
    // Each hyperparameter as its own 1 x 1 variable: its adjoint is then a
    // work-group sum over the n x n covariance, not n² atomic adds.
    let inv_l2 = exp(-2.0f64 * block(theta, 0, 0, 1, 1)).eval()?;
    let s2 = exp(2.0f64 * block(theta, 1, 0, 1, 1)).eval()?;
    let t2 = exp(2.0f64 * block(theta, 2, 0, 1, 1)).eval()?;
    let diagonal = eq(row_index(n, n), col_index(n, n));
    let k = (elt_multiply(
        optional_broadcast(&s2, n, n),
        exp(-0.5f64 * elt_multiply(d2, optional_broadcast(&inv_l2, n, n))),
    ) + select(diagonal, optional_broadcast(&t2, n, n), 0.0f64))
    .eval()?;
    let l = rev::cholesky_decompose(&k)?;
    let z = rev::tri_solve(&l, Op::N, y)?;
    let fit = colwise_sum(square(&z)).eval()?;
    let log_det = log_determinant_cholesky(&l).eval()?;
    let prior = colwise_sum(square(theta - prior_mean)).eval()?;
    let constant = (n + 3) as f64 * HALF_LOG_TWO_PI;
    (-0.5f64 * (fit + log_det + prior) - constant).eval()
}

/// The same model on the CPU with faer: Cholesky, solve, and the gradient
/// `½ tr((α αᵀ − K⁻¹) ∂K/∂θ)` with `α = K⁻¹ y`.
struct CpuGp {
    x: Mat<f64>,
    y: Mat<f64>,
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

    fn expand_vector<R: nuts_rs::rand::Rng + ?Sized>(
        &mut self,
        _rng: &mut R,
        array: &[f64],
    ) -> std::result::Result<Vec<f64>, CpuMathError> {
        Ok(array.to_vec())
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let n = flag(&args, "--n", if quick { 60 } else { 1000 });
    let d = flag(&args, "--d", 2);
    let length = RunLength {
        warmup: flag(&args, "--warmup", if quick { 200 } else { 1000 }) as u64,
        draws: flag(&args, "--draws", if quick { 200 } else { 1000 }) as u64,
        seed: 20261123,
    };
    let cpu_run = flag(&args, "--cpu-run", 1) == 1;
    let data = synthetic(n, d)?;
    println!(
        "GP regression, n = {n}, D = {d}: {} warm-up + {} draws, {}",
        length.warmup,
        length.draws,
        clfuse::Runtime::get()?.device_info().name
    );

    // Pairwise squared distances once, on the device (data, not parameters).
    let x = MatrixCl::from_slice(n, d, &data.x)?;
    let d2 = squared_distance(&x, &x)?.eval()?;
    let y = MatrixCl::from_slice(n, 1, &data.y)?;
    let prior_mean = MatrixCl::from_slice(3, 1, &PRIOR_MEAN)?;
    let mut device = DeviceDensity::new(3, |theta| device_model(&d2, &y, &prior_mean, theta))?;
    let mut cpu = CpuGp {
        x: Mat::from_fn(n, d, |i, k| data.x[i + n * k]),
        y: Mat::from_fn(n, 1, |i, _| data.y[i]),
    };

    // The two densities agree (value and gradient) at the truth and elsewhere.
    let value = agree(EXAMPLE, &mut device, &mut cpu, &TRUTH, 1e-9)?;
    agree(EXAMPLE, &mut device, &mut cpu, &[0.3, -0.4, -2.0], 1e-9)?;
    println!("log density at the truth: {value:.10} (device = CPU to 1e-9)");

    let calls = if quick { 5 } else { 20 };
    let (_, t_device) = per_gradient(&mut device, &TRUTH, calls)?;
    let (_, t_cpu) = per_gradient(&mut cpu, &TRUTH, calls.min(5))?;
    println!(
        "per gradient (host waits for value and gradient): device {:.1} µs, CPU (faer, 1 thread) {:.1} µs, speedup {:.2}x",
        t_device * 1e6,
        t_cpu * 1e6,
        t_cpu / t_device
    );

    let init = [0.0; 3];
    let device_run = sample(device, &init, length)?;
    report_run("device", &device_run);
    check_posterior(EXAMPLE, "device", &device_run, &TRUTH)?;
    if cpu_run {
        let cpu_result = sample(cpu, &init, length)?;
        report_run("CPU", &cpu_result);
        check_posterior(EXAMPLE, "CPU", &cpu_result, &TRUTH)?;
        println!(
            "whole-run speedup {:.2}x",
            cpu_result.elapsed.as_secs_f64() / device_run.elapsed.as_secs_f64()
        );
    }
    println!("posterior means within 3 sd of the truth:");
    let names = ["log lengthscale", "log sigma", "log noise"];
    for ((name, (m, s)), t) in names.iter().zip(device_run.mean_and_sd()).zip(TRUTH) {
        println!("  {name:>15}: mean {m:+.4} sd {s:.4} (truth {t:+.4})");
    }
    Ok(())
}
