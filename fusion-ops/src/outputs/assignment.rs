//! The plain output: an expression stored into a target, and the traits that
//! turn expressions and targets into outputs.

use super::{OutputList, Schedule, common_grid};
use crate::binder::Binder;
use crate::driver::{run, run_direct};
use crate::generator::{Generator, Index};
use crate::launch_shape::LaunchShape;
use crate::operation::HeldProduct;
use crate::operation::Operation;
use crate::reductions::{ColwiseReduction, ReduceOp};
use crate::structural::{Block, Diagonal, Indexing, Transpose};
use crate::targets::Target;
use crate::templates::convert;
use clfuse_core::expr::{Load, MatrixRef};
use clfuse_core::{ClType, Error, Expr, IntoOperand, MatrixCl, Result};
use std::any::Any;

use super::ColwiseAssignment;

/// One target and the expression assigned to it.
#[derive(Debug)]
pub struct Assignment<Tg, E> {
    target: Tg,
    expr: E,
}

impl<Tg: Target, E: Operation> Assignment<Tg, E> {
    /// Pairs a target with an expression.
    pub fn new(target: Tg, expr: E) -> Self {
        Assignment { target, expr }
    }
}

impl<Tg: Target, E: Operation> OutputList for Assignment<Tg, E> {
    type Key = (Tg::Key, E::Key);

    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
        let target = self.target.shape()?;
        if let Some(shape) = self.expr.shape()?
            && shape != target
        {
            return Err(Error::DimensionMismatch {
                operation: "assign".into(),
                lhs: target,
                rhs: shape,
            });
        }
        common_grid(grid, target)
    }

    fn schedule(&self) -> Schedule {
        Schedule::ELEMENTWISE
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.expr.evaluate_leaves(held)
    }

    fn prepare(&self, _launch: &LaunchShape) -> Result<()> {
        self.target.prepare(self.expr.view())
    }

    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        self.expr.bind(b);
    }

    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        self.target.bind(b);
    }

    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
        let value = self.expr.generate(g, &Index::work_item());
        values.push(convert::<E::Scalar, Tg::Scalar>(&value));
    }

    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
        let value = values.next().cloned().unwrap_or_default();
        self.target.store(g, &Index::work_item(), &value);
    }

    fn finish(&self, _launch: &LaunchShape) -> Result<()> {
        self.target.finish(self.expr.view());
        Ok(())
    }

    fn target_ids(&self, ids: &mut Vec<u64>) {
        ids.push(self.target.matrix().buffer_id());
    }

    fn epilogue_product(&self) -> Option<&dyn crate::EpilogueProduct> {
        self.expr.epilogue_product()
    }

    fn eval_to_temporaries(&self, temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
        let (rows, cols) = self.target.shape()?;
        let temp = MatrixCl::<E::Scalar>::uninitialized(rows, cols)?;
        run_direct(&Assignment::new(&temp, &self.expr))?;
        temps.push(Box::new(temp));
        Ok(())
    }

    fn copy_from_temporaries(&self, temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
        let temp = temps
            .next()
            .and_then(|t| t.downcast::<MatrixCl<E::Scalar>>().ok())
            .ok_or_else(|| Error::InvalidArgument {
                function: "assign",
                argument: "temporaries",
                reason: "internal: temporary missing or of the wrong type".into(),
            })?;
        run(&Assignment::new(
            self.target,
            Load(MatrixRef::Borrowed(&*temp)),
        ))
    }
}

/// Turns an expression into the output that writes it to a target: element-wise
/// expressions are stored, column-wise reductions are reduced.
pub trait Assignable<Tg> {
    /// The output.
    type Output: OutputList;
    /// Pairs with the target.
    fn into_output(self, target: Tg) -> Self::Output;
}

impl<Tg: Target, O: Operation> Assignable<Tg> for O {
    type Output = Assignment<Tg, O>;
    fn into_output(self, target: Tg) -> Assignment<Tg, O> {
        Assignment::new(target, self)
    }
}

impl<'t, T: ClType, R: ReduceOp, E: Operation> Assignable<&'t MatrixCl<T>>
    for ColwiseReduction<R, E>
{
    type Output = ColwiseAssignment<'t, T, R, E>;
    fn into_output(self, target: &'t MatrixCl<T>) -> Self::Output {
        ColwiseAssignment::new(target, self.0)
    }
}

/// Things that can be written to: matrices and blocks, transposes, diagonals
/// and scatters (`indexing`) of matrices.
pub trait AsTarget<'t> {
    /// The target.
    type Target: Target + 't;
    /// Converts.
    fn as_target(&'t self) -> Self::Target;
}

impl<'t, T: ClType> AsTarget<'t> for MatrixCl<T> {
    type Target = &'t MatrixCl<T>;
    fn as_target(&'t self) -> &'t MatrixCl<T> {
        self
    }
}

macro_rules! structural_target {
    ($([$($g:tt)*] $node:ty),*) => {$(
        impl<'t, $($g)*> AsTarget<'t> for Expr<$node> where &'t $node: Target, $node: 't {
            type Target = &'t $node;
            fn as_target(&'t self) -> &'t $node {
                &self.0
            }
        }
    )*};
}

structural_target!(
    ['a, T: ClType] Block<Load<'a, T>>,
    ['a, T: ClType] Transpose<Load<'a, T>>,
    ['a, T: ClType] Diagonal<Load<'a, T>>,
    ['a, T: ClType, R: Operation<Scalar = i32>, C: Operation<Scalar = i32>] Indexing<Load<'a, T>, R, C>
);

/// An output pairing `target` with `expr`, for [`fuse`](crate::fuse).
///
/// ```
/// use clfuse_ops::prelude::*;
/// let x = MatrixCl::from_slice(3, 1, &[1.0f64, 2.0, 3.0])?;
/// let (d, total) = (MatrixCl::<f64>::zeros(3, 1)?, MatrixCl::<f64>::zeros(1, 1)?);
/// fuse((output(&d, exp(&x)), output(&total, colwise_sum(square(&x)))))?; // one kernel
/// assert_eq!(total.to_vec()?, vec![14.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn output<'t, Tg, E>(target: &'t Tg, expr: E) -> <E::Operand as Assignable<Tg::Target>>::Output
where
    Tg: AsTarget<'t> + ?Sized,
    E: IntoOperand,
    E::Operand: Assignable<Tg::Target>,
{
    expr.into_operand().into_output(target.as_target())
}
