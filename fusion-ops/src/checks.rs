//! In-kernel checks: a predicate validated on every element by the same
//! kernel as the other outputs; a failure becomes an `Err` naming the
//! function, the argument, the first failing (row, col) and its value.

use crate::binder::Binder;
use crate::driver::{eval_direct, run, run_direct};
use crate::failure_flags::FailureFlags;
use crate::functions::fabs;
use crate::generator::{Generator, Index};
use crate::launch_shape::LaunchShape;
use crate::logic::{eq, le, lt, ne};
use crate::operation::HeldProduct;
use crate::operation::{Operation, combine_shapes};
use crate::outputs::{OutputList, Schedule};
use crate::structural::{Block, diagonal, transpose};
use clfuse_core::ReadBatch;
use clfuse_core::{ClType, Error, IntoOperand, MatrixCl, Result};
use std::any::Any;

/// A check output: the node built by [`check()`].
#[derive(Debug)]
pub struct Check<V, P> {
    value: V,
    predicate: P,
    function: &'static str,
    argument: &'static str,
    requirement: String,
    /// Its one flag: the first failing element.
    flag: FailureFlags,
}

/// Validates `predicate` (non-zero = valid) on every element; a failure
/// reports `value` at the first failing position in column-major order.
/// Run it alone with [`Check::run`] or as one output of [`fuse`](crate::fuse);
/// when it fails, outputs computed by the same kernel hold unspecified values.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let y = MatrixCl::from_slice(3, 1, &[0, 1, 2])?;
/// let err = check(&y, "bernoulli_logit_glm", "y", ge(&y, 0).and(le(&y, 1)))
///     .requiring("0 or 1")
///     .run()
///     .unwrap_err();
/// assert_eq!(err.to_string(), "bernoulli_logit_glm: y[2, 0] is 2, but must be 0 or 1");
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn check<V: IntoOperand, P: IntoOperand>(
    value: V,
    function: &'static str,
    argument: &'static str,
    predicate: P,
) -> Check<V::Operand, P::Operand> {
    Check {
        value: value.into_operand(),
        predicate: predicate.into_operand(),
        function,
        argument,
        requirement: "valid".into(),
        flag: FailureFlags::default(),
    }
}

impl<V, P> Check<V, P> {
    /// Sets the text after "must be" in the error message.
    pub fn requiring(mut self, requirement: &str) -> Self {
        self.requirement = requirement.to_string();
        self
    }
}

impl<V: Operation, P: Operation> Check<V, P> {
    /// Runs the check alone.
    pub fn run(self) -> Result<()> {
        run(&self)
    }
}

impl<V: Operation, P: Operation> OutputList for Check<V, P> {
    type Key = (Check<V::Key, P::Key>,);

    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
        let shape = combine_shapes(self.function, self.value.shape()?, self.predicate.shape()?)?
            .unwrap_or((1, 1));
        match grid {
            Some(c) if *c != shape => Err(Error::DimensionMismatch {
                operation: format!(
                    "{}: check of `{}` must have the kernel's shape",
                    self.function, self.argument
                ),
                lhs: *c,
                rhs: shape,
            }),
            _ => {
                *grid = Some(shape);
                Ok(())
            }
        }
    }

    fn schedule(&self) -> Schedule {
        Schedule::ELEMENTWISE
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.value.evaluate_leaves(held)?;
        self.predicate.evaluate_leaves(held)
    }

    fn prepare(&self, _launch: &LaunchShape) -> Result<()> {
        self.flag.prepare(1)
    }

    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        self.predicate.bind(b);
    }

    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        self.flag.bind(b);
    }

    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
        values.push(self.predicate.generate(g, &Index::work_item()));
    }

    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
        let ok = values.next().cloned().unwrap_or_default();
        let base = self.flag.declare(g);
        FailureFlags::generate(g, &base, "0", &ok);
    }

    fn finish(&self, _launch: &LaunchShape) -> Result<()> {
        Ok(())
    }

    fn start_reads(&self, launch: &LaunchShape, reads: &ReadBatch) -> Result<()> {
        self.flag.start_reads(launch, reads)
    }

    fn verify(&self, launch: &LaunchShape) -> Result<()> {
        match self.flag.failures(launch)? {
            Some(firsts) => self.failure(firsts.first().copied().unwrap_or(0), launch),
            None => Ok(()),
        }
    }

    fn target_ids(&self, _ids: &mut Vec<u64>) {}

    fn eval_to_temporaries(&self, _temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
        // Checks write no target: run alone, before any target changes.
        run_direct(self)
    }

    fn copy_from_temporaries(&self, _temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
        Ok(())
    }
}

impl<V: Operation, P: Operation> Check<V, P> {
    /// The predicate's value at the work item's element (for a
    /// [`CheckSet`](crate::CheckSet) holding this check).
    pub(crate) fn predicate(&self) -> &P {
        &self.predicate
    }

    /// The error for a failure first seen at flat index `first` of the
    /// `launch` grid: the element's value is read back to name it.
    pub(crate) fn failure(&self, first: i32, launch: &LaunchShape) -> Result<()> {
        let (row, col) = (first as usize % launch.rows, first as usize / launch.rows);
        let value = eval_direct(Block {
            inner: &self.value,
            row,
            col,
            rows: 1,
            cols: 1,
        })?
        .to_vec()?
        .first()
        .map_or(f64::NAN, |v| v.to_f64());
        Err(Error::CheckFailed {
            function: self.function.to_string(),
            argument: self.argument.to_string(),
            row,
            col,
            value,
            requirement: self.requirement.clone(),
        })
    }
}

/// A check that no element of `value` is NaN.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let m = MatrixCl::from_slice(2, 2, &[1.0f64, f64::NAN, 3.0, 4.0])?;
/// let e = check_nan(&m, "f", "m").run().unwrap_err();
/// assert!(e.to_string().contains("m[1, 0] is NaN"));
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
#[allow(clippy::type_complexity)]
pub fn check_nan<A: IntoOperand + Copy>(
    value: A,
    function: &'static str,
    argument: &'static str,
) -> Check<A::Operand, crate::logic::Equal<A::Operand, A::Operand>> {
    check(value, function, argument, eq(value, value)).requiring("not NaN")
}

/// A check that every element of `value` is finite.
#[allow(clippy::type_complexity)]
pub fn check_finite<A: IntoOperand + Copy>(
    value: A,
    function: &'static str,
    argument: &'static str,
) -> Check<
    A::Operand,
    crate::logic::Less<crate::functions::Fabs<A::Operand>, clfuse_core::expr::Scalar<f64>>,
> {
    check(value, function, argument, lt(fabs(value), f64::INFINITY)).requiring("finite")
}

/// A check that every element of `value` is positive.
#[allow(clippy::type_complexity)]
pub fn check_positive<A: IntoOperand + Copy>(
    value: A,
    function: &'static str,
    argument: &'static str,
) -> Check<A::Operand, crate::logic::Greater<A::Operand, clfuse_core::expr::Scalar<i32>>> {
    check(value, function, argument, crate::logic::gt(value, 0)).requiring("positive")
}

type SymmetryPredicate<'a, T> = crate::logic::LessEq<
    crate::functions::Fabs<
        clfuse_core::expr::Sub<
            clfuse_core::expr::Load<'a, T>,
            crate::structural::Transpose<clfuse_core::expr::Load<'a, T>>,
        >,
    >,
    clfuse_core::expr::Scalar<f64>,
>;

/// A check that a square `m` is symmetric: `|m(i, j) - m(j, i)| <= tolerance`.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let m = MatrixCl::from_slice(2, 2, &[1.0f64, 2.0, 2.5, 1.0])?;
/// assert!(check_symmetric(&m, 1e-8, "cholesky_decompose", "A")?.run().is_err());
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn check_symmetric<'a, T>(
    m: &'a MatrixCl<T>,
    tolerance: f64,
    function: &'static str,
    argument: &'static str,
) -> Result<Check<clfuse_core::expr::Load<'a, T>, SymmetryPredicate<'a, T>>>
where
    T: ClType + clfuse_core::Promote<T> + crate::templates::RealOf,
    <T as clfuse_core::Promote<T>>::Output: crate::templates::RealOf,
{
    if m.rows() != m.cols() {
        return Err(Error::InvalidArgument {
            function,
            argument,
            reason: format!(
                "must be square to be symmetric, is {} x {}",
                m.rows(),
                m.cols()
            ),
        });
    }
    Ok(check(m, function, argument, le(fabs(m - transpose(m)), tolerance)).requiring("symmetric"))
}

/// A check that no diagonal element of `m` is zero.
#[allow(clippy::type_complexity)]
pub fn check_diagonal_zeros<'a, T: ClType>(
    m: &'a MatrixCl<T>,
    function: &'static str,
    argument: &'static str,
) -> Check<
    crate::structural::Diagonal<clfuse_core::expr::Load<'a, T>>,
    crate::logic::NotEqual<
        crate::structural::Diagonal<clfuse_core::expr::Load<'a, T>>,
        clfuse_core::expr::Scalar<i32>,
    >,
> {
    check(diagonal(m), function, argument, ne(diagonal(m), 0)).requiring("non-zero on the diagonal")
}
