//! Sampling a device model with NUTS (the `nuts-rs` crate, feature `nuts`).
//!
//! Two levels:
//!
//! - [`sample`] runs several chains of a [`Model`] in parallel threads with
//!   Stan's defaults ([`Sampler`]), maps the draws to the model's named,
//!   constrained columns and returns a [`Fit`]; [`Fit::summary`] gives
//!   means, quantiles, MCSE, R̂ and bulk/tail ESS per column
//!   ([`diagnostics`]). [`UnconstrainedModel`] makes a model of a plain
//!   closure. [`sample_batched`] runs the chains of a [`BatchedModel`] in
//!   batches, one per device ([`Sampler::devices`]): each batch evaluates
//!   all its running chains' densities and gradients in one call
//!   ([`DeviceBatchDensity`]: parameters as `dim x chains` columns), or
//!   one batch whose data rows are split over the devices
//!   ([`Sampler::split_rows`], [`SplitBatchModel`], [`RowSplitDensity`]).
//! - [`DeviceDensity`] turns a model written with [`rev`](crate::rev) — a
//!   closure from one column of parameters to a `1 x 1` log density — into
//!   `nuts-rs`'s [`CpuLogpFunc`](nuts_rs::CpuLogpFunc). Each evaluation
//!   writes the position to the device, records the model, runs its reverse
//!   pass and reads value and gradient back in one transfer
//!   ([`rev::value_and_grad_to_host`](crate::rev::value_and_grad_to_host));
//!   the tape is truncated after each, so memory stays flat over a whole
//!   run. [`sample_chain`] runs one chain of any such density and keeps its
//!   unconstrained draws.
//!
//! ```
//! use clfuse::nuts::{Sampler, UnconstrainedModel, sample};
//! use clfuse::prelude::*;
//! use clfuse::rev::Var;
//! let y = MatrixCl::from_slice(4, 1, &[0.8, 1.3, 0.9, 1.4])?;
//! // y_i ~ N(mu, 1) with a flat prior: mu | y ~ N(mean(y), 1/4).
//! let model = UnconstrainedModel::new(1, |mu: &Var| {
//!     colwise_sum(-0.5f64 * square(&y - optional_broadcast(mu, 4, 1))).eval()
//! });
//! let fit = sample(&model, &Sampler { chains: 2, warmup: 200, draws: 200, ..Sampler::default() })?;
//! let summary = fit.summary();
//! assert!((summary.rows[0].mean - 1.1).abs() < 0.2);
//! # Ok::<(), clfuse::Error>(())
//! ```

/// The sampler crate, for its traits (`CpuLogpFunc`, `HasDims`).
pub use nuts_rs;

mod batch;
mod chains;
mod density;
pub mod diagnostics;
mod draws;
mod interleave;
pub use interleave::start_round;
mod model;
mod progress;
mod rendezvous;
mod settings;
mod single;
mod split;
mod summary;

pub use batch::{BatchDensity, BatchModel, BatchedModel, DeviceBatchDensity, SplitBatchModel};
pub use chains::{sample, sample_batched, sample_batched_with_stats};
pub use density::{DensityError, DeviceDensity, Interleave};
pub use draws::{ChainDraws, DrawStats, Fit};
pub use model::{Model, UnconstrainedModel};
pub use rendezvous::{BatchClient, BatchStats, serve_batches};
pub use settings::{Init, Interleaving, Sampler};
pub use single::{ChainResult, RunLength, sample_chain};
pub use split::RowSplitDensity;
pub use summary::{Summary, SummaryRow};
