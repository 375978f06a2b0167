//! The nested-reduction rule: a broadcast repeats its operand's value to
//! many elements, so an operand that computes a reduction (a loop over a
//! row) would be recomputed for every one of them — `exp(x -
//! colwise_broadcast(rowwise_log_sum_exp(x)))` would walk each row once per
//! element, quadratic in the row length. Each broadcast therefore wraps its
//! operand in [`Hoisted`]: when the operand contains a reduction
//! ([`Operation::contains_reduction`]), `evaluate_leaves` evaluates it once
//! into a temporary by its own kernel (a recorded step when it depends on
//! a variable), and the broadcasting kernel reads the temporary. Anything
//! else is fused as usual. `source_of` shows the split: the outer kernel
//! loads a buffer where the reduction's loop would have been.

use crate::binder::Binder;
use crate::generator::{Generator, Index};
use crate::operation::{Operation, Shape};
use crate::rev::{Dependence, Depends, Dual, Materialized};
use clfuse_core::expr::{Load, MatrixRef};
use clfuse_core::{Access, Result, View};

/// An operand evaluated once into a temporary when it contains a
/// reduction; see the module docs.
#[derive(Debug, Clone)]
pub struct Hoisted<E> {
    /// The operand.
    pub inner: E,
    /// Its value, once evaluated.
    pub value: Materialized,
}

impl<E> Hoisted<E> {
    /// Wraps `inner` (nothing is evaluated until a kernel is launched).
    pub fn new(inner: E) -> Self {
        Hoisted {
            inner,
            value: Materialized::default(),
        }
    }
}

impl<E: Depends> Depends for Hoisted<E> {
    type Dependence = E::Dependence;
}

impl<E: Operation> Operation for Hoisted<E> {
    type Scalar = E::Scalar;
    type Key = Hoisted<E::Key>;

    fn shape(&self) -> Result<Shape> {
        self.inner.shape()
    }

    fn view(&self) -> View {
        self.inner.view()
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        if let Some(var) = self.value.get::<E::Scalar>() {
            return crate::rev::var::generate_value(var, g, at);
        }
        if let Some(m) = self.value.matrix::<E::Scalar>() {
            return Load(MatrixRef::Borrowed(m)).generate(g, at);
        }
        self.inner.generate(g, at)
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        if let Some(var) = self.value.get::<E::Scalar>() {
            return crate::rev::var::bind_var(var, b);
        }
        if let Some(m) = self.value.matrix::<E::Scalar>() {
            return b.matrix(m, Access::Read, true);
        }
        self.inner.bind(b)
    }

    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        if let Some(var) = self.value.get::<E::Scalar>() {
            return Ok(crate::rev::var::generate_dual(var, g, at));
        }
        if self.value.matrix::<E::Scalar>().is_some() {
            return Ok(Dual::constant(self.generate(g, at)));
        }
        self.inner.generate_tangents(g, at)
    }

    fn evaluate_leaves(&self) -> Result<()> {
        self.inner.evaluate_leaves()?;
        if !self.inner.contains_reduction()
            || self.value.get::<E::Scalar>().is_some()
            || self.value.matrix::<E::Scalar>().is_some()
        {
            return Ok(());
        }
        if E::Dependence::VARIABLE {
            let var =
                crate::rev::forward::record(&self.inner, crate::rev::forward::Root::Elementwise)?;
            self.value.set(var);
        } else {
            self.value
                .set_matrix(crate::driver::eval_direct(&self.inner)?);
        }
        Ok(())
    }

    /// Evaluated apart, the operand's reduction is not recomputed here.
    fn contains_reduction(&self) -> bool {
        false
    }

    /// The variable this node was recorded into as a step of its own.
    fn variable(&self) -> Option<&crate::rev::Var<Self::Scalar>> {
        self.value.get()
    }
}
