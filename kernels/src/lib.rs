//! fusion-kernels: hand-written OpenCL kernels and their launchers.

/// The hand-written kernels' extension traits.
pub mod prelude {}
