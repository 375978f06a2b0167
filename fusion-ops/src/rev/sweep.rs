//! One step's reverse kernel and its launch. Most reverse kernels of a
//! model are steps of a few elements (`1 x 1` sums, scalar priors,
//! parameter blocks): each walks its elements in a grid-stride loop and adds
//! its work-groups' sums in the last group to finish, so one work-group runs
//! it unchanged, and a kernel that fits one work-group joins the device's
//! sweep (`clfuse_core::enqueue_joined`): consecutive ones, and the small
//! forward kernels before them, run as one launch.

use clfuse_core::{
    Access, FusedKernel, FusedPlan, KernelArg, MatrixCl, NdRange, Result, Runtime, compile_kernel,
    enqueue_joined,
};
use std::any::TypeId;
use std::sync::Arc;

/// One step's reverse kernel, ready to launch alone or with its neighbours.
pub(crate) struct ReversePlan<'s> {
    /// The kernel cache's entry for the kernel alone.
    pub(crate) structure: TypeId,
    pub(crate) pattern: Vec<u32>,
    /// The size of the kernel's element type.
    pub(crate) element_bytes: usize,
    /// The kernel's name (for dumps and profiles) and source, made only
    /// when the cache has not built it yet.
    pub(crate) kernel: Box<dyn Fn() -> (String, String) + 's>,
    /// The arguments up to the grid's size; the group sums, counter and
    /// local memory follow (see [`tail`]).
    pub(crate) args: Vec<KernelArg<'s>>,
    /// Its `1 x 1` variables summed per work-group.
    pub(crate) reduces: usize,
    /// Whether it scatters through global atomics (an index per element).
    pub(crate) scatters: bool,
    /// Bytes of each variable collected in local memory first.
    pub(crate) local_scatters: Vec<usize>,
    /// Its work-group size and the elements it walks.
    pub(crate) group: usize,
    pub(crate) work: usize,
}

/// The group sums of a plan's `1 x 1` variables: `groups x reduces`
/// elements of its type (held as doubles, enough bytes for either).
fn group_sums(plan: &ReversePlan<'_>, groups: usize) -> Result<Option<MatrixCl<f64>>> {
    if plan.reduces == 0 {
        return Ok(None);
    }
    let bytes = groups * plan.reduces * plan.element_bytes;
    MatrixCl::uninitialized(bytes.div_ceil(8).max(1), 1).map(Some)
}

/// The arguments after the grid's size: the group sums and the counter
/// (with `1 x 1` variables), then the local memory for work-groups of
/// `group`, in the order the kernel declares them.
fn tail<'a>(
    plan: &ReversePlan<'_>,
    sums: Option<&'a MatrixCl<f64>>,
    counter: &'a MatrixCl<i32>,
    group: usize,
) -> Vec<KernelArg<'a>> {
    let mut args = Vec::new();
    if let Some(sums) = sums {
        args.push(KernelArg::buffer(sums, Access::Write));
        args.push(KernelArg::buffer(counter, Access::ReadWrite));
    }
    if plan.reduces > 0 || plan.scatters {
        args.push(KernelArg::Local(
            plan.reduces.max(1) * group * plan.element_bytes,
        ));
    }
    if plan.scatters {
        args.push(KernelArg::Local(group * 4));
    }
    args.extend(plan.local_scatters.iter().map(|&b| KernelArg::Local(b)));
    args
}

/// Launches one plan's kernel with enough work-groups to fill the device a
/// few times over; one that fits one work-group may join a sweep.
pub(crate) fn launch_one(mut plan: ReversePlan<'_>) -> Result<()> {
    let rt = Runtime::get()?;
    let compute_units = rt.device_info().compute_units.max(1) as usize;
    let groups = plan.work.div_ceil(plan.group).min(8 * compute_units);
    let pattern = std::mem::take(&mut plan.pattern);
    let kernel = match rt.kernels().fused(plan.structure, pattern, |_key| {
        let (name, source) = (plan.kernel)();
        let compiled = compile_kernel("adjoint", &source, "", &name)?;
        Ok(FusedPlan::Direct(Arc::new(FusedKernel::new(
            compiled, source,
        ))))
    })? {
        FusedPlan::Direct(kernel) => kernel,
        _ => return Ok(()),
    };
    let sums = group_sums(&plan, groups)?;
    let counter = clfuse_core::groups_done_counter(rt)?;
    let tail = tail(&plan, sums.as_ref(), &counter, plan.group);
    let mut args = plan.args;
    args.extend(tail);
    enqueue_joined(
        &kernel,
        &args,
        NdRange::d1(groups * plan.group).with_local(&[plan.group]),
        false,
    )
}
