//! Launch-shape policy: how many work items, in which groups, walk a fused
//! kernel's element grid. The outputs say what they need (a [`Schedule`]);
//! the device and the [`Tuning`] knobs say how much hardware there is.

use crate::generator::StageLayout;
use crate::outputs::Schedule;
use clfuse_core::{DeviceInfo, NdRange, Result, Runtime, Tuning};

/// The work-item grid of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchShape {
    /// Rows of the element grid.
    pub rows: usize,
    /// Columns of the element grid.
    pub cols: usize,
    /// Work-group size along rows and columns.
    pub local: [usize; 2],
    /// Row-block kernels: rows per block (0 otherwise).
    pub block_rows: usize,
    /// Row-block kernels: how the matrices to stage are held in registers,
    /// `None` when they do not fit.
    pub staged: Option<StageLayout>,
    groups: usize,
}

impl LaunchShape {
    /// The launch of a kernel over a `rows x cols` grid whose outputs ask for `schedule`.
    pub(crate) fn choose(rows: usize, cols: usize, schedule: Schedule, rt: &Runtime) -> Self {
        let device = rt.device_info();
        let tuning = rt.tuning();
        let compute_units = device.compute_units as usize;
        let group = device.max_work_group_size.clamp(1, 256);
        if let Some(staged_columns) = schedule.row_block {
            let kind = if schedule.row_work {
                RowBlockKind::WithRowWork
            } else {
                RowBlockKind::ProductAlone
            };
            return Self::row_blocks(rows, cols, staged_columns, kind, rt);
        }
        // A grid of one column that one work-group covers takes the sweep
        // group when this thread's launches sweep, so that it joins the
        // small kernels around it (see `clfuse_core::enqueue_joined`).
        let sweep = clfuse_core::sweep_group(rt);
        let l0 = if cols == 1 && rows <= sweep && clfuse_core::sweeps_on(rt) {
            sweep
        } else {
            rows.max(1).next_power_of_two().min(group)
        };
        if !schedule.reduces {
            let l1 = cols.max(1).next_power_of_two().min(group / l0).max(1);
            return LaunchShape {
                rows,
                cols,
                local: [l0, l1],
                block_rows: 0,
                staged: None,
                groups: rows.div_ceil(l0),
            };
        }
        // Column-wise reductions: one column per work-group; enough groups
        // to fill the device, each work item looping over rows with a
        // grid-sized stride, so that few partial results remain. A kernel
        // summing several scalars (a log density and its scalar parameters'
        // gradients) takes 8 groups per compute unit instead of 32: its last
        // group adds every group's partials for each, and on an H200 at 1e7
        // elements `normal_lpdf`, `student_t_lpdf` and `gamma_lpdf` took
        // 13–25% less per call, while 8 for every reduction slowed a
        // 64-column `colwise_sum` by half (BENCHMARKS.md, HISTORY.md).
        let default_groups = if schedule.scalar_sums > 1 { 8 } else { 32 };
        let groups_per_compute_unit = tuning.reduction_groups_per_cu.unwrap_or(default_groups);
        let wanted = (groups_per_compute_unit * compute_units.max(1))
            .div_ceil(cols.max(1))
            .max(1);
        LaunchShape {
            rows,
            cols,
            local: [l0, 1],
            block_rows: 0,
            staged: None,
            groups: rows
                .div_ceil(l0)
                .clamp(1, wanted.min(schedule.max_row_groups).max(1)),
        }
    }

    /// Row blocks: work-groups of (up to) 256 work items walk blocks of
    /// rows. A staged row is spread over the fewest work items (a power of
    /// two) that hold it with at most [`staged_per_work_item`] elements each;
    /// the block has as many rows as the group has such teams. A row that
    /// needs more than the whole group is not staged (blocks of `lsize` rows).
    fn row_blocks(
        rows: usize,
        cols: usize,
        staged_columns: usize,
        kind: RowBlockKind,
        rt: &Runtime,
    ) -> Self {
        let (device, tuning) = (rt.device_info(), rt.tuning());
        let l0 = row_block_local_size(kind, device, tuning);
        let staged = stage_layout(staged_columns, kind, l0, tuning);
        let block_rows = l0 / staged.map_or(1, |s| s.team);
        let prefetch = staged.is_some_and(|s| s.prefetch);
        let wanted = row_block_groups_per_compute_unit(kind, prefetch, tuning)
            * (device.compute_units as usize).max(1);
        LaunchShape {
            rows,
            cols,
            local: [l0, 1],
            block_rows,
            staged,
            groups: rows.div_ceil(block_rows).clamp(1, wanted),
        }
    }

    /// Work-groups along rows (the number of partial results per column).
    pub fn row_groups(&self) -> usize {
        self.groups
    }

    pub(crate) fn range(&self) -> NdRange {
        NdRange::d2([
            self.row_groups() * self.local[0],
            self.cols.div_ceil(self.local[1]) * self.local[1],
        ])
        .with_local(&self.local)
    }
}

/// How rows of `columns` elements are staged in a work-group of `l0` (a
/// power of two) work items: spread over the fewest work items (a power of
/// two, the row's team) holding at most [`staged_per_work_item`] each;
/// `None` when the team would exceed the group (or there is nothing to stage).
fn stage_layout(
    columns: usize,
    kind: RowBlockKind,
    l0: usize,
    tuning: &Tuning,
) -> Option<StageLayout> {
    if columns == 0 {
        return None;
    }
    let team = columns
        .div_ceil(staged_per_work_item(kind, tuning))
        .next_power_of_two();
    (team <= l0).then(|| StageLayout {
        per_item: columns.div_ceil(team),
        team,
        // Prefetch when rows are shared, where a barrier per block would
        // expose the fetch's latency.
        prefetch: tuning.row_block_prefetch.unwrap_or(team > 1),
    })
}

/// What a row-block kernel computes besides `xᵀ·v`, which decides how it
/// spreads rows over work items: measured on an H200 (BENCHMARKS.md), the
/// product alone runs fastest with rows shared by more work items holding
/// fewer elements each, and a kernel that also does per-row work (`x·β`
/// inside `v`, a GLM's terms, checks and sums — which every work item
/// sharing a row repeats) with fewer work items per row holding more, in
/// smaller work-groups.
///
/// ```
/// use clfuse_ops::{RowBlockKind, staged_row_team};
/// // 100 columns: 8 work items of 13 elements alone, 4 of 25 with row work.
/// let alone = staged_row_team(100, RowBlockKind::ProductAlone)?;
/// let with_work = staged_row_team(100, RowBlockKind::WithRowWork)?;
/// assert!(with_work <= alone);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowBlockKind {
    /// `xᵀ·v` alone, with a `v` that does not read `x`.
    ProductAlone,
    /// Per-row work besides the product.
    WithRowWork,
}

/// How many work items of a row-block kernel of `kind` on this device share
/// each row of a staged matrix of `columns` columns (a power of two), or
/// `None` when such a matrix is not staged (then `transpose_vector_multiply`
/// reads it where it is used). With one, the kernel needs no barrier per block.
///
/// ```
/// use clfuse_ops::{RowBlockKind, staged_row_team};
/// assert_eq!(staged_row_team(10, RowBlockKind::ProductAlone)?, Some(1));
/// assert_eq!(staged_row_team(1 << 20, RowBlockKind::WithRowWork)?, None);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn staged_row_team(columns: usize, kind: RowBlockKind) -> Result<Option<usize>> {
    let rt = Runtime::get()?;
    let l0 = row_block_local_size(kind, rt.device_info(), rt.tuning());
    Ok(stage_layout(columns, kind, l0, rt.tuning()).map(|layout| layout.team))
}

/// Work items per work-group of a row-block kernel on `device`: a power of
/// two, at most [`row_block_group_size`].
fn row_block_local_size(kind: RowBlockKind, device: &DeviceInfo, tuning: &Tuning) -> usize {
    let group = device
        .max_work_group_size
        .clamp(1, row_block_group_size(kind, tuning));
    1 << group.ilog2()
}

/// Elements of a staged row one work item holds at most:
/// [`Tuning::staged_per_work_item`], else 16 for the product alone and 32
/// with per-row work.
fn staged_per_work_item(kind: RowBlockKind, tuning: &Tuning) -> usize {
    tuning.staged_per_work_item.unwrap_or(match kind {
        RowBlockKind::ProductAlone => 16,
        RowBlockKind::WithRowWork => 32,
    })
}

/// Work items per row-block work-group: [`Tuning::row_block_group_size`]
/// (a power of two), else 256 for the product alone and 128 with per-row work.
fn row_block_group_size(kind: RowBlockKind, tuning: &Tuning) -> usize {
    tuning.row_block_group_size.unwrap_or(match kind {
        RowBlockKind::ProductAlone => 256,
        RowBlockKind::WithRowWork => 128,
    })
}

/// Work-groups per compute unit for row-block kernels:
/// [`Tuning::row_block_groups_per_cu`], else 2 for the product alone and,
/// with per-row work, 4 (of half the size), or 2 where blocks are prefetched
/// (twice the registers): on an H200 about as many as are resident at once,
/// so that the groups run in one wave and each group's closing reductions
/// run once per compute unit's share.
fn row_block_groups_per_compute_unit(kind: RowBlockKind, prefetch: bool, tuning: &Tuning) -> usize {
    tuning.row_block_groups_per_cu.unwrap_or(match kind {
        RowBlockKind::ProductAlone => 2,
        RowBlockKind::WithRowWork if prefetch => 2,
        RowBlockKind::WithRowWork => 4,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_summing_several_scalars_takes_fewer_groups() -> Result<()> {
        let rt = Runtime::get()?;
        if rt.tuning().reduction_groups_per_cu.is_some() {
            return Ok(()); // set by hand: every reduction takes it
        }
        let units = (rt.device_info().compute_units as usize).max(1);
        let one = Schedule {
            reduces: true,
            scalar_sums: 1,
            ..Schedule::ELEMENTWISE
        };
        let three = Schedule {
            scalar_sums: 3,
            ..one
        };
        let rows = 10_000_000;
        assert_eq!(
            LaunchShape::choose(rows, 1, one, rt).row_groups(),
            32 * units
        );
        assert_eq!(
            LaunchShape::choose(rows, 1, three, rt).row_groups(),
            8 * units
        );
        Ok(())
    }
}
