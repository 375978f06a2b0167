//! Interleaved chains (`Sampler::interleave`, `DeviceDensity::start` and
//! `finish`): one thread queues every chain's call before waiting for any.
//! The draws must be exactly those of chains on their own threads (same
//! seed, same values at every position), replayed calls included; errors
//! must reach only the chain whose position caused them; the two halves
//! must refuse misuse with an error.

use clfuse::nuts::{
    DeviceDensity, Interleave, Interleaving, Model, Sampler, UnconstrainedModel, sample,
};
use clfuse::prelude::*;
use clfuse::rev::Var;
use clfuse::{Error, Result};

/// A regression-shaped density: y ~ N(x b, 1), b ~ N(0, 1), with `p`
/// coefficients over `n` rows (the sizes odd, not multiples of a group).
fn regression(n: usize, p: usize) -> Result<(MatrixCl<f64>, MatrixCl<f64>)> {
    let x: Vec<f64> = (0..n * p)
        .map(|i| ((i * 37 % 101) as f64 / 50.0) - 1.0)
        .collect();
    let y: Vec<f64> = (0..n).map(|i| ((i * 13 % 17) as f64 / 8.0) - 1.0).collect();
    Ok((
        MatrixCl::from_slice(n, p, &x)?,
        MatrixCl::from_slice(n, 1, &y)?,
    ))
}

fn log_density(x: &MatrixCl<f64>, y: &MatrixCl<f64>, b: &Var) -> Result<Var> {
    let likelihood = colwise_sum(-0.5f64 * square(y - matrix_vector_multiply(x, b))).eval()?;
    let prior = colwise_sum(-0.5f64 * square(b)).eval()?;
    (&likelihood + &prior).eval()
}

fn settings(interleave: Interleaving, chains: usize) -> Sampler {
    Sampler {
        chains,
        warmup: 150,
        draws: 150,
        seed: 5,
        interleave,
        ..Sampler::default()
    }
}

#[test]
fn interleaved_chains_draw_what_threaded_chains_draw() -> Result<()> {
    for (n, p, chains) in [(1, 1, 1), (33, 3, 3), (257, 5, 4)] {
        let (x, y) = regression(n, p)?;
        let model = UnconstrainedModel::new(p, |b: &Var| log_density(&x, &y, b));
        assert!(model.interleaves());
        let interleaved = sample(&model, &settings(Interleaving::Always, chains))?;
        let threaded = sample(&model, &settings(Interleaving::Never, chains))?;
        assert_eq!(interleaved.chains().len(), chains);
        for (k, (a, b)) in interleaved
            .chains()
            .iter()
            .zip(threaded.chains())
            .enumerate()
        {
            assert_eq!(a.draws, b.draws, "(n, p) = ({n}, {p}), chain {k}");
            assert_eq!(a.init, b.init, "(n, p) = ({n}, {p}), chain {k}");
        }
    }
    Ok(())
}

#[test]
fn started_calls_finish_with_their_own_values_replayed_or_not() -> Result<()> {
    let (x, y) = regression(65, 4)?;
    let model = |b: &Var| log_density(&x, &y, b);
    let mut densities = Vec::new();
    for _ in 0..3 {
        densities.push(DeviceDensity::new(4, model)?);
    }
    let mut reference = DeviceDensity::new(4, model)?.without_replay();
    for round in 0..6 {
        let positions: Vec<Vec<f64>> = (0..3)
            .map(|k| (0..4).map(|j| 0.1 * (round + k + j) as f64 - 0.3).collect())
            .collect();
        for (density, position) in densities.iter_mut().zip(&positions) {
            density.start(position)?;
        }
        // Finished in the reverse order they were started.
        for (density, position) in densities.iter_mut().zip(&positions).rev() {
            let mut gradient = vec![0.0; 4];
            let value = density.finish(&mut gradient)?;
            let mut expected_gradient = vec![0.0; 4];
            let expected = reference.value_and_grad(position, &mut expected_gradient)?;
            assert!(
                (value - expected).abs() <= 1e-12 * expected.abs().max(1.0),
                "round {round}"
            );
            for (g, e) in gradient.iter().zip(&expected_gradient) {
                assert!(
                    (g - e).abs() <= 1e-12 * e.abs().max(1.0),
                    "round {round}: {g} vs {e}"
                );
            }
        }
    }
    // Replays on by default: the later rounds were replayed.
    let on = clfuse::Runtime::get()?.tuning().replay != Some(false);
    assert!(densities.iter().all(|d| d.replays() == on));
    Ok(())
}

#[test]
fn a_round_of_replaying_chains_launches_each_kernel_once() -> Result<()> {
    let (x, y) = regression(65, 4)?;
    let model = |b: &Var| log_density(&x, &y, b);
    let mut densities = Vec::new();
    for _ in 0..3 {
        densities.push(DeviceDensity::new(4, model)?);
    }
    let mut reference = DeviceDensity::new(4, model)?.without_replay();
    let mut batch = clfuse::ReplayBatch::new();
    let mut batched_rounds = 0;
    for round in 0..6 {
        let positions: Vec<Vec<f64>> = (0..3)
            .map(|k| {
                (0..4)
                    .map(|j| 0.2 * (round + 2 * k + j) as f64 - 0.5)
                    .collect()
            })
            .collect();
        let before = clfuse::thread_kernel_stats();
        let mut replaying = Vec::new();
        for (density, position) in densities.iter_mut().zip(&positions) {
            replaying.push(density.prepare(position)?);
        }
        if replaying.iter().all(|&r| r) {
            let recordings: Vec<&clfuse::Recording> =
                densities.iter().filter_map(|d| d.replaying()).collect();
            assert_eq!(recordings.len(), 3);
            let reads = batch.replay(&recordings)?;
            for (density, reads) in densities.iter_mut().zip(reads) {
                density.queued(reads)?;
            }
            let stats = clfuse::thread_kernel_stats() - before;
            // Each chain's replay asks for the same launches; batched, the
            // device gets them once for the three chains (the positions'
            // three writes aside, which are not part of the replays).
            let batching = clfuse::Runtime::get()?.tuning().batch_chains != Some(false);
            let replayed = stats.launched - 3;
            let expected = if batching { replayed / 3 } else { replayed };
            assert!(replayed > 0, "round {round}: {stats:?}");
            assert_eq!(stats.queued - 3, expected, "round {round}: {stats:?}");
            batched_rounds += 1;
        } else {
            // Started alone: those left to the caller are replayed alone.
            for (density, &left) in densities.iter_mut().zip(&replaying) {
                if left {
                    let reads = density.replaying().map(|r| r.replay_queued());
                    density.queued(reads.expect("a recording to replay")?)?;
                }
            }
        }
        for (density, position) in densities.iter_mut().zip(&positions) {
            let mut gradient = vec![0.0; 4];
            let value = density.finish(&mut gradient)?;
            let mut expected_gradient = vec![0.0; 4];
            let expected = reference.value_and_grad(position, &mut expected_gradient)?;
            assert!((value - expected).abs() <= 1e-12 * expected.abs().max(1.0));
            for (g, e) in gradient.iter().zip(&expected_gradient) {
                assert!((g - e).abs() <= 1e-12 * e.abs().max(1.0), "round {round}");
            }
        }
    }
    let on = clfuse::Runtime::get()?.tuning().replay != Some(false);
    assert_eq!(batched_rounds > 0, on);
    Ok(())
}

#[test]
fn the_halves_refuse_misuse() -> Result<()> {
    let mut density = DeviceDensity::new(2, |t: &Var| colwise_sum(square(t)).eval())?;
    let mut gradient = [0.0; 2];
    assert!(matches!(
        density.finish(&mut gradient),
        Err(Error::InvalidArgument {
            function: "DeviceDensity::finish",
            ..
        })
    ));
    assert!(matches!(
        density.start(&[1.0, 2.0, 3.0]),
        Err(Error::InvalidArgument {
            function: "DeviceDensity::start",
            ..
        })
    ));
    density.start(&[1.0, 2.0])?;
    // A gradient of the wrong length is an error, not a partial write.
    let mut short = [7.0];
    assert!(density.finish(&mut short).is_err());
    assert_eq!(short, [7.0]);
    // Finished once only.
    assert!(density.finish(&mut gradient).is_err());
    density.start(&[1.0, 2.0])?;
    assert_eq!(density.finish(&mut gradient)?, 5.0);
    assert_eq!(gradient, [2.0, 4.0]);
    Ok(())
}

#[test]
fn a_failing_position_fails_only_its_own_chain_call() -> Result<()> {
    // A scale parameter whose log density is NaN below zero: an error for the
    // sampler to reject, while the other chains' calls in the round succeed.
    // (Not started at 1, where the gradient is 0: nuts-rs scales its first
    // mass matrix by the gradient.)
    let model = UnconstrainedModel::new(1, |t: &Var| {
        colwise_sum(-0.5f64 * square(t) + log(t)).eval()
    });
    let sampler = Sampler {
        chains: 3,
        warmup: 100,
        draws: 100,
        seed: 2,
        init: clfuse::nuts::Init::Points(vec![vec![0.5], vec![0.8], vec![1.5]]),
        ..Sampler::default()
    };
    let interleaved = sample(
        &model,
        &Sampler {
            interleave: Interleaving::Always,
            ..sampler.clone()
        },
    )?;
    let threaded = sample(
        &model,
        &Sampler {
            interleave: Interleaving::Never,
            ..sampler.clone()
        },
    )?;
    for (a, b) in interleaved.chains().iter().zip(threaded.chains()) {
        assert_eq!(a.draws, b.draws);
        assert!(a.draws.iter().all(|d| d[0] > 0.0));
    }
    Ok(())
}
