//! Replayed gradient calls (`rev::Replay`, `clfuse_core::record`): every
//! replayed value and gradient against the same call run as usual, for
//! models with constrained parameters, densities, a matrix-vector product,
//! a Cholesky factor and data uploaded inside the model; and the cases that
//! must not replay: a read inside the model, work that changes from call to
//! call, another parameter buffer, a failed check.

use clfuse::Result;
use clfuse::clfuse_core::{LaunchSweeps, set_launch_sweeps};
use clfuse::dist::{lognormal_lpdf, multi_normal_lpdf, normal_lpdf, student_t_lpdf};
use clfuse::params::{Constraint, Parameters};
use clfuse::prelude::*;
use clfuse::rev::{self, Replay, Var};

fn close(what: &str, got: f64, want: f64) {
    assert!(
        (got.is_nan() && want.is_nan()) || (got - want).abs() <= 1e-10 * want.abs().max(1.0),
        "{what}: {got} vs {want}"
    );
}

/// Positions that move every coordinate, call after call.
fn position(dim: usize, call: usize) -> Vec<f64> {
    (0..dim)
        .map(|k| 0.3 * ((call * 7 + k * 3) as f64 * 0.61).sin())
        .collect()
}

/// Runs `calls` evaluations through one `Replay` and, at each position,
/// the same call as usual; returns whether the last call was replayed (and
/// why not).
fn compare(
    dim: usize,
    calls: usize,
    model: impl FnMut(&Var) -> Result<Var>,
) -> Result<(bool, Option<&'static str>)> {
    compare_written(dim, calls, false, model)
}

/// [`compare`], the position written as a sampler writes it when `queued`
/// (`MatrixCl::write_queued`: kernels that join the thread's sweep).
fn compare_written(
    dim: usize,
    calls: usize,
    queued: bool,
    mut model: impl FnMut(&Var) -> Result<Var>,
) -> Result<(bool, Option<&'static str>)> {
    let theta = Var::new(MatrixCl::zeros(dim, 1)?);
    let mut replay = Replay::new();
    let (mut g, mut want_g) = (vec![0.0; dim], vec![0.0; dim]);
    let mut replayed = false;
    for call in 0..calls {
        let x = position(dim, call);
        replayed = replay.is_replaying();
        if queued {
            theta.value().write_queued(&x)?;
        } else {
            theta.value().write(&x)?;
        }
        let got = replay.value_and_grad_to_host(&theta, || model(&theta), &mut g)?;
        let want = rev::value_and_grad_to_host(&theta, || model(&theta), &mut want_g)?;
        close(&format!("call {call}: value"), got, want);
        for k in 0..dim {
            close(&format!("call {call}: gradient[{k}]"), g[k], want_g[k]);
        }
    }
    Ok((replayed, replay.stopped()))
}

fn replay_on() -> Result<bool> {
    Ok(clfuse::Runtime::get()?.tuning().replay != Some(false))
}

/// A regression of `n` rows on `p` predictors with constrained
/// parameters, replayed against calls run as usual.
fn regression_replays(n: usize, p: usize) -> Result<()> {
    let xs: Vec<f64> = (0..n * p)
        .map(|i| ((i * 13 % 17) as f64 - 8.0) / 5.0)
        .collect();
    let ys: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).cos()).collect();
    let x = MatrixCl::from_slice(n, p, &xs)?;
    let y = MatrixCl::from_slice(n, 1, &ys)?;
    let mut params = Parameters::new();
    let b = params.vector("b", p, Constraint::Unconstrained)?;
    let intercept = params.real("Intercept", Constraint::Unconstrained)?;
    let sigma = params.real("sigma", Constraint::lower(0.0))?;
    let model = params.model(|v| {
        let prior = (normal_lpdf(&v[b], 0.0, 1.0).eval()?
            + student_t_lpdf(&v[intercept], 3.0, 8.0, 10.0).eval()?
            + student_t_lpdf(&v[sigma], 3.0, 0.0, 10.0).eval()?)
        .eval()?;
        let location = matrix_vector_multiply(&x, &v[b]) + optional_broadcast(&v[intercept], n, 1);
        let likelihood = normal_lpdf(&y, location, &v[sigma]).eval()?;
        (&prior + &likelihood).eval()
    });
    let (replayed, why) = compare(p + 2, 6, |theta| model.log_density(theta))?;
    assert_eq!(replayed, replay_on()?, "n = {n}, p = {p}: {why:?}");
    Ok(())
}

#[test]
fn a_regression_with_constrained_parameters_replays_exactly() -> Result<()> {
    for (n, p) in [(1, 1), (33, 5), (257, 3)] {
        regression_replays(n, p)?;
    }
    Ok(())
}

/// As on a GPU: small launches join sweeps, which a replay launches whole
/// on kernel objects of its own (the position's write, queued before the
/// call, apart). A small model: PoCL compiles each sweep slowly.
#[test]
fn with_sweeps_a_normal_model_replays_exactly() -> Result<()> {
    let ys: Vec<f64> = (0..33).map(|i| (i as f64 * 0.37).cos()).collect();
    let y = MatrixCl::from_slice(33, 1, &ys)?;
    let mut params = Parameters::new();
    let mu = params.real("mu", Constraint::Unconstrained)?;
    let sigma = params.real("sigma", Constraint::lower(0.0))?;
    let model = params.model(|v| normal_lpdf(&y, &v[mu], &v[sigma]).eval());
    let before = set_launch_sweeps(LaunchSweeps::Always);
    let outcome = compare_written(2, 5, true, |theta| model.log_density(theta));
    set_launch_sweeps(before);
    let (replayed, why) = outcome?;
    assert_eq!(replayed, replay_on()?, "{why:?}");
    Ok(())
}

#[test]
fn a_gaussian_process_with_its_cholesky_replays_exactly() -> Result<()> {
    for n in [1, 31] {
        let xs: Vec<f64> = (0..n).map(|i| i as f64 / 4.0).collect();
        let ys: Vec<f64> = (0..n).map(|i| (i as f64 / 3.0).sin()).collect();
        let x = MatrixCl::from_slice(n, 1, &xs)?;
        let y = MatrixCl::from_slice(n, 1, &ys)?;
        let mut p = Parameters::new();
        let rho = p.real("rho", Constraint::lower(0.0))?;
        let alpha = p.real("alpha", Constraint::lower(0.0))?;
        let sigma = p.real("sigma", Constraint::lower(0.0))?;
        let model = p.model(|v| {
            let noise = square(&v[sigma]);
            let k = add_diag(gp_exp_quad_cov(&x, &v[alpha], &v[rho])?, &noise)?.eval()?;
            let priors = lognormal_lpdf(&v[rho], 0.0, 1.0).eval()?
                + lognormal_lpdf(&v[alpha], 0.0, 1.0).eval()?
                + lognormal_lpdf(&v[sigma], -1.0, 1.0).eval()?;
            (priors + multi_normal_lpdf(&y, 0.0, &k).eval()?).eval()
        });
        let (replayed, why) = compare(3, 5, |theta| model.log_density(theta))?;
        // A gather's index check (in the covariance's diagonal) is read
        // back at once, in the middle of the call: such a model runs as
        // usual, never replayed.
        let read_inside = why.is_some_and(|w| w.contains("read"));
        assert!(replayed == replay_on()? || read_inside, "n = {n}: {why:?}");
    }
    Ok(())
}

#[test]
fn data_uploaded_inside_the_model_and_data_changed_between_calls_are_read_anew() -> Result<()> {
    let shift = MatrixCl::from_slice(3, 1, &[1.0, 2.0, 3.0])?;
    let theta = Var::new(MatrixCl::zeros(3, 1)?);
    let mut replay = Replay::new();
    let mut g = [0.0; 3];
    let model = |theta: &Var| -> Result<Var> {
        // Uploaded at every call (recorded as a write of the same data).
        let scale = MatrixCl::from_slice(3, 1, &[0.5, 1.0, 2.0])?;
        colwise_sum(elt_multiply(&scale, square(theta - &shift))).eval()
    };
    for call in 0..6 {
        let s = [call as f64, -1.0, 0.5 * call as f64];
        shift.write(&s)?;
        let x = position(3, call);
        theta.value().write(&x)?;
        let value = replay.value_and_grad_to_host(&theta, || model(&theta), &mut g)?;
        let scale = [0.5, 1.0, 2.0];
        let want: f64 = (0..3).map(|k| scale[k] * (x[k] - s[k]).powi(2)).sum();
        close(&format!("call {call}"), value, want);
        for k in 0..3 {
            close(
                &format!("call {call}: g[{k}]"),
                g[k],
                2.0 * scale[k] * (x[k] - s[k]),
            );
        }
    }
    assert_eq!(replay.is_replaying(), replay_on()?);
    Ok(())
}

#[test]
fn a_model_that_reads_to_the_host_is_never_replayed() -> Result<()> {
    let (replayed, why) = compare(2, 5, |theta| {
        // A choice made on the host from device values.
        let first = theta.value().to_vec()?[0];
        let sign = if first >= 0.0 { 1.0 } else { -1.0 };
        colwise_sum(sign * square(theta)).eval()
    })?;
    assert!(!replayed);
    if replay_on()? {
        assert!(why.is_some_and(|w| w.contains("read")), "{why:?}");
    }
    Ok(())
}

#[test]
fn a_model_whose_work_changes_between_calls_is_not_replayed() -> Result<()> {
    let mut calls = 0;
    let (replayed, why) = compare(2, 20, |theta| {
        calls += 1;
        // A scalar argument that differs from one call to the next
        // (each position is evaluated twice by `compare`).
        let scale = 1.0 + ((calls - 1) / 2 % 2) as f64;
        colwise_sum(scale * square(theta)).eval()
    })?;
    assert!(!replayed);
    if replay_on()? {
        assert_eq!(why, Some("its calls did different device work"));
    }
    Ok(())
}

#[test]
fn another_parameter_buffer_records_again() -> Result<()> {
    let mut replay = Replay::new();
    let mut g = [0.0; 2];
    let model = |theta: &Var| colwise_sum(-0.5f64 * square(theta)).eval();
    for round in 0..2 {
        // A new variable each round: its buffer is not the recorded one.
        let theta = Var::new(MatrixCl::zeros(2, 1)?);
        for call in 0..4 {
            let x = position(2, call + 10 * round);
            theta.value().write(&x)?;
            let value = replay.value_and_grad_to_host(&theta, || model(&theta), &mut g)?;
            close("value", value, -0.5 * (x[0] * x[0] + x[1] * x[1]));
            assert_eq!(g, [-x[0], -x[1]]);
        }
    }
    Ok(())
}

#[test]
fn a_failed_check_in_a_replayed_call_is_the_usual_error() -> Result<()> {
    let y = MatrixCl::from_slice(2, 1, &[0.5, -1.0])?;
    let off_diagonal = MatrixCl::from_slice(2, 2, &[0.0, 0.9, 0.9, 0.0])?;
    let first = MatrixCl::from_slice(2, 2, &[1.0, 0.0, 0.0, 0.0])?;
    let second = MatrixCl::from_slice(2, 2, &[0.0, 0.0, 0.0, 1.0])?;
    // [[theta0, 0.9], [0.9, theta1]]: positive definite only while
    // theta > 0 and theta0 * theta1 > 0.81.
    let model = |theta: &Var| {
        let at = |row| optional_broadcast(block(theta, row, 0, 1, 1), 2, 2);
        let k =
            (&off_diagonal + elt_multiply(&first, at(0)) + elt_multiply(&second, at(1))).eval()?;
        multi_normal_lpdf(&y, 0.0, &k).eval()
    };
    let usual = |x: [f64; 2]| -> Result<(f64, [f64; 2])> {
        let t = Var::new(MatrixCl::from_slice(2, 1, &x)?);
        let mut g = [0.0; 2];
        let v = rev::value_and_grad_to_host(&t, || model(&t), &mut g)?;
        Ok((v, g))
    };
    let theta = Var::new(MatrixCl::zeros(2, 1)?);
    let mut replay = Replay::new();
    let mut g = [0.0; 2];
    let positions = [
        [1.0, 2.0],
        [1.5, 1.5],
        [2.0, 1.0],
        [0.5, 1.0],
        [1.2, 3.0],
        [1.1, 1.1],
        [-1.0, 2.0],
        [3.0, 0.5],
    ];
    let (mut failures, mut failed_in_replay) = (0, 0);
    for x in positions {
        theta.value().write(&x)?;
        let replaying = replay.is_replaying();
        let got = replay.value_and_grad_to_host(&theta, || model(&theta), &mut g);
        match usual(x) {
            Ok((value, grad)) => {
                let got = got?;
                close("value", got, value);
                close("g[0]", g[0], grad[0]);
                close("g[1]", g[1], grad[1]);
            }
            Err(want) => {
                failures += 1;
                failed_in_replay += usize::from(replaying);
                let got = got.expect_err("not positive definite must fail");
                assert_eq!(got.to_string(), want.to_string());
            }
        }
    }
    assert_eq!(failures, 2);
    // Both failures come after two clean calls recorded the same work,
    // unless the model is never replayed: today the Cholesky's check of
    // positive definiteness is read back at once, inside the call.
    let expected = if replay_on()? { 2 } else { 0 };
    let read_inside = replay.stopped().is_some_and(|w| w.contains("read"));
    assert!(
        failed_in_replay == expected || read_inside,
        "{failed_in_replay}: {:?}",
        replay.stopped()
    );
    Ok(())
}

#[test]
fn a_read_before_a_later_command_makes_a_recording_that_cannot_replay() -> Result<()> {
    let x = MatrixCl::from_slice(2, 1, &[1.0f64, 2.0])?;
    let (_, recording) = clfuse::clfuse_core::record(|| -> Result<MatrixCl<f64>> {
        let y: MatrixCl<f64> = (&x + 1.0).eval()?;
        let host = y.to_vec()?;
        (&y * host[0]).eval()
    })?;
    let why = recording.expect_err("a read came before a command");
    assert!(why.contains("read"), "{why}");
    let (sum, recording) = clfuse::clfuse_core::record(|| {
        let y: MatrixCl<f64> = (&x + 1.0).eval()?;
        y.to_vec()
    })?;
    assert_eq!(sum, vec![2.0, 3.0]);
    let recording = recording.expect("a recording");
    x.write(&[10.0, 20.0])?;
    let again = recording.replay()?;
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].downcast_ref::<Vec<f64>>(), Some(&vec![11.0, 21.0]));
    Ok(())
}
