//! Several chains of a [`Model`] in parallel threads ([`sample`]).

use super::interleave::Interleaved;
use super::progress::{ChainProgress, RunProgress};
use super::settings::MAX_INIT_ATTEMPTS;
use super::{
    BatchClient, BatchStats, BatchedModel, ChainDraws, DensityError, DrawStats, Fit, Init, Model,
    RowSplitDensity, Sampler, serve_batches,
};
use clfuse_core::{Device, Error, Result};
use nuts_rs::rand::rngs::StdRng;
use nuts_rs::rand::{RngExt, SeedableRng};
use nuts_rs::{Chain, CpuLogpFunc, CpuMath, LogpError, NutsError, Settings};
use std::fmt::Display;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

fn failed(argument: &'static str, reason: String) -> Error {
    Error::InvalidArgument {
        function: "nuts::sample",
        argument,
        reason,
    }
}

/// Runs [`Sampler::chains`] NUTS chains of `model`, each on its own thread
/// with its own density and seeded stream, and returns their draws mapped
/// to the constrained columns ([`Model::constrain`]).
///
/// Fails on invalid settings ([`Sampler::validate`]), when no finite
/// initial point is found (100 random tries per chain, as Stan), when a
/// given initial point has a non-finite log density or gradient, or when a
/// chain stops on an unrecoverable model error; the first chain's error is
/// returned and the other chains stop early.
///
/// ```
/// use clfuse::nuts::{Sampler, UnconstrainedModel, sample};
/// use clfuse::prelude::*;
/// use clfuse::rev::Var;
/// // A standard normal in two dimensions.
/// let model = UnconstrainedModel::new(2, |t: &Var| colwise_sum(-0.5f64 * square(t)).eval());
/// let sampler = Sampler { chains: 2, warmup: 100, draws: 100, seed: 1, ..Sampler::default() };
/// let fit = sample(&model, &sampler)?;
/// assert_eq!(fit.column("theta[2]").map(|c| c.len()), Some(2));
/// println!("{}", fit.summary());
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn sample<M: Model>(model: &M, sampler: &Sampler) -> Result<Fit> {
    let dim = model.dim();
    sampler.validate(dim)?;
    if sampler.split_rows {
        return Err(Error::InvalidArgument {
            function: "nuts::sample",
            argument: "sampler",
            reason: "split_rows needs batched chains: use sample_batched with a splittable model"
                .into(),
        });
    }
    let devices = sampler.devices_or_default()?;
    let names = model.column_names();
    let constrain = |u: &[f64]| model.constrain(u);
    let chain_model = ChainModel {
        dim,
        columns: names.len(),
        constrain: &constrain,
    };
    if model.interleaves() && sampler.interleave.applies(&devices) {
        // Each device's chains from one thread (see `interleave`).
        return std::thread::scope(|scope| {
            let (clients, _) = serve_devices(scope, sampler, &devices, dim, |_| {
                move || Ok(Interleaved::new(model))
            });
            run_clients(sampler, names, &chain_model, clients)
        });
    }
    run_chains(sampler, names, &|chain, bar, stop| {
        devices[sampler.device_of(chain, devices.len())].run(|| {
            let density = model.density()?;
            run_chain(density, &chain_model, sampler, chain, bar, stop)
        })
    })
}

/// Starts a batch thread on each of `devices` that has chains (its share,
/// [`Sampler::device_of`]), evaluating them with the density `build(device)`
/// makes there. Returns each chain's client, by chain, and each thread's
/// statistics (complete once `scope` ends).
fn serve_devices<'scope, D, B>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    sampler: &Sampler,
    devices: &[Device],
    dim: usize,
    build: impl Fn(Device) -> B,
) -> (Vec<Option<BatchClient>>, Vec<Arc<Mutex<BatchStats>>>)
where
    D: super::BatchDensity,
    B: FnOnce() -> Result<D> + Send + 'scope,
{
    let mut clients: Vec<Option<BatchClient>> = (0..sampler.chains).map(|_| None).collect();
    let mut stats = Vec::new();
    for (index, &device) in devices.iter().enumerate() {
        let chains: Vec<usize> = (0..sampler.chains)
            .filter(|&c| sampler.device_of(c, devices.len()) == index)
            .collect();
        if chains.is_empty() {
            continue;
        }
        let (served, device_stats) = serve_batches(scope, device, dim, &chains, build(device));
        for (chain, client) in chains.into_iter().zip(served) {
            clients[chain] = Some(client);
        }
        stats.push(device_stats);
    }
    (clients, stats)
}

/// Runs every chain against its batch thread's client.
fn run_clients(
    sampler: &Sampler,
    names: Vec<String>,
    chain_model: &ChainModel<'_>,
    clients: Vec<Option<BatchClient>>,
) -> Result<Fit> {
    let clients = Mutex::new(clients);
    let fit = run_chains(sampler, names, &|chain, bar, stop| {
        let client = clients
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(chain)
            .and_then(Option::take)
            .ok_or_else(|| failed("chains", format!("chain {} has no batch", chain + 1)))?;
        run_chain(client, chain_model, sampler, chain, bar, stop)
    });
    // Clients of chains that never started leave their batches here,
    // so that the batch threads end before the scope joins them.
    drop(clients);
    fit
}

/// Runs [`Sampler::chains`] NUTS chains of a [`BatchedModel`] with each
/// device's chains batched: every listed device ([`Sampler::devices`],
/// default: the default device) gets a consecutive share of the chains
/// and one batch thread, which builds the model's density there once (its
/// data uploaded once per device) and evaluates all of the device's running
/// chains in one call. Each chain is still its own `nuts-rs` sampler on its
/// own thread, seeded as in [`sample`]: it waits at its batch's rendezvous
/// until the batch's other running chains have asked too
/// ([`serve_batches`](super::serve_batches)), so a chain's draws are those
/// of an unbatched run with the same seed (up to the last bits of the
/// batched evaluation's arithmetic).
///
/// With [`Sampler::split_rows`] and several devices there is one batch of
/// every chain instead, whose data rows are split over the devices
/// ([`RowSplitDensity`]: each device evaluates every chain on its share;
/// the model must be splittable, such as a
/// [`SplitBatchModel`](super::SplitBatchModel)).
///
/// Errors as [`sample`]'s; a device whose evaluation fails gives its
/// chains that error, the run stops and returns it.
///
/// ```
/// use clfuse::nuts::{BatchModel, Sampler, sample_batched};
/// use clfuse::prelude::*;
/// use clfuse::rev::Var;
/// // A standard normal in two dimensions; theta is 2 x (chains).
/// let model = BatchModel::new(2, || Ok(()), |_: &(), theta: &Var| {
///     colwise_sum(-0.5f64 * square(theta)).eval()
/// });
/// let sampler = Sampler { chains: 3, warmup: 100, draws: 100, seed: 1, ..Sampler::default() };
/// let fit = sample_batched(&model, &sampler)?;
/// assert_eq!(fit.chains().len(), 3);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn sample_batched<M: BatchedModel>(model: &M, sampler: &Sampler) -> Result<Fit> {
    sample_batched_with_stats(model, sampler).map(|(fit, _)| fit)
}

/// [`sample_batched`], with each device's [`BatchStats`] (in
/// [`Sampler::devices`] order; a device without chains has none; one for
/// the whole batch when its rows are split).
pub fn sample_batched_with_stats<M: BatchedModel>(
    model: &M,
    sampler: &Sampler,
) -> Result<(Fit, Vec<BatchStats>)> {
    let dim = model.dim();
    sampler.validate(dim)?;
    let devices = sampler.devices_or_default()?;
    let names = model.column_names();
    let constrain = |u: &[f64]| model.constrain(u);
    let chain_model = ChainModel {
        dim,
        columns: names.len(),
        constrain: &constrain,
    };
    if sampler.split_rows && model.rows().is_none() {
        return Err(Error::InvalidArgument {
            function: "nuts::sample_batched",
            argument: "model",
            reason: "split_rows is set, but the model's rows cannot be split (BatchedModel::rows is None)"
                .into(),
        });
    }
    std::thread::scope(|scope| {
        // Each batch: its device, its chains, and how it builds its density.
        let (clients, all_stats) = if sampler.split_rows && devices.len() > 1 {
            // One batch of every chain, its rows over every device.
            // Built on the batch thread, which evaluates the first part.
            let chains: Vec<usize> = (0..sampler.chains).collect();
            let on = devices.clone();
            let (served, stats) = serve_batches(scope, devices[0], dim, &chains, move || {
                RowSplitDensity::start(scope, model, &on)
            });
            (served.into_iter().map(Some).collect(), vec![stats])
        } else {
            serve_devices(scope, sampler, &devices, dim, |device| {
                move || model.density(device)
            })
        };
        let fit = run_clients(sampler, names, &chain_model, clients)?;
        Ok::<_, Error>((fit, all_stats))
    })
    .map(|(fit, stats): (Fit, Vec<Arc<Mutex<BatchStats>>>)| {
        let stats = stats
            .iter()
            .map(|s| *s.lock().unwrap_or_else(|p| p.into_inner()))
            .collect();
        (fit, stats)
    })
}

/// Runs every chain with `run_one(chain, bar, stop)` on its own thread,
/// stops the others when one fails, and gathers the draws.
fn run_chains(
    sampler: &Sampler,
    names: Vec<String>,
    run_one: &(dyn Fn(usize, &ChainProgress, &AtomicBool) -> Result<Option<ChainDraws>> + Sync),
) -> Result<Fit> {
    let progress = RunProgress::new(
        sampler.progress,
        sampler.chains,
        sampler.warmup + sampler.draws,
    );
    let stop = AtomicBool::new(false);
    let results: Vec<Result<Option<ChainDraws>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..sampler.chains)
            .map(|chain| {
                let (bar, stop) = (progress.bar(chain), &stop);
                scope.spawn(move || {
                    // A panicking model stops the other chains too, and
                    // becomes this chain's error.
                    let result = catch_unwind(AssertUnwindSafe(|| run_one(chain, &bar, stop)))
                        .unwrap_or_else(|panic| Err(panicked(chain, panic.as_ref())));
                    if result.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    bar.finish(matches!(result, Ok(Some(_))));
                    result
                })
            })
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(chain, handle)| {
                handle
                    .join()
                    .unwrap_or_else(|panic| Err(panicked(chain, panic.as_ref())))
            })
            .collect()
    });
    // The first real failure, not a chain that stopped because of it.
    let mut chains = Vec::with_capacity(results.len());
    let mut first_error = None;
    for result in results {
        match result {
            Ok(Some(chain)) => chains.push(chain),
            // Stopped because another chain failed.
            Ok(None) => {}
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    Fit::new(names, chains)
}

/// A chain's panic as an error, with its message.
fn panicked(chain: usize, panic: &(dyn std::any::Any + Send)) -> Error {
    failed(
        "model",
        format!("chain {} panicked: {}", chain + 1, panic_message(panic)),
    )
}

/// The message a panic carried (empty when it is not text).
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// A model's unrecoverable failure: the model's own error where it is a
/// [`DensityError`] (a device error stays itself), else its message.
fn density_failure(chain: usize, error: Box<dyn std::error::Error + Send + Sync>) -> Error {
    match error.downcast::<DensityError>() {
        Ok(density) => density.0,
        Err(other) => failed(
            "model",
            format!("chain {}: the log density failed: {other}", chain + 1),
        ),
    }
}

/// A failure of `nuts-rs` (given as the result of downcasting its error to
/// [`NutsError`]).
fn sampler_failure<E: Display>(chain: usize, error: std::result::Result<NutsError, E>) -> Error {
    match error {
        Ok(NutsError::LogpFailure(inner) | NutsError::BadInitGrad(inner)) => {
            density_failure(chain, inner)
        }
        Ok(other) => failed(
            "model",
            format!("chain {}: the sampler stopped: {other}", chain + 1),
        ),
        Err(other) => failed(
            "model",
            format!("chain {}: the sampler stopped: {other}", chain + 1),
        ),
    }
}

/// Chain `chain`'s seed: the run's seed mixed with the chain's number
/// (SplitMix64), so that chains get unrelated streams.
fn chain_seed(seed: u64, chain: usize) -> u64 {
    let mut z = seed ^ (chain as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Whether `density` is finite, with a finite gradient, at `position`;
/// an unrecoverable model error is returned.
fn finite_at<D: CpuLogpFunc>(density: &mut D, position: &[f64], chain: usize) -> Result<bool> {
    let mut gradient = vec![0.0; position.len()];
    match density.logp(position, &mut gradient) {
        Ok(value) => Ok(value.is_finite() && gradient.iter().all(|g| g.is_finite())),
        Err(e) if e.is_recoverable() => Ok(false),
        Err(e) => Err(density_failure(chain, Box::new(e))),
    }
}

/// The chain's initial point: the given one, or Stan's random search.
fn initial_point<D: CpuLogpFunc>(
    density: &mut D,
    init: &Init,
    chain: usize,
    dim: usize,
    rng: &mut StdRng,
) -> Result<Vec<f64>> {
    match init {
        Init::Points(points) => {
            let point = points[chain].clone();
            if !finite_at(density, &point, chain)? {
                return Err(failed(
                    "init",
                    format!(
                        "chain {}: the log density or its gradient is not finite at the given point {point:?}",
                        chain + 1
                    ),
                ));
            }
            Ok(point)
        }
        Init::Random { radius } => {
            for _ in 0..MAX_INIT_ATTEMPTS {
                let point: Vec<f64> = (0..dim)
                    .map(|_| radius * (2.0 * rng.random::<f64>() - 1.0))
                    .collect();
                if finite_at(density, &point, chain)? {
                    return Ok(point);
                }
            }
            Err(failed(
                "init",
                format!(
                    "chain {}: the log density or its gradient was not finite at any of {MAX_INIT_ATTEMPTS} random points uniform in (-{radius}, {radius}); give initial points (Init::Points) or a smaller radius",
                    chain + 1
                ),
            ))
        }
    }
}

/// A host map from an unconstrained position to the output columns.
type Constrain<'a> = dyn Fn(&[f64]) -> Result<Vec<f64>> + Sync + 'a;

/// What one chain needs besides its density: the model's dimension, its
/// output columns and their count.
struct ChainModel<'a> {
    dim: usize,
    columns: usize,
    constrain: &'a Constrain<'a>,
}

/// One chain of `density` (of the model's `dim` parameters), on the
/// calling thread, its draws mapped by `constrain`; `None` when it stopped
/// because another chain failed.
fn run_chain<D: CpuLogpFunc>(
    mut density: D,
    model: &ChainModel<'_>,
    sampler: &Sampler,
    chain: usize,
    bar: &ChainProgress,
    stop: &AtomicBool,
) -> Result<Option<ChainDraws>> {
    let start = Instant::now();
    let (dim, columns, constrain) = (model.dim, model.columns, model.constrain);
    if density.dim() != dim {
        return Err(failed(
            "model",
            format!(
                "its density has {} parameters, Model::dim says {dim}",
                density.dim()
            ),
        ));
    }
    let mut rng = StdRng::seed_from_u64(chain_seed(sampler.seed, chain));
    let init = initial_point(&mut density, &sampler.init, chain, dim, &mut rng)?;
    let mut nuts = sampler
        .nuts_settings()
        .new_chain(chain as u64, CpuMath::new(density), &mut rng)
        .map_err(|e| sampler_failure(chain, e.downcast::<NutsError>()))?;
    nuts.set_position(&init)
        .map_err(|e| sampler_failure(chain, e.downcast::<NutsError>()))?;

    // Reserve no more than a large run needs: `draws` is the user's number.
    let kept = usize::try_from(sampler.draws).map_or(0, |d| d.min(1 << 20));
    let mut draws = Vec::with_capacity(kept);
    let mut stats = Vec::with_capacity(kept);
    let mut divergences = 0;
    let mut warmup_time = None;
    // nuts-rs reports the step size after a draw's adaptation (and jitter),
    // that is the next draw's: a draw's own is the one reported before it.
    let mut step_size = None;
    for iteration in 0..sampler.warmup + sampler.draws {
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        if iteration == sampler.warmup {
            warmup_time = Some(start.elapsed());
        }
        let (position, _, s, progress) = nuts
            .expanded_draw()
            .map_err(|e| sampler_failure(chain, e.downcast::<NutsError>()))?;
        bar.step(progress.tuning, divergences, progress.step_size);
        let used_step_size = step_size.replace(progress.step_size);
        if iteration < sampler.warmup {
            continue;
        }
        divergences += usize::from(progress.diverging);
        let values = constrain(&position)?;
        if values.len() != columns {
            return Err(failed(
                "model",
                format!(
                    "constrain gave {} values for {columns} columns",
                    values.len()
                ),
            ));
        }
        draws.push(values);
        stats.push(DrawStats {
            log_density: s.point.logp,
            accept: s.adapt.step_size.mean_tree_accept,
            step_size: used_step_size.unwrap_or(s.hamiltonian.step_size),
            depth: s.depth,
            max_depth_reached: s.maxdepth_reached,
            leapfrog_steps: progress.num_steps,
            diverging: progress.diverging,
            energy: s.point.energy,
        });
    }
    let warmup_time = warmup_time.unwrap_or_else(|| start.elapsed());
    Ok(Some(ChainDraws {
        draws,
        stats,
        init,
        warmup_time,
        sampling_time: start.elapsed() - warmup_time,
    }))
}
