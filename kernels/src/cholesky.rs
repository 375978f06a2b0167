//! Blocked Cholesky decomposition (paper §3.3.1), in place on a working copy.

use crate::basic::{Block, Part, copy_block, int, square, sub_block, zeros};
use crate::checks::{enqueue_check_nan, enqueue_check_symmetric, first_flagged, new_flag};
use crate::gemm::{MultiplyOptions, Operand, gemm_into};
use crate::launchers as cl;
use crate::triangular::invert_lower_in_place;
use fusion_core::{ClFloat, Error, MatrixCl, NdRange, Result, Runtime, View};

/// Blocks up to this size are factored (and inverted) by the leaf kernel
/// (`LEAF` in cholesky.cl).
const LEAF: usize = 64;

/// Work items per leaf row (`GROUPS` in cholesky.cl; the leaf's work-group
/// has `64 * groups` work items): `FUSION_CHOLESKY_LEAF_GROUPS` (1, 2 or 4),
/// else 4 (the fastest on an H200: 28 µs per 64-row leaf, 33 µs with 2;
/// 8 and 16 exceed its registers).
fn leaf_groups() -> usize {
    static VALUE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *VALUE.get_or_init(|| {
        let groups = fusion_core::tuning_knob("FUSION_CHOLESKY_LEAF_GROUPS", 4);
        if groups.is_power_of_two() && groups <= 4 {
            groups
        } else {
            4
        }
    })
}

/// Tuning of [`cholesky_decompose_with`].
///
/// ```
/// let o = fusion_kernels::CholeskyOptions::default();
/// assert_eq!(o.partition, 4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CholeskyOptions {
    /// Each level factors the leading `rows / partition` block first
    /// (rounded up to a whole number of `min_l11_size` blocks).
    pub partition: usize,
    /// Blocks this small are factored by one work-group (the leaf kernel,
    /// which also inverts them, up to 64 rows).
    pub min_l11_size: usize,
    /// Relative tolerance of the symmetry check.
    pub symmetry_tolerance: f64,
}

impl Default for CholeskyOptions {
    fn default() -> Self {
        CholeskyOptions {
            partition: 4,
            min_l11_size: LEAF,
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
    decompose(&work, &failure, 0, n, None, options)?;
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

/// Where a factored block's inverse goes: the block of `matrix` at
/// (`at`, `at`). A node's inverse holds its children's inverses as its
/// diagonal blocks, so one matrix serves a whole subtree.
#[derive(Clone, Copy)]
struct InverseTarget<'a, T: ClFloat> {
    matrix: &'a MatrixCl<T>,
    at: usize,
}

/// Factors the `size x size` diagonal block of `work` at (`at`, `at`), given
/// that everything before it is already factored and updated; writes the
/// factor's inverse into `inverse` when one is given.
fn decompose<T: ClFloat>(
    work: &MatrixCl<T>,
    failure: &MatrixCl<i32>,
    at: usize,
    size: usize,
    inverse: Option<InverseTarget<'_, T>>,
    options: &CholeskyOptions,
) -> Result<()> {
    const F: &str = "cholesky_decompose";
    if size == 0 {
        return Ok(());
    }
    if size <= options.min_l11_size {
        return leaf(work, failure, at, size, inverse);
    }
    // A whole number of leaves, so that the recursion ends in full leaves.
    let leaves = (size / options.partition)
        .div_ceil(options.min_l11_size)
        .max(1);
    let block = (leaves * options.min_l11_size).min(size - 1);
    let rest = size - block;
    // L11 and its inverse: into the caller's inverse (whose top-left block
    // it is) or into a matrix of its own.
    let own_inverse;
    let l11_inverse = match inverse {
        Some(target) => target,
        None => {
            own_inverse = MatrixCl::<T>::uninitialized(block, block)?;
            InverseTarget {
                matrix: &own_inverse,
                at: 0,
            }
        }
    };
    decompose(work, failure, at, block, Some(l11_inverse), options)?;
    let inverse_block = |at: usize, size: usize| {
        Operand::block(
            l11_inverse.matrix,
            Block::new(at, at, size, size),
            View::Lower,
        )
    };
    let l11_inv = inverse_block(l11_inverse.at, block);
    // L21 = A21 · (L11⁻¹)ᵀ, through a temporary: the product cannot overwrite its own operand.
    let l21 = MatrixCl::<T>::uninitialized(rest, block)?;
    let a21 = Operand::block(work, Block::new(at + block, at, rest, block), View::Entire);
    let whole = MultiplyOptions {
        splits: Some(1),
        config: None,
    };
    let everything = Block::new(0, 0, rest, block);
    let scope = fusion_core::profile_scope("cholesky L21");
    gemm_into(
        F,
        &l21,
        everything,
        a21,
        l11_inv.t(),
        T::one(),
        T::default(),
        false,
        &whole,
    )?;
    sub_block(work, at + block, at, &l21, everything, View::Entire)?;
    drop(scope);
    // L21 · L11⁻¹ for this block's inverse, queued now: it needs nothing
    // that the trailing update or L22 changes.
    let l21_times = match inverse {
        Some(_) => {
            let _scope = fusion_core::profile_scope("cholesky inverse");
            let product = MatrixCl::<T>::uninitialized(rest, block)?;
            gemm_into(
                F,
                &product,
                everything,
                Operand::whole(&l21),
                l11_inv,
                T::one(),
                T::default(),
                false,
                &whole,
            )?;
            Some(product)
        }
        None => None,
    };
    // A22 -= L21 · L21ᵀ (lower triangle only), from the temporary so that it
    // need not wait for the copy into `work`.
    let scope = fusion_core::profile_scope("cholesky A22 update");
    let l21_operand = Operand::whole(&l21);
    gemm_into(
        F,
        work,
        Block::new(at + block, at + block, rest, rest),
        l21_operand,
        l21_operand.t(),
        T::from_f64(-1.0),
        T::one(),
        true,
        &whole,
    )?;
    drop(scope);
    let l22_inverse = inverse.map(|target| InverseTarget {
        at: target.at + block,
        ..target
    });
    decompose(work, failure, at + block, rest, l22_inverse, options)?;
    if let (Some(target), Some(l21_times)) = (inverse, l21_times) {
        // [L11 0; L21 L22]⁻¹ = [L11⁻¹ 0; -L22⁻¹·L21·L11⁻¹ L22⁻¹]: the
        // diagonal blocks are already in place; the block below them is
        // -L22⁻¹ · (L21 · L11⁻¹).
        let _scope = fusion_core::profile_scope("cholesky inverse");
        gemm_into(
            F,
            target.matrix,
            Block::new(target.at + block, target.at, rest, block),
            inverse_block(target.at + block, rest),
            Operand::whole(&l21_times),
            T::from_f64(-1.0),
            T::default(),
            false,
            &whole,
        )?;
    }
    Ok(())
}

/// A block small enough for one work-group: the register leaf kernel
/// (factor and inverse together) when it fits, else the global-memory
/// kernel and, for the inverse, the batched triangular inverse.
fn leaf<T: ClFloat>(
    work: &MatrixCl<T>,
    failure: &MatrixCl<i32>,
    at: usize,
    size: usize,
    inverse: Option<InverseTarget<'_, T>>,
) -> Result<()> {
    const F: &str = "cholesky_decompose";
    let n = work.rows();
    let info = Runtime::get()?.device_info();
    let leaf_bytes = (LEAF * (LEAF + 1) + 3 * LEAF) * std::mem::size_of::<T>();
    let groups = leaf_groups();
    let threads = LEAF * groups;
    if size <= LEAF
        && leaf_bytes as u64 <= info.local_mem_bytes
        && threads <= info.max_work_group_size
    {
        let (target, target_at) = inverse.map_or((work, 0), |t| (t.matrix, t.at));
        let args = (
            work,
            target,
            failure,
            int(F, "a", size)?,
            int(F, "a", at + n * at)?,
            int(F, "a", n)?,
            int(F, "a", target_at + target.rows() * target_at)?,
            int(F, "a", target.rows())?,
            int(F, "a", at)?,
            i32::from(inverse.is_some()),
        );
        cl::cholesky_leaf::<T>().launch_with_options(
            NdRange::d1(threads).with_local(&[threads]),
            &format!("-D GROUPS={groups}"),
            args,
        )?;
        return Ok(());
    }
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
    cl::cholesky_block::<T>().launch(NdRange::d1(threads).with_local(&[threads]), args)?;
    if let Some(target) = inverse {
        let l = copy_block(work, Block::new(at, at, size, size))?;
        // Pivots were checked by the block kernel, so no diagonal check here.
        invert_lower_in_place(&l, size)?;
        sub_block(
            target.matrix,
            target.at,
            target.at,
            &l,
            Block::new(0, 0, size, size),
            View::Lower,
        )?;
    }
    Ok(())
}
