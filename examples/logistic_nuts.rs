//! Bayesian logistic regression sampled with NUTS (the paper's Figure 6):
//! the log density written as device expressions and differentiated by the
//! tape, against the same model on the CPU with faer, both sampled by
//! `nuts-rs` from the same seed.
//!
//! ```text
//! y_i ~ Bernoulli(inv_logit(α + x_i·β))    α, β_k ~ Normal(0, 5)
//! ```
//!
//! Synthetic data from a fixed seed; the posterior means must lie within 3
//! posterior standard deviations of the coefficients that generated the
//! data, and the device and CPU log densities must agree to 1e-9.
//!
//! `cargo run --release --features nuts --example logistic_nuts -- [--n N] [--k K] [--warmup W] [--draws D] [--quick]`

mod support;

use clfuse::Result;
use clfuse::nuts::{DensityError, DeviceDensity, RunLength, sample};
use clfuse::prelude::*;
use clfuse::rev::Var;
use faer::{Col, Mat};
use nuts_rs::{CpuLogpFunc, CpuMathError, HasDims};
use support::{agree, check_posterior, flag, per_gradient, report_run};

const PRIOR_SD: f64 = 5.0;
const EXAMPLE: &str = "logistic_nuts";

struct Data {
    x: Vec<f64>,
    y: Vec<i32>,
    truth: Vec<f64>,
    n: usize,
    k: usize,
}

fn synthetic(n: usize, k: usize) -> Data {
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
fn device_model(x: &MatrixCl<f64>, sign: &MatrixCl<f64>, theta: &Var) -> Result<Var> {
    let (n, k) = (x.rows(), x.cols());
    // α as its own 1 x 1 variable: its adjoint is then a work-group sum,
    // not n atomic adds to one element of θ (see BENCHMARKS.md).
    let alpha = block(theta, 0, 0, 1, 1).eval()?;
    let beta = block(theta, 1, 0, k, 1);
    let eta = matrix_vector_multiply(x, beta) + optional_broadcast(&alpha, n, 1);
    let likelihood = colwise_sum(log_inv_logit(elt_multiply(sign, eta))).eval()?;
    let prior = colwise_sum(square(theta)).eval()?;
    (likelihood - prior * (0.5 / (PRIOR_SD * PRIOR_SD))).eval()
}

/// The same model on the CPU, with faer's matrix-vector products.
struct CpuLogistic {
    x: Mat<f64>,
    sign: Col<f64>,
}

impl CpuLogistic {
    fn new(d: &Data) -> Self {
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
    let n = flag(&args, "--n", if quick { 400 } else { 100_000 });
    let k = flag(&args, "--k", if quick { 3 } else { 10 });
    let length = RunLength {
        warmup: flag(&args, "--warmup", 1000) as u64,
        draws: flag(&args, "--draws", 1000) as u64,
        seed: 20261123,
    };
    let data = synthetic(n, k);
    println!(
        "logistic regression, N = {n}, K = {k}: {} warm-up + {} draws, {}",
        length.warmup,
        length.draws,
        clfuse::Runtime::get()?.device_info().name
    );

    let x = MatrixCl::from_slice(n, k, &data.x)?;
    let sign_host: Vec<f64> = data.y.iter().map(|&y| 2.0 * y as f64 - 1.0).collect();
    let sign = MatrixCl::from_slice(n, 1, &sign_host)?;
    let mut device = DeviceDensity::new(k + 1, |theta| device_model(&x, &sign, theta))?;
    let mut cpu = CpuLogistic::new(&data);

    // The two densities agree (value and gradient) at the truth.
    let v_device = agree(EXAMPLE, &mut device, &mut cpu, &data.truth, 1e-9)?;
    let v_cpu = cpu
        .logp(&data.truth, &mut vec![0.0; k + 1])
        .map_err(|e| e.0)?;
    println!("log density at the truth: device {v_device:.10} = CPU {v_cpu:.10}");

    let calls = if quick { 20 } else { 200 };
    let (_, t_device) = per_gradient(&mut device, &data.truth, calls)?;
    let (_, t_cpu) = per_gradient(&mut cpu, &data.truth, calls)?;
    println!(
        "per gradient (host waits for value and gradient): device {:.1} µs, CPU (faer, 1 thread) {:.1} µs, speedup {:.2}x",
        t_device * 1e6,
        t_cpu * 1e6,
        t_cpu / t_device
    );

    let init = vec![0.0; k + 1];
    let device_run = sample(device, &init, length)?;
    let cpu_run = sample(cpu, &init, length)?;
    for (name, run) in [("device", &device_run), ("CPU", &cpu_run)] {
        report_run(name, run);
        check_posterior(EXAMPLE, name, run, &data.truth)?;
    }
    println!(
        "whole-run speedup {:.2}x; posterior means within 3 sd of the truth:",
        cpu_run.elapsed.as_secs_f64() / device_run.elapsed.as_secs_f64()
    );
    for (j, ((m, s), t)) in device_run.mean_and_sd().iter().zip(&data.truth).enumerate() {
        let name = if j == 0 {
            "alpha".to_string()
        } else {
            format!("beta[{}]", j - 1)
        };
        println!("  {name:>9}: mean {m:+.4} sd {s:.4} (truth {t:+.4})");
    }
    Ok(())
}
