//! A linear regression with 24 correlated predictors, as posteriordb's
//! `diamonds` model, declared with `clfuse::params` and sampled by
//! `nuts::sample` (4 chains):
//!
//! ```stan
//! parameters { vector[K] b; real Intercept; real<lower=0> sigma; }
//! model {
//!   y ~ normal_id_glm(Xc, Intercept, b, sigma);   // Xc: centred predictors
//!   b ~ normal(0, 1);
//!   Intercept ~ student_t(3, 8, 10);
//!   sigma ~ student_t(3, 0, 10);                  // half-t: sigma's bound
//! }
//! ```
//!
//! Synthetic data from a fixed seed: n rows, predictors with AR(1)
//! correlation 0.6 between neighbouring columns. The likelihood is either
//! the GLM leaf `rev::normal_id_glm` or the density `dist::normal_lpdf(y,
//! Xc·b + Intercept, sigma)`; both are timed per gradient, must agree to
//! 1e-9, and the faster one samples.
//!
//! The check is against the exact posterior moments, computed on the host:
//! with centred predictors the intercept separates from `b`, and given
//! `sigma` the posterior of `b` is Gaussian (its prior is), so the marginal
//! of `sigma` is a one-dimensional density in closed form; quadrature over
//! it gives E and sd of `b` and `sigma` exactly. (A least-squares estimate
//! would only be near the posterior mean; this is the posterior itself.)
//! Only the intercept's t prior is left out (treated as flat): with the
//! likelihood's precision n/sigma² it moves the intercept's mean by under
//! 1% of its sd. Every mean and sd must lie within 4 MCSE, R̂ < 1.01.
//!
//! `cargo run --release --features nuts --example regression -- [--n N] [--warmup W] [--draws D] [--seed S] [--quick] [--threaded]`

mod support;

use clfuse::Result;
use clfuse::dist::{normal_lpdf, student_t_lpdf};
use clfuse::nuts::{Interleaving, Model, Sampler, sample};
use clfuse::params::{Constrained, Constraint, Param, Parameters};
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use nalgebra::{DMatrix, DVector};
use support::{Reference, agree, check_reference, failed, flag, normals, per_gradient};

const EXAMPLE: &str = "regression";
const K: usize = 24;

/// The parameters' handles.
#[derive(Clone, Copy)]
struct Handles {
    b: Param,
    intercept: Param,
    sigma: Param,
}

fn declare() -> Result<(Parameters, Handles)> {
    let mut p = Parameters::new();
    let b = p.vector("b", K, Constraint::Unconstrained)?;
    let intercept = p.real("Intercept", Constraint::Unconstrained)?;
    let sigma = p.real("sigma", Constraint::lower(0.0))?;
    Ok((
        p,
        Handles {
            b,
            intercept,
            sigma,
        },
    ))
}

/// The priors, the same for both likelihoods.
fn priors(v: &Constrained, h: Handles) -> Result<Var> {
    (normal_lpdf(&v[h.b], 0.0, 1.0).eval()?
        + student_t_lpdf(&v[h.intercept], 3.0, 8.0, 10.0).eval()?
        + student_t_lpdf(&v[h.sigma], 3.0, 0.0, 10.0).eval()?)
    .eval()
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let n = flag(&args, "--n", if quick { 500 } else { 5000 });
    let sampler = Sampler {
        chains: 4,
        warmup: flag(&args, "--warmup", if quick { 300 } else { 1000 }) as u64,
        draws: flag(&args, "--draws", if quick { 500 } else { 1000 }) as u64,
        seed: flag(&args, "--seed", 24) as u64,
        // Chains on threads of their own instead of interleaved from one.
        interleave: if args.iter().any(|a| a == "--threaded") {
            Interleaving::Never
        } else {
            Interleaving::OnGpus
        },
        ..Sampler::default()
    };
    if n <= K + 2 {
        return Err(failed(
            EXAMPLE,
            "--n",
            format!("{n} rows for {K} predictors"),
        ));
    }
    println!(
        "linear regression, n = {n}, K = {K}: {} chains x ({} warm-up + {} draws), {}",
        sampler.chains,
        sampler.warmup,
        sampler.draws,
        clfuse::Runtime::get()?.device_info().name
    );

    let (xc, y) = synthetic(n);
    let x_device = MatrixCl::from_slice(n, K, xc.as_slice())?;
    let y_device = MatrixCl::from_slice(n, 1, &y)?;
    let (xd, yd) = (&x_device, &y_device);

    // The model twice: with the GLM leaf (one kernel, hand-derived
    // gradient) and with the density of a fused linear predictor.
    let (p, h) = declare()?;
    let glm = p.model(move |v| {
        let likelihood = rev::normal_id_glm(yd, xd, &v[h.intercept], &v[h.b], &v[h.sigma])?;
        (likelihood + priors(v, h)?).eval()
    });
    let (p, h) = declare()?;
    let composed = p.model(move |v| {
        let mu = matrix_vector_multiply(xd, &v[h.b]) + optional_broadcast(&v[h.intercept], n, 1);
        (normal_lpdf(yd, mu, &v[h.sigma]).eval()? + priors(v, h)?).eval()
    });

    // Same value and gradient, then the faster one samples.
    let theta = vec![0.1; glm.dim()];
    let (t_glm, t_composed) = {
        let (mut a, mut b) = (glm.density()?, composed.density()?);
        agree(EXAMPLE, &mut a, &mut b, &theta, 1e-9)?;
        let calls = if quick { 10 } else { 30 };
        (
            per_gradient(&mut a, &theta, calls)?.1,
            per_gradient(&mut b, &theta, calls)?.1,
        )
    };
    println!(
        "per gradient: GLM leaf {:.1} µs, normal_lpdf of Xc·b + Intercept {:.1} µs (agree to 1e-9); sampling with the {}",
        t_glm * 1e6,
        t_composed * 1e6,
        if t_glm <= t_composed {
            "GLM leaf"
        } else {
            "density"
        }
    );
    let start = std::time::Instant::now();
    let fit = if t_glm <= t_composed {
        sample(&glm, &sampler)?
    } else {
        sample(&composed, &sampler)?
    };
    let wall = start.elapsed().as_secs_f64();
    let summary = fit.summary();
    println!("{summary}");
    let chains = fit.chains();
    let leapfrogs: u64 = chains
        .iter()
        .flat_map(|c| &c.stats)
        .map(|s| s.leapfrog_steps)
        .sum();
    let sampling: f64 = chains.iter().map(|c| c.sampling_time.as_secs_f64()).sum();
    println!(
        "whole run {wall:.2} s; sampling: {leapfrogs} gradients, {:.1} µs each (per chain, sampler included)",
        sampling * 1e6 / leapfrogs.max(1) as f64
    );

    for reference in exact_posterior(&xc, &y)? {
        check_reference(EXAMPLE, &fit, &summary, &reference)?;
    }
    let converged = summary.max_rhat() < 1.01; // NaN fails
    if !converged {
        return Err(failed(
            EXAMPLE,
            "R-hat",
            format!("max R-hat {:.4} >= 1.01", summary.max_rhat()),
        ));
    }
    println!(
        "b, Intercept and sigma: means and sds within 4 MCSE of the exact posterior, R-hat < 1.01, {} divergences",
        summary.divergences
    );
    Ok(())
}

/// Centred predictors (`n x K`, AR(1) correlated, scales 1 to 3) and
/// outcomes from a fixed seed.
fn synthetic(n: usize) -> (DMatrix<f64>, Vec<f64>) {
    let mut z = normals(0x05ee_dd1a_30d5);
    let rho: f64 = 0.6;
    let mut x = DMatrix::zeros(n, K);
    for i in 0..n {
        let mut previous = z();
        for j in 0..K {
            if j > 0 {
                previous = rho * previous + (1.0 - rho * rho).sqrt() * z();
            }
            x[(i, j)] = 2.0 + (1 + j % 3) as f64 * previous;
        }
    }
    let b = DVector::from_fn(K, |j, _| 0.4 * ((j + 1) as f64).sin());
    let y: Vec<f64> = (0..n)
        .map(|i| 8.0 + (x.row(i) * &b)[0] + 1.2 * z())
        .collect();
    for mut column in x.column_iter_mut() {
        let mean = column.mean();
        column.add_scalar_mut(-mean);
    }
    (x, y)
}

/// The exact posterior means and sds of b, Intercept and sigma, by
/// quadrature over sigma's marginal (the intercept's prior taken as flat):
///
/// p(sigma | y) ∝ p(sigma) sigma^-(n-1) |P|^-1/2 exp(-(yᵀy - mᵀXᵀy) / (2 sigma²)),
/// b | sigma, y ~ N(m, P⁻¹),  P = XᵀX / sigma² + I,  m = P⁻¹ Xᵀy / sigma²,
/// Intercept | sigma, y ~ N(mean(y), sigma² / n)
///
/// with y centred and X the centred predictors.
fn exact_posterior(xc: &DMatrix<f64>, y: &[f64]) -> Result<Vec<Reference>> {
    let n = y.len() as f64;
    let y_mean = y.iter().sum::<f64>() / n;
    let yc = DVector::from_iterator(y.len(), y.iter().map(|v| v - y_mean));
    let (xtx, xty, yty) = (xc.tr_mul(xc), xc.tr_mul(&yc), yc.dot(&yc));
    let singular = || failed(EXAMPLE, "predictors", "XᵀX is not positive definite".into());
    // Centre the grid on the least-squares residual sd; sigma's posterior
    // sd is about sigma / sqrt(2n): the grid spans ±10 of them.
    let ols = xtx.clone().cholesky().ok_or_else(singular)?.solve(&xty);
    let s_hat = ((yty - ols.dot(&xty)) / (n - K as f64 - 1.0)).sqrt();
    let points = 4001;
    let half_width = 10.0 / (2.0 * n).sqrt();
    let mut grid = Vec::with_capacity(points);
    for g in 0..points {
        let s = s_hat * (1.0 + half_width * (2.0 * g as f64 / (points - 1) as f64 - 1.0));
        let s2 = s * s;
        let precision = &xtx / s2 + DMatrix::identity(K, K);
        let chol = precision.cholesky().ok_or_else(singular)?;
        let m = chol.solve(&(&xty / s2));
        let log_det = 2.0 * chol.l().diagonal().iter().map(|v| v.ln()).sum::<f64>();
        // Half student_t(3, 0, 10), up to a constant.
        let prior = -2.0 * (1.0 + s2 / 300.0).ln();
        let log_p = prior - (n - 1.0) * s.ln() - 0.5 * log_det - 0.5 * (yty - m.dot(&xty)) / s2;
        grid.push((s, log_p, m, chol.inverse().diagonal()));
    }
    let top = grid.iter().map(|g| g.1).fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = grid.iter().map(|g| (g.1 - top).exp()).sum();
    let (mut s1, mut s2) = (0.0, 0.0);
    let (mut b1, mut b2) = (DVector::zeros(K), DVector::zeros(K));
    for (s, log_p, m, var) in &grid {
        let w = (log_p - top).exp() / total;
        s1 += w * s;
        s2 += w * s * s;
        b1 += w * m;
        b2 += w * (var + m.component_mul(m));
    }
    let mut references: Vec<Reference> = (0..K)
        .map(|j| {
            let sd = (b2[j] - b1[j] * b1[j]).sqrt();
            Reference::exact(format!("b[{}]", j + 1), b1[j], sd)
        })
        .collect();
    references.push(Reference::exact(
        "Intercept".into(),
        y_mean,
        (s2 / n).sqrt(),
    ));
    references.push(Reference::exact("sigma".into(), s1, (s2 - s1 * s1).sqrt()));
    Ok(references)
}
