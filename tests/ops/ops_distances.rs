//! The Gaussian-process pieces against plain loops and nalgebra at odd
//! sizes: pairwise squared distances, the log-determinant of a Cholesky
//! factor, and solves with the factor.

use crate::common;
use clfuse::Result;
use clfuse::prelude::*;
use common::linalg::*;
use nalgebra::DMatrix;

#[test]
fn squared_distances_match_a_loop() -> Result<()> {
    for (n, m, d) in [
        (0, 3, 2),
        (1, 1, 1),
        (31, 33, 3),
        (100, 257, 14),
        (513, 1, 2),
    ] {
        let mut rng = Rng::new((n + 7 * m + d) as u64);
        let (x, y) = (rng.matrix(n, d), rng.matrix(m, d));
        let got = to_host(&squared_distance(&to_device(&x), &to_device(&y))?.eval()?);
        let want = DMatrix::from_fn(n, m, |i, j| {
            (0..d).map(|k| (x[(i, k)] - y[(j, k)]).powi(2)).sum::<f64>()
        });
        assert_eq!(got.shape(), (n, m));
        for (g, w) in got.iter().zip(want.iter()) {
            assert!((g - w).abs() <= 1e-12 * d as f64, "{n}x{m}x{d}: {g} vs {w}");
        }
    }
    // Of a set with itself: symmetric, with a zero diagonal up to rounding
    // and never negative.
    let x = Rng::new(3).matrix(40, 5);
    let dx = to_device(&x);
    let d2 = to_host(&squared_distance(&dx, &dx)?.eval()?);
    assert!(d2.iter().all(|v| *v >= 0.0));
    assert!((0..40).all(|i| d2[(i, i)] < 1e-12));
    assert_eq!(d2, d2.transpose());
    // Fused further: a squared-exponential kernel in the same kernel as the distances' sum.
    let k = exp(-0.5f64 * squared_distance(&dx, &dx)?).eval()?;
    assert!(
        to_host(&k)
            .iter()
            .zip(d2.iter())
            .all(|(k, d)| (k - (-0.5 * d).exp()).abs() < 1e-12)
    );
    Ok(())
}

#[test]
fn squared_distance_rejects_mismatched_dimensions() {
    let x = MatrixCl::<f64>::zeros(3, 2).unwrap();
    let y = MatrixCl::<f64>::zeros(3, 4).unwrap();
    let err = squared_distance(&x, &y).map(|_| ()).unwrap_err();
    assert!(matches!(err, Error::DimensionMismatch { .. }), "{err}");
    assert!(err.to_string().contains("squared_distance"), "{err}");
}

#[test]
fn cholesky_pieces_match_nalgebra() -> Result<()> {
    for (n, cols) in [(0, 1), (1, 1), (33, 3), (257, 1)] {
        let mut rng = Rng::new(n as u64 + 11);
        let l = rng.lower(n);
        let b = rng.matrix(n, cols);
        let dl = to_device(&l).with_view(View::Lower);
        let logdet = log_determinant_cholesky(&dl).eval()?.to_vec()?[0];
        let want: f64 = 2.0 * (0..n).map(|i| l[(i, i)].ln()).sum::<f64>();
        assert!(
            (logdet - want).abs() <= 1e-12 * want.abs().max(1.0),
            "n={n}: {logdet} vs {want}"
        );
        let x = to_host(&cholesky_solve(&dl, &to_device(&b))?);
        let a = &l * l.transpose();
        assert_relative(&format!("cholesky_solve n={n}"), &(&a * &x), &b, 1e-10);
    }
    let entire = MatrixCl::<f64>::identity(2)?.with_view(View::Entire);
    let b = MatrixCl::<f64>::zeros(2, 1)?;
    assert!(matches!(
        cholesky_solve(&entire, &b).unwrap_err(),
        Error::InvalidView { .. }
    ));
    Ok(())
}
