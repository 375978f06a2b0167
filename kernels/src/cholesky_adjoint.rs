//! The adjoint of the Cholesky decomposition (paper §3.3.2): given `L` and
//! `adj(L)`, the adjoint of `A = L Lᵀ`. Two schedules of one formula
//! (Murray 2016), `adj(A) = Φ̃(L⁻ᵀ Φ(Lᵀ adj(L)) L⁻¹)`:
//!
//! - **through the inverse**: `L⁻¹` once (the batched triangular inverse)
//!   and three whole-matrix products, about 20 launches whatever `n`, but
//!   three times the blocked schedule's flops;
//! - **blocked**: a sweep over column blocks from the bottom right, a dozen
//!   small launches per block, the fewest flops.
//!
//! At GP sizes (n in the hundreds to thousands) a GPU is bound by the
//! blocked sweep's dependent launches, so the inverse wins there; the
//! crossing point is measured (`bench_report --suite cholesky`).

use crate::basic::{
    Block, Mirror, Part, copy_block, scalar_mul_diagonal, square, sub_block, triangular_transpose,
    zeros,
};
use crate::block_inverse::invert_lower_in_place;
use crate::checks::{
    copy_checking_finite, enqueue_check_diagonal_zeros, enqueue_check_finite, first_flagged_all,
    not_finite, zero_on_diagonal,
};
use crate::gemm::{MultiplyOptions, Op, Operand, gemm_into, multiply, multiply_transposed};
use crate::triangular::checked_inverse;
use clfuse_core::{ClFloat, Error, MatrixCl, Result, Runtime, View};

/// Block size of the blocked schedule unless told. Larger blocks are
/// fewer dependent launches and larger products: on an H200 at n = 4096,
/// 8192 and 16384, blocks of 1024 columns took 4.40, 18.7 and 119 ms,
/// against 5.13, 22.6 and 137 ms with 512, 8.15, 31.6 and 194 ms with 256
/// and 11.7, 48.8 and 273 ms with 128 (`bench_report --suite cholesky`,
/// 2026-11-27). On PoCL 128 stays (3.6 against 8.0 ms with 256 at n = 200).
const GPU_ADJOINT_BLOCK: usize = 1024;
const CPU_ADJOINT_BLOCK: usize = 128;

/// On GPUs, factors up to this size take the schedule through the inverse:
/// on the same H200 it took 0.32, 0.55 and 1.37 ms at n = 500, 1000 and
/// 2000 against 0.43, 0.64 and 1.43 ms blocked (1024 columns), and lost at
/// n = 4096 (5.93 against 4.40 ms).
const GPU_INVERSE_MAX: usize = 2048;

/// On other devices (PoCL's CPU), where a launch costs little and flops
/// are dear, only factors this small do (on PoCL, 2 cores: 0.45 against
/// 0.68 ms at n = 64, 6.8 against 3.6 ms blocked at n = 200).
const CPU_INVERSE_MAX: usize = 128;

/// How [`cholesky_adjoint_with`] schedules the adjoint.
///
/// ```
/// use clfuse_kernels::CholeskyAdjointMethod;
/// assert_eq!(CholeskyAdjointMethod::default(), CholeskyAdjointMethod::Auto);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CholeskyAdjointMethod {
    /// Through the inverse up to a size that depends on the device (2048
    /// on GPUs, 128 elsewhere), blocked above it (1024 columns on GPUs, 128
    /// elsewhere).
    #[default]
    Auto,
    /// `L⁻¹` and three whole-matrix products.
    ThroughInverse,
    /// The blocked sweep with blocks of this many columns (at least 1).
    Blocked(usize),
}

/// The adjoint of `a` for `l = cholesky_decompose(a)`, given `l` and
/// `adj(l)` (both lower triangular; their upper triangles are not read).
/// The result is lower triangular: entry (i, j), i > j, is the derivative
/// with respect to the pair a_ij = a_ji, as the decomposition reads only
/// the lower triangle.
///
/// Errors: `l` not square or `adj_l` not its shape; a value that is not
/// finite in either lower triangle, or a zero on `l`'s diagonal (checked
/// on the device, read back once, before any result is formed).
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
    cholesky_adjoint_with(l, adj_l, CholeskyAdjointMethod::Auto)
}

/// [`cholesky_adjoint`] with a chosen schedule (both give the same result
/// to rounding).
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// use clfuse_kernels::{CholeskyAdjointMethod, cholesky_adjoint_with};
/// // a = [[4, 2], [2, 5]]: l = [[2, 0], [1, 2]]
/// let l = MatrixCl::<f64>::from_slice(2, 2, &[2.0, 1.0, 0.0, 2.0])?.with_view(View::Lower);
/// let adj_l = MatrixCl::<f64>::from_slice(2, 2, &[1.0, 1.0, 0.0, 1.0])?.with_view(View::Lower);
/// let blocked = cholesky_adjoint_with(&l, &adj_l, CholeskyAdjointMethod::Blocked(1))?.to_vec()?;
/// let inverse = cholesky_adjoint_with(&l, &adj_l, CholeskyAdjointMethod::ThroughInverse)?.to_vec()?;
/// for (b, i) in blocked.iter().zip(&inverse) {
///     assert!((b - i).abs() < 1e-12);
/// }
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn cholesky_adjoint_with<T: ClFloat>(
    l: &MatrixCl<T>,
    adj_l: &MatrixCl<T>,
    method: CholeskyAdjointMethod,
) -> Result<MatrixCl<T>> {
    const F: &str = "cholesky_adjoint";
    let n = square(F, "l", l)?;
    if (adj_l.rows(), adj_l.cols()) != (n, n) {
        return Err(Error::DimensionMismatch {
            operation: F.into(),
            lhs: (n, n),
            rhs: (adj_l.rows(), adj_l.cols()),
        });
    }
    if method == CholeskyAdjointMethod::Blocked(0) {
        return Err(Error::InvalidArgument {
            function: F,
            argument: "method",
            reason: "a blocked schedule needs blocks of at least one column".into(),
        });
    }
    // Both inputs are checked up front, in one round trip: the lower
    // triangles (all either schedule reads) finite, and no zero on l's
    // diagonal (it is inverted). The check of `adj_l` rides on the copy
    // the schedules work in.
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
    adj.set_view(View::Lower);
    match method {
        CholeskyAdjointMethod::ThroughInverse => through_inverse(l, &adj),
        CholeskyAdjointMethod::Blocked(block) => blocked(l, adj, block),
        CholeskyAdjointMethod::Auto => {
            let (inverse_max, width) = if Runtime::get()?.device_info().is_gpu {
                (GPU_INVERSE_MAX, GPU_ADJOINT_BLOCK)
            } else {
                (CPU_INVERSE_MAX, CPU_ADJOINT_BLOCK)
            };
            if n <= inverse_max {
                through_inverse(l, &adj)
            } else {
                blocked(l, adj, width)
            }
        }
    }
}

/// `W = L⁻ᵀ M L⁻¹` with `M` the symmetric matrix whose lower triangle is
/// that of `Lᵀ adj(L)`; `W`'s lower triangle with its diagonal halved is
/// the adjoint. (`S = L⁻ᵀ Φ(Lᵀ adj(L)) L⁻¹` with `Φ` the lower triangle,
/// diagonal halved, gives `S + Sᵀ = W`, and the adjoint of the pair
/// a_ij = a_ji is `S_ij + S_ji`.) Only lower triangles of the symmetric
/// products are computed, and zero tiles of the triangular operands are
/// skipped: about `2 n³` flops, 3 products.
fn through_inverse<T: ClFloat>(l: &MatrixCl<T>, adj: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    let n = l.rows();
    let inverse = l.try_clone()?;
    invert_lower_in_place(&inverse, n)?;
    let l_lower = l.share().with_view(View::Lower);
    let (one, zero) = (T::one(), T::default());
    // M = Lᵀ adj(L), its lower triangle, mirrored.
    let m = MatrixCl::<T>::uninitialized(n, n)?;
    let l_transposed = Operand::whole(&l_lower).t();
    product_into(&m, l_transposed, Operand::whole(adj), one, zero, true)?;
    triangular_transpose(&m, Mirror::LowerToUpper)?;
    // M L⁻¹, then the lower triangle of L⁻ᵀ (M L⁻¹), which is symmetric.
    let right = MatrixCl::<T>::uninitialized(n, n)?;
    product_into(
        &right,
        Operand::whole(&m),
        Operand::whole(&inverse),
        one,
        zero,
        false,
    )?;
    let w = m;
    let inverse_transposed = Operand::whole(&inverse).t();
    product_into(
        &w,
        inverse_transposed,
        Operand::whole(&right),
        one,
        zero,
        true,
    )?;
    scalar_mul_diagonal(&w, T::from_f64(0.5))?;
    zeros(&w, Part::StrictlyUpper)?;
    w.set_view(View::Lower);
    Ok(w)
}

/// The blocked sweep (paper §3.3.2): from the bottom right, each block of
/// `width` columns updates the blocks left of and below it, inverting its
/// diagonal block; `adj` (the checked lower copy of `adj(L)`) becomes the
/// result.
fn blocked<T: ClFloat>(l: &MatrixCl<T>, adj: MatrixCl<T>, width: usize) -> Result<MatrixCl<T>> {
    const F: &str = "cholesky_adjoint";
    let n = l.rows();
    adj.set_view(View::Entire);
    let (one, minus_one) = (T::one(), T::from_f64(-1.0));
    let mut k = n;
    while k > 0 {
        let j = k.saturating_sub(width);
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
        product_into(&b_adj, c_adj_op, r, minus_one, one, false)?;
        // D_adj = tril(D_adj - C_adjᵀ · C)
        product_into(&d_adj, c_adj_op.t(), c, minus_one, one, false)?;
        zeros(&d_adj, Part::StrictlyUpper)?;
        // D_adj = D⁻ᵀ · Φ(Dᵀ · D_adj) · D⁻¹, symmetrised
        let s = multiply_transposed(&diagonal, Op::T, &d_adj, Op::N)?;
        triangular_transpose(&s, Mirror::LowerToUpper)?;
        let t = multiply_transposed(&diagonal_inverse, Op::T, &s, Op::N)?;
        let d_adj = multiply_transposed(&diagonal_inverse, Op::T, &t, Op::T)?;
        triangular_transpose(&d_adj, Mirror::LowerToUpper)?;
        // R_adj -= C_adjᵀ · B + D_adj · R
        product_into(&r_adj, c_adj_op.t(), b, minus_one, one, false)?;
        product_into(&r_adj, Operand::whole(&d_adj), r, minus_one, one, false)?;
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

/// `c = alpha · a · b + beta · c` over the whole of `c` (`lower_only`: only
/// the tiles that touch its lower triangle).
fn product_into<T: ClFloat>(
    c: &MatrixCl<T>,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    alpha: T,
    beta: T,
    lower_only: bool,
) -> Result<()> {
    let (rows, cols) = (a.shape().0, b.shape().1);
    let options = MultiplyOptions::default();
    let whole = Block::new(0, 0, rows, cols);
    gemm_into(
        "cholesky_adjoint",
        c,
        whole,
        a,
        b,
        alpha,
        beta,
        lower_only,
        &options,
    )
}
