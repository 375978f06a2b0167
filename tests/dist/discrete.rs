//! The probability mass functions: one line of the table each.

use crate::support::{IntCase, check_mass_scalar_vars, check_masses, sizes, soak};
use clfuse::prelude::*;
use clfuse::rev::Var;
use clfuse::{Result, dist};
use statrs::distribution::{Bernoulli, Binomial, Discrete, NegativeBinomial, Poisson};
use statrs::function::beta::ln_beta;
use statrs::function::factorial::ln_binomial;

fn run(case: &IntCase) -> Result<()> {
    for &n in sizes() {
        check_masses(case, n)?;
    }
    let scalar_vars = [
        "poisson_log_lpmf",
        "binomial_logit_lpmf",
        "neg_binomial_2_lpmf",
    ];
    if soak() || scalar_vars.contains(&case.name) {
        for n in [1, 33] {
            check_mass_scalar_vars(case, n)?;
        }
    }
    Ok(())
}

/// Outcomes 0 or 1.
fn binary(n: usize) -> Vec<Vec<i32>> {
    vec![(0..n).map(|i| i32::from(i % 3 != 1)).collect()]
}

/// Counts in `[0, 30]`.
fn counts(n: usize) -> Vec<Vec<i32>> {
    vec![(0..n).map(|i| ((i * 7 + 3) % 31) as i32).collect()]
}

/// Successes `n ≤ N` and trials `N` in `[0, 20]`.
fn trials(n: usize) -> Vec<Vec<i32>> {
    let big: Vec<i32> = (0..n).map(|i| ((i * 5 + 2) % 21) as i32).collect();
    let small = big
        .iter()
        .enumerate()
        .map(|(i, &t)| (i as i32 * 3) % (t + 1))
        .collect();
    vec![small, big]
}

fn inv_logit(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

macro_rules! discrete {
    ($($name:ident([$($i:ident),+] from $ints:path $(, $p:ident in [$lo:literal, $hi:literal])*) => $reference:expr;)*) => {$(
        #[test]
        #[allow(non_snake_case)]
        fn $name() -> Result<()> {
            run(&IntCase {
                name: stringify!($name),
                ints: $ints,
                ranges: &[$(($lo, $hi)),*],
                reference: |ints: &[i32], reals: &[f64]| {
                    let &[$($i),+] = ints else { unreachable!() };
                    let &[$($p),*] = reals else { unreachable!() };
                    $reference
                },
                vars: |ints: &[&MatrixCl<i32>], reals: &[&Var]| {
                    let &[$($i),+] = ints else { unreachable!() };
                    let &[$($p),*] = reals else { unreachable!() };
                    dist::$name($($i,)+ $($p),*).eval()
                },
                numbers: |ints: &[&MatrixCl<i32>], reals: &[f64]| {
                    let &[$($i),+] = ints else { unreachable!() };
                    let &[$($p),*] = reals else { unreachable!() };
                    dist::$name($($i,)+ $($p),*).eval()
                },
                scalar_vars: |ints: &[&MatrixCl<i32>], reals: &[&Var]| {
                    let &[$($i),+] = ints else { unreachable!() };
                    let &[$($p),*] = reals else { unreachable!() };
                    dist::$name($($i,)+ $($p),*).eval()
                },
            })
        }
    )*};
}

discrete! {
    bernoulli_lpmf([n] from binary, theta in [0.05, 0.95])
        => Bernoulli::new(theta).unwrap().ln_pmf(n as u64);
    bernoulli_logit_lpmf([n] from binary, alpha in [-3.0, 3.0])
        => Bernoulli::new(inv_logit(alpha)).unwrap().ln_pmf(n as u64);
    binomial_lpmf([n, N] from trials, theta in [0.05, 0.95])
        => Binomial::new(theta, N as u64).unwrap().ln_pmf(n as u64);
    binomial_logit_lpmf([n, N] from trials, alpha in [-3.0, 3.0])
        => Binomial::new(inv_logit(alpha), N as u64).unwrap().ln_pmf(n as u64);
    beta_binomial_lpmf([n, N] from trials, alpha in [0.5, 5.0], beta in [0.5, 5.0])
        => ln_binomial(N as u64, n as u64) + ln_beta(n as f64 + alpha, (N - n) as f64 + beta)
            - ln_beta(alpha, beta);
    poisson_lpmf([n] from counts, lambda in [0.5, 20.0])
        => Poisson::new(lambda).unwrap().ln_pmf(n as u64);
    poisson_log_lpmf([n] from counts, alpha in [-1.0, 3.0])
        => Poisson::new(alpha.exp()).unwrap().ln_pmf(n as u64);
    neg_binomial_lpmf([n] from counts, alpha in [0.5, 10.0], beta in [0.2, 3.0])
        => NegativeBinomial::new(alpha, beta / (1.0 + beta)).unwrap().ln_pmf(n as u64);
    neg_binomial_2_lpmf([n] from counts, mu in [0.5, 20.0], phi in [0.5, 10.0])
        => NegativeBinomial::new(phi, phi / (mu + phi)).unwrap().ln_pmf(n as u64);
    neg_binomial_2_log_lpmf([n] from counts, eta in [-1.0, 3.0], phi in [0.5, 10.0])
        => NegativeBinomial::new(phi, phi / (eta.exp() + phi)).unwrap().ln_pmf(n as u64);
}
