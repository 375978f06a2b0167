//! Several checks as outputs of one kernel sharing one flag buffer: a slot
//! per check, so that the kernel's verdicts come back in one read instead
//! of one read per check (a density checks each of its arguments).

use crate::binder::{Binder, Identity};
use crate::checks::Check;
use crate::driver::run_direct;
use crate::generator::{Generator, Index};
use crate::launch_shape::LaunchShape;
use crate::operation::{HeldProduct, Operation};
use crate::outputs::{OutputList, Schedule};
use crate::read_back::ReadBack;
use clfuse_core::{Access, MatrixCl, ReadBatch, Result};
use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

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
    /// One `int` per check: the first failing flat index, `i32::MAX` if none.
    flags: OnceLock<MatrixCl<i32>>,
    flags_read: ReadBack<i32>,
    /// The flags were read back holding "no failure": they can serve again.
    clean: AtomicBool,
}

/// Flag buffers read back clean, for new sets of the same size.
static CLEAN_SETS: Mutex<Vec<MatrixCl<i32>>> = Mutex::new(Vec::new());

/// At most this many are kept.
const CLEAN_SETS_KEPT: usize = 32;

fn clean_sets() -> std::sync::MutexGuard<'static, Vec<MatrixCl<i32>>> {
    CLEAN_SETS.lock().unwrap_or_else(|p| p.into_inner())
}

impl<V, P> CheckSet<V, P> {
    /// The checks, made by one kernel in this order.
    pub fn new(checks: Vec<Check<V, P>>) -> Self {
        CheckSet {
            checks,
            flags: OnceLock::new(),
            flags_read: ReadBack::default(),
            clean: AtomicBool::new(false),
        }
    }
}

impl<V, P> Drop for CheckSet<V, P> {
    fn drop(&mut self) {
        if *self.clean.get_mut()
            && let Some(flags) = self.flags.take()
        {
            let mut kept = clean_sets();
            if kept.len() < CLEAN_SETS_KEPT {
                kept.push(flags);
            }
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
        let count = self.checks.len();
        if count == 0 {
            return Ok(());
        }
        let was_clean = self.clean.swap(false, Ordering::Relaxed);
        match self.flags.get() {
            Some(flags) if !was_clean => flags.fill(i32::MAX),
            Some(_) => Ok(()),
            None => {
                let here = clfuse_core::Device::current()?;
                let reused = {
                    let mut kept = clean_sets();
                    let fits = |f: &MatrixCl<i32>| f.len() == count && f.device() == Some(here);
                    kept.iter().rposition(fits).map(|k| kept.swap_remove(k))
                };
                let flags = match reused {
                    Some(flags) => flags,
                    None => MatrixCl::constant(count, 1, i32::MAX)?,
                };
                let _ = self.flags.set(flags);
                Ok(())
            }
        }
    }

    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>) {
        b.structure(self.checks.len() as u32);
        for c in &self.checks {
            c.predicate().bind(b);
        }
    }

    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>) {
        if let Some(flags) = self.flags.get() {
            b.matrix(flags, Access::ReadWrite, false);
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
        let id = Identity::Buffer(self.flags.get().map_or(u64::MAX, MatrixCl::buffer_id));
        let flags = g.buffer(id, "int", false);
        g.mark_written(id);
        for slot in 0..self.checks.len() {
            let ok = values.next().cloned().unwrap_or_default();
            g.statement(&format!("if (!({ok})) {{"));
            g.statement(&format!(
                "atomic_min(&{flags}_global[{slot}], i + rows * j);"
            ));
            g.statement("}");
        }
    }

    fn finish(&self, _launch: &LaunchShape) -> Result<()> {
        Ok(())
    }

    fn start_reads(&self, launch: &LaunchShape, reads: &ReadBatch) -> Result<()> {
        if launch.rows > 0
            && launch.cols > 0
            && let Some(flags) = self.flags.get()
        {
            self.flags_read.start(flags, reads)?;
        }
        Ok(())
    }

    fn verify(&self, launch: &LaunchShape) -> Result<()> {
        let Some(flags) = self.flags.get() else {
            return Ok(());
        };
        if launch.rows == 0 || launch.cols == 0 {
            return Ok(());
        }
        let firsts = self.flags_read.finish(flags)?;
        for (check, &first) in self.checks.iter().zip(&firsts) {
            if first != i32::MAX {
                return check.failure(first, launch);
            }
        }
        self.clean.store(true, Ordering::Relaxed);
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
