//! The runtime beneath the expressions: transfers, events, the buffer pool,
//! the kernel and program caches, devices, configuration, profiling,
//! thread and bounds soundness, process exit and the kernel macros. One
//! test binary (`cargo test --test runtime`), a module per former test
//! file; filter by module, e.g. `cargo test --test runtime -- devices::`.
//!
//! Tests that must be alone in their process (they configure the runtime
//! before its first use, count process-wide builds, read the whole
//! profile, or empty the buffer pool or the kernel cache) run in a child
//! process of their own (`common::process::run_alone`); `process_exit`,
//! `program_cache`, `foundation` and `kernel_cache` also start children of
//! this binary, filtered to one test by its full name.

#[path = "../common/mod.rs"]
mod common;

mod buffer_pool;
mod configuration;
mod devices;
mod foundation;
mod in_order_queue;
mod kernel_cache;
mod macros;
mod no_fp64;
mod process_exit;
mod profiling;
mod program_cache;
mod side_queue;
mod small_writes;
mod soundness_targets;
mod soundness_threads;
mod sweeps;
