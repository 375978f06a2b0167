//! The basic kernels of paper §3.5 against plain Rust loops, at 0, 1, odd
//! and tile-crossing sizes, with garbage outside views.

use crate::common;
use clfuse::clfuse_kernels::{self as k, Block, Mirror, Part};
use clfuse::prelude::*;
use common::linalg::*;
use nalgebra::DMatrix;

const SHAPES: [(usize, usize); 6] = [(0, 0), (1, 1), (31, 33), (33, 31), (1, 100), (257, 3)];

fn masked(m: &DMatrix<f64>, view: View) -> DMatrix<f64> {
    DMatrix::from_fn(m.nrows(), m.ncols(), |i, j| {
        if view.contains(i, j) { m[(i, j)] } else { 0.0 }
    })
}

#[test]
fn add_subtract_scalar_mul_honour_views() {
    for (r, c) in SHAPES {
        let mut rng = Rng::new((r * 7 + c) as u64);
        let (a, b) = (rng.matrix(r, c), rng.matrix(r, c));
        for (va, vb) in [
            (View::Entire, View::Entire),
            (View::Lower, View::Upper),
            (View::Diagonal, View::Lower),
        ] {
            let (da, db) = (to_device(&a).with_view(va), to_device(&b).with_view(vb));
            let sum = k::add(&da, &db).unwrap();
            assert_eq!(to_host(&sum), masked(&a, va) + masked(&b, vb));
            assert_eq!(sum.view(), va.union(vb));
            assert_eq!(
                to_host(&k::subtract(&da, &db).unwrap()),
                masked(&a, va) - masked(&b, vb)
            );
            let scaled = k::scalar_mul(&da, 2.5).unwrap();
            assert_eq!(to_host(&scaled), masked(&a, va) * 2.5);
            assert_eq!(scaled.view(), va);
        }
    }
    let a = MatrixCl::<f64>::zeros(2, 3).unwrap();
    let b = MatrixCl::<f64>::zeros(3, 2).unwrap();
    assert!(matches!(
        k::add(&a, &b).unwrap_err(),
        Error::DimensionMismatch { .. }
    ));
}

#[test]
fn diagonal_transpose_and_triangles() {
    for (r, c) in SHAPES {
        let a = Rng::new((r + c) as u64).matrix(r, c);
        let d = to_device(&a);
        k::scalar_mul_diagonal(&d, -2.0).unwrap();
        let want = DMatrix::from_fn(
            r,
            c,
            |i, j| if i == j { -2.0 * a[(i, j)] } else { a[(i, j)] },
        );
        assert_eq!(to_host(&d), want);
        let t = k::transpose(&to_device(&a)).unwrap();
        assert_eq!(to_host(&t), a.transpose());
        let t = k::transpose(&to_device(&a).with_view(View::Lower)).unwrap();
        assert_eq!(to_host(&t), masked(&a, View::Lower).transpose());
        assert_eq!(t.view(), View::Upper);
        for (part, view) in [
            (Part::All, View::Diagonal),
            (Part::StrictlyLower, View::Upper),
            (Part::StrictlyUpper, View::Lower),
        ] {
            let z = to_device(&a);
            k::zeros(&z, part).unwrap();
            let keep = |i: usize, j: usize| match part {
                Part::All => false,
                Part::StrictlyLower => i <= j,
                Part::StrictlyUpper => i >= j,
            };
            assert_eq!(
                to_host(&z),
                DMatrix::from_fn(r, c, |i, j| if keep(i, j) { a[(i, j)] } else { 0.0 })
            );
            assert_eq!(z.view(), view);
        }
    }
    for n in [0, 1, 33, 100] {
        let a = Rng::new(n as u64).matrix(n, n);
        for mirror in [Mirror::LowerToUpper, Mirror::UpperToLower] {
            let d = to_device(&a);
            k::triangular_transpose(&d, mirror).unwrap();
            let want = DMatrix::from_fn(n, n, |i, j| {
                let from_lower = mirror == Mirror::LowerToUpper;
                if (i < j) == from_lower && i != j {
                    a[(j, i)]
                } else {
                    a[(i, j)]
                }
            });
            assert_eq!(to_host(&d), want, "{mirror:?} n={n}");
        }
    }
}

#[test]
fn identities() {
    for n in [0, 1, 31, 33] {
        assert_eq!(
            to_host(&k::identity(n).unwrap()),
            DMatrix::<f64>::identity(n, n)
        );
        let batch = to_host(&k::batch_identity(n, 3).unwrap());
        for b in 0..3 {
            assert_eq!(
                batch.columns(b * n, n).into_owned(),
                DMatrix::<f64>::identity(n, n)
            );
        }
    }
}

#[test]
fn sub_block_copies_rectangles_and_triangles() {
    let src = Rng::new(1).matrix(40, 35);
    for view in [View::Entire, View::Lower, View::Upper] {
        let dst_host = Rng::new(2).matrix(50, 45);
        let dst = to_device(&dst_host);
        k::sub_block(
            &dst,
            10,
            3,
            &to_device(&src),
            Block::new(5, 2, 33, 31),
            view,
        )
        .unwrap();
        let got = to_host(&dst);
        let want = DMatrix::from_fn(50, 45, |i, j| {
            let inside =
                (10..43).contains(&i) && (3..34).contains(&j) && view.contains(i - 10, j - 3);
            if inside {
                src[(i - 10 + 5, j - 3 + 2)]
            } else {
                dst_host[(i, j)]
            }
        });
        assert_eq!(got, want, "{view:?}");
    }
    let small = MatrixCl::<f64>::zeros(3, 3).unwrap();
    let err = k::sub_block(
        &small,
        2,
        2,
        &small.try_clone().unwrap(),
        Block::new(0, 0, 2, 2),
        View::Entire,
    )
    .unwrap_err();
    assert!(err.to_string().contains("does not fit"), "{err}");
    let err = k::sub_block(&small, 0, 0, &small, Block::new(0, 0, 1, 1), View::Entire).unwrap_err();
    assert!(err.to_string().contains("different matrices"), "{err}");
}

#[test]
fn checks_report_the_first_offender() {
    let mut a = Rng::new(3).matrix(33, 31);
    k::check_nan("f", "a", &to_device(&a)).unwrap();
    a[(20, 5)] = f64::NAN;
    a[(2, 9)] = f64::NAN;
    let err = k::check_nan("f", "a", &to_device(&a)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::NaN {
                function: "f",
                argument: "a",
                row: 20,
                col: 5
            }
        ),
        "{err}"
    );
    // Outside the view: not checked.
    let upper_nan_only = DMatrix::from_fn(4, 4, |i, j| if i < j { f64::NAN } else { 1.0 });
    k::check_nan("f", "a", &to_device(&upper_nan_only).with_view(View::Lower)).unwrap();

    // Tiles of 32: none, one partial, one full with a partial beside it.
    for n in [0, 1, 31, 33] {
        k::check_symmetric("f", "s", &to_device(&toeplitz(n)), 1e-12).unwrap();
    }
    let s = toeplitz(33);
    let mut s2 = s.clone();
    s2[(3, 30)] += 1e-3;
    let err = k::check_symmetric("f", "s", &to_device(&s2), 1e-12).unwrap_err();
    assert!(
        matches!(
            err,
            Error::NotSymmetric {
                row: 30,
                col: 3,
                ..
            }
        ),
        "{err}"
    );
    k::check_symmetric("f", "s", &to_device(&s2), 1e-3).unwrap();

    k::check_diagonal_zeros("f", "d", &to_device(&s)).unwrap();
    let mut d = s.clone();
    d[(17, 17)] = 0.0;
    let err = k::check_diagonal_zeros("f", "d", &to_device(&d)).unwrap_err();
    assert!(
        matches!(
            err,
            Error::CheckFailed {
                row: 17,
                col: 17,
                ..
            }
        ),
        "{err}"
    );
}
