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

/// How many times `(TS / WPT)²` work items a tensor-core work-group has:
/// 2 (16 warps in a 4 x 4 grid of 32 x 32 blocks, 80 registers each on an
/// H200) for lower-only products on 128 x 128 tiles where the device allows
/// 512 work items, else 1 (8 warps in a 4 x 2 grid of 32 x 64 blocks). On an
/// H200 the 16 warps took the Cholesky at n = 16384 from 46.8 to 46.0 ms
/// (its updates are lower-only `A·Bᵀ`) and left 4096 and 8192 alike, but
/// made square products 1-8% slower (DGEMM 2048 to 8192), so only
/// lower-only ones take them.
pub(crate) fn rows_of_items(
    max_work_group_size: usize,
    thread_block_size: usize,
    lower_only: bool,
) -> usize {
    if lower_only && thread_block_size == 128 && max_work_group_size >= 512 {
        2
    } else {
        1
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::tiled;
    use clfuse_core::NdRange;

    #[test]
    fn lower_only_products_on_large_tiles_take_sixteen_warps() {
        assert_eq!(rows_of_items(1024, 128, true), 2);
        assert_eq!(rows_of_items(1024, 128, false), 1);
        assert_eq!(rows_of_items(1024, 64, true), 1);
        // A device that cannot run 512 work items keeps 8 warps.
        assert_eq!(rows_of_items(256, 128, true), 1);
    }

    #[test]
    fn sixteen_warps_launch_twice_the_work_items_of_a_tile() {
        // 1000 x 300 in 2 parts: 8 x 3 tiles of 128, 16 x 16 or 16 x 32 items.
        let (range, options) = tiled::launch_shape(128, 8, 8, (1000, 300, 2), FLAGS, 2);
        assert_eq!(
            range,
            NdRange::d3([8 * 16, 3 * 32, 2]).with_local(&[16, 32, 1])
        );
        assert!(
            options.ends_with("-D TENSOR_CORES -D GROUP_THREADS=512"),
            "{options}"
        );
        let (range, options) = tiled::launch_shape(128, 8, 8, (1000, 300, 2), FLAGS, 1);
        assert_eq!(
            range,
            NdRange::d3([8 * 16, 3 * 16, 2]).with_local(&[16, 16, 1])
        );
        assert!(!options.contains("GROUP_THREADS"), "{options}");
    }
}
