//! The forms issue 34 pins: a location that is a matrix expression of
//! variables, `1 x 1` variables and matrices mixed, results composed with
//! `+`, counts with an `f64` rate.

use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use clfuse::{Result, dist};
use statrs::distribution::{Continuous, Discrete, Normal, Poisson, StudentsT};

#[test]
fn composed_model() -> Result<()> {
    let (n, p) = (40, 3);
    let xs: Vec<f64> = (0..n * p).map(|k| (k as f64 * 0.37).sin()).collect();
    let ys: Vec<f64> = (0..n).map(|i| (i as f64 * 0.21).cos()).collect();
    let x = MatrixCl::from_slice(n, p, &xs)?;
    let y = MatrixCl::from_slice(n, 1, &ys)?;
    let b = [0.3, -0.2, 0.5];
    let beta = Var::new(MatrixCl::from_slice(p, 1, &b)?);
    let sigma = Var::new(MatrixCl::from_slice(1, 1, &[1.3])?);
    let nu = Var::new(MatrixCl::from_slice(1, 1, &[4.0])?);
    let mu = MatrixCl::from_slice(n, 1, &vec![0.1; n])?;
    let s = MatrixCl::from_slice(n, 1, &vec![0.8; n])?;

    let l1: Var = dist::normal_lpdf(&y, matrix_vector_multiply(&x, &beta) + 0.25, &sigma).eval()?;
    let l2: Var = dist::student_t_lpdf(&y, &nu, &mu, &s).eval()?;
    let lp: Var = (&l1 + &l2).eval()?;
    lp.grad()?;

    // CPU: value and gradient (by finite differences in β, σ, ν).
    let eta = |b: &[f64], i: usize| (0..p).map(|j| xs[i + j * n] * b[j]).sum::<f64>() + 0.25;
    let total = |b: &[f64], sigma: f64, nu: f64| -> f64 {
        (0..n)
            .map(|i| {
                Normal::new(eta(b, i), sigma).unwrap().ln_pdf(ys[i])
                    + StudentsT::new(0.1, 0.8, nu).unwrap().ln_pdf(ys[i])
            })
            .sum()
    };
    let want = total(&b, 1.3, 4.0);
    let got = lp.value().to_vec()?[0];
    assert!((got - want).abs() < 1e-10 * want.abs(), "{got} vs {want}");
    let h = 1e-5;
    let fd = |f: &dyn Fn(f64) -> f64| (f(h) - f(-h)) / (2.0 * h);
    for j in 0..p {
        let want = fd(&|d| {
            let mut bb = b;
            bb[j] += d;
            total(&bb, 1.3, 4.0)
        });
        let got = beta.adjoint().to_vec()?[j];
        assert!(
            (got - want).abs() < 1e-6 * want.abs().max(1.0),
            "beta[{j}]: {got} vs {want}"
        );
    }
    let want = fd(&|d| total(&b, 1.3 + d, 4.0));
    let got = sigma.adjoint().to_vec()?[0];
    assert!(
        (got - want).abs() < 1e-6 * want.abs().max(1.0),
        "sigma: {got} vs {want}"
    );
    let want = fd(&|d| total(&b, 1.3, 4.0 + d));
    let got = nu.adjoint().to_vec()?[0];
    assert!(
        (got - want).abs() < 1e-6 * want.abs().max(1.0),
        "nu: {got} vs {want}"
    );

    // A constant expression argument evaluates to a matrix.
    let shifted: MatrixCl<f64> = dist::normal_lpdf(&y, &mu * 2.0, 1.0).eval()?;
    let want: f64 = ys
        .iter()
        .map(|&v| Normal::new(0.2, 1.0).unwrap().ln_pdf(v))
        .sum();
    assert!((shifted.to_vec()?[0] - want).abs() < 1e-10 * want.abs());

    let counts = MatrixCl::from_slice(3, 1, &[0, 2, 5])?;
    let v: f64 = dist::poisson_lpmf(&counts, 1.5).eval()?.to_vec()?[0];
    let want: f64 = [0, 2, 5]
        .iter()
        .map(|&k| Poisson::new(1.5).unwrap().ln_pmf(k))
        .sum();
    assert!((v - want).abs() < 1e-12);
    rev::clear()
}

/// The README's model, as written there: a robust regression with priors.
#[test]
fn readme_model() -> Result<()> {
    use statrs::distribution::{Exp, Gamma};
    let (n, p) = (33, 2);
    let xs: Vec<f64> = (0..n * p).map(|k| (k as f64 * 0.41).cos()).collect();
    let ys: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).sin() * 2.0).collect();
    let x = MatrixCl::from_slice(n, p, &xs)?;
    let y = MatrixCl::from_slice(n, 1, &ys)?;
    let b = [0.4, -0.7];
    let beta = Var::new(MatrixCl::from_slice(p, 1, &b)?);
    let alpha = Var::new(MatrixCl::from_slice(1, 1, &[0.2])?);
    let sigma = Var::new(MatrixCl::from_slice(1, 1, &[1.1])?);
    let nu = Var::new(MatrixCl::from_slice(1, 1, &[5.0])?);

    let n = x.rows();
    let location = matrix_vector_multiply(&x, &beta) + optional_broadcast(&alpha, n, 1);
    let lp: Var = (dist::student_t_lpdf(&y, &nu, location, &sigma).eval()?
        + dist::normal_lpdf(&beta, 0.0, 2.0).eval()?
        + dist::exponential_lpdf(&sigma, 1.0).eval()?
        + dist::gamma_lpdf(&nu, 2.0, 0.1).eval()?)
    .eval()?;
    lp.grad()?;

    let total = |b: &[f64], alpha: f64, sigma: f64, nu: f64| -> f64 {
        let likelihood: f64 = (0..n)
            .map(|i| {
                let eta = (0..p).map(|j| xs[i + j * n] * b[j]).sum::<f64>() + alpha;
                StudentsT::new(eta, sigma, nu).unwrap().ln_pdf(ys[i])
            })
            .sum();
        let prior: f64 = b
            .iter()
            .map(|&v| Normal::new(0.0, 2.0).unwrap().ln_pdf(v))
            .sum();
        likelihood
            + prior
            + Exp::new(1.0).unwrap().ln_pdf(sigma)
            + Gamma::new(2.0, 0.1).unwrap().ln_pdf(nu)
    };
    let want = total(&b, 0.2, 1.1, 5.0);
    let got = lp.value().to_vec()?[0];
    assert!((got - want).abs() < 1e-10 * want.abs(), "{got} vs {want}");
    let h = 1e-5;
    let fd = |f: &dyn Fn(f64) -> f64| (f(h) - f(-h)) / (2.0 * h);
    let close = |got: f64, want: f64| (got - want).abs() < 1e-6 * want.abs().max(1.0);
    for j in 0..p {
        let want = fd(&|d| {
            let mut bb = b;
            bb[j] += d;
            total(&bb, 0.2, 1.1, 5.0)
        });
        assert!(close(beta.adjoint().to_vec()?[j], want), "beta[{j}]");
    }
    assert!(close(
        alpha.adjoint().to_vec()?[0],
        fd(&|d| total(&b, 0.2 + d, 1.1, 5.0))
    ));
    assert!(close(
        sigma.adjoint().to_vec()?[0],
        fd(&|d| total(&b, 0.2, 1.1 + d, 5.0))
    ));
    assert!(close(
        nu.adjoint().to_vec()?[0],
        fd(&|d| total(&b, 0.2, 1.1, 5.0 + d))
    ));
    rev::clear()
}
