//! Methods on matrices and expressions: `.kernel_source()`,
//! `.elt_multiply(..)` and every function (`.exp()`, `.lt(..)`, ...).
//! `.eval()` belongs to reverse mode, which decides what an expression
//! evaluates to (`rev/eval.rs`).

use crate::driver::operation_source;
use crate::operation::Operation;
use clfuse_core::expr::{ElewiseDiv, ElewiseMul};
use clfuse_core::{ClType, Expr, IntoOperand, MatrixCl, Result};

/// `.kernel_source()` of an expression.
pub trait ExprMethods: IntoOperand + Sized
where
    Self::Operand: Operation,
{
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

method_receivers!([O] Expr<O>, ['a, O] &'a Expr<O>, ['a, T: ClType] &'a MatrixCl<T>);

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
