//! The nested-reduction rule: a broadcast repeats its operand's value to
//! many elements, so an operand that computes a reduction (a loop over a
//! row) would be recomputed for every one of them — `exp(x -
//! colwise_broadcast(rowwise_log_sum_exp(x)))` would walk each row once per
//! element, quadratic in the row length. Each broadcast therefore wraps its
//! operand in [`Hoisted`]: when the operand contains a reduction
//! ([`Operation::contains_reduction`]), `evaluate_leaves` evaluates it once
//! into a temporary by its own kernel (reverse mode records it as a step
//! of its own instead), and the broadcasting kernel reads the temporary. Anything
//! else is fused as usual. `source_of` shows the split: the outer kernel
//! loads a buffer where the reduction's loop would have been.

use crate::binder::Binder;
use crate::generator::{Generator, Index};
use crate::operation::HeldProduct;
use crate::operation::{Operation, Shape};
use crate::precomputed::Materialized;
use clfuse_core::{Result, View};

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
        match self.value.get() {
            Some(value) => value.generate(g, at),
            None => self.inner.generate(g, at),
        }
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        match self.value.get() {
            Some(value) => value.bind(b),
            None => self.inner.bind(b),
        }
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.inner.evaluate_leaves(held)?;
        if self.inner.contains_reduction() && self.value.get().is_none() {
            self.value
                .set_matrix(crate::driver::eval_direct(&self.inner)?);
        }
        Ok(())
    }

    /// Evaluated apart, the operand's reduction is not recomputed here.
    fn contains_reduction(&self) -> bool {
        false
    }
}
