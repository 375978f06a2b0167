//! Interleaved chains (`Sampler::interleave`, `DeviceDensity::start` and
//! `finish`): one thread queues every chain's call before waiting for any.
//! The draws must be exactly those of chains on their own threads (same
//! seed, same values at every position), replayed calls included; errors
//! must reach only the chain whose position caused them; the two halves
//! must refuse misuse with an error.

use clfuse::nuts::{
    DeviceDensity, Fit, Interleave, Interleaving, Model, Sampler, UnconstrainedModel, sample,
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

fn settings(chains: usize) -> Sampler {
    Sampler {
        chains,
        warmup: 150,
        draws: 150,
        seed: 5,
        ..Sampler::default()
    }
}

/// `model` sampled with `sampler`'s settings twice: chains interleaved
/// from one thread, then on threads of their own.
fn interleaved_and_threaded(model: &impl Model, sampler: &Sampler) -> Result<(Fit, Fit)> {
    let with = |interleave| {
        sample(
            model,
            &Sampler {
                interleave,
                ..sampler.clone()
            },
        )
    };
    Ok((with(Interleaving::Always)?, with(Interleaving::Never)?))
}

#[test]
fn interleaved_chains_draw_what_threaded_chains_draw() -> Result<()> {
    for (n, p, chains) in [(1, 1, 1), (33, 3, 3), (257, 5, 4)] {
        let (x, y) = regression(n, p)?;
        let model = UnconstrainedModel::new(p, |b: &Var| log_density(&x, &y, b));
        assert!(model.interleaves());
        let (interleaved, threaded) = interleaved_and_threaded(&model, &settings(chains))?;
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

/// Eight rounds of three densities at their own positions, started by
/// `start_round` (together) on even rounds and one by one on odd ones,
/// each value and gradient checked against `reference`. Once they replay,
/// a round together must ask for the launches of three chains and queue
/// those of one (unless `FUSION_BATCH_CHAINS=0`).
fn rounds_launch_each_kernel_once<D: Interleave>(
    densities: &mut [D],
    dim: usize,
    mut reference: impl FnMut(&[f64], &mut [f64]) -> Result<f64>,
) -> Result<()> {
    let mut batch = clfuse::ReplayBatch::new();
    // A read queues whatever this thread left pending (the positions' writes).
    let settle = MatrixCl::from_slice(1, 1, &[0.0])?;
    // (launched, queued) of the replays of a round: together, one by one.
    let (mut together, mut alone) = (Vec::new(), Vec::new());
    for round in 0..8 {
        let positions: Vec<Vec<f64>> = (0..3)
            .map(|k| {
                (0..dim)
                    .map(|j| 0.2 * ((round + 2 * k + j) % 7) as f64 - 0.5)
                    .collect()
            })
            .collect();
        let mut replaying = Vec::new();
        for (density, position) in densities.iter_mut().zip(&positions) {
            replaying.push(density.prepare(position)?);
        }
        settle.to_vec()?;
        let before = clfuse::thread_kernel_stats();
        if replaying.iter().all(|&r| r) && round % 2 == 0 {
            let recordings: Vec<&clfuse::Recording> =
                densities.iter().filter_map(|d| d.replaying()).collect();
            assert_eq!(recordings.len(), 3);
            let reads = batch.replay(&recordings)?;
            for (density, reads) in densities.iter_mut().zip(reads) {
                density.queued(reads)?;
            }
            let stats = clfuse::thread_kernel_stats() - before;
            together.push((stats.launched, stats.queued));
        } else {
            // Those left to the caller replayed one by one.
            for (density, &left) in densities.iter_mut().zip(&replaying) {
                if left {
                    let reads = density.replaying().map(|r| r.replay_queued());
                    density.queued(reads.expect("a recording to replay")?)?;
                }
            }
            if replaying.iter().all(|&r| r) {
                let stats = clfuse::thread_kernel_stats() - before;
                alone.push((stats.launched, stats.queued));
            }
        }
        for (density, position) in densities.iter_mut().zip(&positions) {
            let mut gradient = vec![0.0; dim];
            let value = density.finish(&mut gradient)?;
            let mut expected_gradient = vec![0.0; dim];
            let expected = reference(position, &mut expected_gradient)?;
            assert!((value - expected).abs() <= 1e-12 * expected.abs().max(1.0));
            for (g, e) in gradient.iter().zip(&expected_gradient) {
                assert!((g - e).abs() <= 1e-12 * e.abs().max(1.0), "round {round}");
            }
        }
    }
    let tuning = clfuse::Runtime::get()?.tuning();
    if tuning.replay == Some(false) {
        assert!(together.is_empty() && alone.is_empty());
        return Ok(());
    }
    // Each chain's replay asks for the same launches either way; together,
    // the device gets each once for the three chains.
    let (launched, queued) = alone[0];
    assert!(
        queued > 0 && alone.iter().all(|&a| a == alone[0]),
        "{alone:?}"
    );
    assert_eq!(queued % 3, 0);
    let expected = if tuning.batch_chains == Some(false) {
        queued
    } else {
        queued / 3
    };
    // (The first round together may also make the further chains' counters;
    // a step whose arguments for three chains pass the device's limit is
    // split, two chains and one.)
    let Some(&(l, q)) = together.last() else {
        panic!("no round together: alone {alone:?}");
    };
    assert_eq!(l, launched);
    assert!(
        q >= expected && 3 * q <= 4 * expected,
        "together {together:?}, alone {alone:?}"
    );
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
    rounds_launch_each_kernel_once(&mut densities, 4, |p, g| reference.value_and_grad(p, g))
}

#[test]
fn chains_of_a_model_with_checks_replay_together() -> Result<()> {
    // Scale parameters: the densities' checks are deferred to each call's
    // read, in flags of each chain's own.
    let model = eight_schools()?;
    let mut densities = Vec::new();
    for _ in 0..3 {
        let density = model
            .interleaved_density()
            .expect("the model interleaves")?;
        densities.push(density);
    }
    let mut reference = model.density()?;
    rounds_launch_each_kernel_once(&mut densities, 10, |p, g| {
        use clfuse::nuts::nuts_rs::CpuLogpFunc;
        reference.logp(p, g).map_err(|e| Error::InvalidArgument {
            function: "reference",
            argument: "position",
            reason: e.to_string(),
        })
    })
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
    let (interleaved, threaded) = interleaved_and_threaded(&model, &sampler)?;
    for (a, b) in interleaved.chains().iter().zip(threaded.chains()) {
        assert_eq!(a.draws, b.draws);
        assert!(a.draws.iter().all(|d| d[0] > 0.0));
    }
    Ok(())
}

/// Eight schools, non-centred, as examples/eight_schools.rs writes it:
/// constrained parameters, named densities (with checks), vectors of 8.
fn eight_schools() -> Result<impl Model> {
    use clfuse::dist::{cauchy_lpdf, normal_lpdf};
    use clfuse::params::{Constraint, Parameters};
    let y = MatrixCl::from_slice(8, 1, &[28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])?;
    let sigma = MatrixCl::from_slice(8, 1, &[15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])?;
    let mut p = Parameters::new();
    let mu = p.real("mu", Constraint::Unconstrained)?;
    let tau = p.real("tau", Constraint::lower(0.0))?;
    let theta_tilde = p.vector("theta_tilde", 8, Constraint::Unconstrained)?;
    Ok(p.model(move |v| {
        let theta = optional_broadcast(&v[mu], 8, 1)
            + elt_multiply(optional_broadcast(&v[tau], 8, 1), &v[theta_tilde]);
        let priors = normal_lpdf(&v[mu], 0.0, 5.0).eval()?
            + cauchy_lpdf(&v[tau], 0.0, 5.0).eval()?
            + normal_lpdf(&v[theta_tilde], 0.0, 1.0).eval()?;
        (priors + normal_lpdf(&y, theta, &sigma).eval()?).eval()
    }))
}

#[test]
fn interleaved_chains_of_a_declared_model_draw_what_threaded_chains_draw() -> Result<()> {
    let model = eight_schools()?;
    let sampler = Sampler {
        chains: 4,
        warmup: 60,
        draws: 40,
        seed: 8,
        ..Sampler::default()
    };
    let (interleaved, threaded) = interleaved_and_threaded(&model, &sampler)?;
    for (k, (a, b)) in interleaved
        .chains()
        .iter()
        .zip(threaded.chains())
        .enumerate()
    {
        assert_eq!(a.draws, b.draws, "chain {k}");
    }
    Ok(())
}
