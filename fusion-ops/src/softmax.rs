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
use crate::operation::HeldProduct;
use crate::operation::{Operation, Shape};
use crate::outputs::RowSoftmaxAssignment;
use crate::precomputed::Materialized;
use crate::templates::RealOf;
use clfuse_core::expr::Load;
use clfuse_core::{ClFloat, Error, Expr, IntoOperand, MatrixCl, Result, View};

/// The node [`rowwise_softmax()`] builds: the operand twice (the one-kernel
/// form reads one; the composed form of variables needs both) and the result.
#[derive(Debug, Clone)]
pub struct RowwiseSoftmax<E> {
    pub(crate) x: E,
    pub(crate) again: E,
    pub(crate) value: Materialized,
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
        match self.value.get() {
            Some(value) => value.generate(g, at),
            // `evaluate_leaves` always runs first; an empty string would
            // fail to compile rather than read garbage.
            None => String::new(),
        }
    }

    fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        if let Some(value) = self.value.get() {
            value.bind(b);
        }
    }

    fn evaluate_leaves(&self, _held: HeldProduct) -> Result<()> {
        if self.value.get().is_some() {
            return Ok(());
        }
        let (rows, cols) = self.shape()?.unwrap_or((0, 0));
        let out = MatrixCl::<T>::uninitialized(rows, cols)?;
        run_direct(&RowSoftmaxAssignment::new(&out, &self.x))?;
        self.value.set_matrix(out);
        Ok(())
    }

    fn take_evaluated(&mut self) -> Option<MatrixCl<T>> {
        self.value.take_matrix()
    }
}
