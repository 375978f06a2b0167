//! [`Expression`]: the one bound of a generic helper over expressions.

use crate::rev::{Dependence, Depends, Differentiable, Eval};
use clfuse_core::expr::{Add, ElewiseDiv, ElewiseMul, Neg, Scalar, Sub};
use clfuse_core::{ClType, Expr, IntoOperand};
use std::ops;

/// Anything usable as an expression of `T` elements that depends on
/// variables as `D` says ([`Constant`](crate::rev::Constant) or
/// [`Variable`](crate::rev::Variable)): a borrowed matrix
/// (`&MatrixCl<T>`), a variable (`&Var<T>`, reverse mode), an expression
/// (`Expr<_>` or `&Expr<_>`, constant or reading variables), and what a
/// helper bounded by it returns. One bound instead of the operator traits
/// each: a generic helper takes `E: Expression<f64, D>` (generic over
/// `D: ExprDependence` too) and returns `impl Expression<f64, D>`, which
/// keeps what `.eval()` gives (`D` of a helper of two expressions:
/// `rev::Both<D1, D2>`); its
/// result goes on to another helper, to an
/// element-wise function (`exp`, `square`), a reduction (`colwise_sum`),
/// an output, or `.eval()` (a `MatrixCl` of constants, a `Var` of
/// variables). A closure cannot do this (it takes one argument type);
/// neither can a function bounded by `IntoOperand` alone (no operators).
///
/// Under the bound, `e + x`, `e - x`, `e * x`, `e / x` (with `x` a `T`),
/// `-e` and `e.eval()` work directly, and so does any operator whose left
/// operand is an `Expr` (`square(e) + f`); for the rest (a scalar on the
/// left, `mu - e`, or `e + f` of two generic expressions), write
/// [`e.into_expr()`](Self::into_expr) first, which has every operator. A
/// helper that uses its argument twice asks for `E: Expression<T, D> + Copy`:
/// `&MatrixCl`, `&Var` and `&Expr` are (a shared `&Expr` is computed once
/// per element); to share a helper's result, name it as an `Expr`
/// (`let z = standardize(&x, mu, s).into_expr();`) and pass `&z`.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::rev::{self, ExprDependence, Var};
///
/// fn standardize<D: ExprDependence, E: Expression<f64, D>>(e: E, mu: f64, s: f64) -> impl Expression<f64, D> {
///     (e - mu) / s
/// }
/// fn squared_plus<D: ExprDependence, E: Expression<f64, D> + Copy>(e: E) -> impl Expression<f64, D> {
///     square(e) + e
/// }
///
/// // Matrices: the helpers compose, and feed functions and reductions.
/// let x = MatrixCl::from_slice(3, 1, &[1.0f64, 2.0, 3.0])?;
/// let z = standardize(&x, 2.0, 0.5).eval()?; // [-2, 0, 2]
/// assert_eq!(squared_plus(&z).eval()?.to_vec()?, vec![2.0, 0.0, 6.0]);
/// let total = colwise_sum(exp(standardize(standardize(&x, 2.0, 1.0), 0.0, 1.0))).eval()?;
/// assert!((total.to_vec()?[0] - (1.0f64.exp() + 1.0 + (-1.0f64).exp())).abs() < 1e-12);
///
/// // Variables: the same helpers record steps; d/dx Σ ((x - 2) / 0.5)² = 8 (x - 2).
/// let v = Var::new(x);
/// let lp = colwise_sum(square(standardize(&v, 2.0, 0.5))).eval()?;
/// lp.grad()?;
/// assert_eq!(v.adjoint().to_vec()?, vec![-8.0, 0.0, 8.0]);
/// rev::clear()?;
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub trait Expression<T: ClType, D: Dependence>:
    IntoOperand<Operand: Differentiable<Scalar = T> + Depends<Dependence = D>>
    + Eval
    + ops::Add<T, Output = Expr<Add<<Self as IntoOperand>::Operand, Scalar<T>>>>
    + ops::Sub<T, Output = Expr<Sub<<Self as IntoOperand>::Operand, Scalar<T>>>>
    + ops::Mul<T, Output = Expr<ElewiseMul<<Self as IntoOperand>::Operand, Scalar<T>>>>
    + ops::Div<T, Output = Expr<ElewiseDiv<<Self as IntoOperand>::Operand, Scalar<T>>>>
    + ops::Neg<Output = Expr<Neg<<Self as IntoOperand>::Operand>>>
{
    /// The expression as an [`Expr`], which has every operator (a scalar
    /// on the left, another expression on the right).
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// use clfuse_ops::rev::ExprDependence;
    /// fn one_minus<D: ExprDependence, E: Expression<f64, D>>(e: E) -> impl Expression<f64, D> {
    ///     1.0 - e.into_expr()
    /// }
    /// let x = MatrixCl::from_slice(2, 1, &[0.25f64, 1.0])?;
    /// assert_eq!(one_minus(&x).eval()?.to_vec()?, vec![0.75, 0.0]);
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    fn into_expr(self) -> Expr<Self::Operand> {
        Expr(self.into_operand())
    }
}

impl<T: ClType, D: Dependence, E> Expression<T, D> for E
where
    E: IntoOperand
        + Eval
        + ops::Add<T, Output = Expr<Add<E::Operand, Scalar<T>>>>
        + ops::Sub<T, Output = Expr<Sub<E::Operand, Scalar<T>>>>
        + ops::Mul<T, Output = Expr<ElewiseMul<E::Operand, Scalar<T>>>>
        + ops::Div<T, Output = Expr<ElewiseDiv<E::Operand, Scalar<T>>>>
        + ops::Neg<Output = Expr<Neg<E::Operand>>>,
    E::Operand: Differentiable<Scalar = T> + Depends<Dependence = D>,
{
}
