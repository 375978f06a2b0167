//! Gradients of the GP covariance functions (`sum(cov .* W)`, every element
//! weighted differently) in sigma, the length scale (isotropic and ARD),
//! the period and the points, against central finite differences; and a GP
//! log-likelihood through the Cholesky factor against nalgebra.
use crate::rev_leaves::check_against_fd;
use clfuse::Result;
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use common::values;
use nalgebra::DMatrix;

use crate::common;

fn weights(n: usize, m: usize) -> MatrixCl<f64> {
    MatrixCl::from_slice(n, m, &values(n * m, 9.5)).expect("weights")
}

fn weighted_total(v: &Var, w: &MatrixCl<f64>) -> Result<Var> {
    let by_col = colwise_sum(elt_multiply(v, w)).eval()?;
    colwise_sum(transpose(&by_col)).eval()
}

fn var(rows: usize, cols: usize, v: &[f64]) -> Result<Var> {
    Ok(Var::new(MatrixCl::from_slice(rows, cols, v)?))
}

/// Points spread over a few length scales, no two equal.
fn points(n: usize, d: usize, seed: f64) -> Vec<f64> {
    values(n * d, seed).iter().map(|v| 1.5 * v).collect()
}

#[test]
fn stationary_covariances_match_finite_differences() -> Result<()> {
    // (n, m, d, ARD): a small size, an odd larger one, and ARD.
    for (n, m, d, ard) in [(7, 4, 2, false), (7, 5, 2, true), (33, 3, 1, false)] {
        let x = var(n, d, &points(n, d, 0.3))?;
        let x2 = var(m, d, &points(m, d, 0.8))?;
        let sigma = var(1, 1, &[1.3])?;
        let l = if ard {
            var(
                d,
                1,
                &(0..d).map(|k| 0.6 + 0.4 * k as f64).collect::<Vec<_>>(),
            )?
        } else {
            var(1, 1, &[0.8])?
        };
        let (w, w2) = (weights(n, n), weights(n, m));
        let inputs = [&x, &sigma, &l];
        let cross = [&x, &x2, &sigma, &l];
        let tag = |f: &str| format!("{f} n={n} m={m} d={d} ard={ard}");
        check_against_fd(&tag("exp_quad"), &inputs, &|| {
            weighted_total(&gp_exp_quad_cov(&x, &sigma, &l)?.eval()?, &w)
        })?;
        check_against_fd(&tag("exp_quad cross"), &cross, &|| {
            weighted_total(&gp_exp_quad_cross_cov(&x, &x2, &sigma, &l)?.eval()?, &w2)
        })?;
        check_against_fd(&tag("matern32"), &inputs, &|| {
            weighted_total(&gp_matern32_cov(&x, &sigma, &l)?.eval()?, &w)
        })?;
        check_against_fd(&tag("matern32 cross"), &cross, &|| {
            weighted_total(&gp_matern32_cross_cov(&x, &x2, &sigma, &l)?.eval()?, &w2)
        })?;
        check_against_fd(&tag("matern52"), &inputs, &|| {
            weighted_total(&gp_matern52_cov(&x, &sigma, &l)?.eval()?, &w)
        })?;
        check_against_fd(&tag("matern52 cross"), &cross, &|| {
            weighted_total(&gp_matern52_cross_cov(&x, &x2, &sigma, &l)?.eval()?, &w2)
        })?;
        check_against_fd(&tag("exponential"), &inputs, &|| {
            weighted_total(&gp_exponential_cov(&x, &sigma, &l)?.eval()?, &w)
        })?;
        check_against_fd(&tag("exponential cross"), &cross, &|| {
            weighted_total(&gp_exponential_cross_cov(&x, &x2, &sigma, &l)?.eval()?, &w2)
        })?;
    }
    Ok(())
}

#[test]
fn periodic_and_dot_product_covariances_match_finite_differences() -> Result<()> {
    for (n, m, d) in [(7, 4, 2), (33, 3, 1)] {
        let x = var(n, d, &points(n, d, 0.3))?;
        let x2 = var(m, d, &points(m, d, 0.8))?;
        let sigma = var(1, 1, &[1.3])?;
        let l = var(1, 1, &[0.8])?;
        let p = var(1, 1, &[1.7])?;
        let (w, w2) = (weights(n, n), weights(n, m));
        let tag = |f: &str| format!("{f} n={n} m={m} d={d}");
        check_against_fd(&tag("periodic"), &[&x, &sigma, &l, &p], &|| {
            weighted_total(&gp_periodic_cov(&x, &sigma, &l, &p)?.eval()?, &w)
        })?;
        check_against_fd(&tag("periodic cross"), &[&x, &x2, &sigma, &l, &p], &|| {
            weighted_total(
                &gp_periodic_cross_cov(&x, &x2, &sigma, &l, &p)?.eval()?,
                &w2,
            )
        })?;
        check_against_fd(&tag("dot_prod"), &[&x, &sigma], &|| {
            weighted_total(&gp_dot_prod_cov(&x, &sigma)?.eval()?, &w)
        })?;
        check_against_fd(&tag("dot_prod cross"), &[&x, &x2, &sigma], &|| {
            weighted_total(&gp_dot_prod_cross_cov(&x, &x2, &sigma)?.eval()?, &w2)
        })?;
    }
    Ok(())
}

/// `add_diag` of variables: the diagonal values and the matrix.
#[test]
fn add_diag_matches_finite_differences() -> Result<()> {
    let n = 6;
    let m = var(n, n, &values(n * n, 0.4))?;
    let d = var(n, 1, &values(n, 0.9))?;
    let s = var(1, 1, &[0.3])?;
    let w = weights(n, n);
    check_against_fd("add_diag vector", &[&m, &d], &|| {
        weighted_total(&add_diag(&m, &d)?.eval()?, &w)
    })?;
    check_against_fd("add_diag 1 x 1", &[&m, &s], &|| {
        weighted_total(&add_diag(&m, &s)?.eval()?, &w)
    })
}

const HALF_LOG_TWO_PI: f64 = 0.918_938_533_204_672_8;

/// `log N(y | 0, K)` with `K = gp_exp_quad_cov(x, σ, l) + τ² I` on the device.
fn gp_log_likelihood(
    x: &MatrixCl<f64>,
    y: &MatrixCl<f64>,
    sigma: &Var,
    l: &Var,
    noise: f64,
) -> Result<Var> {
    let n = y.rows();
    let k = add_diag(gp_exp_quad_cov(x, sigma, l)?, noise * noise)?.eval()?;
    let chol = rev::cholesky_decompose(&k)?;
    let z = rev::tri_solve(&chol, Op::N, y)?;
    let fit = colwise_sum(square(&z)).eval()?;
    let log_det = log_determinant_cholesky(&chol).eval()?;
    (-0.5f64 * (fit + log_det) - n as f64 * HALF_LOG_TWO_PI).eval()
}

#[test]
fn gp_log_likelihood_matches_nalgebra_and_finite_differences() -> Result<()> {
    // 41: solves by 32-row steps, the adjoint through the inverse; 150:
    // solves through the whole inverse, the adjoint blocked (on PoCL); 600:
    // solves through 256-row blocks.
    for n in [41, 150, 600] {
        gp_log_likelihood_at(n)?;
    }
    Ok(())
}

fn gp_log_likelihood_at(n: usize) -> Result<()> {
    let (d, noise) = (2, 0.3);
    let xv = points(n, d, 0.2);
    let yv: Vec<f64> = values(n, 0.7);
    let x = MatrixCl::from_slice(n, d, &xv)?;
    let y = MatrixCl::from_slice(n, 1, &yv)?;
    let (s, lv) = (1.1, 0.7);
    let sigma = var(1, 1, &[s])?;
    let l = var(1, 1, &[lv])?;
    // nalgebra: the same density.
    let host = |lv: f64| -> f64 {
        let k = DMatrix::from_fn(n, n, |i, j| {
            let r2: f64 = (0..d)
                .map(|c| (xv[i + n * c] - xv[j + n * c]).powi(2))
                .sum();
            s * s * (-0.5 * r2 / (lv * lv)).exp() + if i == j { noise * noise } else { 0.0 }
        });
        let chol = k.cholesky().expect("positive definite");
        let z = chol
            .l()
            .solve_lower_triangular(&DMatrix::from_vec(n, 1, yv.clone()))
            .unwrap();
        let log_det: f64 = 2.0 * (0..n).map(|i| chol.l()[(i, i)].ln()).sum::<f64>();
        -0.5 * (z.norm_squared() + log_det) - n as f64 * HALF_LOG_TWO_PI
    };
    let lp = gp_log_likelihood(&x, &y, &sigma, &l, noise)?;
    let value = lp.value().to_vec()?[0];
    let want = host(lv);
    assert!(
        (value - want).abs() <= 1e-9 * want.abs().max(1.0),
        "n = {n}: {value} vs {want}"
    );
    lp.grad()?;
    let got = l.adjoint().to_vec()?[0];
    rev::clear()?;
    let h = 1e-6;
    let fd = (host(lv + h) - host(lv - h)) / (2.0 * h);
    assert!(
        (got - fd).abs() <= 1e-6 * fd.abs().max(1.0),
        "n = {n}: d/dl = {got} vs finite difference {fd}"
    );
    // And through the tape against the device's own finite differences.
    check_against_fd("gp log-likelihood", &[&sigma, &l], &|| {
        gp_log_likelihood(&x, &y, &sigma, &l, noise)
    })
}
