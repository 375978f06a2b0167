//! Comparisons, logical operators, `select` and `cast`.

use crate::binder::Binder;
use crate::generator::{Generator, Index};
use crate::operation::HeldProduct;
use crate::operation::{Operation, Shape, combine_shapes};
use crate::templates::convert;
use clfuse_core::{ClType, Expr, IntoOperand, MatrixCl, Promote, Result, View};
use std::marker::PhantomData;

// Each comparison and logical operator yields an `int` (1 or 0).
crate::elementwise! { pub struct Less; fn lt(x, y) = "{x} < {y}"; result = int; view = union; }
crate::elementwise! { pub struct LessEq; fn le(x, y) = "{x} <= {y}"; result = int; view = entire; }
crate::elementwise! { pub struct Greater; fn gt(x, y) = "{x} > {y}"; result = int; view = union; }
crate::elementwise! { pub struct GreaterEq; fn ge(x, y) = "{x} >= {y}"; result = int; view = entire; }
crate::elementwise! { pub struct Equal; fn eq(x, y) = "{x} == {y}"; result = int; view = entire; }
crate::elementwise! { pub struct NotEqual; fn ne(x, y) = "{x} != {y}"; result = int; view = union; }
crate::elementwise! { pub struct LogicalAnd; fn and(x, y) = "{x} && {y}"; result = int; view = intersection; }
crate::elementwise! { pub struct LogicalOr; fn or(x, y) = "{x} || {y}"; result = int; view = union; }
crate::elementwise! { pub struct Not; fn not(x) = "!{x}"; result = int; view = entire; }

/// `.cast::<T>()` as a method of matrices and expressions.
pub trait CastMethod: IntoOperand + Sized {
    /// Converts the element type; see [`cast()`].
    fn cast<T: ClType>(self) -> Expr<Cast<T, Self::Operand>> {
        Expr(Cast(self.into_operand(), PhantomData))
    }
}

impl<O> CastMethod for Expr<O> {}
impl<O> CastMethod for &Expr<O> {}
impl<T: ClType> CastMethod for &MatrixCl<T> {}

/// `condition ? then : otherwise`: the node built by [`select()`].
#[derive(Debug, Clone, Copy)]
pub struct Select<C, A, B>(pub C, pub A, pub B);

impl<C: Operation, A: Operation, B: Operation> Operation for Select<C, A, B>
where
    A::Scalar: Promote<B::Scalar>,
{
    type Scalar = <A::Scalar as Promote<B::Scalar>>::Output;
    type Key = Select<C::Key, A::Key, B::Key>;

    fn shape(&self) -> Result<Shape> {
        let values = combine_shapes("select", self.1.shape()?, self.2.shape()?)?;
        combine_shapes("select", self.0.shape()?, values)
    }

    fn view(&self) -> View {
        self.1.view().union(self.2.view())
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let c = self.0.generate(g, at);
        let a = self.1.generate(g, at);
        let b = self.2.generate(g, at);
        let a = convert::<A::Scalar, Self::Scalar>(&a);
        let b = convert::<B::Scalar, Self::Scalar>(&b);
        g.declare(Self::Scalar::CL_NAME, &format!("{c} ? {a} : {b}"))
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        self.0.bind(b);
        self.1.bind(b);
        self.2.bind(b);
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.0.evaluate_leaves(held)?;
        self.1.evaluate_leaves(held)?;
        self.2.evaluate_leaves(held)?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.0.contains_reduction() || self.1.contains_reduction() || self.2.contains_reduction()
    }

    fn epilogue_product(&self) -> Option<&dyn crate::EpilogueProduct> {
        self.0
            .epilogue_product()
            .or_else(|| self.1.epilogue_product())
            .or_else(|| self.2.epilogue_product())
    }
}

/// Element-wise choice: `then` where `condition` is non-zero, else `otherwise`.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(1, 3, &[-1.0f64, 0.5, 2.0])?;
/// let clipped = select(gt(&a, 1.0), 1.0, &a).eval()?;
/// assert_eq!(clipped.to_vec()?, vec![-1.0, 0.5, 1.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn select<C: IntoOperand, A: IntoOperand, B: IntoOperand>(
    condition: C,
    then: A,
    otherwise: B,
) -> Expr<Select<C::Operand, A::Operand, B::Operand>> {
    Expr(Select(
        condition.into_operand(),
        then.into_operand(),
        otherwise.into_operand(),
    ))
}

/// Conversion to element type `T` (C cast semantics): the node built by [`cast()`].
#[derive(Debug)]
pub struct Cast<T, A>(pub A, pub PhantomData<T>);

impl<T: ClType, A: Operation> Operation for Cast<T, A> {
    type Scalar = T;
    type Key = Cast<T, A::Key>;

    fn shape(&self) -> Result<Shape> {
        self.0.shape()
    }

    fn view(&self) -> View {
        self.0.view()
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        let x = self.0.generate(g, at);
        g.declare(T::CL_NAME, &convert::<A::Scalar, T>(&x))
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        self.0.bind(b)
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.0.evaluate_leaves(held)?;
        Ok(())
    }

    fn contains_reduction(&self) -> bool {
        self.0.contains_reduction()
    }

    fn epilogue_product(&self) -> Option<&dyn crate::EpilogueProduct> {
        self.0.epilogue_product()
    }

    /// A cast to the operand's own type reads its matrix unchanged.
    fn matrix(&self) -> Option<&clfuse_core::MatrixCl<T>> {
        (self.0.matrix()? as &dyn std::any::Any).downcast_ref()
    }
}

/// Converts every element to `T` (truncating toward zero for `i32`).
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(1, 2, &[1.7f64, -2.5])?;
/// assert_eq!(cast::<i32, _>(&a).eval()?.to_vec()?, vec![1, -2]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn cast<T: ClType, A: IntoOperand>(a: A) -> Expr<Cast<T, A::Operand>> {
    Expr(Cast(a.into_operand(), PhantomData))
}
