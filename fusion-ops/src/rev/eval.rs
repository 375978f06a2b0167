//! `.eval()`: what an expression evaluates to is decided by its type. Of
//! constants, a new `MatrixCl` (one kernel, by the engine); of variables, a
//! new [`Var`](crate::rev::Var) and a recorded step (see [`crate::rev`]).

use crate::operation::Operation;
use crate::outputs::OutputList;
use crate::reductions::{ColwiseReduction, ReduceOp};
use crate::rev::{Both, Dependence, Depends, Differentiable, Var};
use crate::transpose_product::TransposeVectorMultiply;
use clfuse_core::{ClType, Expr, IntoOperand, MatrixCl, Result};

/// `.eval()` of an expression.
pub trait Eval: IntoOperand + Sized
where
    Self::Operand: Differentiable,
{
    /// Evaluates into a new matrix with one kernel.
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// let a = MatrixCl::from_slice(1, 2, &[1.0f32, 2.0])?;
    /// assert_eq!((&a + &a).eval()?.to_vec()?, vec![2.0, 4.0]);
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    ///
    /// An expression that reads a [`Var`] evaluates to a new `Var`
    /// instead, recording a reverse step (see [`crate::rev`]).
    #[allow(clippy::type_complexity)]
    fn eval(
        self,
    ) -> Result<
        <<Self::Operand as Depends>::Dependence as Dependence>::Evaluated<
            <Self::Operand as Operation>::Scalar,
        >,
    > {
        <<Self::Operand as Depends>::Dependence as Dependence>::eval(self.into_operand())
    }
}

impl<O: Differentiable> Eval for Expr<O> {}
impl<O: Differentiable> Eval for &Expr<O> {}
/// A copy (of a matrix: one kernel), so that `.eval()` works on every
/// [`Expression`](crate::Expression), leaves included.
impl<T: ClType> Eval for &MatrixCl<T> {}
/// A copy: one kernel.
impl<T: ClType> Eval for MatrixCl<T> {}
/// A new variable equal to this one (a recorded step), so that `.eval()`
/// works on every [`Expression`](crate::Expression), leaves included.
impl<T: ClType> Eval for &Var<T> {}
/// A new variable equal to this one (a recorded step).
impl<T: ClType> Eval for Var<T> {}

/// `colwise_sum(e).eval()` by one kernel that also computes `also` (checks
/// of the operands, say): a `MatrixCl` of constants, a [`Var`] and a
/// recorded step of variables. When `also` fails (a [`check`](crate::check)
/// does), its `Err` is returned and nothing is recorded.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::{self, Var};
/// let y = MatrixCl::from_slice(2, 1, &[1.0f64, -2.0])?;
/// let s = Var::new(MatrixCl::from_slice(2, 1, &[1.0f64, 3.0])?);
/// let positive = check(&y, "sum_log", "y", gt(&y, 0.0)).requiring("positive");
/// let err = rev::eval_colwise_sum_with(elt_multiply(&s, log(&y)), &positive).unwrap_err();
/// assert_eq!(err.to_string(), "sum_log: y[1, 0] is -2, but must be positive");
/// assert_eq!(rev::steps_recorded(), 0);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn eval_colwise_sum_with<E, L>(
    e: E,
    also: &L,
) -> Result<
    <<E::Operand as Depends>::Dependence as Dependence>::Evaluated<
        <E::Operand as Operation>::Scalar,
    >,
>
where
    E: IntoOperand,
    E::Operand: Differentiable,
    L: OutputList,
{
    <<E::Operand as Depends>::Dependence as Dependence>::eval_colwise_sum_with(
        e.into_operand(),
        also,
    )
}

/// `.eval()` of a column-wise reduction or of `xᵀ·v` (a matrix, or a
/// [`Var`] when the reduced expression depends on one).
pub trait ReductionMethods {
    /// Element type.
    type Scalar: ClType;
    /// What evaluating gives: `MatrixCl<Scalar>` or `Var<Scalar>`.
    type Output;
    /// Evaluates into a new `1 x cols` matrix.
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// let m = MatrixCl::from_slice(2, 2, &[1, 2, 3, 4])?;
    /// assert_eq!(colwise_sum(&m).eval()?.to_vec()?, vec![3, 7]);
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    fn eval(self) -> Result<Self::Output>;
}

impl<R: ReduceOp, E: Differentiable> ReductionMethods for Expr<ColwiseReduction<R, E>> {
    type Scalar = E::Scalar;
    type Output = <E::Dependence as Dependence>::Evaluated<E::Scalar>;
    fn eval(self) -> Result<Self::Output> {
        E::Dependence::eval_colwise(self.0)
    }
}

/// `.eval()` gives a new `p x 1` matrix, or a variable when `x` or `v`
/// depends on one (its own step).
impl<X: Differentiable, V: Differentiable> ReductionMethods
    for Expr<TransposeVectorMultiply<X, V>>
{
    type Scalar = X::Scalar;
    type Output = <Both<X::Dependence, V::Dependence> as Dependence>::Evaluated<X::Scalar>;
    fn eval(self) -> Result<Self::Output> {
        <Both<X::Dependence, V::Dependence>>::eval_transpose_vector(self.0)
    }
}

/// Element-wise product and quotient as methods of `&var`.
impl<T: ClType> crate::methods::ElementwiseMethods for &Var<T> {}
