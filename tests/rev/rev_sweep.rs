//! Small forward and reverse kernels swept into one launch
//! (`clfuse_core::LaunchSweeps`): a model of steps of a few elements each (a
//! parameter block, a transform, a density, a `1 x 1` sum, as real models
//! have) gives the same value and gradient with its kernels swept together
//! as launched one by one, in fewer launches, and the gradient matches
//! central finite differences.

use clfuse::clfuse_core::{LaunchSweeps, set_launch_sweeps};
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use clfuse::{Result, dist};

/// A log density of `theta` (2 values) in four small steps, so that the
/// swept kernel stays quick to compile on PoCL (its compile time grows
/// steeply with the barriers of many steps): a scale through `exp`, a
/// normal density with that scale, a scalar product and their sum.
fn model(theta: &Var, y: &MatrixCl<f64>) -> Result<Var> {
    let mu = block(theta, 0, 0, 1, 1).eval()?;
    let sigma = exp(block(theta, 1, 0, 1, 1)).eval()?;
    let likelihood = dist::normal_lpdf(y, &mu, &sigma).eval()?;
    (&likelihood + elt_multiply(&mu, &sigma)).eval()
}

/// Value and gradient at `at` with the given sweep setting.
fn evaluate(at: &[f64], y: &MatrixCl<f64>, sweeps: LaunchSweeps) -> Result<(f64, Vec<f64>)> {
    let before = set_launch_sweeps(sweeps);
    let outcome = (|| {
        let theta = Var::new(MatrixCl::from_slice(at.len(), 1, at)?);
        let mut gradient = vec![0.0; at.len()];
        let value = rev::value_and_grad_to_host(&theta, || model(&theta, y), &mut gradient)?;
        Ok((value, gradient))
    })();
    set_launch_sweeps(before);
    outcome
}

#[test]
fn swept_reverse_kernels_match_one_by_one_and_finite_differences() -> Result<()> {
    // Alone in its process: another test thread's wait for the device
    // would launch (and count) this thread's sweeps.
    if crate::common::process::run_alone(
        "rev_sweep::swept_reverse_kernels_match_one_by_one_and_finite_differences",
    ) {
        return Ok(());
    }
    let y = MatrixCl::from_slice(3, 1, &[0.4, -1.2, 2.0])?;
    let at = [0.3, -0.4];
    let (value, swept) = evaluate(&at, &y, LaunchSweeps::Always)?;
    let (value_alone, alone) = evaluate(&at, &y, LaunchSweeps::Never)?;
    assert!((value - value_alone).abs() <= 1e-12 * value.abs().max(1.0));
    for (k, (s, a)) in swept.iter().zip(&alone).enumerate() {
        assert!(
            (s - a).abs() <= 1e-12 * a.abs().max(1.0),
            "d/dtheta[{k}]: swept {s}, one by one {a}"
        );
    }
    let h = 1e-6;
    for k in 0..at.len() {
        let mut up = at;
        let mut down = at;
        up[k] += h;
        down[k] -= h;
        let fd = (evaluate(&up, &y, LaunchSweeps::Never)?.0
            - evaluate(&down, &y, LaunchSweeps::Never)?.0)
            / (2.0 * h);
        assert!(
            (swept[k] - fd).abs() <= 1e-6 * fd.abs().max(1.0),
            "d/dtheta[{k}]: {} vs finite differences {fd}",
            swept[k]
        );
    }
    // Several evaluations reuse the swept kernel and stay equal.
    assert_eq!(evaluate(&at, &y, LaunchSweeps::Always)?.1, swept);
    // ... in fewer launches.
    let launches = |sweeps| -> Result<u64> {
        let before = thread_kernel_stats().queued;
        evaluate(&at, &y, sweeps)?;
        Ok(thread_kernel_stats().queued - before)
    };
    let (swept, alone) = (
        launches(LaunchSweeps::Always)?,
        launches(LaunchSweeps::Never)?,
    );
    assert!(
        swept < alone,
        "swept: {swept} kernels queued, one by one {alone}"
    );
    Ok(())
}

#[test]
fn a_constant_written_by_a_waiting_launch_counts_its_write_once() -> Result<()> {
    let before = set_launch_sweeps(LaunchSweeps::Always);
    let outcome = (|| -> Result<Vec<f64>> {
        rev::clear()?;
        // Written by a launch that waits in the sweep; the step below reads
        // it, and the reverse pass checks that it was not written since.
        let scale: MatrixCl<f64> = (MatrixCl::from_slice(1, 1, &[2.0])? * 1.5).eval()?;
        let theta = Var::new(MatrixCl::from_slice(2, 1, &[0.3, -0.4])?);
        let lp = colwise_sum(elt_multiply(&theta, optional_broadcast(&scale, 2, 1))).eval()?;
        lp.grad()?;
        let gradient = theta.adjoint().to_vec()?;
        rev::clear()?;
        Ok(gradient)
    })();
    set_launch_sweeps(before);
    assert_eq!(outcome?, vec![3.0, 3.0]);
    Ok(())
}
