//! The rendezvous of a batch of chains: each chain's density call waits
//! until every running chain of its batch has asked (or the others have
//! finished), then one batched evaluation answers them all.
//!
//! A batch has one thread, started by [`serve_batches`], that owns the
//! device's [`BatchDensity`] (device variables are per thread) and
//! evaluates; each chain holds a [`BatchClient`], a `nuts-rs` log density
//! that sends its position there and waits for its answer. A chain that
//! finishes, fails or panics drops its client, which tells the batch
//! thread not to wait for it again: no call is lost and no chain waits for
//! one that is gone.

use super::DensityError;
use super::batch::BatchDensity;
use clfuse_core::{Device, Error, Result};
use nuts_rs::{CpuLogpFunc, CpuMathError, HasDims, LogpError};
use std::collections::HashMap;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

/// One chain's answer: its log density and gradient.
type Answer = Result<(f64, Vec<f64>)>;

/// What a chain tells its batch.
enum Call {
    /// Evaluate at `position` and answer on `reply`.
    Ask {
        chain: usize,
        position: Vec<f64>,
        reply: Sender<Answer>,
    },
    /// The chain has finished (or stopped): do not wait for it.
    Leave,
}

/// How a batch thread's work went, for tests and benchmarks.
///
/// ```
/// let stats = clfuse::nuts::BatchStats::default();
/// assert_eq!((stats.batches, stats.evaluations), (0, 0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// Batched evaluations fired.
    pub batches: u64,
    /// Chain evaluations answered (the sum of the batches' sizes).
    pub evaluations: u64,
    /// Batches that failed with a recoverable error and were evaluated
    /// again chain by chain, so that only the failing chain got the error.
    pub retried: u64,
}

/// A chain's log density, answered by its batch: what `nuts-rs` samples
/// with. Dropping it tells the batch the chain has left.
pub struct BatchClient {
    dim: usize,
    chain: usize,
    calls: Sender<Call>,
}

impl BatchClient {
    /// The log density at `position` and its gradient, evaluated in the
    /// batch of every running chain of this client's device.
    pub fn value_and_grad(&mut self, position: &[f64], gradient: &mut [f64]) -> Result<f64> {
        let gone = || Error::Unsupported {
            what: format!(
                "nuts::BatchClient: chain {}'s batch thread has stopped (its model failed or panicked)",
                self.chain + 1
            ),
        };
        if position.len() != self.dim || gradient.len() != self.dim {
            return Err(Error::InvalidArgument {
                function: "BatchClient::value_and_grad",
                argument: "position",
                reason: format!(
                    "has {} values and gradient {} for {} parameters",
                    position.len(),
                    gradient.len(),
                    self.dim
                ),
            });
        }
        // A channel per call: its only sender travels with the call, so a
        // batch thread that stops (drops it) wakes this chain with an error.
        let (reply, answer) = channel();
        self.calls
            .send(Call::Ask {
                chain: self.chain,
                position: position.to_vec(),
                reply,
            })
            .map_err(|_| gone())?;
        let (value, grad) = answer.recv().map_err(|_| gone())??;
        gradient.copy_from_slice(&grad);
        Ok(value)
    }
}

impl Drop for BatchClient {
    fn drop(&mut self) {
        // The batch thread may be gone already: nothing then waits for us.
        let _ = self.calls.send(Call::Leave);
    }
}

impl HasDims for BatchClient {
    fn dim_sizes(&self) -> HashMap<String, u64> {
        HashMap::from([("unconstrained_parameter".to_string(), self.dim as u64)])
    }
}

impl CpuLogpFunc for BatchClient {
    type LogpError = DensityError;
    type FlowParameters = ();
    type ExpandedVector = Vec<f64>;

    fn dim(&self) -> usize {
        self.dim
    }

    fn logp(
        &mut self,
        position: &[f64],
        gradient: &mut [f64],
    ) -> std::result::Result<f64, DensityError> {
        let value = self.value_and_grad(position, gradient);
        super::density::not_nan("BatchClient::logp", self.chain, value)
    }

    fn expand_vector<R: nuts_rs::rand::Rng + ?Sized>(
        &mut self,
        _rng: &mut R,
        array: &[f64],
    ) -> std::result::Result<Vec<f64>, CpuMathError> {
        Ok(array.to_vec())
    }
}

/// Starts the batch thread of `chains` (their numbers, which also order
/// the columns of a batch) of a `dim`-parameter density on `device`,
/// inside `scope`: it builds the
/// density with `build` (with `device` current) and answers the chains'
/// calls in batches until every client has been dropped. Returns one
/// client per chain, in the order given, and the thread's statistics,
/// complete once the scope has ended.
///
/// A batch fires when every chain still running has asked. When a batched
/// evaluation fails with a recoverable error (a failed argument check, a
/// non-finite value), each chain of the batch is evaluated alone, so that
/// only a chain whose own position fails gets the error; any other error
/// goes to every chain of the batch. A density that cannot be built fails
/// every call.
///
/// ```
/// use clfuse::nuts::{DeviceBatchDensity, serve_batches};
/// use clfuse::prelude::*;
/// let device = clfuse::Device::default_device()?;
/// std::thread::scope(|scope| -> clfuse::Result<()> {
///     let (clients, _stats) = serve_batches(scope, device, 1, &[0, 1], || {
///         DeviceBatchDensity::new(1, |theta| colwise_sum(-0.5f64 * square(theta)).eval())
///     });
///     let answers: Vec<f64> = std::thread::scope(|chains| {
///         let handles: Vec<_> = clients
///             .into_iter()
///             .enumerate()
///             .map(|(k, mut client)| chains.spawn(move || {
///                 let mut g = [0.0];
///                 client.value_and_grad(&[k as f64 + 1.0], &mut g)
///             }))
///             .collect();
///         handles.into_iter().map(|h| h.join().unwrap()).collect::<clfuse::Result<_>>()
///     })?;
///     assert_eq!(answers, [-0.5, -2.0]);
///     Ok(())
/// })?;
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn serve_batches<'scope, D, B>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    device: Device,
    dim: usize,
    chains: &[usize],
    build: B,
) -> (Vec<BatchClient>, Arc<Mutex<BatchStats>>)
where
    D: BatchDensity,
    B: FnOnce() -> Result<D> + Send + 'scope,
{
    let (calls, incoming) = channel();
    let stats = Arc::new(Mutex::new(BatchStats::default()));
    let live = chains.len();
    let thread_stats = Arc::clone(&stats);
    scope.spawn(move || {
        // A panicking model ends this thread quietly: its channels close,
        // so every chain waiting here gets an error instead of the panic
        // reaching the scope.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            device.run(|| {
                let density = std::panic::catch_unwind(std::panic::AssertUnwindSafe(build))
                    .unwrap_or_else(|panic| Err(model_panicked("building the density", &*panic)));
                serve(density, incoming, live, &thread_stats);
            })
        }));
    });
    let clients = chains
        .iter()
        .map(|&chain| BatchClient {
            dim,
            chain,
            calls: calls.clone(),
        })
        .collect();
    (clients, stats)
}

/// The batch thread's loop.
fn serve<D: BatchDensity>(
    mut density: Result<D>,
    incoming: Receiver<Call>,
    mut live: usize,
    stats: &Mutex<BatchStats>,
) {
    let mut pending: Vec<(usize, Vec<f64>, Sender<Answer>)> = Vec::new();
    while live > 0 {
        if pending.len() >= live {
            pending.sort_by_key(|(chain, ..)| *chain);
            let batch = std::mem::take(&mut pending);
            let mut counts = stats.lock().unwrap_or_else(|p| p.into_inner());
            counts.batches += 1;
            counts.evaluations += batch.len() as u64;
            drop(counts);
            let panicked = match &mut density {
                Ok(d) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    answer(d, &batch, stats)
                }))
                .err(),
                Err(e) => {
                    batch.iter().for_each(|(.., reply)| {
                        let _ = reply.send(Err(e.clone()));
                    });
                    None
                }
            };
            if let Some(panic) = panicked {
                // Every chain of the batch, and every later call, gets the panic's message.
                let chains: Vec<String> = batch.iter().map(|(c, ..)| (c + 1).to_string()).collect();
                let error =
                    model_panicked(&format!("evaluating chains {}", chains.join(", ")), &*panic);
                batch.iter().for_each(|(.., reply)| {
                    let _ = reply.send(Err(error.clone()));
                });
                density = Err(error);
            }
            continue;
        }
        match incoming.recv() {
            Ok(Call::Ask {
                chain,
                position,
                reply,
            }) => pending.push((chain, position, reply)),
            Ok(Call::Leave) => live -= 1,
            // Every client is gone.
            Err(_) => return,
        }
    }
}

/// The error of a model that panicked while `doing` something.
fn model_panicked(doing: &str, panic: &(dyn std::any::Any + Send)) -> Error {
    Error::InvalidArgument {
        function: "nuts::serve_batches",
        argument: "model",
        reason: format!(
            "the model panicked {doing}: {}",
            super::chains::panic_message(panic)
        ),
    }
}

/// Evaluates one batch and answers each chain.
fn answer<D: BatchDensity>(
    density: &mut D,
    batch: &[(usize, Vec<f64>, Sender<Answer>)],
    stats: &Mutex<BatchStats>,
) {
    let dim = density.dim();
    if let Some((chain, position, _)) = batch.iter().find(|(_, p, _)| p.len() != dim) {
        let error = Error::InvalidArgument {
            function: "nuts::serve_batches",
            argument: "position",
            reason: format!(
                "chain {} asked at {} values; the density has {dim} parameters",
                chain + 1,
                position.len()
            ),
        };
        batch.iter().for_each(|(.., reply)| {
            let _ = reply.send(Err(error.clone()));
        });
        return;
    }
    let positions: Vec<f64> = batch
        .iter()
        .flat_map(|(_, p, _)| p.iter().copied())
        .collect();
    let mut gradients = vec![0.0; positions.len()];
    match evaluate(density, &positions, &mut gradients) {
        Ok(values) => {
            for ((_, _, reply), (value, gradient)) in batch
                .iter()
                .zip(values.into_iter().zip(gradients.chunks(dim)))
            {
                let _ = reply.send(Ok((value, gradient.to_vec())));
            }
        }
        Err(e) if batch.len() > 1 && DensityError(e.clone()).is_recoverable() => {
            stats.lock().unwrap_or_else(|p| p.into_inner()).retried += 1;
            for (_, position, reply) in batch {
                let mut gradient = vec![0.0; dim];
                let one =
                    evaluate(density, position, &mut gradient).map(|values| (values[0], gradient));
                let _ = reply.send(one);
            }
        }
        Err(e) => batch.iter().for_each(|(.., reply)| {
            let _ = reply.send(Err(e.clone()));
        }),
    }
}

/// One batched evaluation, its number of values checked.
fn evaluate<D: BatchDensity>(
    density: &mut D,
    positions: &[f64],
    gradients: &mut [f64],
) -> Result<Vec<f64>> {
    let expected = positions.len() / density.dim().max(1);
    let values = density.evaluate(positions, gradients)?;
    if values.len() != expected {
        return Err(Error::InvalidArgument {
            function: "nuts::serve_batches",
            argument: "density",
            reason: format!(
                "evaluate returned {} values for {expected} positions",
                values.len()
            ),
        });
    }
    Ok(values)
}
