//! `log_softmax_rows_of_product` and `softmax_rows_of_product` (and their
//! row normalisers) against a plain loop (max factored out),
//! at odd sizes: rows around the 32 a work-group takes, column counts
//! around the 64 each fragment set covers and up to the limit, inner
//! dimensions odd and even up to theirs.

use crate::common;
use clfuse::clfuse_kernels as k;
use clfuse::prelude::*;
use common::linalg::*;
use nalgebra::DMatrix;

/// The log-softmax of each row of `x·w + c` and each row's normaliser, row
/// by row on the host.
fn reference(x: &DMatrix<f64>, w: &DMatrix<f64>, c: &DMatrix<f64>) -> (DMatrix<f64>, Vec<f64>) {
    let terms = x * w + DMatrix::from_fn(x.nrows(), w.ncols(), |_, j| c[(0, j)]);
    let mut out = terms.clone();
    let mut normalisers = Vec::new();
    for (i, row) in terms.row_iter().enumerate() {
        let top = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let lse = top + row.iter().map(|t| (t - top).exp()).sum::<f64>().ln();
        for j in 0..row.len() {
            out[(i, j)] = row[j] - lse;
        }
        normalisers.push(lse);
    }
    (out, normalisers)
}

/// The device's result and normalisers, the softmax itself if asked.
fn run_form(
    x: &DMatrix<f64>,
    w: &DMatrix<f64>,
    c: &DMatrix<f64>,
    softmax: bool,
) -> clfuse::Result<(DMatrix<f64>, Vec<f64>)> {
    let out = MatrixCl::<f64>::zeros(x.nrows(), w.ncols())?;
    let form = if softmax {
        k::softmax_rows_of_product
    } else {
        k::log_softmax_rows_of_product
    };
    let normalisers = form(&to_device(x), &to_device(w), &to_device(c), &out)?;
    Ok((
        DMatrix::from_column_slice(out.rows(), out.cols(), &out.to_vec()?),
        normalisers.to_vec()?,
    ))
}

fn close(g: f64, r: f64) -> bool {
    (g - r).abs() <= 1e-12 * r.abs().max(1.0)
}

#[test]
fn matches_a_plain_loop_at_odd_sizes() -> clfuse::Result<()> {
    for (n, q, cols) in [
        (1, 1, 1),
        (31, 2, 33),
        (33, 7, 31),
        (64, 3, 64),
        (65, 4, 65),
        (47, 28, 129),
        (257, 28, 256),
        (1000, 28, 256),
        (511, 64, 5),
        (70, 119, 256),
        (33, 128, 64),
        (100, 13, 512),
        (5001, 28, 100),
    ] {
        let mut rng = Rng::new((n * 11 + q) as u64);
        let x = rng.matrix(n, q);
        let w = rng.matrix(q, cols) * 3.0;
        let c = rng.matrix(1, cols);
        let (got, normalisers) = run_form(&x, &w, &c, false)?;
        let (probabilities, softmax_normalisers) = run_form(&x, &w, &c, true)?;
        let (want, want_normalisers) = reference(&x, &w, &c);
        for i in 0..n {
            assert!(
                close(normalisers[i], want_normalisers[i])
                    && close(softmax_normalisers[i], want_normalisers[i]),
                "n={n} q={q} k={cols} normaliser {i}: {} vs {}",
                normalisers[i],
                want_normalisers[i]
            );
            for j in 0..cols {
                let (g, r) = (got[(i, j)], want[(i, j)]);
                assert!(close(g, r), "n={n} q={q} k={cols} ({i}, {j}): {g} vs {r}");
                let (g, r) = (probabilities[(i, j)], r.exp());
                assert!(
                    (g - r).abs() <= 1e-13,
                    "softmax n={n} q={q} k={cols} ({i}, {j}): {g} vs {r}"
                );
            }
        }
    }
    Ok(())
}

#[test]
fn large_terms_infinities_and_empty_shapes() -> clfuse::Result<()> {
    // Terms near 700 would overflow exp; a -inf term is -inf and adds
    // nothing; a row of -inf or with +inf gives what v - lse gives; NaN
    // spreads over its row.
    let x = DMatrix::from_element(1, 1, 1.0);
    let w = DMatrix::from_row_slice(1, 3, &[0.0, 0.0, 0.0]);
    let inf = f64::INFINITY;
    let third = (1.0f64 / 3.0).ln();
    let half = 0.5f64.ln();
    let cases: [([f64; 3], [f64; 3], f64); 5] = [
        (
            [700.0, 700.0, 700.0],
            [third, third, third],
            700.0 + 3f64.ln(),
        ),
        ([0.0, -inf, 0.0], [half, -inf, half], 2f64.ln()),
        ([-inf, -inf, -inf], [f64::NAN; 3], -inf),
        ([inf, 1.0, 2.0], [f64::NAN, -inf, -inf], inf),
        ([1.0, f64::NAN, 2.0], [f64::NAN; 3], f64::NAN),
    ];
    let same = |g: f64, r: f64| (g.is_nan() && r.is_nan()) || g == r || (g - r).abs() < 1e-12;
    for (row, want, want_normaliser) in cases {
        let (got, normaliser) = run_form(&x, &w, &DMatrix::from_row_slice(1, 3, &row), false)?;
        assert!(
            same(normaliser[0], want_normaliser),
            "{row:?}: normaliser {} vs {want_normaliser}",
            normaliser[0]
        );
        for j in 0..3 {
            let (g, r) = (got[(0, j)], want[j]);
            assert!(same(g, r), "{row:?} column {j}: {g} vs {r}");
        }
    }
    // Empty shapes write nothing and are no error; with no columns every
    // row's sum is empty, its normaliser -inf.
    for (n, q, cols) in [(0, 2, 4), (3, 2, 0)] {
        let out = MatrixCl::<f64>::zeros(n, cols)?;
        let normalisers = k::log_softmax_rows_of_product(
            &MatrixCl::zeros(n, q)?,
            &MatrixCl::zeros(q, cols)?,
            &MatrixCl::zeros(1, cols)?,
            &out,
        )?;
        assert_eq!(normalisers.to_vec()?, vec![f64::NEG_INFINITY; n]);
    }
    // q = 0: the product is zero, each row the log-softmax of c.
    let c = DMatrix::from_row_slice(1, 2, &[0.0, 1.0]);
    let out = MatrixCl::<f64>::zeros(2, 2)?;
    k::log_softmax_rows_of_product(
        &MatrixCl::zeros(2, 0)?,
        &MatrixCl::zeros(0, 2)?,
        &to_device(&c),
        &out,
    )?;
    let lse = (1.0 + 1f64.exp()).ln();
    let got = out.to_vec()?;
    for (g, r) in got.iter().zip([-lse, -lse, 1.0 - lse, 1.0 - lse]) {
        assert!((g - r).abs() < 1e-12, "{got:?}");
    }
    Ok(())
}

#[test]
fn refuses_bad_shapes_views_limits_and_aliasing() -> clfuse::Result<()> {
    let x = MatrixCl::<f64>::zeros(4, 3)?;
    let w = MatrixCl::<f64>::zeros(3, 5)?;
    let c = MatrixCl::<f64>::zeros(1, 5)?;
    let out = MatrixCl::<f64>::zeros(4, 5)?;
    let err = |r: clfuse::Result<MatrixCl<f64>>| r.unwrap_err().to_string();
    let f = k::log_softmax_rows_of_product;
    let wrong_w = err(f(&x, &MatrixCl::zeros(2, 5)?, &c, &out));
    assert!(wrong_w.contains("log_softmax_rows_of_product"), "{wrong_w}");
    assert!(err(f(&x, &w, &MatrixCl::zeros(1, 4)?, &out)).contains("1 x 5"));
    let wrong_out = err(f(&x, &w, &c, &MatrixCl::zeros(5, 4)?));
    assert!(
        wrong_out.contains("out") && wrong_out.contains("4 x 5"),
        "{wrong_out}"
    );
    let wide = err(f(
        &MatrixCl::zeros(4, 129)?,
        &MatrixCl::zeros(129, 5)?,
        &c,
        &out,
    ));
    assert!(wide.contains("129 columns"), "{wide}");
    let many = err(f(
        &x,
        &MatrixCl::zeros(3, 513)?,
        &MatrixCl::zeros(1, 513)?,
        &MatrixCl::zeros(4, 513)?,
    ));
    assert!(many.contains("513 columns"), "{many}");
    let lower = MatrixCl::<f64>::zeros(3, 3)?.with_view(View::Lower);
    let square = MatrixCl::<f64>::zeros(3, 3)?;
    let row = MatrixCl::<f64>::zeros(1, 3)?;
    assert!(err(f(&square, &lower, &row, &MatrixCl::zeros(3, 3)?)).contains("Entire"));
    assert!(err(f(&square, &square, &row, &lower)).contains("Entire"));
    // Writing over an input would race the reads of other work-groups.
    let aliased = err(f(&square, &MatrixCl::zeros(3, 3)?, &row, &square));
    assert!(aliased.contains("shares its buffer with x"), "{aliased}");
    // Nothing was written by the refused calls.
    assert!(out.to_vec()?.iter().all(|&v| v == 0.0));
    Ok(())
}
