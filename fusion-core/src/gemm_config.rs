//! Which GEMM kernel runs, and its blocking: the value of `FUSION_GEMM`
//! ([`Tuning::gemm`](crate::Tuning::gemm)) and of one product's explicit
//! choice (`clfuse_kernels::MultiplyOptions`). The kernels crate chooses
//! the device's default, checks a configuration against the device and
//! launches it.

use crate::env::invalid;
use crate::error::{Error, Result};

/// Which GEMM kernel runs, and its blocking (compile options).
///
/// Defaults depend on the device (`clfuse_kernels::GemmChoice::for_device`:
/// FP64 tensor cores on NVIDIA devices that have them, tiled 128/8/8 on other
/// GPUs, direct 16 x 8 on CPUs); the environment variable `FUSION_GEMM`
/// overrides them, parsed by [`str::parse`]: `TS,WPT,TILE_K` for
/// [`Tiled`](Self::Tiled), `tensor,TS,WPT,TILE_K` for
/// [`TensorCores`](Self::TensorCores), `direct,ROWS,COLS` for
/// [`Direct`](Self::Direct) and `portable` for [`Portable`](Self::Portable).
///
/// ```
/// use clfuse_core::GemmConfig;
/// assert_eq!("64,4,16".parse::<GemmConfig>()?, GemmConfig::Tiled { thread_block_size: 64, work_per_thread: 4, tile_k: 16 });
/// assert_eq!("direct,16,8".parse::<GemmConfig>()?, GemmConfig::Direct { rows: 16, cols: 8 });
/// assert_eq!("portable".parse::<GemmConfig>()?, GemmConfig::Portable);
/// assert_eq!("tensor,128,8,8".parse::<GemmConfig>()?, GemmConfig::TensorCores { thread_block_size: 128, work_per_thread: 8, tile_k: 8 });
/// assert!("64,4".parse::<GemmConfig>().is_err());
/// let c = GemmConfig::Tiled { thread_block_size: 32, work_per_thread: 4, tile_k: 16 };
/// assert_eq!(c.block(), Some((32, 32)));
/// # Ok::<(), clfuse_core::Error>(())
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
    /// `f32` products run the tiled kernel with the same blocking.
    TensorCores {
        /// Edge of the square tile of C per work-group (a multiple of 64).
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
    /// The device's choice without the FP64 tensor cores that NVIDIA
    /// devices of compute capability 8.0 and 9.0+ use by default: the
    /// built-in portable tilings (`portable`). It names no blocking of its
    /// own; a product resolves it to one for its shape.
    Portable,
}

impl GemmConfig {
    /// Rows and columns of C one work-group (tiled) or work item (direct)
    /// computes; `None` for [`Portable`](Self::Portable), whose blocking
    /// depends on the device and the product.
    pub fn block(&self) -> Option<(usize, usize)> {
        match *self {
            GemmConfig::Tiled {
                thread_block_size, ..
            }
            | GemmConfig::TensorCores {
                thread_block_size, ..
            } => Some((thread_block_size, thread_block_size)),
            GemmConfig::Direct { rows, cols } => Some((rows, cols)),
            GemmConfig::Portable => None,
        }
    }

    /// Parses `text` as the value of the environment variable `variable`
    /// (`FUSION_GEMM`, `FUSION_GEMM_SMALL` or `FUSION_GEMM_THIN`), whose
    /// name an error gives.
    ///
    /// ```
    /// use clfuse_core::GemmConfig;
    /// let small = GemmConfig::parse_for("FUSION_GEMM_SMALL", "tensor,64,4,32")?;
    /// assert_eq!(small.block(), Some((64, 64)));
    /// let bad = GemmConfig::parse_for("FUSION_GEMM_THIN", "32,2").unwrap_err();
    /// assert!(bad.to_string().contains("FUSION_GEMM_THIN"));
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn parse_for(variable: &'static str, text: &str) -> Result<Self> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let numbers: Vec<usize> = parts.iter().filter_map(|p| p.parse().ok()).collect();
        match (parts.first().copied(), &numbers[..]) {
            (Some("portable"), &[]) if parts.len() == 1 => Ok(GemmConfig::Portable),
            (Some("tensor"), &[thread_block_size, work_per_thread, tile_k])
                if numbers.iter().all(|n| *n > 0) =>
            {
                Ok(GemmConfig::TensorCores {
                    thread_block_size,
                    work_per_thread,
                    tile_k,
                })
            }
            (Some("direct"), &[rows, cols]) if rows > 0 && cols > 0 => {
                Ok(GemmConfig::Direct { rows, cols })
            }
            (_, &[thread_block_size, work_per_thread, tile_k])
                if numbers.len() == parts.len() && numbers.iter().all(|n| *n > 0) =>
            {
                Ok(GemmConfig::Tiled {
                    thread_block_size,
                    work_per_thread,
                    tile_k,
                })
            }
            _ => Err(invalid(
                variable,
                text,
                "`portable`, `TS,WPT,TILE_K` (e.g. `64,4,16`), `tensor,TS,WPT,TILE_K` (e.g. `tensor,128,8,8`) or `direct,ROWS,COLS` (e.g. `direct,16,8`), all positive",
            )),
        }
    }
}

impl std::str::FromStr for GemmConfig {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        GemmConfig::parse_for("FUSION_GEMM", text)
    }
}
