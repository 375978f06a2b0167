//! Small reverse kernels run together: the reverse pass of a model is
//! mostly steps of a few elements (`1 x 1` sums, scalar priors, parameter
//! blocks), each of which would be a launch of its own, and on a GPU a
//! launch costs the host more than such a kernel costs the device. The
//! tape gathers consecutive steps whose work fits one work-group and runs
//! their kernels as functions of one kernel, in tape order, with a barrier
//! between them: one launch for the run of steps.
//!
//! Every reverse kernel walks its elements in a grid-stride loop and adds
//! its work-groups' sums in the last group to finish, so one work-group
//! runs it unchanged; the barrier makes a step's adjoint writes visible to
//! the next step, which may read them as its seed.

use clfuse_core::{
    Access, FusedKernel, FusedPlan, KernelArg, MatrixCl, NdRange, Result, Runtime, compile_kernel,
    enqueue,
};
use std::any::TypeId;
use std::cell::Cell;
use std::sync::Arc;

/// When the tape runs consecutive small reverse kernels as one launch.
///
/// ```
/// use clfuse_ops::rev::{ReverseSweeps, set_reverse_sweeps};
/// let before = set_reverse_sweeps(ReverseSweeps::Always);
/// // ... gradients on this thread now sweep small steps on any device ...
/// set_reverse_sweeps(before);
/// assert_eq!(ReverseSweeps::default(), ReverseSweeps::OnGpus);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReverseSweeps {
    /// On GPUs, where a launch costs the host more than a small kernel
    /// costs the device; not on CPUs (PoCL), where launches are cheap and
    /// compiling a kernel of many barriers is slow.
    #[default]
    OnGpus,
    /// On every device.
    Always,
    /// Never: every step launches its own kernel.
    Never,
}

thread_local! {
    static SWEEPS: Cell<ReverseSweeps> = const { Cell::new(ReverseSweeps::OnGpus) };
}

/// Sets when this thread's reverse passes sweep small steps together, and
/// returns the previous setting (see [`ReverseSweeps`]).
///
/// ```
/// use clfuse_ops::rev::{ReverseSweeps, set_reverse_sweeps};
/// let before = set_reverse_sweeps(ReverseSweeps::Never);
/// assert_eq!(set_reverse_sweeps(before), ReverseSweeps::Never);
/// ```
pub fn set_reverse_sweeps(sweeps: ReverseSweeps) -> ReverseSweeps {
    SWEEPS.with(|s| s.replace(sweeps))
}

/// Whether this thread's reverse pass on the current device sweeps.
pub(crate) fn enabled() -> Result<bool> {
    Ok(match SWEEPS.with(Cell::get) {
        ReverseSweeps::Always => true,
        ReverseSweeps::Never => false,
        ReverseSweeps::OnGpus => Runtime::get()?.device_info().is_gpu,
    })
}

/// Most steps in one sweep: its compile time grows with them.
const MAX_STEPS: usize = 16;

/// Most arguments of one sweep kernel: each takes at most 8 bytes, and
/// every device takes 1024 bytes of them (OpenCL's least
/// `CL_DEVICE_MAX_PARAMETER_SIZE`; NVIDIA's is 4352, AMD's 1024).
const MAX_ARGS: usize = 120;

/// One step's reverse kernel, ready to launch alone or with its neighbours.
pub(crate) struct ReversePlan<'s> {
    /// The kernel cache's entry for the kernel alone.
    pub(crate) structure: TypeId,
    pub(crate) pattern: Vec<u32>,
    /// The kernel's element type (`double`, `float`) and its size.
    pub(crate) cl_type: &'static str,
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

impl ReversePlan<'_> {
    /// Whether one work-group does all of its work in one pass.
    pub(crate) fn fits_one_group(&self) -> bool {
        self.work <= self.group
    }

    /// Its kernel's arguments, those [`tail`] adds included.
    fn arg_count(&self) -> usize {
        let sums = if self.reduces > 0 { 2 } else { 0 };
        let scratch = usize::from(self.reduces > 0 || self.scatters);
        let indices = usize::from(self.scatters);
        self.args.len() + sums + scratch + indices + self.local_scatters.len()
    }

    /// Bytes of local memory it takes with work-groups of `group`.
    fn local_bytes(&self, group: usize) -> usize {
        let scratch = if self.reduces > 0 || self.scatters {
            self.reduces.max(1) * group * self.element_bytes
        } else {
            0
        };
        let indices = if self.scatters { group * 4 } else { 0 };
        scratch + indices + self.local_scatters.iter().sum::<usize>()
    }
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

/// Launches one plan's kernel alone, with enough work-groups to fill the
/// device a few times over.
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
    let counter = crate::outputs::groups_done_counter(rt)?;
    let tail = tail(&plan, sums.as_ref(), &counter, plan.group);
    let mut args = plan.args;
    args.extend(tail);
    enqueue(
        kernel.compiled(),
        &args,
        NdRange::d1(groups * plan.group).with_local(&[plan.group]),
    )?;
    Ok(())
}

/// Whether `next` may join `sweep` (whose steps run with one work-group):
/// at most [`MAX_STEPS`] steps and [`MAX_ARGS`] arguments, their local
/// memory together within half the device's.
pub(crate) fn joins(sweep: &[ReversePlan<'_>], next: &ReversePlan<'_>) -> Result<bool> {
    let args: usize = sweep.iter().chain([next]).map(ReversePlan::arg_count).sum();
    if sweep.len() >= MAX_STEPS || args > MAX_ARGS {
        return Ok(false);
    }
    let rt = Runtime::get()?;
    let budget = rt.device_info().local_mem_bytes as usize / 2;
    let group = sweep
        .iter()
        .map(|p| p.group)
        .chain([next.group])
        .min()
        .unwrap_or(next.group);
    let bytes: usize = sweep
        .iter()
        .chain([next])
        .map(|p| p.local_bytes(group))
        .sum();
    Ok(bytes <= budget)
}

/// Marks the sweep kernels' entries in the kernel cache.
struct SweepKernel;

/// Sweeps whose kernel did not build (their cache patterns).
static UNBUILT: std::sync::Mutex<std::collections::BTreeSet<Vec<u32>>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Launches the plans (tape order: newest step first): alone when there is
/// one, else as one kernel of one work-group.
pub(crate) fn launch(plans: Vec<ReversePlan<'_>>) -> Result<()> {
    if plans.len() <= 1 {
        return plans.into_iter().try_for_each(launch_one);
    }
    let rt = Runtime::get()?;
    let group = plans.iter().map(|p| p.group).min().unwrap_or(1);
    // Names and sources are made only when the cache has not built the
    // sweep yet. A sweep the driver could not build runs one launch per
    // step, then and on later calls (remembered in `UNBUILT`).
    let built = rt
        .kernels()
        .fused(TypeId::of::<SweepKernel>(), sweep_pattern(&plans), |_key| {
            let pattern = sweep_pattern(&plans);
            if UNBUILT.lock().is_ok_and(|set| set.contains(&pattern)) {
                return Err(unbuildable());
            }
            let (names, sources): (Vec<String>, Vec<String>) =
                plans.iter().map(|p| (p.kernel)()).unzip();
            let names: Vec<&str> = names
                .iter()
                .map(|n| n.trim_start_matches("adjoint_"))
                .collect();
            let name = format!("adjoints_{}", names.join("_"));
            let compiled = sweep_source(&sources)
                .and_then(|source| Ok((compile_kernel(SWEEP, &source, "", &name)?, source)));
            match compiled {
                Ok((compiled, source)) => Ok(FusedPlan::Direct(Arc::new(FusedKernel::new(
                    compiled, source,
                )))),
                Err(e) => {
                    if let Ok(mut set) = UNBUILT.lock() {
                        set.insert(pattern);
                    }
                    Err(e)
                }
            }
        });
    let kernel = match built {
        Ok(FusedPlan::Direct(kernel)) => kernel,
        Ok(_) => return Ok(()),
        Err(clfuse_core::Error::Build { .. } | clfuse_core::Error::Unsupported { .. }) => {
            return plans.into_iter().try_for_each(launch_one);
        }
        Err(e) => return Err(e),
    };
    let counter = crate::outputs::groups_done_counter(rt)?;
    let sums = plans
        .iter()
        .map(|p| group_sums(p, 1))
        .collect::<Result<Vec<_>>>()?;
    let mut args = Vec::new();
    for (mut plan, sums) in plans.into_iter().zip(&sums) {
        let tail = tail(&plan, sums.as_ref(), &counter, group);
        args.append(&mut plan.args);
        args.extend(tail);
    }
    enqueue(
        kernel.compiled(),
        &args,
        NdRange::d1(group).with_local(&[group]),
    )?;
    Ok(())
}

/// The kernel cache's key of a sweep: per step its element type, then its
/// kernel's key with its length.
fn sweep_pattern(plans: &[ReversePlan<'_>]) -> Vec<u32> {
    let mut pattern = Vec::new();
    for plan in plans {
        pattern.push(match plan.cl_type {
            "double" => 0,
            "float" => 1,
            _ => 2,
        });
        pattern.push(plan.pattern.len() as u32);
        pattern.extend(&plan.pattern);
    }
    pattern
}

/// The error of a sweep whose kernel did not build before.
fn unbuildable() -> clfuse_core::Error {
    clfuse_core::Error::Unsupported {
        what: "rev: this sweep's kernel did not build before".into(),
    }
}

/// The sweep kernel's name.
const SWEEP: &str = "adjoints";

/// One reverse kernel's source taken apart: its pragmas and helpers, its
/// parameters and its body.
struct KernelParts<'a> {
    preamble: &'a str,
    params: Vec<&'a str>,
    body: &'a str,
}

/// Splits a generated reverse kernel (`__kernel void adjoint(...) {`).
fn parts(source: &str) -> Result<KernelParts<'_>> {
    let malformed = || clfuse_core::Error::Unsupported {
        what: "rev: a reverse kernel's source is not in the form the sweep composes".into(),
    };
    let header = "__kernel void adjoint(";
    let start = source.find(header).ok_or_else(malformed)?;
    let rest = &source[start + header.len()..];
    let close = rest.find(") {").ok_or_else(malformed)?;
    let body = rest[close + 3..].trim_end();
    let body = body.strip_suffix('}').ok_or_else(malformed)?;
    Ok(KernelParts {
        preamble: &source[..start],
        params: rest[..close]
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect(),
        body,
    })
}

/// A parameter's name: its last word.
fn param_name(param: &str) -> &str {
    param
        .rsplit(|c: char| c.is_whitespace() || c == '*')
        .next()
        .unwrap_or(param)
}

/// The sweep kernel: each reverse kernel as a function `step_k` (pragmas
/// and helpers once), called in order by one kernel whose parameters are
/// theirs, renamed `_k`, with a barrier between calls. `restrict` is
/// dropped: a later step reads as its seed what an earlier one wrote.
fn sweep_source(sources: &[String]) -> Result<String> {
    let parts: Vec<KernelParts<'_>> = sources.iter().map(|s| parts(s)).collect::<Result<_>>()?;
    let mut pragmas: Vec<&str> = Vec::new();
    let mut helpers: Vec<&str> = Vec::new();
    for p in &parts {
        for line in p.preamble.lines().filter(|l| l.starts_with("#pragma")) {
            if !pragmas.contains(&line) {
                pragmas.push(line);
            }
        }
        let rest: Vec<&str> = p
            .preamble
            .lines()
            .filter(|l| !l.starts_with("#pragma"))
            .collect();
        let rest = rest.join("\n");
        for block in rest.split("\n\n").map(str::trim).filter(|b| !b.is_empty()) {
            if !helpers.contains(&block) {
                // A block borrowed from `rest` would not outlive it: keep
                // the one inside the source instead.
                if let Some(at) = p.preamble.find(block) {
                    helpers.push(&p.preamble[at..at + block.len()]);
                }
            }
        }
    }
    let mut out = String::new();
    for pragma in &pragmas {
        out.push_str(pragma);
        out.push('\n');
    }
    out.push('\n');
    for helper in &helpers {
        out.push_str(helper);
        out.push_str("\n\n");
    }
    let unrestricted = |p: &str| p.replace(" restrict ", " ");
    for (k, p) in parts.iter().enumerate() {
        let params: Vec<String> = p.params.iter().map(|q| unrestricted(q)).collect();
        out.push_str(&format!(
            "// Step {k} of the sweep, newest first.\nvoid step_{k}(\n    {}) {{{}}}\n\n",
            params.join(",\n    "),
            p.body.replace(" restrict ", " ")
        ));
    }
    let mut params = Vec::new();
    let mut calls = Vec::new();
    for (k, p) in parts.iter().enumerate() {
        let names: Vec<String> = p
            .params
            .iter()
            .map(|q| format!("{}_{k}", param_name(q)))
            .collect();
        for (q, name) in p.params.iter().zip(&names) {
            let declared = unrestricted(q);
            let old = param_name(q);
            let cut = declared.len() - old.len();
            params.push(format!("{}{name}", &declared[..cut]));
        }
        calls.push(format!("  step_{k}({});", names.join(", ")));
    }
    out.push_str(&format!(
        "__kernel void {SWEEP}(\n    {}) {{\n{}\n}}\n",
        params.join(",\n    "),
        calls.join("\n  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);\n")
    ));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void adjoint(
    __global const double* restrict result_adjoint,
    __global double* adjoint0,
    int rows,
    int cols) {
  adjoint0[0] += result_adjoint[0];
}
";

    const B: &str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

// Adds `value` to `*address`.
inline void add(__global double* address, double value) {
  *address += value;
}

__kernel void adjoint(
    __global const double* restrict result_adjoint,
    __global double* adjoint0,
    __local double* scratch) {
  add(adjoint0, result_adjoint[0]);
}
";

    #[test]
    fn steps_become_functions_called_in_order_with_a_barrier_between() -> Result<()> {
        let source = sweep_source(&[A.to_string(), B.to_string(), A.to_string()])?;
        assert_eq!(
            source
                .matches("#pragma OPENCL EXTENSION cl_khr_fp64")
                .count(),
            1
        );
        assert_eq!(source.matches("inline void add(").count(), 1);
        assert!(!source.contains("restrict"));
        for k in 0..3 {
            assert!(source.contains(&format!("void step_{k}(")));
        }
        assert!(source.contains("__local double* scratch_1"));
        assert!(source.contains("  step_0(result_adjoint_0, adjoint0_0, rows_0, cols_0);"));
        assert_eq!(source.matches("barrier(").count(), 2);
        assert!(source.find("step_0(result").unwrap() < source.find("step_2(result").unwrap());
        Ok(())
    }

    #[test]
    fn a_source_in_another_form_is_an_error_not_a_panic() {
        assert!(sweep_source(&["__kernel void other() {}".into()]).is_err());
    }
}
