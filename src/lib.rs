//! # clfuse
//!
//! Lazy matrix expressions fused into single OpenCL kernels — the Rust
//! successor of Stan Math's OpenCL backend and kernel generator.
//!
//! ```
//! use clfuse::prelude::*;
//! let a = MatrixCl::from_slice(2, 2, &[1.0, 2.0, 3.0, 4.0])?;
//! let b = MatrixCl::from_slice(2, 2, &[4.0, 3.0, 2.0, 1.0])?;
//! let d = MatrixCl::<f64>::zeros(2, 2)?;
//! d.assign(0.5 * (&a + &b))?; // one generated kernel, compiled once, cached
//! assert_eq!(d.to_vec()?, vec![2.5; 4]);
//! # Ok::<(), clfuse::Error>(())
//! ```
//!
//! - Expressions and assignment: [`prelude`] (`assign`, `eval`, `fuse`, the
//!   element-wise functions, reductions, structural operations).
//! - Linear algebra on the device: [`linalg`] (GEMM, triangular inverse and
//!   solves, Cholesky, their adjoints).
//! - Likelihoods with gradients: [`glm`].
//! - Stan's probability densities and masses, fused and differentiable: [`dist`].
//! - The runtime (device choice, [`Tuning`], the [`KernelCache`]): the items
//!   re-exported at the crate root.
//!
//! The building blocks are their own crates, re-exported for extension
//! authors: [`clfuse_core`] (runtime, `MatrixCl`, events, typed kernels),
//! [`clfuse_ops`] (operations and code generation), [`clfuse_kernels`]
//! (hand-written kernels).

pub mod data_parallel;
pub mod dist;
pub mod glm;
pub mod mixture;

#[cfg(feature = "nuts")]
pub mod nuts;
pub mod params;
pub mod rev;
pub mod special;

pub use clfuse_core;
pub use clfuse_kernels;
pub use clfuse_ops;
/// Device random numbers: Philox4x32-10 leaves of fused expressions (see
/// [`clfuse_ops::random`]).
pub use clfuse_ops::random;

pub use clfuse_core::{
    BuildDiagnostics, ClType, Device, DeviceInfo, Error, Expr, GemmConfig, GemmEpilogue,
    GlmOnePass, KernelCache, KernelStats, MatrixCl, PendingRead, Profile, ProfileScope,
    ProgramCacheSetting, ProgramCacheStats, QueueMode, QueuedReads, Recording, ReplayBatch, Result,
    Runtime, RuntimeConfig, TimelineEntry, Tuning, View, cached_buffer_bytes, configure,
    kernel_stats, list_devices, profile_mark, profile_scope, program_cache_stats,
    release_cached_buffers, select_device, take_profile, thread_kernel_stats,
};

/// Linear algebra on the device: the hand-written, non-fusable kernels
/// (paper §3). Each takes whole matrices and returns a new [`MatrixCl`]
/// whose result can feed further fused expressions.
///
/// ```
/// use clfuse::prelude::*;
/// let a = MatrixCl::from_slice(2, 2, &[4.0, 2.0, 2.0, 3.0])?;
/// let l = cholesky_decompose(&a)?; // from `linalg`, in the prelude
/// let back = multiply_transposed(&l, Op::N, &l, Op::T)?;
/// assert!(back.to_vec()?.iter().zip([4.0f64, 2.0, 2.0, 3.0]).all(|(x, y)| (x - y).abs() < 1e-12));
/// # Ok::<(), clfuse::Error>(())
/// ```
pub mod linalg {
    pub use clfuse_kernels::{
        CholeskyAdjointMethod, CholeskyOptions, GemmConfig, LOG_SOFTMAX_MAX_COLUMNS,
        LOG_SOFTMAX_MAX_INNER, LOG_SUM_EXP_MAX_INNER, MultiplyOptions, Op, PreparedTriangular,
        ProductAdjoint, SUBSTITUTION_MAX_COLS, chol2inv, cholesky_adjoint, cholesky_adjoint_with,
        cholesky_decompose, cholesky_decompose_with, cholesky_solve, log_softmax_rows_of_product,
        log_sum_exp_rows_of_product, mdivide_left_tri, mdivide_left_tri_adjoint,
        mdivide_left_tri_and_prepare, mdivide_left_tri_identity, mdivide_right_tri, multiply,
        multiply_adjoint, multiply_transpose, multiply_transposed, multiply_with,
        softmax_rows_of_product, tri_crossprod, tri_inverse, tri_inverse_prechecked, tri_solve,
        tri_solve_and_prepare,
    };
}

/// Everything a user of clfuse needs: `use clfuse::prelude::*;`.
///
/// The prelude brings no `Result` alias, so `Result<T, E>` keeps meaning
/// std's in code that imports it; write [`clfuse::Result<T>`](crate::Result)
/// for `Result<T, clfuse::Error>`.
pub mod prelude {
    pub use crate::linalg::*;
    pub use clfuse_core::{MatrixCl, View, kernel_stats, thread_kernel_stats};
    pub use clfuse_kernels::prelude::*;
    pub use clfuse_ops::prelude::*;
}
