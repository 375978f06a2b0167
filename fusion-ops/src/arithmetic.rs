//! `+`, `-`, element-wise `*` and `/`, and unary `-`.
//!
//! The node types come from `clfuse_core::expr` (Rust operators build them);
//! here they learn their type, view and code.

use clfuse_core::expr::{ElewiseDiv, ElewiseMul};
use clfuse_core::{Expr, IntoOperand};

// The node types come from `clfuse_core::expr`; these declarations give
// them their code. The function name is what shape errors report.
crate::elementwise! { impl clfuse_core::expr::Add; fn add(x, y) = "{x} + {y}"; result = promote; view = union; d/dx = "1"; d/dy = "1"; }
crate::elementwise! { impl clfuse_core::expr::Sub; fn subtract(x, y) = "{x} - {y}"; result = promote; view = union; d/dx = "1"; d/dy = "-1"; }
crate::elementwise! { impl clfuse_core::expr::ElewiseMul; fn elt_multiply(x, y) = "{x} * {y}"; result = promote; view = intersection; d/dx = "{y}"; d/dy = "{x}"; }
crate::elementwise! { impl clfuse_core::expr::ElewiseDiv; fn elt_divide(x, y) = "{x} / {y}"; result = promote; view = entire; d/dx = "1 / {y}"; d/dy = "-{res} / {y}"; }
crate::elementwise! { impl clfuse_core::expr::Neg; fn neg(x) = "-{x}"; result = same; view = keep; d/dx = "-1"; }

/// Element-wise product of two operands (`*` between matrices is the matrix product).
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(1, 2, &[2.0f64, 3.0])?;
/// assert_eq!(elt_multiply(&a, &a).eval()?.to_vec()?, vec![4.0, 9.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn elt_multiply<A: IntoOperand, B: IntoOperand>(
    a: A,
    b: B,
) -> Expr<ElewiseMul<A::Operand, B::Operand>> {
    Expr(ElewiseMul(a.into_operand(), b.into_operand()))
}

/// Element-wise quotient of two operands.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(1, 2, &[2.0f64, 3.0])?;
/// assert_eq!(elt_divide(&a, &a).eval()?.to_vec()?, vec![1.0, 1.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn elt_divide<A: IntoOperand, B: IntoOperand>(
    a: A,
    b: B,
) -> Expr<ElewiseDiv<A::Operand, B::Operand>> {
    Expr(ElewiseDiv(a.into_operand(), b.into_operand()))
}
