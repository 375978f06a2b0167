//! Adjoints of GEMM, the triangular solve and Cholesky, each checked against
//! central finite differences of `f = sum(W ∘ result)` (W random) computed
//! on the host, and — at sizes where finite differences are too slow — against
//! a CPU reference of the same formula.
//! Bounds: finite differences 1e-6 relative (h = 1e-5, O(h²) truncation);
//! CPU reference 1e-10 relative.

use crate::common;
use clfuse::clfuse_kernels as k;
use clfuse::prelude::*;
use common::linalg::*;
use nalgebra::DMatrix;

const H: f64 = 1e-5;
const FD_TOL: f64 = 1e-6;

fn weighted_sum(w: &DMatrix<f64>, m: &DMatrix<f64>) -> f64 {
    w.component_mul(m).sum()
}

/// Central difference of `f` in the direction that perturbs `positions` together.
fn central(
    f: &dyn Fn(&DMatrix<f64>) -> f64,
    x: &DMatrix<f64>,
    positions: &[(usize, usize)],
) -> f64 {
    let mut plus = x.clone();
    let mut minus = x.clone();
    for &p in positions {
        plus[p] += H;
        minus[p] -= H;
    }
    (f(&plus) - f(&minus)) / (2.0 * H)
}

fn assert_fd(what: &str, got: f64, fd: f64) {
    let err = (got - fd).abs() / fd.abs().max(1.0);
    assert!(
        err <= FD_TOL,
        "{what}: adjoint {got} vs finite difference {fd} (relative error {err:e})"
    );
}

#[test]
fn gemm_adjoint_matches_finite_differences() {
    for (m, kk, n) in [(1, 1, 1), (7, 33, 5), (31, 2, 33)] {
        let mut rng = Rng::new((m + kk + n) as u64);
        let (a, b, w) = (rng.matrix(m, kk), rng.matrix(kk, n), rng.matrix(m, n));
        let adj = k::multiply_adjoint(&to_device(&a), &to_device(&b), &to_device(&w)).unwrap();
        let (adj_a, adj_b) = (to_host(&adj.adj_a), to_host(&adj.adj_b));
        let fa = |x: &DMatrix<f64>| weighted_sum(&w, &(x * &b));
        let fb = |x: &DMatrix<f64>| weighted_sum(&w, &(&a * x));
        for i in 0..m {
            for j in 0..kk {
                assert_fd("adj(a)", adj_a[(i, j)], central(&fa, &a, &[(i, j)]));
            }
        }
        for i in 0..kk {
            for j in 0..n {
                assert_fd("adj(b)", adj_b[(i, j)], central(&fb, &b, &[(i, j)]));
            }
        }
    }
}

#[test]
fn triangular_solve_adjoint_matches_finite_differences() {
    for (n, cols) in [(1, 1), (5, 3), (33, 2)] {
        let mut rng = Rng::new(n as u64 + 10);
        let (l, b, w) = (rng.lower(n), rng.matrix(n, cols), rng.matrix(n, cols));
        let adj = k::mdivide_left_tri_adjoint(
            &to_device(&l).with_view(View::Lower),
            &to_device(&b),
            &to_device(&w),
        )
        .unwrap();
        let (adj_a, adj_b) = (to_host(&adj.adj_a), to_host(&adj.adj_b));
        let fa = |x: &DMatrix<f64>| weighted_sum(&w, &x.solve_lower_triangular(&b).unwrap());
        let fb = |x: &DMatrix<f64>| weighted_sum(&w, &l.solve_lower_triangular(x).unwrap());
        for j in 0..n {
            for i in 0..n {
                let want = if i >= j {
                    central(&fa, &l, &[(i, j)])
                } else {
                    0.0
                };
                assert_fd("adj(a)", adj_a[(i, j)], want);
            }
            for c in 0..cols {
                assert_fd("adj(b)", adj_b[(j, c)], central(&fb, &b, &[(j, c)]));
            }
        }
    }
}

fn lower_part(m: &DMatrix<f64>) -> DMatrix<f64> {
    DMatrix::from_fn(
        m.nrows(),
        m.ncols(),
        |i, j| if i >= j { m[(i, j)] } else { 0.0 },
    )
}

/// Unblocked CPU reference (Murray 2016, symbolic form): P = Φ(Lᵀ L̄),
/// S = L⁻ᵀ P L⁻¹; the derivative for the pair a_ij = a_ji (i > j) is S_ij + S_ji.
fn cholesky_adjoint_reference(l: &DMatrix<f64>, adj_l: &DMatrix<f64>) -> DMatrix<f64> {
    let n = l.nrows();
    let mut p = lower_part(&(l.transpose() * adj_l));
    for i in 0..n {
        p[(i, i)] *= 0.5;
    }
    let l_inv = l.clone().try_inverse().unwrap();
    let s = l_inv.transpose() * p * &l_inv;
    DMatrix::from_fn(n, n, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => s[(i, j)] + s[(j, i)],
        std::cmp::Ordering::Equal => s[(i, i)],
        std::cmp::Ordering::Less => 0.0,
    })
}

#[test]
fn cholesky_adjoint_matches_finite_differences() {
    for n in [1, 2, 7, 31] {
        let a = toeplitz(n) / (n * n) as f64;
        let w = lower_part(&Rng::new(n as u64).matrix(n, n));
        let l = a.clone().cholesky().unwrap().l();
        let adj = to_host(
            &k::cholesky_adjoint(
                &to_device(&l).with_view(View::Lower),
                &to_device(&w).with_view(View::Lower),
            )
            .unwrap(),
        );
        // The decomposition reads the lower triangle: a_ij (i > j) stands for both a_ij and a_ji.
        let f = |x: &DMatrix<f64>| weighted_sum(&w, &x.clone().cholesky().unwrap().l());
        for j in 0..n {
            for i in 0..n {
                let want = match i.cmp(&j) {
                    std::cmp::Ordering::Greater => central(&f, &a, &[(i, j), (j, i)]),
                    std::cmp::Ordering::Equal => central(&f, &a, &[(i, i)]),
                    std::cmp::Ordering::Less => 0.0,
                };
                assert_fd(&format!("adj(a)[{i},{j}] n={n}"), adj[(i, j)], want);
            }
        }
        assert_relative(
            "reference",
            &adj,
            &cholesky_adjoint_reference(&l, &w),
            1e-10,
        );
    }
}

#[test]
fn blocked_cholesky_adjoint_matches_the_cpu_reference() {
    // 128-wide blocks: 129, 257 and 300 exercise partial and multiple blocks.
    for n in [32, 33, 129, 257, 300] {
        let a = toeplitz(n) / (n * n) as f64;
        let w = lower_part(&Rng::new(n as u64).matrix(n, n));
        let l = a.cholesky().unwrap().l();
        let adj = k::cholesky_adjoint(
            &to_device(&l).with_view(View::Lower),
            &to_device(&w).with_view(View::Lower),
        )
        .unwrap();
        assert_eq!(adj.view(), View::Lower);
        assert_relative(
            &format!("cholesky adjoint n={n}"),
            &to_host(&adj),
            &cholesky_adjoint_reference(&l, &w),
            1e-10,
        );
    }
}

#[test]
fn cholesky_adjoint_schedules_match_the_cpu_reference() {
    use k::CholeskyAdjointMethod::{Auto, Blocked, ThroughInverse};
    // Block widths 64 and 128: 64, 65, 129 and 257 put a block edge at or
    // just past the end; 1000 is where the GPU schedule is chosen by size.
    for n in [1, 31, 33, 64, 65, 129, 257, 1000] {
        let a = toeplitz(n) / (n * n) as f64;
        let w = lower_part(&Rng::new(3 * n as u64).matrix(n, n));
        let l = a.cholesky().unwrap().l();
        let want = cholesky_adjoint_reference(&l, &w);
        let methods: &[k::CholeskyAdjointMethod] = if n == 1000 {
            &[ThroughInverse, Blocked(128)]
        } else {
            &[Auto, ThroughInverse, Blocked(64), Blocked(128), Blocked(7)]
        };
        for &method in methods {
            let adj = k::cholesky_adjoint_with(
                &to_device(&l).with_view(View::Lower),
                &to_device(&w).with_view(View::Lower),
                method,
            )
            .unwrap();
            assert_eq!(adj.view(), View::Lower);
            assert_relative(
                &format!("cholesky adjoint {method:?} n={n}"),
                &to_host(&adj),
                &want,
                1e-10,
            );
        }
    }
}

#[test]
fn cholesky_adjoint_reads_only_lower_triangles() {
    // NaNs above the diagonal of both inputs (views Entire) change nothing.
    let n = 33;
    let a = toeplitz(n) / (n * n) as f64;
    let w = lower_part(&Rng::new(5).matrix(n, n));
    let l = a.cholesky().unwrap().l();
    let want = cholesky_adjoint_reference(&l, &w);
    let poisoned =
        |m: &DMatrix<f64>| DMatrix::from_fn(n, n, |i, j| if i < j { f64::NAN } else { m[(i, j)] });
    for method in [
        k::CholeskyAdjointMethod::ThroughInverse,
        k::CholeskyAdjointMethod::Blocked(16),
    ] {
        let adj =
            k::cholesky_adjoint_with(&to_device(&poisoned(&l)), &to_device(&poisoned(&w)), method)
                .unwrap();
        assert_relative(&format!("{method:?}"), &to_host(&adj), &want, 1e-10);
    }
    let zero_width = k::cholesky_adjoint_with(
        &to_device(&l).with_view(View::Lower),
        &to_device(&w).with_view(View::Lower),
        k::CholeskyAdjointMethod::Blocked(0),
    )
    .unwrap_err()
    .to_string();
    assert!(zero_width.contains("cholesky_adjoint") && zero_width.contains("method"));
}

#[test]
fn adjoint_dimension_errors() {
    let a = MatrixCl::<f64>::zeros(2, 3).unwrap();
    let b = MatrixCl::<f64>::zeros(3, 2).unwrap();
    assert!(matches!(
        k::multiply_adjoint(&a, &b, &a).unwrap_err(),
        Error::DimensionMismatch { .. }
    ));
    let l = MatrixCl::<f64>::identity(3).unwrap().with_view(View::Lower);
    assert!(matches!(
        k::mdivide_left_tri_adjoint(&l, &b, &a).unwrap_err(),
        Error::DimensionMismatch { .. }
    ));
    assert!(matches!(
        k::cholesky_adjoint(&l, &a).unwrap_err(),
        Error::DimensionMismatch { .. }
    ));
    assert!(
        k::cholesky_adjoint(&a, &a)
            .unwrap_err()
            .to_string()
            .contains("square")
    );
}
