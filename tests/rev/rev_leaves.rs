//! The hand-written kernels as differentiable leaves, against their adjoint
//! kernels and finite differences; the GLM leaves against their composed forms.
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

/// A symmetric positive-definite n x n matrix.
fn spd(n: usize) -> Vec<f64> {
    let b = values(n * n, 0.25);
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            a[i + n * j] = (0..n).map(|k| b[i + n * k] * b[j + n * k]).sum::<f64>();
        }
        a[i + n * i] += n as f64;
    }
    a
}

/// Weights for a scalar summary `sum(w .* f)` of a matrix result.
fn weights(n: usize, m: usize) -> MatrixCl<f64> {
    MatrixCl::from_slice(n, m, &values(n * m, 9.5)).expect("weights")
}

fn weighted_total(v: &Var, w: &MatrixCl<f64>) -> Result<Var> {
    let by_col = colwise_sum(elt_multiply(v, w)).eval()?;
    colwise_sum(transpose(&by_col)).eval()
}

#[test]
fn cholesky_matches_its_adjoint_kernel_and_finite_differences() -> Result<()> {
    for n in [1, 5, 33] {
        let avals = spd(n);
        let a = Var::new(MatrixCl::from_slice(n, n, &avals)?);
        let l = rev::cholesky_decompose(&a)?;
        let w = weights(n, n);
        weighted_total(&l, &w)?.grad()?;
        // Against the kernel: adj(l) = w on the lower triangle.
        let wl = select(ge(row_index(n, n), col_index(n, n)), &w, 0.0f64)
            .eval()?
            .with_view(View::Lower);
        let reference = clfuse::linalg::cholesky_adjoint(l.value(), &wl)?;
        close(
            "cholesky",
            &a.adjoint().to_vec()?,
            &reference.to_vec()?,
            1e-12,
        );
        // Finite differences of one lower entry (perturbing a_ij and a_ji together).
        if n > 1 {
            let (i, j) = (n - 1, 0);
            let f = |h: f64| -> Result<f64> {
                let mut m = avals.clone();
                m[i + n * j] += h;
                m[j + n * i] += h;
                let l = clfuse::linalg::cholesky_decompose(&MatrixCl::from_slice(n, n, &m)?)?;
                let lv = l.to_vec()?;
                let wv = w.to_vec()?;
                Ok((0..n * n)
                    .filter(|k| k % n >= k / n)
                    .map(|k| lv[k] * wv[k])
                    .sum())
            };
            let h = 1e-5;
            let fd = (f(h)? - f(-h)?) / (2.0 * h);
            let got = a.adjoint().to_vec()?[i + n * j];
            assert!(
                (got - fd).abs() < 1e-6 * fd.abs().max(1.0),
                "n = {n}: {got} vs {fd}"
            );
        }
        rev::clear()?;
    }
    Ok(())
}

#[test]
fn triangular_solve_and_inverse_match_their_kernels() -> Result<()> {
    // 100 and 600: the solves through inverted diagonal blocks (one block,
    // then 256-row blocks), the reverse pass reusing the forward's.
    for n in [1, 7, 33, 100, 600] {
        let l = clfuse::linalg::cholesky_decompose(&MatrixCl::from_slice(n, n, &spd(n))?)?;
        let a = Var::new(l.try_clone()?.with_view(View::Lower));
        let b = Var::new(MatrixCl::from_slice(n, 2, &values(2 * n, 1.5))?);
        let c = rev::mdivide_left_tri(&a, &b)?;
        let w = weights(n, 2);
        weighted_total(&c, &w)?.grad()?;
        let reference = clfuse::linalg::mdivide_left_tri_adjoint(&l, b.value(), &w)?;
        close(
            "solve adj(a)",
            &a.adjoint().to_vec()?,
            &reference.adj_a.to_vec()?,
            1e-10,
        );
        close(
            "solve adj(b)",
            &b.adjoint().to_vec()?,
            &reference.adj_b.to_vec()?,
            1e-10,
        );
        rev::clear()?;
        // The inverse equals the solve with b = I.
        let a2 = Var::new(l.try_clone()?.with_view(View::Lower));
        let inv = rev::tri_inverse(&a2)?;
        let w = weights(n, n);
        weighted_total(&inv, &w)?.grad()?;
        let eye = select(eq(row_index(n, n), col_index(n, n)), 1.0f64, 0.0f64).eval()?;
        let reference = clfuse::linalg::mdivide_left_tri_adjoint(&l, &eye, &w)?;
        let lower = select(
            ge(row_index(n, n), col_index(n, n)),
            &reference.adj_a,
            0.0f64,
        )
        .eval()?;
        close(
            "inverse adj(a)",
            &a2.adjoint().to_vec()?,
            &lower.to_vec()?,
            1e-10,
        );
        rev::clear()?;
    }
    Ok(())
}

#[test]
fn glm_leaves_agree_with_their_composed_forms() -> Result<()> {
    for (n, p) in [(1, 1), (33, 3), (1001, 5)] {
        let x = MatrixCl::from_slice(n, p, &values(n * p, 2.5))?;
        let counts: Vec<i32> = (0..n).map(|k| ((k * 7) % 4) as i32).collect();
        let binary: Vec<i32> = counts.iter().map(|c| (*c > 1) as i32).collect();
        let reals: Vec<f64> = values(n, 3.5);
        let beta = Var::new(MatrixCl::from_slice(p, 1, &values(p, 4.5))?);
        let alpha = Var::new(MatrixCl::from_slice(1, 1, &[0.3])?);
        let sigma = Var::new(MatrixCl::from_slice(1, 1, &[1.3])?);
        let grads = |f: &dyn Fn() -> Result<Var>| -> Result<(f64, Vec<Vec<f64>>)> {
            let (value, g) = rev::value_and_grad(&[&alpha, &beta, &sigma], f)?;
            Ok((value, g.iter().map(|m| m.to_vec()).collect::<Result<_>>()?))
        };
        let yb = MatrixCl::from_slice(n, 1, &binary)?;
        let yc = MatrixCl::from_slice(n, 1, &counts)?;
        let yr = MatrixCl::from_slice(n, 1, &reals)?;
        let cases: [(&str, (f64, Vec<Vec<f64>>), (f64, Vec<Vec<f64>>)); 3] = [
            (
                "bernoulli",
                grads(&|| rev::bernoulli_logit_glm(&yb, &x, &alpha, &beta))?,
                grads(&|| rev::composed::bernoulli_logit_glm(&yb, &x, &alpha, &beta))?,
            ),
            (
                "poisson",
                grads(&|| rev::poisson_log_glm(&yc, &x, &alpha, &beta))?,
                grads(&|| rev::composed::poisson_log_glm(&yc, &x, &alpha, &beta))?,
            ),
            (
                "normal",
                grads(&|| rev::normal_id_glm(&yr, &x, &alpha, &beta, &sigma))?,
                grads(&|| rev::composed::normal_id_glm(&yr, &x, &alpha, &beta, &sigma))?,
            ),
        ];
        for (name, (v1, g1), (v2, g2)) in cases {
            close(name, &[v1], &[v2], 1e-10);
            for (a, b) in g1.iter().zip(&g2) {
                close(name, a, b, 1e-10);
            }
        }
    }
    rev::clear()
}

/// The gradient of a leaf built by `f` from the variables `inputs` against
/// central differences of its value, one element of one input at a time.
pub(crate) fn check_against_fd(
    name: &str,
    inputs: &[&Var],
    f: &dyn Fn() -> Result<Var>,
) -> Result<()> {
    let (_, grads) = rev::value_and_grad(inputs, f)?;
    for (which, (input, grad)) in inputs.iter().zip(&grads).enumerate() {
        let base = input.value().to_vec()?;
        let got = grad.to_vec()?;
        for k in 0..base.len() {
            let h = 1e-6 * base[k].abs().max(1.0);
            let at = |d: f64| -> Result<f64> {
                let mut shifted = base.clone();
                shifted[k] += d;
                input.value().write(&shifted)?;
                let v = f()?.value().to_vec()?[0];
                input.value().write(&base)?;
                rev::clear()?;
                Ok(v)
            };
            let fd = (at(h)? - at(-h)?) / (2.0 * h);
            assert!(
                (got[k] - fd).abs() <= 1e-6 * fd.abs().max(1.0),
                "{name}: d/d(input {which})[{k}] = {} vs finite difference {fd}",
                got[k]
            );
        }
    }
    rev::clear()
}

/// Numbers and constant matrices for the intercept and `sigma` give the
/// leaf and its composed form the same value and `beta` gradient as `1 x 1`
/// variables holding the same values.
#[test]
fn glm_scalars_as_numbers_matrices_or_variables() -> Result<()> {
    let (n, p) = (33, 3);
    let x = MatrixCl::from_slice(n, p, &values(n * p, 2.5))?;
    let y = MatrixCl::from_slice(n, 1, &values(n, 3.5))?;
    let beta = Var::new(MatrixCl::from_slice(p, 1, &values(p, 4.5))?);
    let alpha_var = Var::new(MatrixCl::from_slice(1, 1, &[0.3])?);
    let sigma_var = Var::new(MatrixCl::from_slice(1, 1, &[1.3])?);
    let alpha_matrix = MatrixCl::from_slice(1, 1, &[0.3])?;
    let sigma_matrix = MatrixCl::from_slice(1, 1, &[1.3])?;
    let run = |f: &dyn Fn() -> Result<Var>| -> Result<(f64, Vec<f64>)> {
        let (value, g) = rev::value_and_grad(&[&beta], f)?;
        Ok((value, g[0].to_vec()?))
    };
    let want = run(&|| rev::normal_id_glm(&y, &x, &alpha_var, &beta, &sigma_var))?;
    let forms: [(&str, &dyn Fn() -> Result<Var>); 4] = [
        ("leaf, numbers", &|| {
            rev::normal_id_glm(&y, &x, 0.3, &beta, 1.3)
        }),
        ("leaf, matrices", &|| {
            rev::normal_id_glm(&y, &x, &alpha_matrix, &beta, &sigma_matrix)
        }),
        ("composed, numbers", &|| {
            rev::composed::normal_id_glm(&y, &x, 0.3, &beta, 1.3)
        }),
        ("composed, matrices", &|| {
            rev::composed::normal_id_glm(&y, &x, &alpha_matrix, &beta, &sigma_matrix)
        }),
    ];
    for (name, f) in forms {
        let (value, gradient) = run(f)?;
        close(name, &[value], &[want.0], 1e-10);
        close(name, &gradient, &want.1, 1e-10);
    }
    rev::clear()
}

#[test]
fn glm_leaves_match_finite_differences_in_every_operand() -> Result<()> {
    for (n, p) in [(1, 1), (33, 3)] {
        let x = Var::new(MatrixCl::from_slice(n, p, &values(n * p, 2.5))?);
        let beta = Var::new(MatrixCl::from_slice(p, 1, &values(p, 4.5))?);
        let alpha = Var::new(MatrixCl::from_slice(1, 1, &[0.3])?);
        let phi = Var::new(MatrixCl::from_slice(1, 1, &[2.2])?);
        let counts: Vec<i32> = (0..n).map(|k| ((k * 7) % 4) as i32).collect();
        check_against_fd(
            "neg_binomial_2_log_glm",
            &[&x, &alpha, &beta, &phi],
            &|| rev::neg_binomial_2_log_glm(&counts[..], &x, &alpha, &beta, &phi),
        )?;

        let binary: Vec<i32> = counts.iter().map(|c| (*c > 1) as i32).collect();
        check_against_fd(
            "bernoulli_logit_glm (x a variable)",
            &[&x, &alpha, &beta],
            &|| rev::bernoulli_logit_glm(&binary[..], &x, &alpha, &beta),
        )?;

        let categories = 3;
        let class: Vec<i32> = (0..n).map(|k| (k % categories) as i32 + 1).collect();
        let alphas = Var::new(MatrixCl::from_slice(
            categories,
            1,
            &values(categories, 5.5),
        )?);
        let betas = Var::new(MatrixCl::from_slice(
            p,
            categories,
            &values(p * categories, 6.5),
        )?);
        check_against_fd("categorical_logit_glm", &[&x, &alphas, &betas], &|| {
            rev::categorical_logit_glm(&class[..], &x, &alphas, &betas)
        })?;

        let cuts = Var::new(MatrixCl::from_slice(2, 1, &[-0.4, 0.5])?);
        check_against_fd("ordered_logistic_glm", &[&x, &beta, &cuts], &|| {
            rev::ordered_logistic_glm(&class[..], &x, &beta, &cuts)
        })?;
    }
    Ok(())
}

/// A well-conditioned n x n lower-triangular matrix (view `Lower`).
fn lower(n: usize) -> Result<MatrixCl<f64>> {
    let v = values(n * n, 0.4);
    let l: Vec<f64> = (0..n * n)
        .map(|k| match (k % n, k / n) {
            (i, j) if i == j => 2.0 + v[k].abs(),
            (i, j) if i > j => v[k] / n as f64,
            _ => 0.0,
        })
        .collect();
    Ok(MatrixCl::from_slice(n, n, &l)?.with_view(View::Lower))
}

#[test]
fn substitution_solves_match_finite_differences() -> Result<()> {
    // 35 rows cross a 32-row block of the substitution kernel.
    for n in [1, 6, 35] {
        let a = Var::new(lower(n)?);
        let b = Var::new(MatrixCl::from_slice(n, 2, &values(n * 2, 0.8))?);
        let w = weights(n, 2);
        for op in [Op::N, Op::T] {
            let f = || weighted_total(&rev::tri_solve(&a, op, &b)?, &w);
            check_against_fd(&format!("tri_solve {op:?} n={n}"), &[&a, &b], &f)?;
        }
        let f = || weighted_total(&rev::cholesky_solve(&a, &b)?, &w);
        check_against_fd(&format!("cholesky_solve n={n}"), &[&a, &b], &f)?;
        let f = || log_determinant_cholesky(&a).eval();
        check_against_fd(&format!("log_determinant_cholesky n={n}"), &[&a], &f)?;
    }
    rev::clear()
}

#[test]
fn squared_distances_of_variables_match_finite_differences() -> Result<()> {
    for (n, m, d) in [(1, 1, 1), (4, 7, 3)] {
        let x = Var::new(MatrixCl::from_slice(n, d, &values(n * d, 0.1))?);
        let y = MatrixCl::from_slice(m, d, &values(m * d, 0.6))?;
        let w = weights(n, m);
        let f = || weighted_total(&squared_distance(&x, &y)?.eval()?, &w);
        check_against_fd(&format!("squared_distance {n}x{m}x{d}"), &[&x], &f)?;
    }
    rev::clear()
}

/// A `1 x 1` result with known gradients: one reverse kernel scales them
/// all by the seed; a parent listed twice gets both; bad shapes are errors.
#[test]
fn scalar_leaves_scale_their_gradients_by_the_seed() -> Result<()> {
    let a = Var::new(MatrixCl::from_slice(3, 1, &[1.0, 2.0, 3.0])?);
    let b = Var::new(MatrixCl::from_slice(1, 2, &[4.0, 5.0])?);
    let value = || MatrixCl::from_slice(1, 1, &[7.0]);
    let ga = MatrixCl::from_slice(3, 1, &[0.5, -1.0, 2.0])?;
    let gb = MatrixCl::from_slice(1, 2, &[3.0, -4.0])?;
    let f = rev::scalar_leaf(
        value()?,
        &[&a, &b, &a],
        vec![ga.try_clone()?, gb.try_clone()?, ga.try_clone()?],
    )?;
    let before = thread_kernel_stats();
    (&f * 2.0).eval()?.grad()?;
    let launched = (thread_kernel_stats() - before).launched;
    assert_eq!(a.adjoint().to_vec()?, vec![2.0, -4.0, 8.0]);
    assert_eq!(b.adjoint().to_vec()?, vec![6.0, -8.0]);
    // The seed, the product's reverse kernel, the leaf's one kernel.
    assert!(launched <= 3, "{launched} launches");
    let wrong = MatrixCl::from_slice(1, 3, &[0.0; 3])?;
    let err = rev::scalar_leaf(value()?, &[&a], vec![wrong]).expect_err("shape");
    assert!(err.to_string().contains("gradient 0 is 1 x 3"), "{err}");
    let err = rev::scalar_leaf(value()?, &[&a, &b], vec![ga]).expect_err("count");
    assert!(err.to_string().contains("2 parents, 1 gradients"), "{err}");
    let err = rev::scalar_leaf(MatrixCl::<f64>::zeros(2, 1)?, &[], vec![]).expect_err("value");
    assert!(err.to_string().contains("must be 1 x 1"), "{err}");
    rev::clear()
}
