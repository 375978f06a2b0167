//! Device random numbers (`clfuse_ops::random`): Philox4x32-10 against
//! Random123's known answers on the host and the device, every leaf against
//! the host copy, each distribution's draws against its CDF (chi-square) and
//! moments, categorical draws against their probabilities, independent
//! streams, and the same seed giving the same draws twice and on two devices.

use clfuse::clfuse_core::{NdRange, Out, TypedKernel};
use clfuse::prelude::*;
use clfuse::{Device, Result, RuntimeConfig};
use clfuse_kernels::{PHILOX_SOURCE, RandomKey, philox4x32_10};
use clfuse_ops::random::{
    Rng, beta, categorical_logit_rng, gamma, gumbel, normal, random_bits, uniform,
};
use statrs::distribution::{Beta, ChiSquared, ContinuousCDF, Gamma, Normal};

/// Random123's `kat_vectors`: counter, key, output.
const KNOWN_ANSWERS: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
    (
        [0; 4],
        [0; 2],
        [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8],
    ),
    (
        [u32::MAX; 4],
        [u32::MAX; 2],
        [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd],
    ),
    (
        [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
        [0xa4093822, 0x299f31d0],
        [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
    ),
];

#[test]
fn philox_known_answers_on_host_and_device() -> Result<()> {
    type Args = (Out<i32>, i32, i32, i32, i32, i32, i32);
    let source: &'static str = Box::leak(
        format!(
            "{PHILOX_SOURCE}
__kernel void known_answer(__global int* out, int c0, int c1, int c2, int c3, int k0, int k1) {{
  const uint4 r = philox4x32_10((uint4)((uint)c0, (uint)c1, (uint)c2, (uint)c3), (uint2)((uint)k0, (uint)k1));
  out[0] = (int)r.x; out[1] = (int)r.y; out[2] = (int)r.z; out[3] = (int)r.w;
}}"
        )
        .into_boxed_str(),
    );
    let kernel: &'static TypedKernel<Args> =
        Box::leak(Box::new(TypedKernel::new("known_answer", source, "")));
    for (counter, key, want) in KNOWN_ANSWERS {
        assert_eq!(philox4x32_10(counter, key), want, "host {counter:x?}");
        let out = MatrixCl::<i32>::zeros(4, 1)?;
        let c = counter.map(|w| w as i32);
        kernel.launch(
            NdRange::d1(1),
            (&out, c[0], c[1], c[2], c[3], key[0] as i32, key[1] as i32),
        )?;
        let got: Vec<u32> = out.to_vec()?.into_iter().map(|w| w as u32).collect();
        assert_eq!(got, want, "device {counter:x?}");
    }
    Ok(())
}

fn close(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (g.is_nan() && w.is_nan()) || (g - w).abs() <= 1e-12 * w.abs().max(1.0);
        assert!(ok, "{what}[{i}]: device {g} vs host {w}");
    }
}

#[test]
fn every_leaf_draws_what_the_host_copy_draws() -> Result<()> {
    let key = RandomKey::new(0x5eed_0001_d00d_f00d).with_stream(17);
    for (rows, cols) in [(0, 3), (1, 1), (31, 3), (33, 2), (257, 1)] {
        let host = |f: &dyn Fn(u32, u32) -> f64| -> Vec<f64> {
            (0..rows * cols)
                .map(|e| f((e % rows.max(1)) as u32, (e / rows.max(1)) as u32))
                .collect()
        };
        let what = |name: &str| format!("{name} {rows}x{cols}");
        close(
            &what("uniform"),
            &uniform(key, rows, cols).eval()?.to_vec()?,
            &host(&|i, j| key.uniform(i, j, 0)),
        );
        close(
            &what("normal"),
            &normal(key, rows, cols).eval()?.to_vec()?,
            &host(&|i, j| key.normal(i, j, 0)),
        );
        close(
            &what("gumbel"),
            &gumbel(key, rows, cols).eval()?.to_vec()?,
            &host(&|i, j| key.gumbel(i, j, 0)),
        );
        let bits: Vec<i32> = random_bits(key, rows, cols).eval()?.to_vec()?;
        let want: Vec<i32> = (0..rows * cols)
            .map(|e| key.bits((e % rows.max(1)) as u32, (e / rows.max(1)) as u32, 0)[0] as i32)
            .collect();
        assert_eq!(bits, want, "{}", what("bits"));
        // Shapes vary per element, below and above one, and a bad one.
        let shape_of = |i: u32, j: u32| match (i + j) % 4 {
            0 => 0.3,
            1 => 1.0,
            2 => 7.5,
            _ => {
                if i == 3 {
                    -1.0
                } else {
                    150.0
                }
            }
        };
        let shapes = MatrixCl::from_slice(rows, cols, &host(&shape_of))?;
        close(
            &what("gamma"),
            &gamma(key, &shapes).eval()?.to_vec()?,
            &host(&|i, j| key.gamma(i, j, 0, shape_of(i, j))),
        );
        close(
            &what("beta"),
            &beta(key, &shapes, 2.0).eval()?.to_vec()?,
            &host(&|i, j| key.beta(i, j, shape_of(i, j), 2.0)),
        );
    }
    Ok(())
}

/// Pearson's statistic over `bins` equiprobable bins of `cdf`, against
/// the chi-square quantile 1 - 1e-4 (a fixed seed: the test is
/// deterministic; the threshold leaves room for the seed's luck).
fn assert_follows(what: &str, draws: &[f64], cdf: impl Fn(f64) -> f64) {
    let bins = 40;
    let mut counts = vec![0usize; bins];
    for &x in draws {
        assert!(x.is_finite(), "{what}: {x}");
        let b = ((cdf(x) * bins as f64) as usize).min(bins - 1);
        counts[b] += 1;
    }
    let expected = draws.len() as f64 / bins as f64;
    let statistic: f64 = counts
        .iter()
        .map(|&c| (c as f64 - expected).powi(2) / expected)
        .sum();
    let limit = ChiSquared::new((bins - 1) as f64)
        .unwrap()
        .inverse_cdf(1.0 - 1e-4);
    assert!(
        statistic < limit,
        "{what}: chi-square {statistic:.1} over {limit:.1}, counts {counts:?}"
    );
}

fn assert_moments(what: &str, draws: &[f64], mean: f64, variance: f64) {
    let n = draws.len() as f64;
    let m = draws.iter().sum::<f64>() / n;
    let v = draws.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    assert!(
        (m - mean).abs() < 5.0 * (variance / n).sqrt(),
        "{what}: mean {m} vs {mean}"
    );
    // The variance's standard error, roughly (kurtosis up to ~10 here).
    assert!(
        (v - variance).abs() < 5.0 * variance * (10.0 / n).sqrt(),
        "{what}: variance {v} vs {variance}"
    );
}

#[test]
fn draws_follow_their_distributions() -> Result<()> {
    let n = 20_000;
    let mut rng = Rng::new(2026);
    let u = rng.uniform(n, 1).eval()?.to_vec()?;
    assert_follows("uniform", &u, |x| x);
    assert_moments("uniform", &u, 0.5, 1.0 / 12.0);
    let z = rng.normal(n / 4, 4).eval()?.to_vec()?;
    let std_normal = Normal::new(0.0, 1.0).unwrap();
    assert_follows("normal", &z, |x| std_normal.cdf(x));
    assert_moments("normal", &z, 0.0, 1.0);
    let g = gumbel(rng.next_key(), n, 1).eval()?.to_vec()?;
    assert_follows("gumbel", &g, |x| (-(-x).exp()).exp());
    assert_moments(
        "gumbel",
        &g,
        0.577_215_664_901_532_9,
        std::f64::consts::PI.powi(2) / 6.0,
    );
    for shape in [0.3, 1.0, 2.5, 40.0] {
        let draws = rng.gamma(constant(shape, n, 1)).eval()?.to_vec()?;
        let dist = Gamma::new(shape, 1.0).unwrap();
        assert_follows(&format!("gamma({shape})"), &draws, |x| dist.cdf(x));
        assert_moments(&format!("gamma({shape})"), &draws, shape, shape);
        // A rate by scaling, in the same kernel.
        let scaled = (rng.gamma(constant(shape, n, 1)) / 4.0).eval()?.to_vec()?;
        let dist = Gamma::new(shape, 4.0).unwrap();
        assert_follows(&format!("gamma({shape}, 4)"), &scaled, |x| dist.cdf(x));
    }
    for (a, b) in [(0.5, 0.5), (2.0, 5.0), (30.0, 1.0)] {
        let draws = rng.beta(constant(a, n, 1), b).eval()?.to_vec()?;
        let dist = Beta::new(a, b).unwrap();
        assert_follows(&format!("beta({a}, {b})"), &draws, |x| dist.cdf(x));
        let mean = a / (a + b);
        assert_moments(
            &format!("beta({a}, {b})"),
            &draws,
            mean,
            mean * (1.0 - mean) / (a + b + 1.0),
        );
    }
    Ok(())
}

#[test]
fn bad_shapes_draw_nan() -> Result<()> {
    let key = RandomKey::new(4);
    let shapes = MatrixCl::from_slice(4, 1, &[0.0, -2.0, f64::NAN, f64::INFINITY])?;
    assert!(
        gamma(key, &shapes)
            .eval()?
            .to_vec()?
            .iter()
            .all(|v| v.is_nan())
    );
    assert!(
        beta(key, &shapes, 1.0)
            .eval()?
            .to_vec()?
            .iter()
            .all(|v| v.is_nan())
    );
    // A scalar shape would repeat one draw everywhere: refused, naming it.
    let err = gamma(key, 2.0).eval().unwrap_err().to_string();
    assert!(err.contains("gamma") && err.contains("constant"), "{err}");
    Ok(())
}

#[test]
fn categorical_draws_follow_their_probabilities() -> Result<()> {
    let n = 30_000;
    let inf = f64::INFINITY;
    // Each row: log of 0.1, 0.2, 0.7, and an impossible component, shifted
    // by a row-dependent constant (unnormalised).
    let probabilities: [f64; 4] = [0.1, 0.2, 0.7, 0.0];
    let mut logits = vec![0.0; n * 4];
    for i in 0..n {
        for (c, p) in probabilities.iter().enumerate() {
            logits[i + n * c] = if *p > 0.0 {
                p.ln() + (i % 13) as f64 * 100.0
            } else {
                -inf
            };
        }
    }
    let logits = MatrixCl::from_slice(n, 4, &logits)?;
    let z: Vec<i32> = categorical_logit_rng(RandomKey::new(77), &logits)
        .eval()?
        .to_vec()?;
    let mut counts = [0usize; 4];
    for &c in &z {
        counts[usize::try_from(c).expect("drawn")] += 1;
    }
    assert_eq!(counts[3], 0, "a -inf component is never drawn");
    let statistic: f64 = (0..3)
        .map(|c| {
            let e = n as f64 * probabilities[c];
            (counts[c] as f64 - e).powi(2) / e
        })
        .sum();
    let limit = ChiSquared::new(2.0).unwrap().inverse_cdf(1.0 - 1e-4);
    assert!(
        statistic < limit,
        "chi-square {statistic} over {limit}: {counts:?}"
    );

    // One dominant component; rows with nothing drawable or a NaN get -1;
    // the logits fused from an expression (no n x k buffer of them).
    let rows = 33;
    let mut special = vec![-50.0; rows * 3];
    for i in 0..rows {
        special[i + rows * (i % 3)] = 0.0;
    }
    special[5] = -inf;
    special[5 + rows] = -inf;
    special[5 + 2 * rows] = -inf;
    special[6 + rows] = f64::NAN;
    let special = MatrixCl::from_slice(rows, 3, &special)?;
    let z = categorical_logit_rng(RandomKey::new(8), &special * 2.0)
        .eval()?
        .to_vec()?;
    for (i, &c) in z.iter().enumerate() {
        let want = match i {
            5 | 6 => -1,
            _ => (i % 3) as i32,
        };
        assert_eq!(c, want, "row {i}");
    }
    Ok(())
}

fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}

#[test]
fn streams_and_elements_are_independent() -> Result<()> {
    let n = 50_000;
    let key = RandomKey::new(123);
    let base = uniform(key, n, 1).eval()?.to_vec()?;
    let others = [
        (
            "next stream",
            uniform(key.next_stream(), n, 1).eval()?.to_vec()?,
        ),
        (
            "next seed",
            uniform(RandomKey::new(124), n, 1).eval()?.to_vec()?,
        ),
        (
            "next column",
            uniform(key, n, 2).eval()?.to_vec()?[n..].to_vec(),
        ),
    ];
    let limit = 5.0 / (n as f64).sqrt();
    for (what, other) in &others {
        let r = correlation(&base, other);
        assert!(r.abs() < limit, "{what}: correlation {r}");
    }
    let r = correlation(&base[..n - 1], &base[1..]);
    assert!(r.abs() < limit, "neighbouring elements: correlation {r}");
    Ok(())
}

#[test]
fn the_same_seed_draws_the_same_numbers_twice_and_on_two_devices() -> Result<()> {
    let draw = || -> Result<(Vec<i32>, Vec<f64>, Vec<f64>)> {
        let mut rng = Rng::new(99);
        let bits = random_bits(rng.next_key(), 31, 3).eval()?.to_vec()?;
        let normals = rng.normal(33, 2).eval()?.to_vec()?;
        let gammas = rng.gamma(constant(0.7, 65, 1)).eval()?.to_vec()?;
        Ok((bits, normals, gammas))
    };
    let first = draw()?;
    assert_eq!(draw()?, first, "twice on one device");
    let default = Device::default_device()?;
    let second = Device::open_new(RuntimeConfig {
        device: Some(default.info().index.to_string()),
        ..RuntimeConfig::from_env()?
    })?;
    let there = second.run(draw)?;
    assert_eq!(there.0, first.0, "the integer stream, bit for bit");
    close("normals on the second device", &there.1, &first.1);
    close("gammas on the second device", &there.2, &first.2);
    let different = Rng::new(100).normal(33, 2).eval()?.to_vec()?;
    assert_ne!(different, first.1);
    Ok(())
}
