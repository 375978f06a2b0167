//! R̂, ESS and MCSE against ArviZ on fixed draws.
//!
//! The draws are made by an integer-exact recipe (SplitMix64 uniforms,
//! Irwin–Hall normals, an AR(1) recursion) that
//! `scripts/nuts_diagnostics_reference.py` repeats in Python, so both sides
//! see bit-identical numbers; that script printed REFERENCE with ArviZ.

use clfuse::nuts::diagnostics::{ess_bulk, ess_mean, ess_tail, mcse_mean, quantile, rhat};

struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * 2f64.powi(-53)
    }

    /// Irwin–Hall: exact in f64 arithmetic on both sides, unlike Box–Muller.
    fn normal(&mut self) -> f64 {
        let mut s = 0.0;
        for _ in 0..12 {
            s += self.uniform();
        }
        s - 6.0
    }
}

/// `chains` AR(1) chains of `draws`, chain `c` shifted by `offset * c`,
/// optionally cubed (heavy tails).
fn ar1(seed: u64, chains: usize, draws: usize, phi: f64, offset: f64, cube: bool) -> Vec<Vec<f64>> {
    let mut rng = SplitMix64(seed);
    (0..chains)
        .map(|c| {
            let mut x = rng.normal();
            (0..draws)
                .map(|_| {
                    x = phi * x + rng.normal();
                    let v = x + offset * c as f64;
                    if cube { v * v * v } else { v }
                })
                .collect()
        })
        .collect()
}

/// (seed, chains, draws, phi, offset per chain, cube): as CASES in the script.
const CASES: [(u64, usize, usize, f64, f64, bool); 6] = [
    (1, 4, 200, 0.5, 0.0, false),
    (2, 4, 101, 0.9, 0.3, false),
    (3, 2, 150, -0.6, 0.0, false),
    (4, 4, 250, 0.3, 0.0, true),
    (5, 1, 1000, 0.3, 0.0, false),
    (6, 3, 80, 0.97, 1.0, false),
];

// ArviZ 0.23.4, NumPy 2.4.6 (scripts/nuts_diagnostics_reference.py)
// (rhat rank, ess bulk, ess tail, ess mean, mcse mean, q5, q50, q95)
#[rustfmt::skip]
const REFERENCE: [[f64; 8]; 6] = [
    [1.0025467758353575, 301.7019779912444, 517.4012814995426, 304.41274627094685, 0.06250263136378294, -2.0499369794216027, -0.2908551118442938, 1.5949557388292273],
    [1.1026858246299431, 33.260515565125104, 50.25558311150457, 31.825200151245202, 0.3945001742107718, -3.0555833305653275, 0.7098457827680291, 4.018320797962015],
    [0.9950101358434059, 743.1363764158988, 289.67473388397195, 743.1363764158988, 0.04868290279467269, -2.264282670371808, -0.1057645025545926, 2.0699417166120724],
    [1.0053605636447145, 547.0983907684072, 952.019760759605, 759.1624807367123, 0.15135227894530698, -4.665786556509248, -2.7907893657736962e-05, 4.7808140556227805],
    [f64::NAN, 434.9028706707702, 632.145431465917, 442.2086324389223, 0.04862076163705934, -1.6456249743682148, 0.04369780908531942, 1.6870656089863516],
    [1.6181864659754386, 5.7760298133944294, 41.942820312140306, 5.521967117009427, 1.976256930283408, -7.619541610372032, 0.2830836717156237, 8.660744103187927],
];

fn close(what: &str, case: usize, got: f64, want: f64) {
    // Summation order differs (FFT there, direct sums here): agreement to
    // about 1e-10 relative, far below any difference in definition.
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "case {case}: {what} = {got}, ArviZ {want}"
    );
}

#[test]
fn diagnostics_match_arviz() {
    for (case, (&(seed, chains, draws, phi, offset, cube), want)) in
        CASES.iter().zip(&REFERENCE).enumerate()
    {
        let x = ar1(seed, chains, draws, phi, offset, cube);
        let all = x.concat();
        // ArviZ needs two chains for R̂; with one, `posterior` (and this
        // crate) split it in two: checked separately below.
        if chains > 1 {
            close("rhat", case, rhat(&x), want[0]);
        }
        close("ess_bulk", case, ess_bulk(&x), want[1]);
        close("ess_tail", case, ess_tail(&x), want[2]);
        close("ess_mean", case, ess_mean(&x), want[3]);
        close("mcse_mean", case, mcse_mean(&x), want[4]);
        close("q5", case, quantile(&all, 0.05), want[5]);
        close("q50", case, quantile(&all, 0.5), want[6]);
        close("q95", case, quantile(&all, 0.95), want[7]);
    }
}

/// One chain: `posterior` (and this crate) split it in two; ArviZ's
/// public `rhat` refuses one chain, so the script computes the same from
/// ArviZ's own pieces (`_rhat(_z_scale(_split_chains(x)))`, bulk and
/// folded tail).
#[test]
fn one_chain_rhat_matches_arviz_pieces() {
    let x = ar1(5, 1, 1000, 0.3, 0.0, false);
    close("rhat (one chain)", 4, rhat(&x), 0.9994892973496382);
}

#[test]
fn degenerate_inputs_are_nan() {
    let empty: [Vec<f64>; 0] = [];
    assert!(rhat(&empty).is_nan());
    assert!(ess_bulk(&[[1.0; 10], [1.0; 10]]).is_nan(), "constant");
    assert!(ess_tail(&[vec![1.0, 2.0, f64::NAN, 4.0]]).is_nan(), "NaN");
    assert!(
        rhat(&[vec![1.0, 2.0, 3.0], vec![1.0, 2.0]]).is_nan(),
        "lengths"
    );
    assert!(mcse_mean(&[[1.0, 2.0]]).is_nan(), "too short");
    assert!(quantile(&[], 0.5).is_nan());
    assert!(quantile(&[1.0], 1.5).is_nan());
}

/// Ties share their average rank: a draw set with many ties gives the same
/// bulk ESS as the draws mapped through a strictly increasing function.
#[test]
fn rank_normalisation_is_invariant_to_monotone_maps() {
    let x: Vec<Vec<f64>> = ar1(7, 3, 120, 0.6, 0.0, false)
        .into_iter()
        .map(|c| c.into_iter().map(|v| (v * 2.0).round()).collect())
        .collect();
    let y: Vec<Vec<f64>> = x
        .iter()
        .map(|c| c.iter().map(|v| v.exp()).collect())
        .collect();
    assert!((ess_bulk(&x) - ess_bulk(&y)).abs() < 1e-9);
    assert!((rhat(&x) - rhat(&y)).abs() < 1e-12);
}
