//! Generic helpers bounded by `Expression<f64>` compile, compose and give
//! the same values with matrices, expressions and variables (gradients
//! against the analytic derivative).

use clfuse::Result;
use clfuse::prelude::*;
use clfuse::rev::{self, Both, ExprDependence, Var};

fn standardize<D: ExprDependence, E: Expression<f64, D>>(
    e: E,
    mu: f64,
    s: f64,
) -> impl Expression<f64, D> {
    (e - mu) / s
}

/// `e² + e`: uses its argument twice.
fn square_plus<D: ExprDependence, E: Expression<f64, D> + Copy>(e: E) -> impl Expression<f64, D> {
    square(e) + e
}

/// `1 - exp(-e)`: a scalar on the left, through `into_expr`.
fn one_minus_exp_neg<D: ExprDependence, E: Expression<f64, D>>(e: E) -> impl Expression<f64, D> {
    1.0 - exp(-e).into_expr()
}

/// `a * 2 + b`: two generic expressions.
fn twice_plus<
    DA: ExprDependence,
    DB: ExprDependence,
    A: Expression<f64, DA>,
    B: Expression<f64, DB>,
>(
    a: A,
    b: B,
) -> impl Expression<f64, Both<DA, DB>> {
    (a * 2.0).into_expr() + b
}

fn values(n: usize) -> Vec<f64> {
    (0..n).map(|k| ((k * 7) % 11) as f64 * 0.25 - 1.0).collect()
}

fn close(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-10 * w.abs().max(1.0),
            "{what}[{k}]: {g} vs {w}"
        );
    }
}

#[test]
fn helpers_compose_on_matrices() -> Result<()> {
    let (mu, s) = (0.3, 1.7);
    for n in [1, 31, 33, 1000] {
        let x = values(n);
        let y: Vec<f64> = x.iter().map(|v| v * 0.5 + 2.0).collect();
        let (xm, ym) = (
            MatrixCl::from_slice(n, 1, &x)?,
            MatrixCl::from_slice(n, 1, &y)?,
        );
        let z = |v: f64| (v - mu) / s;
        // A helper's result into another helper, a function and a reduction.
        let got = square_plus(&standardize(&xm, mu, s).into_expr())
            .eval()?
            .to_vec()?;
        let want: Vec<f64> = x.iter().map(|&v| z(v) * z(v) + z(v)).collect();
        close("square_plus(standardize)", &got, &want);
        let got = one_minus_exp_neg(standardize(&xm, mu, s))
            .eval()?
            .to_vec()?;
        let want: Vec<f64> = x.iter().map(|&v| 1.0 - (-z(v)).exp()).collect();
        close("one_minus_exp_neg(standardize)", &got, &want);
        let got = colwise_sum(exp(twice_plus(standardize(&xm, mu, s), &ym)))
            .eval()?
            .to_vec()?;
        let want: f64 = x
            .iter()
            .zip(&y)
            .map(|(&a, &b)| (2.0 * z(a) + b).exp())
            .sum();
        close("colwise_sum(exp(twice_plus))", &got, &[want]);
        // A leaf evaluates to a copy; helpers of helpers of helpers.
        close("leaf", &(&xm).eval()?.to_vec()?, &x);
        let got = standardize(standardize(standardize(&xm, 0.0, 2.0), 1.0, 1.0), -1.0, 0.5)
            .eval()?
            .to_vec()?;
        let want: Vec<f64> = x.iter().map(|&v| ((v / 2.0 - 1.0) + 1.0) / 0.5).collect();
        close("nested standardize", &got, &want);
    }
    Ok(())
}

#[test]
fn helpers_differentiate_on_variables() -> Result<()> {
    let (mu, s) = (0.3, 1.7);
    for n in [1, 31, 33, 1000] {
        let x = values(n);
        let y: Vec<f64> = x.iter().map(|v| v * 0.5 + 2.0).collect();
        let v = Var::new(MatrixCl::from_slice(n, 1, &x)?);
        let ym = MatrixCl::from_slice(n, 1, &y)?;
        let z = |a: f64| (a - mu) / s;
        // lp = Σ (z² + z) + Σ exp(2 z + y), z = (v - mu) / s:
        // d lp / dv = (2 z + 1) / s + 2 exp(2 z + y) / s.
        let first = colwise_sum(square_plus(&standardize(&v, mu, s).into_expr())).eval()?;
        let second = colwise_sum(exp(twice_plus(standardize(&v, mu, s), &ym))).eval()?;
        let lp = (&first + &second).eval()?;
        let want_lp: f64 = x
            .iter()
            .zip(&y)
            .map(|(&a, &b)| z(a) * z(a) + z(a) + (2.0 * z(a) + b).exp())
            .sum();
        close("lp", &lp.value().to_vec()?, &[want_lp]);
        lp.grad()?;
        let want: Vec<f64> = x
            .iter()
            .zip(&y)
            .map(|(&a, &b)| (2.0 * z(a) + 1.0) / s + 2.0 * (2.0 * z(a) + b).exp() / s)
            .collect();
        close("d lp / dv", &v.adjoint().to_vec()?, &want);
        rev::clear()?;
    }
    Ok(())
}
