//! The tiled kernel (`cl/gemm.cl`, GPUs), which the tensor-core path builds
//! too: work-groups of `(TS / WPT)²` work items each compute a `TS x TS`
//! tile of C, staging `TILE_K`-deep slices of A and B in local memory.

use clfuse_core::{ClFloat, DeviceInfo, NdRange};

/// Padding of each staged row on the portable path (up to 2 elements).
pub(crate) const PAD: usize = 2;

/// Why the blocking does not fit the device's work-group and local-memory
/// limits (two staged tiles, A and B, rows padded by `pad`), if it does not.
pub(crate) fn unfit<T: ClFloat>(
    info: &DeviceInfo,
    thread_block_size: usize,
    work_per_thread: usize,
    tile_k: usize,
    pad: usize,
) -> Option<String> {
    let threads = thread_block_size / work_per_thread.max(1);
    let local_bytes = 2 * tile_k * (thread_block_size + pad) * std::mem::size_of::<T>();
    if work_per_thread == 0 || tile_k == 0 || !thread_block_size.is_multiple_of(work_per_thread) {
        Some("thread_block_size must be a multiple of work_per_thread, tile_k > 0".to_string())
    } else if threads * threads > info.max_work_group_size {
        Some(format!(
            "{threads}² work items exceed the device's {}",
            info.max_work_group_size
        ))
    } else if local_bytes as u64 > info.local_mem_bytes {
        Some(format!(
            "{local_bytes} bytes of local memory exceed the device's {}",
            info.local_mem_bytes
        ))
    } else {
        None
    }
}

/// The grid of an `m x n` product in `splits` parts along k, and the build
/// options of the blocking (`extra`: the tensor-core path's flags). A
/// work-group has `(TS / WPT)²` work items, or `rows_of_items` times as many
/// (the tensor-core path's 16 warps: [`tensor_cores::rows_of_items`](super::tensor_cores::rows_of_items)).
pub(crate) fn launch_shape(
    thread_block_size: usize,
    work_per_thread: usize,
    tile_k: usize,
    (m, n, splits): (usize, usize, usize),
    extra: &str,
    rows_of_items: usize,
) -> (NdRange, String) {
    let ts = thread_block_size;
    let rts = ts / work_per_thread;
    let deep = rows_of_items.max(1);
    let threads = if deep > 1 {
        format!(" -D GROUP_THREADS={}", rts * rts * deep)
    } else {
        String::new()
    };
    (
        NdRange::d3([m.div_ceil(ts) * rts, n.div_ceil(ts) * rts * deep, splits]).with_local(&[
            rts,
            rts * deep,
            1,
        ]),
        format!(
            "-D THREAD_BLOCK_SIZE={ts} -D WORK_PER_THREAD={work_per_thread} -D TILE_K={tile_k}{extra}{threads}"
        ),
    )
}
