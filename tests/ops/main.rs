//! Fused expressions: element-wise operations and functions, reductions,
//! structural operations, the basic kernels and the GEMM epilogue, the
//! random-tree property tests and the golden sources. One test binary
//! (`cargo test --test ops`), a module per former test file; filter by
//! module, e.g. `cargo test --test ops -- ops_reductions::`.

#[path = "../common/mod.rs"]
mod common;

mod basic_kernels;
mod epilogue;
mod expression_helpers;
mod gather_errors;
mod golden_sources;
mod gp_covariance;
mod matrix_functions;
mod non_finite_inputs;
mod ops_distances;
mod ops_elementwise;
mod ops_functions;
mod ops_log_sum_exp;
mod ops_reductions;
mod ops_structural;
mod ops_transpose_product;
mod proptest_targets;
mod proptest_trees;
