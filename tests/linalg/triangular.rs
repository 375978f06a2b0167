//! Triangular inverse and solves against nalgebra. Inputs are well
//! conditioned (diagonal in [1, 2), off-diagonal entries O(1/n)), so the
//! bound is max |X - X_ref| ≤ 1e-11 · max(|X_ref|, 1).

use crate::common;
use clfuse::clfuse_kernels as k;
use clfuse::prelude::*;
use common::linalg::*;
use common::soak::sizes_and_soaked;
use nalgebra::DMatrix;

const TOL: f64 = 1e-11;

fn reference_inverse(l: &DMatrix<f64>) -> DMatrix<f64> {
    l.clone().try_inverse().expect("invertible")
}

#[test]
fn lower_inverse_at_every_size() {
    // 2049, one past a power of two, is slow on PoCL with the tests'
    // unoptimized kernels: soak runs only.
    let sizes = sizes_and_soaked(
        "triangular::lower_inverse_at_every_size",
        &[1, 2, 31, 32, 33, 100, 257, 1000],
        &[2049],
    );
    for n in sizes {
        let l = Rng::new(n as u64).lower(n);
        let inv = k::tri_inverse(&to_device(&l).with_view(View::Lower)).unwrap();
        assert_eq!(inv.view(), View::Lower);
        let got = to_host(&inv);
        if n >= 1000 {
            // L · (X · x) = x for random x; plus the exact zero upper triangle.
            let ident = DMatrix::<f64>::identity(n, n);
            assert_product_probe(&format!("inverse n={n}"), &(&l * &got), |x| &ident * x, TOL);
            assert!((0..n).all(|j| (0..j).all(|i| got[(i, j)] == 0.0)));
        } else {
            assert_relative(&format!("inverse n={n}"), &got, &reference_inverse(&l), TOL);
        }
    }
}

#[test]
fn upper_and_diagonal_inverses() {
    for n in [1, 33, 100] {
        let u = Rng::new(n as u64).lower(n).transpose();
        let inv = k::tri_inverse(&to_device(&u).with_view(View::Upper)).unwrap();
        assert_eq!(inv.view(), View::Upper);
        assert_relative("upper inverse", &to_host(&inv), &reference_inverse(&u), TOL);
        let d = DMatrix::from_fn(n, n, |i, j| if i == j { 1.0 + i as f64 } else { 7.0 });
        let inv = k::tri_inverse(&to_device(&d).with_view(View::Diagonal)).unwrap();
        let want = DMatrix::from_fn(
            n,
            n,
            |i, j| if i == j { 1.0 / (1.0 + i as f64) } else { 0.0 },
        );
        assert_relative("diagonal inverse", &to_host(&inv), &want, TOL);
    }
}

#[test]
fn garbage_outside_the_view_is_ignored() {
    let n = 67;
    let l = Rng::new(3).lower(n);
    let mut dirty = l.clone();
    for j in 1..n {
        dirty[(0, j)] = f64::NAN;
    }
    let inv = k::tri_inverse(&to_device(&dirty).with_view(View::Lower)).unwrap();
    assert_relative("inverse", &to_host(&inv), &reference_inverse(&l), TOL);
}

#[test]
fn solves_left_and_right() {
    // Up to 64 columns by substitution, wider through the inverse.
    for (n, cols) in [(1, 1), (33, 5), (257, 31), (100, 80)] {
        let mut rng = Rng::new(n as u64);
        let l = rng.lower(n);
        let b = rng.matrix(n, cols);
        let x = k::mdivide_left_tri(&to_device(&l).with_view(View::Lower), &to_device(&b)).unwrap();
        let want = l.solve_lower_triangular(&b).unwrap();
        assert_relative("left lower", &to_host(&x), &want, TOL);
        let u = l.transpose();
        let x = k::mdivide_left_tri(&to_device(&u).with_view(View::Upper), &to_device(&b)).unwrap();
        assert_relative(
            "left upper",
            &to_host(&x),
            &u.solve_upper_triangular(&b).unwrap(),
            TOL,
        );
        let bt = b.transpose();
        let x =
            k::mdivide_right_tri(&to_device(&bt), &to_device(&l).with_view(View::Lower)).unwrap();
        assert_relative(
            "right lower",
            &to_host(&x),
            &(&bt * reference_inverse(&l)),
            TOL,
        );
        let x = k::mdivide_left_tri_identity(&to_device(&l).with_view(View::Lower)).unwrap();
        assert_relative("identity rhs", &to_host(&x), &reference_inverse(&l), TOL);
    }
}

#[test]
fn errors() {
    let singular = MatrixCl::from_slice(2, 2, &[1.0, 2.0, 0.0, 0.0])
        .unwrap()
        .with_view(View::Lower);
    let err = k::tri_inverse(&singular).unwrap_err();
    assert!(
        matches!(err, Error::CheckFailed { row: 1, col: 1, .. }),
        "{err}"
    );
    let entire = MatrixCl::<f64>::zeros(2, 2).unwrap();
    assert!(matches!(
        k::tri_inverse(&entire).unwrap_err(),
        Error::InvalidView { .. }
    ));
    let rect = MatrixCl::<f64>::zeros(2, 3).unwrap().with_view(View::Lower);
    assert!(
        k::tri_inverse(&rect)
            .unwrap_err()
            .to_string()
            .contains("square")
    );
    let l = MatrixCl::<f64>::identity(3).unwrap().with_view(View::Lower);
    let b = MatrixCl::<f64>::zeros(2, 1).unwrap();
    assert!(matches!(
        k::mdivide_left_tri(&l, &b).unwrap_err(),
        Error::DimensionMismatch { .. }
    ));
    assert!(matches!(
        k::mdivide_right_tri(&b, &l).unwrap_err(),
        Error::DimensionMismatch { .. }
    ));
}

#[test]
fn substitution_in_both_directions_at_odd_sizes() {
    for (n, cols) in [
        (0, 1),
        (1, 0),
        (1, 1),
        (31, 1),
        (32, 3),
        (33, 9),
        (100, 1),
        (64, 1),
        (65, 8),
        (257, 17),
        (1000, 2),
        // One launch per 32 rows up to 64 rows; beyond, inverted diagonal
        // blocks of 256 rows (a partial one at 65, 257 and 1000), of 512
        // beyond 4096.
        (4096, 1),
        (4097, 1),
    ] {
        let mut rng = Rng::new(7 + n as u64);
        let l = rng.lower(n);
        let b = rng.matrix(n, cols);
        let (lower, upper) = (
            to_device(&l).with_view(View::Lower),
            to_device(&l.transpose()).with_view(View::Upper),
        );
        let b_dev = to_device(&b);
        let forward = l.solve_lower_triangular(&b).unwrap();
        let backward = l.transpose().solve_upper_triangular(&b).unwrap();
        let cases = [
            ("L x = b", &lower, k::Op::N, &forward),
            ("Lᵀ x = b", &lower, k::Op::T, &backward),
            ("U x = b", &upper, k::Op::N, &backward),
            ("Uᵀ x = b", &upper, k::Op::T, &forward),
        ];
        for (what, a, op, want) in cases {
            let x = k::tri_solve(a, op, &b_dev).unwrap();
            assert_eq!((x.rows(), x.cols()), (n, cols));
            assert_relative(
                &format!("{what} n={n} cols={cols}"),
                &to_host(&x),
                want,
                TOL,
            );
        }
        // The right-hand side is not modified.
        assert_eq!(to_host(&b_dev), b);
    }
}

#[test]
fn substitution_reads_only_the_view() {
    let n = 45;
    let l = Rng::new(5).lower(n);
    let mut dirty = l.clone();
    for j in 1..n {
        dirty[(0, j)] = f64::NAN;
    }
    let b = Rng::new(6).matrix(n, 2);
    let x = k::tri_solve(
        &to_device(&dirty).with_view(View::Lower),
        k::Op::T,
        &to_device(&b),
    )
    .unwrap();
    let want = l.transpose().solve_upper_triangular(&b).unwrap();
    assert_relative("Lᵀ x = b beside NaN", &to_host(&x), &want, TOL);
    let d = DMatrix::from_fn(n, n, |i, j| if i == j { 2.0 + i as f64 } else { 9.0 });
    let x = k::tri_solve(
        &to_device(&d).with_view(View::Diagonal),
        k::Op::N,
        &to_device(&b),
    )
    .unwrap();
    let want = DMatrix::from_fn(n, 2, |i, j| b[(i, j)] / (2.0 + i as f64));
    assert_relative("diagonal", &to_host(&x), &want, TOL);
}

#[test]
fn substitution_errors_name_the_argument() {
    let singular = MatrixCl::from_slice(2, 2, &[1.0, 2.0, 0.0, 0.0])
        .unwrap()
        .with_view(View::Lower);
    let b = MatrixCl::from_slice(2, 1, &[1.0, 1.0]).unwrap();
    let err = k::tri_solve(&singular, k::Op::N, &b).unwrap_err();
    assert!(
        matches!(err, Error::CheckFailed { row: 1, col: 1, .. }),
        "{err}"
    );
    let l = MatrixCl::from_slice(2, 2, &[1.0, f64::INFINITY, 0.0, 1.0])
        .unwrap()
        .with_view(View::Lower);
    let err = k::tri_solve(&l, k::Op::T, &b).unwrap_err();
    assert!(
        matches!(
            err,
            Error::NotFinite {
                function: "tri_solve",
                argument: "a",
                row: 1,
                col: 0,
                ..
            }
        ),
        "{err}"
    );
    let nan_b = MatrixCl::from_slice(2, 1, &[1.0, f64::NAN]).unwrap();
    let l = MatrixCl::<f64>::identity(2).unwrap().with_view(View::Lower);
    let err = k::mdivide_left_tri(&l, &nan_b).unwrap_err();
    assert!(
        matches!(
            err,
            Error::NotFinite {
                function: "mdivide_left_tri",
                argument: "b",
                row: 1,
                ..
            }
        ),
        "{err}"
    );
    let three = MatrixCl::<f64>::zeros(3, 1).unwrap();
    assert!(matches!(
        k::tri_solve(&l, k::Op::N, &three).unwrap_err(),
        Error::DimensionMismatch { .. }
    ));
    let entire = MatrixCl::<f64>::identity(2)
        .unwrap()
        .with_view(View::Entire);
    assert!(matches!(
        k::tri_solve(&entire, k::Op::N, &b).unwrap_err(),
        Error::InvalidView { .. }
    ));
}

/// The solve without value checks gives the checked solve's result, and a
/// zero on the diagonal makes non-finite values instead of an error (the
/// reverse pass of `rev::tri_solve` uses it with the factor its forward
/// pass checked).
#[test]
fn prechecked_solve_matches_and_skips_the_value_checks() -> clfuse::Result<()> {
    use clfuse::clfuse_kernels::{Op, tri_solve, tri_solve_prechecked};
    let n = 33;
    let lower: Vec<f64> = (0..n * n)
        .map(|k| {
            let (i, j) = (k % n, k / n);
            if i == j {
                2.0 + i as f64 * 0.1
            } else if i > j {
                0.01 * ((i * 7 + j * 3) % 11) as f64
            } else {
                0.0
            }
        })
        .collect();
    let a = MatrixCl::from_slice(n, n, &lower)?.with_view(View::Lower);
    let b = MatrixCl::from_slice(n, 2, &(0..2 * n).map(|k| k as f64).collect::<Vec<_>>())?;
    for op in [Op::N, Op::T] {
        assert_eq!(
            tri_solve_prechecked(&a, op, &b)?.to_vec()?,
            tri_solve(&a, op, &b)?.to_vec()?
        );
    }
    let mut singular = lower.clone();
    singular[5 + n * 5] = 0.0;
    let s = MatrixCl::from_slice(n, n, &singular)?.with_view(View::Lower);
    assert!(tri_solve(&s, Op::N, &b).is_err());
    let x = tri_solve_prechecked(&s, Op::N, &b)?.to_vec()?;
    assert!(x.iter().any(|v| !v.is_finite()));
    Ok(())
}

#[test]
fn a_prepared_matrix_solves_again_in_both_orientations() {
    // 64 and below: the step kernel's copy; 65 to 512: the whole inverse
    // (one block); 513 and 1000: blocks of 256.
    for n in [1, 64, 65, 500, 513, 1000] {
        let mut rng = Rng::new(11 + n as u64);
        let l = rng.lower(n);
        let b = rng.matrix(n, 2);
        for (view, a) in [(View::Lower, l.clone()), (View::Upper, l.transpose())] {
            let device = to_device(&a).with_view(view);
            let (x, prepared) =
                k::tri_solve_and_prepare(&device, k::Op::N, &to_device(&b)).unwrap();
            let (n_solve, t_solve) = match view {
                View::Lower => (
                    l.solve_lower_triangular(&b).unwrap(),
                    l.transpose().solve_upper_triangular(&b).unwrap(),
                ),
                _ => (
                    l.transpose().solve_upper_triangular(&b).unwrap(),
                    l.solve_lower_triangular(&b).unwrap(),
                ),
            };
            assert_relative(&format!("{view:?} n={n}"), &to_host(&x), &n_solve, TOL);
            // Writing the original afterwards changes nothing prepared.
            device.copy_from(&to_device(&DMatrix::zeros(n, n))).unwrap();
            for (op, want) in [(k::Op::T, &t_solve), (k::Op::N, &n_solve)] {
                let again = prepared.solve(op, &to_device(&b)).unwrap();
                assert_relative(
                    &format!("{view:?} {op:?} again n={n}"),
                    &to_host(&again),
                    want,
                    TOL,
                );
            }
        }
    }
    let a = to_device(&Rng::new(3).lower(70)).with_view(View::Lower);
    let (_, prepared) =
        k::tri_solve_and_prepare(&a, k::Op::N, &to_device(&Rng::new(4).matrix(70, 1))).unwrap();
    let wrong = prepared
        .solve(k::Op::N, &to_device(&Rng::new(5).matrix(69, 1)))
        .unwrap_err();
    assert!(
        wrong.to_string().contains("PreparedTriangular::solve"),
        "{wrong}"
    );
}

/// `tri_inverse_prechecked` gives `tri_inverse`'s result without its checks,
/// for lower, upper and diagonal matrices, at sizes around the batched
/// inverse's blocks and doubling steps.
#[test]
fn prechecked_inverse_at_every_schedule() {
    for n in [0, 1, 31, 33, 64, 65, 257, 513, 1000] {
        let l = Rng::new(n as u64 + 7).lower(n);
        let want = reference_inverse(&l);
        for (view, a, want) in [
            (View::Lower, l.clone(), want.clone()),
            (View::Upper, l.transpose(), want.transpose()),
        ] {
            let inverse = k::tri_inverse_prechecked(&to_device(&a).with_view(view)).unwrap();
            assert_eq!(inverse.view(), view, "n = {n}");
            let what = format!("prechecked {view:?} inverse, n = {n}");
            assert_relative(&what, &to_host(&inverse), &want, TOL);
        }
    }
    let d = DMatrix::from_fn(70, 70, |i, j| if i == j { 2.0 + i as f64 } else { 5.0 });
    let inverse = k::tri_inverse_prechecked(&to_device(&d).with_view(View::Diagonal)).unwrap();
    assert_eq!(inverse.view(), View::Diagonal);
    let want = DMatrix::from_fn(
        70,
        70,
        |i, j| if i == j { 1.0 / (2.0 + i as f64) } else { 0.0 },
    );
    assert_relative(
        "prechecked diagonal inverse",
        &to_host(&inverse),
        &want,
        TOL,
    );
    let entire = to_device(&d);
    assert!(
        k::tri_inverse_prechecked(&entire).is_err(),
        "a view that is not triangular"
    );
}

/// `chol2inv(l) = (l lᵀ)⁻¹` and `tri_crossprod(w) = wᵀ w` against nalgebra,
/// symmetric to the last bit, at sizes around the GEMM's tiles.
#[test]
fn chol2inv_and_tri_crossprod() {
    for n in [0, 1, 31, 33, 64, 65, 257, 1000] {
        let l = Rng::new(n as u64 + 11).lower(n);
        let device_l = to_device(&l).with_view(View::Lower);
        let got = to_host(&k::chol2inv(&device_l).unwrap());
        let want = (&l * l.transpose())
            .try_inverse()
            .unwrap_or_else(|| DMatrix::zeros(n, n));
        assert_relative(&format!("chol2inv, n = {n}"), &got, &want, 1e-10);
        assert_eq!(got, got.transpose(), "chol2inv n = {n}: symmetric");
        let crossprod = to_host(&k::tri_crossprod(&device_l).unwrap());
        assert_relative(
            &format!("tri_crossprod, n = {n}"),
            &crossprod,
            &(l.transpose() * &l),
            TOL,
        );
    }
    // Errors name the function: a factor not marked lower, a zero pivot.
    let square = to_device(&DMatrix::from_element(3, 3, 1.0));
    let err = k::chol2inv(&square).unwrap_err().to_string();
    assert!(
        err.starts_with("chol2inv: ") && err.contains("Lower"),
        "{err}"
    );
    let singular = to_device(&DMatrix::from_fn(3, 3, |i, j| {
        if i == j && i != 1 { 1.0 } else { 0.0 }
    }));
    let err = k::chol2inv(&singular.with_view(View::Lower))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("chol2inv: ") && err.contains("[1, 1]"),
        "{err}"
    );
    let rectangular = to_device(&DMatrix::from_element(2, 3, 1.0)).with_view(View::Lower);
    assert!(k::tri_crossprod(&rectangular).is_err());
}
