//! Reverse mode: the issue's example, and the first checks.
use clfuse::Result;
use clfuse::prelude::*;
use clfuse::rev::{self, Var};

#[test]
fn the_issue_example_compiles_and_matches_calculus() -> Result<()> {
    let n = 33;
    let xs: Vec<f64> = (0..n).map(|k| (k as f64 * 0.37).sin()).collect();
    let ws: Vec<f64> = (0..n).map(|k| (k as f64 * 0.11).cos() - 0.3).collect();
    let x = Var::new(MatrixCl::from_slice(n, 1, &xs)?);
    let w = Var::new(MatrixCl::from_slice(n, 1, &ws)?);
    let lp = colwise_sum(log1p_exp(elt_multiply(&x, &w)) + elt_multiply(&x, &x)).eval()?;
    lp.grad()?;
    let (gx, gw) = (x.adjoint().to_vec()?, w.adjoint().to_vec()?);
    let value = lp.value().to_vec()?[0];
    let sigmoid = |z: f64| 1.0 / (1.0 + (-z).exp());
    let expected: f64 = xs
        .iter()
        .zip(&ws)
        .map(|(x, w)| (1.0 + (x * w).exp()).ln() + x * x)
        .sum();
    assert!((value - expected).abs() < 1e-12 * expected.abs().max(1.0));
    for k in 0..n {
        let s = sigmoid(xs[k] * ws[k]);
        assert!((gx[k] - (s * ws[k] + 2.0 * xs[k])).abs() < 1e-12, "gx[{k}]");
        assert!((gw[k] - s * xs[k]).abs() < 1e-12, "gw[{k}]");
    }
    rev::clear()?;
    Ok(())
}
