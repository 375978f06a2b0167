//! Products read inline by a step with a `1 x 1` result (a likelihood): the
//! forward kernel computes `x · β` and sums `xᵀ·c` itself, so the reverse
//! pass never reads `x`; where that cannot work the product is its own step.
//! Against CPU references (plain loops) at odd sizes.
use clfuse::Result;
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use common::assert_close as close;
use common::reference as host;
use common::values;

use crate::common;

/// `x · β` on the host (`x` column-major, `n x p`).
fn product(xs: &[f64], n: usize, beta: &[f64]) -> Vec<f64> {
    (0..n)
        .map(|i| {
            beta.iter()
                .enumerate()
                .map(|(k, b)| xs[i + n * k] * b)
                .sum()
        })
        .collect()
}

/// `xᵀ · c` on the host (`x` is `n x p`).
fn transpose_product(xs: &[f64], n: usize, p: usize, c: &[f64]) -> Vec<f64> {
    (0..p)
        .map(|k| (0..n).map(|i| xs[i + n * k] * c[i]).sum())
        .collect()
}

/// The Bernoulli-logit log mass and its gradient in `(α, β)`, on the host.
fn bernoulli_reference(
    xs: &[f64],
    n: usize,
    ys: &[i32],
    alpha: f64,
    beta: &[f64],
) -> (f64, f64, Vec<f64>) {
    let eta: Vec<f64> = product(xs, n, beta).iter().map(|e| e + alpha).collect();
    let sign: Vec<f64> = ys.iter().map(|y| 2.0 * *y as f64 - 1.0).collect();
    let value = eta
        .iter()
        .zip(&sign)
        .map(|(e, s)| host::log_inv_logit(s * e))
        .sum();
    let d_eta: Vec<f64> = eta
        .iter()
        .zip(&sign)
        .map(|(e, s)| s * host::inv_logit(-s * e))
        .collect();
    (
        value,
        d_eta.iter().sum(),
        transpose_product(xs, n, beta.len(), &d_eta),
    )
}

#[test]
fn a_likelihood_reads_its_product_inline_in_one_step() -> Result<()> {
    for (n, p) in [(0, 3), (1, 1), (31, 3), (33, 10), (1000, 7), (100_003, 5)] {
        let xs = values(n * p, 0.5);
        let ys: Vec<i32> = (0..n).map(|k| ((k * 7) % 3 == 0) as i32).collect();
        let bs = values(p, 1.5);
        let x = MatrixCl::from_slice(n, p, &xs)?;
        let y = MatrixCl::from_slice(n, 1, &ys)?;
        let beta = Var::new(MatrixCl::from_slice(p, 1, &bs)?);
        let alpha = Var::new(MatrixCl::from_slice(1, 1, &[0.25])?);
        rev::clear()?;
        let lp = rev::composed::bernoulli_logit_glm(&y, &x, &alpha, &beta)?;
        assert_eq!(
            rev::steps_recorded(),
            1,
            "({n}, {p}): the product is read inline, not a step of its own"
        );
        // The reverse pass reads the forward kernel's sums, not x: x may
        // change in between.
        x.fill(f64::NAN)?;
        lp.grad()?;
        let (value, d_alpha, d_beta) = bernoulli_reference(&xs, n, &ys, 0.25, &bs);
        let name = format!("({n}, {p})");
        close(&name, &lp.value().to_vec()?, &[value], 1e-10);
        close(&name, &alpha.adjoint().to_vec()?, &[d_alpha], 1e-10);
        close(&name, &beta.adjoint().to_vec()?, &d_beta, 1e-10);
        rev::clear()?;
    }
    Ok(())
}

#[test]
fn its_reverse_pass_is_one_small_launch_that_adds_on_a_second_pass() -> Result<()> {
    let (n, p) = (501, 4);
    let xs = values(n * p, 2.5);
    let x = MatrixCl::from_slice(n, p, &xs)?;
    let y = MatrixCl::from_slice(n, 1, &vec![1; n])?;
    let bs = values(p, 3.5);
    let beta = Var::new(MatrixCl::from_slice(p, 1, &bs)?);
    let alpha = Var::new(MatrixCl::from_slice(1, 1, &[-0.5])?);
    let model = || rev::composed::bernoulli_logit_glm(&y, &x, &alpha, &beta);
    model()?.grad()?; // compiles everything once
    rev::clear()?;
    rev::set_zero_all_adjoints()?;
    let lp = model()?;
    let before = thread_kernel_stats();
    lp.grad()?;
    let reverse = thread_kernel_stats() - before;
    assert_eq!(reverse.launched, 1, "{reverse:?}");
    assert_eq!(reverse.built(), 0, "{reverse:?}");
    // Without zeroing, a second pass adds the same gradient again.
    lp.grad()?;
    let (_, d_alpha, d_beta) = bernoulli_reference(&xs, n, &[1; 501], -0.5, &bs);
    let twice = |v: &[f64]| v.iter().map(|g| 2.0 * g).collect::<Vec<_>>();
    close(
        "alpha",
        &alpha.adjoint().to_vec()?,
        &twice(&[d_alpha]),
        1e-10,
    );
    close("beta", &beta.adjoint().to_vec()?, &twice(&d_beta), 1e-10);
    rev::clear()
}

#[test]
fn a_product_read_away_from_its_row_is_a_step_of_its_own() -> Result<()> {
    for (n, p) in [(2, 1), (33, 3)] {
        let xs = values(n * p, 4.5);
        let x = MatrixCl::from_slice(n, p, &xs)?;
        let beta = Var::new(MatrixCl::from_slice(p, 1, &values(p, 5.5))?);
        rev::clear()?;
        // Rows 1.. of the product: element i reads the product's row i + 1.
        let shifted = block(matrix_vector_multiply(&x, &beta), 1, 0, n - 1, 1);
        let lp = colwise_sum(square(shifted)).eval()?;
        assert_eq!(rev::steps_recorded(), 2, "({n}, {p})");
        lp.grad()?;
        let eta = product(&xs, n, &beta.value().to_vec()?);
        let c: Vec<f64> = (0..n)
            .map(|i| if i == 0 { 0.0 } else { 2.0 * eta[i] })
            .collect();
        close(
            "shifted",
            &beta.adjoint().to_vec()?,
            &transpose_product(&xs, n, p, &c),
            1e-10,
        );
    }
    rev::clear()
}

/// Outside a `1 x 1` step a product is computed apart as its own step: one
/// step for the product alone, two with an element-wise step on it, and a
/// product whose vector is another product reads that product's step
/// without a copy, in a larger step as in a likelihood.
#[test]
fn products_outside_a_likelihood_are_steps_without_copies() -> Result<()> {
    let (n, p, q) = (9, 4, 3);
    let (xs, ys) = (values(n * p, 8.5), values(p * q, 9.5));
    let x = MatrixCl::from_slice(n, p, &xs)?;
    let y = MatrixCl::from_slice(p, q, &ys)?;
    let bs = values(q, 10.5);
    let beta = Var::new(MatrixCl::from_slice(q, 1, &bs)?);
    let yb = product(&ys, p, &bs);
    rev::clear()?;
    let alone = matrix_vector_multiply(&y, &beta).eval()?;
    assert_eq!(rev::steps_recorded(), 1, "the product alone");
    close("y·β", &alone.value().to_vec()?, &yb, 1e-12);

    rev::clear()?;
    let doubled = (matrix_vector_multiply(&y, &beta) * 2.0).eval()?;
    assert_eq!(rev::steps_recorded(), 2, "the product, then the doubling");
    colwise_sum(&doubled).eval()?.grad()?;
    let twos = transpose_product(&ys, p, q, &vec![2.0; p]);
    close("d_beta, doubled", &beta.adjoint().to_vec()?, &twos, 1e-10);

    rev::clear()?;
    rev::set_zero_all_adjoints()?;
    let nested = matrix_vector_multiply(&x, matrix_vector_multiply(&y, &beta)).eval()?;
    assert_eq!(rev::steps_recorded(), 2, "two products, no copy");
    close(
        "x·(y·β)",
        &nested.value().to_vec()?,
        &product(&xs, n, &yb),
        1e-10,
    );

    // In a likelihood the outer product is read inline, the inner one is a step.
    rev::clear()?;
    let lp = colwise_sum(matrix_vector_multiply(
        &x,
        matrix_vector_multiply(&y, &beta),
    ))
    .eval()?;
    assert_eq!(
        rev::steps_recorded(),
        2,
        "the inner product, then the likelihood"
    );
    lp.grad()?;
    let xt_ones = transpose_product(&xs, n, p, &vec![1.0; n]);
    let want = transpose_product(&ys, p, q, &xt_ones);
    close(
        "d_beta, likelihood",
        &beta.adjoint().to_vec()?,
        &want,
        1e-10,
    );
    rev::clear()?;
    rev::set_zero_all_adjoints()
}

#[test]
fn a_coefficient_also_scattered_into_keeps_the_product_a_step() -> Result<()> {
    let (n, p) = (37, 4);
    let xs = values(n * p, 6.5);
    let x = MatrixCl::from_slice(n, p, &xs)?;
    let beta = Var::new(MatrixCl::from_slice(p, 1, &values(p, 7.5))?);
    // Repeated indices: several rows add into one element of beta.
    let idx: Vec<i32> = (0..n).map(|i| ((i * 3) % p) as i32).collect();
    let index = MatrixCl::from_slice(n, 1, &idx)?;
    rev::clear()?;
    let lp = colwise_sum(matrix_vector_multiply(&x, &beta) + indexing(&beta, &index, 0)).eval()?;
    assert_eq!(rev::steps_recorded(), 2);
    lp.grad()?;
    let mut want = transpose_product(&xs, n, p, &vec![1.0; n]);
    for i in &idx {
        want[*i as usize] += 1.0;
    }
    close("scattered", &beta.adjoint().to_vec()?, &want, 1e-10);
    rev::clear()
}

/// `βᵀ x β`: beta read at the work item's own element and through the
/// product in one step; its gradient is `(x + xᵀ) β`. (Up to 32 columns
/// one work item holds a whole row, so the product is inline on any device.)
#[test]
fn a_coefficient_read_at_its_element_and_through_the_product() -> Result<()> {
    for n in [1, 17, 31] {
        let xs = values(n * n, 8.5);
        let x = MatrixCl::from_slice(n, n, &xs)?;
        let bs = values(n, 9.5);
        let beta = Var::new(MatrixCl::from_slice(n, 1, &bs)?);
        rev::clear()?;
        let lp = colwise_sum(elt_multiply(matrix_vector_multiply(&x, &beta), &beta)).eval()?;
        assert_eq!(rev::steps_recorded(), 1, "n = {n}");
        lp.grad()?;
        let xb = product(&xs, n, &bs);
        let xtb = transpose_product(&xs, n, n, &bs);
        let want: Vec<f64> = xb.iter().zip(&xtb).map(|(a, b)| a + b).collect();
        close("quadratic form", &beta.adjoint().to_vec()?, &want, 1e-10);
        let value: f64 = xb.iter().zip(&bs).map(|(a, b)| a * b).sum();
        close("value", &lp.value().to_vec()?, &[value], 1e-10);
    }
    rev::clear()
}

/// A sampler's layout: one parameter vector `θ = (α, β)`, the coefficients
/// a block of it (their own small step), the product read inline.
#[test]
fn coefficients_taken_from_a_parameter_vector() -> Result<()> {
    let (n, p) = (257, 6);
    let xs = values(n * p, 10.5);
    let ys: Vec<i32> = (0..n).map(|k| (k % 2) as i32).collect();
    let x = MatrixCl::from_slice(n, p, &xs)?;
    let y = MatrixCl::from_slice(n, 1, &ys)?;
    let ts = values(p + 1, 11.5);
    let theta = Var::new(MatrixCl::from_slice(p + 1, 1, &ts)?);
    let mut gradient = vec![0.0; p + 1];
    let value = rev::value_and_grad_to_host(
        &theta,
        || {
            let alpha = block(&theta, 0, 0, 1, 1);
            let beta = block(&theta, 1, 0, p, 1);
            let eta = matrix_vector_multiply(&x, beta) + optional_broadcast(alpha, n, 1);
            let sign = (2 * &y - 1).cast::<f64>();
            colwise_sum(log_inv_logit(elt_multiply(sign, eta))).eval()
        },
        &mut gradient,
    )?;
    let (want, d_alpha, d_beta) = bernoulli_reference(&xs, n, &ys, ts[0], &ts[1..]);
    close("value", &[value], &[want], 1e-10);
    close("d_alpha", &gradient[..1], &[d_alpha], 1e-10);
    close("d_beta", &gradient[1..], &d_beta, 1e-10);
    rev::clear()
}

/// In single precision too (the forward kernel's sums and the reverse
/// kernel's scaling in float), where the device has no double.
#[test]
fn single_precision_likelihoods_read_products_inline() -> Result<()> {
    let (n, p) = (33, 3);
    let xs = values(n * p, 12.5);
    let bs = values(p, 13.5);
    let x = MatrixCl::from_slice(n, p, &xs.iter().map(|v| *v as f32).collect::<Vec<_>>())?;
    let beta = Var::new(MatrixCl::from_slice(
        p,
        1,
        &bs.iter().map(|v| *v as f32).collect::<Vec<_>>(),
    )?);
    rev::clear()?;
    let lp = colwise_sum(square(matrix_vector_multiply(&x, &beta))).eval()?;
    assert_eq!(rev::steps_recorded(), 1);
    lp.grad()?;
    let eta = product(&xs, n, &bs);
    let c: Vec<f64> = eta.iter().map(|e| 2.0 * e).collect();
    let got: Vec<f64> = beta.adjoint().to_vec()?.iter().map(|v| *v as f64).collect();
    close("f32", &got, &transpose_product(&xs, n, p, &c), 1e-4);
    rev::clear()
}

/// Two products of one staged `x` in one step: `Σ (x a)ᵢ (x b)ᵢ`, whose
/// gradients are `xᵀ(x b)` and `xᵀ(x a)`.
#[test]
fn two_products_of_one_matrix_in_one_step() -> Result<()> {
    for (n, p) in [(1, 2), (45, 4)] {
        let xs = values(n * p, 14.5);
        let (av, bv) = (values(p, 15.5), values(p, 16.5));
        let x = MatrixCl::from_slice(n, p, &xs)?;
        let a = Var::new(MatrixCl::from_slice(p, 1, &av)?);
        let b = Var::new(MatrixCl::from_slice(p, 1, &bv)?);
        rev::clear()?;
        let lp = colwise_sum(elt_multiply(
            matrix_vector_multiply(&x, &a),
            matrix_vector_multiply(&x, &b),
        ))
        .eval()?;
        assert_eq!(rev::steps_recorded(), 1, "({n}, {p})");
        lp.grad()?;
        let (xa, xb) = (product(&xs, n, &av), product(&xs, n, &bv));
        close(
            "d_a",
            &a.adjoint().to_vec()?,
            &transpose_product(&xs, n, p, &xb),
            1e-10,
        );
        close(
            "d_b",
            &b.adjoint().to_vec()?,
            &transpose_product(&xs, n, p, &xa),
            1e-10,
        );
    }
    rev::clear()
}

/// One coefficient vector through products of two matrices in one step:
/// two sums for one variable, written and then added by one work item. At
/// 20 011 rows the kernel has several work-groups, and each product's last
/// group adds up its groups' sums (a slot of the counter each).
#[test]
fn one_coefficient_through_two_matrices() -> Result<()> {
    for n in [29, 20_011] {
        one_coefficient_through_two_matrices_of(n)?;
    }
    Ok(())
}

fn one_coefficient_through_two_matrices_of(n: usize) -> Result<()> {
    let p = 3;
    let (x1s, x2s) = (values(n * p, 17.5), values(n * p, 18.5));
    let x1 = MatrixCl::from_slice(n, p, &x1s)?;
    let x2 = MatrixCl::from_slice(n, p, &x2s)?;
    let bs = values(p, 19.5);
    let beta = Var::new(MatrixCl::from_slice(p, 1, &bs)?);
    rev::clear()?;
    let lp = colwise_sum(
        square(matrix_vector_multiply(&x1, &beta)) + matrix_vector_multiply(&x2, &beta),
    )
    .eval()?;
    assert_eq!(rev::steps_recorded(), 1);
    lp.grad()?;
    let c: Vec<f64> = product(&x1s, n, &bs).iter().map(|e| 2.0 * e).collect();
    let want: Vec<f64> = transpose_product(&x1s, n, p, &c)
        .iter()
        .zip(transpose_product(&x2s, n, p, &vec![1.0; n]))
        .map(|(a, b)| a + b)
        .collect();
    close(
        &format!("two matrices, n = {n}"),
        &beta.adjoint().to_vec()?,
        &want,
        1e-10,
    );
    rev::clear()
}
