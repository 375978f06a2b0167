//! Triangular inverse (paper §3.2, seed "OpenCL kernels"; the batched
//! algorithm is in `block_inverse.rs`) and the triangular solves built on it.

use crate::basic::{Part, square, transpose, triangular_view, zeros};
use crate::block_inverse::invert_lower_in_place;
use crate::checks::{
    FiniteCheck, copy_checking_finite, enqueue_check_diagonal_zeros, first_flagged_all, not_finite,
    zero_on_diagonal,
};
use crate::gemm::{Op, multiply, multiply_transposed};
use crate::substitution::{
    PreparedTriangular, Rhs, SUBSTITUTION_MAX_COLS, checked_solve, solve_preparing,
};
use clfuse_core::{ClFloat, Error, MatrixCl, Result, View};

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

/// [`tri_inverse`] without its value checks (zeros on the diagonal, values
/// that are not finite) and their read-back, for a matrix known to pass
/// them: a Cholesky factor this library returned. Shapes and views are
/// still checked; a zero on the diagonal gives infinities and NaNs instead
/// of an error.
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// let l = MatrixCl::from_slice(2, 2, &[2.0, 1.0, 0.0, 4.0])?.with_view(View::Lower);
/// let inv = clfuse_kernels::tri_inverse_prechecked(&l)?;
/// assert_eq!(inv.to_vec()?, vec![0.5, -0.125, 0.0, 0.25]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn tri_inverse_prechecked<T: ClFloat>(a: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    const F: &str = "tri_inverse_prechecked";
    let n = square(F, "a", a)?;
    let view = triangular_view(F, a)?;
    let inverse = match view {
        View::Upper => transpose(a)?,
        _ => a.try_clone()?,
    };
    if view == View::Diagonal {
        inverse.set_view(View::Entire);
        zeros(&inverse, Part::StrictlyLower)?;
    }
    invert_lower_in_place(&inverse, n)?;
    match view {
        View::Upper => transpose(&inverse),
        View::Diagonal => Ok(inverse.with_view(View::Diagonal)),
        _ => Ok(inverse),
    }
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

/// [`mdivide_left_tri`] by substitution whatever the width of `b`, also
/// giving `a` as the solve prepared it, for more solves with it (a reverse
/// pass's `a⁻ᵀ adj(c)`); errors name `mdivide_left_tri`.
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// use clfuse_kernels::Op;
/// let a = MatrixCl::from_slice(2, 2, &[2.0, 1.0, 0.0, 4.0])?.with_view(View::Lower);
/// let b = MatrixCl::from_slice(2, 1, &[2.0, 9.0])?;
/// let (x, prepared) = clfuse_kernels::mdivide_left_tri_and_prepare(&a, &b)?;
/// assert_eq!(x.to_vec()?, vec![1.0, 2.0]);
/// let b = MatrixCl::from_slice(2, 1, &[4.0, 8.0])?;
/// assert_eq!(prepared.solve(Op::T, &b)?.to_vec()?, vec![1.0, 2.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn mdivide_left_tri_and_prepare<T: ClFloat>(
    a: &MatrixCl<T>,
    b: &MatrixCl<T>,
) -> Result<(MatrixCl<T>, PreparedTriangular<T>)> {
    solve_preparing("mdivide_left_tri", a, Op::N, Rhs::AsGiven(b), true)
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
