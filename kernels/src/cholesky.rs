//! Blocked Cholesky decomposition (paper §3.3.1), in place on a working copy.

use crate::basic::{Block, Part, copy_block, int, square, sub_block, zeros};
use crate::checks::{enqueue_check_nan, enqueue_check_symmetric, first_flagged, new_flag};
use crate::gemm::{MultiplyOptions, Operand, gemm_into};
use crate::launchers as cl;
use crate::triangular::invert_lower_in_place;
use fusion_core::{ClFloat, Error, MatrixCl, NdRange, Result, Runtime, View};

/// Blocks up to this size are factored in local memory (`CHOLESKY_LOCAL` in cholesky.cl).
const LOCAL_BLOCK: usize = 64;

/// Tuning of [`cholesky_decompose_with`].
///
/// ```
/// let o = fusion_kernels::CholeskyOptions::default();
/// assert_eq!(o.partition, 4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CholeskyOptions {
    /// Each level factors the leading `rows / partition` block first.
    pub partition: usize,
    /// Blocks this small are factored by the single-work-group kernel.
    pub min_l11_size: usize,
    /// Relative tolerance of the symmetry check.
    pub symmetry_tolerance: f64,
}

impl Default for CholeskyOptions {
    fn default() -> Self {
        CholeskyOptions {
            partition: 4,
            min_l11_size: 128,
            symmetry_tolerance: 1e-8,
        }
    }
}

/// The lower Cholesky factor `L` of a symmetric positive-definite `a`
/// (`a = L·Lᵀ`; the result has the `Lower` view).
///
/// Errors, checked on the device and read back once at the end:
/// `NaN { row, col }` for a NaN in `a`, `NotSymmetric { row, col }` when
/// `a` (view `Entire`) is not symmetric, `NotPositiveDefinite { index }` at
/// the first non-positive pivot. A `Lower` view is taken as the symmetric
/// matrix it is the lower half of.
///
/// ```
/// use fusion_core::{MatrixCl, View};
/// let a = MatrixCl::from_slice(2, 2, &[4.0, 2.0, 2.0, 5.0])?;
/// let l = fusion_kernels::cholesky_decompose(&a)?;
/// assert_eq!(l.to_vec()?, vec![2.0, 1.0, 0.0, 2.0]);
/// assert_eq!(l.view(), View::Lower);
/// # Ok::<(), fusion_core::Error>(())
/// ```
pub fn cholesky_decompose<T: ClFloat>(a: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    cholesky_decompose_with(a, &CholeskyOptions::default())
}

/// [`cholesky_decompose`] with explicit `partition` and `min_l11_size`.
///
/// ```
/// use fusion_core::MatrixCl;
/// use fusion_kernels::CholeskyOptions;
/// let a = MatrixCl::from_slice(2, 2, &[4.0, 2.0, 2.0, 5.0])?;
/// let options = CholeskyOptions { partition: 2, min_l11_size: 1, ..Default::default() };
/// let l = fusion_kernels::cholesky_decompose_with(&a, &options)?;
/// assert_eq!(l.to_vec()?, vec![2.0, 1.0, 0.0, 2.0]);
/// # Ok::<(), fusion_core::Error>(())
/// ```
pub fn cholesky_decompose_with<T: ClFloat>(
    a: &MatrixCl<T>,
    options: &CholeskyOptions,
) -> Result<MatrixCl<T>> {
    const F: &str = "cholesky_decompose";
    let n = square(F, "a", a)?;
    if options.partition < 2 || options.min_l11_size == 0 {
        return Err(Error::InvalidArgument {
            function: F,
            argument: "options",
            reason: format!("partition must be >= 2 and min_l11_size >= 1, got {options:?}"),
        });
    }
    let symmetric_by_view = match a.view() {
        View::Entire => false,
        View::Lower | View::Diagonal => true,
        view => {
            return Err(Error::InvalidView {
                function: F,
                view,
                reason: "pass the lower triangle (view Lower) or the whole matrix",
            });
        }
    };
    int(F, "a", a.len())?;
    let nan = enqueue_check_nan(a)?;
    let asymmetry = if symmetric_by_view {
        None
    } else {
        Some(enqueue_check_symmetric(
            a,
            T::from_f64(options.symmetry_tolerance),
        )?)
    };
    let work = a.try_clone()?;
    work.set_view(View::Entire);
    let failure = new_flag()?;
    decompose(&work, &failure, 0, n, options)?;
    if let Some(index) = first_flagged(&nan)? {
        return Err(Error::NaN {
            function: F,
            argument: "a",
            row: index % n,
            col: index / n,
        });
    }
    if let Some(flag) = asymmetry
        && let Some(index) = first_flagged(&flag)?
    {
        return Err(Error::NotSymmetric {
            function: F,
            argument: "a",
            row: index % n,
            col: index / n,
        });
    }
    if let Some(index) = first_flagged(&failure)? {
        return Err(Error::NotPositiveDefinite {
            function: F,
            argument: "a",
            index,
        });
    }
    zeros(&work, Part::StrictlyUpper)?;
    work.set_view(View::Lower);
    Ok(work)
}

/// Factors the `size x size` diagonal block of `work` at (`at`, `at`), given
/// that everything before it is already factored and updated.
fn decompose<T: ClFloat>(
    work: &MatrixCl<T>,
    failure: &MatrixCl<i32>,
    at: usize,
    size: usize,
    options: &CholeskyOptions,
) -> Result<()> {
    const F: &str = "cholesky_decompose";
    if size == 0 {
        return Ok(());
    }
    let n = work.rows();
    if size <= options.min_l11_size {
        let info = Runtime::get()?.device_info();
        // Enough work items for the trailing updates (up to size² elements per step).
        let threads = (size * size).clamp(1, 256).min(info.max_work_group_size);
        let args = (
            work,
            failure,
            int(F, "a", size)?,
            int(F, "a", at + n * at)?,
            int(F, "a", n)?,
            int(F, "a", at)?,
        );
        let range = NdRange::d1(threads).with_local(&[threads]);
        let local_bytes = (LOCAL_BLOCK * LOCAL_BLOCK * std::mem::size_of::<T>()) as u64;
        if size <= LOCAL_BLOCK && local_bytes + 64 <= info.local_mem_bytes {
            cl::cholesky_block_local::<T>().launch(range, args)?;
        } else {
            cl::cholesky_block::<T>().launch(range, args)?;
        }
        return Ok(());
    }
    let block = (size / options.partition).max(1);
    let rest = size - block;
    decompose(work, failure, at, block, options)?;
    // L21 = A21 · (L11⁻¹)ᵀ, through a temporary: the product cannot overwrite its own operand.
    let l11 = copy_block(work, Block::new(at, at, block, block))?;
    // Pivots were checked by the block kernel, so no diagonal check (and no host sync) here.
    invert_lower_in_place(&l11, block)?;
    let l11_inverse = l11;
    let l21 = MatrixCl::<T>::uninitialized(rest, block)?;
    let a21 = Operand::block(work, Block::new(at + block, at, rest, block), View::Entire);
    let whole = MultiplyOptions {
        splits: Some(1),
        config: None,
    };
    gemm_into(
        F,
        &l21,
        Block::new(0, 0, rest, block),
        a21,
        Operand::whole(&l11_inverse).t(),
        T::one(),
        T::default(),
        false,
        &whole,
    )?;
    sub_block(
        work,
        at + block,
        at,
        &l21,
        Block::new(0, 0, rest, block),
        View::Entire,
    )?;
    // A22 -= L21 · L21ᵀ (lower triangle only).
    let l21_in_place = Operand::block(work, Block::new(at + block, at, rest, block), View::Entire);
    gemm_into(
        F,
        work,
        Block::new(at + block, at + block, rest, rest),
        l21_in_place,
        l21_in_place.t(),
        T::from_f64(-1.0),
        T::one(),
        true,
        &whole,
    )?;
    decompose(work, failure, at + block, rest, options)
}
