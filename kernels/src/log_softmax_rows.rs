//! The log-softmax (or softmax) of each row of an affine product,
//! `(x·w + c)_ij − log Σ_l exp((x·w + c)_il)`, formed, normalised and
//! stored in one kernel (`cl/log_softmax_rows.cl`), with each row's
//! normaliser: a mixture's E-step in one pass over its `n x k` result. On
//! NVIDIA devices with FP64 tensor cores the product runs on them
//! (`cl/dmma.cl`).

use crate::basic::int;
use crate::gemm::dmma_build_flags;
use crate::launchers as cl;
use clfuse_core::{Error, MatrixCl, NdRange, Result, Runtime, View};

/// The largest inner dimension `q` of `x · w` (a work-group stages its
/// rows of `x` in local memory).
pub const LOG_SOFTMAX_MAX_INNER: usize = 128;

/// The most columns `k` a row may have: a work-group keeps all of a row's
/// terms in registers while it finds their normaliser.
pub const LOG_SOFTMAX_MAX_COLUMNS: usize = 512;

/// Rows per work-group (the kernel's `TILE_ROWS`, `16 * ROW_FRAGS` on the
/// tensor cores).
const TILE_ROWS: usize = 32;

/// `out = x·w + c − lse`, where `lse_i = log Σ_j exp((x·w)_ij + c_j)`: the
/// log-softmax of every row of the affine product, for `x` `n x q` (`q` ≤
/// [`LOG_SOFTMAX_MAX_INNER`]), `w` `q x k` (`k` ≤
/// [`LOG_SOFTMAX_MAX_COLUMNS`]), `c` `1 x k` and `out` `n x k`, in one
/// kernel that forms the product once and writes `out` once; returns the
/// normalisers `lse` (`n x 1`). Row `i` of `out` is the log of the softmax
/// of row `i` of `x·w + c`: with `w` and `c` a mixture's expanded
/// parameters and `x` the expanded data, the log responsibilities of its
/// E-step, and `lse_i` point `i`'s log density.
///
/// A row with a NaN term is NaN; a row whose largest term is infinite gives
/// what `v − log_sum_exp(v)` gives (`-inf` or NaN), its normaliser that
/// infinity, as with
/// [`log_sum_exp_rows_of_product`](crate::log_sum_exp_rows_of_product).
/// With `k = 0` every normaliser is `-inf`.
///
/// Errors: shapes that do not match, `q` or `k` above its limit, an operand
/// whose view is not `Entire`, `out` sharing its buffer with an input, or
/// `x`'s staged rows not fitting the device's local memory (`q` = 128 takes
/// 45 KB on NVIDIA's tensor-core path).
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::log_softmax_rows_of_product;
/// let x = MatrixCl::from_slice(2, 1, &[0.0, 1.0])?;
/// let w = MatrixCl::from_slice(1, 2, &[1.0, 2.0])?;
/// let c = MatrixCl::from_slice(1, 2, &[0.0, 0.0])?;
/// let out = MatrixCl::<f64>::zeros(2, 2)?;
/// let lse = log_softmax_rows_of_product(&x, &w, &c, &out)?.to_vec()?;
/// // Row 0 has equal terms: each is log(1/2). Row 1: terms 1 and 2.
/// let r = out.to_vec()?; // column-major
/// assert!((r[0] - 0.5f64.ln()).abs() < 1e-12);
/// assert!((lse[1] - (1f64.exp() + 2f64.exp()).ln()).abs() < 1e-12);
/// assert!((r[3] - (2.0 - lse[1])).abs() < 1e-12);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn log_softmax_rows_of_product(
    x: &MatrixCl<f64>,
    w: &MatrixCl<f64>,
    c: &MatrixCl<f64>,
    out: &MatrixCl<f64>,
) -> Result<MatrixCl<f64>> {
    rows_of_product("log_softmax_rows_of_product", x, w, c, out, false)
}

/// [`log_softmax_rows_of_product`] with the softmax itself stored:
/// `out_ij = exp((x·w + c)_ij − lse_i)`, each row summing to 1 (a
/// mixture's responsibilities); returns the normalisers `lse` (`n x 1`).
/// The same limits, errors and non-finite rules (a row with a NaN term is
/// NaN).
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::softmax_rows_of_product;
/// let x = MatrixCl::from_slice(1, 1, &[1.0])?;
/// let w = MatrixCl::from_slice(1, 2, &[0.0, 2f64.ln()])?;
/// let c = MatrixCl::from_slice(1, 2, &[0.0, 0.0])?;
/// let out = MatrixCl::<f64>::zeros(1, 2)?;
/// let lse = softmax_rows_of_product(&x, &w, &c, &out)?.to_vec()?;
/// // Terms 0 and log 2: probabilities 1/3 and 2/3, normaliser log 3.
/// let r = out.to_vec()?;
/// assert!((r[0] - 1.0 / 3.0).abs() < 1e-15 && (r[1] - 2.0 / 3.0).abs() < 1e-15);
/// assert!((lse[0] - 3f64.ln()).abs() < 1e-15);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn softmax_rows_of_product(
    x: &MatrixCl<f64>,
    w: &MatrixCl<f64>,
    c: &MatrixCl<f64>,
    out: &MatrixCl<f64>,
) -> Result<MatrixCl<f64>> {
    rows_of_product("softmax_rows_of_product", x, w, c, out, true)
}

/// Both forms: checks, build options, launch.
fn rows_of_product(
    function: &'static str,
    x: &MatrixCl<f64>,
    w: &MatrixCl<f64>,
    c: &MatrixCl<f64>,
    out: &MatrixCl<f64>,
    softmax: bool,
) -> Result<MatrixCl<f64>> {
    let (n, q, k) = (x.rows(), x.cols(), w.cols());
    if w.rows() != q {
        return Err(Error::DimensionMismatch {
            operation: function.into(),
            lhs: (n, q),
            rhs: (w.rows(), k),
        });
    }
    for (argument, m, shape) in [("c", c, (1, k)), ("out", out, (n, k))] {
        if (m.rows(), m.cols()) != shape {
            return Err(Error::InvalidArgument {
                function,
                argument,
                reason: format!(
                    "must be {} x {} (x is {n} x {q}, w {q} x {k}), is {} x {}",
                    shape.0,
                    shape.1,
                    m.rows(),
                    m.cols()
                ),
            });
        }
    }
    for (argument, size, limit, what) in [
        ("x", q, LOG_SOFTMAX_MAX_INNER, "columns"),
        ("w", k, LOG_SOFTMAX_MAX_COLUMNS, "columns"),
    ] {
        if size > limit {
            return Err(Error::InvalidArgument {
                function,
                argument,
                reason: format!(
                    "has {size} {what}; at most {limit} are kept in registers \
                     (write x * w + c and rowwise_log_sum_exp for more)"
                ),
            });
        }
    }
    for (argument, m) in [("x", x), ("w", w), ("c", c), ("out", out)] {
        if m.view() != View::Entire {
            return Err(Error::InvalidView {
                function,
                view: m.view(),
                reason: match argument {
                    "out" => "out is written whole: give it the view Entire",
                    _ => "the inputs are read as stored: give them the view Entire",
                },
            });
        }
    }
    if k == 0 {
        // No term: every row's sum is empty.
        return MatrixCl::from_slice(n, 1, &vec![f64::NEG_INFINITY; n]);
    }
    let normalisers = MatrixCl::<f64>::uninitialized(n, 1)?;
    if n == 0 {
        return Ok(normalisers);
    }
    for (argument, m) in [("x", x), ("w", w), ("c", c)] {
        if m.buffer_id() == out.buffer_id() {
            return Err(Error::InvalidArgument {
                function,
                argument: "out",
                reason: format!("shares its buffer with {argument}, which the kernel reads"),
            });
        }
    }
    // With q = 0 the kernel reads neither x nor w (both empty): `c` stands in.
    let (x, w) = if q == 0 { (c, c) } else { (x, w) };
    for (argument, m) in [("x", x), ("w", w), ("c", c), ("out", out)] {
        int(function, argument, m.len())?;
    }
    let info = Runtime::get()?.device_info();
    // The shape: 32 rows per work-group and a slot of 32 work items per
    // warp. On the tensor cores 16 warps of 16 columns each at k = 256 (the
    // kernel's header has the alternatives measured), 8 warps up to k = 64,
    // where 16 would leave half of them on padding columns; q is staged in
    // k steps of 4. Elsewhere 256 work items, q as it is.
    let tensor_cores = info.has_fp64_tensor_cores();
    let (warps, staged_q) = if tensor_cores {
        (if k <= 64 { 8 } else { 16 }, q.max(1).next_multiple_of(4))
    } else {
        (8, q.max(1))
    };
    let group = 32 * warps;
    // x's staged slice (rows padded by 4), two partials per row and slot,
    // one normaliser per row.
    let local_bytes = 8 * (staged_q * (TILE_ROWS + 4) + 2 * TILE_ROWS * warps + TILE_ROWS);
    // A device that did not say (0) is left to its driver's launch error.
    if info.local_mem_bytes > 0 && local_bytes as u64 > info.local_mem_bytes {
        return Err(Error::InvalidArgument {
            function,
            argument: "x",
            reason: format!(
                "has {q} columns: staging them takes {local_bytes} bytes of local memory, \
                 the device has {}",
                info.local_mem_bytes
            ),
        });
    }
    let mut options = format!("-D Q={staged_q} -D COL_FRAGS={}", k.div_ceil(8 * warps));
    if tensor_cores {
        options += &format!(" -D ROW_FRAGS=2 -D WARPS={warps}{}", dmma_build_flags());
    }
    if softmax {
        options += " -D SOFTMAX";
    }
    let groups = n.div_ceil(TILE_ROWS);
    cl::log_softmax_rows_of_product().launch_with_options(
        NdRange::d1(groups * group).with_local(&[group]),
        &options,
        (
            x,
            w,
            c,
            out,
            &normalisers,
            int(function, "x", n)?,
            int(function, "x", q)?,
            int(function, "w", k)?,
        ),
    )?;
    Ok(normalisers)
}
