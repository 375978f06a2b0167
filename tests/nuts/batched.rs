//! Batched chains (`nuts::sample_batched`, `DeviceBatchDensity`,
//! `serve_batches`): a batch equals its chains' single evaluations, the
//! rendezvous survives chains that finish early or fail, chains spread
//! over two contexts, and a failing device ends the run with an error.

use clfuse::nuts::{
    BatchDensity, BatchModel, BatchStats, BatchedModel, DeviceBatchDensity, DeviceDensity, Fit,
    Sampler, UnconstrainedModel, sample, sample_batched, sample_batched_with_stats, serve_batches,
};
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use clfuse::{Device, Error, Result, RuntimeConfig};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A second context on the default device: what stands in for a second
/// GPU on PoCL.
pub(super) fn second_device() -> Result<Device> {
    let default = Device::default_device()?;
    Device::open_new(RuntimeConfig {
        device: Some(default.info().index.to_string()),
        ..RuntimeConfig::from_env()?
    })
}

/// The data of the test model: `n x p` predictors, outcomes, and a
/// prior covariance whose Cholesky factor the model takes.
struct Data {
    x: MatrixCl<f64>,
    y: MatrixCl<f64>,
    prior_cov: MatrixCl<f64>,
}

const N: usize = 33;
pub(super) const P: usize = 3;

fn upload() -> Result<Data> {
    let x: Vec<f64> = (0..N * P)
        .map(|k| ((k * 37 % 101) as f64 / 50.0 - 1.0) * 0.8)
        .collect();
    let y: Vec<f64> = (0..N).map(|i| (i as f64 * 0.37).sin()).collect();
    // 2 I + 0.5 (all ones): symmetric positive definite.
    let cov: Vec<f64> = (0..P * P)
        .map(|k| if k % (P + 1) == 0 { 2.5 } else { 0.5 })
        .collect();
    Ok(Data {
        x: MatrixCl::from_slice(N, P, &x)?,
        y: MatrixCl::from_slice(N, 1, &y)?,
        prior_cov: MatrixCl::from_slice(P, P, &cov)?,
    })
}

/// One log density per column of `theta` (`P x k`): a product (`x θ`, one
/// GEMM for every column), element-wise steps (the residual, `log1p_exp`),
/// column reductions, and a Cholesky step with a triangular solve (the
/// prior `θ ~ N(0, Σ)` through `L⁻¹ θ`).
fn model(data: &Data, theta: &Var) -> Result<Var> {
    let k = theta.cols();
    let eta = (&data.x * theta).eval()?;
    let residual = colwise_broadcast(&data.y, k) - &eta;
    let likelihood = colwise_sum(-0.5f64 * square(residual) - 0.01f64 * log1p_exp(&eta)).eval()?;
    let l = rev::cholesky_decompose(&data.prior_cov)?;
    let z = rev::mdivide_left_tri(&l, theta)?;
    let prior = colwise_sum(square(&z)).eval()?;
    (&likelihood - 0.5f64 * &prior).eval()
}

/// Position of chain `c`: distinct per chain and coordinate.
pub(super) fn position(c: usize) -> Vec<f64> {
    (0..P)
        .map(|j| 0.3 * c as f64 - 0.2 * j as f64 + 0.1)
        .collect()
}

pub(super) fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn a_batch_equals_its_chains_single_evaluations() -> Result<()> {
    let data = upload()?;
    let mut single = DeviceDensity::new(P, |theta: &Var| model(&data, theta))?;
    let mut batched = DeviceBatchDensity::new(P, |theta: &Var| model(&data, theta))?;
    for k in [1usize, 2, 7] {
        let positions: Vec<f64> = (0..k).flat_map(position).collect();
        let mut gradients = vec![0.0; P * k];
        let values = batched.evaluate(&positions, &mut gradients)?;
        assert_eq!(values.len(), k);
        for c in 0..k {
            let mut gradient = vec![0.0; P];
            let value = single.value_and_grad(&position(c), &mut gradient)?;
            assert!(
                close(values[c], value),
                "k = {k}, chain {c}: {} vs {value}",
                values[c]
            );
            for j in 0..P {
                let (a, b) = (gradients[c * P + j], gradient[j]);
                assert!(close(a, b), "k = {k}, chain {c}, d/dtheta[{j}]: {a} vs {b}");
            }
        }
    }
    // A batch of the wrong shape is an error, not a panic.
    let mut gradients = vec![0.0; 4];
    assert!(matches!(
        batched.evaluate(&[0.0; 4], &mut gradients),
        Err(Error::InvalidArgument {
            argument: "positions",
            ..
        })
    ));
    Ok(())
}

/// `-0.5 Σ (θ - 1)²` per column: value and gradient known in closed form.
fn shifted_normal(theta: &Var) -> Result<Var> {
    colwise_sum(-0.5f64 * square(theta - 1.0f64)).eval()
}

#[test]
fn the_rendezvous_serves_chains_that_finish_at_different_times() -> Result<()> {
    let device = Device::default_device()?;
    let chains = [0usize, 1, 2, 3, 4];
    let calls = |c: usize| 3 + 4 * c;
    let stats = std::thread::scope(|scope| -> Result<BatchStats> {
        let (clients, stats) = serve_batches(scope, device, 2, &chains, || {
            DeviceBatchDensity::new(2, shifted_normal)
        });
        std::thread::scope(|inner| -> Result<()> {
            let handles: Vec<_> = clients
                .into_iter()
                .enumerate()
                .map(|(c, mut client)| {
                    inner.spawn(move || -> Result<()> {
                        for call in 0..calls(c) {
                            let at = [c as f64, 0.1 * call as f64];
                            let mut g = [0.0; 2];
                            let value = client.value_and_grad(&at, &mut g)?;
                            let want = -0.5 * ((at[0] - 1.0).powi(2) + (at[1] - 1.0).powi(2));
                            assert!(close(value, want), "chain {c} call {call}");
                            assert!(close(g[0], 1.0 - at[0]) && close(g[1], 1.0 - at[1]));
                        }
                        Ok(())
                    })
                })
                .collect();
            for handle in handles {
                handle.join().map_err(|_| Error::Unsupported {
                    what: "a chain panicked".into(),
                })??;
            }
            Ok(())
        })?;
        Ok(*stats.lock().map_err(|_| Error::Unsupported {
            what: "poisoned".into(),
        })?)
    })?;
    let total: usize = chains.iter().map(|&c| calls(c)).sum();
    assert_eq!(stats.evaluations, total as u64);
    // A batch fires when every chain still running has asked: as many
    // batches as the longest chain has calls.
    assert_eq!(stats.batches, calls(4) as u64);
    Ok(())
}

/// A host density that rejects positions with a negative first coordinate
/// (a recoverable check failure), else a standard normal.
struct RejectsNegative;

impl BatchDensity for RejectsNegative {
    fn dim(&self) -> usize {
        1
    }
    fn evaluate(&mut self, positions: &[f64], gradients: &mut [f64]) -> Result<Vec<f64>> {
        if let Some(k) = positions.iter().position(|x| *x < 0.0) {
            return Err(Error::NotFinite {
                function: "RejectsNegative",
                argument: "theta",
                row: 0,
                col: k,
                value: positions[k],
            });
        }
        gradients
            .iter_mut()
            .zip(positions)
            .for_each(|(g, x)| *g = -x);
        Ok(positions.iter().map(|x| -0.5 * x * x).collect())
    }
}

#[test]
fn a_failing_chain_gets_its_error_and_the_others_go_on() -> Result<()> {
    let device = Device::default_device()?;
    let stats = std::thread::scope(|scope| -> Result<BatchStats> {
        let (clients, stats) = serve_batches(scope, device, 1, &[0, 1, 2], || Ok(RejectsNegative));
        std::thread::scope(|inner| {
            let handles: Vec<_> = clients
                .into_iter()
                .enumerate()
                .map(|(c, mut client)| {
                    inner.spawn(move || {
                        let mut g = [0.0];
                        let first =
                            client.value_and_grad(&[if c == 1 { -1.0 } else { 2.0 }], &mut g);
                        if c == 1 {
                            // The failing chain stops (its client leaves).
                            assert!(matches!(first, Err(Error::NotFinite { .. })), "{first:?}");
                            return;
                        }
                        assert_eq!(first.ok(), Some(-2.0));
                        // The others go on without it.
                        for _ in 0..3 {
                            assert_eq!(client.value_and_grad(&[1.0], &mut g).ok(), Some(-0.5));
                            assert_eq!(g, [-1.0]);
                        }
                    })
                })
                .collect();
            handles.into_iter().for_each(|h| assert!(h.join().is_ok()));
        });
        Ok(*stats.lock().map_err(|_| Error::Unsupported {
            what: "poisoned".into(),
        })?)
    })?;
    assert_eq!(stats.retried, 1);
    assert_eq!(stats.evaluations, 3 + 2 * 3);
    Ok(())
}

fn quick(chains: usize, devices: Vec<Device>) -> Sampler {
    Sampler {
        chains,
        warmup: 200,
        draws: 300,
        seed: 5,
        devices,
        ..Sampler::default()
    }
}

fn draws(fit: &Fit) -> Vec<Vec<Vec<f64>>> {
    fit.chains().iter().map(|c| c.draws.clone()).collect()
}

#[test]
fn batched_chains_draw_what_unbatched_chains_draw() -> Result<()> {
    let unbatched = sample(
        &UnconstrainedModel::new(2, shifted_normal),
        &quick(3, vec![]),
    )?;
    let model = BatchModel::new(2, || Ok(()), |_: &(), theta: &Var| shifted_normal(theta));
    let batched = sample_batched(&model, &quick(3, vec![]))?;
    let (a, b) = (draws(&unbatched), draws(&batched));
    assert_eq!(a.len(), b.len());
    for (chain, (x, y)) in a.iter().zip(&b).enumerate() {
        for (draw, (u, v)) in x.iter().zip(y).enumerate() {
            assert!(
                u.iter().zip(v).all(|(p, q)| close(*p, *q)),
                "chain {chain}, draw {draw}: {u:?} vs {v:?}"
            );
        }
    }
    Ok(())
}

#[test]
fn chains_spread_over_two_contexts() -> Result<()> {
    let devices = vec![Device::default_device()?, second_device()?];
    let uploads = AtomicUsize::new(0);
    // y_i ~ N(mu, 1), flat prior: mu | y ~ N(mean(y), 1 / n).
    let y: Vec<f64> = (0..20).map(|i| 1.0 + (i as f64 * 0.9).cos()).collect();
    let model = BatchModel::new(
        1,
        || {
            uploads.fetch_add(1, Ordering::Relaxed);
            MatrixCl::from_slice(y.len(), 1, &y)
        },
        |y: &MatrixCl<f64>, mu: &Var| {
            let (n, k) = (y.rows(), mu.cols());
            colwise_sum(-0.5f64 * square(colwise_broadcast(y, k) - rowwise_broadcast(mu, n))).eval()
        },
    );
    let (fit, stats) = sample_batched_with_stats(&model, &quick(4, devices))?;
    assert_eq!(
        uploads.load(Ordering::Relaxed),
        2,
        "data uploaded once per device"
    );
    assert_eq!(stats.len(), 2);
    // Each device batches its two chains: most batches answer both.
    assert!(
        stats
            .iter()
            .all(|s| s.batches > 0 && s.evaluations > s.batches)
    );
    let row = fit.summary().rows[0].clone();
    let mean = y.iter().sum::<f64>() / y.len() as f64;
    super::assert_mean_within_4_mcse(&row, mean);
    assert!(fit.summary().max_rhat() < 1.01);
    Ok(())
}

/// A standard normal on the host that fails, as a lost device would, after
/// `fail_after` evaluations on the device `failing`.
struct Flaky {
    evaluations: usize,
    fail_after: Option<usize>,
}

impl BatchDensity for Flaky {
    fn dim(&self) -> usize {
        1
    }
    fn evaluate(&mut self, positions: &[f64], gradients: &mut [f64]) -> Result<Vec<f64>> {
        self.evaluations += 1;
        if self.fail_after.is_some_and(|n| self.evaluations > n) {
            return Err(Error::OpenCl {
                code: -5,
                name: "CL_OUT_OF_RESOURCES (injected)".into(),
                call: "clEnqueueNDRangeKernel",
            });
        }
        gradients
            .iter_mut()
            .zip(positions)
            .for_each(|(g, x)| *g = -x);
        Ok(positions.iter().map(|x| -0.5 * x * x).collect())
    }
}

struct FailsOnSecondDevice {
    failing: Device,
}

impl BatchedModel for FailsOnSecondDevice {
    type Density<'m> = Flaky;
    fn dim(&self) -> usize {
        1
    }
    fn column_names(&self) -> Vec<String> {
        vec!["x".into()]
    }
    fn density(&self, device: Device) -> Result<Flaky> {
        Ok(Flaky {
            evaluations: 0,
            fail_after: (device == self.failing).then_some(40),
        })
    }
    fn constrain(&self, u: &[f64]) -> Result<Vec<f64>> {
        Ok(u.to_vec())
    }
}

#[test]
fn a_device_that_fails_mid_run_ends_the_run_with_its_error() -> Result<()> {
    let second = second_device()?;
    let devices = vec![Device::default_device()?, second];
    let model = FailsOnSecondDevice { failing: second };
    match sample_batched(&model, &quick(4, devices)) {
        Err(Error::OpenCl { name, .. }) => assert!(name.contains("injected")),
        other => panic!("expected the injected error, got {other:?}"),
    }
    Ok(())
}

#[test]
fn a_panicking_batched_model_is_an_error() {
    let model = BatchModel::new(
        1,
        || Ok(()),
        |_: &(), theta: &Var| -> clfuse::Result<Var> {
            if theta.cols() > 0 {
                panic!("the model panics on purpose");
            }
            colwise_sum(theta).eval()
        },
    );
    // Every chain of the batch gets the panic's message.
    match sample_batched(&model, &quick(2, vec![])) {
        Err(Error::InvalidArgument { reason, .. }) => assert!(
            reason.contains("panicked evaluating chains 1, 2: the model panics on purpose"),
            "{reason}"
        ),
        other => panic!("expected the panic's message, got {other:?}"),
    }
}
