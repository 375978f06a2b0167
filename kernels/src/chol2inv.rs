//! The inverse of a symmetric positive-definite matrix from its Cholesky
//! factor, `(L Lᵀ)⁻¹ = L⁻ᵀ L⁻¹` (Stan's `chol2inv`): the triangular inverse,
//! then one product of it with its transpose, of which only the tiles of
//! the lower triangle are computed (about n³/3 flops: both operands are
//! triangular and their zero tiles are skipped), mirrored.

use crate::basic::{Block, Mirror, square, triangular_transpose};
use crate::gemm::{MultiplyOptions, Operand, gemm_into};
use crate::triangular::checked_inverse;
use clfuse_core::{ClFloat, Error, MatrixCl, Result, View};

/// `(l lᵀ)⁻¹` for a lower-triangular `l` (view `Lower`; a Cholesky factor),
/// symmetric (view `Entire`). Errors as [`tri_inverse`](crate::tri_inverse)'s,
/// naming this function: `l` not square, not lower, not finite or with a
/// zero on its diagonal.
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// // l lᵀ = [[4, 2], [2, 5]], whose inverse is [[5, -2], [-2, 4]] / 16
/// let l = MatrixCl::from_slice(2, 2, &[2.0, 1.0, 0.0, 2.0])?.with_view(View::Lower);
/// let inverse = clfuse_kernels::chol2inv(&l)?.to_vec()?;
/// assert_eq!(inverse, vec![5.0 / 16.0, -2.0 / 16.0, -2.0 / 16.0, 4.0 / 16.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn chol2inv<T: ClFloat>(l: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    const F: &str = "chol2inv";
    if l.view() != View::Lower {
        return Err(Error::InvalidView {
            function: F,
            view: l.view(),
            reason: "the Cholesky factor must have view Lower",
        });
    }
    tri_crossprod(&checked_inverse(F, "l", l)?)
}

/// `wᵀ w` for a lower-triangular `w` (view `Lower`), symmetric (view
/// `Entire`): with `w = L⁻¹` (from [`tri_inverse`](crate::tri_inverse)) this
/// is `(L Lᵀ)⁻¹`. Only the lower triangle's tiles are computed, reading
/// only the nonzero tiles of `w`, then mirrored.
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// let w = MatrixCl::from_slice(2, 2, &[1.0, 2.0, 0.0, 3.0])?.with_view(View::Lower);
/// // wᵀ w = [[1 + 4, 6], [6, 9]]
/// assert_eq!(clfuse_kernels::tri_crossprod(&w)?.to_vec()?, vec![5.0, 6.0, 6.0, 9.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn tri_crossprod<T: ClFloat>(w: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    const F: &str = "tri_crossprod";
    let n = square(F, "w", w)?;
    if w.view() != View::Lower {
        return Err(Error::InvalidView {
            function: F,
            view: w.view(),
            reason: "pass a lower-triangular matrix (view Lower)",
        });
    }
    let c = MatrixCl::<T>::uninitialized(n, n)?;
    if n == 0 {
        return Ok(c);
    }
    let lower = Operand::whole(w);
    gemm_into(
        F,
        &c,
        Block::new(0, 0, n, n),
        lower.t(),
        lower,
        T::one(),
        T::default(),
        true,
        &MultiplyOptions::default(),
    )?;
    triangular_transpose(&c, Mirror::LowerToUpper)?;
    Ok(c)
}
