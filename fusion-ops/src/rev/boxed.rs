//! Type-erased operations, for expressions whose structure is only known at
//! run time (built from data, a model description, or random tests).
//!
//! `DynOp` boxes any operation. Its structure no longer shows in the Rust
//! type, so each `DynOp` records the erased type in the binder's alias
//! pattern: two different erased trees never share a kernel.

use crate::binder::Binder;
use crate::generator::{Generator, Index};
use crate::operation::HeldProduct;
use crate::operation::{Operation, Shape};
use crate::rev::{Constant, Dependence, Depends, Differentiable, Dual, ProductReads};
use clfuse_core::{ClType, Expr, IntoOperand, Result, View};
use std::any::TypeId;

trait ErasedOperation<T> {
    fn shape(&self) -> Result<Shape>;
    fn view(&self) -> View;
    fn generate(&self, g: &mut Generator, at: &Index) -> String;
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual>;
    fn bind<'a>(&'a self, b: &mut Binder<'a>);
    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()>;
    fn record_leaves(&self, reads: ProductReads) -> Result<()>;
    fn contains_reduction(&self) -> bool;
}

impl<O: Differentiable> ErasedOperation<O::Scalar> for O {
    fn shape(&self) -> Result<Shape> {
        Operation::shape(self)
    }
    fn view(&self) -> View {
        Operation::view(self)
    }
    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        Operation::generate(self, g, at)
    }
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        Differentiable::generate_tangents(self, g, at)
    }
    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        Operation::bind(self, b)
    }
    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        Operation::evaluate_leaves(self, held)
    }
    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        Differentiable::record_leaves(self, reads)
    }
    fn contains_reduction(&self) -> bool {
        Operation::contains_reduction(self)
    }
}

fn type_code<K: 'static>() -> u32 {
    clfuse_core::type_code(TypeId::of::<K>())
}

/// A boxed operation with element type `T` and dependence `D` (whether a
/// variable is inside; see [`crate::rev`]).
pub struct DynOp<'a, T: ClType, D: Dependence = Constant> {
    inner: Box<dyn ErasedOperation<T> + 'a>,
    code: u32,
    _dependence: std::marker::PhantomData<D>,
}

impl<T: ClType, D: Dependence> std::fmt::Debug for DynOp<'_, T, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynOp")
            .field("type", &T::CL_NAME)
            .field("code", &self.code)
            .finish()
    }
}

/// Erases the type of an expression.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(1, 2, &[1.0f64, 2.0])?;
/// let mut e = boxed(&a + 0.0);
/// for _ in 0..3 {
///     e = boxed(e * 2.0); // the structure is decided at run time
/// }
/// assert_eq!(e.eval()?.to_vec()?, vec![8.0, 16.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn boxed<'a, E>(
    expr: E,
) -> Expr<DynOp<'a, <E::Operand as Operation>::Scalar, <E::Operand as Depends>::Dependence>>
where
    E: IntoOperand,
    E::Operand: Differentiable + 'a,
{
    let op = expr.into_operand();
    Expr(DynOp {
        code: type_code::<<E::Operand as Operation>::Key>(),
        inner: Box::new(op),
        _dependence: std::marker::PhantomData,
    })
}

impl<'a, T: ClType, D: Dependence> DynOp<'a, T, D> {
    /// The same operation under another dependence marker (for a holder
    /// that tracks the dependence of several operations itself).
    pub(crate) fn retag<E: Dependence>(self) -> DynOp<'a, T, E> {
        DynOp {
            inner: self.inner,
            code: self.code,
            _dependence: std::marker::PhantomData,
        }
    }
}

impl<T: ClType, D: Dependence> Depends for DynOp<'_, T, D> {
    type Dependence = D;
}

impl<T: ClType, D: Dependence> Operation for DynOp<'_, T, D> {
    type Scalar = T;
    type Key = DynOp<'static, T, D>;

    fn shape(&self) -> Result<Shape> {
        self.inner.shape()
    }

    fn view(&self) -> View {
        self.inner.view()
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        self.inner.generate(g, at)
    }

    fn bind<'b>(&'b self, b: &mut Binder<'b>) {
        b.structure(self.code);
        self.inner.bind(b);
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.inner.evaluate_leaves(held)
    }

    fn contains_reduction(&self) -> bool {
        self.inner.contains_reduction()
    }
}

impl<T: ClType, D: Dependence> Differentiable for DynOp<'_, T, D> {
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        self.inner.generate_tangents(g, at)
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        self.inner.record_leaves(reads)
    }
}
