//! Leaves computed ahead of the fused kernel: a GEMM's result, a reduction
//! evaluated once into a temporary, a row-wise softmax. The kernel reads
//! them like matrices; what exactly was stored (a matrix here, a recorded
//! variable for reverse mode) is the storer's business.

use crate::binder::Binder;
use crate::generator::{Generator, Index};
use crate::operation::Operation;
use clfuse_core::expr::{Load, MatrixRef};
use clfuse_core::{Access, ClType, MatrixCl};
use std::any::Any;
use std::cell::OnceCell;

/// A value computed before the kernel that reads it, read at any element.
pub trait Precomputed: Any {
    /// Emits the read of the element at `at` and returns its expression.
    fn generate(&self, g: &mut Generator, at: &Index) -> String;
    /// Binds what [`generate`](Self::generate) reads.
    fn bind<'a>(&'a self, b: &mut Binder<'a>);
    /// Itself, for a storer that wants its own type back.
    fn as_any(&self) -> &dyn Any;
    /// Itself, owned, for a storer that wants its own type back.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: ClType> Precomputed for MatrixCl<T> {
    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        Load(MatrixRef::Borrowed(self)).generate(g, at)
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        b.matrix(self, Access::Read, true);
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// The slot of a node evaluated ahead of its kernel (set by
/// `evaluate_leaves`, or by reverse mode when it records the node as a step
/// of its own), and, for a product read inline, the operand read in its
/// place. The first value set wins: a node is evaluated once.
#[derive(Default)]
pub struct Materialized {
    value: OnceCell<Box<dyn Precomputed>>,
    inline_operand: OnceCell<Box<dyn Precomputed>>,
}

impl Materialized {
    /// The stored value, if the node was evaluated.
    pub fn get(&self) -> Option<&dyn Precomputed> {
        self.value.get().map(|v| &**v)
    }

    /// Stores `value`.
    pub fn set(&self, value: Box<dyn Precomputed>) {
        let _ = self.value.set(value);
    }

    /// The stored value as a matrix, if it is one.
    pub fn matrix<T: ClType>(&self) -> Option<&MatrixCl<T>> {
        self.get()?.as_any().downcast_ref()
    }

    /// Stores a matrix.
    pub fn set_matrix<T: ClType>(&self, matrix: MatrixCl<T>) {
        self.set(Box::new(matrix));
    }

    /// Takes the stored matrix out (for `eval`, which then returns it
    /// instead of copying it); anything else stays.
    pub fn take_matrix<T: ClType>(&mut self) -> Option<MatrixCl<T>> {
        self.matrix::<T>()?;
        let value = self.value.take()?;
        value.into_any().downcast().ok().map(|m| *m)
    }

    /// The operand a product reads in place of its vector (see
    /// `MatrixVectorMultiply`), unless the node itself was evaluated since.
    pub fn inline_operand(&self) -> Option<&dyn Precomputed> {
        if self.value.get().is_some() {
            return None;
        }
        self.inline_operand.get().map(|v| &**v)
    }

    /// Stores the operand read in place of a product's vector.
    pub fn set_inline_operand(&self, operand: Box<dyn Precomputed>) {
        let _ = self.inline_operand.set(operand);
    }
}

impl Clone for Materialized {
    /// A copy of an expression is evaluated afresh.
    fn clone(&self) -> Self {
        Materialized::default()
    }
}

impl std::fmt::Debug for Materialized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.value.get().is_some() {
            "Materialized(set)"
        } else {
            "Materialized(empty)"
        })
    }
}

/// A precomputed value of element type `T` read where an operand is expected
/// (a product's vector read inline, see `MatrixVectorMultiply`).
pub(crate) struct PrecomputedOperand<'a, T> {
    value: &'a dyn Precomputed,
    element: std::marker::PhantomData<T>,
}

impl<'a, T> PrecomputedOperand<'a, T> {
    pub(crate) fn new(value: &'a dyn Precomputed) -> Self {
        PrecomputedOperand {
            value,
            element: std::marker::PhantomData,
        }
    }
}

impl<T: ClType> Operation for PrecomputedOperand<'_, T> {
    type Scalar = T;
    type Key = Load<'static, T>;

    fn shape(&self) -> clfuse_core::Result<crate::operation::Shape> {
        Ok(None)
    }

    fn view(&self) -> clfuse_core::View {
        clfuse_core::View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        self.value.generate(g, at)
    }

    fn bind<'b>(&'b self, b: &mut Binder<'b>) {
        self.value.bind(b)
    }
}
