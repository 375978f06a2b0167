//! The trait through which operations attach their derivatives.
//!
//! The expression engine knows nothing of reverse mode: an [`Operation`]
//! says what it computes and how it is spelled. An operation that an
//! expression of variables may use also implements [`Differentiable`]
//! (the `elementwise!` macro emits both impls from one declaration; the
//! engine's hand-written nodes get theirs in `rev/derivatives/`).

use crate::generator::{Generator, Index};
use crate::operation::HeldProduct;
use crate::operation::Operation;
use crate::rev::{Dependence, Depends, Dual, ProductReads, Var};
use clfuse_core::Result;

/// An operation with a derivative, usable in a recorded step.
pub trait Differentiable: Operation + Depends {
    /// Like [`Operation::generate`], and also the derivatives of the value
    /// with respect to the variable elements it depends on (the chain rule
    /// applied to the operands' [`Dual`]s with this node's local
    /// derivatives). A recorded step's forward kernel uses it. Constants
    /// keep the default; an operation that can depend on a variable and has
    /// no derivative keeps it too, and recording it is an error naming it.
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        if Self::Dependence::VARIABLE {
            return Err(crate::rev::not_differentiable::<Self>());
        }
        Ok(Dual::constant(self.generate(g, at)))
    }

    /// What [`Operation::evaluate_leaves`] is for a step being recorded: the
    /// non-fusable nodes below that depend on a variable (products,
    /// row-wise reductions, softmax) become steps of their own, the
    /// constant ones are evaluated as usual; `reads` says whether the step
    /// reads the products `x · v` inside it inline (see `rev::inline`).
    /// Leaves and constants keep the default; every node with operands
    /// forwards to them.
    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        let _ = reads;
        self.evaluate_leaves(HeldProduct::NONE)
    }

    /// The variable this operation reads unchanged, if it is one (a `&var`
    /// leaf, or a node recorded as a step of its own): nested steps then
    /// use it instead of recording a copy.
    fn variable(&self) -> Option<&Var<Self::Scalar>> {
        None
    }
}

impl<O: Depends + ?Sized> Depends for &O {
    type Dependence = O::Dependence;
}

impl<O: Differentiable + ?Sized> Differentiable for &O {
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        (**self).generate_tangents(g, at)
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        (**self).record_leaves(reads)
    }

    fn variable(&self) -> Option<&Var<Self::Scalar>> {
        (**self).variable()
    }
}
