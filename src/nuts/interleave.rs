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
        let chunks = positions.chunks(dim.max(1)).take(batch);
        let prepared: Vec<Result<bool>> = self
            .densities
            .iter_mut()
            .zip(chunks)
            .map(|(density, position)| density.prepare(position))
            .collect();
        let started = self.queue_replays(prepared);
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

impl<M: Model> Interleaved<'_, M> {
    /// Queues together the replays the densities left to it (`Ok(true)`
    /// in `prepared`); each density's call is then started, or failed.
    fn queue_replays(&mut self, prepared: Vec<Result<bool>>) -> Vec<Result<()>> {
        let replaying: Vec<usize> = (0..prepared.len())
            .filter(|&k| matches!(prepared[k], Ok(true)))
            .collect();
        let queued = {
            let recordings: Option<Vec<_>> = replaying
                .iter()
                .map(|&k| self.densities[k].replaying())
                .collect();
            match recordings {
                Some(recordings) => self.batch.replay(&recordings),
                None => Err(Error::InvalidArgument {
                    function: "nuts::Interleaved",
                    argument: "densities",
                    reason: "a density left its replay to the batch but has no recording".into(),
                }),
            }
        };
        let mut started: Vec<Result<()>> = prepared.into_iter().map(|p| p.map(drop)).collect();
        match queued {
            Ok(reads) => {
                for (&k, reads) in replaying.iter().zip(reads) {
                    started[k] = self.densities[k].queued(reads);
                }
            }
            Err(e) => {
                // The first replaying chain reports the error; the others
                // did not start either.
                let mut error = Some(e);
                for &k in &replaying {
                    started[k] = Err(error.take().unwrap_or_else(|| Error::InvalidArgument {
                        function: "nuts::Interleaved",
                        argument: "densities",
                        reason: "the round's batched replay failed".into(),
                    }));
                }
            }
        }
        started
    }
}
