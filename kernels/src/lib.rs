//! fusion-kernels: hand-written OpenCL kernels (`cl/*.cl`) and their typed
//! launchers — the non-fusable leaves of fusion (paper §3): basic kernels,
//! GEMM, triangular inverse and solves, Cholesky, and their adjoints.
//!
//! Every function takes whole matrices and returns a new `MatrixCl` (or works
//! in place where the name says so); results feed further fused expressions.

mod adjoints;
mod basic;
mod block_inverse;
mod checks;
mod chol2inv;
mod cholesky;
mod cholesky_adjoint;
mod gemm;
mod launchers;
mod log_softmax_rows;
mod log_sum_exp_rows;
mod mixture;
#[cfg(test)]
mod nvidia_sources;
mod packed;
mod random;
mod substitution;
mod triangular;

pub use adjoints::{ProductAdjoint, mdivide_left_tri_adjoint, multiply_adjoint};
pub use basic::{
    Block, Mirror, Part, add, batch_identity, identity, scalar_mul, scalar_mul_diagonal, sub_block,
    subtract, transpose, triangular_transpose, zeros,
};
pub use checks::{check_diagonal_zeros, check_finite, check_nan, check_symmetric};
pub use chol2inv::{chol2inv, tri_crossprod};
pub use cholesky::{CholeskyOptions, cholesky_decompose, cholesky_decompose_with};
pub use cholesky_adjoint::{CholeskyAdjointMethod, cholesky_adjoint, cholesky_adjoint_with};
pub use gemm::{
    EpilogueGemm, GemmChoice, GemmConfig, MultiplyOptions, Op, SKINNY_MAX_COLS,
    SKINNY_MAX_TRANSPOSED, matrix_skinny_multiply, matrix_vector_multiply, multiply,
    multiply_transpose, multiply_transposed, multiply_with, row_vector_matrix_multiply,
    transposed_skinny_multiply,
};
pub use log_softmax_rows::{
    LOG_SOFTMAX_MAX_COLUMNS, LOG_SOFTMAX_MAX_INNER, log_softmax_rows_of_product,
    softmax_rows_of_product,
};
pub use log_sum_exp_rows::{LOG_SUM_EXP_MAX_INNER, log_sum_exp_rows_of_product};
pub use mixture::{
    MIXTURE_MAX_DIMENSION, component_stride, mixture_features, mixture_indicators,
    mixture_log_responsibilities, mixture_statistics, statistics_len,
};
pub use packed::{PackedTransfer, packed_len};
pub use random::{PHILOX_SOURCE, RandomKey, philox4x32_10};
pub use substitution::{
    PreparedTriangular, SUBSTITUTION_MAX_COLS, cholesky_solve, tri_solve, tri_solve_and_prepare,
    tri_solve_prechecked,
};
pub use triangular::{
    mdivide_left_tri, mdivide_left_tri_and_prepare, mdivide_left_tri_identity, mdivide_right_tri,
    tri_inverse, tri_inverse_prechecked,
};

/// Constructors backed by hand-written kernels.
pub trait BasicConstructors<T: clfuse_core::ClType>: Sized {
    /// The `n x n` identity (view `Diagonal`).
    ///
    /// ```
    /// use clfuse_core::{MatrixCl, View};
    /// use clfuse_kernels::prelude::*;
    /// let i = MatrixCl::<f32>::identity(2)?;
    /// assert_eq!(i.to_vec()?, vec![1.0, 0.0, 0.0, 1.0]);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    fn identity(n: usize) -> clfuse_core::Result<Self>;
}

impl<T: clfuse_core::ClType> BasicConstructors<T> for clfuse_core::MatrixCl<T> {
    fn identity(n: usize) -> clfuse_core::Result<Self> {
        identity(n)
    }
}

/// The hand-written kernels' extension traits.
pub mod prelude {
    pub use crate::{BasicConstructors, GemmChoice, PackedTransfer};
}
