//! `log_sum_exp_rows_of_product` against a plain loop (max factored out),
//! at odd sizes: rows around the 512 a work-group takes, inner dimensions
//! odd and even up to the limit, column counts around the 32 staged at once.

use crate::common;
use clfuse::clfuse_kernels as k;
use clfuse::prelude::*;
use common::linalg::*;
use nalgebra::DMatrix;

fn reference(x: &DMatrix<f64>, w: &DMatrix<f64>, c: &DMatrix<f64>) -> Vec<f64> {
    let product = x * w;
    (0..x.nrows())
        .map(|i| {
            let terms: Vec<f64> = (0..w.ncols())
                .map(|j| product[(i, j)] + c[(0, j)])
                .collect();
            let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if top == f64::NEG_INFINITY {
                return top;
            }
            top + terms.iter().map(|t| (t - top).exp()).sum::<f64>().ln()
        })
        .collect()
}

#[test]
fn matches_a_plain_loop_at_odd_sizes() {
    for (n, q, cols) in [
        (1, 1, 1),
        (31, 2, 33),
        (33, 7, 31),
        (64, 3, 32),
        (65, 4, 64),
        (257, 28, 256),
        (1000, 28, 256),
        (511, 64, 5),
        (513, 13, 64),
        (5001, 28, 100),
    ] {
        let mut rng = Rng::new((n * 7 + q) as u64);
        let x = rng.matrix(n, q);
        let w = rng.matrix(q, cols) * 3.0;
        let c = rng.matrix(1, cols);
        let got = k::log_sum_exp_rows_of_product(&to_device(&x), &to_device(&w), &to_device(&c))
            .unwrap()
            .to_vec()
            .unwrap();
        let want = reference(&x, &w, &c);
        for (i, (g, r)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - r).abs() <= 1e-12 * r.abs().max(1.0),
                "n={n} q={q} k={cols} row {i}: {g} vs {r}"
            );
        }
    }
}

#[test]
fn large_terms_infinities_and_empty_shapes() {
    // Terms near 700 would overflow exp; -inf adds nothing; a row of -inf
    // is -inf; +inf stays; NaN propagates.
    let x = DMatrix::from_column_slice(5, 1, &[1.0, 1.0, 1.0, 1.0, 1.0]);
    let w = DMatrix::from_row_slice(1, 3, &[0.0, 0.0, 0.0]);
    let inf = f64::INFINITY;
    let rows = [
        [700.0, 701.0, 699.0],
        [0.0, -inf, 0.0],
        [-inf, -inf, -inf],
        [inf, 1.0, inf],
        [1.0, f64::NAN, 2.0],
    ];
    for (i, row) in rows.iter().enumerate() {
        let c = DMatrix::from_row_slice(1, 3, row);
        let got = k::log_sum_exp_rows_of_product(&to_device(&x), &to_device(&w), &to_device(&c))
            .unwrap()
            .to_vec()
            .unwrap();
        let want = reference(&x, &w, &c)[0];
        match i {
            0 => assert!((got[0] - want).abs() < 1e-12 && want.is_finite()),
            1 => assert!((got[0] - 2f64.ln()).abs() < 1e-15),
            2 => assert_eq!(got[0], f64::NEG_INFINITY),
            3 => assert_eq!(got[0], inf),
            _ => assert!(got[0].is_nan()),
        }
    }
    let empty = k::log_sum_exp_rows_of_product(
        &MatrixCl::zeros(3, 2).unwrap(),
        &MatrixCl::zeros(2, 0).unwrap(),
        &MatrixCl::zeros(1, 0).unwrap(),
    )
    .unwrap()
    .to_vec()
    .unwrap();
    assert_eq!(empty, vec![f64::NEG_INFINITY; 3]);
    // q = 0: the product is zero, each row log Σ exp(c_j).
    let c = DMatrix::from_row_slice(1, 2, &[0.0, 1.0]);
    let no_inner = k::log_sum_exp_rows_of_product(
        &MatrixCl::zeros(2, 0).unwrap(),
        &MatrixCl::zeros(0, 2).unwrap(),
        &to_device(&c),
    )
    .unwrap()
    .to_vec()
    .unwrap();
    assert!(
        no_inner
            .iter()
            .all(|v| (v - (1.0 + 1f64.exp()).ln()).abs() < 1e-12)
    );
    let no_rows = k::log_sum_exp_rows_of_product(
        &MatrixCl::zeros(0, 2).unwrap(),
        &MatrixCl::zeros(2, 4).unwrap(),
        &MatrixCl::zeros(1, 4).unwrap(),
    )
    .unwrap();
    assert_eq!(no_rows.rows(), 0);
}

#[test]
fn refuses_bad_shapes_views_and_wide_x() {
    let x = MatrixCl::<f64>::zeros(4, 3).unwrap();
    let w = MatrixCl::<f64>::zeros(3, 5).unwrap();
    let c = MatrixCl::<f64>::zeros(1, 5).unwrap();
    let err = |r: clfuse::Result<MatrixCl<f64>>| r.unwrap_err().to_string();
    assert!(
        err(k::log_sum_exp_rows_of_product(
            &x,
            &MatrixCl::zeros(2, 5).unwrap(),
            &c
        ))
        .contains("log_sum_exp_rows_of_product")
    );
    assert!(
        err(k::log_sum_exp_rows_of_product(
            &x,
            &w,
            &MatrixCl::zeros(1, 4).unwrap()
        ))
        .contains("1 x 5")
    );
    let wide = MatrixCl::<f64>::zeros(4, 65).unwrap();
    assert!(
        err(k::log_sum_exp_rows_of_product(
            &wide,
            &MatrixCl::zeros(65, 5).unwrap(),
            &c
        ))
        .contains("65 columns")
    );
    let lower = MatrixCl::<f64>::zeros(3, 3).unwrap().with_view(View::Lower);
    assert!(
        err(k::log_sum_exp_rows_of_product(
            &MatrixCl::zeros(3, 3).unwrap(),
            &lower,
            &MatrixCl::zeros(1, 3).unwrap()
        ))
        .contains("Entire")
    );
}
