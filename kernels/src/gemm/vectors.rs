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
