//! Nodes the engine evaluates ahead of their kernel (products, row-wise
//! reductions, softmax, hoisted operands). Of variables each is recorded as
//! a step of its own, and the kernels that read it read that variable; of
//! constants they are evaluated as usual.

use crate::generator::{Generator, Index};
use crate::hoisted::Hoisted;
use crate::operation::HeldProduct;
use crate::operation::Operation;
use crate::precomputed::Materialized;
use crate::product::{store_product, stored_product};
use crate::reductions::{LogSumExpOp, MatrixVectorMultiply, RowReduce, RowwiseReduction};
use crate::rev::forward::{Root, record};
use crate::rev::inline::{ProductReads, allowed};
use crate::rev::var_load::VarLoad;
use crate::rev::var_load::{generate_dual, product_dual};
use crate::rev::{Both, Dependence, Depends, Differentiable, Dual, Var};
use crate::softmax::RowwiseSoftmax;
use crate::structural::ColwiseBroadcast;
use crate::templates::RealOf;
use clfuse_core::expr::{MatrixProduct, Sub};
use clfuse_core::{ClFloat, ClType, Error, Promote, Result};
use std::any::TypeId;
use std::marker::PhantomData;

/// The variable a node was recorded into, if it was.
fn recorded<T: ClType>(slot: &Materialized) -> Option<&Var<T>> {
    slot.get()?.as_any().downcast_ref()
}

/// The tangents of a node evaluated ahead: those of the variable it was
/// recorded into, or none for a constant one.
fn evaluated_tangents<O: Differentiable>(
    node: &O,
    var: Option<&Var<O::Scalar>>,
    g: &mut Generator,
    at: &Index,
) -> Result<Dual> {
    match var {
        Some(var) => Ok(generate_dual(var, g, at)),
        None if O::Dependence::VARIABLE => Err(crate::rev::not_differentiable::<O>()),
        None => Ok(Dual::constant(node.generate(g, at))),
    }
}

impl<E: Depends> Depends for Hoisted<E> {
    type Dependence = E::Dependence;
}

impl<E: Differentiable> Differentiable for Hoisted<E> {
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        match self.value.get() {
            Some(_) => evaluated_tangents(self, self.variable(), g, at),
            None => self.inner.generate_tangents(g, at),
        }
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        if !E::Dependence::VARIABLE {
            return self.evaluate_leaves(HeldProduct::NONE);
        }
        self.inner.record_leaves(reads)?;
        if self.inner.contains_reduction() && self.value.get().is_none() {
            self.value
                .set(Box::new(record(&self.inner, Root::Elementwise)?));
        }
        Ok(())
    }

    /// The variable this node was recorded into as a step of its own.
    fn variable(&self) -> Option<&Var<E::Scalar>> {
        recorded(&self.value)
    }
}

impl<L: Depends, R: Depends> Depends for MatrixProduct<L, R> {
    type Dependence = Both<L::Dependence, R::Dependence>;
}

impl<T, L, R> Differentiable for MatrixProduct<L, R>
where
    T: ClFloat,
    L: Differentiable + Operation<Scalar = T>,
    R: Differentiable + Operation<Scalar = T>,
{
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        evaluated_tangents(self, self.variable(), g, at)
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        if !Self::Dependence::VARIABLE {
            return self.evaluate_leaves(HeldProduct::NONE);
        }
        if self.result.get().is_some() {
            return Ok(());
        }
        self.shape()?;
        // A product of variables is its own step; the kernel reads its result.
        self.lhs.record_leaves(reads)?;
        self.rhs.record_leaves(reads)?;
        let var = crate::rev::product_steps::multiply(&self.lhs, &self.rhs)?;
        store_product(self, Box::new(var));
        Ok(())
    }

    /// The variable a product of variables was recorded into.
    fn variable(&self) -> Option<&Var<T>> {
        stored_product(self)?.as_any().downcast_ref()
    }
}

impl<R: RowReduce, E: Depends> Depends for RowwiseReduction<R, E> {
    type Dependence = E::Dependence;
}

impl<R: RowReduce, E: Differentiable> Differentiable for RowwiseReduction<R, E> {
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        evaluated_tangents(self, self.variable(), g, at)
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        if !E::Dependence::VARIABLE {
            return self.evaluate_leaves(HeldProduct::NONE);
        }
        self.0.record_leaves(reads)?;
        if self.2.get().is_none() {
            self.2.set(Box::new(crate::rev::row_steps::reduce_rows(
                R::NAME,
                &self.0,
            )?));
        }
        Ok(())
    }

    /// The variable this node was recorded into as a step of its own.
    fn variable(&self) -> Option<&Var<Self::Scalar>> {
        recorded(&self.2)
    }
}

impl<X: Depends, V: Depends> Depends for MatrixVectorMultiply<X, V> {
    type Dependence = Both<X::Dependence, V::Dependence>;
}

impl<X: Differentiable, V: Differentiable> Differentiable for MatrixVectorMultiply<X, V>
where
    X::Scalar: Promote<V::Scalar>,
{
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        if let Some(var) = self.variable() {
            return Ok(generate_dual(var, g, at));
        }
        let inline = self.2.inline_operand().zip(self.0.matrix());
        if let Some((v, x)) = inline
            && let Some(var) = v.as_any().downcast_ref::<Var<X::Scalar>>()
        {
            let value = self.generate(g, at);
            return Ok(product_dual(var, x.buffer_id(), value, g, at));
        }
        evaluated_tangents(self, None, g, at)
    }

    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        if !Self::Dependence::VARIABLE {
            return self.evaluate_leaves(HeldProduct::NONE);
        }
        self.0.record_leaves(reads)?;
        self.1.record_leaves(reads)?;
        if self.2.get().is_some() {
            return Ok(());
        }
        if TypeId::of::<X::Scalar>() != TypeId::of::<Self::Scalar>() {
            return Err(Error::InvalidArgument {
                function: "matrix_vector_multiply",
                argument: "x",
                reason: "a product of variables needs x of the result's element type".into(),
            });
        }
        // Prepared for reading inline by an earlier pass: its vector is a
        // variable already, which the product's own step reads as it is.
        let prepared = self
            .2
            .inline_operand()
            .and_then(|v| v.as_any().downcast_ref::<Var<X::Scalar>>());
        if reads == ProductReads::Inline && allowed(&self.0)? {
            if prepared.is_none() {
                let v = crate::logic::Cast::<X::Scalar, &V>(&self.1, PhantomData);
                let var = crate::rev::leaf::variable_operand(&v, "matrix_vector_multiply")?;
                self.2.set_inline_operand(Box::new(var));
            }
            return Ok(());
        }
        let var = match prepared {
            Some(v) => crate::rev::product_steps::matrix_vector_multiply(&self.0, &VarLoad(v))?,
            None => {
                let v = crate::logic::Cast::<X::Scalar, &V>(&self.1, PhantomData);
                crate::rev::product_steps::matrix_vector_multiply(&self.0, &v)?
            }
        };
        self.2.set(Box::new(var));
        Ok(())
    }

    /// The variable this node was recorded into as a step of its own.
    fn variable(&self) -> Option<&Var<Self::Scalar>> {
        recorded(&self.2)
    }
}

impl<E: Depends> Depends for RowwiseSoftmax<E> {
    type Dependence = E::Dependence;
}

impl<T: ClFloat + RealOf, E: Differentiable + Operation<Scalar = T>> Differentiable
    for RowwiseSoftmax<E>
{
    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        evaluated_tangents(self, self.variable(), g, at)
    }

    /// Of variables, the composed form `exp(x - log_sum_exp(row))`: a
    /// row-wise log-sum-exp step and one element-wise step, whose
    /// derivatives the tape already knows.
    fn record_leaves(&self, reads: ProductReads) -> Result<()> {
        if !E::Dependence::VARIABLE {
            return self.evaluate_leaves(HeldProduct::NONE);
        }
        if self.value.get().is_some() {
            return Ok(());
        }
        let (_, cols) = self.shape()?.unwrap_or((0, 0));
        let lse = RowwiseReduction(
            &self.again,
            PhantomData::<LogSumExpOp>,
            Materialized::default(),
        );
        let composed = crate::functions::Exp(Sub(&self.x, ColwiseBroadcast::new(lse, cols)));
        composed.record_leaves(reads)?;
        self.value
            .set(Box::new(record(&composed, Root::Elementwise)?));
        Ok(())
    }

    /// The variable this node was recorded into.
    fn variable(&self) -> Option<&Var<T>> {
        recorded(&self.value)
    }
}
