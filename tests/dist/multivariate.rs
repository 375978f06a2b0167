//! The multivariate densities over the columns of a `K x N` matrix:
//! values against plain CPU loops (Dirichlet's formula, forward
//! substitution for the multivariate normal), gradients in every variable
//! against finite differences of those loops, and every argument check
//! (the error's text, nothing recorded). K ∈ {1, 3, 33}, N ∈ {1, 31, 33};
//! `FUSION_SOAK=1` adds (K, N) = (40, 200) and (4, 1000) (kept moderate:
//! the finite differences in every element grow as (KN)²).

use crate::common::linalg::Rng;
use crate::support::{assert_gradient, assert_value, derivative, soak};
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use clfuse::{Result, dist};

/// The `(K, N)` shapes tested.
fn shapes() -> Vec<(usize, usize)> {
    let mut shapes = Vec::new();
    for k in [1, 3, 33] {
        for n in [1, 31, 33] {
            shapes.push((k, n));
        }
    }
    if soak() {
        shapes.extend([(40, 200), (4, 1000)]);
    }
    shapes
}

fn lgamma(x: f64) -> f64 {
    libm::lgamma(x)
}

fn message<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// `K x N` simplexes (column-major), every element positive.
fn simplexes(k: usize, n: usize, rng: &mut Rng) -> Vec<f64> {
    let mut theta = Vec::with_capacity(k * n);
    for _ in 0..n {
        let col: Vec<f64> = (0..k).map(|_| 1.5 + rng.next()).collect();
        let s: f64 = col.iter().sum();
        theta.extend(col.iter().map(|v| v / s));
    }
    theta
}

/// Dirichlet's log density summed over the columns; `alpha` has `k` or
/// `k·n` elements. Returns the sum and the sum of the terms' magnitudes.
fn dirichlet(theta: &[f64], alpha: &[f64], k: usize) -> (f64, f64) {
    let n = theta.len() / k;
    let mut total = 0.0;
    let mut scale = 0.0;
    for j in 0..n {
        let a = |i: usize| {
            if alpha.len() == k {
                alpha[i]
            } else {
                alpha[i + k * j]
            }
        };
        let sum: f64 = (0..k).map(a).sum();
        let mut lp = lgamma(sum);
        scale += lp.abs();
        for i in 0..k {
            let t = (a(i) - 1.0) * theta[i + k * j].ln() - lgamma(a(i));
            lp += t;
            scale += t.abs();
        }
        total += lp;
    }
    (total, scale)
}

/// Finite differences of `f` in every element of `at`.
fn gradient(f: impl Fn(&[f64]) -> f64, at: &[f64]) -> Vec<f64> {
    (0..at.len()).map(|j| derivative(&f, at, j)).collect()
}

#[test]
fn dirichlet_values_and_gradients() -> Result<()> {
    let mut rng = Rng::new(7);
    for (k, n) in shapes() {
        let theta_v = simplexes(k, n, &mut rng);
        for alpha_cols in [1, n] {
            let alpha_v: Vec<f64> = (0..k * alpha_cols).map(|_| 1.6 + rng.next()).collect();
            let theta = Var::new(MatrixCl::from_slice(k, n, &theta_v)?);
            let alpha = Var::new(MatrixCl::from_slice(k, alpha_cols, &alpha_v)?);
            let what = format!("dirichlet_lpdf (K = {k}, N = {n}, alpha {k} x {alpha_cols})");
            let lp = dist::dirichlet_lpdf(&theta, &alpha).eval()?;
            let (want, scale) = dirichlet(&theta_v, &alpha_v, k);
            assert_value(&what, lp.value().to_vec()?[0], want, scale);
            lp.grad()?;
            let fd_alpha = gradient(|a| dirichlet(&theta_v, a, k).0, &alpha_v);
            assert_gradient(
                &format!("{what}, alpha"),
                &alpha.adjoint().to_vec()?,
                &fd_alpha,
            );
            // θ's gradient is per element: the differences of its column alone.
            let fd_theta: Vec<f64> = (0..k * n)
                .map(|e| {
                    let j = e / k;
                    let col = &theta_v[k * j..k * (j + 1)];
                    let a: Vec<f64> = if alpha_cols == 1 {
                        alpha_v.clone()
                    } else {
                        alpha_v[k * j..k * (j + 1)].to_vec()
                    };
                    derivative(|t| dirichlet(t, &a, k).0, col, e % k)
                })
                .collect();
            assert_gradient(
                &format!("{what}, theta"),
                &theta.adjoint().to_vec()?,
                &fd_theta,
            );
            rev::clear()?;
            // Constants: a matrix.
            let tm = MatrixCl::from_slice(k, n, &theta_v)?;
            let am = MatrixCl::from_slice(k, alpha_cols, &alpha_v)?;
            let got = dist::dirichlet_lpdf(&tm, &am).eval()?.to_vec()?[0];
            assert_value(&format!("{what}, matrices"), got, want, scale);
        }
    }
    Ok(())
}

#[test]
fn dirichlet_forms() -> Result<()> {
    // A number for alpha: the same concentration for every category.
    let theta_v = [0.2, 0.3, 0.5, 0.6, 0.1, 0.3];
    let theta = MatrixCl::from_slice(3, 2, &theta_v)?;
    let got = dist::dirichlet_lpdf(&theta, 2.5).eval()?.to_vec()?[0];
    let (want, scale) = dirichlet(&theta_v, &[2.5; 3], 3);
    assert_value("dirichlet_lpdf, number alpha", got, want, scale);
    // θ a variable, α a matrix; and θ an expression.
    let t = Var::new(MatrixCl::from_slice(3, 2, &theta_v)?);
    let alpha = MatrixCl::from_slice(3, 1, &[1.0, 2.0, 3.0])?;
    let lp = dist::dirichlet_lpdf(&t, &alpha).eval()?;
    let (want, scale) = dirichlet(&theta_v, &[1.0, 2.0, 3.0], 3);
    assert_value(
        "dirichlet_lpdf, theta variable",
        lp.value().to_vec()?[0],
        want,
        scale,
    );
    lp.grad()?;
    let g = t.adjoint().to_vec()?;
    for (e, &v) in g.iter().enumerate() {
        let a = [1.0, 2.0, 3.0][e % 3];
        assert!((v - (a - 1.0) / theta_v[e]).abs() < 1e-12, "{e}: {v}");
    }
    rev::clear()?;
    let expr = &theta * 1.0;
    let got = dist::dirichlet_lpdf(expr, &alpha).eval()?.to_vec()?[0];
    assert_value("dirichlet_lpdf, expression", got, want, scale);
    // α = 1 at θ = 0: the term is 0 · log 0 = 0.
    let edge = MatrixCl::from_slice(2, 1, &[0.0, 1.0])?;
    let got = dist::dirichlet_lpdf(&edge, &MatrixCl::from_slice(2, 1, &[1.0, 1.0])?)
        .eval()?
        .to_vec()?[0];
    assert_eq!(got, 0.0);
    Ok(())
}

#[test]
fn dirichlet_checks() -> Result<()> {
    let theta = Var::new(MatrixCl::from_slice(3, 2, &[0.2, 0.3, 0.5, 0.6, 0.1, 0.3])?);
    let before = rev::steps_recorded();
    let alpha = Var::new(MatrixCl::from_slice(3, 1, &[1.0, 0.0, 2.0])?);
    assert_eq!(
        message(dist::dirichlet_lpdf(&theta, &alpha).eval()),
        "dirichlet_lpdf: alpha[1, 0] is 0, but must be positive and finite"
    );
    assert_eq!(
        message(dist::dirichlet_lpdf(&theta, f64::INFINITY).eval()),
        "dirichlet_lpdf: alpha[0, 0] is inf, but must be positive and finite"
    );
    let alpha = Var::new(MatrixCl::from_slice(3, 1, &[1.0, 1.5, 2.0])?);
    let negative = Var::new(MatrixCl::from_slice(
        3,
        2,
        &[0.2, 0.3, 0.5, 1.1, -0.1, 0.0],
    )?);
    assert_eq!(
        message(dist::dirichlet_lpdf(&negative, &alpha).eval()),
        "dirichlet_lpdf: theta[1, 1] is -0.1, but must be non-negative"
    );
    let unnormalised = Var::new(MatrixCl::from_slice(3, 2, &[0.2, 0.3, 0.5, 0.6, 0.1, 0.4])?);
    assert_eq!(
        message(dist::dirichlet_lpdf(&unnormalised, &alpha).eval()),
        "dirichlet_lpdf: sum(theta)[0, 1] is 1.1, but must be 1 (within 1e-8): \
         each column of `theta` a simplex"
    );
    assert_eq!(
        rev::steps_recorded(),
        before,
        "a failed check records nothing"
    );
    assert_eq!(
        message(dist::dirichlet_lpdf(0.5, 1.0).eval()),
        "dirichlet_lpdf: sum(theta)[0, 0] is 0.5, but must be 1 (within 1e-8): \
         each column of `theta` a simplex"
    );
    // Within the tolerance: accepted.
    let close = MatrixCl::from_slice(2, 1, &[0.5, 0.5 + 5e-9])?;
    dist::dirichlet_lpdf(&close, 2.0).eval()?;
    let wrong = MatrixCl::from_slice(2, 1, &[1.0, 1.0])?;
    assert_eq!(
        message(dist::dirichlet_lpdf(&theta, &wrong).eval()),
        "dirichlet_lpdf: argument `alpha` is invalid: must be 3 x 1 or 3 x 2, is 2 x 1"
    );
    let empty = MatrixCl::<f64>::zeros(0, 2)?;
    assert_eq!(
        message(dist::dirichlet_lpdf(&empty, 1.0).eval()),
        "dirichlet_lpdf: argument `theta` is invalid: must have at least one row (category)"
    );
    rev::clear()
}

/// A well-conditioned lower-triangular `K x K` factor (column-major).
fn cholesky_factor(k: usize, rng: &mut Rng) -> Vec<f64> {
    let mut l = vec![0.0; k * k];
    for j in 0..k {
        for i in j..k {
            l[i + k * j] = if i == j {
                1.5 + 0.5 * rng.next()
            } else {
                0.5 * rng.next() / (k as f64).sqrt()
            };
        }
    }
    l
}

/// The multivariate normal's log density over the columns of `y`
/// (`K x N`), `mu` with `k` or `k·n` elements, `l` `K x K` lower (its upper
/// triangle not read), by forward substitution.
fn multi_normal(y: &[f64], mu: &[f64], l: &[f64], k: usize) -> (f64, f64) {
    let n = y.len() / k;
    let log_det: f64 = (0..k).map(|i| l[i + k * i].ln()).sum();
    let constant = 0.5 * (2.0 * std::f64::consts::PI).ln();
    let (mut total, mut scale) = (0.0, 0.0);
    for j in 0..n {
        let mut z = vec![0.0; k];
        let mut quad = 0.0;
        for i in 0..k {
            let m = if mu.len() == k { mu[i] } else { mu[i + k * j] };
            let mut r = y[i + k * j] - m;
            for (c, zc) in z.iter().enumerate().take(i) {
                r -= l[i + k * c] * zc;
            }
            z[i] = r / l[i + k * i];
            quad += z[i] * z[i];
        }
        let lp = -(k as f64) * constant - log_det - 0.5 * quad;
        total += lp;
        scale += (k as f64) * constant + log_det.abs() + 0.5 * quad;
    }
    (total, scale)
}

#[test]
fn multi_normal_cholesky_values_and_gradients() -> Result<()> {
    let mut rng = Rng::new(11);
    for (k, n) in shapes() {
        let y_v: Vec<f64> = (0..k * n).map(|_| 2.0 * rng.next()).collect();
        let l_v = cholesky_factor(k, &mut rng);
        for mu_cols in [1, n] {
            let mu_v: Vec<f64> = (0..k * mu_cols).map(|_| rng.next()).collect();
            let y = Var::new(MatrixCl::from_slice(k, n, &y_v)?);
            let mu = Var::new(MatrixCl::from_slice(k, mu_cols, &mu_v)?);
            let l = Var::new(MatrixCl::from_slice(k, k, &l_v)?);
            let what = format!("multi_normal_cholesky_lpdf (K = {k}, N = {n}, mu {k} x {mu_cols})");
            let lp = dist::multi_normal_cholesky_lpdf(&y, &mu, &l).eval()?;
            let (want, scale) = multi_normal(&y_v, &mu_v, &l_v, k);
            assert_value(&what, lp.value().to_vec()?[0], want, scale);
            lp.grad()?;
            // y's gradient is per column: the differences of its column alone.
            let fd_y: Vec<f64> = (0..k * n)
                .map(|e| {
                    let j = e / k;
                    let col = &y_v[k * j..k * (j + 1)];
                    let m: Vec<f64> = if mu_cols == 1 {
                        mu_v.clone()
                    } else {
                        mu_v[k * j..k * (j + 1)].to_vec()
                    };
                    derivative(|c| multi_normal(c, &m, &l_v, k).0, col, e % k)
                })
                .collect();
            assert_gradient(&format!("{what}, y"), &y.adjoint().to_vec()?, &fd_y);
            let fd_mu = if mu_cols == 1 {
                gradient(|m| multi_normal(&y_v, m, &l_v, k).0, &mu_v)
            } else {
                // Each column's mean is the negative of its observation's.
                fd_y.iter().map(|g| -g).collect()
            };
            assert_gradient(&format!("{what}, mu"), &mu.adjoint().to_vec()?, &fd_mu);
            // L's gradient: its lower triangle (the upper is not read: zero).
            let fd_l = gradient(|l| multi_normal(&y_v, &mu_v, l, k).0, &l_v);
            assert_gradient(&format!("{what}, L"), &l.adjoint().to_vec()?, &fd_l);
            rev::clear()?;
            // Constants: a matrix.
            let (ym, mm, lm) = (
                MatrixCl::from_slice(k, n, &y_v)?,
                MatrixCl::from_slice(k, mu_cols, &mu_v)?,
                MatrixCl::from_slice(k, k, &l_v)?,
            );
            let got = dist::multi_normal_cholesky_lpdf(&ym, &mm, &lm)
                .eval()?
                .to_vec()?[0];
            assert_value(&format!("{what}, matrices"), got, want, scale);
        }
    }
    Ok(())
}

#[test]
fn multi_normal_cholesky_forms() -> Result<()> {
    let mut rng = Rng::new(5);
    let (k, n) = (3, 4);
    let y_v: Vec<f64> = (0..k * n).map(|_| rng.next()).collect();
    let l_v = cholesky_factor(k, &mut rng);
    let (want, scale) = multi_normal(&y_v, &[0.25; 3], &l_v, k);
    let y = MatrixCl::from_slice(k, n, &y_v)?;
    // Only L a variable; mu a number; the upper triangle of L ignored.
    let mut l_full = l_v.clone();
    l_full[k] = 123.0; // L[0, 1]
    let l = Var::new(MatrixCl::from_slice(k, k, &l_full)?);
    let lp = dist::multi_normal_cholesky_lpdf(&y, 0.25, &l).eval()?;
    assert_value("L variable", lp.value().to_vec()?[0], want, scale);
    lp.grad()?;
    let g = l.adjoint().to_vec()?;
    assert_eq!(g[k], 0.0, "the upper triangle has no gradient");
    let fd = gradient(|l| multi_normal(&y_v, &[0.25; 3], l, k).0, &l_v);
    assert_gradient("L variable, L", &g, &fd);
    rev::clear()?;
    // Only y a variable, L a matrix.
    let yv = Var::new(MatrixCl::from_slice(k, n, &y_v)?);
    let lm = MatrixCl::from_slice(k, k, &l_v)?;
    let lp = dist::multi_normal_cholesky_lpdf(&yv, 0.25, &lm).eval()?;
    assert_value("y variable", lp.value().to_vec()?[0], want, scale);
    rev::clear()?;
    // An expression for y, and one for L.
    let got = dist::multi_normal_cholesky_lpdf(&y * 1.0, 0.25, &lm * 1.0)
        .eval()?
        .to_vec()?[0];
    assert_value("expressions", got, want, scale);
    // No observation: no term.
    let none = MatrixCl::<f64>::zeros(k, 0)?;
    let lp = dist::multi_normal_cholesky_lpdf(&none, 0.0, &l).eval()?;
    assert_eq!(lp.value().to_vec()?, vec![0.0]);
    rev::clear()
}

#[test]
fn multi_normal_cholesky_checks() -> Result<()> {
    let f = "multi_normal_cholesky_lpdf";
    let mut y_v = vec![0.5; 6];
    let l = Var::new(MatrixCl::from_slice(
        3,
        3,
        &[1.0, 0.1, 0.2, 0.0, 1.0, 0.3, 0.0, 0.0, 1.0],
    )?);
    let mu = Var::new(MatrixCl::from_slice(3, 1, &[0.0; 3])?);
    let before = rev::steps_recorded();
    y_v[4] = f64::NAN;
    let y = Var::new(MatrixCl::from_slice(3, 2, &y_v)?);
    assert_eq!(
        message(dist::multi_normal_cholesky_lpdf(&y, &mu, &l).eval()),
        format!("{f}: y[1, 1] is NaN, but must be not NaN")
    );
    let y = Var::new(MatrixCl::from_slice(3, 2, &[0.5; 6])?);
    let bad_mu = Var::new(MatrixCl::from_slice(3, 1, &[0.0, f64::NEG_INFINITY, 0.0])?);
    assert_eq!(
        message(dist::multi_normal_cholesky_lpdf(&y, &bad_mu, &l).eval()),
        format!("{f}: mu[1, 0] is -inf, but must be finite")
    );
    let mu_matrix = Var::new(MatrixCl::from_slice(
        3,
        2,
        &[0.0, 0.0, 0.0, 0.0, 0.0, f64::NAN],
    )?);
    assert_eq!(
        message(dist::multi_normal_cholesky_lpdf(&y, &mu_matrix, &l).eval()),
        format!("{f}: mu[2, 1] is NaN, but must be finite")
    );
    assert_eq!(
        message(dist::multi_normal_cholesky_lpdf(&y, f64::NAN, &l).eval()),
        format!("{f}: mu[0, 0] is NaN, but must be finite")
    );
    let wide = Var::new(MatrixCl::from_slice(3, 2, &[1.0; 6])?);
    assert_eq!(
        message(dist::multi_normal_cholesky_lpdf(&y, &mu, &wide).eval()),
        format!("{f}: argument `L` is invalid: must be 3 x 3 for y with 3 rows, is 3 x 2")
    );
    let short_mu = MatrixCl::from_slice(2, 1, &[0.0; 2])?;
    assert_eq!(
        message(dist::multi_normal_cholesky_lpdf(&y, &short_mu, &l).eval()),
        format!("{f}: argument `mu` is invalid: must be 3 x 1 or 3 x 2, is 2 x 1")
    );
    assert_eq!(
        rev::steps_recorded(),
        before,
        "a failed check records nothing"
    );
    rev::clear()
}
