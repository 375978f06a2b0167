//! A sampler's loop: 100 000 `value_and_grad` calls of a small model keep
//! the process's memory flat (measured from /proc, not timed).
use crate::common;
use clfuse::Result;
use clfuse::prelude::*;
use clfuse::rev::{self, Var};

/// Resident set size in bytes (Linux), or `None` elsewhere.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[test]
fn value_and_grad_in_a_loop_keeps_memory_flat() -> Result<()> {
    // Alone in its process: measures the process's memory.
    if common::process::run_alone("rev_memory::value_and_grad_in_a_loop_keeps_memory_flat") {
        return Ok(());
    }
    let n = 64;
    let xs: Vec<f64> = (0..n).map(|k| (k as f64 * 0.37).sin()).collect();
    let y = MatrixCl::from_slice(n, 1, &xs)?;
    let mu = Var::new(MatrixCl::from_slice(1, 1, &[0.1])?);
    let log_sigma = Var::new(MatrixCl::from_slice(1, 1, &[0.2])?);
    let model = || {
        let sigma = exp(optional_broadcast(&log_sigma, n, 1));
        let sigma = &sigma;
        let z = elt_divide(&y - optional_broadcast(&mu, n, 1), sigma);
        colwise_sum(-0.5f64 * square(z) - log(sigma)).eval()
    };
    let mut last = (0.0, 0.0);
    let mut call = |k: usize| -> Result<()> {
        let (value, grads) = rev::value_and_grad(&[&mu, &log_sigma], model)?;
        assert!(value.is_finite(), "call {k}");
        last = (value, grads[0].to_vec()?[0]);
        Ok(())
    };
    for k in 0..10_000 {
        call(k)?;
    }
    assert_eq!(rev::steps_recorded(), 0, "value_and_grad drops its steps");
    let warm = resident_bytes();
    for k in 10_000..100_000 {
        call(k)?;
    }
    let after = resident_bytes();
    if let (Some(warm), Some(after)) = (warm, after) {
        let growth = after.saturating_sub(warm);
        // 90 000 calls: anything per call would show as megabytes.
        assert!(
            growth < 16 << 20,
            "resident memory grew by {growth} bytes over 90 000 calls"
        );
        eprintln!("resident after warm-up {warm} B, after 100 000 calls {after} B");
    }
    let d_mu: f64 = xs.iter().map(|x| (x - 0.1) / 0.2f64.exp().powi(2)).sum();
    assert!((last.1 - d_mu).abs() < 1e-9 * d_mu.abs().max(1.0));
    rev::clear()
}
