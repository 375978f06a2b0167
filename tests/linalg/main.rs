//! The linear-algebra kernels: GEMM, Cholesky, triangular inverse and
//! solves, and their adjoints. One test binary (`cargo test --test linalg`),
//! a module per former test file; filter by module, e.g.
//! `cargo test --test linalg -- cholesky::`.

#[path = "../common/mod.rs"]
mod common;

mod adjoints;
mod cholesky;
mod gemm;
mod log_softmax_rows;
mod log_sum_exp_rows;
mod triangular;
