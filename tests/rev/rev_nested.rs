//! Nested steps (row-wise sums, matrix-vector and matrix products, leaves)
//! and the kernel counts of a step.
use clfuse::Result;
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use common::values;

use crate::common;

fn close(name: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{name}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1.0),
            "{name}[{k}]: {g} vs {w}"
        );
    }
}

/// Logistic regression log likelihood: sum(y .* log_inv_logit(xβ + α) + (1-y) .* log1m_inv_logit(xβ + α)).
#[test]
fn logistic_regression_through_a_matrix_vector_product() -> Result<()> {
    for (n, p) in [(1, 1), (33, 3), (1000, 7)] {
        let xs = values(n * p, 0.5);
        let ys: Vec<f64> = (0..n).map(|k| ((k * 7) % 3 == 0) as i32 as f64).collect();
        let bs = values(p, 1.5);
        let x = MatrixCl::from_slice(n, p, &xs)?;
        let y = MatrixCl::from_slice(n, 1, &ys)?;
        let beta = Var::new(MatrixCl::from_slice(p, 1, &bs)?);
        let alpha = Var::new(MatrixCl::from_slice(1, 1, &[0.25])?);
        let eta = matrix_vector_multiply(&x, &beta) + optional_broadcast(&alpha, n, 1);
        let eta = &eta;
        let lp = colwise_sum(
            elt_multiply(&y, log_inv_logit(eta)) + elt_multiply(1.0f64 - &y, log1m_inv_logit(eta)),
        )
        .eval()?;
        lp.grad()?;
        // CPU reference.
        let mut d_beta = vec![0.0; p];
        let (mut d_alpha, mut value) = (0.0, 0.0);
        for i in 0..n {
            let e: f64 = (0..p).map(|k| xs[i + n * k] * bs[k]).sum::<f64>() + 0.25;
            let s = 1.0 / (1.0 + (-e).exp());
            value += ys[i] * s.ln() + (1.0 - ys[i]) * (1.0 - s).ln();
            let r = ys[i] - s;
            d_alpha += r;
            for k in 0..p {
                d_beta[k] += r * xs[i + n * k];
            }
        }
        close("value", &lp.value().to_vec()?, &[value], 1e-10);
        close("d_beta", &beta.adjoint().to_vec()?, &d_beta, 1e-10);
        close("d_alpha", &alpha.adjoint().to_vec()?, &[d_alpha], 1e-10);
        rev::clear()?;
    }
    Ok(())
}

#[test]
fn a_rowwise_log_sum_exp_is_two_steps_not_quadratic() -> Result<()> {
    let (n, k) = (33, 5);
    let zs = values(n * k, 2.5);
    let z = Var::new(MatrixCl::from_slice(n, k, &zs)?);
    // sum_i log(sum_j exp(z_ij)): the inner row sum is its own step.
    let steps_before = rev::steps_recorded();
    let lse = log(rowwise_sum(exp(&z)));
    let total = colwise_sum(lse).eval()?;
    assert_eq!(
        rev::steps_recorded() - steps_before,
        3,
        "exp, row sums, log + sum"
    );
    total.grad()?;
    let mut want = vec![0.0; n * k];
    for i in 0..n {
        let s: f64 = (0..k).map(|j| zs[i + n * j].exp()).sum();
        for j in 0..k {
            want[i + n * j] = zs[i + n * j].exp() / s;
        }
    }
    close("softmax", &z.adjoint().to_vec()?, &want, 1e-12);
    rev::clear()
}

#[test]
fn transpose_vector_products_of_variables() -> Result<()> {
    for (n, p) in [(0, 2), (1, 1), (33, 3), (257, 5)] {
        let xs = values(n * p, 6.5);
        let vs = values(n, 7.5);
        let ws = values(p, 8.5);
        let x = Var::new(MatrixCl::from_slice(n, p, &xs)?);
        let v = Var::new(MatrixCl::from_slice(n, 1, &vs)?);
        let w = MatrixCl::from_slice(p, 1, &ws)?;
        // f = wᵀ (xᵀ tanh(v)): adj(x)_ij = tanh(v_i) w_j, adj(v)_i = (x w)_i (1 - tanh²(v_i)).
        let product = transpose_vector_multiply(&x, tanh(&v)).eval()?;
        let total = colwise_sum(elt_multiply(&product, &w)).eval()?;
        total.grad()?;
        let mut dx = vec![0.0; n * p];
        let mut dv = vec![0.0; n];
        let mut value = 0.0;
        for i in 0..n {
            let t = vs[i].tanh();
            for j in 0..p {
                value += xs[i + n * j] * t * ws[j];
                dx[i + n * j] = t * ws[j];
                dv[i] += xs[i + n * j] * ws[j] * (1.0 - t * t);
            }
        }
        close("value", &total.value().to_vec()?, &[value], 1e-12);
        close("adj(x)", &x.adjoint().to_vec()?, &dx, 1e-12);
        close("adj(v)", &v.adjoint().to_vec()?, &dv, 1e-12);
        // A constant x: only v gets an adjoint.
        rev::set_zero_all_adjoints()?;
        let constant = MatrixCl::from_slice(n, p, &xs)?;
        let product = transpose_vector_multiply(&constant, tanh(&v)).eval()?;
        colwise_sum(elt_multiply(&product, &w)).eval()?.grad()?;
        close("adj(v), x constant", &v.adjoint().to_vec()?, &dv, 1e-12);
        rev::clear()?;
    }
    Ok(())
}

#[test]
fn matrix_products_of_variables_use_the_gemm_adjoints() -> Result<()> {
    for (m, k, n) in [(1, 1, 1), (5, 3, 4), (33, 31, 2)] {
        let avals = values(m * k, 3.5);
        let bvals = values(k * n, 4.5);
        let a = Var::new(MatrixCl::from_slice(m, k, &avals)?);
        let b = Var::new(MatrixCl::from_slice(k, n, &bvals)?);
        let c_const = MatrixCl::from_slice(m, n, &values(m * n, 5.5))?;
        // f = sum((a b) .* c): adj(a) = c bᵀ, adj(b) = aᵀ c.
        let inner = colwise_sum(elt_multiply(&a * &b, &c_const)).eval()?;
        let total = colwise_sum(transpose(&inner)).eval()?;
        total.grad()?;
        let cv = c_const.to_vec()?;
        let mut da = vec![0.0; m * k];
        let mut db = vec![0.0; k * n];
        for i in 0..m {
            for j in 0..n {
                for l in 0..k {
                    da[i + m * l] += cv[i + m * j] * bvals[l + k * j];
                    db[l + k * j] += avals[i + m * l] * cv[i + m * j];
                }
            }
        }
        close("adj(a)", &a.adjoint().to_vec()?, &da, 1e-12);
        close("adj(b)", &b.adjoint().to_vec()?, &db, 1e-12);
        // Against the existing adjoint kernel too.
        let ones = MatrixCl::from_slice(m, n, &cv)?;
        let reference = clfuse::linalg::multiply_adjoint(a.value(), b.value(), &ones)?;
        close(
            "adj(a) vs kernel",
            &a.adjoint().to_vec()?,
            &reference.adj_a.to_vec()?,
            1e-12,
        );
        close(
            "adj(b) vs kernel",
            &b.adjoint().to_vec()?,
            &reference.adj_b.to_vec()?,
            1e-12,
        );
        rev::clear()?;
    }
    Ok(())
}

#[test]
fn one_step_adjoint_is_one_launch_and_reevaluating_compiles_nothing() -> Result<()> {
    let n = 101;
    let x = Var::new(MatrixCl::from_slice(n, 1, &values(n, 6.5))?);
    let w = Var::new(MatrixCl::from_slice(n, 1, &values(n, 7.5))?);
    let model = || colwise_sum(log1p_exp(elt_multiply(&x, &w)) + elt_multiply(&x, &x)).eval();
    // Warm up: compile forward, reverse and the seed. Zeroed adjoints are
    // written rather than added to (a kernel of their own), as in every
    // sampler call.
    model()?.grad()?;
    rev::clear()?;
    rev::set_zero_all_adjoints()?;
    let before = thread_kernel_stats();
    let lp = model()?;
    let forward = thread_kernel_stats() - before;
    assert_eq!(forward.built(), 0, "a second evaluation compiles nothing");
    let before = thread_kernel_stats();
    lp.grad()?;
    let reverse = thread_kernel_stats() - before;
    assert_eq!(reverse.built(), 0);
    assert_eq!(
        reverse.launched, 1,
        "one adjoint kernel for the step: {reverse:?}"
    );
    rev::clear()
}

/// `Σ w ⊙ reduce(x)` for the row- and column-wise maxima, minima and
/// products of variables, against central differences (distinct values,
/// no zeros: the reductions are smooth there), at 1 x 1 and odd shapes.
#[test]
fn row_and_column_extrema_and_products_of_variables() -> Result<()> {
    for (rows, cols) in [(1, 1), (5, 7), (33, 3)] {
        let xs: Vec<f64> = values(rows * cols, 1.5)
            .iter()
            .enumerate()
            .map(|(k, v)| v + 0.001 * k as f64)
            .collect();
        let x = Var::new(MatrixCl::from_slice(rows, cols, &xs)?);
        type Reduce = fn(&Var) -> Result<Var>;
        let cases: [(&str, Reduce); 6] = [
            ("rowwise_max", |x| colwise_sum(rowwise_max(exp(x))).eval()),
            ("rowwise_min", |x| colwise_sum(rowwise_min(x) * 3.0).eval()),
            ("rowwise_prod", |x| {
                colwise_sum(rowwise_prod(x + 2.0)).eval()
            }),
            ("colwise_max", |x| {
                rowwise_sum(colwise_max(x).eval()?).eval()
            }),
            ("colwise_min", |x| {
                rowwise_sum(square(&colwise_min(x).eval()?)).eval()
            }),
            ("colwise_prod", |x| {
                rowwise_sum(colwise_prod(x).eval()?).eval()
            }),
        ];
        for (name, f) in cases {
            let (_, grads) = rev::value_and_grad(&[&x], || f(&x))?;
            let got = grads[0].to_vec()?;
            for k in 0..xs.len() {
                let h = 1e-6 * xs[k].abs().max(1.0);
                let at = |d: f64| -> Result<f64> {
                    let mut shifted = xs.clone();
                    shifted[k] += d;
                    let moved = Var::new(MatrixCl::from_slice(rows, cols, &shifted)?);
                    let v = f(&moved)?.value().to_vec()?[0];
                    rev::clear()?;
                    Ok(v)
                };
                let fd = (at(h)? - at(-h)?) / (2.0 * h);
                close(
                    &format!("{name} {rows}x{cols} [{k}]"),
                    &got[k..=k],
                    &[fd],
                    1e-6,
                );
            }
        }
    }
    Ok(())
}

/// Ties share a maximum's adjoint equally; a product's adjoint at a row's
/// only zero is the product of the others, and 0 in a row with two zeros.
#[test]
fn ties_and_zeros() -> Result<()> {
    // Rows [2, 2, 1], [0, 3, 2] and [0, 0, 5] (column-major).
    let x = Var::new(MatrixCl::from_slice(
        3,
        3,
        &[2.0, 0.0, 0.0, 2.0, 3.0, 0.0, 1.0, 2.0, 5.0],
    )?);
    let (_, grads) = rev::value_and_grad(&[&x], || colwise_sum(rowwise_max(&x)).eval())?;
    let g = grads[0].to_vec()?;
    close("max, row 0", &[g[0], g[3], g[6]], &[0.5, 0.5, 0.0], 0.0);
    let (_, grads) = rev::value_and_grad(&[&x], || colwise_sum(rowwise_prod(&x)).eval())?;
    let g = grads[0].to_vec()?;
    close("prod, row 0", &[g[0], g[3], g[6]], &[2.0, 2.0, 4.0], 0.0);
    close("prod, row 1", &[g[1], g[4], g[7]], &[6.0, 0.0, 0.0], 0.0);
    close("prod, row 2", &[g[2], g[5], g[8]], &[0.0, 0.0, 0.0], 0.0);
    rev::clear()
}

/// A constant operand of a product step is kept without a copy: it outlives
/// the caller's handle, and writing it before the reverse pass stops `grad`
/// before any adjoint changes.
#[test]
fn a_product_keeps_its_constant_operand_and_notices_writes() -> Result<()> {
    let (n, p) = (33, 3);
    let xs = values(n * p, 0.25);
    let bs = values(p, 2.5);
    let beta = Var::new(MatrixCl::from_slice(p, 1, &bs)?);
    let expected: Vec<f64> = (0..p)
        .map(|k| (0..n).map(|i| xs[i + n * k]).sum())
        .collect();

    let x = MatrixCl::from_slice(n, p, &xs)?;
    let before = rev::steps_recorded();
    let product = matrix_vector_multiply(&x, &beta).eval()?;
    assert_eq!(
        rev::steps_recorded() - before,
        1,
        "one step: beta is read as it is, not copied by a step of its own"
    );
    let lp = colwise_sum(&product).eval()?;
    drop(x); // the step holds the buffer
    lp.grad()?;
    close("d_beta", &beta.adjoint().to_vec()?, &expected, 1e-12);
    rev::clear()?;
    rev::set_zero_all_adjoints()?;

    // A product evaluated on its own is a step that keeps x (a likelihood
    // would read it inline and never need x again: rev_inline_products.rs).
    let x = MatrixCl::from_slice(n, p, &xs)?;
    let doubled = (matrix_vector_multiply(&x, &beta) * 2.0).eval()?;
    let lp = colwise_sum(&doubled).eval()?;
    x.fill(0.0)?;
    let err = lp
        .grad()
        .expect_err("x was written after the step was recorded");
    assert!(err.to_string().contains("Var::grad"), "{err}");
    assert!(err.to_string().contains("33 x 3"), "{err}");
    assert_eq!(beta.adjoint().to_vec()?, vec![0.0; p], "nothing was added");
    // After clearing the tape, evaluating again reads the new contents.
    rev::clear()?;
    x.write(&xs)?;
    let doubled = (matrix_vector_multiply(&x, &beta) * 2.0).eval()?;
    let lp = colwise_sum(&doubled).eval()?;
    lp.grad()?;
    let twice: Vec<f64> = expected.iter().map(|e| 2.0 * e).collect();
    close("d_beta", &beta.adjoint().to_vec()?, &twice, 1e-12);
    rev::clear()?;
    Ok(())
}

/// A zero adjoint costs no device work until it is read: zeroing marks it,
/// the first kernel covering it whole writes it, a step whose result's
/// adjoint is still zero is skipped, and reading an untouched adjoint gives
/// zeros.
#[test]
fn zero_adjoints_are_written_on_first_use_and_untouched_steps_are_skipped() -> Result<()> {
    let x = Var::new(MatrixCl::from_slice(3, 1, &[1.0, 2.0, 3.0])?);
    let unused = Var::new(MatrixCl::from_slice(2, 1, &[5.0, 6.0])?);
    let _aside = colwise_sum(square(&unused)).eval()?; // not on the way to lp
    let lp = colwise_sum(square(&x)).eval()?;
    lp.grad()?; // compiles
    rev::set_zero_all_adjoints()?;
    let before = thread_kernel_stats();
    lp.grad()?;
    let reverse = thread_kernel_stats() - before;
    assert_eq!(reverse.launched, 1, "lp's step only: {reverse:?}");
    assert_eq!(x.adjoint().to_vec()?, vec![2.0, 4.0, 6.0]);
    assert_eq!(unused.adjoint().to_vec()?, vec![0.0, 0.0]);
    // Without zeroing, a second pass adds to the first.
    lp.grad()?;
    assert_eq!(x.adjoint().to_vec()?, vec![4.0, 8.0, 12.0]);
    rev::set_zero_all_adjoints()?;
    assert_eq!(x.adjoint().to_vec()?, vec![0.0; 3]);
    rev::clear()
}
