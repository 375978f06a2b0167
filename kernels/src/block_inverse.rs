//! The batched inverse of a lower-triangular matrix in place (paper §3.2,
//! seed 002): `diag_inv` on the 32 x 32 diagonal blocks, then doubling
//! steps that fill the block below each pair of inverted blocks,
//! `C21 = -C22 · A21 · C11`. Stopped early, it leaves the diagonal blocks of
//! a chosen size inverted and the rest of the triangle as it was, which is
//! what the blocked triangular solve reads. `tri_inverse`, the Cholesky,
//! its adjoint and the solves build on it.

use crate::basic::{Block, Part, batch_identity, int, zeros};
use crate::gemm::{MultiplyOptions, Operand, gemm_into};
use crate::launchers as cl;
use clfuse_core::{ClFloat, MatrixCl, NdRange, Result, View};

/// Diagonal blocks inverted by `diag_inv`, one work-group each.
const BLOCK: usize = 32;
/// Tile of the batched multiplies (`TRI_TS`) and work per thread (`TRI_WPT`).
const TRI_TS: usize = 32;
const TRI_WPT: usize = 4;

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
