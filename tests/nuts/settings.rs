//! Invalid settings are errors naming the argument, never panics.

use clfuse::nuts::{Init, Sampler, UnconstrainedModel, sample};
use clfuse::prelude::*;
use clfuse::rev::Var;
use clfuse::{Error, Result};

fn argument_of(result: Result<clfuse::nuts::Fit>) -> &'static str {
    match result {
        Err(Error::InvalidArgument { argument, .. }) => argument,
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn invalid_settings_are_errors() {
    let model = UnconstrainedModel::new(2, |t: &Var| colwise_sum(-0.5f64 * square(t)).eval());
    let cases: Vec<(Sampler, &str)> = vec![
        (
            Sampler {
                chains: 0,
                ..Sampler::default()
            },
            "chains",
        ),
        (
            Sampler {
                warmup: 0,
                draws: 0,
                ..Sampler::default()
            },
            "draws",
        ),
        (
            Sampler {
                max_depth: 0,
                ..Sampler::default()
            },
            "max_depth",
        ),
        (
            Sampler {
                target_accept: 1.0,
                ..Sampler::default()
            },
            "target_accept",
        ),
        (
            Sampler {
                target_accept: f64::NAN,
                ..Sampler::default()
            },
            "target_accept",
        ),
        (
            Sampler {
                init: Init::Random { radius: -1.0 },
                ..Sampler::default()
            },
            "init",
        ),
        (
            Sampler {
                chains: 2,
                init: Init::Points(vec![vec![0.0, 0.0]]),
                ..Sampler::default()
            },
            "init",
        ),
        (
            Sampler {
                chains: 1,
                init: Init::Points(vec![vec![0.0]]),
                ..Sampler::default()
            },
            "init",
        ),
        (
            Sampler {
                chains: 1,
                init: Init::Points(vec![vec![0.0, f64::INFINITY]]),
                ..Sampler::default()
            },
            "init",
        ),
    ];
    for (settings, argument) in cases {
        assert_eq!(
            argument_of(sample(&model, &settings)),
            argument,
            "{settings:?}"
        );
    }
    let no_parameters = UnconstrainedModel::new(0, |t: &Var| colwise_sum(t).eval());
    assert_eq!(
        argument_of(sample(&no_parameters, &Sampler::default())),
        "model"
    );
}

/// Warm-up only, or draws only, are valid runs.
#[test]
fn warmup_or_draws_alone() -> Result<()> {
    let model = UnconstrainedModel::new(1, |t: &Var| colwise_sum(-0.5f64 * square(t)).eval());
    let only_warmup = sample(
        &model,
        &Sampler {
            chains: 1,
            warmup: 10,
            draws: 0,
            ..Sampler::default()
        },
    )?;
    assert!(only_warmup.chains()[0].draws.is_empty());
    let only_draws = sample(
        &model,
        &Sampler {
            chains: 1,
            warmup: 0,
            draws: 10,
            ..Sampler::default()
        },
    )?;
    assert_eq!(only_draws.chains()[0].draws.len(), 10);
    Ok(())
}

/// A model whose density disagrees with its declared dimension, or whose
/// constrain gives the wrong number of columns, is an error.
#[test]
fn inconsistent_models_are_errors() {
    use clfuse::nuts::{DeviceDensity, Model};
    type Logp = fn(&Var) -> Result<Var>;
    fn logp(t: &Var) -> Result<Var> {
        colwise_sum(-0.5f64 * square(t)).eval()
    }
    struct Wrong {
        density_dim: usize,
        columns: usize,
    }
    impl Model for Wrong {
        type Density<'m> = DeviceDensity<Logp>;
        fn dim(&self) -> usize {
            1
        }
        fn column_names(&self) -> Vec<String> {
            vec!["a".into()]
        }
        fn density(&self) -> Result<DeviceDensity<Logp>> {
            DeviceDensity::new(self.density_dim, logp as Logp)
        }
        fn constrain(&self, u: &[f64]) -> Result<Vec<f64>> {
            Ok(vec![u[0]; self.columns])
        }
    }
    let run = Sampler {
        chains: 2,
        warmup: 5,
        draws: 5,
        ..Sampler::default()
    };
    for model in [
        Wrong {
            density_dim: 2,
            columns: 1,
        },
        Wrong {
            density_dim: 1,
            columns: 2,
        },
    ] {
        assert_eq!(argument_of(sample(&model, &run)), "model");
    }
}

#[test]
fn overflowing_lengths_are_errors() {
    let model = UnconstrainedModel::new(1, |t: &Var| colwise_sum(-0.5f64 * square(t)).eval());
    let huge = Sampler {
        warmup: u64::MAX,
        draws: 1,
        ..Sampler::default()
    };
    assert_eq!(argument_of(sample(&model, &huge)), "draws");
}
