//! A step with a `1 x 1` result stores the partial of a variable it reads
//! at each element (a density's vector location and scale) in that
//! variable's zero adjoint. These tests pin what every path around that
//! must give: the final pass that leaves the partials in place
//! (`grad_and_clear`, `value_and_grad`), passes that run twice, seeds that
//! are not one, adjoints read, zeroed or added to between the forward and
//! the reverse pass, a tape dropped in between, and variables shared by
//! two such steps. Each against a plain loop, at sizes below the length
//! from which a variable lends its adjoint (the plain path), at it and
//! above.

use crate::common::{assert_close, values};
use clfuse::Result;
use clfuse::prelude::*;
use clfuse::rev::{self, Var};

const SIZES: [usize; 5] = [1, 33, 1000, 65_536, 70_001];

/// `y`, `mu` and a positive `sigma` of length `n`.
fn data(n: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let y = values(n, 0.3);
    let mu = values(n, 1.7).iter().map(|v| 0.5 * v).collect();
    let sigma = values(n, 2.9).iter().map(|v| 1.2 + v.abs()).collect();
    (y, mu, sigma)
}

/// `Σ −½((y − μ)/σ)² − log σ` and its gradients in `μ` and `σ`.
fn reference(y: &[f64], mu: &[f64], sigma: &[f64]) -> (f64, Vec<f64>, Vec<f64>) {
    let mut lp = 0.0;
    let (mut d_mu, mut d_sigma) = (Vec::new(), Vec::new());
    for ((&y, &m), &s) in y.iter().zip(mu).zip(sigma) {
        let z = (y - m) / s;
        lp += -0.5 * z * z - s.ln();
        d_mu.push(z / s);
        d_sigma.push((z * z - 1.0) / s);
    }
    (lp, d_mu, d_sigma)
}

struct Model {
    y: MatrixCl<f64>,
    mu: Var,
    sigma: Var,
    want: (f64, Vec<f64>, Vec<f64>),
    n: usize,
}

impl Model {
    fn new(n: usize) -> Result<Self> {
        let (y, mu, sigma) = data(n);
        Ok(Model {
            want: reference(&y, &mu, &sigma),
            y: MatrixCl::from_slice(n, 1, &y)?,
            mu: Var::new(MatrixCl::from_slice(n, 1, &mu)?),
            sigma: Var::new(MatrixCl::from_slice(n, 1, &sigma)?),
            n,
        })
    }

    /// The log density: one step, `mu` and `sigma` each read at every element.
    fn lp(&self) -> Result<Var> {
        let z = elt_divide(&self.y - &self.mu, &self.sigma);
        colwise_sum(-0.5 * square(z) - log(&self.sigma)).eval()
    }

    /// The adjoints are `factor` times the gradients.
    fn check(&self, what: &str, factor: f64) -> Result<()> {
        let scaled = |g: &[f64]| g.iter().map(|v| factor * v).collect::<Vec<_>>();
        let tol = 1e-12;
        assert_close(
            &format!("{what}: d/dmu, n = {}", self.n),
            &self.mu.adjoint().to_vec()?,
            &scaled(&self.want.1),
            tol,
        );
        assert_close(
            &format!("{what}: d/dsigma, n = {}", self.n),
            &self.sigma.adjoint().to_vec()?,
            &scaled(&self.want.2),
            tol,
        );
        Ok(())
    }
}

#[test]
fn the_final_pass_leaves_the_partials_in_the_adjoints() -> Result<()> {
    for n in SIZES {
        let m = Model::new(n)?;
        let lp = m.lp()?;
        assert_close("value", &lp.value().to_vec()?, &[m.want.0], 1e-9);
        lp.grad_and_clear()?;
        assert_eq!(rev::steps_recorded(), 0);
        m.check("grad_and_clear", 1.0)?;
        // Again, after zeroing, as a sampler's next evaluation does.
        rev::set_zero_all_adjoints()?;
        m.lp()?.grad_and_clear()?;
        m.check("grad_and_clear, second evaluation", 1.0)?;
    }
    Ok(())
}

#[test]
fn a_pass_that_may_run_again_keeps_the_partials() -> Result<()> {
    for n in SIZES {
        let m = Model::new(n)?;
        let lp = m.lp()?;
        lp.grad()?;
        m.check("first grad", 1.0)?;
        lp.grad()?;
        m.check("second grad adds", 2.0)?;
        rev::set_zero_all_adjoints()?;
        lp.grad()?;
        m.check("third grad, after zeroing", 1.0)?;
        rev::clear()?;
    }
    Ok(())
}

#[test]
fn a_seed_that_is_not_one_scales_the_partials_in_place() -> Result<()> {
    for n in SIZES {
        let m = Model::new(n)?;
        let lp = m.lp()?;
        let doubled: Var = (&lp * 2.0).eval()?;
        doubled.grad()?;
        m.check("seed 2, grad", 2.0)?;
        // Adjoints add up, the intermediate `lp`'s too: it is 2 + 2, and
        // `mu` gets 2 + 4 times the gradient.
        doubled.grad()?;
        m.check("seed 2, grad again", 6.0)?;
        rev::clear()?;
        rev::set_zero_all_adjoints()?;
        let lp3 = m.lp()?;
        let tripled: Var = (&lp3 * 3.0).eval()?;
        tripled.grad_and_clear()?;
        m.check("seed 3, grad_and_clear", 3.0)?;
    }
    Ok(())
}

#[test]
fn an_adjoint_used_before_the_reverse_pass_takes_its_buffer_back() -> Result<()> {
    for n in SIZES {
        let m = Model::new(n)?;
        // Read: the adjoint is zero, whatever the forward kernel stored.
        let lp = m.lp()?;
        assert_eq!(m.mu.adjoint().to_vec()?, vec![0.0; n]);
        lp.grad_and_clear()?;
        m.check("adjoint read before the pass", 1.0)?;
        // Zeroed between the forward and the reverse pass.
        let lp = m.lp()?;
        rev::set_zero_all_adjoints()?;
        lp.grad_and_clear()?;
        m.check("zeroed before the pass", 1.0)?;
        // The tape dropped before the reverse pass: the adjoints stay zero.
        rev::set_zero_all_adjoints()?;
        let _lp = m.lp()?;
        rev::clear()?;
        assert_eq!(m.sigma.adjoint().to_vec()?, vec![0.0; n]);
    }
    Ok(())
}

#[test]
fn two_steps_reading_one_variable_both_reach_its_adjoint() -> Result<()> {
    for n in SIZES {
        let m = Model::new(n)?;
        // The first step lends mu's adjoint; the second, recorded later
        // and reversed first, adds a prior's gradient −mu to it.
        let likelihood = m.lp()?;
        let prior: Var = colwise_sum(-0.5 * square(&m.mu)).eval()?;
        let lp: Var = (&likelihood + &prior).eval()?;
        lp.grad_and_clear()?;
        let mu = m.mu.value().to_vec()?;
        let want: Vec<f64> = m.want.1.iter().zip(&mu).map(|(g, v)| g - v).collect();
        assert_close(
            &format!("likelihood + prior, n = {n}"),
            &m.mu.adjoint().to_vec()?,
            &want,
            1e-12,
        );
        assert_close(
            &format!("sigma, n = {n}"),
            &m.sigma.adjoint().to_vec()?,
            &m.want.2,
            1e-12,
        );
    }
    Ok(())
}

#[test]
fn value_and_grad_gives_the_same_gradients_every_call() -> Result<()> {
    for n in SIZES {
        let m = Model::new(n)?;
        for call in 0..3 {
            let (value, grads) = rev::value_and_grad(&[&m.mu, &m.sigma], || m.lp())?;
            assert_close("value", &[value], &[m.want.0], 1e-9);
            assert_close(
                &format!("call {call}: d/dmu, n = {n}"),
                &grads[0].to_vec()?,
                &m.want.1,
                1e-12,
            );
            assert_close(
                &format!("call {call}: d/dsigma, n = {n}"),
                &grads[1].to_vec()?,
                &m.want.2,
                1e-12,
            );
        }
        assert_eq!(rev::steps_recorded(), 0);
    }
    Ok(())
}

#[test]
fn a_scalar_variable_beside_a_lent_vector() -> Result<()> {
    for n in SIZES {
        let (y, mu, _) = data(n);
        let s = 1.7;
        let ym = MatrixCl::from_slice(n, 1, &y)?;
        let mu_var = Var::new(MatrixCl::from_slice(n, 1, &mu)?);
        let sigma = Var::new(MatrixCl::from_slice(1, 1, &[s])?);
        let lp: Var = colwise_sum(
            -0.5 * square(elt_divide(&ym - &mu_var, optional_broadcast(&sigma, n, 1)))
                - log(optional_broadcast(&sigma, n, 1)),
        )
        .eval()?;
        let scaled_lp: Var = (&lp * 5.0).eval()?;
        scaled_lp.grad_and_clear()?;
        let (_, d_mu, d_sigma) = reference(&y, &mu, &vec![s; n]);
        let scaled: Vec<f64> = d_mu.iter().map(|v| 5.0 * v).collect();
        let total: f64 = d_sigma.iter().sum();
        assert_close("mu", &mu_var.adjoint().to_vec()?, &scaled, 1e-12);
        assert_close("sigma", &sigma.adjoint().to_vec()?, &[5.0 * total], 1e-9);
    }
    Ok(())
}

/// What the partials in place are for: at seed one, the final pass of a
/// density with vector parameters launches no reverse kernel and copies
/// nothing; a pass that may run again copies each partial once.
#[test]
fn the_final_pass_at_seed_one_moves_nothing() -> Result<()> {
    // Alone in its process: profiling is configured before the runtime's first use.
    if crate::common::process::run_alone(
        "rev_lent_adjoints::the_final_pass_at_seed_one_moves_nothing",
    ) {
        return Ok(());
    }
    clfuse::configure(clfuse::RuntimeConfig {
        profiling: true,
        ..clfuse::RuntimeConfig::from_env()?
    })?;
    let m = Model::new(70_001)?;
    let lp = m.lp()?;
    clfuse::Runtime::get()?.finish()?;
    clfuse::take_profile()?;
    lp.grad_and_clear()?;
    let profile = clfuse::take_profile()?;
    assert!(profile.kernels.is_empty(), "{profile}");
    let copies = |p: &clfuse::clfuse_core::Profile| {
        p.timeline
            .iter()
            .filter(|c| c.name.contains("copy"))
            .count()
    };
    assert_eq!(copies(&profile), 0, "{profile}");
    m.check("profiled grad_and_clear", 1.0)?;

    rev::set_zero_all_adjoints()?;
    let lp = m.lp()?;
    clfuse::Runtime::get()?.finish()?;
    clfuse::take_profile()?;
    lp.grad()?;
    let profile = clfuse::take_profile()?;
    assert!(profile.kernels.is_empty(), "{profile}");
    assert_eq!(copies(&profile), 2, "{profile}");
    m.check("profiled grad", 1.0)?;
    rev::clear()
}

#[test]
fn value_and_grad_in_adjoints_leaves_the_gradients_there() -> Result<()> {
    for n in SIZES {
        let m = Model::new(n)?;
        for call in 0..3 {
            let value = rev::value_and_grad_in_adjoints(&[&m.mu, &m.sigma], || m.lp())?;
            assert_close(&format!("call {call}: value"), &[value], &[m.want.0], 1e-9);
            m.check(&format!("call {call}"), 1.0)?;
        }
        assert_eq!(rev::steps_recorded(), 0);
    }
    Ok(())
}

/// The seed of a pass that no kernel read is filled when the host reads it.
#[test]
fn the_seed_reads_as_one_when_no_kernel_needed_it() -> Result<()> {
    let m = Model::new(70_001)?;
    let lp = m.lp()?;
    lp.grad()?;
    assert_eq!(lp.adjoint().to_vec()?, vec![1.0]);
    m.check("seed read after the pass", 1.0)?;
    // Zeroed before anything read it: zero, not one.
    lp.grad()?;
    rev::set_zero_all_adjoints()?;
    assert_eq!(lp.adjoint().to_vec()?, vec![0.0]);
    rev::clear()
}
