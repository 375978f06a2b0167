//! The one way into the GEMM kernels: a product's options
//! ([`MultiplyOptions`]), its checks, configuration and split-k, the grid
//! and build options of the kernel that runs it ([`GemmSetup`]), and the
//! launch ([`gemm_into`]).

use super::choice::resolve;
use super::operand::{Operand, or_stand_in};
use super::{direct, tensor_cores, tiled};
use crate::basic::{Block, add_batch, int};
use crate::launchers as cl;
use clfuse_core::{ClFloat, Error, GemmConfig, MatrixCl, NdRange, Result, Runtime};

/// The entry points of the GEMM sources: which kernel a configuration runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// `gemm` in `gemm.cl`.
    Tiled,
    /// `gemm_dmma` in `gemm.cl` built with `TENSOR_CORES`.
    TensorCores,
    /// `gemm_direct` in `gemm_direct.cl`.
    Direct,
}

impl Kernel {
    /// The entry point's name (a profile says which path ran).
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Tiled => "gemm",
            Kernel::TensorCores => "gemm_dmma",
            Kernel::Direct => "gemm_direct",
        }
    }

    /// Enqueues the kernel.
    fn enqueue<T: ClFloat>(
        self,
        range: NdRange,
        options: &str,
        args: GemmArgs<'_, T>,
    ) -> Result<()> {
        match self {
            Kernel::Tiled => cl::gemm::<T>().launch_with_options(range, options, args)?,
            Kernel::TensorCores => {
                cl::gemm_dmma::<T>().launch_with_options(range, options, args)?
            }
            Kernel::Direct => cl::gemm_direct::<T>().launch_with_options(range, options, args)?,
        };
        Ok(())
    }
}

/// The GEMM kernels' arguments (all three take the same).
type GemmArgs<'a, T> = (
    &'a MatrixCl<T>,
    &'a MatrixCl<T>,
    &'a MatrixCl<T>,
    i32,
    i32,
    i32,
    i32,
    i32,
    i32,
    i32,
    i32,
    i32,
    i32,
    i32,
    T,
    T,
);

/// Tuning of one product: tiling and the number of k splits.
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::MultiplyOptions;
/// let a = MatrixCl::from_slice(1, 4, &[1.0, 2.0, 3.0, 4.0])?;
/// let b = MatrixCl::from_slice(4, 1, &[1.0, 1.0, 1.0, 1.0])?;
/// let opts = MultiplyOptions { splits: Some(2), ..Default::default() };
/// assert_eq!(clfuse_kernels::multiply_with(&a, &b, &opts)?.to_vec()?, vec![10.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct MultiplyOptions {
    /// Split-k parts (`None`: chosen from the shape and the device).
    pub splits: Option<usize>,
    /// Kernel and blocking (`None`: the device's choice for the shape,
    /// [`GemmChoice::for_shape`](crate::GemmChoice::for_shape);
    /// [`Portable`](GemmConfig::Portable): that choice without tensor cores).
    pub config: Option<GemmConfig>,
}

/// What one launch of a GEMM kernel needs besides its buffers: the kernel,
/// the grid and build options, the split-k parts and the integer arguments
/// (checked to fit an `int`).
pub(crate) struct GemmSetup {
    pub kernel: Kernel,
    /// The kernel and its blocking as numbers: what tells its programs
    /// apart (`[kernel, thread_block_size, work_per_thread, tile_k]`, or
    /// `[kernel, rows, cols, 0]` for the direct kernel).
    pub structure: [u32; 4],
    pub range: NdRange,
    pub build: String,
    pub splits: usize,
    /// M, N, K.
    pub dims: (i32, i32, i32),
    /// Offsets and leading dimensions of A and B.
    pub leads: ((i32, i32), (i32, i32)),
}

impl GemmSetup {
    /// The setup of `op(a) * op(b)` (`None` when the product is empty);
    /// `whole_c`: the result is a whole matrix, so split-k may write parts.
    pub fn new<T: ClFloat>(
        function: &'static str,
        a: &Operand<'_, T>,
        b: &Operand<'_, T>,
        lower_only: bool,
        whole_c: bool,
        options: &MultiplyOptions,
    ) -> Result<Option<GemmSetup>> {
        let (m, k) = a.shape();
        let (k2, n) = b.shape();
        if k != k2 {
            return Err(Error::DimensionMismatch {
                operation: function.to_string(),
                lhs: (m, k),
                rhs: (k2, n),
            });
        }
        a.block.check(function, "a", a.matrix)?;
        b.block.check(function, "b", b.matrix)?;
        if m == 0 || n == 0 {
            return Ok(None);
        }
        let config = resolve::<T>(options.config, m, n, lower_only)?;
        let splits = if whole_c {
            options
                .splits
                .unwrap_or_else(|| auto_splits(m, n, k, &config))
                .max(1)
        } else {
            1
        };
        let shape = (m, n, splits);
        let as_u32 = |v: usize| v as u32;
        let (kernel, structure, (range, mut build)) = match config {
            GemmConfig::Tiled {
                thread_block_size: ts,
                work_per_thread: wpt,
                tile_k,
            } => (
                Kernel::Tiled,
                [1, as_u32(ts), as_u32(wpt), as_u32(tile_k)],
                tiled::launch_shape(ts, wpt, tile_k, shape, "", 1),
            ),
            GemmConfig::TensorCores {
                thread_block_size: ts,
                work_per_thread: wpt,
                tile_k,
            } => (
                Kernel::TensorCores,
                [2, as_u32(ts), as_u32(wpt), as_u32(tile_k)],
                tiled::launch_shape(
                    ts,
                    wpt,
                    tile_k,
                    shape,
                    tensor_cores::build_flags(),
                    tensor_cores::rows_of_items(
                        Runtime::get()?.device_info().max_work_group_size,
                        ts,
                        lower_only,
                    ),
                ),
            ),
            GemmConfig::Direct { rows, cols } => (
                Kernel::Direct,
                [3, as_u32(rows), as_u32(cols), 0],
                direct::launch_shape(rows, cols, shape),
            ),
            // `resolve` chose a blocking for it.
            GemmConfig::Portable => {
                return Err(Error::InvalidArgument {
                    function,
                    argument: "config",
                    reason: "`Portable` names no blocking to launch".into(),
                });
            }
        };
        for (on, flag) in [
            (a.transposed, " -D TRANS_A"),
            (b.transposed, " -D TRANS_B"),
            (lower_only, " -D LOWER_ONLY"),
        ] {
            if on {
                build.push_str(flag);
            }
        }
        let dims = (
            int(function, "a", m)?,
            int(function, "b", n)?,
            int(function, "a", k)?,
        );
        let lead = |o: &Operand<'_, T>, name| -> Result<(i32, i32)> {
            int(function, name, o.matrix.len())?;
            Ok((
                int(function, name, o.offset())?,
                int(function, name, o.matrix.rows())?,
            ))
        };
        let leads = (lead(a, "a")?, lead(b, "b")?);
        Ok(Some(GemmSetup {
            kernel,
            structure,
            range,
            build,
            splits,
            dims,
            leads,
        }))
    }
}

/// `c_block = alpha * a * b + beta * c_block`, the one entry point to the GEMM kernel.
// The arguments are BLAS's GEMM (C, A, B, alpha, beta) plus the block of C,
// the lower-only flag and the tuning: grouping them would only rename them.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_into<T: ClFloat>(
    function: &'static str,
    c: &MatrixCl<T>,
    c_block: Block,
    a: Operand<'_, T>,
    b: Operand<'_, T>,
    alpha: T,
    beta: T,
    lower_only: bool,
    options: &MultiplyOptions,
) -> Result<()> {
    let (m, n) = (a.shape().0, b.shape().1);
    if (m, n) != (c_block.rows, c_block.cols) {
        return Err(Error::DimensionMismatch {
            operation: function.to_string(),
            lhs: a.shape(),
            rhs: b.shape(),
        });
    }
    c_block.check(function, "c", c)?;
    let whole_c = c_block == Block::new(0, 0, c.rows(), c.cols());
    let Some(setup) = GemmSetup::new(function, &a, &b, lower_only, whole_c, options)? else {
        return Ok(());
    };
    let GemmSetup {
        kernel,
        range,
        build,
        splits,
        dims,
        leads: ((offset_a, lda), (offset_b, ldb)),
        ..
    } = setup;
    if splits == 1 {
        int(function, "c", c.len())?;
        let offset_c = int(function, "c", c_block.row + c.rows() * c_block.col)?;
        let args = (
            or_stand_in(a.matrix, c),
            or_stand_in(b.matrix, c),
            c,
            dims.0,
            dims.1,
            dims.2,
            offset_a,
            lda,
            offset_b,
            ldb,
            offset_c,
            int(function, "c", c.rows())?,
            a.view.bits(),
            b.view.bits(),
            alpha,
            beta,
        );
        kernel.enqueue(range, &build, args)?;
        return Ok(());
    }
    let partial = MatrixCl::<T>::uninitialized(m, n * splits)?;
    int(function, "c", partial.len())?;
    let args = (
        or_stand_in(a.matrix, &partial),
        or_stand_in(b.matrix, &partial),
        &partial,
        dims.0,
        dims.1,
        dims.2,
        offset_a,
        lda,
        offset_b,
        ldb,
        0,
        dims.0,
        a.view.bits(),
        b.view.bits(),
        alpha,
        T::default(),
    );
    kernel.enqueue(range, &build, args)?;
    add_batch(c, &partial, splits, beta)
}

/// Split-k when the grid of C tiles is too small to fill the device and k is
/// long enough to share: aim for about four work-groups per compute unit,
/// keeping at least 256 of k per part. The direct (CPU) kernel also splits
/// long k for the TLB ([`direct::min_splits`]). A `Portable` configuration,
/// which names no tiles, takes one part (products resolve it first).
pub(crate) fn auto_splits(m: usize, n: usize, k: usize, config: &GemmConfig) -> usize {
    let Some((rows, cols)) = config.block() else {
        return 1;
    };
    let compute_units = Runtime::current()
        .map_or(1, |rt| rt.device_info().compute_units as usize)
        .max(1);
    let tiles = m.div_ceil(rows) * n.div_ceil(cols);
    let target = 4 * compute_units;
    let to_fill = if tiles >= target {
        1
    } else {
        (target / tiles).min(k / 256)
    };
    let for_the_tlb = match config {
        GemmConfig::Direct { .. } => direct::min_splits(k),
        _ => 1,
    };
    to_fill.max(for_the_tlb).clamp(1, 64)
}
