//! The test table's driver: data, CPU references summed, finite
//! differences, and the comparisons.

use clfuse::Result;
use clfuse::prelude::*;
use clfuse::rev::{self, Var};

/// Whether the slow cases run (`FUSION_SOAK=1`).
pub fn soak() -> bool {
    std::env::var_os("FUSION_SOAK").is_some()
}

/// The lengths every density is tested at (more under `FUSION_SOAK`).
pub fn sizes() -> &'static [usize] {
    if soak() {
        &[0, 1, 31, 33, 1000, 4099, 100_003]
    } else {
        &[0, 1, 31, 33, 1000]
    }
}

/// `n` deterministic points spread over `[lo, hi]`, away from the ends;
/// `seed` decorrelates the arguments.
pub fn points(n: usize, lo: f64, hi: f64, seed: f64) -> Vec<f64> {
    (0..n)
        .map(|k| {
            let u = ((k as f64 + seed) * 0.618_033_988_749_895).fract();
            lo + (hi - lo) * (0.05 + 0.9 * u)
        })
        .collect()
}

/// The `i`th element of every argument.
pub fn column(data: &[Vec<f64>], i: usize) -> Vec<f64> {
    data.iter().map(|d| d[i]).collect()
}

/// `∂f/∂a[j]` at `a` by the five-point stencil.
pub fn derivative(f: impl Fn(&[f64]) -> f64, a: &[f64], j: usize) -> f64 {
    let h = 1e-4 * a[j].abs().max(1.0);
    let at = |d: f64| {
        let mut b = a.to_vec();
        b[j] += d;
        f(&b)
    };
    (at(-2.0 * h) - 8.0 * at(-h) + 8.0 * at(h) - at(2.0 * h)) / (12.0 * h)
}

/// A summed log density against its reference `want`, relative to `scale`
/// (the sum of the terms' magnitudes).
pub fn assert_value(what: &str, got: f64, want: f64, scale: f64) {
    let ok = got == want || (got - want).abs() <= 1e-10 * scale.max(1.0);
    assert!(ok, "{what}: device {got:e}, reference {want:e}");
}

/// A gradient against finite differences, relative 1e-6.
pub fn assert_gradient(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-6 * w.abs().max(1.0),
            "{what}[{k}]: autodiff {g:e}, finite difference {w:e}"
        );
    }
}

/// One continuous density of the table: its arguments' ranges (`y` first),
/// its log density at one element on the CPU, and the device function
/// called with every argument a vector variable, and with `y` a matrix and
/// the parameters numbers.
pub struct Case {
    pub name: &'static str,
    pub ranges: &'static [(f64, f64)],
    pub reference: fn(&[f64]) -> f64,
    pub vars: fn(&[&Var]) -> Result<Var>,
    pub numbers: fn(&MatrixCl<f64>, &[f64]) -> Result<MatrixCl<f64>>,
    pub scalar_vars: fn(&MatrixCl<f64>, &[&Var]) -> Result<Var>,
}

/// The parameters' values when they are numbers.
fn numbers(case: &Case) -> Vec<f64> {
    case.ranges[1..]
        .iter()
        .enumerate()
        .map(|(j, &(lo, hi))| points(1, lo, hi, 0.3 + j as f64)[0])
        .collect()
}

/// Every argument's values; `y` kept 0.01 away from the second argument
/// (the location, where `|y - μ|` has its kink: a finite difference must not
/// straddle it).
fn data(case: &Case, n: usize) -> Vec<Vec<f64>> {
    let mut data: Vec<Vec<f64>> = case
        .ranges
        .iter()
        .enumerate()
        .map(|(j, &(lo, hi))| points(n, lo, hi, 0.1 + 0.37 * j as f64))
        .collect();
    if let [y, second, ..] = &mut data[..] {
        away(y, |i| second[i]);
    }
    data
}

/// Moves each `y[i]` within 0.01 of `from(i)` up by 0.02.
fn away(y: &mut [f64], from: impl Fn(usize) -> f64) {
    for (i, v) in y.iter_mut().enumerate() {
        if (*v - from(i)).abs() < 0.01 {
            *v += 0.02;
        }
    }
}

/// `Σ_i f(args_i)` and `Σ_i |f(args_i)|`.
fn reference_sum(case: &Case, args: impl Iterator<Item = Vec<f64>>) -> (f64, f64) {
    args.map(|a| (case.reference)(&a))
        .fold((0.0, 0.0), |(s, m), v| (s + v, m + v.abs()))
}

/// Every argument an `n x 1` variable: the value, and the gradient in each.
pub fn check_vectors(case: &Case, n: usize) -> Result<()> {
    let data = data(case, n);
    let vars = data
        .iter()
        .map(|d| Ok(Var::new(MatrixCl::from_slice(n, 1, d)?)))
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<&Var> = vars.iter().collect();
    let lp = (case.vars)(&refs)?;
    let (want, scale) = reference_sum(case, (0..n).map(|i| column(&data, i)));
    let what = format!("{} (vectors, n = {n})", case.name);
    assert_value(&what, lp.value().to_vec()?[0], want, scale);
    lp.grad()?;
    for (j, var) in vars.iter().enumerate() {
        let want: Vec<f64> = (0..n)
            .map(|i| derivative(case.reference, &column(&data, i), j))
            .collect();
        assert_gradient(
            &format!("{what}, argument {j}"),
            &var.adjoint().to_vec()?,
            &want,
        );
    }
    rev::clear()
}

/// `y` an `n x 1` matrix, the parameters numbers: the value.
pub fn check_numbers(case: &Case, n: usize) -> Result<()> {
    let params = numbers(case);
    let mut y = data(case, n).swap_remove(0);
    if let Some(&p) = params.first() {
        away(&mut y, |_| p);
    }
    let got = (case.numbers)(&MatrixCl::from_slice(n, 1, &y)?, &params)?.to_vec()?[0];
    let with = |v: f64| std::iter::once(v).chain(params.iter().copied()).collect();
    let (want, scale) = reference_sum(case, y.iter().map(|&v| with(v)));
    assert_value(
        &format!("{} (numbers, n = {n})", case.name),
        got,
        want,
        scale,
    );
    Ok(())
}

/// `y` an `n x 1` matrix, the parameters `1 x 1` variables: the value and
/// each parameter's gradient, the sum over the elements.
pub fn check_scalar_vars(case: &Case, n: usize) -> Result<()> {
    let params = numbers(case);
    let mut y = data(case, n).swap_remove(0);
    if let Some(&p) = params.first() {
        away(&mut y, |_| p);
    }
    let vars = params
        .iter()
        .map(|&p| Ok(Var::new(MatrixCl::from_slice(1, 1, &[p])?)))
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<&Var> = vars.iter().collect();
    let lp = (case.scalar_vars)(&MatrixCl::from_slice(n, 1, &y)?, &refs)?;
    let with = |v: f64| -> Vec<f64> { std::iter::once(v).chain(params.iter().copied()).collect() };
    let (want, scale) = reference_sum(case, y.iter().map(|&v| with(v)));
    let what = format!("{} (1 x 1 variables, n = {n})", case.name);
    assert_value(&what, lp.value().to_vec()?[0], want, scale);
    lp.grad()?;
    for (j, var) in vars.iter().enumerate() {
        let want: f64 = y
            .iter()
            .map(|&v| derivative(case.reference, &with(v), j + 1))
            .sum();
        assert_gradient(
            &format!("{what}, parameter {j}"),
            &var.adjoint().to_vec()?,
            &[want],
        );
    }
    rev::clear()
}

/// One probability mass function of the table: its integer arguments' data
/// (outcomes first, then trials), its real arguments' ranges, its log mass
/// at one element on the CPU, and the device function called with the
/// integers matrices and the reals vector variables, or numbers.
pub struct IntCase {
    pub name: &'static str,
    pub ints: fn(usize) -> Vec<Vec<i32>>,
    pub ranges: &'static [(f64, f64)],
    pub reference: fn(&[i32], &[f64]) -> f64,
    pub vars: fn(&[&MatrixCl<i32>], &[&Var]) -> Result<Var>,
    pub numbers: fn(&[&MatrixCl<i32>], &[f64]) -> Result<MatrixCl<f64>>,
    pub scalar_vars: fn(&[&MatrixCl<i32>], &[&Var]) -> Result<Var>,
}

fn int_column(data: &[Vec<i32>], i: usize) -> Vec<i32> {
    data.iter().map(|d| d[i]).collect()
}

fn int_matrices(data: &[Vec<i32>], n: usize) -> Result<Vec<MatrixCl<i32>>> {
    data.iter().map(|d| MatrixCl::from_slice(n, 1, d)).collect()
}

/// The integers matrices, the reals vector variables: the value and the
/// gradient in each real argument; then the reals numbers: the value.
pub fn check_masses(case: &IntCase, n: usize) -> Result<()> {
    let ints = (case.ints)(n);
    let reals: Vec<Vec<f64>> = case
        .ranges
        .iter()
        .enumerate()
        .map(|(j, &(lo, hi))| points(n, lo, hi, 0.1 + 0.37 * j as f64))
        .collect();
    let matrices = int_matrices(&ints, n)?;
    let int_refs: Vec<&MatrixCl<i32>> = matrices.iter().collect();
    let vars = reals
        .iter()
        .map(|d| Ok(Var::new(MatrixCl::from_slice(n, 1, d)?)))
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<&Var> = vars.iter().collect();
    let lp = (case.vars)(&int_refs, &refs)?;
    let at = |i: usize, r: &[f64]| (case.reference)(&int_column(&ints, i), r);
    let (want, scale) = (0..n)
        .map(|i| at(i, &column(&reals, i)))
        .fold((0.0, 0.0), |(s, m), v| (s + v, m + v.abs()));
    let what = format!("{} (vectors, n = {n})", case.name);
    assert_value(&what, lp.value().to_vec()?[0], want, scale);
    lp.grad()?;
    for (j, var) in vars.iter().enumerate() {
        let want: Vec<f64> = (0..n)
            .map(|i| derivative(|r| at(i, r), &column(&reals, i), j))
            .collect();
        assert_gradient(
            &format!("{what}, argument {j}"),
            &var.adjoint().to_vec()?,
            &want,
        );
    }
    rev::clear()?;
    check_mass_numbers(case, n, &ints)
}

/// The integers matrices, the reals numbers: the value.
fn check_mass_numbers(case: &IntCase, n: usize, ints: &[Vec<i32>]) -> Result<()> {
    let matrices = int_matrices(ints, n)?;
    let int_refs: Vec<&MatrixCl<i32>> = matrices.iter().collect();
    let at = |i: usize, r: &[f64]| (case.reference)(&int_column(ints, i), r);
    let params: Vec<f64> = case
        .ranges
        .iter()
        .enumerate()
        .map(|(j, &(lo, hi))| points(1, lo, hi, 0.3 + j as f64)[0])
        .collect();
    let got = (case.numbers)(&int_refs, &params)?.to_vec()?[0];
    let (want, scale) = (0..n)
        .map(|i| at(i, &params))
        .fold((0.0, 0.0), |(s, m), v| (s + v, m + v.abs()));
    assert_value(
        &format!("{} (numbers, n = {n})", case.name),
        got,
        want,
        scale,
    );
    Ok(())
}

/// The integers matrices, the reals `1 x 1` variables.
pub fn check_mass_scalar_vars(case: &IntCase, n: usize) -> Result<()> {
    let ints = (case.ints)(n);
    let matrices = int_matrices(&ints, n)?;
    let int_refs: Vec<&MatrixCl<i32>> = matrices.iter().collect();
    let params: Vec<f64> = case
        .ranges
        .iter()
        .enumerate()
        .map(|(j, &(lo, hi))| points(1, lo, hi, 0.3 + j as f64)[0])
        .collect();
    let vars = params
        .iter()
        .map(|&p| Ok(Var::new(MatrixCl::from_slice(1, 1, &[p])?)))
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<&Var> = vars.iter().collect();
    let lp = (case.scalar_vars)(&int_refs, &refs)?;
    let at = |i: usize, r: &[f64]| (case.reference)(&int_column(&ints, i), r);
    let (want, scale) = (0..n)
        .map(|i| at(i, &params))
        .fold((0.0, 0.0), |(s, m), v| (s + v, m + v.abs()));
    let what = format!("{} (1 x 1 variables, n = {n})", case.name);
    assert_value(&what, lp.value().to_vec()?[0], want, scale);
    lp.grad()?;
    for (j, var) in vars.iter().enumerate() {
        let want: f64 = (0..n).map(|i| derivative(|r| at(i, r), &params, j)).sum();
        assert_gradient(
            &format!("{what}, parameter {j}"),
            &var.adjoint().to_vec()?,
            &[want],
        );
    }
    rev::clear()
}
