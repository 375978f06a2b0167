//! The direct kernel (`cl/gemm_direct.cl`, CPUs): no local memory and no
//! barriers; each work item computes a `rows x cols` block of C straight
//! from global memory.

use clfuse_core::NdRange;

/// Why the register block is not sane, if it is not.
pub(crate) fn unfit(rows: usize, cols: usize) -> Option<String> {
    (rows == 0 || cols == 0 || rows * cols > 128)
        .then(|| format!("rows and cols must be >= 1 with rows * cols <= 128, got {rows} x {cols}"))
}

/// The grid of an `m x n` product in `splits` parts along k, and the build
/// options of the blocking.
pub(crate) fn launch_shape(
    rows: usize,
    cols: usize,
    (m, n, splits): (usize, usize, usize),
) -> (NdRange, String) {
    // Small work-groups: a CPU runtime runs a work-group on one
    // core, and its default can be the whole grid of a small
    // product (2 x 2 measured best on PoCL, BENCHMARKS.md).
    const GROUP: usize = 2;
    let grid = |len: usize, block: usize| len.div_ceil(block).div_ceil(GROUP) * GROUP;
    (
        NdRange::d3([grid(m, rows), grid(n, cols), splits]).with_local(&[GROUP, GROUP, 1]),
        format!("-D DIRECT_ROWS={rows} -D DIRECT_COLS={cols}"),
    )
}

/// Parts of k the direct kernel takes at least: each work item walks one
/// column of A per k, a page apart in a large matrix, and more pages than
/// the TLB holds slowed n = 2048 on PoCL 2x (9.0 → 19.0 GFLOP/s with two
/// parts of at most 1024).
pub(crate) fn min_splits(k: usize) -> usize {
    k.div_ceil(1024)
}
