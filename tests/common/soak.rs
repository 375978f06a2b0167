//! The proptest settings every property test shares: CI runs the same cases
//! every time (a fixed seed per test); soak runs (`FUSION_PROPTEST_CASES`
//! set) draw new ones, or replay the seed a failure printed with
//! `FUSION_PROPTEST_SEED`.
//!
//! `FUSION_SOAK=1` runs the cases too slow for CI (over a minute on a
//! 2-core machine with PoCL and cold kernel caches) at their full size;
//! without it they run smaller and say so.
#![allow(dead_code)]

use proptest::test_runner::RngSeed;

/// The number of cases: `FUSION_PROPTEST_CASES`, or `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("FUSION_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `fixed` in CI; random (and printed, so that it can be replayed) in soak runs.
pub fn seed(fixed: u64) -> RngSeed {
    match std::env::var("FUSION_PROPTEST_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        Some(s) => RngSeed::Fixed(s),
        None if std::env::var_os("FUSION_PROPTEST_CASES").is_some() => {
            let s = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64);
            eprintln!("proptest seed: FUSION_PROPTEST_SEED={s}");
            RngSeed::Fixed(s)
        }
        None => RngSeed::Fixed(fixed),
    }
}

/// Whether `FUSION_SOAK` is set (to anything but `0`).
pub fn soak() -> bool {
    std::env::var("FUSION_SOAK").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// `full` in soak runs (`FUSION_SOAK=1`); else `ci`, with a note naming
/// what runs smaller.
pub fn full_or<T: std::fmt::Display>(what: &str, ci: T, full: T) -> T {
    if soak() {
        full
    } else {
        eprintln!("{what}: {ci} (FUSION_SOAK=1 runs {full})");
        ci
    }
}

/// `sizes`, then `soaked` in soak runs (`FUSION_SOAK=1`); else `sizes` alone,
/// with a note naming what was left out.
pub fn sizes_and_soaked(what: &str, sizes: &[usize], soaked: &[usize]) -> Vec<usize> {
    if soak() {
        [sizes, soaked].concat()
    } else {
        eprintln!("{what}: not {soaked:?} (FUSION_SOAK=1 runs them)");
        sizes.to_vec()
    }
}
