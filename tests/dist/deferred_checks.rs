//! Checks deferred to a gradient evaluation's final read
//! (`rev::value_and_grad_to_host` and its batch form): the same values and
//! gradients as with immediate checks, the same error (argument, element,
//! value) when one fails, a clean evaluation right after a failed one, and
//! more checked steps than the deferred slots hold.

use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use clfuse::{Result, dist};

fn col(v: &[f64]) -> Result<MatrixCl<f64>> {
    MatrixCl::from_slice(v.len(), 1, v)
}

/// `Σ normal_lpdf(y | θ₀, θ₁) + student_t_lpdf(θ₀ | 3, 0, 1)`: two checked
/// steps, `θ₁` a scale that must be positive.
fn model(y: &MatrixCl<f64>, theta: &Var) -> Result<Var> {
    let mu = block(theta, 0, 0, 1, 1);
    let sigma = block(theta, 1, 0, 1, 1).eval()?;
    let likelihood = dist::normal_lpdf(y, mu, &sigma).eval()?;
    let prior = dist::student_t_lpdf(&block(theta, 0, 0, 1, 1).eval()?, 3.0, 0.0, 1.0).eval()?;
    (&likelihood + &prior).eval()
}

/// The value and gradient with every check read after its own kernel.
fn immediate(y: &MatrixCl<f64>, at: &[f64]) -> Result<(f64, Vec<f64>)> {
    let theta = Var::new(col(at)?);
    let (value, grads) = rev::value_and_grad(&[&theta], || model(y, &theta))?;
    Ok((value, grads[0].to_vec()?))
}

#[test]
fn same_value_gradient_and_error() -> Result<()> {
    // 33 outcomes: not a multiple of any work-group size.
    let ys: Vec<f64> = (0..33).map(|i| (i as f64 * 0.37).sin() * 2.0).collect();
    let y = col(&ys)?;
    let theta = Var::new(MatrixCl::zeros(2, 1)?);
    let mut gradient = [0.0; 2];
    let deferred = |at: &[f64], gradient: &mut [f64]| {
        theta.value().write(at)?;
        rev::value_and_grad_to_host(&theta, || model(&y, &theta), gradient)
    };
    let good = [0.3, 1.7];
    let want = immediate(&y, &good)?;
    let value = deferred(&good, &mut gradient)?;
    assert!((value - want.0).abs() <= 1e-12 * want.0.abs());
    for (g, w) in gradient.iter().zip(&want.1) {
        assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{g} vs {w}");
    }
    // A bad scale: the error an immediate check gives, and the gradient
    // left as it was.
    let bad = [0.3, -2.0];
    let expected = immediate(&y, &bad).unwrap_err().to_string();
    assert_eq!(
        expected,
        "normal_lpdf: sigma[0, 0] is -2, but must be positive and finite"
    );
    let before = gradient;
    let error = deferred(&bad, &mut gradient).unwrap_err().to_string();
    assert_eq!(error, expected);
    assert_eq!(gradient, before);
    assert_eq!(rev::steps_recorded(), 0);
    // NaN in the second checked step (the prior's y is θ₀).
    let nan = [f64::NAN, 1.0];
    assert_eq!(
        deferred(&nan, &mut gradient).unwrap_err().to_string(),
        immediate(&y, &nan).unwrap_err().to_string()
    );
    // The failed slots were reset: the next evaluation passes, twice.
    for _ in 0..2 {
        let value = deferred(&good, &mut gradient)?;
        assert!((value - want.0).abs() <= 1e-12 * want.0.abs());
    }
    Ok(())
}

/// More checked steps than the deferred slots hold (512 slots, three per
/// `normal_lpdf`): the later ones are checked immediately, and a failure
/// in either part is found.
#[test]
fn more_checks_than_slots() -> Result<()> {
    let y = col(&[0.5, -1.0, 2.0])?;
    let theta = Var::new(col(&[0.1, 1.3])?);
    let steps = 200;
    let many = |theta: &Var, fail_at: usize| -> Result<Var> {
        let mu: Var = block(theta, 0, 0, 1, 1).eval()?;
        let sigma: Var = block(theta, 1, 0, 1, 1).eval()?;
        let mut total: Var = dist::std_normal_lpdf(&mu).eval()?;
        for k in 0..steps {
            let scale: f64 = if k == fail_at { -1.0 } else { 1.0 };
            let scaled: Var = (scale * &sigma).eval()?;
            let term: Var = dist::normal_lpdf(&y, &mu, &scaled).eval()?;
            total = (&total + &term).eval()?;
        }
        Ok(total)
    };
    let mut gradient = [0.0; 2];
    let value = rev::value_and_grad_to_host(&theta, || many(&theta, usize::MAX), &mut gradient)?;
    // Each term: Σ -((y - μ)/σ)²/2 - log σ - log √(2π), and the prior.
    let (mu, sigma) = (0.1f64, 1.3f64);
    let term: f64 = [0.5, -1.0, 2.0]
        .iter()
        .map(|y| -0.5 * ((y - mu) / sigma).powi(2) - sigma.ln() - 0.918_938_533_204_672_8)
        .sum();
    let want = steps as f64 * term - 0.5 * mu * mu - 0.918_938_533_204_672_8;
    assert!(
        (value - want).abs() <= 1e-10 * want.abs(),
        "{value} vs {want}"
    );
    for fail_at in [3, 190] {
        let error = rev::value_and_grad_to_host(&theta, || many(&theta, fail_at), &mut gradient)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "normal_lpdf: sigma[0, 0] is -1.3, but must be positive and finite"
        );
    }
    Ok(())
}

/// The batch form: one failing column fails the batch with that column's
/// error; a good batch right after gives each column its own values.
#[test]
fn batch_evaluation() -> Result<()> {
    let y = col(&[0.5, -1.0, 2.0, 0.25, 1.5])?;
    // Per column (chain) k: Σ_y -((y - μ_k)/σ_k)²/2 - log σ_k, with the
    // scales checked positive by a density in the same evaluation (its
    // value weighted by zero: only its check matters here).
    let batch_model = |theta: &Var| -> Result<Var> {
        let sigma = rowwise_broadcast(block(theta, 1, 0, 1, 3), 5);
        let z = elt_divide(
            optional_broadcast(&y, 5, 3) - rowwise_broadcast(block(theta, 0, 0, 1, 3), 5),
            &sigma,
        );
        // (An argument that is an expression is not checked: evaluated first.)
        let checked: Var =
            dist::exponential_lpdf(&transpose(block(theta, 1, 0, 1, 3)).eval()?, 1.0).eval()?;
        let sums: Var = colwise_sum(-0.5 * square(z) - log(&sigma)).eval()?;
        (&sums + optional_broadcast(0.0 * &checked, 1, 3)).eval()
    };
    let good = [0.1, 1.0, -0.2, 2.0, 0.3, 0.5];
    let theta = Var::new(MatrixCl::from_slice(2, 3, &good)?);
    let (mut values, mut gradients) = ([0.0; 3], [0.0; 6]);
    rev::batch_value_and_grad_to_host(&theta, || batch_model(&theta), &mut values, &mut gradients)?;
    theta.value().write(&[0.1, 1.0, -0.2, -2.0, 0.3, 0.5])?;
    let error = rev::batch_value_and_grad_to_host(
        &theta,
        || batch_model(&theta),
        &mut values,
        &mut gradients,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        error,
        "exponential_lpdf: y[1, 0] is -2, but must be non-negative"
    );
    theta.value().write(&good)?;
    let (mut again, mut again_gradients) = ([0.0; 3], [0.0; 6]);
    rev::batch_value_and_grad_to_host(
        &theta,
        || batch_model(&theta),
        &mut again,
        &mut again_gradients,
    )?;
    for k in 0..3 {
        let (mu, sigma) = (good[2 * k], good[2 * k + 1]);
        let want: f64 = [0.5, -1.0, 2.0, 0.25, 1.5]
            .iter()
            .map(|y| -0.5 * ((y - mu) / sigma).powi(2) - sigma.ln())
            .sum::<f64>();
        assert!(
            (again[k] - want).abs() <= 1e-12 * want.abs(),
            "{} vs {want}",
            again[k]
        );
    }
    Ok(())
}

/// A gradient evaluation inside another's model (nested deferral): a
/// failed check in the inner one is its exact error, and the outer one,
/// whose model returns that error, fails with it too.
#[test]
fn nested_evaluations() -> Result<()> {
    let y = col(&[0.5, -1.0, 2.0])?;
    let outer = Var::new(col(&[0.2, 1.1])?);
    let inner = Var::new(col(&[0.0, 1.0])?);
    let mut gradient = [0.0; 2];
    let mut run = |inner_at: [f64; 2]| -> Result<f64> {
        inner.value().write(&inner_at)?;
        rev::value_and_grad_to_host(
            &outer,
            || {
                let (inner_value, _) = rev::value_and_grad(&[&inner], || model(&y, &inner))?;
                let lp: Var = model(&y, &outer)?;
                (inner_value * 0.0 + &lp).eval()
            },
            &mut gradient,
        )
    };
    let want = immediate(&y, &[0.2, 1.1])?;
    let value = run([0.0, 1.0])?;
    assert!((value - want.0).abs() <= 1e-12 * want.0.abs());
    assert_eq!(
        run([0.0, -3.0]).unwrap_err().to_string(),
        "normal_lpdf: sigma[0, 0] is -3, but must be positive and finite"
    );
    // Clean again afterwards.
    let value = run([0.0, 1.0])?;
    assert!((value - want.0).abs() <= 1e-12 * want.0.abs());
    Ok(())
}
