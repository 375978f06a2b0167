//! The log-normaliser of a softmax over the rows of an affine product,
//! `log Σ_j exp((x·w)_ij + c_j)`, without forming `x·w`
//! (`cl/log_sum_exp_rows.cl`). A mixture's E-step and a softmax
//! regression's likelihood divide by it; with it known, the normalised rows
//! are one GEMM whose store subtracts it, so the `n x k` result is written
//! once and never read back.

use crate::basic::int;
use crate::launchers as cl;
use clfuse_core::{Error, MatrixCl, NdRange, Result, View};

/// The largest inner dimension `q` of `x · w` (each work item keeps its
/// rows of `x` in registers).
pub const LOG_SUM_EXP_MAX_INNER: usize = 64;

/// Work items per group.
const LOCAL: usize = 256;

/// Rows of `x` per work item (each staged element of `w` then feeds this
/// many multiply-adds). One was fastest on an H200 at n = 1e6, q = 28,
/// k = 256: 1.44 ms, against 1.52 (2 rows, 128 work items per group), 1.85
/// (3) and 2.17 ms (4): more registers per work item leave fewer to hide
/// the latency of the multiply-add chains and the exps.
const ROWS: usize = 1;

/// `log Σ_j exp((x·w)_ij + c_j)` for every row `i`: the `n x 1`
/// log-normalisers of the softmax over the rows of `x·w + c`, for `x`
/// `n x q` (`q` ≤ [`LOG_SUM_EXP_MAX_INNER`]), `w` `q x k` and `c` `1 x k`,
/// in one kernel that reads `x` once and never forms the `n x k` product.
/// The sum is taken online (the largest term so far factored out), so it
/// neither overflows nor underflows; a row whose terms are all `-inf` gives
/// `-inf`, a NaN term gives NaN, and `k = 0` gives `-inf`.
///
/// Errors: shapes that do not match, `q` above the limit, or an operand
/// whose view is not `Entire` (its storage would be read as it is).
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::log_sum_exp_rows_of_product;
/// let x = MatrixCl::from_slice(2, 1, &[0.0, 1.0])?;
/// let w = MatrixCl::from_slice(1, 2, &[1.0, 2.0])?;
/// let c = MatrixCl::from_slice(1, 2, &[0.0, 0.0])?;
/// // Row 0: log(e⁰ + e⁰) = log 2; row 1: log(e¹ + e²).
/// let lse = log_sum_exp_rows_of_product(&x, &w, &c)?.to_vec()?;
/// assert!((lse[0] - 2f64.ln()).abs() < 1e-12);
/// assert!((lse[1] - (1f64.exp() + 2f64.exp()).ln()).abs() < 1e-12);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn log_sum_exp_rows_of_product(
    x: &MatrixCl<f64>,
    w: &MatrixCl<f64>,
    c: &MatrixCl<f64>,
) -> Result<MatrixCl<f64>> {
    const F: &str = "log_sum_exp_rows_of_product";
    let (n, q, k) = (x.rows(), x.cols(), w.cols());
    if w.rows() != q {
        return Err(Error::DimensionMismatch {
            operation: F.into(),
            lhs: (n, q),
            rhs: (w.rows(), k),
        });
    }
    if (c.rows(), c.cols()) != (1, k) {
        return Err(Error::InvalidArgument {
            function: F,
            argument: "c",
            reason: format!(
                "must be 1 x {k} (a row per column of w), is {} x {}",
                c.rows(),
                c.cols()
            ),
        });
    }
    if q > LOG_SUM_EXP_MAX_INNER {
        return Err(Error::InvalidArgument {
            function: F,
            argument: "x",
            reason: format!(
                "has {q} columns; at most {LOG_SUM_EXP_MAX_INNER} are kept in registers \
                 (write rowwise_log_sum_exp(x * w + ...) for more)"
            ),
        });
    }
    for (m, reason) in [
        (x, "x is read as stored: give it the view Entire"),
        (w, "w is read as stored: give it the view Entire"),
        (c, "c is read as stored: give it the view Entire"),
    ] {
        if m.view() != View::Entire {
            return Err(Error::InvalidView {
                function: F,
                view: m.view(),
                reason,
            });
        }
    }
    if k == 0 {
        // No term: every row's sum is empty.
        return MatrixCl::from_slice(n, 1, &vec![f64::NEG_INFINITY; n]);
    }
    let out = MatrixCl::<f64>::uninitialized(n, 1)?;
    if n == 0 {
        return Ok(out);
    }
    // With q = 0 the kernel reads neither x nor w (both empty): `c` stands in.
    let (x, w) = if q == 0 { (c, c) } else { (x, w) };
    for (argument, m) in [("x", x), ("w", w), ("c", c)] {
        int(F, argument, m.len())?;
    }
    let groups = n.div_ceil(LOCAL * ROWS);
    let even = q.max(1).next_multiple_of(2);
    cl::log_sum_exp_rows_of_product().launch_with_options(
        NdRange::d1(groups * LOCAL).with_local(&[LOCAL]),
        &format!("-D Q={even} -D ROWS={ROWS}"),
        (
            x,
            w,
            c,
            &out,
            int(F, "x", n)?,
            int(F, "x", q)?,
            int(F, "w", k)?,
        ),
    )?;
    Ok(out)
}
