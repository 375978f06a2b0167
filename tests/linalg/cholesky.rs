//! Blocked Cholesky against nalgebra on the paper's Toeplitz SPD matrices
//! (A_ij = n - |i - j|, A_ii = n²). Bound: max |L - L_ref| ≤ 1e-11 · max |L_ref|;
//! at n ≥ 1000, L·(Lᵀ·x) = A·x for random x with the same bound.

use crate::common;
use clfuse::clfuse_kernels::{self as k, CholeskyOptions};
use clfuse::prelude::*;
use common::linalg::*;
use common::soak::sizes_and_soaked;

const TOL: f64 = 1e-11;

fn check(n: usize, options: &CholeskyOptions) {
    let a = toeplitz(n);
    let l = k::cholesky_decompose_with(&to_device(&a), options).unwrap();
    assert_eq!(l.view(), View::Lower);
    let got = to_host(&l);
    assert!(
        (0..n).all(|j| (0..j).all(|i| got[(i, j)] == 0.0)),
        "upper triangle must be zero"
    );
    if n >= 1000 {
        let x = Rng::new(1).matrix(n, 1);
        assert_relative(
            &format!("L·Lᵀ·x n={n}"),
            &(&got * (got.transpose() * &x)),
            &(&a * &x),
            TOL,
        );
    } else {
        let want = a.clone().cholesky().expect("SPD").l();
        assert_relative(&format!("cholesky n={n}"), &got, &want, TOL);
    }
}

#[test]
fn toeplitz_at_every_size() {
    // 2049, a recursion one level deeper, is slow on PoCL with the tests'
    // unoptimized kernels: soak runs only.
    let sizes = sizes_and_soaked(
        "cholesky::toeplitz_at_every_size",
        &[0, 1, 2, 31, 32, 33, 64, 65, 100, 129, 257, 1000],
        &[2049],
    );
    for n in sizes {
        check(n, &CholeskyOptions::default());
    }
}

#[test]
fn random_spd_matrices_in_every_schedule() {
    // Halved panels (the GPU's schedule) and quarters, leaves of 64 and of
    // odd widths, with and without lookahead (updates split between two
    // queues), on random SPD matrices (B·Bᵀ + n·I), whose updates change
    // every entry (the Toeplitz matrices' are smooth).
    let schedules = [
        (2, 64, 0),
        (2, 64, 1),
        (4, 64, 0),
        (4, 64, 1),
        (2, 16, 1),
        (2, 50, 0),
        (3, 50, 1),
        (2, 16, 100),
    ];
    for (partition, min_l11_size, lookahead) in schedules {
        let options = CholeskyOptions {
            partition,
            min_l11_size,
            lookahead,
            ..Default::default()
        };
        for n in [65, 100, 128, 129, 191, 257, 400] {
            let b = Rng::new(n as u64).matrix(n, n);
            let a = &b * b.transpose() + nalgebra::DMatrix::<f64>::identity(n, n) * n as f64;
            let l = k::cholesky_decompose_with(&to_device(&a), &options).unwrap();
            let want = a.cholesky().expect("SPD").l();
            assert_relative(
                &format!("cholesky n={n} {options:?}"),
                &to_host(&l),
                &want,
                TOL,
            );
        }
    }
}

#[test]
fn single_precision_factors_too() {
    // The leaf and GEMM kernels compiled for float; bound 1e-5 relative.
    for n in [1, 65, 200] {
        let a = toeplitz(n);
        let host: Vec<f32> = a.iter().map(|v| *v as f32).collect();
        let l = k::cholesky_decompose(&MatrixCl::from_slice(n, n, &host).unwrap()).unwrap();
        let got = l.to_vec().unwrap();
        let want = a.clone().cholesky().expect("SPD").l();
        let scale = want.amax();
        for j in 0..n {
            for i in 0..n {
                let err = (got[i + n * j] as f64 - want[(i, j)]).abs();
                assert!(
                    err <= 1e-5 * scale,
                    "n={n} ({i}, {j}): {} vs {}",
                    got[i + n * j],
                    want[(i, j)]
                );
            }
        }
    }
}

#[test]
fn partition_and_block_size_are_tunable() {
    // 128 takes the global-memory block kernel (and the batched inverse for
    // the blocks' inverses); the others the register leaf kernel.
    for (partition, min_l11_size) in [(2, 1), (2, 16), (3, 33), (8, 64), (4, 128)] {
        let options = CholeskyOptions {
            partition,
            min_l11_size,
            ..Default::default()
        };
        for n in [33, 257] {
            check(n, &options);
        }
    }
}

#[test]
fn lower_view_input_is_the_symmetric_matrix() {
    let n = 100;
    let a = toeplitz(n);
    let mut lower_only = a.clone();
    for j in 1..n {
        for i in 0..j {
            lower_only[(i, j)] = -1e300;
        }
    }
    let l = k::cholesky_decompose(&to_device(&lower_only).with_view(View::Lower)).unwrap();
    assert_relative("lower input", &to_host(&l), &a.cholesky().unwrap().l(), TOL);
}

#[test]
fn not_positive_definite_names_the_pivot() {
    // One pivot of 300 is negative: in the first or second half of the
    // first leaf (10, 40) or of a later one (200, 250); every leaf size
    // finds it, with lookahead too (later columns updated on a second
    // queue after the failed pivot).
    let n = 300;
    for pivot in [10, 40, 200, 250] {
        let mut a = nalgebra::DMatrix::<f64>::identity(n, n);
        a[(pivot, pivot)] = -1.0;
        for (min_l11_size, lookahead) in [(64, 0), (64, 1), (16, 0), (100, 0)] {
            let options = CholeskyOptions {
                min_l11_size,
                lookahead,
                ..Default::default()
            };
            let err = k::cholesky_decompose_with(&to_device(&a), &options).unwrap_err();
            assert!(
                matches!(err, Error::NotPositiveDefinite { index, .. } if index == pivot),
                "{err}"
            );
        }
    }
    let zero = MatrixCl::<f64>::zeros(1, 1).unwrap();
    assert!(matches!(
        k::cholesky_decompose(&zero).unwrap_err(),
        Error::NotPositiveDefinite { index: 0, .. }
    ));
}

#[test]
fn not_symmetric_and_nan_are_reported_with_positions() {
    let n = 50;
    let mut a = toeplitz(n);
    a[(30, 20)] += 1.0;
    let err = k::cholesky_decompose(&to_device(&a)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::NotSymmetric {
                row: 30,
                col: 20,
                ..
            }
        ),
        "{err}"
    );
    // In the edge tile of a 100 x 100 matrix, across a tile boundary, next
    // to the diagonal; with two, the first in column-major order.
    let n_tiles = 100;
    for perturbed in [
        &[(99, 70)][..],
        &[(32, 31)],
        &[(1, 0)],
        &[(99, 70), (40, 33)],
        &[(64, 0), (33, 32)],
    ] {
        let mut a = toeplitz(n_tiles);
        for &(row, col) in perturbed {
            a[(col, row)] -= 0.5;
        }
        let (row, col) = *perturbed
            .iter()
            .min_by_key(|(r, c)| r + n_tiles * c)
            .unwrap();
        let err = k::cholesky_decompose(&to_device(&a)).unwrap_err();
        assert!(
            matches!(err, Error::NotSymmetric { row: r, col: c, .. } if (r, c) == (row, col)),
            "{perturbed:?}: {err}"
        );
    }
    let mut a = toeplitz(n);
    a[(7, 9)] = f64::NAN;
    a[(9, 7)] = f64::NAN;
    let err = k::cholesky_decompose(&to_device(&a)).unwrap_err();
    assert!(
        matches!(err, Error::NotFinite { row: 9, col: 7, value, .. } if value.is_nan()),
        "{err}"
    );
    assert!(err.to_string().contains("cholesky_decompose"));
}

/// The lower triangle is checked on the copy the factorization works in;
/// a NaN above the diagonal shows as asymmetry and is then named: in the
/// upper triangle only, in the lower triangle only (of a whole matrix and
/// of a `Lower` view), on the diagonal, in the first leaf and in rows that
/// later leaves reach.
#[test]
fn nan_anywhere_is_reported_where_it_is() {
    let n = 200;
    for (row, col) in [
        (0, 0),
        (5, 3),
        (3, 5),
        (70, 10),
        (10, 70),
        (199, 198),
        (150, 150),
    ] {
        let mut a = toeplitz(n);
        a[(row, col)] = f64::NAN;
        let err = k::cholesky_decompose(&to_device(&a)).unwrap_err();
        assert!(
            matches!(err, Error::NotFinite { row: r, col: c, .. } if (r, c) == (row, col)),
            "NaN at ({row}, {col}): {err}"
        );
        let lower = to_device(&a).with_view(View::Lower);
        let result = k::cholesky_decompose(&lower);
        if row >= col {
            let err = result.unwrap_err();
            assert!(
                matches!(err, Error::NotFinite { row: r, col: c, .. } if (r, c) == (row, col)),
                "NaN at ({row}, {col}) of a Lower view: {err}"
            );
        } else {
            // Above the view: not part of the matrix.
            let l = to_host(&result.unwrap());
            let want = toeplitz(n).cholesky().expect("SPD").l();
            assert_relative("cholesky beside a NaN outside the view", &l, &want, TOL);
        }
    }
}

#[test]
fn bad_arguments() {
    let rect = MatrixCl::<f64>::zeros(2, 3).unwrap();
    assert!(
        k::cholesky_decompose(&rect)
            .unwrap_err()
            .to_string()
            .contains("square")
    );
    let a = MatrixCl::<f64>::identity(2).unwrap();
    let bad = CholeskyOptions {
        partition: 1,
        ..Default::default()
    };
    assert!(matches!(
        k::cholesky_decompose_with(&a, &bad).unwrap_err(),
        Error::InvalidArgument { .. }
    ));
    let upper = MatrixCl::<f64>::zeros(2, 2).unwrap().with_view(View::Upper);
    assert!(matches!(
        k::cholesky_decompose(&upper).unwrap_err(),
        Error::InvalidView { .. }
    ));
}
