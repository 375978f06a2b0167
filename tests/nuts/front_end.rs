//! `nuts::sample` on models with known posteriors, on the device.

use clfuse::Result;
use clfuse::nuts::{Fit, Init, Model, Sampler, UnconstrainedModel, sample};
use clfuse::prelude::*;
use clfuse::rev::Var;

/// The data of the conjugate normal model.
const Y: [f64; 10] = [1.9, 2.4, 0.7, 1.6, 2.2, 3.1, 1.2, 2.0, 1.5, 2.6];
/// The prior's standard deviation: mu ~ N(0, 10).
const PRIOR_SD: f64 = 10.0;

/// mu | y for y_i ~ N(mu, 1), mu ~ N(0, PRIOR_SD): normal with precision
/// n + 1/PRIOR_SD² and mean sum(y) / precision.
fn exact_posterior() -> (f64, f64) {
    let precision = Y.len() as f64 + PRIOR_SD.powi(-2);
    (Y.iter().sum::<f64>() / precision, precision.powf(-0.5))
}

/// The log density of mu on the device (data captured by reference, shared
/// by the chains' threads).
fn log_density(y: &MatrixCl<f64>, mu: &Var) -> Result<Var> {
    let n = y.rows();
    let likelihood = colwise_sum(-0.5f64 * square(y - optional_broadcast(mu, n, 1))).eval()?;
    (&likelihood + (-0.5 / PRIOR_SD.powi(2)) * square(mu)).eval()
}

fn quick(chains: usize, seed: u64) -> Sampler {
    Sampler {
        chains,
        warmup: 300,
        draws: 500,
        seed,
        ..Sampler::default()
    }
}

#[test]
fn conjugate_normal_four_chains() -> Result<()> {
    let y = MatrixCl::from_slice(Y.len(), 1, &Y)?;
    let model = UnconstrainedModel::new(1, |mu: &Var| log_density(&y, mu));
    let fit = sample(&model, &quick(4, 11))?;
    let summary = fit.summary();
    println!("{summary}");
    let (mean, sd) = exact_posterior();
    let row = summary.row("theta[1]").expect("the column of theta[1]");
    assert_eq!((summary.chains, summary.draws), (4, 500));
    super::assert_mean_within_4_mcse(row, mean);
    assert!(
        (row.sd / sd - 1.0).abs() < 0.1,
        "sd {} vs exact {sd}",
        row.sd
    );
    // The normal's 5% and 95% quantiles, within a few of their MC errors.
    for (q, z) in [(row.q5, -1.6448536269514722), (row.q95, 1.6448536269514722)] {
        assert!((q - (mean + z * sd)).abs() < 0.1 * sd * 4.0, "quantile {q}");
    }
    assert!(row.rhat < 1.01, "R-hat {}", row.rhat);
    assert!(row.ess_bulk > 400.0 && row.ess_tail > 300.0, "{row:?}");
    assert_eq!(summary.divergences, 0);
    // The sampler's statistics are there and plausible.
    for chain in fit.chains() {
        assert_eq!(chain.stats.len(), 500);
        for s in &chain.stats {
            assert!(s.step_size > 0.0 && s.leapfrog_steps >= 1 && s.depth >= 1);
            assert!((0.0..=1.0).contains(&s.accept) && s.energy.is_finite());
            assert!(s.log_density.is_finite());
        }
        // Stan's default init: uniform(-2, 2).
        assert!(chain.init[0].abs() < 2.0);
    }
    Ok(())
}

/// Draws of mu in a model where the sampler works on log(sigma) and the fit
/// reports sigma: constrain is applied to every draw.
struct LogScale;

type Logp = fn(&Var) -> Result<Var>;

fn standard_normal(t: &Var) -> Result<Var> {
    colwise_sum(-0.5f64 * square(t)).eval()
}

impl Model for LogScale {
    type Density<'m> = clfuse::nuts::DeviceDensity<Logp>;
    fn dim(&self) -> usize {
        1
    }
    fn column_names(&self) -> Vec<String> {
        vec!["sigma".into()]
    }
    fn density(&self) -> Result<Self::Density<'_>> {
        clfuse::nuts::DeviceDensity::new(1, standard_normal as Logp)
    }
    fn constrain(&self, u: &[f64]) -> Result<Vec<f64>> {
        Ok(vec![u[0].exp()])
    }
}

#[test]
fn constrained_columns_are_reported() -> Result<()> {
    let fit = sample(&LogScale, &quick(2, 3))?;
    let sigma = fit.column("sigma").expect("sigma");
    assert!(sigma.iter().flatten().all(|&s| s > 0.0));
    // log(sigma) ~ N(0, 1): the median of sigma is 1.
    let median = fit.summary().rows[0].q50;
    assert!((median - 1.0).abs() < 0.2, "median {median}");
    assert_eq!(fit.column("theta[1]"), None);
    Ok(())
}

fn draws_of(fit: &Fit) -> Vec<Vec<Vec<f64>>> {
    fit.chains().iter().map(|c| c.draws.clone()).collect()
}

#[test]
fn seeded_runs_reproduce() -> Result<()> {
    let y = MatrixCl::from_slice(Y.len(), 1, &Y)?;
    let model = UnconstrainedModel::new(1, |mu: &Var| log_density(&y, mu));
    let settings = Sampler {
        warmup: 50,
        draws: 50,
        ..quick(3, 5)
    };
    let a = sample(&model, &settings)?;
    let b = sample(&model, &settings)?;
    assert_eq!(draws_of(&a), draws_of(&b));
    assert_eq!(
        a.chains()
            .iter()
            .map(|c| c.stats.clone())
            .collect::<Vec<_>>(),
        b.chains()
            .iter()
            .map(|c| c.stats.clone())
            .collect::<Vec<_>>()
    );
    // Chains differ from each other, and another seed differs.
    assert_ne!(a.chains()[0].draws, a.chains()[1].draws);
    assert_ne!(a.chains()[0].init, a.chains()[1].init);
    let c = sample(
        &model,
        &Sampler {
            seed: 6,
            ..settings
        },
    )?;
    assert_ne!(draws_of(&a), draws_of(&c));
    Ok(())
}

#[test]
fn user_inits_are_used() -> Result<()> {
    let y = MatrixCl::from_slice(Y.len(), 1, &Y)?;
    let model = UnconstrainedModel::new(1, |mu: &Var| log_density(&y, mu));
    let points = vec![vec![-30.0], vec![40.0]];
    let fit = sample(
        &model,
        &Sampler {
            init: Init::Points(points.clone()),
            ..quick(2, 9)
        },
    )?;
    assert_eq!(
        fit.chains()
            .iter()
            .map(|c| c.init.clone())
            .collect::<Vec<_>>(),
        points
    );
    // Far starts still reach the posterior.
    let (mean, _) = exact_posterior();
    assert!((fit.summary().rows[0].mean - mean).abs() < 0.1);
    Ok(())
}

/// A density that is -inf for theta < 1 (as a constraint violated): random
/// inits in (-2, 2) are retried until one lands in (1, 2).
#[test]
fn random_inits_retry_until_finite() -> Result<()> {
    let model = UnconstrainedModel::new(1, |t: &Var| {
        let inside = gt(t, 1.0f64);
        colwise_sum(select(inside, -0.5f64 * square(t), f64::NEG_INFINITY)).eval()
    });
    let fit = sample(
        &model,
        &Sampler {
            warmup: 20,
            draws: 20,
            ..quick(3, 2)
        },
    )?;
    for chain in fit.chains() {
        assert!(
            chain.init[0] > 1.0 && chain.init[0] < 2.0,
            "{:?}",
            chain.init
        );
    }
    Ok(())
}

#[test]
fn no_finite_init_is_an_error() -> Result<()> {
    let model = UnconstrainedModel::new(2, |t: &Var| {
        colwise_sum(select(gt(t, 5.0f64), square(t), f64::NEG_INFINITY)).eval()
    });
    let err = sample(&model, &quick(2, 1)).expect_err("no finite point in (-2, 2)");
    let message = err.to_string();
    assert!(message.contains("100 random points"), "{message}");
    // A given non-finite point is refused too.
    let given = Sampler {
        init: Init::Points(vec![vec![0.0, 0.0], vec![6.0, 6.0]]),
        ..quick(2, 1)
    };
    let message = sample(&model, &given).expect_err("not finite").to_string();
    assert!(
        message.contains("chain 1") && message.contains("not finite"),
        "{message}"
    );
    Ok(())
}

#[test]
fn progress_bars_do_not_change_the_draws() -> Result<()> {
    let y = MatrixCl::from_slice(Y.len(), 1, &Y)?;
    let model = UnconstrainedModel::new(1, |mu: &Var| log_density(&y, mu));
    let settings = Sampler {
        warmup: 30,
        draws: 30,
        ..quick(2, 4)
    };
    let plain = sample(&model, &settings)?;
    let with_bars = sample(
        &model,
        &Sampler {
            progress: true,
            ..settings
        },
    )?;
    assert_eq!(draws_of(&plain), draws_of(&with_bars));
    Ok(())
}

/// What a closure shares with the chains' threads must be `Send + Sync`.
#[test]
fn device_data_is_shareable() {
    fn shareable<T: Send + Sync>() {}
    shareable::<MatrixCl<f64>>();
    shareable::<&MatrixCl<f64>>();
}

/// The sampler settings reach nuts-rs: a higher target acceptance gives
/// smaller steps and higher acceptance; a low maximum depth caps the trees.
#[test]
fn target_accept_and_max_depth_are_used() -> Result<()> {
    let model = UnconstrainedModel::new(2, |t: &Var| colwise_sum(-0.5f64 * square(t)).eval());
    let run = |target_accept: f64, max_depth: u64| {
        sample(
            &model,
            &Sampler {
                target_accept,
                max_depth,
                ..quick(2, 21)
            },
        )
    };
    let mean_of = |fit: &Fit, stat: fn(&clfuse::nuts::DrawStats) -> f64| {
        let all: Vec<f64> = fit
            .chains()
            .iter()
            .flat_map(|c| c.stats.iter().map(stat))
            .collect();
        all.iter().sum::<f64>() / all.len() as f64
    };
    let (low, high) = (run(0.6, 10)?, run(0.95, 10)?);
    assert!(mean_of(&high, |s| s.step_size) < 0.8 * mean_of(&low, |s| s.step_size));
    assert!(mean_of(&high, |s| s.accept) > mean_of(&low, |s| s.accept));
    assert!((mean_of(&high, |s| s.accept) - 0.95).abs() < 0.05);
    let shallow = run(0.99, 1)?;
    assert!(shallow.chains().iter().all(|c| {
        c.stats
            .iter()
            .all(|s| s.depth <= 1 && s.leapfrog_steps <= 2)
    }));
    assert!(shallow.max_depth_hits() > 0);
    assert_eq!(shallow.summary().max_depth_hits, shallow.max_depth_hits());
    Ok(())
}

/// Without mass-matrix adaptation the sampler still targets the posterior
/// (a badly scaled normal: sd 1 and 10), with a different adaptation.
#[test]
fn mass_matrix_adaptation_off() -> Result<()> {
    let scales = MatrixCl::from_slice(2, 1, &[1.0, 0.01])?;
    let model = UnconstrainedModel::new(2, |t: &Var| {
        colwise_sum(-0.5f64 * elt_multiply(&scales, square(t))).eval()
    });
    let on = sample(&model, &quick(4, 13))?;
    let off = sample(
        &model,
        &Sampler {
            adapt_mass_matrix: false,
            ..quick(4, 13)
        },
    )?;
    assert_ne!(draws_of(&on), draws_of(&off));
    for fit in [&on, &off] {
        let summary = fit.summary();
        for (row, sd) in summary.rows.iter().zip([1.0, 10.0]) {
            assert!(row.mean.abs() < 5.0 * row.mcse_mean, "{summary}");
            assert!((row.sd / sd - 1.0).abs() < 0.2, "{summary}");
        }
    }
    Ok(())
}

fn failing_on_purpose() -> clfuse::Error {
    clfuse::Error::InvalidArgument {
        function: "test model",
        argument: "theta",
        reason: "fails on purpose".into(),
    }
}

/// An unrecoverable model error (a device error, say) ends the run as
/// itself, whether at the initial point or mid-run, and stops all chains.
#[test]
fn model_errors_come_back_as_themselves() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let always = UnconstrainedModel::new(1, |_: &Var| -> Result<Var> { Err(failing_on_purpose()) });
    let err = sample(&always, &quick(2, 1)).expect_err("the model fails");
    assert!(
        matches!(
            err,
            clfuse::Error::InvalidArgument {
                function: "test model",
                ..
            }
        ),
        "{err}"
    );

    let calls = AtomicUsize::new(0);
    // Its host code must run at every evaluation: not replayed.
    let later = UnconstrainedModel::new(1, |t: &Var| {
        if calls.fetch_add(1, Ordering::Relaxed) > 200 {
            return Err(failing_on_purpose());
        }
        colwise_sum(-0.5f64 * square(t)).eval()
    })
    .without_replay();
    let err = sample(&later, &quick(2, 1)).expect_err("the model fails mid-run");
    assert!(
        matches!(
            err,
            clfuse::Error::InvalidArgument {
                function: "test model",
                ..
            }
        ),
        "{err}"
    );
    // Both chains stopped soon after: far fewer calls than a whole run.
    assert!(calls.load(Ordering::Relaxed) < 1000);
}

#[test]
fn a_panicking_model_is_an_error() {
    let model = UnconstrainedModel::new(1, |t: &Var| -> Result<Var> {
        if t.value().to_vec().is_ok_and(|v| v[0] > 1.5) {
            panic!("model panics on purpose");
        }
        colwise_sum(-0.5f64 * square(t)).eval()
    });
    let err = sample(&model, &quick(2, 1)).expect_err("the model panics");
    assert!(err.to_string().contains("panics on purpose"), "{err}");
}
