//! # fusion
//!
//! Lazy matrix expressions fused into single OpenCL kernels — the Rust
//! successor of Stan Math's OpenCL backend and kernel generator.
//!
//! ```
//! use fusion::prelude::*;
//! let a = MatrixCl::from_slice(2, 2, &[1.0, 2.0, 3.0, 4.0])?;
//! let b = MatrixCl::from_slice(2, 2, &[4.0, 3.0, 2.0, 1.0])?;
//! let d = MatrixCl::<f64>::zeros(2, 2)?;
//! d.assign(0.5 * (&a + &b))?; // one generated kernel, compiled once, cached
//! assert_eq!(d.to_vec()?, vec![2.5; 4]);
//! # Ok::<(), fusion::Error>(())
//! ```
//!
//! Crates: [`fusion_core`] (runtime, `MatrixCl`, events, typed kernels),
//! [`fusion_ops`] (operations and code generation), [`fusion_kernels`]
//! (hand-written kernels).

pub mod glm;

pub use fusion_core;
pub use fusion_kernels;
pub use fusion_ops;

pub use fusion_core::{
    ClType, DeviceInfo, Error, Expr, KernelStats, MatrixCl, PendingRead, Profile, ProfileScope,
    QueueMode, Result, Runtime, RuntimeConfig, TimelineEntry, View, cached_buffer_bytes, configure,
    kernel_stats, list_devices, profile_mark, profile_scope, release_cached_buffers, select_device,
    take_profile, thread_kernel_stats,
};

/// Everything a user of fusion needs: `use fusion::prelude::*;`.
pub mod prelude {
    pub use fusion_core::{MatrixCl, Result, View, kernel_stats, thread_kernel_stats};
    pub use fusion_kernels::prelude::*;
    pub use fusion_ops::prelude::*;
}
