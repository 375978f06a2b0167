//! `multi_normal_lpdf` (the covariance form) against nalgebra's Cholesky:
//! values, every gradient against finite differences, the covariance's
//! gradient at the sizes where the solve's preparation changes against the
//! Cholesky-factor form, a Gaussian process through a covariance
//! expression, and the checks.

use crate::common::linalg::Rng;
use crate::support::{assert_gradient, assert_value, derivative, soak};
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use clfuse::{Result, dist};
use nalgebra::{DMatrix, DVector};

/// A well-conditioned covariance `L Lᵀ` (`K x K`, column-major).
fn covariance(k: usize, rng: &mut Rng) -> Vec<f64> {
    let l = rng.lower(k);
    (&l * l.transpose()).as_slice().to_vec()
}

/// The log density over the columns of `y` by nalgebra's Cholesky, and the
/// sum of the terms' magnitudes; `mu` has `K` or `K N` elements.
fn reference(y: &[f64], mu: &[f64], sigma: &[f64], k: usize) -> (f64, f64) {
    let n = y.len() / k;
    let factor = DMatrix::from_column_slice(k, k, sigma)
        .cholesky()
        .expect("positive definite")
        .l();
    let half_log_det: f64 = factor.diagonal().iter().map(|d| d.ln()).sum();
    let constant = 0.5 * (k as f64) * (2.0 * std::f64::consts::PI).ln();
    let (mut total, mut scale) = (0.0, 0.0);
    for j in 0..n {
        let r = DVector::from_fn(k, |i, _| {
            y[i + k * j] - if mu.len() == k { mu[i] } else { mu[i + k * j] }
        });
        let z = factor.solve_lower_triangular(&r).expect("solvable");
        let quad = 0.5 * z.norm_squared();
        total += -constant - half_log_det - quad;
        scale += constant + half_log_det.abs() + quad;
    }
    (total, scale)
}

/// `sigma` with `t` added to the pair `(i, j)` and `(j, i)` (once on the
/// diagonal): the covariance stays symmetric.
fn with_pair(sigma: &[f64], k: usize, i: usize, j: usize, t: f64) -> Vec<f64> {
    let mut s = sigma.to_vec();
    s[i + k * j] += t;
    if i != j {
        s[j + k * i] += t;
    }
    s
}

/// The device's symmetric gradient `g` as derivatives along the pairs:
/// `g_ij + g_ji`, `g_ii` on the diagonal (lower triangle, column-major),
/// after checking that `g` is symmetric.
fn along_pairs(what: &str, g: &[f64], k: usize) -> Vec<f64> {
    let mut out = Vec::new();
    for j in 0..k {
        for i in j..k {
            let (a, b) = (g[i + k * j], g[j + k * i]);
            assert!(
                (a - b).abs() <= 1e-12 * a.abs().max(1.0),
                "{what}: gradient not symmetric at [{i}, {j}]: {a:e} against {b:e}"
            );
            out.push(if i == j { a } else { a + b });
        }
    }
    out
}

#[test]
fn values_and_every_gradient() -> Result<()> {
    let mut rng = Rng::new(23);
    for (k, n) in [(1, 1), (3, 1), (3, 4), (33, 1), (33, 31)] {
        let y_v: Vec<f64> = (0..k * n).map(|_| 2.0 * rng.next()).collect();
        let sigma_v = covariance(k, &mut rng);
        for mu_cols in [1, n] {
            let mu_v: Vec<f64> = (0..k * mu_cols).map(|_| rng.next()).collect();
            let y = Var::new(MatrixCl::from_slice(k, n, &y_v)?);
            let mu = Var::new(MatrixCl::from_slice(k, mu_cols, &mu_v)?);
            let sigma = Var::new(MatrixCl::from_slice(k, k, &sigma_v)?);
            let what = format!("multi_normal_lpdf (K = {k}, N = {n}, mu {k} x {mu_cols})");
            let lp = dist::multi_normal_lpdf(&y, &mu, &sigma).eval()?;
            let (want, scale) = reference(&y_v, &mu_v, &sigma_v, k);
            assert_value(&what, lp.value().to_vec()?[0], want, scale);
            lp.grad()?;
            let fd_y: Vec<f64> = (0..k * n)
                .map(|e| derivative(|y| reference(y, &mu_v, &sigma_v, k).0, &y_v, e))
                .collect();
            assert_gradient(&format!("{what}, y"), &y.adjoint().to_vec()?, &fd_y);
            let fd_mu: Vec<f64> = (0..k * mu_cols)
                .map(|e| derivative(|m| reference(&y_v, m, &sigma_v, k).0, &mu_v, e))
                .collect();
            assert_gradient(&format!("{what}, mu"), &mu.adjoint().to_vec()?, &fd_mu);
            let mut fd_sigma = Vec::new();
            for j in 0..k {
                for i in j..k {
                    let f = |t: &[f64]| {
                        reference(&y_v, &mu_v, &with_pair(&sigma_v, k, i, j, t[0]), k).0
                    };
                    fd_sigma.push(derivative(f, &[0.0], 0));
                }
            }
            let got = along_pairs(&what, &sigma.adjoint().to_vec()?, k);
            assert_gradient(&format!("{what}, Sigma"), &got, &fd_sigma);
            rev::clear()?;
            // Constants: a matrix, no tape.
            let (ym, mm, sm) = (
                MatrixCl::from_slice(k, n, &y_v)?,
                MatrixCl::from_slice(k, mu_cols, &mu_v)?,
                MatrixCl::from_slice(k, k, &sigma_v)?,
            );
            let got = dist::multi_normal_lpdf(&ym, &mm, &sm).eval()?.to_vec()?[0];
            assert_value(&format!("{what}, matrices"), got, want, scale);
            assert_eq!(rev::steps_recorded(), 0, "{what}: constants record nothing");
        }
    }
    Ok(())
}

/// Past 64 rows the solve inverts diagonal blocks, past 512 only blocks of
/// 256 and the reverse pass finishes the inverse: the covariance's gradient
/// there against the Cholesky-factor form's (differentiated through the
/// Cholesky adjoint, whose lower-triangle convention gives `g_ij + g_ji`).
#[test]
fn covariance_gradient_where_the_schedule_changes() -> Result<()> {
    let mut sizes = vec![(65, 1), (257, 3), (600, 1)];
    if soak() {
        sizes.extend([(1100, 2), (2049, 1)]);
    }
    let mut rng = Rng::new(41);
    for (k, n) in sizes {
        let y = MatrixCl::from_slice(k, n, &(0..k * n).map(|_| rng.next()).collect::<Vec<_>>())?;
        let sigma_v = covariance(k, &mut rng);
        let what = format!("K = {k}, N = {n}");
        let sigma = Var::new(MatrixCl::from_slice(k, k, &sigma_v)?);
        let lp = dist::multi_normal_lpdf(&y, 0.5, &sigma).eval()?;
        lp.grad()?;
        let got = sigma.adjoint().to_vec()?;
        let value = lp.value().to_vec()?[0];
        rev::clear()?;
        let through = Var::new(MatrixCl::from_slice(k, k, &sigma_v)?);
        let factor = rev::cholesky_decompose(&through)?;
        let lp = dist::multi_normal_cholesky_lpdf(&y, 0.5, &factor).eval()?;
        lp.grad()?;
        let want = through.adjoint().to_vec()?;
        let want_value = lp.value().to_vec()?[0];
        rev::clear()?;
        assert!(
            (value - want_value).abs() <= 1e-10 * want_value.abs(),
            "{what}: value {value} against {want_value}"
        );
        let pairs = along_pairs(&what, &got, k);
        let mut e = 0;
        for j in 0..k {
            for i in j..k {
                let w = want[i + k * j];
                assert!(
                    (pairs[e] - w).abs() <= 1e-9 * w.abs().max(1.0),
                    "{what}: d/dSigma[{i}, {j}] {} against {w} through the Cholesky",
                    pairs[e]
                );
                e += 1;
            }
        }
    }
    Ok(())
}

/// The host covariance of `gp_exp_quad_cov(x, s, l)` plus `noise` on the
/// diagonal, for `x` `n x 2` (column-major).
fn gp_covariance(x: &[f64], s: f64, l: f64, noise: f64) -> Vec<f64> {
    let n = x.len() / 2;
    let mut k = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..n {
            let d2 = (x[i] - x[j]).powi(2) + (x[i + n] - x[j + n]).powi(2);
            k[i + n * j] = s * s * (-0.5 * d2 / (l * l)).exp() + if i == j { noise } else { 0.0 };
        }
    }
    k
}

/// A Gaussian process as a user writes it: the covariance expression of
/// variables, then the density. Its hyper-parameters' gradients against
/// finite differences, at sizes on both sides of the solve's 512-row
/// preparation.
#[test]
fn gaussian_process_hyper_parameters() -> Result<()> {
    let mut rng = Rng::new(3);
    for n in [1, 40, 600] {
        let x_v: Vec<f64> = (0..2 * n).map(|_| 3.0 * rng.next()).collect();
        let y_v: Vec<f64> = (0..n).map(|_| rng.next()).collect();
        let theta_v = [0.8, 0.6, 0.3];
        let (x, y) = (
            MatrixCl::from_slice(n, 2, &x_v)?,
            MatrixCl::from_slice(n, 1, &y_v)?,
        );
        let theta: Vec<Var> = theta_v
            .iter()
            .map(|&t| MatrixCl::from_slice(1, 1, &[t]).map(Var::new))
            .collect::<Result<_>>()?;
        let k = add_diag(gp_exp_quad_cov(&x, &theta[0], &theta[1])?, &theta[2])?.eval()?;
        let lp = dist::multi_normal_lpdf(&y, 0.0, &k).eval()?;
        let host = |t: &[f64]| {
            reference(
                &y_v,
                &[0.0; 1].repeat(n),
                &gp_covariance(&x_v, t[0], t[1], t[2]),
                n,
            )
            .0
        };
        assert_value(
            &format!("GP n = {n}"),
            lp.value().to_vec()?[0],
            host(&theta_v),
            host(&theta_v).abs(),
        );
        lp.grad()?;
        let got: Vec<f64> = theta
            .iter()
            .map(|t| t.adjoint().to_vec().map(|v| v[0]))
            .collect::<Result<_>>()?;
        let want: Vec<f64> = (0..3).map(|e| derivative(host, &theta_v, e)).collect();
        assert_gradient(
            &format!("GP n = {n}, (sigma, length scale, noise)"),
            &got,
            &want,
        );
        rev::clear()?;
    }
    Ok(())
}

#[test]
fn checks_name_the_argument_and_record_nothing() -> Result<()> {
    let f = "multi_normal_lpdf";
    let message = |r: Result<Var>| r.err().map(|e| e.to_string()).unwrap_or_default();
    let sigma = Var::new(MatrixCl::from_slice(
        3,
        3,
        &[2.0, 0.5, 0.0, 0.5, 2.0, 0.5, 0.0, 0.5, 2.0],
    )?);
    let mu = Var::new(MatrixCl::from_slice(3, 1, &[0.0; 3])?);
    let mut y_v = vec![0.5; 6];
    y_v[4] = f64::NAN;
    let y = Var::new(MatrixCl::from_slice(3, 2, &y_v)?);
    let before = rev::steps_recorded();
    assert_eq!(
        message(dist::multi_normal_lpdf(&y, &mu, &sigma).eval()),
        format!("{f}: y[1, 1] is NaN, but must be not NaN")
    );
    let y = Var::new(MatrixCl::from_slice(3, 2, &[0.5; 6])?);
    let bad_mu = Var::new(MatrixCl::from_slice(3, 1, &[0.0, f64::INFINITY, 0.0])?);
    assert_eq!(
        message(dist::multi_normal_lpdf(&y, &bad_mu, &sigma).eval()),
        format!("{f}: mu[1, 0] is inf, but must be finite")
    );
    let wide = Var::new(MatrixCl::from_slice(3, 2, &[1.0; 6])?);
    assert_eq!(
        message(dist::multi_normal_lpdf(&y, &mu, &wide).eval()),
        format!("{f}: argument `Sigma` is invalid: must be 3 x 3 for y with 3 rows, is 3 x 2")
    );
    let asymmetric = Var::new(MatrixCl::from_slice(
        3,
        3,
        &[2.0, 0.5, 0.0, 0.5, 2.0, 0.7, 0.0, 0.5, 2.0],
    )?);
    assert_eq!(
        message(dist::multi_normal_lpdf(&y, &mu, &asymmetric).eval()),
        format!("{f}: argument `Sigma` is not symmetric: [2, 1] differs from [1, 2]")
    );
    let indefinite = Var::new(MatrixCl::from_slice(
        3,
        3,
        &[1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0],
    )?);
    assert_eq!(
        message(dist::multi_normal_lpdf(&y, &mu, &indefinite).eval()),
        format!("{f}: argument `Sigma` is not positive definite (pivot 2 is not positive)")
    );
    let not_finite = Var::new(MatrixCl::from_slice(
        3,
        3,
        &[2.0, 0.5, 0.0, 0.5, f64::NAN, 0.5, 0.0, 0.5, 2.0],
    )?);
    let err = message(dist::multi_normal_lpdf(&y, &mu, &not_finite).eval());
    assert!(
        err.starts_with(&format!("{f}: ")) && err.contains("Sigma") && err.contains("[1, 1]"),
        "{err}"
    );
    assert_eq!(
        rev::steps_recorded(),
        before,
        "a failed check records nothing"
    );
    // No observation, or no coordinate: no term.
    let none = MatrixCl::<f64>::zeros(3, 0)?;
    let lp = dist::multi_normal_lpdf(&none, 0.0, &sigma).eval()?;
    assert_eq!(lp.value().to_vec()?, vec![0.0]);
    rev::clear()
}
