//! Reverse-mode building blocks of products and solves (paper §3.1.5,
//! §3.2.2): given the adjoint of a result, the adjoints of the inputs. The
//! Cholesky adjoint has its own file (`cholesky_adjoint.rs`).

use crate::basic::{Block, Part, zeros};
use crate::checks::FiniteCheck;
use crate::gemm::{MultiplyOptions, Op, Operand, gemm_into, multiply, multiply_transposed};
use crate::substitution::{Rhs, SUBSTITUTION_MAX_COLS, checked_solve};
use crate::triangular::checked_inverse;
use clfuse_core::{ClFloat, Error, MatrixCl, Result, View};

/// Adjoints of both operands of a product (or of a solve's matrix and
/// right-hand side).
///
/// ```
/// use clfuse_core::MatrixCl;
/// let a = MatrixCl::from_slice(1, 1, &[2.0])?;
/// let adj = clfuse_kernels::multiply_adjoint(&a, &a, &a)?;
/// assert_eq!((adj.adj_a.to_vec()?, adj.adj_b.to_vec()?), (vec![4.0], vec![4.0]));
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Debug)]
pub struct ProductAdjoint<T: clfuse_core::ClType> {
    /// Adjoint of the left operand.
    pub adj_a: MatrixCl<T>,
    /// Adjoint of the right operand.
    pub adj_b: MatrixCl<T>,
}

/// For `c = a · b`: `adj(a) = adj(c) · bᵀ`, `adj(b) = aᵀ · adj(c)` (transposes
/// are read in place by the GEMM kernel, never copied).
///
/// ```
/// use clfuse_core::MatrixCl;
/// let a = MatrixCl::from_slice(1, 2, &[1.0, 2.0])?;
/// let b = MatrixCl::from_slice(2, 1, &[3.0, 4.0])?;
/// let adj_c = MatrixCl::from_slice(1, 1, &[1.0])?;
/// let adj = clfuse_kernels::multiply_adjoint(&a, &b, &adj_c)?;
/// assert_eq!(adj.adj_a.to_vec()?, vec![3.0, 4.0]);
/// assert_eq!(adj.adj_b.to_vec()?, vec![1.0, 2.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn multiply_adjoint<T: ClFloat>(
    a: &MatrixCl<T>,
    b: &MatrixCl<T>,
    adj_c: &MatrixCl<T>,
) -> Result<ProductAdjoint<T>> {
    if a.cols() != b.rows() || (adj_c.rows(), adj_c.cols()) != (a.rows(), b.cols()) {
        return Err(Error::DimensionMismatch {
            operation: "multiply_adjoint".into(),
            lhs: (a.rows(), b.cols()),
            rhs: (adj_c.rows(), adj_c.cols()),
        });
    }
    Ok(ProductAdjoint {
        adj_a: multiply_transposed(adj_c, Op::N, b, Op::T)?,
        adj_b: multiply_transposed(a, Op::T, adj_c, Op::N)?,
    })
}

/// Adjoints of `c = a⁻¹ · b` for triangular `a` (`mdivide_left_tri`):
/// `adj(b) = a⁻ᵀ · adj(c)` and `adj(a) = -adj(b) · cᵀ`, kept to `a`'s triangle.
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// let a = MatrixCl::from_slice(1, 1, &[2.0])?.with_view(View::Lower);
/// let b = MatrixCl::from_slice(1, 1, &[4.0])?;
/// let adj_c = MatrixCl::from_slice(1, 1, &[1.0])?;
/// // c = b / a: dc/db = 1/a = 0.5, dc/da = -b/a² = -1
/// let adj = clfuse_kernels::mdivide_left_tri_adjoint(&a, &b, &adj_c)?;
/// assert_eq!(adj.adj_b.to_vec()?, vec![0.5]);
/// assert_eq!(adj.adj_a.to_vec()?, vec![-1.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn mdivide_left_tri_adjoint<T: ClFloat>(
    a: &MatrixCl<T>,
    b: &MatrixCl<T>,
    adj_c: &MatrixCl<T>,
) -> Result<ProductAdjoint<T>> {
    if a.rows() != b.rows() || (adj_c.rows(), adj_c.cols()) != (b.rows(), b.cols()) {
        return Err(Error::DimensionMismatch {
            operation: "mdivide_left_tri_adjoint".into(),
            lhs: (b.rows(), b.cols()),
            rhs: (adj_c.rows(), adj_c.cols()),
        });
    }
    const F: &str = "mdivide_left_tri_adjoint";
    // The checks of `b` and `adj_c` complete beside the inverse's: one round trip.
    let (c, adj_b) = if b.cols() <= SUBSTITUTION_MAX_COLS {
        // Two O(n² m) substitutions; the checks of `a` and `b` ride on the first.
        let adj_c_finite = FiniteCheck::start(F, "adj_c", adj_c)?;
        let c = checked_solve(F, a, Op::N, Rhs::AsGiven(b))?;
        adj_c_finite.finish()?;
        (c, checked_solve(F, a, Op::T, Rhs::AsGiven(adj_c))?)
    } else {
        let b_finite = FiniteCheck::start(F, "b", b)?;
        let adj_c_finite = FiniteCheck::start(F, "adj_c", adj_c)?;
        let inverse = checked_inverse(F, "a", a)?;
        b_finite.finish()?;
        adj_c_finite.finish()?;
        let c = multiply(&inverse, b)?;
        (c, multiply_transposed(&inverse, Op::T, adj_c, Op::N)?)
    };
    let adj_a = MatrixCl::<T>::uninitialized(a.rows(), a.cols())?;
    let n = a.rows();
    gemm_into(
        "mdivide_left_tri_adjoint",
        &adj_a,
        Block::new(0, 0, n, n),
        Operand::whole(&adj_b),
        Operand::whole(&c).t(),
        T::from_f64(-1.0),
        T::default(),
        false,
        &MultiplyOptions::default(),
    )?;
    match a.view() {
        View::Lower => zeros(&adj_a, Part::StrictlyUpper)?,
        View::Upper => zeros(&adj_a, Part::StrictlyLower)?,
        View::Diagonal => {
            zeros(&adj_a, Part::StrictlyUpper)?;
            zeros(&adj_a, Part::StrictlyLower)?;
        }
        View::Entire => {}
    }
    Ok(ProductAdjoint { adj_a, adj_b })
}
