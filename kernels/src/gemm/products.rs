//! The public products: `multiply` and its variants over whole matrices,
//! each through the one GEMM entry point (`gemm_into`), vectors through the
//! matrix-vector kernels.

use super::launch::{MultiplyOptions, gemm_into};
use super::operand::Operand;
use super::vectors::{
    SKINNY_MAX_COLS, SKINNY_MAX_TRANSPOSED, matrix_skinny_multiply, matrix_vector_multiply,
    row_vector_matrix_multiply, tall, transposed_skinny_multiply,
};
use crate::basic::{Block, Mirror, triangular_transpose};
use clfuse_core::{ClFloat, Error, MatrixCl, Result, View};

fn result_view(a: View, b: View) -> View {
    a.union(b)
}

/// `a * b` (the GEMM leaf behind `*` between expressions). Vectors take the
/// 1-D matrix-vector kernels; long inner dimensions are split (split-k);
/// tiles known to be zero from the operands' views are skipped, and the
/// result's view is set from them (`Lower·Lower` is `Lower`).
///
/// ```
/// use clfuse_core::MatrixCl;
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 3.0, 2.0, 4.0])?; // [1 2; 3 4]
/// let b = MatrixCl::from_slice(2, 1, &[1.0, 1.0])?;
/// assert_eq!(clfuse_kernels::multiply(&a, &a)?.to_vec()?, vec![7.0, 15.0, 10.0, 22.0]);
/// assert_eq!(clfuse_kernels::multiply(&a, &b)?.to_vec()?, vec![3.0, 7.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn multiply<T: ClFloat>(a: &MatrixCl<T>, b: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    multiply_with(a, b, &MultiplyOptions::default())
}

/// [`multiply`] with explicit tiling or split-k parts (always the GEMM
/// kernel, also for vectors).
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::{GemmConfig, MultiplyOptions};
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 3.0, 2.0, 4.0])?;
/// let config = GemmConfig::Tiled { thread_block_size: 16, work_per_thread: 2, tile_k: 8 };
/// let c = clfuse_kernels::multiply_with(&a, &a, &MultiplyOptions { splits: Some(2), config: Some(config) })?;
/// assert_eq!(c.to_vec()?, vec![7.0, 15.0, 10.0, 22.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn multiply_with<T: ClFloat>(
    a: &MatrixCl<T>,
    b: &MatrixCl<T>,
    options: &MultiplyOptions,
) -> Result<MatrixCl<T>> {
    if a.cols() != b.rows() {
        return Err(Error::DimensionMismatch {
            operation: "multiply".into(),
            lhs: (a.rows(), a.cols()),
            rhs: (b.rows(), b.cols()),
        });
    }
    if options.splits.is_none() && options.config.is_none() {
        if b.cols() == 1 && a.rows() > 1 {
            return matrix_vector_multiply(a, b);
        }
        if a.rows() == 1 && b.cols() > 1 {
            return row_vector_matrix_multiply(a, b);
        }
        if b.cols() <= SKINNY_MAX_COLS && b.view() == View::Entire && tall(a.rows(), a.cols()) {
            return matrix_skinny_multiply(a, b);
        }
    }
    let c = MatrixCl::<T>::uninitialized(a.rows(), b.cols())?;
    gemm_into(
        "multiply",
        &c,
        Block::new(0, 0, a.rows(), b.cols()),
        Operand::whole(a),
        Operand::whole(b),
        T::one(),
        T::default(),
        false,
        options,
    )?;
    c.set_view(result_view(a.view(), b.view()));
    Ok(c)
}

/// Whether an operand of [`multiply_transposed`] is read as stored or transposed.
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::Op;
/// let a = MatrixCl::from_slice(1, 2, &[1.0, 2.0])?;
/// assert_eq!(clfuse_kernels::multiply_transposed(&a, Op::N, &a, Op::T)?.to_vec()?, vec![5.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// As stored.
    N,
    /// Transposed (no copy: the kernel reads it transposed).
    T,
}

/// `op(a) * op(b)` without materialising transposes (the GEMM adjoints use it).
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::Op;
/// let a = MatrixCl::from_slice(2, 1, &[1.0, 2.0])?;
/// // aᵀ·a = 5
/// assert_eq!(clfuse_kernels::multiply_transposed(&a, Op::T, &a, Op::N)?.to_vec()?, vec![5.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn multiply_transposed<T: ClFloat>(
    a: &MatrixCl<T>,
    op_a: Op,
    b: &MatrixCl<T>,
    op_b: Op,
) -> Result<MatrixCl<T>> {
    if (op_a, op_b) == (Op::T, Op::N)
        && a.rows() == b.rows()
        && b.cols() <= SKINNY_MAX_COLS
        && a.cols() <= SKINNY_MAX_TRANSPOSED
        && b.view() == View::Entire
        && tall(a.rows(), a.cols())
    {
        // A batch's gradient `xᵀ·D`: the tall `a` read once, in row groups.
        return transposed_skinny_multiply(a, b);
    }
    let mut oa = Operand::whole(a);
    let mut ob = Operand::whole(b);
    if op_a == Op::T {
        oa = oa.t();
    }
    if op_b == Op::T {
        ob = ob.t();
    }
    let ((m, _), (_, n)) = (oa.shape(), ob.shape());
    let c = MatrixCl::<T>::uninitialized(m, n)?;
    gemm_into(
        "multiply_transposed",
        &c,
        Block::new(0, 0, m, n),
        oa,
        ob,
        T::one(),
        T::default(),
        false,
        &MultiplyOptions::default(),
    )?;
    c.set_view(result_view(oa.view, ob.view));
    Ok(c)
}

/// `a * aᵀ`: only the lower triangle's tiles are computed, then mirrored
/// (paper §3.1.2). The result is symmetric (view `Entire`).
///
/// ```
/// use clfuse_core::MatrixCl;
/// let a = MatrixCl::from_slice(2, 1, &[1.0, 2.0])?;
/// assert_eq!(clfuse_kernels::multiply_transpose(&a)?.to_vec()?, vec![1.0, 2.0, 2.0, 4.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn multiply_transpose<T: ClFloat>(a: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    let n = a.rows();
    let c = MatrixCl::<T>::uninitialized(n, n)?;
    let whole = Operand::whole(a);
    gemm_into(
        "multiply_transpose",
        &c,
        Block::new(0, 0, n, n),
        whole,
        whole.t(),
        T::one(),
        T::default(),
        true,
        &MultiplyOptions {
            splits: Some(1),
            config: None,
        },
    )?;
    triangular_transpose(&c, Mirror::LowerToUpper)?;
    Ok(c)
}
