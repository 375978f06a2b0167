//! Pairwise squared distances and the log-determinant of a Cholesky
//! factor: the pieces of a Gaussian-process covariance and density, built
//! from fused operations and one GEMM (no loop over dimensions).

use crate::functions::{Fmax, Log};
use crate::operation::Operation;
use crate::precomputed::Materialized;
use crate::reductions::{ColwiseReduction, RowwiseReduction, SumOp};
use crate::structural::{ColwiseBroadcast, Diagonal, RowwiseBroadcast, Transpose};
use clfuse_core::expr::{Add, ElewiseMul, MatrixProduct, Scalar, Sub};
use clfuse_core::{ClFloat, Error, Expr, IntoOperand, Result};
use std::marker::PhantomData;

/// Each row's squared norm, `Σ_k a_ik²`, as an `n x 1` column.
type RowNorms<A> = RowwiseReduction<SumOp, ElewiseMul<A, A>>;

fn row_norms_of<A>(a: A, again: A) -> RowNorms<A> {
    RowwiseReduction(ElewiseMul(a, again), PhantomData, Materialized::default())
}

/// The node [`squared_distance()`] builds.
pub type SquaredDistance<X, Y, T> = Fmax<
    Sub<
        Add<ColwiseBroadcast<RowNorms<X>>, RowwiseBroadcast<Transpose<RowNorms<Y>>>>,
        ElewiseMul<Scalar<T>, MatrixProduct<X, Transpose<Y>>>,
    >,
    Scalar<T>,
>;

/// Squared Euclidean distances between the rows of `x` (`n x d`) and of
/// `y` (`m x d`): the `n x m` matrix `‖x_i − y_j‖²` for any dimension `d`,
/// as `‖x_i‖² + ‖y_j‖² − 2 x_i·y_j`. The cross term is one GEMM
/// (`x · yᵀ`), the squared norms are row-wise sums evaluated once apart
/// (the nested-reduction rule), and everything else fuses into the kernel
/// that uses the result (`exp(-0.5 * d2 / l²)`, say). Rounding can leave
/// the difference slightly below zero, so it is clamped at 0. `x` and `y`
/// are each read twice, so they are references (`&matrix`, `&var` or `&expr`).
///
/// `Err` when `x` and `y` have different numbers of columns.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::squared_distance;
/// // points 0, 3 and 4 on a line against points 0 and 1
/// let x = MatrixCl::from_slice(3, 1, &[0.0f64, 3.0, 4.0])?;
/// let y = MatrixCl::from_slice(2, 1, &[0.0f64, 1.0])?;
/// let d2 = squared_distance(&x, &y)?.eval()?;
/// assert_eq!(d2.to_vec()?, vec![0.0, 9.0, 16.0, 1.0, 4.0, 9.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
#[allow(clippy::type_complexity)]
pub fn squared_distance<X, Y, T>(
    x: X,
    y: Y,
) -> Result<Expr<SquaredDistance<X::Operand, Y::Operand, T>>>
where
    T: ClFloat,
    X: IntoOperand + Clone,
    Y: IntoOperand + Clone,
    X::Operand: Operation<Scalar = T>,
    Y::Operand: Operation<Scalar = T>,
{
    let shapes = (
        x.clone().into_operand().shape()?,
        y.clone().into_operand().shape()?,
    );
    let (Some((n, dx)), Some((m, dy))) = shapes else {
        return Err(Error::InvalidArgument {
            function: "squared_distance",
            argument: "x, y",
            reason: "needs two matrices of points (one per row), not scalars".into(),
        });
    };
    if dx != dy {
        return Err(Error::DimensionMismatch {
            operation: "squared_distance: x and y need the same number of columns".into(),
            lhs: (n, dx),
            rhs: (m, dy),
        });
    }
    Ok(Expr(squared_distance_of(
        || x.clone().into_operand(),
        || y.clone().into_operand(),
        n,
        m,
    )))
}

/// The node of [`squared_distance()`] from operands made on demand (each
/// of `x` and `y` is read twice, and an operand need not be `Clone`), for
/// `n` rows of `x` and `m` of `y`, their shapes already checked.
pub(crate) fn squared_distance_of<X, Y, T>(
    x: impl Fn() -> X,
    y: impl Fn() -> Y,
    n: usize,
    m: usize,
) -> SquaredDistance<X, Y, T>
where
    T: ClFloat,
    X: Operation<Scalar = T>,
    Y: Operation<Scalar = T>,
{
    let sum_of_norms = Add(
        ColwiseBroadcast::new(row_norms_of(x(), x()), m),
        RowwiseBroadcast::new(Transpose(row_norms_of(y(), y())), n),
    );
    let cross = ElewiseMul(
        Scalar(T::from_f64(2.0)),
        MatrixProduct::new(x(), Transpose(y())),
    );
    Fmax(Sub(sum_of_norms, cross), Scalar(T::from_f64(0.0)))
}

/// The node [`log_determinant_cholesky()`] builds.
pub type LogDeterminantCholesky<E, T> =
    ColwiseReduction<SumOp, ElewiseMul<Scalar<T>, Log<Diagonal<E>>>>;

/// `log det(l lᵀ) = 2 Σ log l_ii` for a Cholesky factor `l`, as a `1 x 1`
/// column-wise sum: one kernel over the diagonal. Of a variable it
/// evaluates to a variable (the adjoint is `2 / l_ii` on the diagonal).
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::log_determinant_cholesky;
/// // l = diag(2, 3): det(l lᵀ) = 36
/// let l = MatrixCl::from_slice(2, 2, &[2.0f64, 0.0, 0.0, 3.0])?;
/// let logdet = log_determinant_cholesky(&l).eval()?.to_vec()?[0];
/// assert!((logdet - 36f64.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn log_determinant_cholesky<A, T>(l: A) -> Expr<LogDeterminantCholesky<A::Operand, T>>
where
    T: ClFloat,
    A: IntoOperand,
    A::Operand: Operation<Scalar = T>,
{
    Expr(ColwiseReduction(
        ElewiseMul(Scalar(T::from_f64(2.0)), Log(Diagonal(l.into_operand()))),
        PhantomData,
    ))
}
