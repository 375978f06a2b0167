//! Gathers (`indexing`) check their indices in the kernel that reads
//! through them: valid gathers against a CPU loop, and each kind of bad
//! index (negative, equal to the rows, equal to the columns) as an
//! `Err(IndexOutOfRange)` naming the result element, the index and its
//! value, in a plain evaluation, a reduction, a `Var`'s forward kernel, a
//! GEMM epilogue and a kernel with two gathers.

use clfuse::Error;
use clfuse::Result;
use clfuse::prelude::*;
use clfuse::rev::{self, Var};

/// A `rows x cols` matrix of distinct values.
fn matrix(rows: usize, cols: usize) -> Result<(Vec<f64>, MatrixCl<f64>)> {
    let v: Vec<f64> = (0..rows * cols).map(|k| k as f64 * 0.5 - 3.0).collect();
    let m = MatrixCl::from_slice(rows, cols, &v)?;
    Ok((v, m))
}

/// `n x k` indices, element `(i, j)` = `f(i, j)`, column-major.
fn indices(
    n: usize,
    k: usize,
    f: impl Fn(usize, usize) -> i32,
) -> Result<(Vec<i32>, MatrixCl<i32>)> {
    let mut v = Vec::with_capacity(n * k);
    for j in 0..k {
        for i in 0..n {
            v.push(f(i, j));
        }
    }
    let m = MatrixCl::from_slice(n, k, &v)?;
    Ok((v, m))
}

/// Expects `IndexOutOfRange` with these fields.
#[track_caller]
fn expect_index_error<T: std::fmt::Debug>(
    got: Result<T>,
    argument: &str,
    (row, col): (usize, usize),
    value: i64,
    bound: usize,
    shape: (usize, usize),
) {
    match got {
        Err(Error::IndexOutOfRange {
            function,
            argument: a,
            row: r,
            col: c,
            value: v,
            bound: b,
            rows,
            cols,
        }) => {
            assert_eq!(function, "indexing");
            assert_eq!(
                (a, r, c, v, b, (rows, cols)),
                (argument, row, col, value, bound, shape),
                "the error names another index"
            );
        }
        other => panic!("expected IndexOutOfRange, got {other:?}"),
    }
}

#[test]
fn valid_gathers_match_a_cpu_loop() -> Result<()> {
    let (mr, mc) = (37, 5);
    let (host, m) = matrix(mr, mc)?;
    for (n, k) in [(0, 1), (1, 1), (31, 2), (33, 3), (1000, 4)] {
        let (ri, rows) = indices(n, k, |i, j| ((i * 7 + j * 3) % mr) as i32)?;
        let (ci, cols) = indices(n, k, |i, j| ((i + 2 * j) % mc) as i32)?;
        let got = indexing(&m, &rows, &cols).eval()?.to_vec()?;
        let want: Vec<f64> = ri
            .iter()
            .zip(&ci)
            .map(|(&r, &c)| host[r as usize + mr * c as usize])
            .collect();
        assert_eq!(got, want, "{n} x {k}");
        // A scalar column index broadcasts.
        let got = indexing(&m, &rows, 4).eval()?.to_vec()?;
        let want: Vec<f64> = ri.iter().map(|&r| host[r as usize + mr * 4]).collect();
        assert_eq!(got, want, "{n} x {k}, column 4");
        // In a reduction: the column sums.
        if n > 0 {
            let got = colwise_sum(indexing(&m, &rows, &cols)).eval()?.to_vec()?;
            let want: Vec<f64> = (0..k)
                .map(|j| {
                    (0..n)
                        .map(|i| host[ri[i + n * j] as usize + mr * ci[i + n * j] as usize])
                        .sum()
                })
                .collect();
            common_close(&got, &want);
        }
    }
    Ok(())
}

fn common_close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-9 * w.abs().max(1.0), "{g} vs {w}");
    }
}

#[test]
fn a_negative_row_index_names_its_element() -> Result<()> {
    let (_, m) = matrix(5, 3)?;
    for n in [1, 31, 33, 1000] {
        let bad = n / 2;
        let (_, rows) = indices(n, 1, |i, _| if i == bad { -1 } else { (i % 5) as i32 })?;
        expect_index_error(
            indexing(&m, &rows, 0).eval(),
            "rows",
            (bad, 0),
            -1,
            5,
            (5, 3),
        );
    }
    Ok(())
}

#[test]
fn a_row_index_equal_to_the_rows_is_out_of_range() -> Result<()> {
    let (_, m) = matrix(5, 3)?;
    // 31 x 33 indices: the first bad one in column-major order is named,
    // not the one of the lowest row.
    let (_, rows) = indices(31, 33, |i, j| match (i, j) {
        (30, 20) | (2, 27) => 5,
        _ => ((i + j) % 5) as i32,
    })?;
    expect_index_error(
        indexing(&m, &rows, 1).eval(),
        "rows",
        (30, 20),
        5,
        5,
        (5, 3),
    );
    Ok(())
}

#[test]
fn a_column_index_equal_to_the_columns_is_out_of_range() -> Result<()> {
    let (_, m) = matrix(5, 3)?;
    let (_, rows) = indices(33, 1, |i, _| (i % 5) as i32)?;
    let (_, cols) = indices(33, 1, |i, _| if i >= 32 { 3 } else { (i % 3) as i32 })?;
    let err = indexing(&m, &rows, &cols).eval();
    expect_index_error(err, "cols", (32, 0), 3, 3, (5, 3));
    let message = indexing(&m, &rows, &cols).eval().unwrap_err().to_string();
    assert_eq!(
        message,
        "indexing: cols[32, 0] is 3, but must be in 0..3 to index a 5 x 3 matrix"
    );
    // Where both are bad, the row index is named.
    let (_, rows) = indices(33, 1, |i, _| if i == 32 { 9 } else { 0 })?;
    expect_index_error(
        indexing(&m, &rows, &cols).eval(),
        "rows",
        (32, 0),
        9,
        5,
        (5, 3),
    );
    // Scalar indices, broadcast: element [0, 0] of the scalar gather.
    let ones = MatrixCl::constant(4, 2, 1.0f64)?;
    expect_index_error(
        (indexing(&m, 0, -2) + &ones).eval(),
        "cols",
        (0, 0),
        -2,
        3,
        (5, 3),
    );
    Ok(())
}

#[test]
fn bad_indices_inside_reductions() -> Result<()> {
    let (_, m) = matrix(4, 4)?;
    let (_, rows) = indices(1000, 2, |i, j| {
        if (i, j) == (999, 0) {
            4
        } else {
            (i % 4) as i32
        }
    })?;
    expect_index_error(
        colwise_sum(indexing(&m, &rows, 1)).eval(),
        "rows",
        (999, 0),
        4,
        4,
        (4, 4),
    );
    expect_index_error(
        sum(exp(indexing(&m, &rows, 1))),
        "rows",
        (999, 0),
        4,
        4,
        (4, 4),
    );
    // Read at transposed positions: the gather's own element is named.
    expect_index_error(
        colwise_sum(transpose(indexing(&m, &rows, 1))).eval(),
        "rows",
        (999, 0),
        4,
        4,
        (4, 4),
    );
    Ok(())
}

#[test]
fn two_gathers_in_one_kernel_name_their_own_index() -> Result<()> {
    let (host, m) = matrix(6, 2)?;
    let (_, good) = indices(33, 1, |i, _| (i % 6) as i32)?;
    let (_, bad) = indices(33, 1, |i, _| if i == 17 { 6 } else { (i % 6) as i32 })?;
    let (_, bad_col) = indices(33, 1, |i, _| if i == 3 { -7 } else { 1 })?;
    // The second gather is bad.
    expect_index_error(
        (indexing(&m, &good, 0) + indexing(&m, &bad, 1)).eval(),
        "rows",
        (17, 0),
        6,
        6,
        (6, 2),
    );
    // The first is bad (later in the result than the second's would be).
    expect_index_error(
        elt_multiply(indexing(&m, &bad, 0), indexing(&m, &good, &bad_col)).eval(),
        "rows",
        (17, 0),
        6,
        6,
        (6, 2),
    );
    // Only the second's column index is bad.
    expect_index_error(
        elt_multiply(indexing(&m, &good, 0), indexing(&m, &good, &bad_col)).eval(),
        "cols",
        (3, 0),
        -7,
        2,
        (6, 2),
    );
    // Both valid: the sum, then a bad one and a good one again, the same
    // expression evaluated twice (the flags are clean for the next kernel).
    let twice = indexing(&m, &good, 0) + indexing(&m, &good, 1);
    for _ in 0..2 {
        let got = (&twice).eval()?.to_vec()?;
        let want: Vec<f64> = (0..33).map(|i| host[i % 6] + host[i % 6 + 6]).collect();
        assert_eq!(got, want);
        assert!(
            (indexing(&m, &good, 0) + indexing(&m, &bad, 1))
                .eval()
                .is_err()
        );
    }
    Ok(())
}

#[test]
fn a_failed_check_of_the_same_kernel_comes_first() -> Result<()> {
    let (_, m) = matrix(3, 1)?;
    let (_, idx) = indices(4, 1, |i, _| i as i32)?; // 3 is out of range
    let d = MatrixCl::<f64>::zeros(4, 1)?;
    let err = fuse((
        output(&d, indexing(&m, &idx, 0)),
        check(&idx, "f", "idx", lt(&idx, 3)).requiring("below 3"),
    ))
    .unwrap_err();
    assert_eq!(err.to_string(), "f: idx[3, 0] is 3, but must be below 3");
    // Alone, the gather reports it.
    let err = fuse(output(&d, indexing(&m, &idx, 0)));
    expect_index_error(err, "rows", (3, 0), 3, 3, (3, 1));
    Ok(())
}

#[test]
fn a_gather_in_a_gemm_epilogue() -> Result<()> {
    let (a, b) = (
        MatrixCl::constant(40, 40, 1.0f64)?,
        MatrixCl::constant(40, 40, 1.0f64)?,
    );
    let (_, m) = matrix(3, 3)?;
    let (_, rows) = indices(40, 40, |i, j| ((i + j) % 3) as i32)?;
    let got = (&a * &b + indexing(&m, &rows, 0)).eval()?.to_vec()?;
    let want: Vec<f64> = (0..1600)
        .map(|k| 40.0 + ((k % 40 + k / 40) % 3) as f64 * 0.5 - 3.0)
        .collect();
    assert_eq!(got, want);
    let (_, rows) = indices(40, 40, |i, j| if (i, j) == (7, 39) { 3 } else { 0 })?;
    expect_index_error(
        (&a * &b + indexing(&m, &rows, 0)).eval(),
        "rows",
        (7, 39),
        3,
        3,
        (3, 3),
    );
    Ok(())
}

#[test]
fn var_gathers_check_their_indices_and_differentiate() -> Result<()> {
    // sum(exp(u[g])) over n observations of 7 groups: du[k] = exp(u[k]) * count(g == k).
    for n in [1, 31, 33, 1000] {
        let effects: Vec<f64> = (0..7).map(|k| k as f64 * 0.1 - 0.3).collect();
        let u = Var::new(MatrixCl::from_slice(7, 1, &effects)?);
        let g: Vec<i32> = (0..n).map(|k| ((k * 3) % 7) as i32).collect();
        let index = MatrixCl::from_slice(n, 1, &g)?;
        let lp = colwise_sum(exp(indexing(&u, &index, 0))).eval()?;
        let want_lp: f64 = g.iter().map(|&k| effects[k as usize].exp()).sum();
        common_close(&lp.value().to_vec()?, &[want_lp]);
        lp.grad()?;
        let mut want = vec![0.0; 7];
        for &k in &g {
            want[k as usize] += effects[k as usize].exp();
        }
        common_close(&u.adjoint().to_vec()?, &want);
        rev::clear()?;

        // One group index off by one (the commonest bug): 7 of 7 groups.
        let mut bad = g.clone();
        bad[n - 1] = 7;
        let index = MatrixCl::from_slice(n, 1, &bad)?;
        expect_index_error(
            colwise_sum(exp(indexing(&u, &index, 0))).eval(),
            "rows",
            (n - 1, 0),
            7,
            7,
            (7, 1),
        );
        expect_index_error(
            exp(indexing(&u, &index, 0)).eval(),
            "rows",
            (n - 1, 0),
            7,
            7,
            (7, 1),
        );
        rev::clear()?;
    }
    Ok(())
}
