//! `clfuse::dist`: named densities as a sampler calls them, per call (the
//! host waits for the value, the gradient is finished on the device; JAX
//! and PyTorch get the same treatment in `scripts/dist_reference.py`).
//! Few parameters over long data (scalar μ, σ, ν, α, β), a regression
//! whose location is `x·β + α` against the normal GLM leaf, and the
//! vector-parameter form whose bytes are all of the traffic.

use crate::timing::measure;
use crate::workloads::Ctx;
use clfuse::Result;
use clfuse::dist;
use clfuse::prelude::*;
use clfuse::rev::{self, Var};

/// The same data as `scripts/dist_reference.py`.
pub fn outcomes(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 2.0 * (i as f64 * 0.37).sin() + 0.5)
        .collect()
}

/// Positive outcomes (for the gamma density).
pub fn positive_outcomes(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 0.5 + 3.0 * (i as f64 * 0.618_033_988_749_895).fract())
        .collect()
}

fn scalar(v: f64) -> Result<Var> {
    Ok(Var::new(MatrixCl::from_slice(1, 1, &[v])?))
}

/// One call as a sampler makes it: record, run the reverse pass, read the
/// value; the steps are dropped afterwards (`measure` waits for the
/// queue, so the gradient kernels count).
fn per_call(f: impl Fn() -> Result<Var>) -> impl FnMut() -> Result<()> {
    move || {
        let lp = f()?;
        lp.grad()?;
        std::hint::black_box(lp.value().to_vec()?);
        rev::clear()
    }
}

/// Scalar-parameter densities over `n` outcomes.
pub fn scalar_parameters(ctx: &mut Ctx, n: usize) -> Result<()> {
    let y = MatrixCl::from_slice(n, 1, &outcomes(n))?;
    let positive = MatrixCl::from_slice(n, 1, &positive_outcomes(n))?;
    let (mu, sigma, nu) = (scalar(0.3)?, scalar(1.7)?, scalar(4.5)?);
    let (alpha, beta) = (scalar(2.0)?, scalar(1.5)?);
    let bytes = 8.0 * n as f64; // y read once
    let w = "normal_lpdf value+grad, scalar mu, sigma";
    let t = measure(
        ctx.reps,
        per_call(|| dist::normal_lpdf(&y, &mu, &sigma).eval()),
    )?;
    ctx.push(w, "clfuse::dist", n, bytes, 0.0, t);
    ctx.profile(
        format!("{w}, n = {n}"),
        per_call(|| dist::normal_lpdf(&y, &mu, &sigma).eval()),
    )?;
    let w = "student_t_lpdf value+grad, scalar nu, mu, sigma";
    let t = measure(
        ctx.reps,
        per_call(|| dist::student_t_lpdf(&y, &nu, &mu, &sigma).eval()),
    )?;
    ctx.push(w, "clfuse::dist", n, bytes, 0.0, t);
    let w = "gamma_lpdf value+grad, scalar alpha, beta";
    let t = measure(
        ctx.reps,
        per_call(|| dist::gamma_lpdf(&positive, &alpha, &beta).eval()),
    )?;
    ctx.push(w, "clfuse::dist", n, bytes, 0.0, t);
    Ok(())
}

/// `normal_lpdf(y | x·β + α, σ)` against the normal GLM leaf and its
/// composed form, on the same data (`n x p`).
pub fn regression(ctx: &mut Ctx, n: usize, p: usize) -> Result<()> {
    let (xs, _, bs) = crate::glm::data(n, p);
    let x = MatrixCl::from_slice(n, p, &xs)?;
    let y = MatrixCl::from_slice(n, 1, &outcomes(n))?;
    let beta = Var::new(MatrixCl::from_slice(p, 1, &bs)?);
    let (alpha, sigma) = (scalar(0.25)?, scalar(1.3)?);
    let w = format!("normal regression value+grad, P = {p}");
    let bytes = 8.0 * (n * p) as f64; // x read once
    let t = measure(
        ctx.reps,
        per_call(|| {
            let location = matrix_vector_multiply(&x, &beta) + optional_broadcast(&alpha, n, 1);
            dist::normal_lpdf(&y, location, &sigma).eval()
        }),
    )?;
    ctx.push(
        &w,
        "clfuse::dist::normal_lpdf(y, x·β + α, σ)",
        n,
        bytes,
        0.0,
        t,
    );
    let t = measure(
        ctx.reps,
        per_call(|| rev::normal_id_glm(&y, &x, &alpha, &beta, &sigma)),
    )?;
    ctx.push(&w, "normal GLM leaf (rev::normal_id_glm)", n, bytes, 0.0, t);
    let t = measure(
        ctx.reps,
        per_call(|| rev::composed::normal_id_glm(&y, &x, &alpha, &beta, &sigma)),
    )?;
    ctx.push(
        &w,
        "composed GLM (rev::composed::normal_id_glm)",
        n,
        bytes,
        0.0,
        t,
    );
    Ok(())
}

/// `normal_lpdf(y | μ, σ)` with `μ`, `σ` variables as long as `y`: reads
/// three vectors, writes two gradients (40 bytes per element must move).
pub fn vector_parameters(ctx: &mut Ctx, n: usize) -> Result<()> {
    let y = MatrixCl::from_slice(n, 1, &outcomes(n))?;
    let mu = Var::new(MatrixCl::constant(n, 1, 0.3)?);
    let sigma = Var::new(MatrixCl::constant(n, 1, 1.7)?);
    let w = "normal_lpdf value+grad, vector mu, sigma";
    let bytes = 40.0 * n as f64;
    let t = measure(
        ctx.reps,
        per_call(|| dist::normal_lpdf(&y, &mu, &sigma).eval()),
    )?;
    ctx.push(w, "clfuse::dist", n, bytes, 0.0, t);
    ctx.profile(
        format!("{w}, n = {n}"),
        per_call(|| dist::normal_lpdf(&y, &mu, &sigma).eval()),
    )?;
    Ok(())
}
