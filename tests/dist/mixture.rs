//! Seed 004's mixture on the device (`clfuse_kernels::mixture_*`,
//! `clfuse::mixture`): the fused indicator draw against a host Gumbel-max
//! over host densities and against `categorical_logit_rng` over the
//! E-step's logits, the E-step against host densities, the statistics
//! against a CPU loop at odd sizes, clear errors, and the Gibbs sampler and
//! BEM recovering a known mixture.

use crate::common::linalg::Rng as HostRng;
use clfuse::mixture::{Bem, Component, Concentration, Gibbs, Mixture, NormalInverseWishart};
use clfuse::prelude::*;
use clfuse::{Error, Result};
use clfuse_kernels::{
    RandomKey, mixture_features, mixture_indicators, mixture_log_responsibilities,
    mixture_statistics, softmax_rows_of_product, statistics_len,
};
use clfuse_ops::random::categorical_logit_rng;

/// A random mixture of `k` components in `p` dimensions (full covariances,
/// unequal weights) and `n` points around them, column-major.
fn random_problem(n: usize, p: usize, k: usize, seed: u64) -> Result<(Mixture, Vec<f64>)> {
    let mut rng = HostRng::new(seed);
    let raw: Vec<f64> = (0..k).map(|_| 1.5 + rng.next()).collect();
    let total: f64 = raw.iter().sum();
    let components = (0..k)
        .map(|c| {
            let mean: Vec<f64> = (0..p).map(|_| 3.0 * rng.next()).collect();
            let a = rng.matrix(p, p);
            let covariance = &a * a.transpose() * 0.3 + nalgebra::DMatrix::identity(p, p) * 0.5;
            Component::new((raw[c] / total).ln(), mean, covariance.as_slice())
        })
        .collect::<Result<Vec<_>>>()?;
    let x = (0..n * p).map(|_| 4.0 * rng.next()).collect();
    Ok((Mixture::new(components)?, x))
}

fn row(x: &[f64], n: usize, p: usize, i: usize) -> Vec<f64> {
    (0..p).map(|a| x[i + n * a]).collect()
}

/// Each component's log density at `x` on the host, and their log-sum-exp
/// (the point's log density under the mixture).
fn host_densities(mixture: &Mixture, x: &[f64]) -> (Vec<f64>, f64) {
    let densities: Vec<f64> = mixture
        .components()
        .iter()
        .map(|c| c.log_density(x))
        .collect();
    let max = densities.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let lse = max + densities.iter().map(|d| (d - max).exp()).sum::<f64>().ln();
    (densities, lse)
}

#[test]
fn e_step_and_indicators_match_the_host() -> Result<()> {
    // k = 40 at p = 14 takes two staged blocks of components; n not a
    // multiple of the 256 rows a work-group takes.
    for (n, p, k) in [
        (1, 1, 1),
        (31, 3, 5),
        (33, 2, 7),
        (257, 14, 40),
        (1000, 4, 9),
    ] {
        let (mixture, x_host) = random_problem(n, p, k, (n * 100 + k) as u64)?;
        let x = MatrixCl::from_slice(n, p, &x_host)?;
        let components = mixture.upload()?;
        let (log_r, row_density) = mixture_log_responsibilities(&x, &components)?;
        let (log_r, row_density) = (log_r.to_vec()?, row_density.to_vec()?);
        let key = RandomKey::new(31).with_stream(n as u32);
        let (z, chosen) = mixture_indicators(&x, &components, key)?;
        let (z, chosen) = (z.to_vec()?, chosen.to_vec()?);
        let same_draw: Vec<i32> = {
            let logits = MatrixCl::from_slice(n, k, &log_r)?;
            categorical_logit_rng(key, &logits).eval()?.to_vec()?
        };
        for i in 0..n {
            let xi = row(&x_host, n, p, i);
            let (densities, lse) = host_densities(&mixture, &xi);
            let tol = 1e-10 * lse.abs().max(1.0);
            assert!(
                (row_density[i] - lse).abs() < tol,
                "({n},{p},{k}) row {i}: {} vs {lse}",
                row_density[i]
            );
            for c in 0..k {
                let (got, want) = (log_r[i + n * c], densities[c] - lse);
                assert!(
                    (got - want).abs() < tol,
                    "({n},{p},{k}) log r[{i},{c}]: {got} vs {want}"
                );
            }
            // The host's Gumbel-max over the host's densities.
            let perturbed: Vec<f64> = (0..k)
                .map(|c| densities[c] + key.gumbel(i as u32, c as u32, 0))
                .collect();
            let mut order: Vec<usize> = (0..k).collect();
            order.sort_by(|a, b| perturbed[*b].total_cmp(&perturbed[*a]));
            let near_tie = k > 1 && perturbed[order[0]] - perturbed[order[1]] < 1e-9;
            if !near_tie {
                assert_eq!(
                    z[i], order[0] as i32,
                    "({n},{p},{k}) z[{i}] against the host"
                );
                assert_eq!(
                    same_draw[i], z[i],
                    "({n},{p},{k}) z[{i}] against categorical_logit_rng"
                );
            }
            let c = usize::try_from(z[i]).expect("every row draws a component");
            assert!(
                (chosen[i] - densities[c]).abs() < tol,
                "({n},{p},{k}) chosen[{i}]"
            );
        }
    }
    Ok(())
}

#[test]
fn expanded_e_step_matches_the_host() -> Result<()> {
    // BEM's E-step: the features times the expanded parameters, each row's
    // softmax stored (responsibilities) with its normaliser (the point's log
    // density). p = 14 is the largest with at most 128 features; k = 65
    // and 257 leave padding columns.
    for (n, p, k) in [
        (1, 1, 1),
        (31, 3, 5),
        (33, 2, 65),
        (257, 14, 40),
        (1000, 4, 257),
    ] {
        let (mixture, x_host) = random_problem(n, p, k, (n * 7 + k) as u64)?;
        let x = MatrixCl::from_slice(n, p, &x_host)?;
        let features = mixture_features(&x)?;
        let q = statistics_len(p);
        let w = MatrixCl::from_slice(q, k, &mixture.expanded_parameters())?;
        let responsibilities = MatrixCl::<f64>::zeros(n, k)?;
        let row_density =
            softmax_rows_of_product(&features, &w, &MatrixCl::zeros(1, k)?, &responsibilities)?
                .to_vec()?;
        let responsibilities = responsibilities.to_vec()?;
        for i in 0..n {
            let xi = row(&x_host, n, p, i);
            let (densities, lse) = host_densities(&mixture, &xi);
            let tol = 1e-10 * lse.abs().max(1.0);
            assert!(
                (row_density[i] - lse).abs() < tol,
                "({n},{p},{k}) row {i}: {} vs {lse}",
                row_density[i]
            );
            for c in 0..k {
                let (got, want) = (responsibilities[i + n * c], (densities[c] - lse).exp());
                assert!(
                    (got - want).abs() < 1e-10,
                    "({n},{p},{k}) r[{i},{c}]: {got} vs {want}"
                );
            }
        }
    }
    Ok(())
}

fn host_statistics(x: &[f64], z: &[i32], n: usize, p: usize, k: usize) -> Vec<f64> {
    let len = statistics_len(p);
    let mut out = vec![0.0; len * k];
    for (i, &zi) in z.iter().enumerate().take(n) {
        let Ok(c) = usize::try_from(zi) else {
            continue;
        };
        if c >= k {
            continue;
        }
        let xi = row(x, n, p, i);
        let column = &mut out[c * len..(c + 1) * len];
        column[0] += 1.0;
        let mut e = 1;
        for v in &xi {
            column[e] += v;
            e += 1;
        }
        for a in 0..p {
            for b in a..p {
                column[e] += xi[a] * xi[b];
                e += 1;
            }
        }
    }
    out
}

#[test]
fn statistics_match_a_cpu_loop() -> Result<()> {
    for (n, p, k) in [
        (0, 2, 3),
        (1, 1, 1),
        (31, 3, 5),
        (33, 14, 40),
        (257, 2, 7),
        (3001, 5, 70),
    ] {
        let mut rng = HostRng::new(n as u64 + 7);
        let x_host: Vec<f64> = (0..n * p).map(|_| 3.0 * rng.next()).collect();
        // Some rows in no component (-1, as an undrawable row gets; k).
        let z_host: Vec<i32> = (0..n)
            .map(|i| match i % 17 {
                5 => -1,
                11 => k as i32,
                _ => ((rng.next() + 1.0) * 0.5 * k as f64) as i32 % k as i32,
            })
            .collect();
        let x = MatrixCl::from_slice(n, p, &x_host)?;
        let z = MatrixCl::from_slice(n, 1, &z_host)?;
        let got = mixture_statistics(&x, &z, k)?.to_vec()?;
        let want = host_statistics(&x_host, &z_host, n, p, k);
        assert_eq!(got.len(), want.len());
        for (e, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-12 * w.abs().max(1.0),
                "({n},{p},{k}) [{e}]: {g} vs {w}"
            );
        }
        // A fixed order of additions: the same bits again.
        assert_eq!(
            mixture_statistics(&x, &z, k)?.to_vec()?,
            got,
            "({n},{p},{k}) twice"
        );
        // The features' product with one-hot weights gives the same sums.
        if n > 0 {
            let features = mixture_features(&x)?.to_vec()?;
            let len = statistics_len(p);
            for i in [0, n / 2, n - 1] {
                let xi = row(&x_host, n, p, i);
                assert_eq!(features[i], 1.0);
                assert_eq!(features[i + n * (1 + p - 1)], xi[p - 1]);
                assert_eq!(features[i + n * (len - 1)], xi[p - 1] * xi[p - 1]);
            }
        }
    }
    Ok(())
}

fn invalid_argument(result: Result<impl Sized>, function: &str, argument: &str) {
    match result {
        Err(Error::InvalidArgument {
            function: f,
            argument: a,
            ..
        }) => {
            assert_eq!((f, a), (function, argument));
        }
        Err(e) => panic!("{function}: expected InvalidArgument({argument}), got {e}"),
        Ok(_) => panic!("{function}: expected InvalidArgument({argument}), got Ok"),
    }
}

#[test]
fn bad_inputs_are_clear_errors() -> Result<()> {
    let (mixture, x_host) = random_problem(10, 3, 4, 1)?;
    let x = MatrixCl::from_slice(10, 3, &x_host)?;
    let components = mixture.upload()?;
    let key = RandomKey::new(1);
    let wide = MatrixCl::<f64>::zeros(2, 33)?;
    invalid_argument(
        mixture_indicators(&wide, &components, key),
        "mixture_indicators",
        "x",
    );
    let empty = MatrixCl::<f64>::zeros(2, 0)?;
    invalid_argument(
        mixture_log_responsibilities(&empty, &components),
        "mixture_log_responsibilities",
        "x",
    );
    let x2 = MatrixCl::from_slice(5, 2, &x_host[..10])?;
    invalid_argument(
        mixture_indicators(&x2, &components, key),
        "mixture_indicators",
        "components",
    );
    let z = MatrixCl::<i32>::zeros(9, 1)?;
    assert!(matches!(
        mixture_statistics(&x, &z, 4),
        Err(Error::DimensionMismatch { .. })
    ));
    // The front end: a mixture of other dimension, a bad prior, bad concentration, NaN data.
    let prior = NormalInverseWishart::weakly_informative(&[0.0; 3], 1.0);
    invalid_argument(
        Gibbs::new(
            &x2,
            mixture.clone(),
            prior.clone(),
            Concentration::Fixed(1.0),
            1,
        ),
        "Gibbs::new",
        "x",
    );
    let flat = NormalInverseWishart {
        nu: 1.0,
        ..prior.clone()
    };
    invalid_argument(
        Gibbs::new(&x, mixture.clone(), flat, Concentration::Fixed(1.0), 1),
        "Gibbs::new",
        "prior",
    );
    invalid_argument(
        Gibbs::new(
            &x,
            mixture.clone(),
            prior.clone(),
            Concentration::Fixed(-1.0),
            1,
        ),
        "Gibbs::new",
        "concentration",
    );
    invalid_argument(
        Component::new(0.0, vec![0.0; 2], &[1.0, 2.0, 2.0, 1.0]),
        "Component::new",
        "covariance",
    );
    invalid_argument(Mixture::new(vec![]), "Mixture::new", "components");
    let mut with_nan = x_host.clone();
    with_nan[4] = f64::NAN;
    let x_nan = MatrixCl::from_slice(10, 3, &with_nan)?;
    let mut gibbs = Gibbs::new(
        &x_nan,
        mixture.clone(),
        prior.clone(),
        Concentration::Fixed(1.0),
        1,
    )?;
    invalid_argument(gibbs.sweep(), "Gibbs::sweep", "x");
    let mut bem = Bem::new(&x_nan, mixture, prior)?;
    invalid_argument(bem.step(), "Bem::step", "x");
    Ok(())
}

/// Three correlated clusters in the plane, weights 0.5, 0.3, 0.2.
struct Known {
    n: usize,
    x: Vec<f64>,
    labels: Vec<usize>,
    means: [[f64; 2]; 3],
    covariances: [[f64; 4]; 3],
    weights: [f64; 3],
}

fn known_mixture(n: usize) -> Known {
    let means: [[f64; 2]; 3] = [[-4.0, 0.0], [4.0, 1.0], [0.0, 6.0]];
    let covariances: [[f64; 4]; 3] = [
        [1.0, 0.5, 0.5, 1.0],
        [0.5, -0.2, -0.2, 0.8],
        [2.0, 0.0, 0.0, 0.3],
    ];
    let weights = [0.5, 0.3, 0.2];
    let key = RandomKey::new(2010).with_stream(1);
    let mut x = vec![0.0; 2 * n];
    let mut labels = vec![0; n];
    for i in 0..n {
        let u = key.uniform(i as u32, 0, 0);
        let c = if u < 0.5 {
            0
        } else if u < 0.8 {
            1
        } else {
            2
        };
        let s = covariances[c];
        // Cholesky of the 2 x 2 covariance.
        let l11 = s[0].sqrt();
        let l21 = s[1] / l11;
        let l22 = (s[3] - l21 * l21).sqrt();
        let (z1, z2) = (key.normal(i as u32, 1, 0), key.normal(i as u32, 2, 0));
        labels[i] = c;
        x[i] = means[c][0] + l11 * z1;
        x[i + n] = means[c][1] + l21 * z1 + l22 * z2;
    }
    Known {
        n,
        x,
        labels,
        means,
        covariances,
        weights,
    }
}

/// The component nearest each true cluster: its mean, covariance and weight within `tol`.
fn assert_recovers(what: &str, truth: &Known, fitted: &[(f64, Component)], tol: f64) {
    for t in 0..3 {
        let (weight, nearest) = fitted
            .iter()
            .min_by(|a, b| {
                let d = |c: &Component| {
                    (c.mean[0] - truth.means[t][0]).powi(2)
                        + (c.mean[1] - truth.means[t][1]).powi(2)
                };
                d(&a.1).total_cmp(&d(&b.1))
            })
            .expect("components");
        for a in 0..2 {
            assert!(
                (nearest.mean[a] - truth.means[t][a]).abs() < tol,
                "{what}: cluster {t} mean {:?}",
                nearest.mean
            );
        }
        let covariance = nearest.covariance();
        for e in 0..4 {
            assert!(
                (covariance[e] - truth.covariances[t][e]).abs() < 2.0 * tol,
                "{what}: cluster {t} covariance {covariance:?}"
            );
        }
        assert!(
            (weight - truth.weights[t]).abs() < tol / 2.0,
            "{what}: cluster {t} weight {weight}"
        );
    }
}

#[test]
fn gibbs_recovers_a_known_mixture_and_is_reproducible() -> Result<()> {
    let truth = known_mixture(3000);
    let x = MatrixCl::from_slice(truth.n, 2, &truth.x)?;
    let prior = NormalInverseWishart::weakly_informative(&[0.0, 0.0], 1.0);
    // Three components, one started in each cluster: the posterior means of
    // the parameters (sweeps 20 to 100) are the truth within Monte-Carlo
    // and sampling error.
    let starts: Vec<Vec<f64>> = (0..3)
        .map(|t| {
            row(
                &truth.x,
                truth.n,
                2,
                truth.labels.iter().position(|&l| l == t).expect("a point"),
            )
        })
        .collect();
    let mut gibbs = Gibbs::new(
        &x,
        Mixture::from_points(&starts, 1.0)?,
        prior.clone(),
        Concentration::Fixed(1.0),
        11,
    )?;
    let mut averaged = vec![
        (
            0.0,
            Component {
                log_weight: 0.0,
                mean: vec![0.0; 2],
                precision_cholesky: vec![0.0; 4]
            }
        );
        3
    ];
    let mut covariances = [[0.0; 4]; 3];
    let (burn_in, sweeps) = (20, 100);
    let mut first_log_likelihood = None;
    for sweep in 0..sweeps {
        let s = gibbs.sweep()?;
        first_log_likelihood.get_or_insert(s.complete_log_likelihood);
        if sweep < burn_in {
            continue;
        }
        let m = (sweeps - burn_in) as f64;
        for (c, component) in gibbs.mixture().components().iter().enumerate() {
            averaged[c].0 += s.counts[c] as f64 / truth.n as f64 / m;
            for a in 0..2 {
                averaged[c].1.mean[a] += component.mean[a] / m;
            }
            for (e, v) in component.covariance().iter().enumerate() {
                covariances[c][e] += v / m;
            }
        }
    }
    for (c, (_, component)) in averaged.iter_mut().enumerate() {
        // `assert_recovers` reads the covariance back from the factor.
        let sigma = nalgebra::DMatrix::from_column_slice(2, 2, &covariances[c]);
        let precision = sigma.try_inverse().expect("positive definite");
        component.precision_cholesky = precision
            .cholesky()
            .expect("positive definite")
            .l()
            .as_slice()
            .to_vec();
    }
    assert_recovers("gibbs, posterior means", &truth, &averaged, 0.15);
    let z: Vec<i32> = gibbs.indicators().expect("swept").to_vec()?;
    let agree = z
        .iter()
        .zip(&truth.labels)
        .filter(|(a, b)| **a == **b as i32)
        .count();
    assert!(
        agree >= truth.n * 97 / 100,
        "indicators agree with the labels on {agree} of {}",
        truth.n
    );

    // Truncated at k = 12 from points anywhere: clusters may stay split
    // into pieces (Gibbs merges slowly), but the pieces near each true
    // cluster carry its weight and, pooled, its mean.
    let starts: Vec<Vec<f64>> = (0..12).map(|c| row(&truth.x, truth.n, 2, c * 97)).collect();
    let start = Mixture::from_points(&starts, 1.0)?;
    let concentration = Concentration::Gamma {
        shape: 1.0,
        rate: 1.0,
        initial: 1.0,
    };
    let mut gibbs = Gibbs::new(&x, start.clone(), prior.clone(), concentration, 5)?;
    let mut last = None;
    for _ in 0..60 {
        last = Some(gibbs.sweep()?);
    }
    let last = last.expect("sweeps");
    assert!(last.complete_log_likelihood > first_log_likelihood.expect("swept") - 1000.0);
    for t in 0..3 {
        let (mut weight, mut mean) = (0.0, [0.0; 2]);
        for (component, &count) in gibbs.mixture().components().iter().zip(&last.counts) {
            let nearest = (0..3)
                .min_by(|a, b| {
                    let d = |u: usize| {
                        (0..2)
                            .map(|e| (component.mean[e] - truth.means[u][e]).powi(2))
                            .sum::<f64>()
                    };
                    d(*a).total_cmp(&d(*b))
                })
                .expect("clusters");
            if nearest == t && count > 0 {
                let w = count as f64 / truth.n as f64;
                weight += w;
                for (m, v) in mean.iter_mut().zip(&component.mean) {
                    *m += w * v;
                }
            }
        }
        assert!(
            (weight - truth.weights[t]).abs() < 0.03,
            "k = 12: cluster {t} weight {weight}"
        );
        for e in 0..2 {
            assert!(
                (mean[e] / weight - truth.means[t][e]).abs() < 0.15,
                "k = 12: cluster {t} mean {mean:?}"
            );
        }
    }
    assert!(last.concentration > 0.0 && last.concentration.is_finite());

    // One seed, one chain (with α sampled too); another seed, another chain.
    let run = |seed: u64| -> Result<Vec<_>> {
        let mut g = Gibbs::new(&x, start.clone(), prior.clone(), concentration, seed)?;
        (0..4).map(|_| g.sweep()).collect()
    };
    let first = run(3)?;
    assert_eq!(run(3)?, first);
    assert_ne!(run(4)?, first);
    assert!(
        first
            .windows(2)
            .all(|w| w[0].concentration != w[1].concentration)
    );
    Ok(())
}

#[test]
fn bem_climbs_and_finds_the_known_mixture() -> Result<()> {
    let truth = known_mixture(3000);
    let x = MatrixCl::from_slice(truth.n, 2, &truth.x)?;
    let start = Mixture::from_points(&[vec![-2.0, 0.0], vec![2.0, 0.0], vec![0.0, 3.0]], 1.5)?;
    let prior = NormalInverseWishart::weakly_informative(&[0.0, 0.0], 1.0);
    let mut bem = Bem::new(&x, start, prior)?;
    let mut last = f64::NEG_INFINITY;
    for step in 0..80 {
        let s = bem.step()?;
        assert!(
            s.log_posterior >= last - 1e-9 * last.abs(),
            "step {step}: {} after {last}",
            s.log_posterior
        );
        assert!(s.log_likelihood.is_finite());
        last = s.log_posterior;
    }
    let fitted: Vec<(f64, Component)> = bem
        .mixture()
        .components()
        .iter()
        .map(|c| (c.log_weight.exp(), c.clone()))
        .collect();
    assert_recovers("bem", &truth, &fitted, 0.2);
    Ok(())
}

#[test]
fn bem_log_likelihood_and_m_step_agree_on_both_e_step_paths() -> Result<()> {
    // p <= 14 and k <= 512 take the one-kernel E-step (features times the
    // expanded parameters); p = 15 (136 features) and k = 513 the packed
    // components. Each step's log likelihood against the host, and the next
    // step's against the host again (the M-step saw the right
    // responsibilities).
    for (n, p, k) in [(201, 14, 3), (201, 15, 3), (97, 2, 513), (97, 2, 512)] {
        let (mixture, x_host) = random_problem(n, p, k, (n * 3 + p + k) as u64)?;
        let x = MatrixCl::from_slice(n, p, &x_host)?;
        let prior = NormalInverseWishart::weakly_informative(&vec![0.0; p], 1.0);
        let mut bem = Bem::new(&x, mixture, prior)?;
        for step in 0..2 {
            let host: f64 = (0..n)
                .map(|i| host_densities(bem.mixture(), &row(&x_host, n, p, i)).1)
                .sum();
            let got = bem.step()?.log_likelihood;
            assert!(
                (got - host).abs() < 1e-9 * host.abs().max(1.0),
                "({n},{p},{k}) step {step}: {got} vs {host}"
            );
        }
    }
    Ok(())
}
