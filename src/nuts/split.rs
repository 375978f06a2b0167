//! One batch of chains over several devices, split by data rows: every
//! device evaluates every chain on its share of the rows, and the host
//! sums the parts' values and gradients.
//!
//! Giving each device its share of the chains saves little when a batch
//! reads its data once whatever its number of chains (`x θ` is one GEMM
//! for all of them): each device still reads all of `x`. Splitting the
//! rows halves what each device reads. The calling thread evaluates the
//! first part itself; every other part runs on a worker thread of its own,
//! which owns the part's density (device variables are per thread). A call
//! sends the positions to every worker before it evaluates its own part,
//! so the devices work at once, and the host waits once per part.

use super::batch::{BatchDensity, BatchedModel, batch_width};
use clfuse_core::{Device, Error, Result};
use std::ops::Range;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};

/// A part's answer: the values of the batch's chains and their gradients.
type PartAnswer = Result<(Vec<f64>, Vec<f64>)>;

/// A part's worker, as the density that feeds it sees it.
struct Part {
    device: Device,
    rows: Range<usize>,
    ask: Sender<Arc<Vec<f64>>>,
    answers: Receiver<PartAnswer>,
}

/// A [`BatchDensity`] whose data rows are split over devices (see the
/// module notes): what [`sample_batched`](super::sample_batched) serves
/// the chains with when [`Sampler::split_rows`](super::Sampler::split_rows)
/// is set. Its workers live in the scope given to [`start`](Self::start)
/// and stop when it is dropped.
///
/// ```
/// use clfuse::nuts::{BatchDensity, RowSplitDensity, SplitBatchModel};
/// use clfuse::prelude::*;
/// use clfuse::rev::Var;
/// let y: Vec<f64> = (0..7).map(|i| i as f64).collect();
/// let model = SplitBatchModel::new(
///     1,
///     y.len(),
///     |rows: std::ops::Range<usize>| MatrixCl::from_slice(rows.len(), 1, &y[rows]),
///     |y: &MatrixCl<f64>, mu: &Var| {
///         let (n, k) = (y.rows(), mu.cols());
///         colwise_sum(-0.5f64 * square(colwise_broadcast(y, k) - rowwise_broadcast(mu, n))).eval()
///     },
///     |mu: &Var| (-0.5f64 * square(mu)).eval(),
/// );
/// let device = clfuse::Device::default_device()?;
/// std::thread::scope(|scope| {
///     // Two parts on one device here; on a machine with two GPUs, one each.
///     let mut density = RowSplitDensity::start(scope, &model, &[device, device])?;
///     let mut gradient = [0.0];
///     let value = density.evaluate(&[3.0], &mut gradient)?;
///     // Σ -(y - 3)²/2 - 3²/2 over y = 0..6: -14 - 4.5; d/dμ = Σ (y - 3) - 3.
///     assert!((value[0] + 18.5).abs() < 1e-12 && (gradient[0] + 3.0).abs() < 1e-12);
///     Ok::<(), clfuse::Error>(())
/// })?;
/// # Ok::<(), clfuse::Error>(())
/// ```
pub struct RowSplitDensity<'scope, M: BatchedModel + 'scope> {
    dim: usize,
    /// The first part (with the prior), evaluated by the calling thread;
    /// its density is built there at the first call.
    local: LocalPart<'scope, M>,
    /// The other parts, each on its worker.
    remote: Vec<Part>,
}

/// The part the calling thread evaluates itself: one thread hand-off less
/// per call than a worker's.
struct LocalPart<'scope, M: BatchedModel + 'scope> {
    model: &'scope M,
    device: Device,
    rows: Range<usize>,
    density: Option<Result<M::Density<'scope>>>,
}

impl<'scope, M: BatchedModel + 'scope> RowSplitDensity<'scope, M> {
    /// Splits `model`'s rows into near-equal consecutive shares, one per
    /// device of `devices` (a device listed twice takes two shares; equal
    /// shares suit devices of one kind, such as a host's GPUs). The
    /// first share with rows also evaluates the prior and is evaluated by
    /// the thread that calls [`evaluate`](BatchDensity::evaluate); every
    /// other share with rows gets a worker in `scope`. Each part's density
    /// ([`BatchedModel::part_density`]: the part's data uploaded once, on
    /// its device) is built before its first evaluation; an error there is
    /// that evaluation's error.
    pub fn start(
        scope: &'scope std::thread::Scope<'scope, '_>,
        model: &'scope M,
        devices: &[Device],
    ) -> Result<Self> {
        let rows = model.rows().ok_or_else(|| Error::InvalidArgument {
            function: "RowSplitDensity::start",
            argument: "model",
            reason: "its rows cannot be split (BatchedModel::rows is None)".into(),
        })?;
        if devices.is_empty() {
            return Err(Error::InvalidArgument {
                function: "RowSplitDensity::start",
                argument: "devices",
                reason: "is empty".into(),
            });
        }
        let shares = devices.len();
        let share = |k: usize| k * rows / shares..(k + 1) * rows / shares;
        // The prior goes with the first share that has rows (the first
        // share when none has); other shares without rows (fewer rows than
        // devices) have nothing to add.
        let first = (0..shares).find(|&k| !share(k).is_empty()).unwrap_or(0);
        let remote = (first + 1..shares)
            .filter(|&k| !share(k).is_empty())
            .map(|k| start_part(scope, model, devices[k], share(k)))
            .collect();
        Ok(RowSplitDensity {
            dim: model.dim(),
            local: LocalPart {
                model,
                device: devices[first],
                rows: share(first),
                density: None,
            },
            remote,
        })
    }

    /// The devices and rows of the parts, in order (the first adds the
    /// prior and is evaluated by the calling thread).
    pub fn parts(&self) -> Vec<(Device, Range<usize>)> {
        std::iter::once((self.local.device, self.local.rows.clone()))
            .chain(self.remote.iter().map(|p| (p.device, p.rows.clone())))
            .collect()
    }
}

impl<M: BatchedModel> LocalPart<'_, M> {
    fn evaluate(&mut self, positions: &[f64]) -> PartAnswer {
        let (model, device) = (self.model, self.device);
        let rows = self.rows.clone();
        device.run(|| {
            let density = self
                .density
                .get_or_insert_with(|| model.part_density(device, rows, true));
            evaluate_part(density, positions)
        })
    }
}

/// One part's answer from its density, or the error building it gave.
fn evaluate_part<D: BatchDensity>(density: &mut Result<D>, positions: &[f64]) -> PartAnswer {
    let d = density.as_mut().map_err(|e| e.clone())?;
    let mut gradients = vec![0.0; positions.len()];
    d.evaluate(positions, &mut gradients)
        .map(|values| (values, gradients))
}

/// Starts the worker of one part: it builds the part's density on its
/// device, then answers every batch it is sent until the density that
/// feeds it is dropped.
fn start_part<'scope, M: BatchedModel>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    model: &'scope M,
    device: Device,
    rows: Range<usize>,
) -> Part {
    let (ask, asked) = channel::<Arc<Vec<f64>>>();
    let (answer, answers) = channel::<PartAnswer>();
    let share = rows.clone();
    scope.spawn(move || {
        // A panicking part ends its worker: its channels close, and the
        // density reports the part as stopped instead of the panic
        // reaching the scope.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            device.run(|| {
                let mut density = model.part_density(device, share, false);
                while let Ok(positions) = asked.recv() {
                    let reply = evaluate_part(&mut density, &positions);
                    if answer.send(reply).is_err() {
                        return;
                    }
                }
            })
        }));
    });
    Part {
        device,
        rows,
        ask,
        answers,
    }
}

impl Part {
    fn stopped(&self) -> Error {
        Error::Unsupported {
            what: format!(
                "nuts::RowSplitDensity: the worker of rows {:?} on device {} has stopped (its model panicked)",
                self.rows,
                self.device.info().index
            ),
        }
    }
}

impl<M: BatchedModel> BatchDensity for RowSplitDensity<'_, M> {
    fn dim(&self) -> usize {
        self.dim
    }

    fn evaluate(&mut self, positions: &[f64], gradients: &mut [f64]) -> Result<Vec<f64>> {
        let batch = batch_width("RowSplitDensity::evaluate", self.dim, positions, gradients)?;
        // The workers are asked before this thread evaluates its own part,
        // so the devices work at once; every worker that was asked is
        // heard, even after an error, so that no answer is left for the
        // next call.
        let shared = Arc::new(positions.to_vec());
        let asked: Vec<bool> = self
            .remote
            .iter()
            .map(|p| p.ask.send(Arc::clone(&shared)).is_ok())
            .collect();
        let own = self.local.evaluate(positions);
        let answers = std::iter::once((own, self.local.rows.clone())).chain(
            self.remote.iter().zip(asked).map(|(part, asked)| {
                let answer = if asked {
                    part.answers.recv().unwrap_or_else(|_| Err(part.stopped()))
                } else {
                    Err(part.stopped())
                };
                (answer, part.rows.clone())
            }),
        );
        let mut values = vec![0.0; batch];
        let mut total = vec![0.0; gradients.len()];
        let mut first_error = None;
        for (answer, rows) in answers {
            match answer {
                Ok((v, g)) if v.len() == batch && g.len() == total.len() => {
                    values.iter_mut().zip(&v).for_each(|(a, b)| *a += b);
                    total.iter_mut().zip(&g).for_each(|(a, b)| *a += b);
                }
                Ok((v, _)) => {
                    first_error.get_or_insert(Error::InvalidArgument {
                        function: "RowSplitDensity::evaluate",
                        argument: "model",
                        reason: format!(
                            "the part of rows {rows:?} gave {} values for {batch} positions",
                            v.len()
                        ),
                    });
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => {
                gradients.copy_from_slice(&total);
                Ok(values)
            }
        }
    }
}
