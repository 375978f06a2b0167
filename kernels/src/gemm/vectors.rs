//! Products with a vector: `a * x` for a column vector (one work item per
//! row) and `x * a` for a row vector (work-groups splitting the rows of `a`,
//! partial rows summed by `add_batch`).

use super::operand::or_stand_in;
use crate::basic::{add_batch, int};
use crate::launchers as cl;
use clfuse_core::{ClFloat, Error, MatrixCl, NdRange, Result, Runtime};

/// `a * x` for a column vector `x`: one work item per row (1-D range).
///
/// ```
/// use clfuse_core::MatrixCl;
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 3.0, 2.0, 4.0])?;
/// let x = MatrixCl::from_slice(2, 1, &[1.0, -1.0])?;
/// assert_eq!(clfuse_kernels::matrix_vector_multiply(&a, &x)?.to_vec()?, vec![-1.0, -1.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn matrix_vector_multiply<T: ClFloat>(a: &MatrixCl<T>, x: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    const F: &str = "matrix_vector_multiply";
    if x.cols() != 1 || a.cols() != x.rows() {
        return Err(Error::DimensionMismatch {
            operation: F.into(),
            lhs: (a.rows(), a.cols()),
            rhs: (x.rows(), x.cols()),
        });
    }
    let y = MatrixCl::<T>::uninitialized(a.rows(), 1)?;
    int(F, "a", a.len())?;
    cl::matrix_vector_multiply::<T>().launch(
        NdRange::d1(a.rows()),
        (
            &y,
            or_stand_in(a, &y),
            or_stand_in(x, &y),
            int(F, "a", a.rows())?,
            int(F, "a", a.cols())?,
            a.view().bits(),
        ),
    )?;
    Ok(y)
}

/// Work-groups per compute unit of the row-vector kernel:
/// [`Tuning::row_vector_groups_per_cu`](clfuse_core::Tuning), else 4.
fn row_vector_groups_per_compute_unit(rt: &Runtime) -> usize {
    rt.tuning().row_vector_groups_per_cu.unwrap_or(4)
}

/// Columns per work-group of the row-vector kernel:
/// [`Tuning::row_vector_chunk`](clfuse_core::Tuning), else 8.
fn row_vector_chunk(rt: &Runtime) -> usize {
    rt.tuning().row_vector_chunk.unwrap_or(8)
}

/// `x * a` for a row vector `x` (`1 x k`; a `k x 1` column is taken as its
/// transpose, the same buffer): work-groups of 256 work items
/// split the rows of `a` (enough groups to fill the device, however few
/// columns `a` has) and 8 columns at a time; each reads its slice of `x`
/// once for those columns, and the groups' partial rows are summed by
/// `add_batch`. This is `aᵀ·xᵀ` for a tall `a` — the GLM gradient `xᵀ·d`.
///
/// ```
/// use clfuse_core::MatrixCl;
/// let x = MatrixCl::from_slice(1, 2, &[1.0, -1.0])?;
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 3.0, 2.0, 4.0])?;
/// assert_eq!(clfuse_kernels::row_vector_matrix_multiply(&x, &a)?.to_vec()?, vec![-2.0, -2.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn row_vector_matrix_multiply<T: ClFloat>(
    x: &MatrixCl<T>,
    a: &MatrixCl<T>,
) -> Result<MatrixCl<T>> {
    const F: &str = "row_vector_matrix_multiply";
    const LOCAL: usize = 256;
    // Columns per work-group: each group reads its rows of `x` once, so
    // wider chunks read `x` fewer times (`FUSION_ROW_VECTOR_CHUNK` to tune).
    let rt = Runtime::get()?;
    let chunk = row_vector_chunk(rt);
    let vector = (x.rows() == 1 && x.cols() == a.rows()) || (x.cols() == 1 && x.rows() == a.rows());
    if !vector {
        return Err(Error::DimensionMismatch {
            operation: F.into(),
            lhs: (x.rows(), x.cols()),
            rhs: (a.rows(), a.cols()),
        });
    }
    let (k, n) = (a.rows(), a.cols());
    let y = MatrixCl::<T>::uninitialized(1, n)?;
    if n == 0 {
        return Ok(y);
    }
    if k == 0 {
        y.fill(T::default())?;
        return Ok(y);
    }
    int(F, "a", a.len())?;
    let chunks = n.div_ceil(chunk);
    let compute_units = rt.device_info().compute_units as usize;
    let row_groups = (row_vector_groups_per_compute_unit(rt) * compute_units.max(1))
        .div_ceil(chunks)
        .clamp(1, k.div_ceil(LOCAL));
    let partial = MatrixCl::<T>::uninitialized(n, row_groups)?;
    cl::row_vector_matrix_multiply::<T>().launch_with_options(
        NdRange::d2([row_groups * LOCAL, chunks]).with_local(&[LOCAL, 1]),
        &format!("-D COLUMN_CHUNK={chunk}"),
        (
            &partial,
            x,
            a,
            int(F, "a", k)?,
            int(F, "a", n)?,
            a.view().bits(),
        ),
    )?;
    add_batch(&y, &partial, row_groups, T::default())?;
    Ok(y)
}

/// Most columns the skinny products take: each work item keeps one
/// accumulator per column (and per column of `a` in a chunk, for
/// [`transposed_skinny_multiply`]).
pub const SKINNY_MAX_COLS: usize = 16;

/// Whether `a` (`rows x cols`) is tall enough for the skinny kernels to
/// beat the GEMM's tiles: many rows, and many per column, so that one work
/// item per row (or row groups) fills the device and each tile of the GEMM
/// would mostly hold padding.
pub(crate) fn tall(rows: usize, cols: usize) -> bool {
    rows >= 4096 && rows >= 8 * cols
}

/// Checks a skinny product's right operand: at most
/// [`SKINNY_MAX_COLS`] columns, stored whole.
fn skinny_operand<T: ClFloat>(function: &'static str, x: &MatrixCl<T>) -> Result<()> {
    if x.cols() > SKINNY_MAX_COLS || x.view() != clfuse_core::View::Entire {
        return Err(Error::InvalidArgument {
            function,
            argument: "x",
            reason: format!(
                "must have at most {SKINNY_MAX_COLS} columns and view Entire, got {} x {} ({:?})",
                x.rows(),
                x.cols(),
                x.view()
            ),
        });
    }
    Ok(())
}

/// `a * x` for a tall `a` and an `x` of at most [`SKINNY_MAX_COLS`]
/// columns (a batch of chains' parameters): one work item per row of `a`
/// with one accumulator per column of `x`, so `a` is read once for all of
/// them, coalesced. [`multiply`](crate::multiply) takes it for tall `a`.
///
/// ```
/// use clfuse_core::MatrixCl;
/// let a = MatrixCl::from_slice(3, 2, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])?; // rows [1 4], [2 5], [3 6]
/// let x = MatrixCl::from_slice(2, 2, &[1.0, 0.0, 1.0, -1.0])?; // columns [1 0], [1 -1]
/// let y = clfuse_kernels::matrix_skinny_multiply(&a, &x)?;
/// assert_eq!(y.to_vec()?, vec![1.0, 2.0, 3.0, -3.0, -3.0, -3.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn matrix_skinny_multiply<T: ClFloat>(a: &MatrixCl<T>, x: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    const F: &str = "matrix_skinny_multiply";
    if a.cols() != x.rows() {
        return Err(Error::DimensionMismatch {
            operation: F.into(),
            lhs: (a.rows(), a.cols()),
            rhs: (x.rows(), x.cols()),
        });
    }
    skinny_operand(F, x)?;
    let (m, n) = (a.rows(), x.cols());
    let y = MatrixCl::<T>::uninitialized(m, n)?;
    if m == 0 || n == 0 {
        return Ok(y);
    }
    int(F, "a", a.len())?;
    int(F, "y", y.len())?;
    // `x` fits local memory (up to 32 KiB of doubles): staged there once
    // per work-group; the range then has a work-group size to share it.
    let staged = x.len() <= 4096;
    let (range, options) = if staged {
        (
            NdRange::d1(m.div_ceil(256) * 256).with_local(&[256]),
            format!(
                "-D NCOLS={n} -D X_IN_LOCAL -D X_CAPACITY={}",
                x.len().max(1)
            ),
        )
    } else {
        (NdRange::d1(m), format!("-D NCOLS={n}"))
    };
    cl::matrix_skinny_multiply::<T>().launch_with_options(
        range,
        &options,
        (
            &y,
            or_stand_in(a, &y),
            or_stand_in(x, &y),
            int(F, "a", m)?,
            int(F, "a", a.cols())?,
            a.view().bits(),
        ),
    )?;
    Ok(y)
}

/// Most columns of `a` [`transposed_skinny_multiply`] takes: one work
/// item per column of a local tile.
pub const SKINNY_MAX_TRANSPOSED: usize = 256;

/// `aᵀ * x` for a tall `a` (`k x n`, `n` at most
/// [`SKINNY_MAX_TRANSPOSED`]) and an `x` (`k x c`) of at most
/// [`SKINNY_MAX_COLS`] columns, `a` and `x` each read once. For few
/// columns of `a` (at most 32 sums per work item, e.g. 100 x 8), each work
/// item reads neighbouring rows of its columns of `a` straight into
/// registers; otherwise work-groups take tiles of rows, copy each tile of
/// `a` and `x` into local memory (coalesced), and sum `n x c` products from
/// there. The groups' partial results are summed by `add_batch`. This is the gradient `xᵀ·D`
/// of a batch of chains, and [`multiply_transposed`](crate::multiply_transposed)
/// takes it for tall `a`.
///
/// ```
/// use clfuse_core::MatrixCl;
/// let a = MatrixCl::from_slice(3, 1, &[1.0, 2.0, 3.0])?;
/// let x = MatrixCl::from_slice(3, 2, &[1.0, 1.0, 1.0, 0.0, 1.0, 0.0])?;
/// let y = clfuse_kernels::transposed_skinny_multiply(&a, &x)?;
/// assert_eq!((y.rows(), y.cols()), (1, 2));
/// assert_eq!(y.to_vec()?, vec![6.0, 2.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn transposed_skinny_multiply<T: ClFloat>(
    a: &MatrixCl<T>,
    x: &MatrixCl<T>,
) -> Result<MatrixCl<T>> {
    const F: &str = "transposed_skinny_multiply";
    const LOCAL: usize = 256;
    if a.rows() != x.rows() {
        return Err(Error::DimensionMismatch {
            operation: F.into(),
            lhs: (a.cols(), a.rows()),
            rhs: (x.rows(), x.cols()),
        });
    }
    skinny_operand(F, x)?;
    let (k, n, c) = (a.rows(), a.cols(), x.cols());
    if n > SKINNY_MAX_TRANSPOSED {
        return Err(Error::InvalidArgument {
            function: F,
            argument: "a",
            reason: format!("has {n} columns; at most {SKINNY_MAX_TRANSPOSED} are taken"),
        });
    }
    let y = MatrixCl::<T>::uninitialized(n, c)?;
    if n == 0 || c == 0 {
        return Ok(y);
    }
    if k == 0 {
        y.fill(T::default())?;
        return Ok(y);
    }
    int(F, "a", a.len())?;
    int(F, "x", x.len())?;
    let rt = Runtime::get()?;
    // Its end-of-kernel sums pass through `LANES_LOCAL x c` values of
    // local memory: within half of the device's.
    let scratch = LANES_LOCAL * c * std::mem::size_of::<T>();
    let fits = scratch <= rt.device_info().local_mem_bytes as usize / 2;
    if let Some(lanes) = skinny_lanes(n, c).filter(|_| fits) {
        transposed_skinny_in_registers(&y, a, x, lanes)?;
        return Ok(y);
    }
    // The tiles of `a` and `x` within 32 KiB of local memory (doubles).
    let tile_rows = (32 * 1024 / (8 * (n + c + 1))).clamp(1, 32);
    // As many groups as local memory lets a compute unit hold (a GPU's
    // 228 KiB, with room to spare), at least the row-vector kernel's.
    let local_bytes = 8 * ((tile_rows + 1) * n + tile_rows * c + LOCAL);
    let per_unit = (160 * 1024 / local_bytes).max(row_vector_groups_per_compute_unit(rt));
    let compute_units = rt.device_info().compute_units as usize;
    let groups = (per_unit * compute_units.max(1)).clamp(1, k.div_ceil(tile_rows));
    int(F, "partial", n * c * groups)?;
    let partial = MatrixCl::<T>::uninitialized(n * c, groups)?;
    cl::transposed_skinny_multiply::<T>().launch_with_options(
        NdRange::d1(groups * LOCAL).with_local(&[LOCAL]),
        &format!("-D TILE_ROWS={tile_rows} -D NA={n} -D NCOLS={c} -D LOCAL_SIZE={LOCAL}"),
        (
            &partial,
            a,
            x,
            int(F, "a", k)?,
            int(F, "a", n)?,
            a.view().bits(),
        ),
    )?;
    add_batch(&y, &partial, groups, T::default())?;
    Ok(y)
}

/// Work items per work-group of [`transposed_skinny_in_registers`].
const LANES_LOCAL: usize = 256;

/// Most sums one work item of [`transposed_skinny_in_registers`] keeps in
/// registers: more spill on a GPU.
const LANES_MAX_SUMS: usize = 32;

/// How many neighbouring rows ([`transposed_skinny_in_registers`]'s lanes)
/// a team of work items reads for `aᵀ x` with `n` columns of `a` and `c` of
/// `x`: 8 (64 bytes of a column) or 4 (one 32-byte sector), whichever keeps
/// each work item's sums within [`LANES_MAX_SUMS`]; `None` when neither
/// does (the tiled kernel takes those).
fn skinny_lanes(n: usize, c: usize) -> Option<usize> {
    [8, 4]
        .into_iter()
        .find(|&lanes| n.div_ceil(LANES_LOCAL / lanes) * c <= LANES_MAX_SUMS)
}

/// `y = aᵀ x` with every work item's sums in registers (`lanes` rows of a
/// column per team of work items; `matvec.cl` explains the layout), for `a`
/// of few columns: no tile of `a` passes through local memory, so the loop
/// over rows has no barrier. Measured on an H100 against the tiled kernel:
/// BENCHMARKS.md (#36).
fn transposed_skinny_in_registers<T: ClFloat>(
    y: &MatrixCl<T>,
    a: &MatrixCl<T>,
    x: &MatrixCl<T>,
    lanes: usize,
) -> Result<()> {
    const F: &str = "transposed_skinny_multiply";
    let (k, n, c) = (a.rows(), a.cols(), x.cols());
    let rt = Runtime::get()?;
    let compute_units = rt.device_info().compute_units as usize;
    // Work-groups per compute unit: four while each work item keeps few
    // sums, two (as many as an H100's registers hold) beyond. Measured for
    // `xᵀ D`, x 1e6 x 100, on an H100 (µs; the tiled kernel in brackets):
    // D of 1 column 331 with four groups, 405 with two (343); 2: 336, 413
    // (361); 4: 462, 422 (576); 8: 480, 450 (598). HISTORY.md (#36).
    let sums = n.div_ceil(LANES_LOCAL / lanes) * c;
    let per_unit = if sums <= 8 { 4 } else { 2 };
    let groups = (per_unit * compute_units.max(1)).clamp(1, k.div_ceil(lanes));
    int(F, "partial", n * c * groups)?;
    let partial = MatrixCl::<T>::uninitialized(n * c, groups)?;
    cl::transposed_skinny_lanes::<T>().launch_with_options(
        NdRange::d1(groups * LANES_LOCAL).with_local(&[LANES_LOCAL]),
        &format!("-D LANES={lanes} -D NA={n} -D NCOLS={c} -D LOCAL_SIZE={LANES_LOCAL}"),
        (&partial, a, x, int(F, "a", k)?, a.view().bits()),
    )?;
    add_batch(y, &partial, groups, T::default())
}
