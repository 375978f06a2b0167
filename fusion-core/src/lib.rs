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
pub use compile::{CompiledKernel, KernelStats, compile_kernel, kernel_stats, thread_kernel_stats};
pub use error::{Error, Result};
pub use events::{ClEvent, EventLists, raw_handles};
pub use expr::{Expr, IntoOperand};
pub use launch::{Access, KernelArg, NdRange, enqueue};
pub use matrix::{MAX_ELEMENTS, MatrixCl};
pub use runtime::{
    DeviceInfo, QueueMode, Runtime, RuntimeConfig, configure, list_devices, select_device,
};
pub use typed_kernel::{ArgList, ArgSpec, In, InOut, Out, TypedKernel};
pub use view::View;

/// Re-exported so downstream crates use the same OpenCL bindings.
pub use opencl3;
