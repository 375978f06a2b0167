//! The FP64 tensor-core path: `cl/gemm.cl` built with `TENSOR_CORES`
//! (entry point `gemm_dmma`), the tiled kernel's staging with `mma`
//! instructions for the arithmetic, on NVIDIA devices of compute
//! capability 8.0 and 9.0+. Its grid is the tiled kernel's.

use clfuse_core::{DeviceInfo, Runtime};

/// Padding of each staged row on the tensor-core path.
pub(crate) const PAD: usize = 4;

/// Why the blocking cannot run on the tensor cores of this device (or on
/// none), if it cannot: 8 warps of 4 x 2 whole 16 x 8 fragments.
pub(crate) fn unfit(
    info: &DeviceInfo,
    thread_block_size: usize,
    work_per_thread: usize,
    tile_k: usize,
) -> Option<String> {
    let fits = info.has_fp64_tensor_cores()
        && work_per_thread != 0
        && thread_block_size / work_per_thread == 16
        && thread_block_size.is_multiple_of(64)
        && tile_k.is_multiple_of(4);
    (!fits).then(|| {
        format!(
            "tensor cores need an NVIDIA device of compute capability 8.0 or 9.0+ (this one: {:?}), 16 x 16 work items (thread_block_size / work_per_thread = 16), thread_block_size a multiple of 64 (each of the 4 x 2 warps owns whole 16 x 8 fragments) and tile_k of 4",
            info.nv_compute_capability
        )
    })
}

/// The build options that select the tensor-core path on compute
/// capability 9.0 and later (the f64 `m16n8k4` and `m16n8k16` shapes).
pub(crate) const FLAGS: &str = " -D TENSOR_CORES";

/// The same on 8.x devices, which take `m8n8k4` halves.
pub(crate) const FLAGS_8X: &str = " -D TENSOR_CORES -D DMMA_M8N8K4";

/// The build options that select the tensor-core path on this device.
pub(crate) fn build_flags() -> &'static str {
    if dmma_8x8x4_only() { FLAGS_8X } else { FLAGS }
}

/// Whether the device's FP64 tensor cores take only the `m8n8k4` shape
/// (compute capability 8.x); 9.0 and later also have `m16n8k4` and
/// `m16n8k16`.
fn dmma_8x8x4_only() -> bool {
    Runtime::get().is_ok_and(|rt| matches!(rt.device_info().nv_compute_capability, Some((8, _))))
}
