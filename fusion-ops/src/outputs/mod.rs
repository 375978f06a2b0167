//! Outputs: what one fused kernel writes, and how it wants to be launched.
//!
//! An output pairs a target with an expression ([`Assignment`]), reduces
//! columns ([`ColwiseAssignment`]) or everything ([`FullReduction`]), checks
//! values (`Check`) or sums `xᵀ·v` over row blocks
//! (`TransposeProductAssignment`). Outputs combine into one kernel through
//! tuples, [`Optional`] and references (`forwarding.rs`). Each declares its
//! needs in one [`Schedule`]; the driver (`driver.rs`) combines them, picks
//! the [`LaunchShape`](crate::LaunchShape) and runs the kernel.

mod assignment;
mod colwise;
mod forwarding;
mod full_reduction;
mod row_softmax;
mod scalar_sums;

pub use assignment::{AsTarget, Assignable, Assignment, output};
pub use colwise::ColwiseAssignment;
pub(crate) use colwise::generate_group_reduction;
pub use forwarding::{Optional, optional};
pub use full_reduction::{FullReduction, full_reduction, max, min, prod, sum};
pub(crate) use row_softmax::RowSoftmaxAssignment;
pub(crate) use scalar_sums::ScalarSums;

use crate::binder::Binder;
use crate::generator::Generator;
use crate::launch_shape::LaunchShape;
use crate::operation::HeldProduct;
use clfuse_core::ReadBatch;
use clfuse_core::{Error, Result};
use std::any::Any;

/// What an output asks of the launch: the one place scheduling needs are
/// declared. Outputs fused into one kernel combine theirs with
/// [`Schedule::and`].
///
/// ```
/// use clfuse_ops::Schedule;
/// let store = Schedule::ELEMENTWISE;
/// let reduce = Schedule { reduces: true, max_row_groups: 1, ..Schedule::ELEMENTWISE };
/// let both = store.and(reduce);
/// assert!(both.reduces && both.max_row_groups == 1 && both.row_block.is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// A reduction among the outputs: work-groups loop over rows and leave
    /// one partial result per group.
    pub reduces: bool,
    /// Outputs that combine the rows of a block (`transpose_vector_multiply`):
    /// `Some(columns)`, the columns of the matrices they stage (0 when
    /// nothing is staged). The kernel then walks row blocks.
    pub row_block: Option<usize>,
    /// Work per row beyond `xᵀ·v`'s running sums (a store, a check, a
    /// reduction; for `xᵀ·v`, a `v` that reads `x`): a row-block kernel that
    /// has it favours fewer work items per row (see [`RowBlockKind`](crate::RowBlockKind)).
    pub row_work: bool,
    /// At most this many work-groups along rows (a reduction's last step
    /// asks for one, so that it writes its target directly).
    pub max_row_groups: usize,
    /// Scalars summed through one tree per work-group, whose last group to
    /// finish adds up every group's partial sums (`ScalarSums`): with
    /// several, fewer groups pay off (see `LaunchShape::choose`).
    pub scalar_sums: usize,
}

impl Schedule {
    /// No output at all (a disabled [`Optional`]): the identity of [`and`](Self::and).
    pub const NONE: Schedule = Schedule {
        reduces: false,
        row_block: None,
        row_work: false,
        max_row_groups: usize::MAX,
        scalar_sums: 0,
    };

    /// An element-wise output: one work item per element, work per row.
    pub const ELEMENTWISE: Schedule = Schedule {
        row_work: true,
        ..Schedule::NONE
    };

    /// The needs of two outputs in one kernel.
    pub fn and(self, other: Schedule) -> Schedule {
        Schedule {
            reduces: self.reduces || other.reduces,
            row_block: match (self.row_block, other.row_block) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            },
            row_work: self.row_work || other.row_work,
            max_row_groups: self.max_row_groups.min(other.max_row_groups),
            scalar_sums: self.scalar_sums + other.scalar_sums,
        }
    }
}

/// Outputs computed together by one kernel. Expressions are all evaluated
/// before any target is written, so an output may read another's target.
pub trait OutputList {
    /// Cache key type (lifetimes erased).
    type Key: 'static;
    /// Checks shapes; sets or checks the common element grid.
    fn grid(&self, grid: &mut Option<(usize, usize)>) -> Result<()>;
    /// How the outputs want the kernel launched (see [`Schedule`]).
    fn schedule(&self) -> Schedule;
    /// Before anything else is queued: evaluates the non-fusable leaves of
    /// the expressions (GEMM products; see [`Operation::evaluate_leaves`](crate::Operation::evaluate_leaves)).
    fn evaluate_leaves(&self, held: HeldProduct) -> Result<()>;
    /// Allocates scratch buffers and prepares targets before binding.
    fn prepare(&self, launch: &LaunchShape) -> Result<()>;
    /// Binds the expressions' arguments.
    fn bind_exprs<'a>(&'a self, b: &mut Binder<'a>);
    /// Binds the outputs' arguments.
    fn bind_outputs<'a>(&'a self, b: &mut Binder<'a>);
    /// Generates every expression, pushing the variables holding the values.
    fn generate_exprs(&self, g: &mut Generator, values: &mut Vec<String>);
    /// Generates the stores, consuming `values` in order.
    fn generate_outputs(&self, g: &mut Generator, values: &mut std::slice::Iter<'_, String>);
    /// After the kernel: views, reductions' second step — work that is
    /// queued, not waited for.
    fn finish(&self, launch: &LaunchShape) -> Result<()>;
    /// After every output's `finish`, before the caller's follow-up work:
    /// queues the read-backs that `verify` needs without waiting, so that all
    /// of a kernel's flags and partial sums share one round trip.
    fn start_reads(&self, _launch: &LaunchShape, _reads: &ReadBatch) -> Result<()> {
        Ok(())
    }
    /// Last: the checks' verdicts and the full reductions' values, from the
    /// read-backs `start_reads` queued (or a blocking read if it did not run).
    fn verify(&self, _launch: &LaunchShape) -> Result<()> {
        Ok(())
    }
    /// Before any expression is generated: declares the staged matrices of a
    /// row-block kernel (when `launch.staged`), so that the operations able
    /// to use them read them from registers.
    fn declare_staged(&self, _g: &mut Generator, _launch: &LaunchShape) {}
    /// Binds what [`OutputList::declare_staged`] declared, in the same order.
    fn bind_staged<'a>(&'a self, _b: &mut Binder<'a>, _launch: &LaunchShape) {}
    /// Pushes the buffer ids of the matrices written.
    fn target_ids(&self, ids: &mut Vec<u64>);
    /// The matrix product whose GEMM can apply these outputs as its
    /// epilogue (see [`crate::epilogue`]): one element-wise output's; the
    /// rest keep the default, none.
    fn epilogue_product(&self) -> Option<&dyn crate::EpilogueProduct> {
        None
    }
    /// Temporary path, step 1: evaluate element-wise outputs into temporaries
    /// (and run reductions and checks on their own). Outputs that only
    /// ever write fresh matrices (run through `run_direct`, a recorded
    /// step's partials, a softmax) never take this path and keep the
    /// default, an internal error.
    fn eval_to_temporaries(&self, _temps: &mut Vec<Box<dyn Any>>) -> Result<()> {
        Err(fresh_targets_only())
    }
    /// Temporary path, step 2: copy the temporaries into the targets.
    fn copy_from_temporaries(&self, _temps: &mut std::vec::IntoIter<Box<dyn Any>>) -> Result<()> {
        Err(fresh_targets_only())
    }
}

/// The error of an output into fresh matrices that was planned through
/// temporaries: nothing can alias a fresh matrix, so this is a bug here.
pub(crate) fn fresh_targets_only() -> Error {
    Error::InvalidArgument {
        function: "assign",
        argument: "outputs",
        reason: "internal: an output into a fresh temporary was planned through temporaries".into(),
    }
}

/// Sets the kernel's element grid to `shape`, or checks it against the one set.
pub(crate) fn common_grid(grid: &mut Option<(usize, usize)>, shape: (usize, usize)) -> Result<()> {
    match grid {
        Some(c) if *c != shape => Err(Error::DimensionMismatch {
            operation: "outputs of one kernel must share one shape".into(),
            lhs: *c,
            rhs: shape,
        }),
        _ => {
            *grid = Some(shape);
            Ok(())
        }
    }
}
