//! Seed 004's analysis at flow-cytometry sizes: synthetic data with known
//! clusters, a start, the recovery check, and the serial CPU reference of
//! the sweep's data steps. Shared by `examples/dp_mixture.rs` and
//! `bench_report --suite seeds --figures g`.
#![allow(dead_code)]

use clfuse::clfuse_kernels::{RandomKey, statistics_len};
use clfuse::mixture::{Mixture, Statistics};
use clfuse::{Error, Result};
use nalgebra::DMatrix;

/// Points around known clusters (column-major `n x p`).
pub struct FlowData {
    pub n: usize,
    pub p: usize,
    pub x: Vec<f64>,
    pub labels: Vec<usize>,
    pub means: Vec<Vec<f64>>,
    pub weights: Vec<f64>,
}

/// `clusters` populations in `p` markers, like log-fluorescence: means in
/// [0, 10]^p at least 4 apart, correlated covariances with standard
/// deviations about 0.3 to 0.7, uneven weights (∝ 1/(j+1): rare
/// populations too), drawn from `seed`'s Philox streams.
pub fn flow_cytometry(n: usize, p: usize, clusters: usize, seed: u64) -> FlowData {
    let key = RandomKey::new(seed);
    let mut means: Vec<Vec<f64>> = Vec::new();
    let mut attempt = 0u32;
    while means.len() < clusters {
        let candidate: Vec<f64> = (0..p)
            .map(|a| 10.0 * key.uniform(attempt, a as u32, 0))
            .collect();
        attempt += 1;
        let far = means.iter().all(|m| {
            m.iter()
                .zip(&candidate)
                .map(|(a, b)| (a - b).powi(2))
                .sum::<f64>()
                > 16.0
        });
        if far || attempt > 10_000 {
            means.push(candidate);
        }
    }
    let factors: Vec<DMatrix<f64>> = (0..clusters)
        .map(|j| {
            let key = key.with_stream(1);
            let a = DMatrix::from_fn(p, p, |r, c| key.normal(j as u32, (r + p * c) as u32, 0));
            let covariance = &a * a.transpose() * (0.04 / p as f64) + DMatrix::identity(p, p) * 0.1;
            covariance
                .cholesky()
                .map_or_else(|| DMatrix::identity(p, p), |c| c.unpack())
        })
        .collect();
    let raw: Vec<f64> = (0..clusters).map(|j| 1.0 / (j as f64 + 1.0)).collect();
    let total: f64 = raw.iter().sum();
    let weights: Vec<f64> = raw.iter().map(|w| w / total).collect();
    let points = key.with_stream(2);
    let mut x = vec![0.0; n * p];
    let mut labels = vec![0; n];
    let mut z = vec![0.0; p];
    for i in 0..n {
        let u = points.uniform(i as u32, 0, 0);
        let mut cumulative = 0.0;
        let mut label = clusters - 1;
        for (j, w) in weights.iter().enumerate() {
            cumulative += w;
            if u < cumulative {
                label = j;
                break;
            }
        }
        labels[i] = label;
        for (a, v) in z.iter_mut().enumerate() {
            *v = points.normal(i as u32, 1 + a as u32, 0);
        }
        let l = &factors[label];
        for a in 0..p {
            let offset: f64 = (0..=a).map(|b| l[(a, b)] * z[b]).sum();
            x[i + n * a] = means[label][a] + offset;
        }
    }
    FlowData {
        n,
        p,
        x,
        labels,
        means,
        weights,
    }
}

impl FlowData {
    pub fn row(&self, i: usize) -> Vec<f64> {
        (0..self.p).map(|a| self.x[i + self.n * a]).collect()
    }

    /// `k` components with equal weights at evenly spaced points of the
    /// data, covariance I: a start that knows nothing of the clusters.
    pub fn start(&self, k: usize) -> Result<Mixture> {
        let step = (self.n / k.max(1)).max(1);
        let points: Vec<Vec<f64>> = (0..k)
            .map(|c| self.row((c * step + step / 2) % self.n.max(1)))
            .collect();
        Mixture::from_points(&points, 1.0)
    }

    /// Every cluster of weight at least 1% is found: the components whose
    /// means lie nearest to it carry its weight (within 0.01 plus 10%) and,
    /// pooled, its mean (within 0.25 in every marker). `fitted` holds each
    /// component's weight and mean.
    pub fn check_recovery(&self, what: &str, fitted: &[(f64, Vec<f64>)]) -> Result<()> {
        let distance =
            |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>();
        for (t, truth) in self.means.iter().enumerate() {
            let (mut weight, mut pooled) = (0.0, vec![0.0; self.p]);
            for (w, mean) in fitted {
                let nearest = (0..self.means.len())
                    .min_by(|a, b| {
                        distance(mean, &self.means[*a]).total_cmp(&distance(mean, &self.means[*b]))
                    })
                    .unwrap_or(0);
                if nearest == t && *w > 0.0 {
                    weight += w;
                    for (p, m) in pooled.iter_mut().zip(mean) {
                        *p += w * m;
                    }
                }
            }
            let want = self.weights[t];
            if want < 0.01 {
                continue;
            }
            let fail = |reason: String| Error::InvalidArgument {
                function: "dp_mixture",
                argument: "recovery",
                reason: format!("{what}: cluster {t}: {reason}"),
            };
            if (weight - want).abs() > 0.01 + 0.1 * want {
                return Err(fail(format!("weight {weight:.4}, true {want:.4}")));
            }
            for (a, (p, m)) in pooled.iter().zip(truth).enumerate() {
                if (p / weight - m).abs() > 0.25 {
                    return Err(fail(format!(
                        "marker {a}: mean {:.3}, true {m:.3}",
                        p / weight
                    )));
                }
            }
        }
        Ok(())
    }
}

/// The serial CPU reference of a sweep's data steps, as a careful C
/// programmer would write them for one core: for each row, every
/// component's log density (each component's packed factor computed once),
/// the row's normaliser, one uniform and an inverse-CDF draw, and the
/// drawn component's statistics. Returns them and the complete-data log
/// likelihood.
pub fn serial_sweep(
    data: &FlowData,
    mixture: &Mixture,
    key: RandomKey,
) -> Result<(Statistics, f64)> {
    let (n, p, k) = (data.n, data.p, mixture.k());
    let packed = mixture.packed();
    let stride = clfuse::clfuse_kernels::component_stride(p);
    let triangle = p * (p + 1) / 2;
    let len = statistics_len(p);
    let mut stats = vec![0.0; len * k];
    let mut densities = vec![0.0; k];
    let mut x = vec![0.0; p];
    let mut complete = 0.0;
    for i in 0..n {
        for (a, v) in x.iter_mut().enumerate() {
            *v = data.x[i + n * a];
        }
        let mut max = f64::NEG_INFINITY;
        for (c, d) in densities.iter_mut().enumerate() {
            let component = &packed[c * stride..(c + 1) * stride];
            let mut quadratic = 0.0;
            let mut e = 0;
            for a in 0..p {
                let mut y = -component[triangle + a];
                for xb in &x[a..] {
                    y += component[e] * xb;
                    e += 1;
                }
                quadratic += y * y;
            }
            *d = component[triangle + p] - 0.5 * quadratic;
            max = max.max(*d);
        }
        let total: f64 = densities.iter().map(|d| (d - max).exp()).sum();
        let target = key.uniform(i as u32, 0, 0) * total;
        let mut cumulative = 0.0;
        let mut chosen = k - 1;
        for (c, d) in densities.iter().enumerate() {
            cumulative += (d - max).exp();
            if target < cumulative {
                chosen = c;
                break;
            }
        }
        complete += densities[chosen];
        let column = &mut stats[chosen * len..(chosen + 1) * len];
        column[0] += 1.0;
        let mut e = 1;
        for v in &x {
            column[e] += v;
            e += 1;
        }
        for a in 0..p {
            for b in a..p {
                column[e] += x[a] * x[b];
                e += 1;
            }
        }
    }
    Ok((Statistics::from_device_layout(p, stats)?, complete))
}
