//! Many chains of one model (#36): the logistic regression's value and
//! gradient for 8 chains, unbatched (8 threads, each its own density, as
//! `nuts::sample` runs them) against batched (one evaluation for all 8,
//! `nuts::DeviceBatchDensity`), on one device and over two; and whole NUTS
//! runs of the same. Every figure is per call: the host has each chain's
//! value and gradient before the call returns, as a sampler needs.

use crate::glm::data as data_host;
use crate::workloads::Ctx;
use clfuse::Device;
use clfuse::nuts::{
    BatchDensity, BatchModel, BatchStats, BatchedModel, DeviceBatchDensity, DeviceDensity, Model,
    RowSplitDensity, Sampler, SplitBatchModel, sample, sample_batched_with_stats,
};
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use std::ops::Range;
use std::sync::Barrier;
use std::time::Instant;

/// Chains per run (the 8).
pub const CHAINS: usize = 8;

/// The model's data on one device: predictors and the outcome signs `2y - 1`.
struct Data {
    x: MatrixCl<f64>,
    y: MatrixCl<i32>,
    sign: MatrixCl<f64>,
}

fn upload(n: usize, p: usize) -> clfuse::Result<Data> {
    let (xs, ys, _) = data_host(n, p);
    let sign: Vec<f64> = ys.iter().map(|&y| f64::from(2 * y - 1)).collect();
    Ok(Data {
        x: MatrixCl::from_slice(n, p, &xs)?,
        y: MatrixCl::from_slice(n, 1, &ys)?,
        sign: MatrixCl::from_slice(n, 1, &sign)?,
    })
}

/// Rows `rows` of the `n x p` data on the current device (one part of a
/// row split), from the host arrays of [`data_host`].
fn upload_rows(
    host: &(Vec<f64>, Vec<i32>),
    n: usize,
    p: usize,
    rows: Range<usize>,
) -> clfuse::Result<Data> {
    let (xs, ys) = host;
    let mut x = Vec::with_capacity(rows.len() * p);
    for j in 0..p {
        x.extend_from_slice(&xs[j * n + rows.start..j * n + rows.end]);
    }
    let sign: Vec<f64> = ys[rows.clone()]
        .iter()
        .map(|&y| f64::from(2 * y - 1))
        .collect();
    Ok(Data {
        x: MatrixCl::from_slice(rows.len(), p, &x)?,
        y: MatrixCl::from_slice(rows.len(), 1, &ys[rows])?,
        sign: MatrixCl::from_slice(sign.len(), 1, &sign)?,
    })
}

/// The logistic likelihood, one per column of `theta` (`p x k`):
/// `Σ log_inv_logit(s ∘ x θ)`.
fn logistic_likelihood(d: &Data, theta: &Var) -> clfuse::Result<Var> {
    let k = theta.cols();
    let eta = (&d.x * theta).eval()?;
    colwise_sum(log_inv_logit(elt_multiply(
        colwise_broadcast(&d.sign, k),
        &eta,
    )))
    .eval()
}

/// The standard normal prior, one per column: `-½ Σ θ²`.
fn logistic_prior(theta: &Var) -> clfuse::Result<Var> {
    let sum: Var = colwise_sum(square(theta)).eval()?;
    (-0.5f64 * &sum).eval()
}

/// Logistic regression with a standard normal prior, one log density per
/// column of `theta` (`p x k`): `Σ log_inv_logit(s ∘ x θ) - ½ Σ θ²`.
fn logistic(d: &Data, theta: &Var) -> clfuse::Result<Var> {
    let likelihood = logistic_likelihood(d, theta)?;
    let prior = colwise_sum(square(theta)).eval()?;
    (&likelihood - 0.5f64 * &prior).eval()
}

/// The same model with its rows splittable over devices.
fn split_logistic(host: &(Vec<f64>, Vec<i32>), n: usize, p: usize) -> impl BatchedModel + '_ {
    SplitBatchModel::new(
        p,
        n,
        move |rows| upload_rows(host, n, p, rows),
        logistic_likelihood,
        logistic_prior,
    )
}

/// Seconds per call of `CHAINS` chains in one batch whose rows are split
/// over `devices` (the host sums the parts).
fn split_batched(
    (reps, rounds): (usize, usize),
    model: &impl BatchedModel,
    devices: &[Device],
    p: usize,
) -> clfuse::Result<(f64, f64, f64)> {
    std::thread::scope(|scope| {
        let mut density = RowSplitDensity::start(scope, model, devices)?;
        let at: Vec<f64> = (0..CHAINS).flat_map(|c| position(p, c)).collect();
        let mut g = vec![0.0; at.len()];
        density.evaluate(&at, &mut g)?;
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps.max(1) {
            let start = Instant::now();
            for _ in 0..rounds {
                density.evaluate(&at, &mut g)?;
            }
            times.push(start.elapsed().as_secs_f64() / rounds as f64);
        }
        Ok(crate::timing::median_min_max(times))
    })
}

/// The same model for one chain through the bernoulli GLM leaf (the
/// fastest single-chain form: one pass over `x` for value and gradient).
fn logistic_glm(d: &Data, theta: &Var) -> clfuse::Result<Var> {
    let likelihood = rev::bernoulli_logit_glm(&d.y, &d.x, 0.0, theta)?;
    let prior = colwise_sum(square(theta)).eval()?;
    (&likelihood - 0.5f64 * &prior).eval()
}

/// Chain `c`'s position: distinct, small values.
fn position(p: usize, c: usize) -> Vec<f64> {
    (0..p)
        .map(|j| 0.05 * ((c * 7 + j * 3) % 11) as f64 - 0.25)
        .collect()
}

/// Seconds per round of `workers` threads started together (worker `k` on
/// `devices[k * devices.len() / workers]`): each builds its call with
/// `setup(k)` (which also makes it once, to warm up) and then makes it
/// `rounds` times; the median, fastest and slowest of `reps` runs after a
/// first one that warms every thread's caches.
fn concurrent<F, C>(
    reps: usize,
    rounds: usize,
    devices: &[Device],
    workers: usize,
    setup: F,
) -> clfuse::Result<(f64, f64, f64)>
where
    F: Fn(usize) -> clfuse::Result<C> + Sync,
    C: FnMut() -> clfuse::Result<()>,
{
    let mut times = Vec::new();
    for rep in 0..=reps {
        let barrier = Barrier::new(workers + 1);
        let elapsed = std::thread::scope(|scope| -> clfuse::Result<f64> {
            let handles: Vec<_> = (0..workers)
                .map(|k| {
                    let (barrier, setup) = (&barrier, &setup);
                    let device = devices[k * devices.len() / workers];
                    scope.spawn(move || {
                        device.run(|| -> clfuse::Result<()> {
                            let mut call = setup(k)?;
                            barrier.wait();
                            for _ in 0..rounds {
                                call()?;
                            }
                            Ok(())
                        })
                    })
                })
                .collect();
            barrier.wait();
            let start = Instant::now();
            for h in handles {
                h.join().map_err(|_| clfuse::Error::Unsupported {
                    what: "a benchmark thread panicked".into(),
                })??;
            }
            Ok(start.elapsed().as_secs_f64())
        })?;
        if rep > 0 {
            times.push(elapsed / rounds as f64);
        }
    }
    Ok(crate::timing::median_min_max(times))
}

/// Seconds per round of `chains` unbatched chains on the current device,
/// each a thread with its own density.
fn unbatched(
    (reps, rounds): (usize, usize),
    chains: usize,
    d: &Data,
    p: usize,
    model: fn(&Data, &Var) -> clfuse::Result<Var>,
) -> clfuse::Result<(f64, f64, f64)> {
    concurrent(reps, rounds, &[Device::current()?], chains, |c| {
        let mut density = DeviceDensity::new(p, move |t: &Var| model(d, t))?;
        let (at, mut g) = (position(p, c), vec![0.0; p]);
        density.value_and_grad(&at, &mut g)?;
        Ok(move || density.value_and_grad(&at, &mut g).map(drop))
    })
}

/// Seconds per batched call of `CHAINS` chains, the chains split evenly
/// over `devices` (each its own thread and batch, started together).
fn batched(
    (reps, rounds): (usize, usize),
    data: &[Data],
    devices: &[Device],
    p: usize,
) -> clfuse::Result<(f64, f64, f64)> {
    let per_device = CHAINS / devices.len();
    concurrent(reps, rounds, devices, devices.len(), |k| {
        let d = &data[k];
        let mut density = DeviceBatchDensity::new(p, move |t: &Var| logistic(d, t))?;
        let at: Vec<f64> = (0..per_device)
            .flat_map(|c| position(p, k * per_device + c))
            .collect();
        let mut g = vec![0.0; at.len()];
        density.evaluate(&at, &mut g)?;
        Ok(move || density.evaluate(&at, &mut g).map(drop))
    })
}

/// Per-call figures at each shape, on `devices[0]` and (batched) over all.
pub fn per_call(
    ctx: &mut Ctx,
    devices: &[Device],
    shapes: &[(usize, usize)],
    rounds: usize,
) -> clfuse::Result<()> {
    for &(n, p) in shapes {
        let w = format!("logistic regression, {CHAINS} chains, value + gradient, P = {p}");
        let data: Vec<Data> = devices
            .iter()
            .map(|d| d.run(|| upload(n, p)))
            .collect::<clfuse::Result<_>>()?;
        let first = devices[0];
        let bytes = 8.0 * (n * p) as f64;
        let (reps, rounds) = (ctx.reps, rounds.max(1));
        let t = first.run(|| unbatched((reps, rounds), 1, &data[0], p, logistic_glm))?;
        ctx.push(&w, "one chain alone, GLM leaf (per call)", n, bytes, 0.0, t);
        let t = first.run(|| unbatched((reps, rounds), 1, &data[0], p, logistic))?;
        ctx.push(&w, "one chain alone, composed (per call)", n, bytes, 0.0, t);
        let t = first.run(|| unbatched((reps, rounds), CHAINS, &data[0], p, logistic_glm))?;
        ctx.push(
            &w,
            "8 unbatched chains, GLM leaf (per round of 8)",
            n,
            bytes,
            0.0,
            t,
        );
        let t = first.run(|| unbatched((reps, rounds), CHAINS, &data[0], p, logistic))?;
        ctx.push(
            &w,
            "8 unbatched chains, composed (per round of 8)",
            n,
            bytes,
            0.0,
            t,
        );
        let t = batched((reps, rounds), &data[..1], &devices[..1], p)?;
        ctx.push(
            &w,
            "8 chains batched, one device (per call)",
            n,
            bytes,
            0.0,
            t,
        );
        // Where a call's time goes (with FUSION_PROFILING=1).
        first.run(|| -> clfuse::Result<()> {
            let d = &data[0];
            let mut density = DeviceBatchDensity::new(p, |t: &Var| logistic(d, t))?;
            let at: Vec<f64> = (0..CHAINS).flat_map(|c| position(p, c)).collect();
            let mut g = vec![0.0; at.len()];
            density.evaluate(&at, &mut g)?;
            ctx.profile(format!("{CHAINS} chains batched, n = {n}, p = {p}"), || {
                density.evaluate(&at, &mut g).map(drop)
            })?;
            let mut single = DeviceDensity::new(p, |t: &Var| logistic_glm(d, t))?;
            let mut g = vec![0.0; p];
            single.value_and_grad(&at[..p], &mut g)?;
            ctx.profile(format!("one chain, GLM leaf, n = {n}, p = {p}"), || {
                single.value_and_grad(&at[..p], &mut g).map(drop)
            })
        })?;
        if devices.len() >= 2 {
            let t = batched((reps, rounds), &data[..2], &devices[..2], p)?;
            ctx.push(
                &w,
                "8 chains batched, two devices (per round of 8)",
                n,
                bytes,
                0.0,
                t,
            );
            let (xs, ys, _) = data_host(n, p);
            let host = (xs, ys);
            let model = split_logistic(&host, n, p);
            let t = split_batched((reps, rounds), &model, &devices[..2], p)?;
            ctx.push(
                &w,
                "8 chains batched, rows split over two devices (per call)",
                n,
                bytes,
                0.0,
                t,
            );
        }
    }
    Ok(())
}

/// Whole NUTS runs of 8 chains (`warmup` + `draws` each), unbatched and
/// batched, on the first device and (batched) over all: wall-clock seconds.
pub fn whole_runs(
    ctx: &mut Ctx,
    devices: &[Device],
    (n, p): (usize, usize),
    warmup: u64,
    draws: u64,
) -> clfuse::Result<()> {
    let w = format!("logistic regression, {CHAINS}-chain NUTS run ({warmup} + {draws}), P = {p}");
    let sampler = |on: &[Device]| Sampler {
        chains: CHAINS,
        warmup,
        draws,
        seed: 3,
        devices: on.to_vec(),
        ..Sampler::default()
    };
    let first = devices[0];
    let d = first.run(|| upload(n, p))?;
    let unbatched = UnbatchedLogistic { data: &d, p };
    let once = |f: &dyn Fn() -> clfuse::Result<()>| -> clfuse::Result<(f64, f64, f64)> {
        let start = Instant::now();
        f()?;
        let t = start.elapsed().as_secs_f64();
        Ok((t, t, t))
    };
    let t = once(&|| sample(&unbatched, &sampler(&[first])).map(drop))?;
    ctx.push(&w, "8 unbatched chains (threads), GLM leaf", n, 0.0, 0.0, t);
    // Batched runs also report their batches and chain-gradients: a run
    // costs about its batches times a call, and a batch waits for every
    // running chain.
    let batched_run = |model: &dyn Fn() -> clfuse::Result<Vec<BatchStats>>| {
        let start = Instant::now();
        let stats = model()?;
        let t = start.elapsed().as_secs_f64();
        let (batches, evaluations) = stats
            .iter()
            .fold((0, 0), |(b, e), s| (b + s.batches, e + s.evaluations));
        Ok::<_, clfuse::Error>((
            (t, t, t),
            format!("{batches} batches, {evaluations} chain-gradients"),
        ))
    };
    let model = BatchModel::new(p, || upload(n, p), logistic);
    let (t, counts) =
        batched_run(&|| sample_batched_with_stats(&model, &sampler(&[first])).map(|(_, s)| s))?;
    ctx.push(
        &w,
        &format!("8 chains batched, one device ({counts})"),
        n,
        0.0,
        0.0,
        t,
    );
    if devices.len() >= 2 {
        let (t, counts) = batched_run(&|| {
            sample_batched_with_stats(&model, &sampler(&devices[..2])).map(|(_, s)| s)
        })?;
        ctx.push(
            &w,
            &format!("8 chains batched, two devices ({counts})"),
            n,
            0.0,
            0.0,
            t,
        );
        let (xs, ys, _) = data_host(n, p);
        let host = (xs, ys);
        let split = split_logistic(&host, n, p);
        let split_sampler = Sampler {
            split_rows: true,
            ..sampler(&devices[..2])
        };
        let (t, counts) =
            batched_run(&|| sample_batched_with_stats(&split, &split_sampler).map(|(_, s)| s))?;
        ctx.push(
            &w,
            &format!("8 chains batched, rows split over two devices ({counts})"),
            n,
            0.0,
            0.0,
            t,
        );
    }
    Ok(())
}

/// The unbatched model for `nuts::sample` (data on the first device).
struct UnbatchedLogistic<'a> {
    data: &'a Data,
    p: usize,
}

impl Model for UnbatchedLogistic<'_> {
    type Density<'m>
        = DeviceDensity<Box<dyn FnMut(&Var) -> clfuse::Result<Var> + 'm>>
    where
        Self: 'm;
    fn dim(&self) -> usize {
        self.p
    }
    fn column_names(&self) -> Vec<String> {
        (1..=self.p).map(|i| format!("beta[{i}]")).collect()
    }
    fn density(&self) -> clfuse::Result<Self::Density<'_>> {
        DeviceDensity::new(self.p, Box::new(|t: &Var| logistic_glm(self.data, t)))
    }
    fn constrain(&self, u: &[f64]) -> clfuse::Result<Vec<f64>> {
        Ok(u.to_vec())
    }
}
