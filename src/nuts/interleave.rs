//! Interleaved chains: one thread evaluates a device's chains, queuing
//! every chain's call before waiting for any.
//!
//! A replayed gradient call is a few kernels and one read-back; most of
//! its time is the round trip, the device idle while the host waits. Four
//! chains calling from four threads wait four times, one behind the other
//! on the device's queue. Here the chains meet at a rendezvous (as batched
//! chains do, [`serve_batches`](super::serve_batches)), and each round
//! starts every waiting chain's call ([`Interleave::start`])
//! and then finishes them ([`Interleave::finish`]): the device runs the calls back
//! to back and the host waits about once per round. Each chain keeps a
//! density of its own, so a model is written as for one chain.
//!
//! Chains whose densities replay recorded work have their replays queued
//! together ([`ReplayBatch`]): each recorded kernel is launched once for
//! every chain of the round (`FUSION_BATCH_CHAINS`).

use super::{BatchDensity, Interleave, Model};
use clfuse_core::{Error, ReplayBatch, Result};

/// A device's chains as one [`BatchDensity`]: column `k` of a batch is
/// evaluated by the `k`-th of the model's interleaved densities (made as
/// needed; any density serves any chain, as each does the same work).
pub(crate) struct Interleaved<'m, M: Model> {
    model: &'m M,
    densities: Vec<Box<dyn Interleave + 'm>>,
    /// Queues the round's replays together.
    batch: ReplayBatch,
}

impl<'m, M: Model> Interleaved<'m, M> {
    pub(crate) fn new(model: &'m M) -> Self {
        Interleaved {
            model,
            densities: Vec::new(),
            batch: ReplayBatch::new(),
        }
    }
}

impl<M: Model> BatchDensity for Interleaved<'_, M> {
    fn dim(&self) -> usize {
        self.model.dim()
    }

    fn evaluate(&mut self, positions: &[f64], gradients: &mut [f64]) -> Result<Vec<f64>> {
        let dim = self.model.dim();
        let batch = super::batch::batch_width("nuts::Interleaved", dim, positions, gradients)?;
        while self.densities.len() < batch {
            let density =
                self.model
                    .interleaved_density()
                    .ok_or_else(|| Error::InvalidArgument {
                        function: "nuts::sample",
                        argument: "sampler",
                        reason: "interleave is set, but the model has no interleaved density \
                             (Model::interleaved_density)"
                            .into(),
                    })??;
            self.densities.push(density);
        }
        let chunks: Vec<&[f64]> = positions.chunks(dim.max(1)).take(batch).collect();
        let started = start_round(&mut self.batch, &mut self.densities[..batch], &chunks);
        // Every started call is finished before an error returns.
        let mut values = Vec::with_capacity(batch);
        let mut first_error = None;
        for ((density, begun), gradient) in self
            .densities
            .iter_mut()
            .zip(started)
            .zip(gradients.chunks_mut(dim.max(1)))
        {
            match begun.and_then(|()| density.finish(gradient)) {
                Ok(value) => values.push(value),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(values),
        }
    }
}

/// Starts each density's evaluation at its position (`densities[k]` at
/// `positions[k]`) and queues the replays among them together (`batch`,
/// see [`ReplayBatch`]), as [`sample`](super::sample) does for a round of
/// a device's interleaved chains. Returns whether each one started; those
/// that did are waited for by [`Interleave::finish`].
///
/// ```
/// use clfuse::nuts::{DeviceDensity, Interleave, start_round};
/// use clfuse::prelude::*;
/// let model = |t: &clfuse::rev::Var| colwise_sum(-0.5f64 * square(t)).eval();
/// let mut densities = vec![DeviceDensity::new(1, model)?, DeviceDensity::new(1, model)?];
/// let mut batch = clfuse::ReplayBatch::new();
/// let mut g = [0.0];
/// for x in [1.0, 2.0, 3.0] {
///     // From the third round on, both replay, launched together.
///     for started in start_round(&mut batch, &mut densities, &[&[x], &[-x]]) {
///         started?;
///     }
///     assert_eq!(densities[0].finish(&mut g)?, -0.5 * x * x);
///     assert_eq!(g, [-x]);
///     assert_eq!(densities[1].finish(&mut g)?, -0.5 * x * x);
///     assert_eq!(g, [x]);
/// }
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn start_round<D: Interleave>(
    batch: &mut ReplayBatch,
    densities: &mut [D],
    positions: &[&[f64]],
) -> Vec<Result<()>> {
    let prepared: Vec<Result<bool>> = densities
        .iter_mut()
        .zip(positions)
        .map(|(density, position)| density.prepare(position))
        .collect();
    let replaying: Vec<usize> = (0..prepared.len())
        .filter(|&k| matches!(prepared[k], Ok(true)))
        .collect();
    let queued = {
        let recordings: Option<Vec<_>> = replaying
            .iter()
            .map(|&k| densities[k].replaying())
            .collect();
        match recordings {
            Some(recordings) => batch.replay(&recordings),
            None => Err(Error::InvalidArgument {
                function: "nuts::start_round",
                argument: "densities",
                reason: "a density left its replay to the round but has no recording".into(),
            }),
        }
    };
    let mut started: Vec<Result<()>> = prepared.into_iter().map(|p| p.map(drop)).collect();
    match queued {
        Ok(reads) => {
            for (&k, reads) in replaying.iter().zip(reads) {
                started[k] = densities[k].queued(reads);
            }
        }
        Err(e) => {
            // The first replaying density reports the error; the others
            // did not start either.
            let mut error = Some(e);
            for &k in &replaying {
                started[k] = Err(error.take().unwrap_or_else(|| Error::InvalidArgument {
                    function: "nuts::start_round",
                    argument: "densities",
                    reason: "the round's replays failed to queue".into(),
                }));
            }
        }
    }
    started
}
