//! Several checks as outputs of one kernel sharing one flag buffer: a slot
//! per check, so that the kernel's verdicts come back in one read instead
//! of one read per check (a density checks each of its arguments).

use crate::binder::Binder;
use crate::checks::Check;
use crate::driver::run_direct;
use crate::failure_flags::FailureFlags;
use crate::generator::{Generator, Index};
use crate::launch_shape::LaunchShape;
use crate::operation::{HeldProduct, Operation};
use crate::outputs::{OutputList, Schedule};
use clfuse_core::{ReadBatch, Result};
use std::any::Any;

/// Checks made by one kernel, reported in their order: the first failing
/// check's error, as [`Check`] words it. Outputs computed by the same
/// kernel hold unspecified values when one fails.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let y = MatrixCl::from_slice(3, 1, &[0.5f64, -1.0, 2.0])?;
/// let checks = CheckSet::new(vec![
///     check(&y, "f", "y", ge(&y, -5.0)).requiring("at least -5"),
///     check(&y, "f", "y", ge(&y, 0.0)).requiring("non-negative"),
/// ]);
/// let err = fuse(checks).unwrap_err();
/// assert_eq!(err.to_string(), "f: y[1, 0] is -1, but must be non-negative");
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
#[derive(Debug)]
pub struct CheckSet<V, P> {
    checks: Vec<Check<V, P>>,
    /// One flag per check.
    flags: FailureFlags,
}

impl<V, P> CheckSet<V, P> {
    /// The checks, made by one kernel in this order.
    pub fn new(checks: Vec<Check<V, P>>) -> Self {
        CheckSet {
            checks,
            flags: FailureFlags::deferrable(),
        }
    }
}

/// The cache key of [`CheckSet`] (the number of checks is bound as structure).
pub struct CheckSetKey<K>(std::marker::PhantomData<K>);

impl<V: Operation, P: Operation> OutputList for CheckSet<V, P> {
    type Key = CheckSetKey<(Check<V::Key, P::Key>,)>;

    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()> {
        self.checks.iter().try_for_each(|c| c.grid(grid))
    }

    fn schedule(&self) -> Schedule {
        if self.checks.is_empty() {
            Schedule::NONE
        } else {
            Schedule::ELEMENTWISE
        }
    }

    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()> {
        self.checks.iter().try_for_each(|c| c.evaluate_leaves(held))
    }

    fn prepare(&self, _launch: &LaunchShape) -> Result<()> {
        self.flags.prepare(self.checks.len())
    }

    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        b.structure(self.checks.len() as u32);
        for c in &self.checks {
            c.predicate().bind(b);
        }
    }

    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        self.flags.bind(b);
        if !self.checks.is_empty() {
            self.flags.bind_offset(b);
        }
    }

    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>) {
        for c in &self.checks {
            values.push(c.predicate().generate(g, &Index::work_item()));
        }
    }

    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>) {
        if self.checks.is_empty() {
            return;
        }
        let base = self.flags.declare(g);
        let first = FailureFlags::declare_offset(g);
        for slot in 0..self.checks.len() {
            let ok = values.next().cloned().unwrap_or_default();
            FailureFlags::generate(g, &base, &format!("{first} + {slot}"), &ok);
        }
    }

    fn finish(&self, _launch: &LaunchShape) -> Result<()> {
        Ok(())
    }

    fn start_reads(&self, launch: &LaunchShape, reads: &ReadBatch) -> Result<()> {
        self.flags.start_reads(launch, reads)
    }

    fn verify(&self, launch: &LaunchShape) -> Result<()> {
        let Some(firsts) = self.flags.failures(launch)? else {
            return Ok(());
        };
        for (check, &first) in self.checks.iter().zip(&firsts) {
            if first != i32::MAX {
                return check.failure(first, launch);
            }
        }
        Ok(())
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
