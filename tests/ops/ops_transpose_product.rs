//! `transpose_vector_multiply`: `xᵀ·v` as an output of the kernel computing
//! `v`, with `x` staged block by block in registers across the work-group.
//!
//! Reference: a plain Rust loop. Bound: 1e-12 relative to the sum of
//! absolute terms (the kernel sums in a different order).

use crate::common;

use clfuse::Result;
use clfuse::clfuse_ops::source_of;
use clfuse::prelude::*;
use nalgebra::DMatrix;

fn host(rows: usize, cols: usize, salt: usize) -> DMatrix<f64> {
    DMatrix::from_fn(rows, cols, |i, j| {
        ((i * 13 + j * 7 + salt * 3) % 23) as f64 / 8.0 - 1.2
    })
}

/// `xᵀ·v` on the host, and the scale each entry's rounding error is relative to.
fn reference(x: &DMatrix<f64>, v: &[f64]) -> (Vec<f64>, Vec<f64>) {
    (0..x.ncols())
        .map(|j| {
            let terms = (0..x.nrows()).map(|i| x[(i, j)] * v[i]);
            (terms.clone().sum::<f64>(), terms.map(f64::abs).sum::<f64>())
        })
        .unzip()
}

fn assert_product(what: &str, got: &[f64], x: &DMatrix<f64>, v: &[f64]) {
    let (want, scale) = reference(x, v);
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, ((g, w), s)) in got.iter().zip(&want).zip(&scale).enumerate() {
        assert!(
            (g - w).abs() <= 1e-12 * s.max(1.0),
            "{what}: entry {k} is {g}, expected {w}"
        );
    }
}

/// Rows 0, 1, 31, 33, a non-multiple of the work-group size and a large
/// count; columns from 1 to more than one work-group's worth.
const SHAPES: [(usize, usize); 8] = [
    (0, 3),
    (1, 1),
    (31, 2),
    (33, 5),
    (1000, 50),
    (257, 300),
    (100_003, 3),
    (5000, 10),
];

#[test]
fn matches_a_loop_alone_and_fused_with_the_predictor() -> Result<()> {
    for (n, p) in SHAPES {
        let xh = host(n, p, 1);
        let x = MatrixCl::try_from(&xh)?;
        let vh: Vec<f64> = (0..n).map(|i| ((i * 5) % 11) as f64 / 4.0 - 1.0).collect();
        let v = MatrixCl::from_slice(n, 1, &vh)?;
        let got = transpose_vector_multiply(&x, &v).eval()?;
        assert_eq!((got.rows(), got.cols()), (p, 1));
        assert_product(&format!("{n}x{p} alone"), &got.to_vec()?, &xh, &vh);

        // The GLM shape: v depends on x·beta, computed from the same tile.
        let beta_h: Vec<f64> = (0..p).map(|j| 0.1 * j as f64 - 0.2).collect();
        let beta = MatrixCl::from_slice(p, 1, &beta_h)?;
        let eta: Vec<f64> = (0..n)
            .map(|i| (0..p).map(|j| xh[(i, j)] * beta_h[j]).sum::<f64>())
            .collect();
        let d_h: Vec<f64> = eta.iter().map(|e| 1.0 / (1.0 + (-e).exp())).collect();
        let (g, total, d) = (
            MatrixCl::<f64>::zeros(p, 1)?,
            MatrixCl::<f64>::zeros(1, 1)?,
            MatrixCl::<f64>::zeros(n, 1)?,
        );
        {
            let d_expr = inv_logit(matrix_vector_multiply(&x, &beta));
            let d_expr = &d_expr;
            fuse((
                output(&total, colwise_sum(d_expr)),
                output(&g, transpose_vector_multiply(&x, d_expr)),
                output(&d, d_expr),
            ))?;
        }
        assert_product(&format!("{n}x{p} fused"), &g.to_vec()?, &xh, &d_h);
        common::assert_close("d", &d.to_vec()?, &d_h, 1e-13);
        let want_total: f64 = d_h.iter().sum();
        common::assert_close("total", &total.to_vec()?, &[want_total], 1e-12);
    }
    Ok(())
}

#[test]
fn stages_x_once_and_reads_it_only_through_the_staging_fetches() -> Result<()> {
    let x = MatrixCl::try_from(&host(100, 20, 2))?;
    let beta = MatrixCl::from_slice(20, 1, &[0.5; 20])?;
    let g = MatrixCl::<f64>::zeros(20, 1)?;
    let v = exp(matrix_vector_multiply(&x, &beta));
    let src = source_of(&output(&g, transpose_vector_multiply(&x, &v)))?;
    // x is read only by the staging fetches (each block, or with
    // prefetching the first block element by element and then each next
    // block in a loop).
    let staged_read = |l: &str| l.contains("] = (row < rows");
    let fetch = src
        .lines()
        .find(|l| staged_read(l) && l.contains("_global["))
        .expect("the kernel stages x");
    let x_global = fetch
        .split('?')
        .nth(1)
        .and_then(|r| r.split('[').next())
        .unwrap_or("?")
        .trim()
        .to_string();
    let reads: Vec<&str> = src
        .lines()
        .filter(|l| l.contains(&format!("{x_global}[")))
        .collect();
    assert!(!reads.is_empty(), "{src}");
    assert!(reads.iter().all(|l| staged_read(l)), "{src}");
    Ok(())
}

#[test]
fn expressions_views_and_wide_matrices_that_are_not_staged() -> Result<()> {
    // An expression operand (not a matrix) is computed at each use; a lower
    // view reads zeros above the diagonal; 4096 columns take a whole
    // work-group per row (16 each); 5000 columns are not staged.
    for (n, p) in [(40, 5000), (300, 7), (1, 5000), (40, 4096)] {
        let xh = host(n, p, 3);
        let x = MatrixCl::try_from(&xh)?;
        let vh: Vec<f64> = (0..n).map(|i| 1.0 + i as f64 / 7.0).collect();
        let v = MatrixCl::from_slice(n, 1, &vh)?;
        let doubled = transpose_vector_multiply(2.0f64 * &x, &v).eval()?;
        assert_product("2x", &doubled.to_vec()?, &(&xh * 2.0), &vh);
        let wide = transpose_vector_multiply(&x, exp(&v)).eval()?;
        let exp_v: Vec<f64> = vh.iter().map(|e| e.exp()).collect();
        assert_product("wide", &wide.to_vec()?, &xh, &exp_v);
    }
    let xh = host(50, 50, 4);
    let x = MatrixCl::try_from(&xh)?;
    x.set_view(View::Lower);
    let lower = DMatrix::from_fn(50, 50, |i, j| if i >= j { xh[(i, j)] } else { 0.0 });
    let vh: Vec<f64> = (0..50).map(|i| i as f64 - 20.0).collect();
    let v = MatrixCl::from_slice(50, 1, &vh)?;
    let got = transpose_vector_multiply(&x, &v).eval()?;
    assert_product("lower view", &got.to_vec()?, &lower, &vh);
    Ok(())
}

#[test]
fn shape_errors_write_nothing() -> Result<()> {
    let x = MatrixCl::try_from(&host(10, 3, 5))?;
    let short = MatrixCl::<f64>::zeros(9, 1)?;
    let g = MatrixCl::from_slice(3, 1, &[7.0, 7.0, 7.0])?;
    let err = fuse((output(&g, transpose_vector_multiply(&x, &short)),)).unwrap_err();
    assert!(matches!(err, Error::DimensionMismatch { .. }), "{err}");
    let wrong_target = MatrixCl::<f64>::zeros(1, 3)?;
    let v = MatrixCl::<f64>::zeros(10, 1)?;
    let err = fuse((output(&wrong_target, transpose_vector_multiply(&x, &v)),)).unwrap_err();
    assert!(matches!(err, Error::DimensionMismatch { .. }), "{err}");
    // Other outputs must run over the same rows.
    let other = MatrixCl::<f64>::zeros(10, 2)?;
    let err = fuse((
        output(&g, transpose_vector_multiply(&x, &v)),
        output(&other, exp(&other)),
    ))
    .unwrap_err();
    assert!(matches!(err, Error::DimensionMismatch { .. }), "{err}");
    assert_eq!(g.to_vec()?, vec![7.0, 7.0, 7.0]);
    Ok(())
}

/// A product whose `v` reads `x` (here through `x·beta`) does per-row work,
/// so its rows are spread over fewer work items holding more elements each
/// than for a `v` that does not: 100 columns are 4 x 25 in one case and
/// 8 x 13 in the other (without tuning knobs).
#[test]
fn rows_are_spread_by_the_work_done_per_row() -> Result<()> {
    use clfuse::clfuse_ops::{RowBlockKind, staged_row_team};
    let knobs = ["FUSION_STAGED_PER_WORK_ITEM", "FUSION_ROW_BLOCK_GROUP_SIZE"];
    if knobs.iter().any(|k| std::env::var_os(k).is_some()) {
        return Ok(());
    }
    assert_eq!(staged_row_team(100, RowBlockKind::ProductAlone)?, Some(8));
    assert_eq!(staged_row_team(100, RowBlockKind::WithRowWork)?, Some(4));
    let x = MatrixCl::try_from(&host(50, 100, 5))?;
    let beta = MatrixCl::from_slice(100, 1, &[0.01; 100])?;
    let d = MatrixCl::from_slice(50, 1, &[0.5; 50])?;
    let g = MatrixCl::<f64>::zeros(100, 1)?;
    let alone = source_of(&output(&g, transpose_vector_multiply(&x, &d)))?;
    let with_row_work = source_of(&output(
        &g,
        transpose_vector_multiply(&x, inv_logit(matrix_vector_multiply(&x, &beta))),
    ))?;
    assert!(alone.contains("k < 13;"), "{alone}");
    assert!(with_row_work.contains("k < 25;"), "{with_row_work}");
    Ok(())
}

#[test]
fn a_column_read_per_row_is_fetched_a_block_ahead() -> Result<()> {
    // v = w .* inv_logit(x·beta) with a column w: where the staged blocks
    // are prefetched (rows shared by several work items), w is fetched with
    // them, one block ahead, instead of after the block's barrier.
    let p = 100;
    let prefetch_knob = std::env::var_os("FUSION_ROW_BLOCK_PREFETCH").is_some();
    for n in [1, 33, 1000, 20_011] {
        let xh = host(n, p, 7);
        let x = MatrixCl::try_from(&xh)?;
        let beta_h: Vec<f64> = (0..p).map(|j| 0.02 * (j % 9) as f64 - 0.05).collect();
        let beta = MatrixCl::from_slice(p, 1, &beta_h)?;
        let w_h: Vec<f64> = (0..n).map(|i| ((i * 3) % 7) as f64 - 2.5).collect();
        let w = MatrixCl::from_slice(n, 1, &w_h)?;
        let g = MatrixCl::<f64>::zeros(p, 1)?;
        let v = elt_multiply(&w, inv_logit(matrix_vector_multiply(&x, &beta)));
        let list = output(&g, transpose_vector_multiply(&x, &v));
        let src = source_of(&list)?;
        let ahead = src.lines().any(|l| l.contains("_next = (next_row < rows"));
        assert!(ahead || prefetch_knob, "{src}");
        fuse(list)?;
        let v_h: Vec<f64> = (0..n)
            .map(|i| {
                let eta: f64 = (0..p).map(|j| xh[(i, j)] * beta_h[j]).sum();
                w_h[i] / (1.0 + (-eta).exp())
            })
            .collect();
        assert_product(&format!("{n}x{p} with w"), &g.to_vec()?, &xh, &v_h);
    }
    Ok(())
}
