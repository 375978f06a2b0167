//! No safe call writes outside a buffer or panics: out-of-range assignment
//! targets (near, far, overflowing, zero-size), out-of-range scatter
//! indices, sizes that would wrap the kernels' 32-bit indices, and the rule
//! that a zero *value* never hides NaN or inf.

use clfuse::Error;
use clfuse::Result;
use clfuse::prelude::*;

/// A 4 x 4 matrix holding 0..16 (column-major), and its contents.
fn sixteen() -> Result<(MatrixCl<f64>, Vec<f64>)> {
    let data: Vec<f64> = (0..16).map(f64::from).collect();
    Ok((MatrixCl::from_slice(4, 4, &data)?, data))
}

fn assert_untouched(m: &MatrixCl<f64>, before: &[f64], what: &str) -> Result<()> {
    assert_eq!(m.to_vec()?, before, "{what}: the matrix changed");
    Ok(())
}

fn assert_out_of_range(result: Result<()>, what: &str) {
    match result {
        Err(Error::TargetOutOfRange { rows, cols, .. }) => {
            assert_eq!((rows, cols), (4, 4), "{what}")
        }
        other => panic!("{what}: expected TargetOutOfRange, got {other:?}"),
    }
}

/// Blocks that do not fit, from one element over the edge to offsets that
/// would overflow `usize`; every assignment form is refused and writes nothing.
#[test]
fn block_targets_outside_the_matrix_are_refused() -> Result<()> {
    let (m, before) = sixteen()?;
    let outside: [(usize, usize, usize, usize); 12] = [
        (3, 3, 2, 2),
        (0, 0, 5, 4),
        (0, 0, 4, 5),
        (4, 0, 1, 1),
        (0, 4, 1, 1),
        (2, 0, 3, 1),
        (100, 100, 1, 1),
        (5, 0, 0, 0),
        (0, 5, 0, 0),
        (usize::MAX, 0, 1, 1),
        (0, usize::MAX, 1, 1),
        (1, 1, usize::MAX, usize::MAX),
    ];
    for (row, col, rows, cols) in outside {
        let what = format!("block ({row}, {col}) of {rows} x {cols}");
        assert_out_of_range(block(&m, row, col, rows, cols).assign(1.0), &what);
        assert_out_of_range(block(&m, row, col, rows, cols).add_assign(1.0), &what);
        assert_out_of_range(block(&m, row, col, rows, cols).mul_assign(2.0), &what);
        let target = block(&m, row, col, rows, cols);
        assert_out_of_range(fuse((output(&target, 7.0),)), &what);
        // The message names the target, its region and the matrix.
        let message = block(&m, row, col, rows, cols)
            .assign(1.0)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("block") && message.contains("4 x 4"),
            "{message}"
        );
        assert_untouched(&m, &before, &what)?;
    }
    Ok(())
}

/// Blocks that touch the edges, and empty blocks at the edge, are fine.
#[test]
fn block_targets_at_the_edges_work() -> Result<()> {
    let (m, mut want) = sixteen()?;
    block(&m, 2, 2, 2, 2).assign(-1.0)?;
    for (i, j) in [(2, 2), (3, 2), (2, 3), (3, 3)] {
        want[i + 4 * j] = -1.0;
    }
    assert_eq!(m.to_vec()?, want);
    for (row, col, rows, cols) in [(4, 4, 0, 0), (4, 0, 0, 4), (0, 4, 4, 0), (1, 2, 0, 2)] {
        block(&m, row, col, rows, cols).assign(9.0)?;
    }
    assert_eq!(m.to_vec()?, want);
    block(&m, 0, 3, 4, 1).add_assign(100.0)?;
    for v in &mut want[12..16] {
        *v += 100.0;
    }
    assert_eq!(m.to_vec()?, want);
    Ok(())
}

/// Block operands with offsets near `usize::MAX` are refused, not wrapped.
#[test]
fn overflowing_block_operands_are_errors() -> Result<()> {
    let (m, _) = sixteen()?;
    for (row, col, rows, cols) in [
        (usize::MAX, 0, 1, 1),
        (0, usize::MAX, 1, 1),
        (1, 0, usize::MAX, 1),
        (usize::MAX, usize::MAX, usize::MAX, usize::MAX),
    ] {
        let err = block(&m, row, col, rows, cols).eval().unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidArgument {
                    function: "block",
                    ..
                }
            ),
            "{err}"
        );
        assert!(sum(block(&m, row, col, rows, cols)).is_err());
    }
    Ok(())
}

/// Broadcasts and concatenations whose size would wrap the kernels' `int`
/// indices, or `usize` itself, are errors.
#[test]
fn sizes_beyond_the_index_range_are_errors() -> Result<()> {
    let row = MatrixCl::from_slice(1, 2, &[1.0f64, 2.0])?;
    assert!(sum(rowwise_broadcast(&row, 1 << 31)).is_err());
    assert!(sum(rowwise_broadcast(&row, usize::MAX)).is_err());
    assert!(rowwise_broadcast(&row, usize::MAX).eval().is_err());
    let err = sum(append_row(rowwise_broadcast(&row, usize::MAX), &row)).unwrap_err();
    assert!(err.to_string().contains("append_row"), "{err}");
    let col = MatrixCl::from_slice(2, 1, &[1.0f64, 2.0])?;
    assert!(sum(append_col(colwise_broadcast(&col, usize::MAX), &col)).is_err());
    // An empty result with one huge dimension.
    let empty = MatrixCl::<f64>::zeros(1, 0)?;
    assert!(sum(rowwise_broadcast(&empty, usize::MAX)).is_err());
    assert!(
        colwise_sum(rowwise_broadcast(&empty, 1 << 40))
            .eval()
            .is_err()
    );
    Ok(())
}

/// A scatter with any index outside the matrix is refused before anything
/// is written; in-range scatters (including repeated identical writes) work.
#[test]
fn scatter_indices_outside_the_matrix_are_refused() -> Result<()> {
    let (m, before) = sixteen()?;
    let values = MatrixCl::from_slice(3, 1, &[10.0f64, 20.0, 30.0])?;
    for bad in [
        [0, 1, 4],
        [0, -1, 2],
        [i32::MAX, 0, 0],
        [i32::MIN, 0, 0],
        [4, 4, 4],
    ] {
        let rows = MatrixCl::from_slice(3, 1, &bad)?;
        let what = format!("row indices {bad:?}");
        let err = indexing(&m, &rows, 1).assign(&values).unwrap_err();
        assert!(
            matches!(
                err,
                Error::TargetOutOfRange {
                    target: "scatter",
                    ..
                }
            ),
            "{what}: {err}"
        );
        assert!(err.to_string().contains("row index"), "{err}");
        assert_out_of_range(indexing(&m, 1, &rows).assign(&values), &what);
        assert_out_of_range(indexing(&m, &rows, 0).add_assign(&values), &what);
        assert_untouched(&m, &before, &what)?;
    }
    // A scalar index out of range.
    assert_out_of_range(indexing(&m, 4, 0).assign(1.0), "scalar row 4");
    assert_out_of_range(indexing(&m, 0, -1).assign(1.0), "scalar column -1");
    assert_untouched(&m, &before, "scalar indices")?;
    // Index vectors of different lengths.
    let three = MatrixCl::from_slice(3, 1, &[0, 1, 2])?;
    let two = MatrixCl::from_slice(2, 1, &[0, 1])?;
    assert!(matches!(
        indexing(&m, &three, &two).assign(1.0),
        Err(Error::DimensionMismatch { .. })
    ));
    // In range: the last row and column, and an index expression.
    let rows = MatrixCl::from_slice(3, 1, &[3, 0, 3])?;
    let cols = MatrixCl::from_slice(3, 1, &[3, 0, 1])?;
    indexing(&m, &rows, &cols).assign(&values)?;
    let mut want = before.clone();
    want[3 + 4 * 3] = 10.0;
    want[0] = 20.0;
    want[3 + 4] = 30.0;
    assert_eq!(m.to_vec()?, want);
    indexing(&m, &three + 1, 2).assign(-5.0)?;
    for i in 1..4 {
        want[i + 8] = -5.0;
    }
    assert_eq!(m.to_vec()?, want);
    // An empty scatter checks nothing and writes nothing.
    let none = MatrixCl::<i32>::zeros(0, 1)?;
    indexing(&m, &none, 0).assign(1.0)?;
    assert_eq!(m.to_vec()?, want);
    Ok(())
}

/// Transposes and diagonals always fit; at odd sizes they write exactly
/// their elements.
#[test]
fn transpose_and_diagonal_targets_stay_inside() -> Result<()> {
    for (r, c) in [(0, 3), (1, 1), (31, 33), (33, 31), (70, 2)] {
        let m = MatrixCl::<f64>::constant(r, c, 5.0)?;
        let t = MatrixCl::<f64>::constant(c, r, 2.0)?;
        transpose(&m).assign(&t)?;
        assert!(m.to_vec()?.iter().all(|v| *v == 2.0));
        diagonal(&m).assign(-1.0)?;
        let got = m.to_vec()?;
        for j in 0..c {
            for i in 0..r {
                let want = if i == j { -1.0 } else { 2.0 };
                assert_eq!(got[i + r * j], want, "({i}, {j}) of {r} x {c}");
            }
        }
    }
    Ok(())
}

/// `0.0 * x` is IEEE: 0 × inf is NaN, and no reduction skips it.
#[test]
fn a_zero_value_does_not_hide_nan_or_inf() -> Result<()> {
    // x = [1, 2; inf, 4] (rows), column-major.
    let host = [1.0, f64::INFINITY, 2.0, 4.0];
    let x = MatrixCl::from_slice(2, 2, &host)?;
    let rows = rowwise_sum(0.0f64 * &x).eval()?.to_vec()?;
    assert_eq!(rows[0], 0.0);
    assert!(rows[1].is_nan(), "{rows:?}");
    let cols = colwise_sum(&x * 0.0f64).eval()?.to_vec()?;
    assert!(cols[0].is_nan() && cols[1] == 0.0, "{cols:?}");
    let d = MatrixCl::<f64>::zeros(2, 2)?;
    d.assign(0.0f64 * &x)?;
    assert_eq!(d.view(), View::Entire);
    assert!(d.to_vec()?[1].is_nan());
    assert!(sum(&d)?.is_nan());
    assert!(sum(elt_multiply(constant(0.0f64, 2, 2), &x))?.is_nan());
    // NaN too, and in f32.
    let y = MatrixCl::from_slice(1, 3, &[f32::NAN, 1.0, 2.0])?;
    assert!(sum(0.0f32 * &y)?.is_nan());
    Ok(())
}

/// Structural zeros (outside a declared view) are strong zeros: a NaN kept
/// in the buffer above a `Lower` view is never read.
#[test]
fn structural_zeros_stay_zero() -> Result<()> {
    let l = MatrixCl::from_slice(2, 2, &[1.0, 2.0, f64::NAN, 3.0])?.with_view(View::Lower);
    assert_eq!(sum(&l)?, 6.0);
    let ones = MatrixCl::constant(2, 2, 1.0f64)?;
    assert_eq!(sum(elt_multiply(&l, &ones))?, 6.0);
    assert_eq!(sum(&l * 2.0f64)?, 12.0);
    Ok(())
}

/// A cached kernel keeps the arguments of its last launch and sets only
/// those that changed: new matrices (which may get a released buffer's
/// handle back from the pool), alternating matrices, other sizes and
/// scalars must all be seen.
#[test]
fn kernel_arguments_follow_every_change() -> Result<()> {
    let mut handles = Vec::new();
    let out = MatrixCl::<f64>::zeros(5, 1)?;
    for k in 0..40usize {
        let rows = if k % 3 == 0 { 5 } else { 4 };
        let host: Vec<f64> = (0..rows).map(|i| (k * 10 + i) as f64).collect();
        let x = MatrixCl::from_slice(rows, 1, &host)?;
        handles.push(x.raw_mem() as usize);
        let fresh;
        let target = if rows == 5 {
            &out
        } else {
            fresh = MatrixCl::<f64>::zeros(rows, 1)?;
            &fresh
        };
        let scale = 0.5 + (k % 4) as f64;
        target.assign(scale * &x + 1.0)?;
        let want: Vec<f64> = host.iter().map(|v| scale * v + 1.0).collect();
        assert_eq!(target.to_vec()?, want, "launch {k}");
    }
    handles.sort_unstable();
    handles.dedup();
    assert!(
        handles.len() < 40,
        "the pool handed a released buffer back at least once"
    );
    Ok(())
}
