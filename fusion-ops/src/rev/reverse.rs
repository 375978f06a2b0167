//! A step's reverse kernel: one launch that adds `seed * partial` into every
//! operand's adjoint, where the seed is the result's adjoint at the element
//! the work item's grid element went into.

use crate::rev::forward::{Mode, PartialSpec, Root};
use crate::rev::tape::Step;
use crate::rev::var::VarData;
use clfuse_core::{
    Access, ClType, FusedKernel, FusedPlan, KernelArg, MatrixCl, NdRange, Result, Runtime,
    compile_kernel, enqueue,
};
use std::any::TypeId;
use std::rc::Rc;
use std::sync::Arc;

/// The reverse step of an element-wise (or column-summed) expression.
pub(crate) struct ElementwiseStep<T: ClType> {
    pub(crate) result: Rc<VarData<T>>,
    pub(crate) root: Root,
    pub(crate) grid: (usize, usize),
    pub(crate) specs: Vec<PartialSpec<T>>,
}

/// Sets a result's adjoint to one: the seed of a reverse pass.
pub(crate) fn seed_one<T: ClType>(adjoint: &MatrixCl<T>) -> Result<()> {
    adjoint.fill(T::one())
}

/// Compare-and-swap addition for `cl_type` (`double` needs 64-bit atomics).
fn atomic_add_helper(cl_type: &str) -> String {
    let (bits, cas) = if cl_type == "double" {
        ("ulong", "atom_cmpxchg")
    } else {
        ("uint", "atomic_cmpxchg")
    };
    format!(
        "// Adds `value` to `*address`; other work items may add to it at the same time.
inline void atomic_add_{cl_type}(volatile __global {cl_type}* address, {cl_type} value) {{
  union {{
    {bits} bits;
    {cl_type} value;
  }} expected, desired;
  do {{
    expected.value = *address;
    desired.value = expected.value + value;
  }} while ({cas}((volatile __global {bits}*)address, expected.bits, desired.bits) != expected.bits);
}}"
    )
}

/// The OpenCL C of the reverse kernel for a root and a list of partial modes.
pub(crate) fn reverse_source(cl_type: &str, root: Root, modes: &[Mode]) -> String {
    let mut out = String::new();
    if cl_type == "double" {
        out.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    }
    let atomics = modes.iter().any(|m| *m != Mode::Identity);
    if atomics && cl_type == "double" {
        out.push_str("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n");
    }
    out.push('\n');
    if atomics {
        out.push_str(&atomic_add_helper(cl_type));
        out.push_str("\n\n");
    }
    let reduces = modes.contains(&Mode::Reduce);
    let mut params = vec![format!("__global const {cl_type}* restrict result_adjoint")];
    for (k, mode) in modes.iter().enumerate() {
        params.push(format!("__global const {cl_type}* restrict partial{k}"));
        params.push(format!("__global {cl_type}* adjoint{k}"));
        if *mode == Mode::Scatter {
            params.push(format!("__global const int* restrict index{k}"));
        }
    }
    params.push("int rows".into());
    params.push("int cols".into());
    if reduces {
        params.push(format!("__local {cl_type}* scratch"));
    }
    out.push_str(&crate::generator::kernel_header("adjoint", &params));
    let seed_at = match root {
        Root::Elementwise => "element",
        Root::ColwiseSum => "element / rows",
    };
    // A grid-stride loop over a bounded number of work-groups: partials of
    // 1 x 1 variables are summed per work item, then per group, so the
    // number of atomic adds per variable is the number of groups.
    for (k, mode) in modes.iter().enumerate() {
        if *mode == Mode::Reduce {
            out.push_str(&format!("  {cl_type} sum{k} = 0;\n"));
        }
    }
    out.push_str(&format!(
        "  for (int element = get_global_id(0); element < rows * cols; element += get_global_size(0)) {{
    const {cl_type} seed = result_adjoint[{seed_at}];
"
    ));
    for (k, mode) in modes.iter().enumerate() {
        match mode {
            Mode::Identity => out.push_str(&format!(
                "    adjoint{k}[element] += seed * partial{k}[element];\n"
            )),
            Mode::Scatter => out.push_str(&format!(
                "    const int target{k} = index{k}[element];
    if (target{k} >= 0) {{
      atomic_add_{cl_type}(&adjoint{k}[target{k}], seed * partial{k}[element]);
    }}
"
            )),
            Mode::Reduce => out.push_str(&format!("    sum{k} += seed * partial{k}[element];\n")),
        }
    }
    out.push_str("  }\n");
    if reduces {
        out.push_str(
            "  const int lid = get_local_id(0);\n  const int lsize = get_local_size(0);\n",
        );
    }
    for (k, mode) in modes.iter().enumerate() {
        if *mode == Mode::Reduce {
            out.push_str(&format!(
                "  // The work-group adds its sum for the 1 x 1 variable once.
  scratch[lid] = sum{k};
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = lsize / 2; step > 0; step /= 2) {{
    if (lid < step) {{
      scratch[lid] += scratch[lid + step];
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  if (lid == 0) {{
    atomic_add_{cl_type}(adjoint{k}, scratch[0]);
  }}
  barrier(CLK_LOCAL_MEM_FENCE);
"
            ));
        }
    }
    out.push_str("}\n");
    out
}

/// Marks the reverse kernels' entries in the kernel cache.
struct ReverseKernel<T>(T);

impl<T: ClType> Step for ElementwiseStep<T> {
    fn reverse(&self) -> Result<()> {
        let (rows, cols) = self.grid;
        let elements = rows * cols;
        if elements == 0 {
            return Ok(());
        }
        let rt = Runtime::get()?;
        let modes: Vec<Mode> = self.specs.iter().map(|s| s.mode).collect();
        let mut pattern = vec![self.root.code()];
        pattern.extend(modes.iter().map(|m| m.code()));
        let plan = rt
            .kernels()
            .fused(TypeId::of::<ReverseKernel<T>>(), pattern, |_key| {
                let source = reverse_source(T::CL_NAME, self.root, &modes);
                let name = format!(
                    "adjoint_{}_{}",
                    T::CL_NAME,
                    modes
                        .iter()
                        .map(|m| m.code().to_string())
                        .collect::<String>()
                );
                let compiled = compile_kernel("adjoint", &source, "", &name)?;
                Ok(FusedPlan::Direct(Arc::new(FusedKernel::new(
                    compiled, source,
                ))))
            })?;
        let FusedPlan::Direct(kernel) = plan else {
            return Ok(());
        };
        let mut args = vec![KernelArg::buffer(
            self.result.adjoint_matrix(),
            Access::Read,
        )];
        for spec in &self.specs {
            args.push(KernelArg::buffer(&spec.partial, Access::Read));
            args.push(spec.var.adjoint_arg());
            if let Some(index) = &spec.index {
                args.push(KernelArg::buffer(index, Access::Read));
            }
        }
        args.push(KernelArg::Int(rows as i32));
        args.push(KernelArg::Int(cols as i32));
        let info = rt.device_info();
        let group = work_group_size(info.max_work_group_size);
        if modes.contains(&Mode::Reduce) {
            args.push(KernelArg::Local(group * std::mem::size_of::<T>()));
        }
        // Enough groups to fill the device a few times over; each work item
        // then walks several elements.
        let max_groups = 8 * info.compute_units.max(1) as usize;
        let global = elements.div_ceil(group).min(max_groups) * group;
        enqueue(
            kernel.compiled(),
            &args,
            NdRange::d1(global).with_local(&[group]),
        )?;
        Ok(())
    }
}

/// A power of two up to 256 that the device accepts.
fn work_group_size(max: usize) -> usize {
    let mut size = 256;
    while size > max.max(1) {
        size /= 2;
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_groups_are_powers_of_two_within_the_device_limit() {
        assert_eq!(work_group_size(1024), 256);
        assert_eq!(work_group_size(200), 128);
        assert_eq!(work_group_size(1), 1);
        assert_eq!(work_group_size(0), 1);
    }

    #[test]
    fn identity_partials_need_no_atomics() {
        let source = reverse_source("double", Root::Elementwise, &[Mode::Identity]);
        assert!(!source.contains("atom"));
        let source = reverse_source("double", Root::ColwiseSum, &[Mode::Identity, Mode::Scatter]);
        assert!(source.contains("cl_khr_int64_base_atomics"));
        assert!(source.contains("result_adjoint[element / rows]"));
    }
}
