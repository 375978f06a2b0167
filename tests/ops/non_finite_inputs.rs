//! NaN, inf and -inf reaching the linear-algebra leaves are errors naming
//! the function the user called, the argument, the position and the value
//! (Stan's `check_finite`), wherever they sit in the part the leaf reads;
//! values outside a declared view are not part of the matrix.

use crate::common;
use clfuse::Error;
use clfuse::Result;
use clfuse::clfuse_kernels as k;
use clfuse::prelude::*;
use common::linalg::*;
use nalgebra::DMatrix;

const BAD: [f64; 3] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY];

fn same_value(got: f64, want: f64) -> bool {
    got == want || (got.is_nan() && want.is_nan())
}

/// Asserts `err` is `NotFinite` for `function`/`argument` at (`row`, `col`) holding `value`.
fn assert_not_finite(
    err: Error,
    function: &str,
    argument: &str,
    (row, col): (usize, usize),
    value: f64,
) {
    match &err {
        Error::NotFinite {
            function: f,
            argument: a,
            row: r,
            col: c,
            value: v,
        } if *f == function
            && *a == argument
            && (*r, *c) == (row, col)
            && same_value(*v, value) => {}
        _ => panic!("expected {function}: {argument}[{row}, {col}] = {value}, got {err}"),
    }
    assert!(err.to_string().contains("must be finite"), "{err}");
}

/// A well-conditioned lower-triangular matrix.
fn lower(n: usize) -> DMatrix<f64> {
    DMatrix::from_fn(n, n, |i, j| {
        if i == j {
            2.0 + (i % 3) as f64
        } else if i > j {
            ((i * 7 + j * 3) % 5) as f64 / 10.0 - 0.2
        } else {
            0.0
        }
    })
}

#[test]
fn cholesky_refuses_non_finite_input() {
    let n = 70;
    for value in BAD {
        for (row, col) in [(0, 0), (5, 3), (69, 69), (40, 2), (3, 60)] {
            let mut a = toeplitz(n);
            a[(row, col)] = value;
            a[(col, row)] = value;
            let (first_row, first_col) = (row.max(col), row.min(col));
            let err = k::cholesky_decompose(&to_device(&a)).unwrap_err();
            assert_not_finite(
                err,
                "cholesky_decompose",
                "a",
                (first_row, first_col),
                value,
            );
            // Only above the diagonal (asymmetric input): still named.
            let mut upper_only = toeplitz(n);
            upper_only[(row.min(col), row.max(col))] = value;
            if row != col {
                let err = k::cholesky_decompose(&to_device(&upper_only)).unwrap_err();
                assert_not_finite(
                    err,
                    "cholesky_decompose",
                    "a",
                    (row.min(col), row.max(col)),
                    value,
                );
                // Above a `Lower` view it is not part of the matrix.
                let l = k::cholesky_decompose(&to_device(&upper_only).with_view(View::Lower))
                    .expect("the lower triangle is clean");
                let want = toeplitz(n).cholesky().expect("SPD").l();
                assert_relative(
                    "cholesky beside inf outside the view",
                    &to_host(&l),
                    &want,
                    1e-11,
                );
            }
        }
    }
}

#[test]
fn tri_inverse_refuses_non_finite_input() {
    for n in [1, 31, 33, 100] {
        for value in BAD {
            let (row, col) = (n - 1, n / 2);
            let mut l = lower(n);
            l[(row, col)] = value;
            let err = k::tri_inverse(&to_device(&l).with_view(View::Lower)).unwrap_err();
            assert_not_finite(err, "tri_inverse", "a", (row, col), value);
            // The same matrix as an upper one: its position in the user's matrix.
            let u = l.transpose();
            let err = k::tri_inverse(&to_device(&u).with_view(View::Upper)).unwrap_err();
            assert_not_finite(err, "tri_inverse", "a", (col, row), value);
            // Outside the view: ignored.
            let mut clean = lower(n);
            if n > 1 {
                clean[(0, n - 1)] = value;
            }
            let inv = k::tri_inverse(&to_device(&clean).with_view(View::Lower)).unwrap();
            let want = lower(n).try_inverse().expect("invertible");
            assert_relative(
                "inverse beside NaN outside the view",
                &to_host(&inv),
                &want,
                1e-12,
            );
        }
    }
}

#[test]
fn solves_name_the_function_called() {
    let n = 33;
    let b = DMatrix::from_fn(n, 2, |i, j| (i + j) as f64 / 10.0);
    let mut bad_a = lower(n);
    bad_a[(20, 4)] = f64::INFINITY;
    let a_dev = to_device(&bad_a).with_view(View::Lower);
    let err = k::mdivide_left_tri(&a_dev, &to_device(&b)).unwrap_err();
    assert_not_finite(err, "mdivide_left_tri", "a", (20, 4), f64::INFINITY);
    let bt = b.transpose();
    let err = k::mdivide_right_tri(&to_device(&bt), &a_dev).unwrap_err();
    assert_not_finite(err, "mdivide_right_tri", "a", (20, 4), f64::INFINITY);
    let err = k::mdivide_left_tri_identity(&a_dev).unwrap_err();
    assert_not_finite(
        err,
        "mdivide_left_tri_identity",
        "a",
        (20, 4),
        f64::INFINITY,
    );

    let good_a = to_device(&lower(n)).with_view(View::Lower);
    let mut bad_b = b.clone();
    bad_b[(7, 1)] = f64::NAN;
    let err = k::mdivide_left_tri(&good_a, &to_device(&bad_b)).unwrap_err();
    assert_not_finite(err, "mdivide_left_tri", "b", (7, 1), f64::NAN);
    let err = k::mdivide_right_tri(&to_device(&bad_b.transpose()), &good_a).unwrap_err();
    assert_not_finite(err, "mdivide_right_tri", "b", (1, 7), f64::NAN);

    // A zero on the diagonal: singular, named by the function called.
    let mut singular = lower(n);
    singular[(9, 9)] = 0.0;
    let err = k::mdivide_left_tri(&to_device(&singular).with_view(View::Lower), &to_device(&b))
        .unwrap_err();
    assert!(
        matches!(&err, Error::CheckFailed { function, row: 9, col: 9, .. } if function == "mdivide_left_tri"),
        "{err}"
    );
    // Clean inputs still solve.
    let x = k::mdivide_left_tri(&good_a, &to_device(&b)).unwrap();
    let want = lower(n).solve_lower_triangular(&b).expect("solvable");
    assert_relative("solve", &to_host(&x), &want, 1e-12);
}

#[test]
fn adjoints_refuse_non_finite_input() {
    let n = 40;
    let l = toeplitz(n).cholesky().expect("SPD").l();
    let adj_l = DMatrix::from_fn(n, n, |i, j| {
        if i >= j {
            1.0 / (1 + i + j) as f64
        } else {
            0.0
        }
    });
    let (l_dev, adj_dev) = (
        to_device(&l).with_view(View::Lower),
        to_device(&adj_l).with_view(View::Lower),
    );
    assert!(k::cholesky_adjoint(&l_dev, &adj_dev).is_ok());
    for value in BAD {
        let mut bad = l.clone();
        bad[(30, 10)] = value;
        let err =
            k::cholesky_adjoint(&to_device(&bad).with_view(View::Lower), &adj_dev).unwrap_err();
        assert_not_finite(err, "cholesky_adjoint", "l", (30, 10), value);
        let mut bad = adj_l.clone();
        bad[(39, 0)] = value;
        let err = k::cholesky_adjoint(&l_dev, &to_device(&bad).with_view(View::Lower)).unwrap_err();
        assert_not_finite(err, "cholesky_adjoint", "adj_l", (39, 0), value);
    }
    let mut zero = l.clone();
    zero[(5, 5)] = 0.0;
    let err = k::cholesky_adjoint(&to_device(&zero).with_view(View::Lower), &adj_dev).unwrap_err();
    assert!(
        matches!(err, Error::CheckFailed { row: 5, col: 5, .. }),
        "{err}"
    );

    let a = to_device(&lower(n)).with_view(View::Lower);
    let b = to_device(&DMatrix::from_element(n, 3, 0.5));
    let adj_c = to_device(&DMatrix::from_element(n, 3, 1.0));
    assert!(k::mdivide_left_tri_adjoint(&a, &b, &adj_c).is_ok());
    let mut bad_a = lower(n);
    bad_a[(12, 11)] = f64::NEG_INFINITY;
    let err = k::mdivide_left_tri_adjoint(&to_device(&bad_a).with_view(View::Lower), &b, &adj_c)
        .unwrap_err();
    assert_not_finite(
        err,
        "mdivide_left_tri_adjoint",
        "a",
        (12, 11),
        f64::NEG_INFINITY,
    );
    let mut bad_adj = DMatrix::from_element(n, 3, 1.0);
    bad_adj[(0, 2)] = f64::NAN;
    let err = k::mdivide_left_tri_adjoint(&a, &b, &to_device(&bad_adj)).unwrap_err();
    assert_not_finite(err, "mdivide_left_tri_adjoint", "adj_c", (0, 2), f64::NAN);
}

#[test]
fn check_finite_reports_the_first_bad_element() -> Result<()> {
    let a = MatrixCl::from_slice(2, 3, &[1.0f32, 2.0, 3.0, f32::NEG_INFINITY, f32::NAN, 6.0])?;
    let err = k::check_finite("f", "x", &a).unwrap_err();
    assert_not_finite(err, "f", "x", (1, 1), f64::NEG_INFINITY);
    let clean = MatrixCl::from_slice(1, 2, &[1.0f64, f64::MAX])?;
    k::check_finite("f", "x", &clean)?;
    let empty = MatrixCl::<f64>::zeros(0, 4)?;
    k::check_finite("f", "x", &empty)?;
    Ok(())
}
