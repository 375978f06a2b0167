//! Reverse mode: derivatives of every function, structural operations,
//! nested steps, the hand-written leaves, inline products, random trees and
//! memory in a sampler's loop. One test binary (`cargo test --test rev`), a
//! module per former test file; filter by module, e.g.
//! `cargo test --test rev -- rev_nested::`.
//!
//! `rev_memory` measures the process's memory, so it runs in a child
//! process of its own (`common::process::run_alone`).

#[path = "../common/mod.rs"]
mod common;

mod rev_basics;
mod rev_functions;
mod rev_gp_cov;
mod rev_inline_products;
mod rev_leaves;
mod rev_lent_adjoints;
mod rev_matrix_functions;
mod rev_memory;
mod rev_nested;
mod rev_params;
mod rev_proptest;
mod rev_replay;
mod rev_scalar_variables;
mod rev_structure;
mod rev_sweep;
