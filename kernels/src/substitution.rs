//! Triangular solves with a thin right-hand side by blocked substitution:
//! O(n² m) work instead of forming the O(n³) inverse. Up to 64 rows, one
//! launch per 32-row diagonal block (`cl/tri_solve.cl`); beyond, the
//! diagonal blocks (the whole matrix up to 512 rows, then blocks of 256 or
//! 512 rows) are inverted first (a few batched launches), and each block
//! is then two products: on a GPU the dependent
//! launches, not the O(n²) reads, were the cost (a GP's solve at n = 2000
//! was 63 launches of 12 µs each).

use crate::basic::{Block, Part, int, square, transpose, triangular_view, zeros};
use crate::block_inverse::invert_diagonal_blocks_in_place;
use crate::checks::{
    FiniteCheck, enqueue_check_diagonal_zeros, first_flagged_all, zero_on_diagonal,
};
use crate::gemm::{MultiplyOptions, Op, Operand, gemm_into};
use crate::launchers as cl;
use clfuse_core::{ClFloat, Error, MatrixCl, NdRange, Result, View};

/// Rows of a diagonal block (`SOLVE_BLOCK` in the kernel): one launch each.
const BLOCK: usize = 32;
/// Right-hand-side columns per work-group (`SOLVE_COLS`).
const COLS: usize = 8;

/// Systems up to this many rows are solved one 32-row block per launch;
/// larger ones through the inverses of their diagonal blocks.
const STEP_MAX_ROWS: usize = 64;

/// Rows of the diagonal blocks inverted for a system of `n` rows: the
/// whole matrix up to 512 rows (one product per solve), 256 up to 4096
/// rows, then 512 (fewer steps where each product is larger).
fn inverse_block(n: usize) -> usize {
    match n {
        0..=512 => 512,
        513..=4096 => 256,
        _ => 512,
    }
}

/// Right-hand sides up to this many columns are solved by substitution;
/// wider ones multiply by the inverse, whose O(n³) cost is then shared by
/// enough columns (and whose GEMM runs at full device speed).
pub const SUBSTITUTION_MAX_COLS: usize = 64;

/// Solves `op(a) · x = b` by blocked substitution, where `a` is triangular
/// (view `Lower`, `Upper` or `Diagonal`) and `op(a)` is `a` or its
/// transpose (read in place, never copied). Any number of columns works;
/// the cost is O(n² · b.cols()) plus a few launches to invert the diagonal
/// blocks and two per block (one block up to 512 rows, blocks of 256 rows
/// up to 4096, of 512 beyond), so it is the method of choice for thin
/// right-hand sides (a GP's one column).
///
/// `a` must be finite with no zero on its diagonal and `b` finite: the
/// errors name this function, the argument and the position. The checks
/// are read back in one round trip, after the solve is queued.
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// use clfuse_kernels::Op;
/// // a = [[2, 0], [1, 4]]
/// let a = MatrixCl::from_slice(2, 2, &[2.0, 1.0, 0.0, 4.0])?.with_view(View::Lower);
/// let b = MatrixCl::from_slice(2, 1, &[2.0, 9.0])?;
/// assert_eq!(clfuse_kernels::tri_solve(&a, Op::N, &b)?.to_vec()?, vec![1.0, 2.0]);
/// // aᵀ = [[2, 1], [0, 4]]: x1 = 8 / 4, x0 = (4 - x1) / 2
/// let b = MatrixCl::from_slice(2, 1, &[4.0, 8.0])?;
/// assert_eq!(clfuse_kernels::tri_solve(&a, Op::T, &b)?.to_vec()?, vec![1.0, 2.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn tri_solve<T: ClFloat>(a: &MatrixCl<T>, op: Op, b: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    checked_solve("tri_solve", a, op, Rhs::AsGiven(b))
}

/// [`tri_solve`] without its value checks (zeros on the diagonal, values
/// that are not finite) and their read-back, for operands checked already:
/// a reverse pass solving again with the factor its forward pass checked.
/// Shapes and views are still checked; a zero on the diagonal gives
/// infinities and NaNs in the result instead of an error.
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// use clfuse_kernels::Op;
/// let a = MatrixCl::from_slice(2, 2, &[2.0, 1.0, 0.0, 4.0])?.with_view(View::Lower);
/// let b = MatrixCl::from_slice(2, 1, &[2.0, 9.0])?;
/// assert_eq!(clfuse_kernels::tri_solve_prechecked(&a, Op::N, &b)?.to_vec()?, vec![1.0, 2.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn tri_solve_prechecked<T: ClFloat>(
    a: &MatrixCl<T>,
    op: Op,
    b: &MatrixCl<T>,
) -> Result<MatrixCl<T>> {
    solve("tri_solve_prechecked", a, op, Rhs::AsGiven(b), false)
}

/// [`tri_solve`], also giving `a` as the solve prepared it (its diagonal
/// blocks inverted), for more solves with it: a reverse pass solving with
/// `op(a)ᵀ` skips the preparation and the checks.
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// use clfuse_kernels::Op;
/// let a = MatrixCl::from_slice(2, 2, &[2.0, 1.0, 0.0, 4.0])?.with_view(View::Lower);
/// let b = MatrixCl::from_slice(2, 1, &[2.0, 9.0])?;
/// let (x, _prepared) = clfuse_kernels::tri_solve_and_prepare(&a, Op::N, &b)?;
/// assert_eq!(x.to_vec()?, vec![1.0, 2.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn tri_solve_and_prepare<T: ClFloat>(
    a: &MatrixCl<T>,
    op: Op,
    b: &MatrixCl<T>,
) -> Result<(MatrixCl<T>, PreparedTriangular<T>)> {
    solve_preparing("tri_solve", a, op, Rhs::AsGiven(b), true)
}

/// A solve's right-hand side: the user's, or the transpose of the user's
/// (`mdivide_right_tri`), whose errors report positions in the user's matrix.
pub(crate) enum Rhs<'a, T: ClFloat> {
    AsGiven(&'a MatrixCl<T>),
    Transposed(&'a MatrixCl<T>),
}

/// [`tri_solve`] for `function`, whose errors it names.
pub(crate) fn checked_solve<T: ClFloat>(
    function: &'static str,
    a: &MatrixCl<T>,
    op: Op,
    b: Rhs<'_, T>,
) -> Result<MatrixCl<T>> {
    solve(function, a, op, b, true)
}

/// The solve, with or without the value checks of `a` and `b`.
fn solve<T: ClFloat>(
    function: &'static str,
    a: &MatrixCl<T>,
    op: Op,
    b: Rhs<'_, T>,
    check_values: bool,
) -> Result<MatrixCl<T>> {
    Ok(solve_preparing(function, a, op, b, check_values)?.0)
}

/// [`solve`], also giving the prepared matrix for more solves.
pub(crate) fn solve_preparing<T: ClFloat>(
    function: &'static str,
    a: &MatrixCl<T>,
    op: Op,
    b: Rhs<'_, T>,
    check_values: bool,
) -> Result<(MatrixCl<T>, PreparedTriangular<T>)> {
    let (b, b_transposed) = match b {
        Rhs::AsGiven(b) => (b, false),
        Rhs::Transposed(b) => (b, true),
    };
    let n = square(function, "a", a)?;
    if b.rows() != n {
        return Err(Error::DimensionMismatch {
            operation: function.into(),
            lhs: (a.rows(), a.cols()),
            rhs: (b.rows(), b.cols()),
        });
    }
    let view = triangular_view(function, a)?;
    int(function, "a", n)?;
    int(function, "b", b.cols())?;
    int(function, "b", b.len())?;
    let checks = if check_values {
        Some((
            enqueue_check_diagonal_zeros(a)?,
            FiniteCheck::start(function, "a", a)?,
            FiniteCheck::start(function, "b", b)?.of_transpose(b_transposed),
        ))
    } else {
        None
    };
    let prepared = PreparedTriangular::new(a, view)?;
    let x = prepared.solve_unchecked(function, op, b)?;
    if let Some((diagonal_zeros, a_finite, b_finite)) = checks {
        let [zero] = first_flagged_all([Some(&diagonal_zeros)])?;
        a_finite.finish()?;
        b_finite.finish()?;
        if let Some(index) = zero {
            return Err(zero_on_diagonal(function, "a", n, index));
        }
    }
    Ok((x, prepared))
}

/// A triangular matrix as the solves read it, built once and kept for more
/// solves with the same matrix: the one [`tri_solve_and_prepare`] solved
/// with, which a reverse pass solves with again (with its transpose). It
/// owns its data, so later writes to the original change nothing.
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// use clfuse_kernels::{Op, tri_solve_and_prepare};
/// let a = MatrixCl::from_slice(2, 2, &[2.0, 1.0, 0.0, 4.0])?.with_view(View::Lower);
/// let b = MatrixCl::from_slice(2, 1, &[2.0, 9.0])?;
/// let (x, prepared) = tri_solve_and_prepare(&a, Op::N, &b)?;
/// assert_eq!(x.to_vec()?, vec![1.0, 2.0]);
/// // aᵀ x = [4, 8]: x1 = 2, x0 = (4 - 2) / 2
/// let b = MatrixCl::from_slice(2, 1, &[4.0, 8.0])?;
/// assert_eq!(prepared.solve(Op::T, &b)?.to_vec()?, vec![1.0, 2.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Debug)]
pub struct PreparedTriangular<T: ClFloat> {
    n: usize,
    form: Form<T>,
}

#[derive(Debug)]
enum Form<T: ClFloat> {
    /// Up to 64 rows, or diagonal: a copy the step kernel reads (a
    /// diagonal one with its strictly lower part zeroed, solved as lower).
    Steps { matrix: MatrixCl<T>, view: View },
    /// The lower triangle `L` (of the matrix, or of its transpose when it is
    /// upper, `upper`) with its diagonal blocks of `block` rows inverted in
    /// place and the rest kept.
    Blocks {
        lower: MatrixCl<T>,
        block: usize,
        upper: bool,
    },
}

impl<T: ClFloat> PreparedTriangular<T> {
    /// `a`'s shape and view were checked by the caller.
    fn new(a: &MatrixCl<T>, view: View) -> Result<Self> {
        let n = a.rows();
        let form = if n > STEP_MAX_ROWS && view != View::Diagonal {
            let upper = view == View::Upper;
            let lower = if upper { transpose(a)? } else { a.try_clone()? };
            let block = inverse_block(n);
            invert_diagonal_blocks_in_place(&lower, n, block)?;
            Form::Blocks {
                lower,
                block,
                upper,
            }
        } else {
            let matrix = a.try_clone()?;
            if view == View::Diagonal {
                zeros(&matrix, Part::StrictlyLower)?;
            }
            Form::Steps { matrix, view }
        };
        Ok(PreparedTriangular { n, form })
    }

    /// Solves `op(a) · x = b` with the prepared `a`. Its values were checked
    /// when it was prepared; `b`'s are not (a reverse pass's adjoint comes
    /// from the tape). `b` must have `a`'s rows.
    ///
    /// ```
    /// use clfuse_core::{MatrixCl, View};
    /// use clfuse_kernels::{Op, tri_solve_and_prepare};
    /// let a = MatrixCl::from_slice(1, 1, &[2.0])?.with_view(View::Lower);
    /// let b = MatrixCl::from_slice(1, 1, &[4.0])?;
    /// let (_, prepared) = tri_solve_and_prepare(&a, Op::N, &b)?;
    /// assert!(prepared.solve(Op::N, &MatrixCl::from_slice(2, 1, &[1.0, 1.0])?).is_err());
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn solve(&self, op: Op, b: &MatrixCl<T>) -> Result<MatrixCl<T>> {
        const F: &str = "PreparedTriangular::solve";
        if b.rows() != self.n {
            return Err(Error::DimensionMismatch {
                operation: F.into(),
                lhs: (self.n, self.n),
                rhs: (b.rows(), b.cols()),
            });
        }
        int(F, "b", b.len())?;
        self.solve_unchecked(F, op, b)
    }

    /// The solve, shapes checked by the caller.
    fn solve_unchecked(
        &self,
        function: &'static str,
        op: Op,
        b: &MatrixCl<T>,
    ) -> Result<MatrixCl<T>> {
        let (n, m) = (self.n, b.cols());
        let rhs = b.try_clone()?;
        let x = MatrixCl::<T>::uninitialized(n, m)?;
        if n == 0 || m == 0 {
            return Ok(x);
        }
        match &self.form {
            Form::Steps { matrix, view } => {
                let transposed = op == Op::T;
                let upper = match view {
                    View::Upper => !transposed,
                    View::Lower => transposed,
                    View::Diagonal | View::Entire => false,
                };
                let (size, width) = (int(function, "a", n)?, int(function, "b", m)?);
                let blocks = n.div_ceil(BLOCK);
                let column_groups = m.div_ceil(COLS) * COLS;
                for step in 0..blocks {
                    let block = if upper { blocks - 1 - step } else { step };
                    let k0 = block * BLOCK;
                    let unsolved = if upper {
                        k0
                    } else {
                        n - (k0 + BLOCK.min(n - k0))
                    };
                    let groups = unsolved.div_ceil(BLOCK).max(1);
                    cl::tri_solve_step::<T>().launch(
                        NdRange::d2([groups * BLOCK, column_groups]).with_local(&[BLOCK, COLS]),
                        (
                            matrix,
                            &rhs,
                            &x,
                            size,
                            width,
                            int(function, "a", k0)?,
                            i32::from(transposed),
                            i32::from(upper),
                        ),
                    )?;
                }
            }
            Form::Blocks {
                lower,
                block,
                upper,
            } => {
                // op(a) is L (forward) or Lᵀ (backward, `transposed`).
                let transposed = if *upper { op == Op::N } else { op == Op::T };
                solve_by_block_inverses(function, lower, *block, transposed, &rhs, &x)?;
            }
        }
        Ok(x)
    }
}

/// `op(a) · x = rhs` through the inverses of the diagonal blocks of `L`
/// (`lower`, prepared), into `x` (`rhs` is a scratch copy, overwritten):
/// each block `k` of rows, down for `op(a) = L` and up for `op(a) = Lᵀ`
/// (`transposed`), takes two products: `x_k = op(a)_kk⁻¹ · rhs_k`, and the
/// rows still unsolved lose `op(a)_{rest,k} · x_k`. Transposes are read in
/// place.
fn solve_by_block_inverses<T: ClFloat>(
    function: &'static str,
    lower: &MatrixCl<T>,
    block: usize,
    transposed: bool,
    rhs: &MatrixCl<T>,
    x: &MatrixCl<T>,
) -> Result<()> {
    let (n, m) = (lower.rows(), rhs.cols());
    let whole = MultiplyOptions::default();
    let blocks = n.div_ceil(block);
    for step in 0..blocks {
        let k = if transposed { blocks - 1 - step } else { step };
        let k0 = k * block;
        let size = block.min(n - k0);
        let inverse = Operand::block(lower, Block::new(k0, k0, size, size), View::Lower);
        gemm_into(
            function,
            x,
            Block::new(k0, 0, size, m),
            if transposed { inverse.t() } else { inverse },
            Operand::block(rhs, Block::new(k0, 0, size, m), View::Entire),
            T::one(),
            T::default(),
            false,
            &whole,
        )?;
        let (first, rows, coupling) = if transposed {
            // Rows above the block: op(a)[0..k0, k] = L[k, 0..k0]ᵀ.
            let coupling = Operand::block(lower, Block::new(k0, 0, size, k0), View::Entire);
            (0, k0, coupling.t())
        } else {
            let below = n - k0 - size;
            let coupling =
                Operand::block(lower, Block::new(k0 + size, k0, below, size), View::Entire);
            (k0 + size, below, coupling)
        };
        if rows > 0 {
            gemm_into(
                function,
                rhs,
                Block::new(first, 0, rows, m),
                coupling,
                Operand::block(x, Block::new(k0, 0, size, m), View::Entire),
                T::from_f64(-1.0),
                T::one(),
                false,
                &whole,
            )?;
        }
    }
    Ok(())
}

/// Solves `(l · lᵀ) · x = b` given the Cholesky factor `l` (view `Lower`):
/// a forward and a backward substitution, never an inverse. With
/// `l = cholesky_decompose(a)`, this is `a⁻¹ · b` at O(n² m).
///
/// ```
/// use clfuse_core::{MatrixCl, View};
/// // a = [[4, 2], [2, 5]] = l lᵀ with l = [[2, 0], [1, 2]]
/// let l = MatrixCl::from_slice(2, 2, &[2.0, 1.0, 0.0, 2.0])?.with_view(View::Lower);
/// let b = MatrixCl::from_slice(2, 1, &[6.0, 7.0])?;
/// assert_eq!(clfuse_kernels::cholesky_solve(&l, &b)?.to_vec()?, vec![1.0, 1.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn cholesky_solve<T: ClFloat>(l: &MatrixCl<T>, b: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    if l.view() != View::Lower {
        return Err(Error::InvalidView {
            function: "cholesky_solve",
            view: l.view(),
            reason: "the Cholesky factor must have view Lower",
        });
    }
    let z = checked_solve("cholesky_solve", l, Op::N, Rhs::AsGiven(b))?;
    checked_solve("cholesky_solve", l, Op::T, Rhs::AsGiven(&z))
}
