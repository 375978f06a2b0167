//! fusion-core: the OpenCL runtime of fusion.
//!
//! One process-wide context and queue ([`Runtime`]), device matrices
//! ([`MatrixCl`]) with triangular [`View`]s and read/write event lists,
//! typed hand-written kernels ([`TypedKernel`]), the compiled-kernel counters
//! and the one [`Error`] type of the workspace.

/// Declares the typed launcher of a hand-written kernel, checking at compile
/// time that the Rust argument list matches the OpenCL C parameter list
/// (count, buffer or value, element type, `const __global` for `in`
/// buffers); a mismatch is a compile error pointing at the argument.
///
/// ```
/// clfuse_core::kernel! {
///     /// y = a * x + y
///     pub fn axpy(inout y: f32, in x: f32, a: f32) = source "
///         __kernel void axpy(__global float* y, const __global float* x, float a) {
///           const int i = get_global_id(0);
///           y[i] += a * x[i];
///         }";
/// }
/// let x = clfuse_core::MatrixCl::from_slice(2, 1, &[1.0f32, 2.0])?;
/// let y = clfuse_core::MatrixCl::from_slice(2, 1, &[10.0f32, 20.0])?;
/// axpy().launch(clfuse_core::NdRange::d1(2), (&y, &x, 3.0))?;
/// assert_eq!(y.to_vec()?, vec![13.0, 26.0]);
/// # Ok::<(), clfuse_core::Error>(())
/// ```
///
/// A launcher generic over the element type writes `fn name<T>(in a: T, ..)`
/// and the source uses `T` (defined with `-D T=<type>` when compiling); the
/// source can also come from a file: `= file "cl/pack.cl"` (relative to the
/// crate's manifest directory, included with `include_str!`).
#[macro_export]
macro_rules! kernel {
    ($($tokens:tt)*) => {
        $crate::__macros::kernel_impl! { crate = $crate; $($tokens)* }
    };
}

#[doc(hidden)]
pub mod __macros {
    pub use clfuse_macros::kernel_impl;
}

mod arena;
mod bound_launch;
mod buffer_pool;
mod build_once;
mod chain_batch;
mod cl_type;
mod compile;
mod device;
mod device_info;
mod diagnostics;
mod env;
mod error;
mod events;
pub mod expr;
#[cfg(feature = "faer")]
mod faer_conv;
mod gemm_config;
mod groups_done;
mod kernel_cache;
mod kernel_variants;
mod launch;
mod matrix;
#[cfg(feature = "nalgebra")]
mod nalgebra_conv;
#[cfg(feature = "ndarray")]
mod ndarray_conv;
mod pending_read;
mod pinned;
mod profile;
mod program_cache;
mod queue_choice;
mod read_batch;
mod recorder;
mod replay;
mod runtime;
mod side_queue;
mod small_writes;
mod sweep;
mod tuning;
mod typed_kernel;
mod view;

pub use buffer_pool::{cached_buffer_bytes, release_cached_buffers};
pub use build_once::BuildOnce;
pub use chain_batch::ReplayBatch;
pub use cl_type::{ClFloat, ClType, Promote};
pub use compile::{KernelStats, compile_kernel, kernel_stats, thread_kernel_stats};
pub use device::Device;
pub use device_info::{DeviceInfo, list_devices};
pub use diagnostics::BuildDiagnostics;
pub use error::{Error, Result};
pub use events::{Access, BufferOwner, ClEvent, EventLists, raw_handles};
pub use expr::{Expr, IntoOperand};
pub use gemm_config::GemmConfig;
pub use groups_done::{GROUPS_DONE_SLOTS, groups_done_counter};
pub use kernel_cache::{
    CompiledKernel, FusedKernel, FusedKey, FusedPlan, KernelCache, TypedKey, snippet_code,
    type_code,
};
pub use launch::{KernelArg, Lanes16, NdRange, enqueue};
pub use matrix::{MAX_ELEMENTS, MatrixCl};
pub use pending_read::PendingRead;
pub use profile::{
    KernelTime, Profile, ProfileScope, TimelineEntry, profile_mark, profile_scope, take_profile,
};
pub use program_cache::{
    ProgramCache, ProgramCacheSetting, ProgramCacheStats, ProgramKey, program_cache_stats,
};
pub use read_batch::ReadBatch;
pub use replay::{QueuedReads, ReadBack, Recording, record};
pub use runtime::{QueueMode, Runtime, RuntimeConfig, configure, select_device};
pub use side_queue::SideWork;
pub use sweep::{LaunchSweeps, enqueue_joined, set_launch_sweeps, sweep_group, sweeps_on};
pub use tuning::{GemmEpilogue, GlmOnePass, TUNING_VARIABLES, Tuning};
pub use typed_kernel::{ArgList, ArgSpec, In, InOut, Out, TypedKernel};
pub use view::View;

/// The faer version the conversions are for (feature `faer`).
#[cfg(feature = "faer")]
pub use faer;
/// The ndarray version the conversions are for (feature `ndarray`).
#[cfg(feature = "ndarray")]
pub use ndarray;
/// Re-exported so downstream crates use the same OpenCL bindings.
pub use opencl3;
