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

/// One call as a sampler makes it: the parameters' adjoints zeroed, the
/// density recorded, its reverse pass run as the last over its steps, the
/// value and the checks' verdicts read in one wait; the gradients stay in
/// the parameters' adjoints (`value_and_grad_in_adjoints`; `measure` waits
/// for the queue, so any gradient kernel counts).
fn per_call<'a>(
    params: &'a [&'a Var],
    f: impl Fn() -> Result<Var> + 'a,
) -> impl FnMut() -> Result<()> + 'a {
    move || {
        std::hint::black_box(rev::value_and_grad_in_adjoints(params, &f)?);
        Ok(())
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
        per_call(&[&mu, &sigma], || dist::normal_lpdf(&y, &mu, &sigma).eval()),
    )?;
    ctx.push(w, "clfuse::dist", n, bytes, 0.0, t);
    ctx.profile(
        format!("{w}, n = {n}"),
        per_call(&[&mu, &sigma], || dist::normal_lpdf(&y, &mu, &sigma).eval()),
    )?;
    // What any call costs at least, per call as well: one launch and one
    // read-back; and one pass over `y` (a sum) with its read-back, the
    // least a density of `y` can do.
    let one = MatrixCl::<f64>::zeros(1, 1)?;
    let t = measure(ctx.reps, || {
        std::hint::black_box((&one + 1.0).eval()?.to_vec()?);
        Ok(())
    })?;
    ctx.push(w, "floor: a 1 x 1 kernel and its read-back", n, 0.0, 0.0, t);
    let t = measure(ctx.reps, || {
        std::hint::black_box(colwise_sum(&y).eval()?.to_vec()?);
        Ok(())
    })?;
    ctx.push(w, "floor: sum(y) and its read-back", n, bytes, 0.0, t);
    let w = "student_t_lpdf value+grad, scalar nu, mu, sigma";
    let t = measure(
        ctx.reps,
        per_call(&[&nu, &mu, &sigma], || {
            dist::student_t_lpdf(&y, &nu, &mu, &sigma).eval()
        }),
    )?;
    ctx.push(w, "clfuse::dist", n, bytes, 0.0, t);
    let w = "gamma_lpdf value+grad, scalar alpha, beta";
    let t = measure(
        ctx.reps,
        per_call(&[&alpha, &beta], || {
            dist::gamma_lpdf(&positive, &alpha, &beta).eval()
        }),
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
        per_call(&[&alpha, &beta, &sigma], || {
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
        per_call(&[&alpha, &beta, &sigma], || {
            rev::normal_id_glm(&y, &x, &alpha, &beta, &sigma)
        }),
    )?;
    ctx.push(&w, "normal GLM leaf (rev::normal_id_glm)", n, bytes, 0.0, t);
    let t = measure(
        ctx.reps,
        per_call(&[&alpha, &beta, &sigma], || {
            rev::composed::normal_id_glm(&y, &x, &alpha, &beta, &sigma)
        }),
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
        per_call(&[&mu, &sigma], || dist::normal_lpdf(&y, &mu, &sigma).eval()),
    )?;
    ctx.push(w, "clfuse::dist", n, bytes, 0.0, t);
    ctx.profile(
        format!("{w}, n = {n}"),
        per_call(&[&mu, &sigma], || dist::normal_lpdf(&y, &mu, &sigma).eval()),
    )?;
    Ok(())
}

/// posteriordb's `diamonds` (issue #35's goal) as a user writes it with
/// constrained parameters and named densities: 24 coefficients with
/// normal priors, an intercept and `sigma > 0` with Student-t priors, a
/// normal likelihood over `n x p` centred predictors. One call is what
/// the sampler makes: the position written to the device, the log density
/// and gradient recorded and run, value and gradient read back together.
/// `scripts/dist_reference.py` times JAX on the same model and data.
pub fn diamonds(ctx: &mut Ctx, n: usize, p: usize, copies: (usize, bool)) -> Result<()> {
    use clfuse::nuts::DeviceDensity;
    use clfuse::params::{Constraint, Parameters};
    let (xs, _, _) = crate::glm::data(n, p);
    let x = MatrixCl::from_slice(n, p, &xs)?;
    let y = MatrixCl::from_slice(n, 1, &outcomes(n))?;
    let mut params = Parameters::new();
    let b = params.vector("b", p, Constraint::Unconstrained)?;
    let intercept = params.real("Intercept", Constraint::Unconstrained)?;
    let sigma = params.real("sigma", Constraint::lower(0.0))?;
    // The half-Student-t's normalising term, as brms writes it.
    let half = (2.0f64).ln();
    let glm_model = params.model(|v| {
        let prior = (dist::normal_lpdf(&v[b], 0.0, 1.0).eval()?
            + dist::student_t_lpdf(&v[intercept], 3.0, 8.0, 10.0).eval()?
            + dist::student_t_lpdf(&v[sigma], 3.0, 0.0, 10.0).eval()?)
        .eval()?;
        let likelihood = rev::normal_id_glm(&y, &x, &v[intercept], &v[b], &v[sigma])?;
        (&prior + &likelihood + half).eval()
    });
    let density_model = diamonds_density(&x, &y)?;
    let position = diamonds_position(p);
    let w = diamonds_workload(p);
    let bytes = 8.0 * (n * p) as f64;
    let glm_call = |theta: &Var| glm_model.log_density(theta);
    let density_call = |theta: &Var| density_model.log_density(theta);
    let variants: [(&str, &dyn Fn(&Var) -> Result<Var>); 2] = [
        ("normal GLM leaf likelihood", &glm_call),
        ("normal_lpdf(y, x·b + Intercept, sigma)", &density_call),
    ];
    for (variant, model) in variants {
        let mut density = DeviceDensity::new(p + 2, |theta| model(theta))?;
        let mut gradient = vec![0.0; p + 2];
        let t = measure(ctx.reps, || {
            std::hint::black_box(density.value_and_grad(&position, &mut gradient)?);
            Ok(())
        })?;
        ctx.push(&w, variant, n, bytes, 0.0, t);
    }
    placement_probe(ctx, &w, (n, p), copies, &position)?;
    // Four chains' densities interleaved, as `nuts::sample` evaluates a
    // GPU's chains: each round starts every call (their replays launched
    // together unless FUSION_BATCH_CHAINS=0), then finishes them.
    let round_variant = "4 chains interleaved, per round of 4 calls";
    let mut batch = clfuse::ReplayBatch::new();
    let positions = [position.as_slice(); 4];
    let mut round = |densities: &mut Vec<DeviceDensity<_>>, gradient: &mut [f64]| -> Result<()> {
        for started in clfuse::nuts::start_round(&mut batch, densities, &positions) {
            started?;
        }
        for density in densities.iter_mut() {
            std::hint::black_box(density.finish(gradient)?);
        }
        Ok(())
    };
    let mut densities = (0..4)
        .map(|_| DeviceDensity::new(p + 2, &density_call))
        .collect::<Result<Vec<_>>>()?;
    let mut gradient = vec![0.0; p + 2];
    let t = measure(ctx.reps, || round(&mut densities, &mut gradient))?;
    ctx.push(&w, round_variant, n, 4.0 * bytes, 0.0, t);
    ctx.profile(format!("{w}, {round_variant}, n = {n}"), || {
        let mut densities = (0..4)
            .map(|_| DeviceDensity::new(p + 2, &density_call))
            .collect::<Result<Vec<_>>>()?;
        let mut gradient = vec![0.0; p + 2];
        // Two rounds recorded, the third replayed (a batched round's plan
        // is made then): the profile is of the fourth.
        for _ in 0..3 {
            round(&mut densities, &mut gradient)?;
        }
        clfuse::clfuse_core::take_profile()?;
        clfuse::clfuse_core::profile_mark("(host: fourth round starts, replayed)")?;
        round(&mut densities, &mut gradient)
    })?;
    for (variant, model) in variants {
        ctx.profile(format!("{w}, {variant}, n = {n}"), || {
            let mut density = DeviceDensity::new(p + 2, |theta| model(theta))?;
            let mut gradient = vec![0.0; p + 2];
            // The first calls compile and record (a replay needs two
            // recorded alike), and the first replay makes its plan (compact
            // variants, their tables: the fourth call's profile still showed
            // those writes); the profile is of the sixth call, replayed
            // unless FUSION_REPLAY=0.
            for _ in 0..5 {
                density.value_and_grad(&position, &mut gradient)?;
            }
            clfuse::clfuse_core::take_profile()?;
            let replayed = if density.replays() {
                "replayed"
            } else {
                "not replayed"
            };
            clfuse::clfuse_core::profile_mark(&format!("(host: sixth call starts, {replayed})"))?;
            density.value_and_grad(&position, &mut gradient).map(|_| ())
        })?;
    }
    Ok(())
}

/// The sampler's position in every diamonds call timed here.
fn diamonds_position(p: usize) -> Vec<f64> {
    (0..p + 2).map(|k| 0.1 * (k as f64 * 0.7).sin()).collect()
}

fn diamonds_workload(p: usize) -> String {
    format!("diamonds value+grad (params + dist), P = {p}")
}

/// The diamonds call alone (n = 5000, P = 24) over `copies` copies of its
/// data, as `--copies` times it in the `dist` suite (for the `placement`
/// suite).
pub fn diamonds_copies(ctx: &mut Ctx, (copies, new_contexts): (usize, bool)) -> Result<()> {
    let (n, p) = (5000, 24);
    let w = diamonds_workload(p);
    placement_probe(
        ctx,
        &w,
        (n, p),
        (copies.max(1), new_contexts),
        &diamonds_position(p),
    )
}

/// Whether a diamonds call's speed follows its buffers, its context or
/// its process: the `normal_lpdf` form over `copies` copies of the data
/// (each its own `x`, `y` and parameter buffers; with `new_contexts`, each
/// in a context and queue of its own on the same device), each timed in
/// turn, twice over. On an H200 every process ran all its calls at one of
/// two speeds (BENCHMARKS.md).
fn placement_probe(
    ctx: &mut Ctx,
    workload: &str,
    (n, p): (usize, usize),
    (copies, new_contexts): (usize, bool),
    position: &[f64],
) -> Result<()> {
    use clfuse::nuts::DeviceDensity;
    let (xs, _, _) = crate::glm::data(n, p);
    let ys = outcomes(n);
    let devices = (0..copies)
        .map(|_| {
            if new_contexts {
                clfuse::Device::open_new(clfuse::RuntimeConfig::from_env()?)
            } else {
                clfuse::Device::current()
            }
        })
        .collect::<Result<Vec<_>>>()?;
    let data = devices
        .iter()
        .map(|device| {
            device.run(|| {
                Ok((
                    MatrixCl::from_slice(n, p, &xs)?,
                    MatrixCl::from_slice(n, 1, &ys)?,
                ))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let models = devices
        .iter()
        .zip(&data)
        .map(|(device, (x, y))| device.run(|| diamonds_density(x, y)))
        .collect::<Result<Vec<_>>>()?;
    let mut densities = devices
        .iter()
        .zip(&models)
        .map(|(device, model)| {
            device.run(|| DeviceDensity::new(p + 2, move |theta| model.log_density(theta)))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut gradient = vec![0.0; p + 2];
    let bytes = 8.0 * (n * p) as f64;
    let place = if new_contexts { "context" } else { "data copy" };
    for pass in 1..=2 {
        for (copy, density) in densities.iter_mut().enumerate() {
            let t = devices[copy].run(|| {
                measure(ctx.reps, || {
                    std::hint::black_box(density.value_and_grad(position, &mut gradient)?);
                    Ok(())
                })
            })?;
            let variant = format!("normal_lpdf, {place} {copy}, pass {pass}");
            ctx.push(workload, &variant, n, bytes, 0.0, t);
        }
    }
    Ok(())
}

/// posteriordb's `diamonds` with its likelihood as `normal_lpdf` over
/// `x · b + Intercept` (`x` is `n x p`, `y` `n x 1`), as a user writes it.
fn diamonds_density<'a>(
    x: &'a MatrixCl<f64>,
    y: &'a MatrixCl<f64>,
) -> Result<
    clfuse::params::Posterior<impl Fn(&clfuse::params::Constrained) -> Result<Var> + Sync + 'a>,
> {
    use clfuse::params::{Constraint, Parameters};
    let (n, p) = (x.rows(), x.cols());
    let mut params = Parameters::new();
    let b = params.vector("b", p, Constraint::Unconstrained)?;
    let intercept = params.real("Intercept", Constraint::Unconstrained)?;
    let sigma = params.real("sigma", Constraint::lower(0.0))?;
    // The half-Student-t's normalising term, as brms writes it.
    let half = (2.0f64).ln();
    Ok(params.model(move |v| {
        let prior = (dist::normal_lpdf(&v[b], 0.0, 1.0).eval()?
            + dist::student_t_lpdf(&v[intercept], 3.0, 8.0, 10.0).eval()?
            + dist::student_t_lpdf(&v[sigma], 3.0, 0.0, 10.0).eval()?)
        .eval()?;
        let location = matrix_vector_multiply(x, &v[b]) + optional_broadcast(&v[intercept], n, 1);
        let likelihood = dist::normal_lpdf(y, location, &v[sigma]).eval()?;
        (&prior + &likelihood + half).eval()
    }))
}
