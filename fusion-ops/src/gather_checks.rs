//! Gathers (`indexing(m, rows, cols)`) check their indices in the kernel
//! that reads through them: an index outside the matrix reads 0 there
//! (never outside the buffer) and records the first result element that
//! had one in the kernel's gather flags, two per gather (its row indices',
//! its column indices'), through [`FailureFlags`]; the launch reads them
//! back with its other read-backs and turns a failure into
//! `Err(IndexOutOfRange)`. The valid path costs the read-back of the flags.
//!
//! A gather binds itself with [`Binder::gather`] and generates its read
//! with [`guarded_read_start`] and [`guarded_read_end`]; the two launch
//! sites (`driver.rs`, `epilogue.rs`) attach the flags with
//! [`Gathers::attach`] and pass them to `driver::complete`.

use crate::binder::{Binder, GatherCheck};
use crate::failure_flags::FailureFlags;
use crate::generator::{Generator, Index};
use crate::launch_shape::LaunchShape;
use clfuse_core::{ReadBatch, Result};

/// The OpenCL C condition `index` in `0..bound` (both expressions).
pub(crate) fn in_range(index: &str, bound: &str) -> String {
    format!("{index} >= 0 && {index} < {bound}")
}

/// The names a gather's guarded read uses (see [`guarded_read_start`]).
pub(crate) struct GuardedRead {
    /// The variable holding the element read (0 when out of range).
    pub(crate) var: String,
    in_matrix: String,
    flags: String,
    slot: usize,
    row_ok: String,
    rows: String,
}

/// Emits the start of the read of gather `node` at `at` (row index `r`,
/// column index `c`, both already generated): declares the matrix's rows
/// and columns, the gather flags and the result's row count (in the order
/// [`Binder::gather`] binds them after the indices), the variable holding
/// the element (`cl_type`, 0). The caller then opens the `if`
/// ([`GuardedRead::open`]), reads the matrix at `(r, c)` into the variable
/// and calls [`guarded_read_end`].
pub(crate) fn guarded_read_start(
    g: &mut Generator,
    node: usize,
    r: &str,
    c: &str,
    cl_type: &'static str,
) -> GuardedRead {
    let (m_rows, m_cols) = (g.value_param("int"), g.value_param("int"));
    let (flags, slot) = g.gather_flags(node);
    let rows = g.value_param("int");
    let var = g.declare(cl_type, "0");
    let row_ok = in_range(r, &m_rows);
    let in_matrix = format!("{row_ok} && {}", in_range(c, &m_cols));
    GuardedRead {
        var,
        in_matrix,
        flags,
        slot,
        row_ok,
        rows,
    }
}

impl GuardedRead {
    /// Emits `if (both indices in range) {`.
    pub(crate) fn open(&self, g: &mut Generator) {
        g.statement(&format!("if ({}) {{", self.in_matrix));
    }
}

/// Closes the read [`guarded_read_start`] opened: out of range, the
/// variable keeps its 0 and the flag of the bad index (row, else column)
/// takes the element's position in the gather's result if it is the first.
pub(crate) fn guarded_read_end(g: &mut Generator, read: &GuardedRead, at: &Index) {
    let GuardedRead {
        flags,
        slot,
        row_ok,
        rows,
        ..
    } = read;
    g.statement("} else {");
    g.statement(&format!(
        "// An index out of range: read 0, and report the first such element (flag {}: a bad row index, {}: a bad column index).",
        2 * slot,
        2 * slot + 1
    ));
    g.statement(&format!(
        "atomic_min(&{flags}_global[{row_ok} ? {} : {}], {} + {rows} * {});",
        2 * slot + 1,
        2 * slot,
        at.i,
        at.j
    ));
    g.statement("}");
}

/// The gathers of one launch and their flags.
pub(crate) struct Gathers<'a> {
    flags: &'a FailureFlags,
    checks: Vec<&'a dyn GatherCheck>,
}

impl<'a> Gathers<'a> {
    /// After every argument is bound: the gathers `binder` recorded, their
    /// flags prepared (holding "no failure") and bound where the first
    /// gather left their place.
    pub(crate) fn attach(binder: &mut Binder<'a>, flags: &'a FailureFlags) -> Result<Self> {
        let checks = binder.gathers();
        if !checks.is_empty() {
            flags.prepare(2 * checks.len())?;
            if let Some(buffer) = flags.buffer() {
                binder.attach_gather_flags(buffer);
            }
        }
        Ok(Gathers { flags, checks })
    }

    /// Queues the flags' read-back (with the kernel's others).
    pub(crate) fn start_reads(&self, launch: &LaunchShape, reads: &ReadBatch) -> Result<()> {
        if self.checks.is_empty() {
            return Ok(());
        }
        self.flags.start_reads(launch, reads)
    }

    /// The first gather (in binding order) that found a bad index: its
    /// error, naming the first element of its result with one (the row
    /// index's when both are bad there).
    pub(crate) fn verify(&self, launch: &LaunchShape) -> Result<()> {
        if self.checks.is_empty() {
            return Ok(());
        }
        let Some(firsts) = self.flags.failures(launch)? else {
            return Ok(());
        };
        for (check, pair) in self.checks.iter().zip(firsts.chunks(2)) {
            let at = |k: usize| pair.get(k).copied().unwrap_or(i32::MAX);
            let (row, col) = (at(0), at(1));
            if row == i32::MAX && col == i32::MAX {
                continue;
            }
            return Err(if row <= col {
                check.failure(false, row)
            } else {
                check.failure(true, col)
            });
        }
        Ok(())
    }
}
