//! Rust operators and methods on variables, as on matrices: `&x + &y`,
//! `2.0 * &x`, `-&x`, `&a * &x` (matrix product), `(&x).exp()`.

use crate::rev::var::Var;
use clfuse_core::expr::{Add, ElewiseDiv, ElewiseMul, MatrixProduct, Scalar, ScalarOperand, Sub};
use clfuse_core::{ClType, Expr, IntoOperand, MatrixCl};
use std::ops;

/// The scalar types that scale variables (a local trait, so that its one
/// generic impl cannot overlap the matrix products below).
pub trait VarScalar: ScalarOperand {}
impl VarScalar for f64 {}
impl VarScalar for f32 {}
impl VarScalar for i32 {}

clfuse_core::__matrix_operators!(VarScalar; ['a, T: ClType] &'a Var<T>);
clfuse_core::__matrix_operators!(VarScalar; [T: ClType] Var<T>);

/// `*` with a variable on either side and a matrix, expression or variable
/// on the other: the matrix product.
macro_rules! var_products {
    ($([$($g:tt)*] $lhs:ty, $rhs:ty;)*) => {$(
        impl<$($g)*> ops::Mul<$rhs> for $lhs {
            type Output = Expr<MatrixProduct<<$lhs as IntoOperand>::Operand, <$rhs as IntoOperand>::Operand>>;
            fn mul(self, rhs: $rhs) -> Self::Output {
                Expr(MatrixProduct::new(self.into_operand(), rhs.into_operand()))
            }
        }
    )*};
}

var_products! {
    ['a, 'b, T: ClType, U: ClType] &'a Var<T>, &'b Var<U>;
    ['a, 'b, T: ClType, U: ClType] &'a Var<T>, &'b MatrixCl<U>;
    ['a, 'b, T: ClType, U: ClType] &'a MatrixCl<T>, &'b Var<U>;
    ['a, T: ClType, P] &'a Var<T>, Expr<P>;
    ['a, T: ClType, P] Expr<P>, &'a Var<T>;
    ['a, 'b, T: ClType, P] &'a Var<T>, &'b Expr<P>;
    ['a, 'b, T: ClType, P] &'b Expr<P>, &'a Var<T>;
}

/// Scalars on the left of a variable.
macro_rules! scalar_lhs {
    ($($s:ty),*) => {$(
        impl<'a, T: ClType> ops::Add<&'a Var<T>> for $s {
            type Output = Expr<Add<Scalar<$s>, <&'a Var<T> as IntoOperand>::Operand>>;
            fn add(self, rhs: &'a Var<T>) -> Self::Output {
                Expr(Add(Scalar(self), rhs.into_operand()))
            }
        }
        impl<'a, T: ClType> ops::Sub<&'a Var<T>> for $s {
            type Output = Expr<Sub<Scalar<$s>, <&'a Var<T> as IntoOperand>::Operand>>;
            fn sub(self, rhs: &'a Var<T>) -> Self::Output {
                Expr(Sub(Scalar(self), rhs.into_operand()))
            }
        }
        impl<'a, T: ClType> ops::Mul<&'a Var<T>> for $s {
            type Output = Expr<ElewiseMul<Scalar<$s>, <&'a Var<T> as IntoOperand>::Operand>>;
            fn mul(self, rhs: &'a Var<T>) -> Self::Output {
                Expr(ElewiseMul(Scalar(self), rhs.into_operand()))
            }
        }
        impl<'a, T: ClType> ops::Div<&'a Var<T>> for $s {
            type Output = Expr<ElewiseDiv<Scalar<$s>, <&'a Var<T> as IntoOperand>::Operand>>;
            fn div(self, rhs: &'a Var<T>) -> Self::Output {
                Expr(ElewiseDiv(Scalar(self), rhs.into_operand()))
            }
        }
    )*};
}

scalar_lhs!(f64, f32);
