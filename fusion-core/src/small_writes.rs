//! Small fills and writes as kernels: a fill of a few thousand elements and
//! a write of a few hundred values (a sampler's position) queue a kernel of
//! one work-group, whose arguments carry the values, instead of a transfer.
//! The host then need not wait for a write (its data is copied when the
//! launch is queued), and on GPUs the kernel joins the thread's sweep
//! ([`crate::sweep`]) instead of costing a command of its own.

use crate::cl_type::ClType;
use crate::compile::compile_kernel_for;
use crate::error::{Error, Result};
use crate::kernel_cache::{FusedKernel, FusedPlan};
use crate::launch::{KernelArg, Lanes16, NdRange};
use crate::runtime::Runtime;
use crate::sweep::{join_or_enqueue, sweep_group, sweeps_on};
use std::any::TypeId;
use std::sync::Arc;

/// Most elements a fill takes as a sweep's member: one work-group loops
/// over them.
const MAX_FILL_IN_SWEEP: usize = 1 << 14;

/// Values one write kernel carries as arguments: at most four vectors of
/// sixteen (512 bytes of doubles, well within the 1 KiB of arguments
/// OpenCL guarantees).
const VALUES_PER_KERNEL: usize = 64;

/// Values per vector argument ([`Lanes16`]): on NVIDIA's driver every
/// argument costs the host time at each launch, so a position of 26
/// values goes as two `double16`s (5 arguments) instead of 32 scalars (35).
const LANES: usize = 16;

/// Most values a write sends as kernel arguments (16 kernels, a full sweep).
pub(crate) const MAX_VALUES_AS_ARGUMENTS: usize = 16 * VALUES_PER_KERNEL;

/// Marks the fill kernels' entries in the kernel cache.
struct FillKernel<T>(std::marker::PhantomData<T>);

/// Marks the write kernels' entries in the kernel cache.
struct WriteKernel<T>(std::marker::PhantomData<T>);

/// The OpenCL C prelude a kernel over `T` needs.
fn pragma<T: ClType>() -> &'static str {
    if T::NEEDS_FP64 {
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\n"
    } else {
        ""
    }
}

/// `value` as a kernel argument of `T`'s OpenCL type (`None`: a type the
/// kernels here do not take).
fn scalar<'a, T: ClType>(value: T) -> Option<KernelArg<'a>> {
    match T::CL_NAME {
        "double" => Some(KernelArg::Double(value.to_f64())),
        "float" => Some(KernelArg::Float(value.to_f64() as f32)),
        "int" => Some(KernelArg::Int(value.to_f64() as i32)),
        _ => None,
    }
}

/// The kernel cached under `marker` (and `variant` of it) for `rt`'s device, built from `source`
/// on a miss; `None` when the driver cannot build it (the caller does
/// without).
fn kernel(
    rt: &'static Runtime,
    (marker, variant): (TypeId, u32),
    name: &str,
    dump_name: &str,
    source: impl FnOnce() -> String,
) -> Result<Option<Arc<FusedKernel>>> {
    let built = rt.kernels().fused(marker, vec![variant], |_key| {
        let source = source();
        let compiled = compile_kernel_for(rt, name, &source, "", dump_name)?;
        Ok(FusedPlan::Direct(Arc::new(FusedKernel::new(
            compiled, source,
        ))))
    });
    match built {
        Ok(FusedPlan::Direct(kernel)) => Ok(Some(kernel)),
        Ok(FusedPlan::ViaTemporaries) | Err(Error::Build { .. } | Error::Unsupported { .. }) => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// One work-group of the sweep's size.
fn one_group(rt: &Runtime) -> NdRange {
    let group = sweep_group(rt);
    NdRange::d1(group).with_local(&[group])
}

/// Fills `target` (a buffer argument of `n` elements of `T`, written) with `value` by a kernel that joins the device's sweep,
/// when this thread's launches sweep and the matrix is small: a fill
/// between small steps (an adjoint zeroed) then costs no launch of its
/// own. `false` when it did not (the caller fills as usual).
pub(crate) fn fill_joined<T: ClType>(
    target: KernelArg<'_>,
    n: usize,
    value: T,
    rt: &'static Runtime,
) -> Result<bool> {
    if n == 0 || n > MAX_FILL_IN_SWEEP || !sweeps_on(rt) {
        return Ok(false);
    }
    let Some(value) = scalar(value) else {
        return Ok(false);
    };
    let ty = T::CL_NAME;
    let source = || {
        format!(
            "{}__kernel void fill(__global {ty}* restrict x, {ty} value, int n) {{\n  \
             for (int i = get_local_id(0); i < n; i += get_local_size(0)) {{\n    \
             x[i] = value;\n  }}\n}}\n",
            pragma::<T>()
        )
    };
    let marker = TypeId::of::<FillKernel<T>>();
    let Some(kernel) = kernel(rt, (marker, 0), "fill", &format!("fill_{ty}"), source)? else {
        return Ok(false);
    };
    let args = [target, value, KernelArg::Int(n as i32)];
    join_or_enqueue(&kernel, &args, one_group(rt), false, false)?;
    Ok(true)
}

/// `values` (at most sixteen, the rest zero) as one vector argument of
/// `T`'s OpenCL type (`None`: a type the kernels here do not take).
fn lanes<T: ClType>(values: &[T]) -> Option<Lanes16> {
    let lane = |i: usize| values.get(i).map_or(0.0, |v| v.to_f64());
    match T::CL_NAME {
        "double" => Some(Lanes16::Double(std::array::from_fn(lane))),
        "float" => Some(Lanes16::Float(std::array::from_fn(|i| lane(i) as f32))),
        "int" => Some(Lanes16::Int(std::array::from_fn(|i| lane(i) as i32))),
        _ => None,
    }
}

/// The source of the kernel that stores up to `vectors` x 16 values of
/// `ty`, passed as vector arguments, at `x[offset..offset + count]`.
fn write_source(ty: &str, vectors: usize, pragma: &str) -> String {
    let params: Vec<String> = (0..vectors).map(|v| format!("{ty}16 v{v}")).collect();
    let stores: String = (0..vectors * LANES)
        .map(|i| {
            format!(
                "    if ({i} < count) x[offset + {i}] = v{}.s{:x};\n",
                i / LANES,
                i % LANES
            )
        })
        .collect();
    format!(
        "{pragma}// Stores up to {} values, passed as vectors of 16, at x[offset..].\n\
         __kernel void write_values(__global {ty}* restrict x, int offset, int count,\n    \
         {}) {{\n  if (get_local_id(0) == 0) {{\n{stores}  }}\n}}\n",
        vectors * LANES,
        params.join(", ")
    )
}

/// Writes `data` (at most [`MAX_VALUES_AS_ARGUMENTS`] values) into
/// `target` (a buffer argument as long, written) by kernels whose
/// arguments carry the values, sixteen to a vector argument, without
/// waiting. `false` when it did not (an element type or a device the
/// kernels do not serve; the caller writes as usual).
pub(crate) fn write_as_arguments<T: ClType>(
    target: KernelArg<'_>,
    data: &[T],
    rt: &'static Runtime,
) -> Result<bool> {
    if data.is_empty() || data.len() > MAX_VALUES_AS_ARGUMENTS || lanes::<T>(&[]).is_none() {
        return Ok(false);
    }
    let ty = T::CL_NAME;
    // 1, 2 or 4 vectors: the fewest that hold the data, as a power of two
    // (few kernels to build).
    let vectors = data
        .len()
        .div_ceil(LANES)
        .next_power_of_two()
        .min(VALUES_PER_KERNEL / LANES);
    let slots = vectors * LANES;
    let marker = TypeId::of::<WriteKernel<T>>();
    let Some(kernel) = kernel(
        rt,
        (marker, slots as u32),
        "write_values",
        &format!("write_values_{ty}_{slots}"),
        || write_source(ty, vectors, pragma::<T>()),
    )?
    else {
        return Ok(false);
    };
    for (chunk, values) in data.chunks(slots).enumerate() {
        let mut args = Vec::with_capacity(3 + vectors);
        args.push(target);
        args.push(KernelArg::Int((chunk * slots) as i32));
        args.push(KernelArg::Int(values.len() as i32));
        for v in 0..vectors {
            let part = values.get(v * LANES..).unwrap_or(&[]);
            args.extend(lanes(&part[..part.len().min(LANES)]).map(KernelArg::Lanes));
        }
        join_or_enqueue(&kernel, &args, one_group(rt), false, false)?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_kernel_stores_each_lane_of_its_vectors_in_order() {
        let source = write_source("double", 2, "");
        assert!(source.contains("int count,\n    double16 v0, double16 v1) {"));
        assert!(source.contains("if (0 < count) x[offset + 0] = v0.s0;"));
        assert!(source.contains("if (15 < count) x[offset + 15] = v0.sf;"));
        assert!(source.contains("if (16 < count) x[offset + 16] = v1.s0;"));
        assert!(source.contains("if (31 < count) x[offset + 31] = v1.sf;"));
        assert!(!source.contains("32 < count"));
    }

    #[test]
    fn lanes_past_the_values_are_zero() {
        assert_eq!(
            lanes(&[1.5f64, -2.0]),
            Some(Lanes16::Double(std::array::from_fn(|i| match i {
                0 => 1.5,
                1 => -2.0,
                _ => 0.0,
            })))
        );
        assert_eq!(lanes(&[3i32]).map(|l| l.cl_type()), Some("int16"));
    }
}
