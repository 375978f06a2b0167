//! Triangular inverse (paper §3.2, seed "OpenCL kernels") and the triangular
//! solves built on it.

use crate::basic::{Block, Part, batch_identity, int, square, transpose, triangular_view, zeros};
use crate::checks::{
    FiniteCheck, copy_checking_finite, enqueue_check_diagonal_zeros, first_flagged_all, not_finite,
    zero_on_diagonal,
};
use crate::gemm::{MultiplyOptions, Op, Operand, gemm_into, multiply, multiply_transposed};
use crate::launchers as cl;
use crate::substitution::{Rhs, SUBSTITUTION_MAX_COLS, checked_solve};
use clfuse_core::{ClFloat, Error, MatrixCl, NdRange, Result, View};

/// Diagonal blocks inverted by `diag_inv`, one work-group each.
const BLOCK: usize = 32;
/// Tile of the batched multiplies (`TRI_TS`) and work per thread (`TRI_WPT`).
const TRI_TS: usize = 32;
const TRI_WPT: usize = 4;

/// The inverse of a triangular matrix (view `Lower`, `Upper` or `Diagonal`;
/// the result has the same view). Upper matrices are inverted through their
/// transpose. A zero on the diagonal is an error (the matrix is singular).
///
/// The lower case runs the batched algorithm: `batch_identity`, `diag_inv`
/// on the 32 x 32 diagonal blocks, then for s = 32, 64, 128, ... the batched
/// `inv_lower_tri_multiply` / `neg_rect_lower_tri_multiply` pair that fills
/// the block below each pair of inverted blocks: C3 = -C2·A3·C1.
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// let l = MatrixCl::from_slice(2, 2, &[2.0, 1.0, 0.0, 4.0])?.with_view(View::Lower);
/// let inv = clfuse_kernels::tri_inverse(&l)?;
/// assert_eq!(inv.to_vec()?, vec![0.5, -0.125, 0.0, 0.25]);
/// assert_eq!(inv.view(), View::Lower);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn tri_inverse<T: ClFloat>(a: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    checked_inverse("tri_inverse", "a", a)
}

/// [`tri_inverse`] for `function`, whose errors it names: `a` must be
/// triangular, finite and have no zero on its diagonal. Both checks are read
/// back in one round trip after the inverse is queued; the finite check
/// rides on the copy the inverse is computed in.
pub(crate) fn checked_inverse<T: ClFloat>(
    function: &'static str,
    argument: &'static str,
    a: &MatrixCl<T>,
) -> Result<MatrixCl<T>> {
    let n = square(function, argument, a)?;
    let view = triangular_view(function, a)?;
    let diagonal_zeros = enqueue_check_diagonal_zeros(a)?;
    // An upper matrix is inverted through its transpose, whose positions
    // are swapped back in errors.
    let lower = match view {
        View::Upper => Some(transpose(a)?),
        _ => None,
    };
    let source = lower.as_ref().unwrap_or(a);
    let (inverse, non_finite) = copy_checking_finite(function, source, source.view())?;
    invert_lower_in_place(&inverse, n)?;
    if view == View::Diagonal {
        zeros(&inverse, Part::StrictlyLower)?;
        inverse.set_view(View::Diagonal);
    }
    let [non_finite, zero] = first_flagged_all([Some(&non_finite), Some(&diagonal_zeros)])?;
    if let Some(index) = non_finite {
        return Err(not_finite(
            function,
            argument,
            source,
            index,
            lower.is_some(),
        ));
    }
    if let Some(index) = zero {
        return Err(zero_on_diagonal(function, argument, n, index));
    }
    match lower {
        Some(_) => transpose(&inverse),
        None => Ok(inverse),
    }
}

/// Replaces the lower triangle of `result` by its inverse and zeroes the
/// rest (view `Lower`); the blocked Cholesky calls it on a fresh copy of L11.
pub(crate) fn invert_lower_in_place<T: ClFloat>(result: &MatrixCl<T>, n: usize) -> Result<()> {
    invert_diagonal_blocks_in_place(result, n, usize::MAX)
}

/// The first steps of [`invert_lower_in_place`]: inverts the diagonal
/// blocks of `result`'s lower triangle, of `largest` rows (rounded up to
/// 32 times a power of two; the last block may be smaller), in place, and
/// zeroes the strict upper triangle; the lower triangle outside those
/// blocks keeps its values (view `Lower`). The blocked solve reads both.
pub(crate) fn invert_diagonal_blocks_in_place<T: ClFloat>(
    result: &MatrixCl<T>,
    n: usize,
    largest: usize,
) -> Result<()> {
    const F: &str = "tri_inverse";
    result.set_view(View::Entire);
    zeros(result, Part::StrictlyUpper)?;
    if n == 0 {
        result.set_view(View::Lower);
        return Ok(());
    }
    let size = int(F, "a", n)?;
    int(F, "a", result.len())?;
    let blocks = n.div_ceil(BLOCK);
    let identities = batch_identity::<T>(BLOCK, blocks)?;
    cl::diag_inv::<T>().launch(
        NdRange::d1(blocks * BLOCK).with_local(&[BLOCK]),
        (result, &identities, size),
    )?;
    let rts = TRI_TS / TRI_WPT;
    let mut s = BLOCK;
    while s < n && s < largest {
        let pairs = n.div_ceil(2 * s);
        if s >= GEMM_STEP_MIN && pairs <= GEMM_STEP_MAX_PAIRS {
            for pair in 0..pairs {
                combine_by_gemm(result, n, pair * 2 * s, s)?;
            }
        } else {
            let temp = MatrixCl::<T>::uninitialized(s, s * pairs)?;
            let tiles = s.div_ceil(TRI_TS) * rts;
            let range = NdRange::d3([tiles, tiles, pairs]).with_local(&[rts, rts, 1]);
            let step = int(F, "a", s)?;
            cl::inv_lower_tri_multiply::<T>().launch(range, (result, &temp, size, step))?;
            cl::neg_rect_lower_tri_multiply::<T>().launch(range, (result, &temp, size, step))?;
        }
        s *= 2;
    }
    result.set_view(View::Lower);
    Ok(())
}

/// Blocks of at least this size are combined by the GEMM ...
const GEMM_STEP_MIN: usize = 256;
/// ... when a doubling step has at most this many pairs: few large blocks
/// are where the batched kernels (one work-group grid for every pair) lost
/// to the GEMM, which takes the FP64 tensor cores where there are some
/// (the last step at n = 8192 took 17.6 of the inverse's 24.6 ms on an
/// H200, BENCHMARKS.md).
const GEMM_STEP_MAX_PAIRS: usize = 4;

/// One pair of a doubling step by two GEMMs: with the diagonal blocks
/// `C11 = A11⁻¹` (`s x s` at `first`) and `C22 = A22⁻¹` (the next `r x r`,
/// `r = min(s, n - first - s)`) already inverted in place, the block
/// between them becomes `C21 = -C22 · A21 · C11` (triangular operands read
/// through their lower views, so their zero tiles are skipped).
fn combine_by_gemm<T: ClFloat>(
    result: &MatrixCl<T>,
    n: usize,
    first: usize,
    s: usize,
) -> Result<()> {
    const F: &str = "tri_inverse";
    let second = first + s;
    if second >= n {
        return Ok(()); // a last block without a partner
    }
    let r = s.min(n - second);
    let whole = MultiplyOptions::default();
    let temp = MatrixCl::<T>::uninitialized(r, s)?;
    // temp = A21 · C11
    gemm_into(
        F,
        &temp,
        Block::new(0, 0, r, s),
        Operand::block(result, Block::new(second, first, r, s), View::Entire),
        Operand::block(result, Block::new(first, first, s, s), View::Lower),
        T::one(),
        T::default(),
        false,
        &whole,
    )?;
    // C21 = -C22 · temp
    gemm_into(
        F,
        result,
        Block::new(second, first, r, s),
        Operand::block(result, Block::new(second, second, r, r), View::Lower),
        Operand::whole(&temp),
        T::from_f64(-1.0),
        T::default(),
        false,
        &whole,
    )
}

/// Solves `a · x = b` for triangular `a` (view `Lower` or `Upper`): `x = a⁻¹ · b`,
/// by substitution ([`tri_solve`](crate::tri_solve), O(n² m)) when `b` has up to
/// [`SUBSTITUTION_MAX_COLS`] columns, else through the inverse.
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// let a = MatrixCl::from_slice(2, 2, &[2.0, 1.0, 0.0, 4.0])?.with_view(View::Lower);
/// let b = MatrixCl::from_slice(2, 1, &[2.0, 9.0])?;
/// assert_eq!(clfuse_kernels::mdivide_left_tri(&a, &b)?.to_vec()?, vec![1.0, 2.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn mdivide_left_tri<T: ClFloat>(a: &MatrixCl<T>, b: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    if a.rows() != b.rows() {
        return Err(Error::DimensionMismatch {
            operation: "mdivide_left_tri".into(),
            lhs: (a.rows(), a.cols()),
            rhs: (b.rows(), b.cols()),
        });
    }
    solve_left("mdivide_left_tri", a, Op::N, b)
}

/// `op(a)⁻¹ · b` for `function`: by substitution for a thin `b` (up to
/// [`SUBSTITUTION_MAX_COLS`] columns), else by the inverse and a GEMM.
pub(crate) fn solve_left<T: ClFloat>(
    function: &'static str,
    a: &MatrixCl<T>,
    op: Op,
    b: &MatrixCl<T>,
) -> Result<MatrixCl<T>> {
    if b.cols() <= SUBSTITUTION_MAX_COLS {
        return checked_solve(function, a, op, Rhs::AsGiven(b));
    }
    let b_finite = FiniteCheck::start(function, "b", b)?;
    let inverse = checked_inverse(function, "a", a)?;
    b_finite.finish()?;
    multiply_transposed(&inverse, op, b, Op::N)
}

/// Solves `a · x = I` for triangular `a`: the identity right-hand side is
/// the inverse itself, with no multiplication.
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// let a = MatrixCl::from_slice(1, 1, &[4.0])?.with_view(View::Upper);
/// assert_eq!(clfuse_kernels::mdivide_left_tri_identity(&a)?.to_vec()?, vec![0.25]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn mdivide_left_tri_identity<T: ClFloat>(a: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    checked_inverse("mdivide_left_tri_identity", "a", a)
}

/// Solves `x · a = b` for triangular `a`: `x = b · a⁻¹` (by substitution when
/// `b` has up to [`SUBSTITUTION_MAX_COLS`] rows).
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// let a = MatrixCl::from_slice(2, 2, &[2.0, 1.0, 0.0, 4.0])?.with_view(View::Lower);
/// let b = MatrixCl::from_slice(1, 2, &[4.0, 8.0])?;
/// // x·a = b: x = [1.0, 2.0] (x0·2 + x1·1 = 4, x1·4 = 8)
/// assert_eq!(clfuse_kernels::mdivide_right_tri(&b, &a)?.to_vec()?, vec![1.0, 2.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn mdivide_right_tri<T: ClFloat>(b: &MatrixCl<T>, a: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    if b.cols() != a.rows() {
        return Err(Error::DimensionMismatch {
            operation: "mdivide_right_tri".into(),
            lhs: (b.rows(), b.cols()),
            rhs: (a.rows(), a.cols()),
        });
    }
    if b.rows() <= SUBSTITUTION_MAX_COLS {
        // x · a = b is aᵀ · xᵀ = bᵀ: thin transposes and one substitution.
        let bt = transpose(b)?;
        let x = checked_solve("mdivide_right_tri", a, Op::T, Rhs::Transposed(&bt))?;
        return transpose(&x);
    }
    let b_finite = FiniteCheck::start("mdivide_right_tri", "b", b)?;
    let inverse = checked_inverse("mdivide_right_tri", "a", a)?;
    b_finite.finish()?;
    multiply(b, &inverse)
}
