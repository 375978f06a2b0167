//! Matrix multiplication (paper §3.1): tiled GEMM with register blocking,
//! triangular-aware tile skipping, split-k for long inner dimensions,
//! `A·Aᵀ` computing one triangle, and 1-D matrix-vector kernels.

use crate::basic::{Block, Mirror, add_batch, int, triangular_transpose};
use crate::launchers as cl;
use clfuse_core::{ClFloat, Error, MatrixCl, NdRange, Result, Runtime, View};

/// Which GEMM kernel runs, and its blocking (compile options).
///
/// Defaults depend on the device (see [`GemmConfig::for_device`]); the
/// environment variable `FUSION_GEMM` overrides them: `TS,WPT,TILE_K` for
/// [`GemmConfig::Tiled`], `direct,ROWS,COLS` for [`GemmConfig::Direct`].
///
/// ```
/// let c = clfuse_kernels::GemmConfig::Tiled { thread_block_size: 32, work_per_thread: 4, tile_k: 16 };
/// assert_eq!(c.block(), (32, 32));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GemmConfig {
    /// `gemm.cl` (GPUs): each work-group computes a `thread_block_size²`
    /// tile of C with `(thread_block_size / work_per_thread)²` work items,
    /// each accumulating a `work_per_thread²` register block; k advances
    /// `tile_k` at a time through local memory.
    Tiled {
        /// Edge of the square tile of C per work-group (`THREAD_BLOCK_SIZE`).
        thread_block_size: usize,
        /// Edge of each work item's register block (`WORK_PER_THREAD`).
        work_per_thread: usize,
        /// Depth of the k slices staged in local memory (`TILE_K`).
        tile_k: usize,
    },
    /// `gemm.cl` built with `TENSOR_CORES` (NVIDIA, compute capability 8.0
    /// and 9.0+, `f64`): the tiled kernel's staging, with FP64 tensor
    /// cores for the arithmetic: `mma.m16n8k16` when `tile_k` is a
    /// multiple of 16 on compute capability 9.0+, else `mma.m16n8k4` (two
    /// `m8n8k4` on 8.x, which has neither); the kernel is `gemm_dmma`.
    TensorCores {
        /// Edge of the square tile of C per work-group.
        thread_block_size: usize,
        /// `thread_block_size / work_per_thread` work items per tile edge
        /// (their square must be 256: 8 warps).
        work_per_thread: usize,
        /// Depth of the k slices staged in local memory (a multiple of 4).
        tile_k: usize,
    },
    /// `gemm_direct.cl` (CPUs): no local memory and no barriers; each work
    /// item computes a `rows x cols` block of C straight from global memory,
    /// `rows` consecutive elements of op(A) per k being one vector.
    Direct {
        /// Rows of C per work item (`DIRECT_ROWS`).
        rows: usize,
        /// Columns of C per work item (`DIRECT_COLS`).
        cols: usize,
    },
}

impl GemmConfig {
    /// The configuration an explicit `FUSION_GEMM` tiling names (`None`
    /// for `portable`, which asks for the built-in portable choice).
    fn explicit(tiling: clfuse_core::GemmTiling) -> Option<Self> {
        use clfuse_core::GemmTiling as G;
        match tiling {
            G::Tiled {
                thread_block_size,
                work_per_thread,
                tile_k,
            } => Some(GemmConfig::Tiled {
                thread_block_size,
                work_per_thread,
                tile_k,
            }),
            G::TensorCores {
                thread_block_size,
                work_per_thread,
                tile_k,
            } => Some(GemmConfig::TensorCores {
                thread_block_size,
                work_per_thread,
                tile_k,
            }),
            G::Direct { rows, cols } => Some(GemmConfig::Direct { rows, cols }),
            G::Portable => None,
        }
    }

    /// The configuration for elements of type `T`: tensor cores are FP64 only.
    pub(crate) fn for_element<T: ClFloat>(self) -> Self {
        if T::CL_NAME == "double" {
            self
        } else {
            self.portable()
        }
    }

    /// The same blocking without tensor cores (for `f32`, which they do not take).
    fn portable(self) -> Self {
        match self {
            GemmConfig::TensorCores {
                thread_block_size,
                work_per_thread,
                tile_k,
            } => GemmConfig::Tiled {
                thread_block_size,
                work_per_thread,
                tile_k,
            },
            other => other,
        }
    }
}

/// The device's GEMM configuration, and for GPUs the smaller tiling used
/// below a number of tiles (see [`GemmConfig::for_shape`]).
#[derive(Debug, Clone, Copy)]
struct Chosen {
    config: GemmConfig,
    small: Option<(GemmConfig, usize)>,
}

impl GemmConfig {
    /// Rows and columns of C one work-group (tiled) or work item (direct) computes.
    pub fn block(&self) -> (usize, usize) {
        match *self {
            GemmConfig::Tiled {
                thread_block_size, ..
            }
            | GemmConfig::TensorCores {
                thread_block_size, ..
            } => (thread_block_size, thread_block_size),
            GemmConfig::Direct { rows, cols } => (rows, cols),
        }
    }

    /// The configuration for the current device: `FUSION_GEMM` when set,
    /// else tiled 128/8/8 on GPUs (best of the tilings measured on an H200,
    /// see BENCHMARKS.md) and direct 16 x 8 on CPUs (best of those measured
    /// on PoCL, where it outruns the tiled kernel 2-3x); validated against
    /// the device.
    ///
    /// ```
    /// let config = clfuse_kernels::GemmConfig::for_device()?;
    /// assert!(config.block().0 >= 1);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn for_device() -> Result<GemmConfig> {
        Ok(Self::chosen()?.config)
    }

    /// The configuration for an `m x n` product (`lower_only`: only the
    /// tiles touching the lower triangle): [`for_device`](Self::for_device),
    /// except that on a GPU a product with fewer 128 x 128 tiles than a
    /// quarter of the compute units (`FUSION_GEMM_SMALL_BELOW` tiles to tune)
    /// takes 64 x 64 tiles (4 x 4 per work item, fewer registers), so that
    /// small and skinny products (a blocked algorithm's) occupy more compute
    /// units; so does a product at most 64 wide or tall at any length. (On
    /// an H200, a quarter was best for n = 1024 products and within 2% of
    /// the best for Cholesky.)
    /// `FUSION_GEMM` overrides both.
    ///
    /// ```
    /// let config = clfuse_kernels::GemmConfig::for_shape(10_000, 10_000, false)?;
    /// assert_eq!(config, clfuse_kernels::GemmConfig::for_device()?);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn for_shape(m: usize, n: usize, lower_only: bool) -> Result<GemmConfig> {
        let chosen = Self::chosen()?;
        let Some((small, below)) = chosen.small else {
            return Ok(chosen.config);
        };
        let (rows, cols) = chosen.config.block();
        let tiles = m.div_ceil(rows) * n.div_ceil(cols);
        let tiles = if lower_only { tiles.div_ceil(2) } else { tiles };
        // A product no wider (or taller) than a small tile would leave at
        // least half of every large tile's work items idle.
        let (small_rows, small_cols) = small.block();
        let thin = m <= small_rows || n <= small_cols;
        Ok(if tiles < below || thin {
            small
        } else {
            chosen.config
        })
    }

    /// The configuration of an `m x n` GEMM whose store applies an
    /// epilogue (see [`EpilogueGemm`](crate::EpilogueGemm)):
    /// [`for_shape`](Self::for_shape), except that the tensor-core kernel
    /// takes its small tiling whatever the shape. A work item's stored
    /// elements each run the epilogue, and with 64 x 64 tiles (fewer
    /// registers, more work-groups per compute unit) one group's epilogue
    /// overlaps another's main loop: `inv_logit(x * b + 1)`, x 1e6 x 100, on
    /// an H200 took 1.30 ms against 1.55 ms with 128 x 128 tiles, where the
    /// product alone takes 1.02 and 0.98 ms. The portable kernel gained
    /// nothing from it (2.17 ms either way) and lost 12% on a cheap tail
    /// (BENCHMARKS.md). `FUSION_GEMM` overrides it.
    ///
    /// ```
    /// let config = clfuse_kernels::GemmConfig::for_epilogue(1000, 100)?;
    /// assert!(config.block().0 >= 1);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn for_epilogue(m: usize, n: usize) -> Result<GemmConfig> {
        let chosen = Self::chosen()?;
        let config = Self::for_shape(m, n, false)?;
        Ok(match (config, chosen.small) {
            (GemmConfig::TensorCores { .. }, Some((small, _))) => small,
            _ => config,
        })
    }

    /// Settled once per device (a device and the environment do not
    /// change); every product asks for it.
    fn chosen() -> Result<Chosen> {
        static CHOSEN: std::sync::Mutex<Vec<(usize, Chosen)>> = std::sync::Mutex::new(Vec::new());
        let slot = Runtime::get()?.slot();
        let known =
            |list: &Vec<(usize, Chosen)>| list.iter().find(|(s, _)| *s == slot).map(|(_, c)| *c);
        if let Some(chosen) = known(&CHOSEN.lock().unwrap_or_else(|p| p.into_inner())) {
            return Ok(chosen);
        }
        let chosen = Self::choose()?;
        let mut list = CHOSEN.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(settled) = known(&list) {
            return Ok(settled);
        }
        list.push((slot, chosen));
        Ok(chosen)
    }

    fn choose() -> Result<Chosen> {
        let rt = Runtime::get()?;
        let info = rt.device_info();
        let explicit = rt.tuning().gemm.and_then(GemmConfig::explicit);
        let tensor_cores = rt.tuning().gemm.is_none() && info.has_fp64_tensor_cores();
        let chosen = match explicit {
            Some(config) => Chosen {
                config,
                small: None,
            },
            None if info.is_gpu => {
                // Slices of 8 (m16n8k4 steps on 9.0+): slices of 16 would
                // take m16n8k16, which measured slower in this kernel on
                // an H200 at every tiling and in Cholesky (BENCHMARKS.md).
                let tiles = |thread_block_size, work_per_thread| {
                    if tensor_cores {
                        GemmConfig::TensorCores {
                            thread_block_size,
                            work_per_thread,
                            tile_k: 8,
                        }
                    } else {
                        GemmConfig::Tiled {
                            thread_block_size,
                            work_per_thread,
                            tile_k: 8,
                        }
                    }
                };
                let small = tiles(64, 4);
                let below = rt
                    .tuning()
                    .gemm_small_below
                    .unwrap_or((info.compute_units as usize).div_ceil(4));
                Chosen {
                    config: tiles(128, 8),
                    small: small.validate::<f64>().is_ok().then_some((small, below)),
                }
            }
            None => Chosen {
                config: GemmConfig::Direct { rows: 16, cols: 8 },
                small: None,
            },
        };
        chosen.config.validate::<f64>()?;
        Ok(chosen)
    }

    /// Checks the blocking against the device's work-group and local-memory
    /// limits (and, for the direct kernel, a sane register block).
    ///
    /// ```
    /// use clfuse_kernels::GemmConfig;
    /// assert!(GemmConfig::Tiled { thread_block_size: 32, work_per_thread: 4, tile_k: 16 }.validate::<f64>().is_ok());
    /// assert!(GemmConfig::Tiled { thread_block_size: 30, work_per_thread: 4, tile_k: 16 }.validate::<f64>().is_err());
    /// assert!(GemmConfig::Direct { rows: 0, cols: 4 }.validate::<f64>().is_err());
    /// ```
    pub fn validate<T: ClFloat>(&self) -> Result<()> {
        let info = Runtime::get()?.device_info();
        let reason = match *self {
            GemmConfig::TensorCores {
                thread_block_size,
                work_per_thread,
                tile_k,
            } if !info.has_fp64_tensor_cores()
                || work_per_thread == 0
                || thread_block_size / work_per_thread != 16
                || !thread_block_size.is_multiple_of(64)
                || !tile_k.is_multiple_of(4) =>
            {
                Some(format!(
                    "tensor cores need an NVIDIA device of compute capability 8.0 or 9.0+ (this one: {:?}), 16 x 16 work items (thread_block_size / work_per_thread = 16), thread_block_size a multiple of 64 (each of the 4 x 2 warps owns whole 16 x 8 fragments) and tile_k of 4",
                    info.nv_compute_capability
                ))
            }
            GemmConfig::Tiled {
                thread_block_size,
                work_per_thread,
                tile_k,
            }
            | GemmConfig::TensorCores {
                thread_block_size,
                work_per_thread,
                tile_k,
            } => {
                let threads = thread_block_size / work_per_thread.max(1);
                // Two tiles (A and B), rows padded by 4 on the tensor-core
                // path and by up to 2 on the portable one.
                let pad = if matches!(self, GemmConfig::TensorCores { .. }) {
                    4
                } else {
                    2
                };
                let local_bytes = 2 * tile_k * (thread_block_size + pad) * std::mem::size_of::<T>();
                if work_per_thread == 0
                    || tile_k == 0
                    || !thread_block_size.is_multiple_of(work_per_thread)
                {
                    Some(
                        "thread_block_size must be a multiple of work_per_thread, tile_k > 0"
                            .to_string(),
                    )
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
            GemmConfig::Direct { rows, cols } => (rows == 0 || cols == 0 || rows * cols > 128)
                .then(|| {
                    format!(
                        "rows and cols must be >= 1 with rows * cols <= 128, got {rows} x {cols}"
                    )
                }),
        };
        match reason {
            Some(reason) => Err(Error::InvalidArgument {
                function: "GemmConfig::validate",
                argument: "config",
                reason,
            }),
            None => Ok(()),
        }
    }

    /// The grid, and the build options for operands read as stored or transposed.
    fn launch(
        &self,
        (m, n, splits): (usize, usize, usize),
        trans_a: bool,
        trans_b: bool,
        lower_only: bool,
    ) -> (NdRange, String) {
        let (range, mut options) = match *self {
            GemmConfig::Tiled {
                thread_block_size: ts,
                work_per_thread,
                tile_k,
            }
            | GemmConfig::TensorCores {
                thread_block_size: ts,
                work_per_thread,
                tile_k,
            } => {
                let rts = ts / work_per_thread;
                let cores = match self {
                    // The f64 m16n8k4 and m16n8k16 shapes need compute
                    // capability 9.0; 8.x devices take m8n8k4 halves.
                    GemmConfig::TensorCores { .. } if dmma_8x8x4_only() => {
                        " -D TENSOR_CORES -D DMMA_M8N8K4"
                    }
                    GemmConfig::TensorCores { .. } => " -D TENSOR_CORES",
                    _ => "",
                };
                (
                    NdRange::d3([m.div_ceil(ts) * rts, n.div_ceil(ts) * rts, splits])
                        .with_local(&[rts, rts, 1]),
                    format!(
                        "-D THREAD_BLOCK_SIZE={ts} -D WORK_PER_THREAD={work_per_thread} -D TILE_K={tile_k}{cores}"
                    ),
                )
            }
            GemmConfig::Direct { rows, cols } => {
                // Small work-groups: a CPU runtime runs a work-group on one
                // core, and its default can be the whole grid of a small
                // product (2 x 2 measured best on PoCL, BENCHMARKS.md).
                const GROUP: usize = 2;
                let grid = |len: usize, block: usize| len.div_ceil(block).div_ceil(GROUP) * GROUP;
                (
                    NdRange::d3([grid(m, rows), grid(n, cols), splits])
                        .with_local(&[GROUP, GROUP, 1]),
                    format!("-D DIRECT_ROWS={rows} -D DIRECT_COLS={cols}"),
                )
            }
        };
        for (on, flag) in [
            (trans_a, " -D TRANS_A"),
            (trans_b, " -D TRANS_B"),
            (lower_only, " -D LOWER_ONLY"),
        ] {
            if on {
                options.push_str(flag);
            }
        }
        (range, options)
    }

    /// Enqueues the configured kernel.
    fn enqueue<T: ClFloat>(
        &self,
        range: NdRange,
        options: &str,
        args: GemmArgs<'_, T>,
    ) -> Result<()> {
        match self {
            GemmConfig::Tiled { .. } => {
                cl::gemm::<T>().launch_with_options(range, options, args)?
            }
            GemmConfig::TensorCores { .. } => {
                cl::gemm_dmma::<T>().launch_with_options(range, options, args)?
            }
            GemmConfig::Direct { .. } => {
                cl::gemm_direct::<T>().launch_with_options(range, options, args)?
            }
        };
        Ok(())
    }
}

/// The GEMM kernels' arguments (both kernels take the same).
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
    /// Tiling (`None`: [`GemmConfig::for_device`]).
    pub config: Option<GemmConfig>,
}

/// Whether the device's FP64 tensor cores take only the `m8n8k4` shape
/// (compute capability 8.x); 9.0 and later also have `m16n8k4` and
/// `m16n8k16`.
fn dmma_8x8x4_only() -> bool {
    Runtime::get().is_ok_and(|rt| matches!(rt.device_info().nv_compute_capability, Some((8, _))))
}

/// One operand of a product: a block of a matrix, possibly read transposed,
/// with the view of the block as it is read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Operand<'a, T: ClFloat> {
    pub matrix: &'a MatrixCl<T>,
    pub block: Block,
    pub transposed: bool,
    pub view: View,
}

impl<'a, T: ClFloat> Operand<'a, T> {
    /// The whole matrix, as stored.
    pub fn whole(matrix: &'a MatrixCl<T>) -> Self {
        Operand {
            matrix,
            block: Block::new(0, 0, matrix.rows(), matrix.cols()),
            transposed: false,
            view: matrix.view(),
        }
    }

    /// A block, read as `view`.
    pub fn block(matrix: &'a MatrixCl<T>, block: Block, view: View) -> Self {
        Operand {
            matrix,
            block,
            transposed: false,
            view,
        }
    }

    /// The same operand read transposed.
    pub fn t(self) -> Self {
        Operand {
            transposed: !self.transposed,
            view: self.view.transpose(),
            ..self
        }
    }

    /// (rows, cols) as read.
    pub fn shape(&self) -> (usize, usize) {
        if self.transposed {
            (self.block.cols, self.block.rows)
        } else {
            (self.block.rows, self.block.cols)
        }
    }

    fn offset(&self) -> usize {
        self.block.row + self.matrix.rows() * self.block.col
    }
}

/// `m` itself, or `stand_in` when `m` has no buffer (an empty inner
/// dimension): the kernel never reads it then, but OpenCL needs a buffer.
fn or_stand_in<'a, T: ClFloat>(m: &'a MatrixCl<T>, stand_in: &'a MatrixCl<T>) -> &'a MatrixCl<T> {
    if m.is_empty() { stand_in } else { m }
}

/// What one launch of a GEMM kernel needs besides its buffers: the tiling,
/// the grid and build options, the split-k parts and the integer arguments
/// (checked to fit an `int`).
pub(crate) struct GemmSetup {
    pub config: GemmConfig,
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
        let config = match options.config {
            Some(config) => {
                config.validate::<T>()?;
                config
            }
            None => GemmConfig::for_shape(m, n, lower_only)?,
        };
        let config = config.for_element::<T>();
        let splits = if whole_c {
            options
                .splits
                .unwrap_or_else(|| auto_splits(m, n, k, &config))
                .max(1)
        } else {
            1
        };
        let (range, build) = config.launch((m, n, splits), a.transposed, b.transposed, lower_only);
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
            config,
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
        config,
        range,
        build,
        splits,
        dims,
        leads: ((offset_a, lda), (offset_b, ldb)),
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
        config.enqueue(range, &build, args)?;
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
    config.enqueue(range, &build, args)?;
    add_batch(c, &partial, splits, beta)
}

/// Split-k when the grid of C tiles is too small to fill the device and k is
/// long enough to share: aim for about four work-groups per compute unit,
/// keeping at least 256 of k per part. The direct (CPU) kernel also splits k
/// into parts of at most 1024: each work item walks one column of A per k, a
/// page apart in a large matrix, and more pages than the TLB holds slowed
/// n = 2048 on PoCL 2x (9.0 → 19.0 GFLOP/s with two parts).
pub(crate) fn auto_splits(m: usize, n: usize, k: usize, config: &GemmConfig) -> usize {
    let compute_units = Runtime::current()
        .map_or(1, |rt| rt.device_info().compute_units as usize)
        .max(1);
    let (rows, cols) = config.block();
    let tiles = m.div_ceil(rows) * n.div_ceil(cols);
    let target = 4 * compute_units;
    let to_fill = if tiles >= target {
        1
    } else {
        (target / tiles).min(k / 256)
    };
    let for_the_tlb = match config {
        GemmConfig::Direct { .. } => k.div_ceil(1024),
        GemmConfig::Tiled { .. } | GemmConfig::TensorCores { .. } => 1,
    };
    to_fill.max(for_the_tlb).clamp(1, 64)
}

fn result_view(a: View, b: View) -> View {
    a.union(b)
}

/// `a * b` (the GEMM leaf behind `*` between expressions). Vectors take the
/// 1-D matrix-vector kernels; long inner dimensions are split (split-k);
/// tiles known to be zero from the operands' views are skipped, and the
/// result's view is set from them (`Lower·Lower` is `Lower`).
///
/// ```
/// use clfuse_core::MatrixCl;
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 3.0, 2.0, 4.0])?; // [1 2; 3 4]
/// let b = MatrixCl::from_slice(2, 1, &[1.0, 1.0])?;
/// assert_eq!(clfuse_kernels::multiply(&a, &a)?.to_vec()?, vec![7.0, 15.0, 10.0, 22.0]);
/// assert_eq!(clfuse_kernels::multiply(&a, &b)?.to_vec()?, vec![3.0, 7.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn multiply<T: ClFloat>(a: &MatrixCl<T>, b: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    multiply_with(a, b, &MultiplyOptions::default())
}

/// [`multiply`] with explicit tiling or split-k parts (always the GEMM
/// kernel, also for vectors).
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::{GemmConfig, MultiplyOptions};
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 3.0, 2.0, 4.0])?;
/// let config = GemmConfig::Tiled { thread_block_size: 16, work_per_thread: 2, tile_k: 8 };
/// let c = clfuse_kernels::multiply_with(&a, &a, &MultiplyOptions { splits: Some(2), config: Some(config) })?;
/// assert_eq!(c.to_vec()?, vec![7.0, 15.0, 10.0, 22.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn multiply_with<T: ClFloat>(
    a: &MatrixCl<T>,
    b: &MatrixCl<T>,
    options: &MultiplyOptions,
) -> Result<MatrixCl<T>> {
    if a.cols() != b.rows() {
        return Err(Error::DimensionMismatch {
            operation: "multiply".into(),
            lhs: (a.rows(), a.cols()),
            rhs: (b.rows(), b.cols()),
        });
    }
    if options.splits.is_none() && options.config.is_none() {
        if b.cols() == 1 && a.rows() > 1 {
            return matrix_vector_multiply(a, b);
        }
        if a.rows() == 1 && b.cols() > 1 {
            return row_vector_matrix_multiply(a, b);
        }
    }
    let c = MatrixCl::<T>::uninitialized(a.rows(), b.cols())?;
    gemm_into(
        "multiply",
        &c,
        Block::new(0, 0, a.rows(), b.cols()),
        Operand::whole(a),
        Operand::whole(b),
        T::one(),
        T::default(),
        false,
        options,
    )?;
    c.set_view(result_view(a.view(), b.view()));
    Ok(c)
}

/// Whether an operand of [`multiply_transposed`] is read as stored or transposed.
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::Op;
/// let a = MatrixCl::from_slice(1, 2, &[1.0, 2.0])?;
/// assert_eq!(clfuse_kernels::multiply_transposed(&a, Op::N, &a, Op::T)?.to_vec()?, vec![5.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// As stored.
    N,
    /// Transposed (no copy: the kernel reads it transposed).
    T,
}

/// `op(a) * op(b)` without materialising transposes (the GEMM adjoints use it).
///
/// ```
/// use clfuse_core::MatrixCl;
/// use clfuse_kernels::Op;
/// let a = MatrixCl::from_slice(2, 1, &[1.0, 2.0])?;
/// // aᵀ·a = 5
/// assert_eq!(clfuse_kernels::multiply_transposed(&a, Op::T, &a, Op::N)?.to_vec()?, vec![5.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn multiply_transposed<T: ClFloat>(
    a: &MatrixCl<T>,
    op_a: Op,
    b: &MatrixCl<T>,
    op_b: Op,
) -> Result<MatrixCl<T>> {
    let mut oa = Operand::whole(a);
    let mut ob = Operand::whole(b);
    if op_a == Op::T {
        oa = oa.t();
    }
    if op_b == Op::T {
        ob = ob.t();
    }
    let ((m, _), (_, n)) = (oa.shape(), ob.shape());
    let c = MatrixCl::<T>::uninitialized(m, n)?;
    gemm_into(
        "multiply_transposed",
        &c,
        Block::new(0, 0, m, n),
        oa,
        ob,
        T::one(),
        T::default(),
        false,
        &MultiplyOptions::default(),
    )?;
    c.set_view(result_view(oa.view, ob.view));
    Ok(c)
}

/// `a * aᵀ`: only the lower triangle's tiles are computed, then mirrored
/// (paper §3.1.2). The result is symmetric (view `Entire`).
///
/// ```
/// use clfuse_core::MatrixCl;
/// let a = MatrixCl::from_slice(2, 1, &[1.0, 2.0])?;
/// assert_eq!(clfuse_kernels::multiply_transpose(&a)?.to_vec()?, vec![1.0, 2.0, 2.0, 4.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn multiply_transpose<T: ClFloat>(a: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    let n = a.rows();
    let c = MatrixCl::<T>::uninitialized(n, n)?;
    let whole = Operand::whole(a);
    gemm_into(
        "multiply_transpose",
        &c,
        Block::new(0, 0, n, n),
        whole,
        whole.t(),
        T::one(),
        T::default(),
        true,
        &MultiplyOptions {
            splits: Some(1),
            config: None,
        },
    )?;
    triangular_transpose(&c, Mirror::LowerToUpper)?;
    Ok(c)
}

/// `a * x` for a column vector `x`: one work item per row (1-D range).
///
/// ```
/// use clfuse_core::MatrixCl;
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 3.0, 2.0, 4.0])?;
/// let x = MatrixCl::from_slice(2, 1, &[1.0, -1.0])?;
/// assert_eq!(clfuse_kernels::matrix_vector_multiply(&a, &x)?.to_vec()?, vec![-1.0, -1.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn matrix_vector_multiply<T: ClFloat>(a: &MatrixCl<T>, x: &MatrixCl<T>) -> Result<MatrixCl<T>> {
    const F: &str = "matrix_vector_multiply";
    if x.cols() != 1 || a.cols() != x.rows() {
        return Err(Error::DimensionMismatch {
            operation: F.into(),
            lhs: (a.rows(), a.cols()),
            rhs: (x.rows(), x.cols()),
        });
    }
    let y = MatrixCl::<T>::uninitialized(a.rows(), 1)?;
    int(F, "a", a.len())?;
    cl::matrix_vector_multiply::<T>().launch(
        NdRange::d1(a.rows()),
        (
            &y,
            or_stand_in(a, &y),
            or_stand_in(x, &y),
            int(F, "a", a.rows())?,
            int(F, "a", a.cols())?,
            a.view().bits(),
        ),
    )?;
    Ok(y)
}

/// Work-groups per compute unit of the row-vector kernel:
/// [`Tuning::row_vector_groups_per_cu`](clfuse_core::Tuning), else 4.
fn row_vector_groups_per_compute_unit(rt: &Runtime) -> usize {
    rt.tuning().row_vector_groups_per_cu.unwrap_or(4)
}

/// Columns per work-group of the row-vector kernel:
/// [`Tuning::row_vector_chunk`](clfuse_core::Tuning), else 8.
fn row_vector_chunk(rt: &Runtime) -> usize {
    rt.tuning().row_vector_chunk.unwrap_or(8)
}

/// `x * a` for a row vector `x` (`1 x k`; a `k x 1` column is taken as its
/// transpose, the same buffer): work-groups of 256 work items
/// split the rows of `a` (enough groups to fill the device, however few
/// columns `a` has) and 8 columns at a time; each reads its slice of `x`
/// once for those columns, and the groups' partial rows are summed by
/// `add_batch`. This is `aᵀ·xᵀ` for a tall `a` — the GLM gradient `xᵀ·d`.
///
/// ```
/// use clfuse_core::MatrixCl;
/// let x = MatrixCl::from_slice(1, 2, &[1.0, -1.0])?;
/// let a = MatrixCl::from_slice(2, 2, &[1.0, 3.0, 2.0, 4.0])?;
/// assert_eq!(clfuse_kernels::row_vector_matrix_multiply(&x, &a)?.to_vec()?, vec![-2.0, -2.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub fn row_vector_matrix_multiply<T: ClFloat>(
    x: &MatrixCl<T>,
    a: &MatrixCl<T>,
) -> Result<MatrixCl<T>> {
    const F: &str = "row_vector_matrix_multiply";
    const LOCAL: usize = 256;
    // Columns per work-group: each group reads its rows of `x` once, so
    // wider chunks read `x` fewer times (`FUSION_ROW_VECTOR_CHUNK` to tune).
    let rt = Runtime::get()?;
    let chunk = row_vector_chunk(rt);
    let vector = (x.rows() == 1 && x.cols() == a.rows()) || (x.cols() == 1 && x.rows() == a.rows());
    if !vector {
        return Err(Error::DimensionMismatch {
            operation: F.into(),
            lhs: (x.rows(), x.cols()),
            rhs: (a.rows(), a.cols()),
        });
    }
    let (k, n) = (a.rows(), a.cols());
    let y = MatrixCl::<T>::uninitialized(1, n)?;
    if n == 0 {
        return Ok(y);
    }
    if k == 0 {
        y.fill(T::default())?;
        return Ok(y);
    }
    int(F, "a", a.len())?;
    let chunks = n.div_ceil(chunk);
    let compute_units = rt.device_info().compute_units as usize;
    let row_groups = (row_vector_groups_per_compute_unit(rt) * compute_units.max(1))
        .div_ceil(chunks)
        .clamp(1, k.div_ceil(LOCAL));
    let partial = MatrixCl::<T>::uninitialized(n, row_groups)?;
    cl::row_vector_matrix_multiply::<T>().launch_with_options(
        NdRange::d2([row_groups * LOCAL, chunks]).with_local(&[LOCAL, 1]),
        &format!("-D COLUMN_CHUNK={chunk}"),
        (
            &partial,
            x,
            a,
            int(F, "a", k)?,
            int(F, "a", n)?,
            a.view().bits(),
        ),
    )?;
    add_batch(&y, &partial, row_groups, T::default())?;
    Ok(y)
}
