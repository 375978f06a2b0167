//! fusion-core: the OpenCL runtime of fusion.
//!
//! One process-wide context and queue ([`Runtime`]), device matrices
//! ([`MatrixCl`]) with triangular [`View`]s and read/write event lists,
//! typed hand-written kernels ([`TypedKernel`]), the compiled-kernel counters
//! and the one [`Error`] type of the workspace.

mod cl_type;
mod compile;
mod error;
mod events;
pub mod expr;
mod launch;
mod matrix;
#[cfg(feature = "nalgebra")]
mod nalgebra_conv;
mod runtime;
mod typed_kernel;
mod view;

pub use cl_type::{ClType, Promote};
pub use compile::{compile_kernel, kernel_stats, thread_kernel_stats, CompiledKernel, KernelStats};
pub use error::{Error, Result};
pub use events::{raw_handles, ClEvent, EventLists};
pub use expr::{Expr, IntoOperand};
pub use launch::{enqueue, Access, KernelArg, NdRange};
pub use matrix::{MatrixCl, MAX_ELEMENTS};
pub use runtime::{configure, list_devices, select_device, DeviceInfo, QueueMode, Runtime, RuntimeConfig};
pub use typed_kernel::{ArgList, ArgSpec, In, InOut, Out, TypedKernel};
pub use view::View;

/// Re-exported so downstream crates use the same OpenCL bindings.
pub use opencl3;
