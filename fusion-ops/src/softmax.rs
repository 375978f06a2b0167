//! The row-wise softmax, `exp(x - log_sum_exp(row))`: one kernel of one
//! work item per row (`outputs/row_softmax.rs`) that walks its row twice,
//! with the operand fused into both walks. It is a leaf of the expressions
//! that use it: evaluated into a temporary before their kernel, like a
//! product. Of variables it is recorded as the composed form, a row-wise
//! log-sum-exp step and one element-wise step, whose derivatives the tape
//! already knows.

use crate::binder::Binder;
use crate::driver::run_direct;
use crate::generator::{Generator, Index};
use crate::hoisted::Hoisted;
use crate::operation::{Operation, Shape};
use crate::outputs::RowSoftmaxAssignment;
use crate::reductions::{LogSumExpOp, RowwiseReduction};
use crate::rev::{Dependence, Depends, Dual, Materialized};
use crate::structural::ColwiseBroadcast;
use crate::templates::RealOf;
use clfuse_core::expr::{Load, MatrixRef, Sub};
use clfuse_core::{Access, ClFloat, Error, Expr, IntoOperand, MatrixCl, Result, View};
use std::marker::PhantomData;

/// The node [`rowwise_softmax()`] builds: the operand twice (the one-kernel
/// form reads one; the composed form of variables needs both) and the result.
#[derive(Debug, Clone)]
pub struct RowwiseSoftmax<E> {
    x: E,
    again: E,
    value: Materialized,
}

/// Each row's softmax, `exp(x - log_sum_exp(row))`, in one kernel: each
/// work item walks its row once for a running log-sum-exp and once more to
/// write, with `a` fused into both walks (so `a` is a reference: `&matrix`
/// or `&expr`). Used inside a larger expression, it is evaluated first into
/// a temporary, like a matrix product.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let m = MatrixCl::from_slice(1, 2, &[0.0f64, 2f64.ln()])?;
/// let p = rowwise_softmax(&m).eval()?.to_vec()?;
/// assert!((p[0] - 1.0 / 3.0).abs() < 1e-12 && (p[1] - 2.0 / 3.0).abs() < 1e-12);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn rowwise_softmax<A: IntoOperand + Clone>(a: A) -> Expr<RowwiseSoftmax<A::Operand>> {
    Expr(RowwiseSoftmax {
        x: a.clone().into_operand(),
        again: a.into_operand(),
        value: Materialized::default(),
    })
}

impl<E: Depends> Depends for RowwiseSoftmax<E> {
    type Dependence = E::Dependence;
}

impl<T: ClFloat + RealOf, E: Operation<Scalar = T>> Operation for RowwiseSoftmax<E> {
    type Scalar = T;
    // The kernels that use it only read its result.
    type Key = Load<'static, T>;

    fn shape(&self) -> Result<Shape> {
        match self.x.shape()? {
            Some(shape) => Ok(Some(shape)),
            None => Err(Error::InvalidArgument {
                function: "rowwise_softmax",
                argument: "a",
                reason: "needs a matrix operand, not a scalar".into(),
            }),
        }
    }

    fn view(&self) -> View {
        View::Entire
    }

    fn generate(&self, g: &mut Generator, at: &Index) -> String {
        if let Some(var) = self.value.get::<T>() {
            return crate::rev::var::generate_value(var, g, at);
        }
        match self.value.matrix::<T>() {
            Some(m) => Load(MatrixRef::Borrowed(m)).generate(g, at),
            // `evaluate_leaves` always runs first; an empty string would
            // fail to compile rather than read garbage.
            None => String::new(),
        }
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        if let Some(var) = self.value.get::<T>() {
            return crate::rev::var::bind_var(var, b);
        }
        if let Some(m) = self.value.matrix::<T>() {
            b.matrix(m, Access::Read, true);
        }
    }

    fn generate_tangents(&self, g: &mut Generator, at: &Index) -> Result<Dual> {
        match self.value.get::<T>() {
            Some(var) => Ok(crate::rev::var::generate_dual(var, g, at)),
            None => Ok(Dual::constant(self.generate(g, at))),
        }
    }

    fn evaluate_leaves(&self) -> Result<()> {
        if self.value.get::<T>().is_some() || self.value.matrix::<T>().is_some() {
            return Ok(());
        }
        let (rows, cols) = self.shape()?.unwrap_or((0, 0));
        if E::Dependence::VARIABLE {
            let lse = RowwiseReduction(
                &self.again,
                PhantomData::<LogSumExpOp>,
                Materialized::default(),
            );
            let composed = crate::functions::Exp(Sub(
                &self.x,
                ColwiseBroadcast {
                    inner: Hoisted::new(lse),
                    cols,
                },
            ));
            composed.evaluate_leaves()?;
            let var =
                crate::rev::forward::record(&composed, crate::rev::forward::Root::Elementwise)?;
            self.value.set(var);
        } else {
            let out = MatrixCl::<T>::uninitialized(rows, cols)?;
            run_direct(&RowSoftmaxAssignment::new(&out, &self.x))?;
            self.value.set_matrix(out);
        }
        Ok(())
    }

    fn take_evaluated(&mut self) -> Option<MatrixCl<T>> {
        self.value.take_matrix()
    }
}
