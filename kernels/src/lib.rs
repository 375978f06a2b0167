//! fusion-kernels: hand-written OpenCL kernels (`cl/*.cl`) and their typed launchers.

mod basic;
mod packed;

pub use basic::BasicConstructors;
pub use packed::{PackedTransfer, packed_len};

/// The hand-written kernels' extension traits.
pub mod prelude {
    pub use crate::{BasicConstructors, PackedTransfer};
}
