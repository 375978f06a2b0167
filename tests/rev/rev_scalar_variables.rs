//! Steps reading many `1 x 1` variables (hyper-parameters written as
//! variables of their own): one reverse kernel reduces all their adjoints
//! through one work-group tree, so its compile time does not grow steeply
//! with their number (PoCL took minutes for four trees).

use clfuse::Result;
use clfuse::prelude::*;
use clfuse::rev::{self, Var};

/// `lp = Σ_i log1p_exp(Σ_k s_k x_ki)` with twelve `1 x 1` variables `s_k`:
/// value and every gradient against a CPU loop, at a size that is not a
/// multiple of the work-group size.
#[test]
fn twelve_one_by_one_variables_in_one_step() -> Result<()> {
    const K: usize = 12;
    let n = 333;
    let data: Vec<Vec<f64>> = (0..K)
        .map(|k| {
            (0..n)
                .map(|i| ((i * (k + 3)) % 17) as f64 / 17.0 - 0.4)
                .collect()
        })
        .collect();
    let xs: Vec<MatrixCl<f64>> = data
        .iter()
        .map(|d| MatrixCl::from_slice(n, 1, d))
        .collect::<Result<_>>()?;
    let coefficients: Vec<f64> = (0..K).map(|k| 0.3 - 0.05 * k as f64).collect();
    let s: Vec<Var> = coefficients
        .iter()
        .map(|&c| Ok(Var::new(MatrixCl::from_slice(1, 1, &[c])?)))
        .collect::<Result<_>>()?;
    let term = |k: usize| elt_multiply(optional_broadcast(&s[k], n, 1), &xs[k]);
    let eta = term(0)
        + term(1)
        + term(2)
        + term(3)
        + term(4)
        + term(5)
        + term(6)
        + term(7)
        + term(8)
        + term(9)
        + term(10)
        + term(11);
    rev::clear()?;
    let lp = colwise_sum(log1p_exp(eta)).eval()?;
    lp.grad()?;

    let etas: Vec<f64> = (0..n)
        .map(|i| (0..K).map(|k| coefficients[k] * data[k][i]).sum())
        .collect();
    let want: f64 = etas.iter().map(|e| e.exp().ln_1p()).sum();
    let got = lp.value().to_vec()?[0];
    assert!(
        (got - want).abs() <= 1e-11 * want.abs(),
        "lp {got} vs {want}"
    );
    for k in 0..K {
        let want: f64 = (0..n).map(|i| data[k][i] / (1.0 + (-etas[i]).exp())).sum();
        let got = s[k].adjoint().to_vec()?[0];
        assert!(
            (got - want).abs() <= 1e-11 * want.abs().max(1.0),
            "d lp / d s{k}: {got} vs {want}"
        );
    }
    rev::clear()?;
    rev::set_zero_all_adjoints()
}
