//! Random lengths and argument kinds: every argument of a few densities is
//! in turn a number, a matrix or a variable, each `1 x 1` or `n x 1`
//! (numbers always broadcast), at random lengths; the value and every
//! variable's gradient match the CPU, and vectors of different lengths are
//! an error naming both. `FUSION_SOAK=1` runs more cases.

use crate::support::{derivative, points, soak};
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use clfuse::{Result, dist};
use proptest::prelude::*;
use statrs::distribution::{Continuous, Gamma, Normal};
use statrs::function::gamma::ln_gamma;

/// What an argument is given as.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Number,
    Matrix,
    Variable,
}

/// One argument as drawn: its kind and whether it is a vector.
#[derive(Debug, Clone, Copy)]
struct Drawn {
    kind: Kind,
    long: bool,
}

/// One argument as passed: its values (one, or one per element) and the
/// object holding them.
struct Built {
    values: Vec<f64>,
    source: Source,
}

enum Source {
    Number(f64),
    Matrix(MatrixCl<f64>),
    Variable(Var),
}

impl Built {
    fn new(drawn: Drawn, length: usize, range: (f64, f64), seed: f64) -> Result<Self> {
        let long = drawn.long && !matches!(drawn.kind, Kind::Number);
        let values = points(if long { length } else { 1 }, range.0, range.1, seed);
        let matrix = || MatrixCl::from_slice(values.len(), 1, &values);
        let source = match drawn.kind {
            Kind::Number => Source::Number(values[0]),
            Kind::Matrix => Source::Matrix(matrix()?),
            Kind::Variable => Source::Variable(Var::new(matrix()?)),
        };
        Ok(Built { values, source })
    }

    /// The value this argument gives element `i`.
    fn at(&self, i: usize) -> f64 {
        if self.values.len() == 1 {
            self.values[0]
        } else {
            self.values[i]
        }
    }
}

/// A `1 x 1` result, whichever type the arguments made it.
trait Summed {
    fn summed(&self) -> Result<f64>;
    fn backward(&self) -> Result<()>;
}

impl Summed for Var {
    fn summed(&self) -> Result<f64> {
        Ok(self.value().to_vec()?[0])
    }
    fn backward(&self) -> Result<()> {
        self.grad()
    }
}

impl Summed for MatrixCl<f64> {
    fn summed(&self) -> Result<f64> {
        Ok(self.to_vec()?[0])
    }
    fn backward(&self) -> Result<()> {
        Ok(())
    }
}

/// Binds `$x` to the argument `$b` as its kind's Rust type and runs `$body`.
macro_rules! with_arg {
    ($b:expr, |$x:ident| $body:expr) => {
        match &$b.source {
            Source::Number(v) => {
                let $x = *v;
                $body
            }
            Source::Matrix(m) => {
                let $x = m;
                $body
            }
            Source::Variable(v) => {
                let $x = v;
                $body
            }
        }
    };
}

/// A three-argument density (`y` first): its name, its arguments' names
/// and ranges, its CPU log density, and the call.
struct Family {
    name: &'static str,
    arguments: [&'static str; 3],
    ranges: [(f64, f64); 3],
    reference: fn(&[f64]) -> f64,
    call: fn(&[Built; 3]) -> Result<(f64, bool)>,
}

/// Evaluates, runs the reverse pass when the result is a variable, and
/// gives the value and whether it was one.
fn evaluate<L: Summed>(lp: L, is_var: bool) -> Result<(f64, bool)> {
    let value = lp.summed()?;
    lp.backward()?;
    Ok((value, is_var))
}

macro_rules! family_call {
    ($density:path) => {
        |b: &[Built; 3]| -> Result<(f64, bool)> {
            let is_var = b.iter().any(|a| matches!(a.source, Source::Variable(_)));
            with_arg!(b[0], |y| with_arg!(b[1], |p| with_arg!(b[2], |q| {
                evaluate($density(y, p, q).eval()?, is_var)
            })))
        }
    };
}

fn families() -> [Family; 2] {
    [
        Family {
            name: "normal_lpdf",
            arguments: ["y", "mu", "sigma"],
            ranges: [(-3.0, 3.0), (-1.0, 1.0), (0.5, 2.0)],
            reference: |a| Normal::new(a[1], a[2]).unwrap().ln_pdf(a[0]),
            call: family_call!(dist::normal_lpdf),
        },
        Family {
            name: "gamma_lpdf",
            arguments: ["y", "alpha", "beta"],
            ranges: [(0.5, 3.0), (0.5, 3.0), (0.5, 2.0)],
            reference: |a| Gamma::new(a[1], a[2]).unwrap().ln_pdf(a[0]),
            call: family_call!(dist::gamma_lpdf),
        },
    ]
}

fn kind() -> impl Strategy<Value = Drawn> {
    (
        prop_oneof![Just(Kind::Number), Just(Kind::Matrix), Just(Kind::Variable)],
        any::<bool>(),
    )
        .prop_map(|(kind, long)| Drawn { kind, long })
}

/// One draw: the arguments built at `length` (the one at `stretched`, if
/// any, one longer), evaluated and compared.
fn check(
    family: &Family,
    drawn: [Drawn; 3],
    length: usize,
    stretched: Option<usize>,
) -> Result<()> {
    let built: Vec<Built> = (0..3)
        .map(|j| {
            let n = length + usize::from(stretched == Some(j));
            Built::new(drawn[j], n, family.ranges[j], 0.2 + 0.41 * j as f64)
        })
        .collect::<Result<_>>()?;
    let built: [Built; 3] = built
        .try_into()
        .map_err(|_| clfuse::Error::InvalidArgument {
            function: "check",
            argument: "built",
            reason: "three arguments".into(),
        })?;
    let result = (family.call)(&built);
    if let Some(j) = stretched {
        let first_long = (0..3).find(|&k| built[k].values.len() == length && is_long(&built[k]));
        let message = result.expect_err("lengths differ").to_string();
        let stretched_named = format!("{}: argument `{}`", family.name, family.arguments[j]);
        assert!(message.contains(&stretched_named), "{message}");
        if let Some(k) = first_long {
            let other = format!("but `{}` has {length}", family.arguments[k]);
            assert!(message.contains(&other), "{message}");
        }
        return rev::clear();
    }
    let (got, is_var) = result?;
    let n = if built.iter().any(is_long) { length } else { 1 };
    let element = |i: usize| -> Vec<f64> { built.iter().map(|b| b.at(i)).collect() };
    let want: f64 = (0..n).map(|i| (family.reference)(&element(i))).sum();
    let scale: f64 = (0..n).map(|i| (family.reference)(&element(i)).abs()).sum();
    let what = format!("{} {drawn:?} n = {length}", family.name);
    assert!(
        (got - want).abs() <= 1e-10 * scale.max(1.0),
        "{what}: device {got:e}, reference {want:e}"
    );
    assert_eq!(
        is_var,
        built
            .iter()
            .any(|b| matches!(b.source, Source::Variable(_)))
    );
    for (j, b) in built.iter().enumerate() {
        let Source::Variable(var) = &b.source else {
            continue;
        };
        let per_element: Vec<f64> = (0..n)
            .map(|i| derivative(family.reference, &element(i), j))
            .collect();
        let want = if b.values.len() == 1 {
            vec![per_element.iter().sum()]
        } else {
            per_element
        };
        let got = var.adjoint().to_vec()?;
        assert_eq!(got.len(), want.len(), "{what}: argument {j}");
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-6 * w.abs().max(1.0) * (n.max(1) as f64).sqrt(),
                "{what}: d/d{}[{k}] autodiff {g:e}, finite difference {w:e}",
                family.arguments[j]
            );
        }
    }
    rev::clear()
}

fn is_long(b: &Built) -> bool {
    !matches!(b.source, Source::Number(_)) && b.values.len() != 1
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if soak() { 128 } else { 24 },
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_kinds_and_lengths(
        family in 0usize..2,
        drawn in [kind(), kind(), kind()],
        length in 0usize..70,
        stretch in any::<bool>(),
    ) {
        let family = &families()[family];
        // A vector one longer than the others, where two are vectors.
        let longs: Vec<usize> = (0..3)
            .filter(|&j| drawn[j].long && !matches!(drawn[j].kind, Kind::Number))
            .collect();
        let stretched = (stretch && length >= 2 && longs.len() >= 2).then(|| longs[longs.len() - 1]);
        check(family, drawn, length, stretched).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
}

/// `poisson_log_lpmf` with its log rate each kind and the counts a matrix.
#[test]
fn poisson_log_rate_of_every_kind() -> Result<()> {
    let n = 37;
    let counts: Vec<i32> = (0..n).map(|i| (i * 7 % 11) as i32).collect();
    let y = MatrixCl::from_slice(n, 1, &counts)?;
    let rates = points(n, -1.0, 2.0, 0.4);
    let reference = |k: i32, a: f64| k as f64 * a - a.exp() - ln_gamma(k as f64 + 1.0);
    let total =
        |a: &dyn Fn(usize) -> f64| -> f64 { (0..n).map(|i| reference(counts[i], a(i))).sum() };
    let close = |got: f64, want: f64| (got - want).abs() <= 1e-10 * want.abs().max(1.0);

    let number = dist::poisson_log_lpmf(&y, 0.3).eval()?.to_vec()?[0];
    assert!(close(number, total(&|_| 0.3)));
    let one = Var::new(MatrixCl::from_slice(1, 1, &[0.3])?);
    let lp = dist::poisson_log_lpmf(&y, &one).eval()?;
    assert!(close(lp.value().to_vec()?[0], total(&|_| 0.3)));
    lp.grad()?;
    let want: f64 = counts.iter().map(|&k| k as f64 - 0.3f64.exp()).sum();
    assert!(close(one.adjoint().to_vec()?[0], want));
    let long = Var::new(MatrixCl::from_slice(n, 1, &rates)?);
    let lp = dist::poisson_log_lpmf(&y, &long).eval()?;
    assert!(close(lp.value().to_vec()?[0], total(&|i| rates[i])));
    lp.grad()?;
    let got = long.adjoint().to_vec()?;
    for i in 0..n {
        assert!(
            close(got[i], counts[i] as f64 - rates[i].exp()),
            "d/dalpha[{i}]"
        );
    }
    rev::clear()
}
