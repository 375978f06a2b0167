//! Seed 004's massive mixture of multivariate normals on the device: the
//! indicator draw fused with the E-step, the E-step alone, and the
//! per-component sufficient statistics (`cl/mixture.cl`).
//!
//! A component is a column of `component_stride(p)` doubles: the upper
//! triangle of `Lᵀ` by rows (`L` the Cholesky factor of the component's
//! precision matrix), the offsets `Lᵀμ`, and the constant
//! `log π - p/2 log 2π + Σ log L_aa`; `clfuse::mixture` builds them.

use crate::basic::{add_batch, int};
use crate::launchers as cl;
use crate::random::RandomKey;
use clfuse_core::{Error, MatrixCl, NdRange, Result};

/// Work items per group of the mixture kernels.
const LOCAL: usize = 128;
/// Rows of `x` each work item of the density kernels keeps in registers
/// (`Tuning::mixture_rows`, `FUSION_MIXTURE_ROWS`). Two was fastest on an
/// H200 at p = 14 (k = 256: 4.77 ms per indicator step; 1 row 5.16, 3 rows
/// 5.20, 4 rows 5.62, 8 rows 7.82: more registers per work item leave fewer
/// work items to hide latency).
fn rows_per_item() -> Result<usize> {
    Ok(clfuse_core::Runtime::get()?
        .tuning()
        .mixture_rows
        .unwrap_or(2))
}
/// Local memory the density kernels stage components into (bytes).
const LOCAL_BUDGET: usize = 32 * 1024;
/// Local memory of the statistics kernel (bytes): within the 48 KiB every
/// GPU has, and the device's own limit.
fn statistics_budget() -> Result<usize> {
    let device = clfuse_core::Runtime::get()?.device_info().local_mem_bytes as usize;
    Ok((44 * 1024).min(device.saturating_sub(4 * 1024)))
}
/// The largest dimension the kernels take (`x`'s rows live in registers).
pub const MIXTURE_MAX_DIMENSION: usize = 32;

/// Doubles per component column: `p(p+1)/2 + p + 1`.
///
/// ```
/// assert_eq!(clfuse_kernels::component_stride(14), 120);
/// ```
pub fn component_stride(p: usize) -> usize {
    p * (p + 1) / 2 + p + 1
}

/// Sufficient statistics per component: the count, `Σx` (`p`) and the upper
/// triangle of `Σxxᵀ` by rows (`p(p+1)/2`) — as many as a component's
/// stride.
///
/// ```
/// assert_eq!(clfuse_kernels::statistics_len(3), 10);
/// ```
pub fn statistics_len(p: usize) -> usize {
    component_stride(p)
}

fn check_dimension(function: &'static str, p: usize) -> Result<()> {
    if p == 0 || p > MIXTURE_MAX_DIMENSION {
        return Err(Error::InvalidArgument {
            function,
            argument: "x",
            reason: format!("has {p} columns; 1 to {MIXTURE_MAX_DIMENSION} are taken"),
        });
    }
    Ok(())
}

fn check_inputs(
    function: &'static str,
    x: &MatrixCl<f64>,
    components: &MatrixCl<f64>,
) -> Result<()> {
    let p = x.cols();
    check_dimension(function, p)?;
    if components.rows() != component_stride(p) || components.cols() == 0 {
        return Err(Error::InvalidArgument {
            function,
            argument: "components",
            reason: format!(
                "is {} x {}; a {p}-dimensional mixture needs {} rows (component_stride) and one column per component, at least one",
                components.rows(),
                components.cols(),
                component_stride(p)
            ),
        });
    }
    int(function, "x", x.len())?;
    int(function, "components", components.len())?;
    Ok(())
}

/// The compile options of `cl/mixture.cl` (one program holds all its
/// kernels, so each launch defines every size, its own and the others';
/// the sizes a kernel does not use are 1).
fn options(
    p: usize,
    local: usize,
    component_block: usize,
    rows: usize,
    statistics_block: usize,
) -> String {
    format!(
        "-D P={p} -D LOCAL_SIZE={local} -D COMPONENT_BLOCK={component_block} \
         -D ROWS_PER_ITEM={rows} -D STATISTICS_BLOCK={statistics_block}"
    )
}

/// The density kernels' range and compile options for `k` components.
fn density_launch(p: usize, n: usize, k: usize) -> Result<(NdRange, String)> {
    let block = (LOCAL_BUDGET / (8 * component_stride(p))).clamp(1, k);
    let rows = rows_per_item()?;
    let groups = n.div_ceil(LOCAL * rows).max(1);
    Ok((
        NdRange::d1(groups * LOCAL).with_local(&[LOCAL]),
        options(p, LOCAL, block, rows, 1),
    ))
}

/// The Gibbs sampler's indicator step, fused with the E-step: for each row
/// of `x` (`n x p`), a component drawn with probability `π_c(x_i)` (its
/// configuration probability), and that component's log density
/// `log(π_c N(x_i | μ_c, Σ_c))` (summed, the complete-data log
/// likelihood). One kernel: every component's density and the Gumbel-max
/// draw per row, in registers; the `n x k` probabilities are never
/// written. The draw of `(i, c)` uses `key`'s counter `(i, c, 0, stream)`,
/// as `clfuse_ops::random::categorical_logit_rng` does, so the two draw the
/// same indicators from the same log densities. A row whose densities are
/// all `-inf` or NaN gets `-1`.
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::{RandomKey, component_stride, mixture_indicators};
/// // Two 1-d components: N(-5, 1) and N(5, 1), equal weights (the
/// // constants are equal, so they are left 0 here).
/// let components = MatrixCl::from_slice(component_stride(1), 2, &[1.0, -5.0, 0.0, 1.0, 5.0, 0.0])?;
/// let x = MatrixCl::from_slice(3, 1, &[-4.0, 6.0, -5.5])?;
/// let (z, density) = mixture_indicators(&x, &components, RandomKey::new(1))?;
/// assert_eq!(z.to_vec()?, vec![0, 1, 0]);
/// assert!((density.to_vec()?[0] + 0.5).abs() < 1e-12);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn mixture_indicators(
    x: &MatrixCl<f64>,
    components: &MatrixCl<f64>,
    key: RandomKey,
) -> Result<(MatrixCl<i32>, MatrixCl<f64>)> {
    const F: &str = "mixture_indicators";
    check_inputs(F, x, components)?;
    let (n, p, k) = (x.rows(), x.cols(), components.cols());
    let z = MatrixCl::<i32>::uninitialized(n, 1)?;
    let chosen = MatrixCl::<f64>::uninitialized(n, 1)?;
    if n == 0 {
        return Ok((z, chosen));
    }
    let (range, options) = density_launch(p, n, k)?;
    let [seed_lo, seed_hi, stream] = key.kernel_words();
    cl::mixture_indicators().launch_with_options(
        range,
        &options,
        (
            x,
            components,
            &z,
            &chosen,
            int(F, "x", n)?,
            int(F, "components", k)?,
            seed_lo,
            seed_hi,
            stream,
        ),
    )?;
    Ok((z, chosen))
}

/// The E-step alone: the `n x k` log configuration probabilities
/// `log π_c(x_i)` (each row normalised) and each row's log density
/// `log g(x_i) = log Σ_c π_c N(x_i | μ_c, Σ_c)` (`n x 1`), in one kernel.
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::{component_stride, mixture_log_responsibilities};
/// let components = MatrixCl::from_slice(component_stride(1), 2, &[1.0, 0.0, 0.0, 1.0, 0.0, 0.0])?;
/// let x = MatrixCl::from_slice(1, 1, &[0.3])?;
/// let (r, _) = mixture_log_responsibilities(&x, &components)?;
/// let r = r.to_vec()?;
/// assert!((r[0] - 0.5f64.ln()).abs() < 1e-12 && (r[1] - 0.5f64.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn mixture_log_responsibilities(
    x: &MatrixCl<f64>,
    components: &MatrixCl<f64>,
) -> Result<(MatrixCl<f64>, MatrixCl<f64>)> {
    const F: &str = "mixture_log_responsibilities";
    check_inputs(F, x, components)?;
    let (n, p, k) = (x.rows(), x.cols(), components.cols());
    int(F, "responsibilities", n * k)?;
    let responsibilities = MatrixCl::<f64>::uninitialized(n, k)?;
    let row_log_density = MatrixCl::<f64>::uninitialized(n, 1)?;
    if n == 0 {
        return Ok((responsibilities, row_log_density));
    }
    let (range, options) = density_launch(p, n, k)?;
    cl::mixture_log_responsibilities().launch_with_options(
        range,
        &options,
        (
            x,
            components,
            &responsibilities,
            &row_log_density,
            int(F, "x", n)?,
            int(F, "components", k)?,
        ),
    )?;
    Ok((responsibilities, row_log_density))
}

/// Each component's sufficient statistics from the indicators `z`
/// (`n x 1`, values in `0..k`; others, such as `-1`, are left out): a
/// `statistics_len(p) x k` matrix whose column `c` is the count, `Σx` and
/// the upper triangle of `Σxxᵀ` (by rows) over the rows with `z_i = c`.
/// No atomics and no sort: work-groups own blocks of components and walk
/// chunks of rows through local memory, and the chunks' partial sums are
/// added in a fixed order, so the same `z` always gives the same bits.
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::mixture_statistics;
/// let x = MatrixCl::from_slice(3, 1, &[1.0, 2.0, 4.0])?;
/// let z = MatrixCl::from_slice(3, 1, &[1, 0, 1])?;
/// let s = mixture_statistics(&x, &z, 2)?.to_vec()?;
/// // Component 0: count 1, Σx 2, Σx² 4; component 1: 2, 5, 17.
/// assert_eq!(s, vec![1.0, 2.0, 4.0, 2.0, 5.0, 17.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn mixture_statistics(x: &MatrixCl<f64>, z: &MatrixCl<i32>, k: usize) -> Result<MatrixCl<f64>> {
    const F: &str = "mixture_statistics";
    let (n, p) = (x.rows(), x.cols());
    check_dimension(F, p)?;
    if (z.rows(), z.cols()) != (n, 1) {
        return Err(Error::DimensionMismatch {
            operation: F.into(),
            lhs: (n, p),
            rhs: (z.rows(), z.cols()),
        });
    }
    let stats = statistics_len(p);
    let out = MatrixCl::<f64>::uninitialized(stats, k)?;
    if k == 0 {
        return Ok(out);
    }
    if n == 0 {
        out.fill(0.0)?;
        return Ok(out);
    }
    int(F, "x", x.len())?;
    // Work item s owns statistic s; the tile's rows (LOCAL_SIZE of them,
    // with their component and place) share local memory with the block's
    // accumulators.
    let local = stats.div_ceil(32) * 32;
    let tile_bytes = local * (8 * p + 12);
    let block = (statistics_budget()?.saturating_sub(tile_bytes) / (8 * stats)).clamp(1, k);
    let blocks = k.div_ceil(block);
    // Enough groups to fill a GPU (a few per compute unit), each chunk of
    // rows at least a few tiles long.
    let units = clfuse_core::Runtime::get()?.device_info().compute_units as usize;
    let chunks = (4 * units.max(1))
        .div_ceil(blocks)
        .clamp(1, n.div_ceil(4 * local));
    let rows_per_chunk = n.div_ceil(chunks);
    let chunks = n.div_ceil(rows_per_chunk);
    int(F, "partial", chunks * stats * k)?;
    let partial = MatrixCl::<f64>::uninitialized(stats * k, chunks)?;
    cl::mixture_statistics().launch_with_options(
        NdRange::d2([chunks * local, blocks]).with_local(&[local, 1]),
        &options(p, local, 1, 1, block),
        (
            x,
            z,
            &partial,
            int(F, "x", n)?,
            int(F, "k", k)?,
            int(F, "x", rows_per_chunk)?,
        ),
    )?;
    add_batch(&out, &partial, chunks, 0.0)?;
    Ok(out)
}

/// The statistics' features of every row of `x` (`n x p`): an
/// `n x statistics_len(p)` matrix with columns 1, `x_a`, and `x_a x_b`
/// (`a <= b`, by rows). Responsibility-weighted statistics (Bayesian EM)
/// are then one product, `multiply_transposed(features, responsibilities)`.
///
/// ```
/// use clfuse_core::MatrixCl;
/// let x = MatrixCl::from_slice(1, 2, &[2.0, 3.0])?;
/// let f = clfuse_kernels::mixture_features(&x)?.to_vec()?;
/// assert_eq!(f, vec![1.0, 2.0, 3.0, 4.0, 6.0, 9.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn mixture_features(x: &MatrixCl<f64>) -> Result<MatrixCl<f64>> {
    const F: &str = "mixture_features";
    let (n, p) = (x.rows(), x.cols());
    check_dimension(F, p)?;
    int(F, "features", n * statistics_len(p))?;
    let features = MatrixCl::<f64>::uninitialized(n, statistics_len(p))?;
    if n == 0 {
        return Ok(features);
    }
    cl::mixture_features().launch_with_options(
        NdRange::d1(n.div_ceil(LOCAL) * LOCAL).with_local(&[LOCAL]),
        &options(p, LOCAL, 1, 1, 1),
        (x, &features, int(F, "x", n)?),
    )?;
    Ok(features)
}
