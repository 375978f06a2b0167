//! Methods on matrices and expressions: `.eval()`, `.kernel_source()`,
//! `.elt_multiply(..)` and every function (`.exp()`, `.lt(..)`, ...).

use crate::driver::operation_source;
use crate::operation::Operation;
use crate::reductions::{ColwiseReduction, ReduceOp};
use crate::rev::{Dependence, Depends};
use clfuse_core::expr::{ElewiseDiv, ElewiseMul};
use clfuse_core::{ClType, Expr, IntoOperand, MatrixCl, Result};

/// `.eval()` and `.kernel_source()` of an expression.
pub trait ExprMethods: IntoOperand + Sized
where
    Self::Operand: Operation,
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
    /// An expression that reads a [`Var`](crate::rev::Var) evaluates to a
    /// new `Var` instead, recording a reverse step (see [`crate::rev`]).
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

    /// The OpenCL C of the kernel that evaluates this expression.
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// let a = MatrixCl::from_slice(1, 1, &[1.0f32])?;
    /// assert!((&a + 1.0f32).kernel_source()?.contains("__kernel void calculate("));
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    fn kernel_source(&self) -> Result<String>;
}

/// Element-wise product and quotient as methods.
pub trait ElementwiseMethods: IntoOperand + Sized {
    /// Element-wise product; see [`elt_multiply`](crate::elt_multiply).
    fn elt_multiply<B: IntoOperand>(self, b: B) -> Expr<ElewiseMul<Self::Operand, B::Operand>> {
        Expr(ElewiseMul(self.into_operand(), b.into_operand()))
    }

    /// Element-wise quotient; see [`elt_divide`](crate::elt_divide).
    fn elt_divide<B: IntoOperand>(self, b: B) -> Expr<ElewiseDiv<Self::Operand, B::Operand>> {
        Expr(ElewiseDiv(self.into_operand(), b.into_operand()))
    }
}

macro_rules! method_receivers {
    ($([$($g:tt)*] $ty:ty),*) => {$(
        impl<$($g)*> ElementwiseMethods for $ty {}
    )*};
}

method_receivers!([O] Expr<O>, ['a, O] &'a Expr<O>, ['a, T: ClType] &'a MatrixCl<T>, ['a, T: ClType] &'a crate::rev::Var<T>);

impl<O: Operation> ExprMethods for Expr<O> {
    fn kernel_source(&self) -> Result<String> {
        operation_source(&self.0)
    }
}

impl<O: Operation> ExprMethods for &Expr<O> {
    fn kernel_source(&self) -> Result<String> {
        operation_source(&self.0)
    }
}

/// `.eval()` of a column-wise reduction (a `1 x cols` matrix, or a
/// [`Var`](crate::rev::Var) for a sum of an expression of variables).
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

impl<R: ReduceOp, E: Operation> ReductionMethods for Expr<ColwiseReduction<R, E>> {
    type Scalar = E::Scalar;
    type Output = <E::Dependence as Dependence>::Evaluated<E::Scalar>;
    fn eval(self) -> Result<Self::Output> {
        E::Dependence::eval_colwise(self.0)
    }
}
