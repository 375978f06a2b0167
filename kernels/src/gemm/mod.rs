//! Matrix multiplication (paper §3.1): tiled GEMM with register blocking,
//! triangular-aware tile skipping, split-k for long inner dimensions,
//! `A·Aᵀ` computing one triangle, and 1-D matrix-vector kernels.
//!
//! One file per concern, from the public products down to the kernels:
//!
//! - `products`: `multiply` and its variants, the public entry points;
//! - `vectors`: the matrix-vector and row-vector kernels;
//! - `epilogue`: a GEMM whose store runs a generated element-wise tail
//!   (its program's source and arguments);
//! - `launch`: the one way into the GEMM kernels (`gemm_into`): a
//!   product's options, checks, split-k, the grid and build options, the
//!   launch;
//! - `operand`: what a product reads (a block of a matrix, maybe transposed);
//! - `choice`: the device's [`GemmConfig`] for a product, and its checks;
//! - `tiled`, `tensor_cores`, `direct`: each kernel's grid, build options
//!   and limits.

mod choice;
mod direct;
mod epilogue;
mod launch;
mod operand;
mod products;
pub(crate) mod tensor_cores;
pub(crate) mod tiled;
mod vectors;

pub use choice::GemmChoice;
pub(crate) use choice::thin_update;
pub use clfuse_core::GemmConfig;
pub use epilogue::EpilogueGemm;
pub use launch::MultiplyOptions;
pub(crate) use launch::gemm_into;
pub(crate) use operand::Operand;
pub use products::{Op, multiply, multiply_transpose, multiply_transposed, multiply_with};
pub(crate) use tensor_cores::build_flags as dmma_build_flags;
pub use vectors::{
    SKINNY_MAX_COLS, SKINNY_MAX_TRANSPOSED, matrix_skinny_multiply, matrix_vector_multiply,
    row_vector_matrix_multiply, transposed_skinny_multiply,
};
