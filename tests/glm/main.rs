//! The GLM likelihoods: values and gradients, validation errors, and the
//! frozen staged and prefetched kernels. One test binary
//! (`cargo test --test glm`), a module per former test file; filter by
//! module, e.g. `cargo test --test glm -- glm_errors::` (`glm::` also
//! matches `golden_glm::`: add `--skip golden_glm::` for the likelihoods
//! alone).
//!
//! `golden_glm` configures the runtime before its first use, so it runs in
//! a child process of its own (`common::process::run_alone`).

#[path = "../common/mod.rs"]
mod common;

mod glm;
mod glm_errors;
mod golden_glm;
