//! The syntax of lazy expressions: the node types that Rust operators build.
//!
//! These structs only *hold* operands; their code generation lives in
//! `fusion-ops` (`Operation` impls). They are defined here, beside `MatrixCl`,
//! because Rust's orphan rule only allows `impl Add for &MatrixCl` in the crate
//! that defines `MatrixCl`: `&a + &b` must name its result type from here.

use crate::cl_type::ClType;
use crate::matrix::MatrixCl;
use std::ops;

/// A lazy expression. Every operator and function returns one; nothing runs
/// until it is assigned (`MatrixCl::assign`) or evaluated (`.eval()`).
///
/// ```
/// use clfuse_core::{Expr, MatrixCl};
/// let a = MatrixCl::from_slice(1, 2, &[1.0f32, 2.0])?;
/// let e: Expr<_> = 2.0f32 * (&a + &a); // builds a tree; no kernel runs
/// # let _ = e;
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Expr<O>(pub O);

/// A matrix operand, borrowed or owned by the expression.
#[derive(Debug)]
pub enum MatrixRef<'a, T: ClType> {
    /// Borrowed from the caller.
    Borrowed(&'a MatrixCl<T>),
    /// Moved into the expression (a temporary).
    Owned(MatrixCl<T>),
}

impl<T: ClType> std::ops::Deref for MatrixRef<'_, T> {
    type Target = MatrixCl<T>;
    fn deref(&self) -> &MatrixCl<T> {
        match self {
            MatrixRef::Borrowed(m) => m,
            MatrixRef::Owned(m) => m,
        }
    }
}

/// Reads a matrix (a leaf).
#[derive(Debug)]
pub struct Load<'a, T: ClType>(pub MatrixRef<'a, T>);

/// A scalar value, broadcast to every element (passed as a kernel argument).
#[derive(Debug, Clone, Copy)]
pub struct Scalar<T: ClType>(pub T);

/// A sub-expression used more than once by reference: computed once per element.
#[derive(Debug, Clone, Copy)]
pub struct Shared<'a, O>(pub &'a O);

/// `lhs + rhs`.
#[derive(Debug, Clone, Copy)]
pub struct Add<L, R>(pub L, pub R);
/// `lhs - rhs`.
#[derive(Debug, Clone, Copy)]
pub struct Sub<L, R>(pub L, pub R);
/// Element-wise `lhs * rhs`.
#[derive(Debug, Clone, Copy)]
pub struct ElewiseMul<L, R>(pub L, pub R);
/// Element-wise `lhs / rhs`.
#[derive(Debug, Clone, Copy)]
pub struct ElewiseDiv<L, R>(pub L, pub R);
/// `-a`.
#[derive(Debug, Clone, Copy)]
pub struct Neg<A>(pub A);

/// `lhs * rhs` between two matrix expressions: a matrix product, computed by
/// the hand-written GEMM leaf (not fused). The operands are evaluated and
/// multiplied when the surrounding expression is first validated (its
/// shape is asked for, which every assignment does before generating code);
/// the product then feeds the fused kernel like any matrix.
///
/// ```
/// use clfuse_core::{Expr, MatrixCl};
/// use clfuse_core::expr::MatrixProduct;
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 0.0, 0.0, 1.0])?;
/// let p = &a * &a; // builds the node; GEMM runs when the expression is used
/// let _: &MatrixProduct<_, _> = &p.0;
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Debug)]
pub struct MatrixProduct<L, R> {
    /// Left operand.
    pub lhs: L,
    /// Right operand.
    pub rhs: R,
    /// The product once computed (a `MatrixCl` of the operands' element type).
    pub result: std::cell::OnceCell<Box<dyn std::any::Any>>,
}

impl<L, R> MatrixProduct<L, R> {
    /// A product not yet computed.
    pub fn new(lhs: L, rhs: R) -> Self {
        MatrixProduct {
            lhs,
            rhs,
            result: std::cell::OnceCell::new(),
        }
    }
}

/// Anything that can be an operand of an expression: matrices (borrowed or
/// owned), expressions (owned or shared by reference) and scalars.
pub trait IntoOperand {
    /// The node it becomes.
    type Operand;
    /// Converts into the node.
    fn into_operand(self) -> Self::Operand;
}

impl<'a, T: ClType> IntoOperand for &'a MatrixCl<T> {
    type Operand = Load<'a, T>;
    fn into_operand(self) -> Load<'a, T> {
        Load(MatrixRef::Borrowed(self))
    }
}

impl<T: ClType> IntoOperand for MatrixCl<T> {
    type Operand = Load<'static, T>;
    fn into_operand(self) -> Load<'static, T> {
        Load(MatrixRef::Owned(self))
    }
}

impl<O> IntoOperand for Expr<O> {
    type Operand = O;
    fn into_operand(self) -> O {
        self.0
    }
}

impl<'a, O> IntoOperand for &'a Expr<O> {
    type Operand = Shared<'a, O>;
    fn into_operand(self) -> Shared<'a, O> {
        Shared(&self.0)
    }
}

// One generic impl for the scalar types (not one each), so that
// `&a - 4.0` has a known type before the literal's type is decided.
impl<S: ScalarOperand> IntoOperand for S {
    type Operand = Scalar<S>;
    fn into_operand(self) -> Scalar<S> {
        Scalar(self)
    }
}

/// Operators whose left operand is a matrix, expression or variable; `$scalar`
/// is the trait of the scalar types `*` and `/` accept (one generic impl, not
/// one per scalar type, so that the result's type is known before a
/// literal's type is: `(&a * 2.0).eval()`). Shared with `clfuse_::std::ops::rev`.
#[doc(hidden)]
#[macro_export]
macro_rules! __matrix_operators {
    ($scalar:path; [$($g:tt)*] $lhs:ty) => {
        impl<$($g)*, Rhs: $crate::expr::IntoOperand> ::std::ops::Add<Rhs> for $lhs {
            type Output = $crate::expr::Expr<$crate::expr::Add<<$lhs as $crate::expr::IntoOperand>::Operand, Rhs::Operand>>;
            fn add(self, rhs: Rhs) -> Self::Output {
                $crate::expr::Expr($crate::expr::Add(self.into_operand(), rhs.into_operand()))
            }
        }
        impl<$($g)*, Rhs: $crate::expr::IntoOperand> ::std::ops::Sub<Rhs> for $lhs {
            type Output = $crate::expr::Expr<$crate::expr::Sub<<$lhs as $crate::expr::IntoOperand>::Operand, Rhs::Operand>>;
            fn sub(self, rhs: Rhs) -> Self::Output {
                $crate::expr::Expr($crate::expr::Sub(self.into_operand(), rhs.into_operand()))
            }
        }
        impl<$($g)*> ::std::ops::Neg for $lhs {
            type Output = $crate::expr::Expr<$crate::expr::Neg<<$lhs as $crate::expr::IntoOperand>::Operand>>;
            fn neg(self) -> Self::Output {
                $crate::expr::Expr($crate::expr::Neg(self.into_operand()))
            }
        }
        impl<$($g)*, S: $scalar> ::std::ops::Mul<S> for $lhs {
            type Output = $crate::expr::Expr<$crate::expr::ElewiseMul<<$lhs as $crate::expr::IntoOperand>::Operand, $crate::expr::Scalar<S>>>;
            fn mul(self, rhs: S) -> Self::Output {
                $crate::expr::Expr($crate::expr::ElewiseMul(self.into_operand(), $crate::expr::Scalar(rhs)))
            }
        }
        impl<$($g)*, S: $scalar> ::std::ops::Div<S> for $lhs {
            type Output = $crate::expr::Expr<$crate::expr::ElewiseDiv<<$lhs as $crate::expr::IntoOperand>::Operand, $crate::expr::Scalar<S>>>;
            fn div(self, rhs: S) -> Self::Output {
                $crate::expr::Expr($crate::expr::ElewiseDiv(self.into_operand(), $crate::expr::Scalar(rhs)))
            }
        }
    };
}

crate::__matrix_operators!(ScalarOperand; [O] Expr<O>);
crate::__matrix_operators!(ScalarOperand; ['a, O] &'a Expr<O>);
crate::__matrix_operators!(ScalarOperand; ['a, T: ClType] &'a MatrixCl<T>);
crate::__matrix_operators!(ScalarOperand; [T: ClType] MatrixCl<T>);

/// The scalar types that combine with matrices and expressions through
/// `*` and `/` (`f64`, `f32`, `i32`).
pub trait ScalarOperand: ClType {}
impl ScalarOperand for f64 {}
impl ScalarOperand for f32 {}
impl ScalarOperand for i32 {}

/// `*` between two matrices or expressions: the matrix product.
macro_rules! product_pair {
    ([$($gl:lifetime)?] [$($g:tt)*] $lhs:ty; [$($hl:lifetime)?] [$($h:tt)*] $rhs:ty) => {
        impl<$($gl,)? $($hl,)? $($g)*, $($h)*> ops::Mul<$rhs> for $lhs {
            type Output = Expr<MatrixProduct<<$lhs as IntoOperand>::Operand, <$rhs as IntoOperand>::Operand>>;
            fn mul(self, rhs: $rhs) -> Self::Output {
                Expr(MatrixProduct::new(self.into_operand(), rhs.into_operand()))
            }
        }
    };
}

macro_rules! product_for_lhs {
    ($($gl:tt $g:tt $lhs:ty),*) => {$(
        product_pair!($gl $g $lhs; [] [P] Expr<P>);
        product_pair!($gl $g $lhs; ['b] [P] &'b Expr<P>);
        product_pair!($gl $g $lhs; ['b] [U: ClType] &'b MatrixCl<U>);
        product_pair!($gl $g $lhs; [] [U: ClType] MatrixCl<U>);
    )*};
}
product_for_lhs!(
    [] [O] Expr<O>,
    ['a] [O] &'a Expr<O>,
    ['a] [T: ClType] &'a MatrixCl<T>,
    [] [T: ClType] MatrixCl<T>
);

/// Operators whose left operand is a scalar and right operand a matrix or expression.
macro_rules! scalar_lhs_operators {
    ($s:ty; $([$($g:tt)*] $rhs:ty),*) => {$(
        impl<$($g)*> ops::Add<$rhs> for $s {
            type Output = Expr<Add<Scalar<$s>, <$rhs as IntoOperand>::Operand>>;
            fn add(self, rhs: $rhs) -> Self::Output {
                Expr(Add(Scalar(self), rhs.into_operand()))
            }
        }
        impl<$($g)*> ops::Sub<$rhs> for $s {
            type Output = Expr<Sub<Scalar<$s>, <$rhs as IntoOperand>::Operand>>;
            fn sub(self, rhs: $rhs) -> Self::Output {
                Expr(Sub(Scalar(self), rhs.into_operand()))
            }
        }
        impl<$($g)*> ops::Mul<$rhs> for $s {
            type Output = Expr<ElewiseMul<Scalar<$s>, <$rhs as IntoOperand>::Operand>>;
            fn mul(self, rhs: $rhs) -> Self::Output {
                Expr(ElewiseMul(Scalar(self), rhs.into_operand()))
            }
        }
        impl<$($g)*> ops::Div<$rhs> for $s {
            type Output = Expr<ElewiseDiv<Scalar<$s>, <$rhs as IntoOperand>::Operand>>;
            fn div(self, rhs: $rhs) -> Self::Output {
                Expr(ElewiseDiv(Scalar(self), rhs.into_operand()))
            }
        }
    )*};
}

macro_rules! scalar_lhs_all {
    ($($s:ty),*) => {$(
        scalar_lhs_operators!($s;
            [O] Expr<O>,
            ['a, O] &'a Expr<O>,
            ['a, T: ClType] &'a MatrixCl<T>,
            [T: ClType] MatrixCl<T>);
    )*};
}
scalar_lhs_all!(f64, f32, i32);
