//! Full reductions (`sum`, `prod`, `max`, `min`): one value from every
//! element, alone or as an output of a larger kernel; the groups' partial
//! results are combined on the host.

use super::{OutputList, Schedule, common_grid, generate_group_reduction};
use crate::binder::Binder;
use crate::driver::{run, run_direct};
use crate::generator::{Generator, Index};
use crate::launch_shape::LaunchShape;
use crate::operation::HeldProduct;
use crate::operation::Operation;
use crate::read_back::ReadBack;
use crate::reductions::ReduceOp;
use clfuse_core::ReadBatch;
use clfuse_core::{Access, ClType, Error, IntoOperand, MatrixCl, Result};
use std::any::Any;
use std::sync::{Mutex, OnceLock};

/// A full reduction of an expression to one value, usable alone ([`sum`] and
/// friends) or as an output of a larger kernel.
#[derive(Debug)]
pub struct FullReduction<R, E: Operation> {
    inner: ColwiseAssignmentOwned<R, E>,
    value: Mutex<Option<f64>>,
    /// The partial sums on their way to the host.
    partial_read: ReadBack<E::Scalar>,
}

#[derive(Debug)]
struct ColwiseAssignmentOwned<R, E: Operation> {
    expr: E,
    partial: OnceLock<MatrixCl<E::Scalar>>,
    local_bytes: OnceLock<usize>,
    _op: std::marker::PhantomData<R>,
}

impl<R: ReduceOp, E: Operation> FullReduction<R, E> {
    /// The reduced value after the kernel ran.
    pub fn value(&self) -> Option<E::Scalar> {
        self.value
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .map(E::Scalar::from_f64)
    }
}

impl<R: ReduceOp, E: Operation> OutputList for FullReduction<R, E> {
    type Key = (
        FullReduction<R, clfuse_core::expr::Scalar<E::Scalar>>,
        E::Key,
    );

    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
        let shape = self.inner.expr.shape()?.unwrap_or((1, 1));
        common_grid(grid, shape)
    }
    fn schedule(&self) -> Schedule {
        Schedule {
            reduces: true,
            ..Schedule::ELEMENTWISE
        }
    }
    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.inner.expr.evaluate_leaves(held)
    }
    fn prepare(&self, launch: &LaunchShape) -> Result<()> {
        let _ = self.inner.partial.set(MatrixCl::uninitialized(
            launch.row_groups().max(1),
            launch.cols.max(1),
        )?);
        let _ = self
            .inner
            .local_bytes
            .set(launch.local[0] * std::mem::size_of::<E::Scalar>());
        Ok(())
    }
    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        self.inner.expr.bind(b);
    }
    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        if let Some(p) = self.inner.partial.get() {
            b.matrix(p, Access::Write, false);
        }
        b.local(self.inner.local_bytes.get().copied().unwrap_or(0));
    }
    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
        values.push(self.inner.expr.generate(g, &Index::work_item()));
    }
    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
        let value = values.next().cloned().unwrap_or_default();
        let partial = self
            .inner
            .partial
            .get()
            .map_or(u64::MAX, MatrixCl::buffer_id);
        generate_group_reduction::<R>(
            g,
            E::Scalar::CL_NAME,
            &value,
            crate::binder::Identity::Buffer(partial),
        );
    }
    fn finish(&self, _launch: &LaunchShape) -> Result<()> {
        Ok(())
    }
    fn start_reads(&self, launch: &LaunchShape, reads: &ReadBatch) -> Result<()> {
        if launch.rows > 0
            && launch.cols > 0
            && let Some(p) = self.inner.partial.get()
        {
            self.partial_read.start(p, reads)?;
        }
        Ok(())
    }
    fn verify(&self, launch: &LaunchShape) -> Result<()> {
        // Read back with the checks' flags, once every output's follow-up
        // work is queued.
        let mut total = R::host_init::<E::Scalar>().to_f64();
        let partials = match self.inner.partial.get() {
            Some(p) if launch.rows > 0 && launch.cols > 0 => self.partial_read.finish(p)?,
            _ => Vec::new(),
        };
        // The tiny final step, on the host: one value per work-group and column.
        for v in partials {
            total = R::host_combine(total, v.to_f64());
        }
        *self.value.lock().unwrap_or_else(|p| p.into_inner()) = Some(total);
        Ok(())
    }
    fn target_ids(&self, _ids: &mut Vec<u64>) {}
    fn eval_to_temporaries(&self, _temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
        run_direct(self)
    }
    fn copy_from_temporaries(&self, _temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
        Ok(())
    }
}

/// A full-reduction output of `expr`; read it with [`FullReduction::value`] after [`fuse`](crate::fuse).
pub fn full_reduction<R: ReduceOp, A: IntoOperand>(expr: A) -> FullReduction<R, A::Operand>
where
    A::Operand: Operation,
{
    FullReduction {
        inner: ColwiseAssignmentOwned {
            expr: expr.into_operand(),
            partial: OnceLock::new(),
            local_bytes: OnceLock::new(),
            _op: std::marker::PhantomData,
        },
        value: Mutex::new(None),
        partial_read: ReadBack::default(),
    }
}

macro_rules! full {
    ($($fun:ident $op:ident $doc:literal;)*) => {$(
        #[doc = concat!("The ", $doc, " of every element of `expr`: one kernel (the expression is computed inside it) plus a tiny final step on the host.\n\n",
            "```\nuse clfuse_ops::prelude::*;\n",
            "let a = MatrixCl::from_slice(2, 2, &[1.0f64, -2.0, 3.0, 4.0])?;\n",
            "let v: f64 = ", stringify!($fun), "(square(&a))?;\n",
            "# let _ = v;\n",
            "# Ok::<(), clfuse_ops::Error>(())\n```")]
        pub fn $fun<A: IntoOperand>(expr: A) -> Result<<A::Operand as Operation>::Scalar>
        where
            A::Operand: Operation,
        {
            let r = full_reduction::<crate::reductions::$op, A>(expr);
            run(&r)?;
            r.value().ok_or_else(|| Error::InvalidArgument { function: stringify!($fun), argument: "expr", reason: "internal: no value".into() })
        }
    )*};
}

full! {
    sum SumOp "sum";
    prod ProdOp "product";
    max MaxOp "maximum";
    min MinOp "minimum";
}
