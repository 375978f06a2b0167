//! Convergence diagnostics of several chains of draws: split-R̂ and the
//! effective sample sizes of Vehtari, Gelman, Simpson, Carpenter and
//! Bürkner (2021), "Rank-normalization, folding, and localization: an
//! improved R̂ for assessing convergence of MCMC", Bayesian Analysis 16(2),
//! as the R package `posterior` (`rhat`, `ess_bulk`, `ess_tail`,
//! `ess_mean`, `mcse_mean`) and ArviZ compute them.
//!
//! Every function takes the chains as equally long slices of draws of one
//! quantity, and returns NaN where the quantity cannot be judged (chains of
//! different lengths, fewer than 3 draws per split chain, a non-finite or a
//! constant draw set), as `posterior` returns `NA`.

use statrs::function::erf::erfc_inv;

/// The chains as owned rows, or `None` when no diagnostic applies.
fn checked<C: AsRef<[f64]>>(chains: &[C]) -> Option<Vec<Vec<f64>>> {
    let first = chains.first()?.as_ref();
    let n = first.len();
    if n == 0 || chains.iter().any(|c| c.as_ref().len() != n) {
        return None;
    }
    let all = chains.iter().flat_map(|c| c.as_ref().iter());
    let mut constant = true;
    for &v in all {
        if !v.is_finite() {
            return None;
        }
        constant &= v == first[0];
    }
    if constant {
        return None;
    }
    Some(chains.iter().map(|c| c.as_ref().to_vec()).collect())
}

/// Each chain cut in two halves (the middle draw of an odd chain dropped),
/// so that a trend within a chain shows as disagreement between chains.
fn split_chains(chains: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let half = chains[0].len() / 2;
    if half == 0 {
        return chains.to_vec();
    }
    chains
        .iter()
        .flat_map(|c| [c[..half].to_vec(), c[c.len() - half..].to_vec()])
        .collect()
}

/// Ranks over all chains (ties share their average rank), mapped through
/// the normal quantile with the (r − 3/8)/(S + 1/4) offset.
fn z_scale(chains: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let values: Vec<f64> = chains.concat();
    let s = values.len();
    let mut order: Vec<usize> = (0..s).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; s];
    let mut i = 0;
    while i < s {
        let mut j = i;
        while j + 1 < s && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        // Ranks are 1-based: positions i..=j share (i + j)/2 + 1.
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = rank;
        }
        i = j + 1;
    }
    let z: Vec<f64> = ranks
        .iter()
        .map(|r| normal_quantile((r - 0.375) / (s as f64 + 0.25)))
        .collect();
    z.chunks(chains[0].len()).map(<[f64]>::to_vec).collect()
}

/// The standard normal quantile function.
fn normal_quantile(p: f64) -> f64 {
    -std::f64::consts::SQRT_2 * erfc_inv(2.0 * p)
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Sample variance (divisor n − 1).
fn variance(x: &[f64]) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() as f64 - 1.0)
}

/// The potential scale reduction of chains as given (`posterior`'s `.rhat`).
fn rhat_of(chains: &[Vec<f64>]) -> f64 {
    let n = chains[0].len() as f64;
    let means: Vec<f64> = chains.iter().map(|c| mean(c)).collect();
    let between = n * variance(&means);
    let within = mean(&chains.iter().map(|c| variance(c)).collect::<Vec<_>>());
    ((between / within + n - 1.0) / n).sqrt()
}

/// The effective sample size of chains as given (`posterior`'s `.ess`):
/// autocorrelations combined over chains, summed by Geyer's initial
/// monotone sequence.
fn ess_of(chains: &[Vec<f64>]) -> f64 {
    let m = chains.len();
    let n = chains[0].len();
    if n < 3 || checked(chains).is_none() {
        return f64::NAN;
    }
    let means: Vec<f64> = chains.iter().map(|c| mean(c)).collect();
    let centred: Vec<Vec<f64>> = chains
        .iter()
        .zip(&means)
        .map(|(c, m)| c.iter().map(|v| v - m).collect())
        .collect();
    // The mean over chains of the biased (divisor n) autocovariance at
    // `lag`: what posterior's and ArviZ's FFT gives. Computed lag by lag,
    // because Geyer's sequence usually stops after a few lags.
    let acov = |lag: usize| {
        centred
            .iter()
            .map(|c| {
                c[..n - lag]
                    .iter()
                    .zip(&c[lag..])
                    .map(|(a, b)| a * b)
                    .sum::<f64>()
            })
            .sum::<f64>()
            / (n * m) as f64
    };
    let nf = n as f64;
    let mean_var = acov(0) * nf / (nf - 1.0);
    let mut var_plus = mean_var * (nf - 1.0) / nf;
    if m > 1 {
        var_plus += variance(&means);
    }
    let rho = |lag: usize| 1.0 - (mean_var - acov(lag)) / var_plus;

    let mut rho_t = vec![0.0; n];
    let mut even = 1.0;
    let mut odd = rho(1);
    rho_t[0] = even;
    rho_t[1] = odd;
    // Geyer's initial positive sequence: pairs of lags while their sum is
    // positive.
    let mut t = 0;
    while t + 5 < n && !(even + odd).is_nan() && even + odd > 0.0 {
        t += 2;
        even = rho(t);
        odd = rho(t + 1);
        if even + odd >= 0.0 {
            rho_t[t] = even;
            rho_t[t + 1] = odd;
        }
    }
    let max_t = t;
    // The last positive even lag too (reduces variance for antithetic chains).
    if even > 0.0 {
        rho_t[max_t] = even;
    }
    // Geyer's initial monotone sequence: pair sums never increase.
    let mut t = 0;
    while t + 4 <= max_t {
        t += 2;
        let previous = rho_t[t - 2] + rho_t[t - 1];
        if rho_t[t] + rho_t[t + 1] > previous {
            rho_t[t] = previous / 2.0;
            rho_t[t + 1] = rho_t[t];
        }
    }
    let total = (m * n) as f64;
    let tau = -1.0 + 2.0 * rho_t[..max_t].iter().sum::<f64>() + rho_t[max_t];
    total / tau.max(1.0 / total.log10())
}

/// Rank-normalised split-R̂: the larger of the bulk R̂ (rank-normalised
/// split chains) and the tail R̂ (the same of the draws folded about their
/// median). Values above 1.01 suggest the chains have not mixed.
///
/// ```
/// use clfuse::nuts::diagnostics::rhat;
/// let mixed = [[1.0, 3.0, 2.0, 4.0, 0.0, 5.0], [2.5, 0.5, 4.5, 1.5, 3.5, 5.5]];
/// assert!(rhat(&mixed) < 1.1);
/// let apart = [[1.0, 3.0, 2.0, 4.0, 0.0, 5.0], [11.0, 13.0, 12.0, 14.0, 10.0, 15.0]];
/// assert!(rhat(&apart) > 1.5);
/// ```
pub fn rhat<C: AsRef<[f64]>>(chains: &[C]) -> f64 {
    let Some(x) = checked(chains) else {
        return f64::NAN;
    };
    let bulk = rhat_of(&z_scale(&split_chains(&x)));
    let median = quantile(&x.concat(), 0.5);
    let folded: Vec<Vec<f64>> = x
        .iter()
        .map(|c| c.iter().map(|v| (v - median).abs()).collect())
        .collect();
    let tail = rhat_of(&z_scale(&split_chains(&folded)));
    bulk.max(tail)
}

/// Bulk effective sample size: the ESS of the rank-normalised split
/// chains, for the reliability of means and medians.
///
/// ```
/// use clfuse::nuts::diagnostics::ess_bulk;
/// // Alternating draws are antithetic: more effective draws than draws.
/// let chain: Vec<f64> = (0..100).map(|i| if i % 2 == 0 { i as f64 } else { -(i as f64) }).collect();
/// assert!(ess_bulk(&[chain]) > 100.0);
/// ```
pub fn ess_bulk<C: AsRef<[f64]>>(chains: &[C]) -> f64 {
    match checked(chains) {
        Some(x) => ess_of(&z_scale(&split_chains(&x))),
        None => f64::NAN,
    }
}

/// Tail effective sample size: the smaller ESS of the indicators of the
/// 5% and 95% quantiles (split chains), for the reliability of the tails.
///
/// ```
/// use clfuse::nuts::diagnostics::ess_tail;
/// let chain: Vec<f64> = (0..200).map(|i| ((i * 73) % 200) as f64).collect();
/// assert!(ess_tail(&[chain]) > 10.0);
/// ```
pub fn ess_tail<C: AsRef<[f64]>>(chains: &[C]) -> f64 {
    let Some(x) = checked(chains) else {
        return f64::NAN;
    };
    let all = x.concat();
    let indicator_ess = |p: f64| {
        let q = quantile(&all, p);
        let below: Vec<Vec<f64>> = x
            .iter()
            .map(|c| c.iter().map(|&v| f64::from(u8::from(v <= q))).collect())
            .collect();
        ess_of(&split_chains(&below))
    };
    indicator_ess(0.05).min(indicator_ess(0.95))
}

/// Effective sample size for the mean: the ESS of the split chains,
/// without rank normalisation (`posterior`'s `ess_mean`).
///
/// ```
/// use clfuse::nuts::diagnostics::ess_mean;
/// // Independent-looking draws: about as many effective draws as draws.
/// let chain: Vec<f64> = (0..400).map(|i| ((i * 7919) % 401) as f64).collect();
/// let ess = ess_mean(&[chain]);
/// assert!(ess > 200.0 && ess < 800.0);
/// ```
pub fn ess_mean<C: AsRef<[f64]>>(chains: &[C]) -> f64 {
    match checked(chains) {
        Some(x) => ess_of(&split_chains(&x)),
        None => f64::NAN,
    }
}

/// Monte Carlo standard error of the mean: the draws' standard deviation
/// over the square root of [`ess_mean`].
///
/// ```
/// use clfuse::nuts::diagnostics::{ess_mean, mcse_mean};
/// let chain: Vec<f64> = (0..400).map(|i| ((i * 7919) % 401) as f64).collect();
/// let sd = {
///     let m = chain.iter().sum::<f64>() / 400.0;
///     (chain.iter().map(|v| (v - m).powi(2)).sum::<f64>() / 399.0).sqrt()
/// };
/// assert!((mcse_mean(&[&chain]) - sd / ess_mean(&[&chain]).sqrt()).abs() < 1e-12);
/// ```
pub fn mcse_mean<C: AsRef<[f64]>>(chains: &[C]) -> f64 {
    match checked(chains) {
        Some(x) => variance(&x.concat()).sqrt() / ess_of(&split_chains(&x)).sqrt(),
        None => f64::NAN,
    }
}

/// The `p` quantile of `values`, linear between order statistics (R's
/// default type 7, NumPy's `linear`); NaN for no values or `p` outside
/// [0, 1].
///
/// ```
/// use clfuse::nuts::diagnostics::quantile;
/// assert_eq!(quantile(&[4.0, 1.0, 3.0, 2.0], 0.5), 2.5);
/// assert_eq!(quantile(&[4.0, 1.0, 3.0, 2.0], 0.0), 1.0);
/// ```
pub fn quantile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let h = (sorted.len() - 1) as f64 * p;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}
