//! Where in-kernel checks record their failures: one `int` per check, the
//! first failing flat index (`i32::MAX` for none), written with
//! `atomic_min`. Flags read back clean serve the next kernel without being
//! reset (a fill is one more OpenCL call per kernel); they are read back
//! with the kernel's other read-backs.

use crate::binder::{Binder, Identity};
use crate::deferred_checks;
use crate::generator::Generator;
use crate::launch_shape::LaunchShape;
use crate::read_back::ReadBack;
use clfuse_core::{Access, MatrixCl, ReadBatch, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// The flags of one check output ([`Check`](crate::Check): one;
/// [`CheckSet`](crate::CheckSet): one per check).
#[derive(Debug, Default)]
pub(crate) struct FailureFlags {
    flags: OnceLock<MatrixCl<i32>>,
    /// The flags on their way to the host.
    read: ReadBack<i32>,
    /// The flags were read back holding "no failure" after their last
    /// kernel: they can serve again without being reset.
    clean: AtomicBool,
    /// May its verdicts be deferred ([`deferred_checks`]): its slots then
    /// live in the thread's arena from the offset held here on, and
    /// nothing reads them after its kernel.
    deferrable: bool,
    /// The first slot in the arena, once its slots were claimed there.
    deferred: OnceLock<usize>,
}

/// Flags read back clean, for new checks of the same count to take.
static CLEAN: Mutex<Vec<MatrixCl<i32>>> = Mutex::new(Vec::new());

/// At most this many are kept.
const CLEAN_KEPT: usize = 64;

fn clean() -> std::sync::MutexGuard<'static, Vec<MatrixCl<i32>>> {
    CLEAN.lock().unwrap_or_else(|p| p.into_inner())
}

impl FailureFlags {
    /// Flags whose verdicts a deferring evaluation may read later
    /// ([`deferred_checks`]); their kernel takes the first slot as an
    /// argument ([`bind_offset`](Self::bind_offset)).
    pub(crate) fn deferrable() -> Self {
        FailureFlags {
            flags: OnceLock::new(),
            read: ReadBack::default(),
            clean: AtomicBool::new(false),
            deferrable: true,
            deferred: OnceLock::new(),
        }
    }

    /// Makes `count` flags hold "no failure" before the kernel runs: reset
    /// on the queue unless read back clean, or taken clean from an earlier
    /// check of this device, or new.
    pub(crate) fn prepare(&self, count: usize) -> Result<()> {
        if count == 0 || self.deferred.get().is_some() {
            return Ok(());
        }
        if self.deferrable
            && self.flags.get().is_none()
            && let Some((arena, offset)) = deferred_checks::claim(count)?
        {
            let _ = self.flags.set(arena);
            let _ = self.deferred.set(offset);
            return Ok(());
        }
        // Whatever the kernel does to the flags, it is unknown until read back.
        let was_clean = self.clean.swap(false, Ordering::Relaxed);
        match self.flags.get() {
            Some(flags) if !was_clean => flags.fill(i32::MAX),
            Some(_) => Ok(()),
            None => {
                let here = clfuse_core::Device::current()?;
                let reused = {
                    let mut kept = clean();
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

    /// Binds the flags (once prepared).
    pub(crate) fn bind<'a>(&'a self, b: &mut Binder<'a>) {
        if let Some(flags) = self.flags.get() {
            b.matrix(flags, Access::ReadWrite, false);
        }
    }

    /// Binds the first slot's index (after [`bind`](Self::bind), for
    /// deferrable flags): 0 in a buffer of its own.
    pub(crate) fn bind_offset(&self, b: &mut Binder<'_>) {
        if self.flags.get().is_some() {
            b.int(self.deferred.get().map_or(0, |&offset| offset as i32));
        }
    }

    /// The flags' buffer, once prepared (for a binding of its own).
    pub(crate) fn buffer(&self) -> Option<&MatrixCl<i32>> {
        self.flags.get()
    }

    /// Declares the flags' parameter and returns its base name.
    pub(crate) fn declare(&self, g: &mut Generator) -> String {
        // Before `prepare` (kernel_source) there is no buffer yet: any
        // identity distinct from the bound buffers will do.
        let id = Identity::Buffer(self.flags.get().map_or(u64::MAX, MatrixCl::buffer_id));
        let base = g.buffer(id, "int", false);
        g.mark_written(id);
        base
    }

    /// The name of the first slot's index parameter (after
    /// [`declare`](Self::declare), for deferrable flags).
    pub(crate) fn declare_offset(g: &mut Generator) -> String {
        g.value_param("int")
    }

    /// Records the element's failure of check `slot` unless `ok` holds
    /// (`slot` an expression: a number, or `first + k` in a shared buffer).
    pub(crate) fn generate(g: &mut Generator, base: &str, slot: &str, ok: &str) {
        g.statement(&format!("if (!({ok})) {{"));
        g.statement(&format!(
            "atomic_min(&{base}_global[{slot}], i + rows * j);"
        ));
        g.statement("}");
    }

    /// Queues the flags' read-back.
    pub(crate) fn start_reads(&self, launch: &LaunchShape, reads: &ReadBatch) -> Result<()> {
        if self.deferred.get().is_none()
            && launch.rows > 0
            && launch.cols > 0
            && let Some(flags) = self.flags.get()
        {
            self.read.start(flags, reads)?;
        }
        Ok(())
    }

    /// Each check's first failing flat index, or `None` when no check
    /// failed (or nothing ran); clean flags are then kept for reuse.
    pub(crate) fn failures(&self, launch: &LaunchShape) -> Result<Option<Vec<i32>>> {
        let Some(flags) = self.flags.get() else {
            return Ok(None);
        };
        // A deferred verdict is read with the evaluation's result.
        if self.deferred.get().is_some() || launch.rows == 0 || launch.cols == 0 {
            return Ok(None);
        }
        let firsts = self.read.finish(flags)?;
        if firsts.iter().all(|&f| f == i32::MAX) {
            self.clean.store(true, Ordering::Relaxed);
            return Ok(None);
        }
        Ok(Some(firsts))
    }
}

impl Drop for FailureFlags {
    fn drop(&mut self) {
        if self.deferred.get().is_none()
            && *self.clean.get_mut()
            && let Some(flags) = self.flags.take()
        {
            let mut kept = clean();
            if kept.len() < CLEAN_KEPT {
                kept.push(flags);
            }
        }
    }
}
