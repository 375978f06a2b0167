//! The masses over categories, whose cutpoints or log-odds are a vector of
//! their own (not broadcast against the outcomes).

use crate::support::{assert_gradient, assert_value, derivative, points, sizes};
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use clfuse::{Result, dist};

fn inv_logit(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// `log P(y | η, c)`, from the cumulative probabilities directly.
fn ordered_logistic(y: i32, eta: f64, c: &[f64]) -> f64 {
    let k = c.len() + 1;
    let y = y as usize;
    let upper = if y == 1 {
        1.0
    } else {
        inv_logit(eta - c[y - 2])
    };
    let lower = if y == k {
        0.0
    } else {
        inv_logit(eta - c[y - 1])
    };
    (upper - lower).ln()
}

fn outcomes(n: usize, k: usize) -> Vec<i32> {
    (0..n).map(|i| ((i * 7 + i / 3) % k) as i32 + 1).collect()
}

fn message<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn ordered_logistic_lpmf() -> Result<()> {
    let cuts = [-1.2, 0.1, 0.9];
    for &n in sizes() {
        let ys = outcomes(n, cuts.len() + 1);
        let etas = points(n, -2.0, 2.0, 0.4);
        let y = MatrixCl::from_slice(n, 1, &ys)?;
        let eta = Var::new(MatrixCl::from_slice(n, 1, &etas)?);
        let c = Var::new(MatrixCl::from_slice(cuts.len(), 1, &cuts)?);
        let lp = dist::ordered_logistic_lpmf(&y, &eta, &c).eval()?;
        let total = |etas: &[f64], c: &[f64]| -> (f64, f64) {
            (0..n)
                .map(|i| ordered_logistic(ys[i], etas[i], c))
                .fold((0.0, 0.0), |(s, m), v| (s + v, m + v.abs()))
        };
        let (want, scale) = total(&etas, &cuts);
        let what = format!("ordered_logistic_lpmf (n = {n})");
        assert_value(&what, lp.value().to_vec()?[0], want, scale);
        lp.grad()?;
        let want_eta: Vec<f64> = (0..n)
            .map(|i| derivative(|a| ordered_logistic(ys[i], a[0], &cuts), &[etas[i]], 0))
            .collect();
        assert_gradient(&format!("{what}, eta"), &eta.adjoint().to_vec()?, &want_eta);
        let want_c: Vec<f64> = (0..cuts.len())
            .map(|j| derivative(|c| total(&etas, c).0, &cuts, j))
            .collect();
        assert_gradient(&format!("{what}, c"), &c.adjoint().to_vec()?, &want_c);
        rev::clear()?;
        // η a number, the cutpoints a matrix.
        let cm = MatrixCl::from_slice(cuts.len(), 1, &cuts)?;
        let got = dist::ordered_logistic_lpmf(&y, 0.3, &cm).eval()?.to_vec()?[0];
        let (want, scale) = total(&vec![0.3; n], &cuts);
        assert_value(&format!("{what}, numbers"), got, want, scale);
    }
    // One cutpoint: the Bernoulli-logit mass of y - 1 at η - c.
    let y = MatrixCl::from_slice(2, 1, &[1, 2])?;
    let got = dist::ordered_logistic_lpmf(&y, 0.5, 0.25)
        .eval()?
        .to_vec()?[0];
    let want = (1.0 - inv_logit(0.25)).ln() + inv_logit(0.25).ln();
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    Ok(())
}

#[test]
fn categorical_logit_lpmf() -> Result<()> {
    let betas = [0.3, -1.0, 2.0, 0.0, 0.5];
    let lse = |b: &[f64]| b.iter().map(|v| v.exp()).sum::<f64>().ln();
    for &n in sizes() {
        let ys = outcomes(n, betas.len());
        let y = MatrixCl::from_slice(n, 1, &ys)?;
        let beta = Var::new(MatrixCl::from_slice(betas.len(), 1, &betas)?);
        let lp = dist::categorical_logit_lpmf(&y, &beta).eval()?;
        let total = |b: &[f64]| -> f64 { ys.iter().map(|&k| b[k as usize - 1] - lse(b)).sum() };
        let want = total(&betas);
        let what = format!("categorical_logit_lpmf (n = {n})");
        assert_value(&what, lp.value().to_vec()?[0], want, want.abs());
        lp.grad()?;
        let want: Vec<f64> = (0..betas.len())
            .map(|j| derivative(total, &betas, j))
            .collect();
        assert_gradient(&format!("{what}, beta"), &beta.adjoint().to_vec()?, &want);
        rev::clear()?;
        let bm = MatrixCl::from_slice(betas.len(), 1, &betas)?;
        let got = dist::categorical_logit_lpmf(&y, &bm).eval()?.to_vec()?[0];
        assert_value(
            &format!("{what}, matrix"),
            got,
            total(&betas),
            total(&betas).abs(),
        );
    }
    // One outcome as a number.
    let one = dist::categorical_logit_lpmf(3, &MatrixCl::from_slice(5, 1, &betas)?).eval()?;
    assert!((one.to_vec()?[0] - (betas[2] - lse(&betas))).abs() < 1e-12);
    Ok(())
}

#[test]
fn checks() -> Result<()> {
    let y = MatrixCl::from_slice(3, 1, &[1, 4, 5])?;
    let c = MatrixCl::from_slice(3, 1, &[-1.0, 0.0, 1.0])?;
    assert_eq!(
        message(dist::ordered_logistic_lpmf(&y, 0.0, &c).eval()),
        "ordered_logistic_lpmf: y[2, 0] is 5, but must be in [1, 4]"
    );
    let y = MatrixCl::from_slice(3, 1, &[1, 2, 3])?;
    let unordered = MatrixCl::from_slice(3, 1, &[-1.0, 1.0, 0.5])?;
    assert_eq!(
        message(dist::ordered_logistic_lpmf(&y, 0.0, &unordered).eval()),
        "ordered_logistic_lpmf: c[2, 0] is 0.5, but must be greater than the element before it"
    );
    let empty = MatrixCl::<f64>::zeros(0, 1)?;
    assert_eq!(
        message(dist::ordered_logistic_lpmf(&y, 0.0, &empty).eval()),
        "ordered_logistic_lpmf: argument `c` is invalid: must have at least 1 element(s), has 0"
    );
    let beta = MatrixCl::from_slice(3, 1, &[0.0, f64::NAN, 1.0])?;
    assert_eq!(
        message(dist::categorical_logit_lpmf(&y, &beta).eval()),
        "categorical_logit_lpmf: beta[1, 0] is NaN, but must be finite"
    );
    let y = MatrixCl::from_slice(2, 1, &[0, 1])?;
    assert_eq!(
        message(dist::categorical_logit_lpmf(&y, &c).eval()),
        "categorical_logit_lpmf: y[0, 0] is 0, but must be in [1, 3]"
    );
    Ok(())
}
