//! Reverse-mode building blocks (paper §3.1.5, §3.2.2, §3.3.2): given the
//! adjoint of a result, the adjoints of the inputs.

use crate::basic::{
    Block, Mirror, Part, copy_block, scalar_mul_diagonal, square, sub_block, triangular_transpose,
    zeros,
};
use crate::checks::{
    FiniteCheck, copy_checking_finite, enqueue_check_diagonal_zeros, enqueue_check_finite,
    first_flagged_all, not_finite, zero_on_diagonal,
};
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

/// Block size of the blocked Cholesky adjoint.
const ADJOINT_BLOCK: usize = 128;

/// The adjoint of `a` for `l = cholesky_decompose(a)`, given `l` and
/// `adj(l)` (both lower triangular): the blocked algorithm of paper §3.3.2
/// (Murray 2016). The result is lower triangular: entry (i, j), i > j, is the
/// derivative with respect to the pair a_ij = a_ji, as the decomposition reads
/// only the lower triangle.
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// // a = [4]: l = 2, dl/da = 1 / (2 l) = 0.25
/// let l = MatrixCl::from_slice(1, 1, &[2.0])?.with_view(View::Lower);
/// let adj_l = MatrixCl::from_slice(1, 1, &[1.0])?.with_view(View::Lower);
/// assert_eq!(clfuse_kernels::cholesky_adjoint(&l, &adj_l)?.to_vec()?, vec![0.25]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn cholesky_adjoint<T: ClFloat>(l: &MatrixCl<T>, adj_l: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    const F: &str = "cholesky_adjoint";
    let n = square(F, "l", l)?;
    if (adj_l.rows(), adj_l.cols()) != (n, n) {
        return Err(Error::DimensionMismatch {
            operation: F.into(),
            lhs: (n, n),
            rhs: (adj_l.rows(), adj_l.cols()),
        });
    }
    // Both inputs are checked up front, in one round trip: the lower
    // triangles (all the algorithm reads) finite, and no zero on l's
    // diagonal (its blocks are inverted). The check of `adj_l` rides on the
    // copy the algorithm works in.
    let lower = View::Lower;
    let l_finite = enqueue_check_finite(F, l, l.view().intersection(lower))?;
    let l_zero = enqueue_check_diagonal_zeros(l)?;
    let (adj, adj_finite) = copy_checking_finite(F, adj_l, adj_l.view().intersection(lower))?;
    let [l_bad, l_singular, adj_bad] =
        first_flagged_all([Some(&l_finite), Some(&l_zero), Some(&adj_finite)])?;
    if let Some(index) = l_bad {
        return Err(not_finite(F, "l", l, index, false));
    }
    if let Some(index) = adj_bad {
        return Err(not_finite(F, "adj_l", adj_l, index, false));
    }
    if let Some(index) = l_singular {
        return Err(zero_on_diagonal(F, "l", n, index));
    }
    adj.set_view(View::Entire);
    zeros(&adj, Part::StrictlyUpper)?;
    let full = MultiplyOptions::default();
    let minus_one = T::from_f64(-1.0);
    let mut k = n;
    while k > 0 {
        let j = k.saturating_sub(ADJOINT_BLOCK);
        let (d, below) = (k - j, n - k);
        let r_block = Block::new(j, 0, d, j);
        let d_block = Block::new(j, j, d, d);
        let b_block = Block::new(k, 0, below, j);
        let c_block = Block::new(k, j, below, d);
        let r = Operand::block(l, r_block, View::Entire);
        let b = Operand::block(l, b_block, View::Entire);
        let c = Operand::block(l, c_block, View::Entire);
        let diagonal = copy_block(l, d_block)?;
        zeros(&diagonal, Part::StrictlyUpper)?;
        let diagonal_inverse = checked_inverse(F, "l", &diagonal)?;
        let r_adj = copy_block(&adj, r_block)?;
        let d_adj = copy_block(&adj, d_block)?;
        let b_adj = copy_block(&adj, b_block)?;
        // C_adj = C_adj · D⁻¹
        let c_adj = multiply(&copy_block(&adj, c_block)?, &diagonal_inverse)?;
        let c_adj_op = Operand::whole(&c_adj);
        // B_adj -= C_adj · R
        gemm_into(
            F,
            &b_adj,
            Block::new(0, 0, below, j),
            c_adj_op,
            r,
            minus_one,
            T::one(),
            false,
            &full,
        )?;
        // D_adj = tril(D_adj - C_adjᵀ · C)
        gemm_into(
            F,
            &d_adj,
            Block::new(0, 0, d, d),
            c_adj_op.t(),
            c,
            minus_one,
            T::one(),
            false,
            &full,
        )?;
        zeros(&d_adj, Part::StrictlyUpper)?;
        // D_adj = D⁻ᵀ · Φ(Dᵀ · D_adj) · D⁻¹, symmetrised
        let s = multiply_transposed(&diagonal, Op::T, &d_adj, Op::N)?;
        triangular_transpose(&s, Mirror::LowerToUpper)?;
        let t = multiply_transposed(&diagonal_inverse, Op::T, &s, Op::N)?;
        let d_adj = multiply_transposed(&diagonal_inverse, Op::T, &t, Op::T)?;
        triangular_transpose(&d_adj, Mirror::LowerToUpper)?;
        // R_adj -= C_adjᵀ · B + D_adj · R
        gemm_into(
            F,
            &r_adj,
            Block::new(0, 0, d, j),
            c_adj_op.t(),
            b,
            minus_one,
            T::one(),
            false,
            &full,
        )?;
        gemm_into(
            F,
            &r_adj,
            Block::new(0, 0, d, j),
            Operand::whole(&d_adj),
            r,
            minus_one,
            T::one(),
            false,
            &full,
        )?;
        scalar_mul_diagonal(&d_adj, T::from_f64(0.5))?;
        zeros(&d_adj, Part::StrictlyUpper)?;
        for (block, value) in [
            (r_block, &r_adj),
            (d_block, &d_adj),
            (b_block, &b_adj),
            (c_block, &c_adj),
        ] {
            sub_block(
                &adj,
                block.row,
                block.col,
                value,
                Block::new(0, 0, block.rows, block.cols),
                View::Entire,
            )?;
        }
        k = j;
    }
    adj.set_view(View::Lower);
    Ok(adj)
}
