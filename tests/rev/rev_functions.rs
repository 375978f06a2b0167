//! The derivative of every element-wise function, checked against central
//! finite differences of the device's own values (relative 1e-6).
use clfuse::Result;
use clfuse::prelude::*;
use clfuse::rev::{self, Var};

/// Points spread over `[lo, hi]`, away from the ends.
fn points(n: usize, lo: f64, hi: f64) -> Vec<f64> {
    (0..n)
        .map(|k| lo + (hi - lo) * (0.05 + 0.9 * ((k as f64 * 0.618_033_988_7).fract())))
        .collect()
}

fn assert_gradient(name: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{name}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let scale = w.abs().max(1.0);
        assert!(
            (g - w).abs() <= 1e-6 * scale,
            "{name}[{k}]: autodiff {g}, finite difference {w}"
        );
    }
}

/// Central differences with a step relative to each point.
fn steps(x: &[f64]) -> Vec<f64> {
    x.iter().map(|v| 1e-5 * v.abs().max(1.0)).collect()
}

macro_rules! unary {
    ($($name:ident: $lo:expr, $hi:expr;)*) => {$(
        #[test]
        fn $name() -> Result<()> {
            let n = 33;
            let xs = points(n, $lo, $hi);
            let x = Var::new(MatrixCl::from_slice(n, 1, &xs)?);
            let total = colwise_sum(clfuse::clfuse_ops::$name(&x)).eval()?;
            total.grad()?;
            let h = steps(&xs);
            let plus: Vec<f64> = xs.iter().zip(&h).map(|(v, h)| v + h).collect();
            let minus: Vec<f64> = xs.iter().zip(&h).map(|(v, h)| v - h).collect();
            let (p, m) = (MatrixCl::from_slice(n, 1, &plus)?, MatrixCl::from_slice(n, 1, &minus)?);
            let diff = (clfuse::clfuse_ops::$name(&p) - clfuse::clfuse_ops::$name(&m)).eval()?.to_vec()?;
            let want: Vec<f64> = diff.iter().zip(&h).map(|(d, h)| d / (2.0 * h)).collect();
            assert_gradient(stringify!($name), &x.adjoint().to_vec()?, &want);
            rev::clear()
        }
    )*};
}

unary! {
    exp: -3.0, 3.0;
    exp2: -3.0, 3.0;
    expm1: -3.0, 3.0;
    log: 0.1, 10.0;
    log2: 0.1, 10.0;
    log10: 0.1, 10.0;
    log1p: -0.9, 10.0;
    sqrt: 0.1, 10.0;
    cbrt: 0.1, 10.0;
    rsqrt: 0.1, 10.0;
    square: -3.0, 3.0;
    fabs: 0.1, 3.0;
    sin: -3.0, 3.0;
    cos: -3.0, 3.0;
    tan: -1.2, 1.2;
    asin: -0.9, 0.9;
    acos: -0.9, 0.9;
    atan: -3.0, 3.0;
    sinh: -3.0, 3.0;
    cosh: -3.0, 3.0;
    tanh: -3.0, 3.0;
    asinh: -3.0, 3.0;
    acosh: 1.1, 5.0;
    atanh: -0.9, 0.9;
    erf: -3.0, 3.0;
    erfc: -3.0, 3.0;
    lgamma: 0.2, 8.0;
    tgamma: 0.2, 5.0;
    inv_logit: -5.0, 5.0;
    logit: 0.05, 0.95;
    log_inv_logit: -5.0, 5.0;
    log1m_inv_logit: -5.0, 5.0;
    log1p_exp: -5.0, 5.0;
    log1m_exp: -5.0, -0.1;
    log1m: -3.0, 0.9;
    phi: -3.0, 3.0;
    log_phi: -30.0, 3.0;
    phi_approx: -3.0, 3.0;
    inv_phi: 0.05, 0.95;
    digamma: 0.3, 8.0;
    trigamma: 0.3, 8.0;
    inv: 0.5, 3.0;
    inv_square: 0.5, 3.0;
    inv_cloglog: -3.0, 2.0;
    sign: 0.1, 3.0;
}

/// Trigamma's derivative for negative arguments (the reflection formula's).
#[test]
fn trigamma_between_the_poles() -> Result<()> {
    let xs = points(17, -0.9, -0.1);
    let x = Var::new(MatrixCl::from_slice(17, 1, &xs)?);
    colwise_sum(clfuse::clfuse_ops::trigamma(&x))
        .eval()?
        .grad()?;
    let h = steps(&xs);
    let at = |shift: f64| -> Result<Vec<f64>> {
        let moved: Vec<f64> = xs.iter().zip(&h).map(|(v, h)| v + shift * h).collect();
        clfuse::clfuse_ops::trigamma(&MatrixCl::from_slice(17, 1, &moved)?)
            .eval()?
            .to_vec()
    };
    let (plus, minus) = (at(1.0)?, at(-1.0)?);
    let want: Vec<f64> = plus
        .iter()
        .zip(&minus)
        .zip(&h)
        .map(|((p, m), h)| (p - m) / (2.0 * h))
        .collect();
    assert_gradient("trigamma (x < 0)", &x.adjoint().to_vec()?, &want);
    rev::clear()
}

/// Rounding functions have zero derivative away from their jumps.
#[test]
fn rounding_functions_have_zero_derivative() -> Result<()> {
    let xs = points(31, -3.0, 3.0);
    let x = Var::new(MatrixCl::from_slice(31, 1, &xs)?);
    let total = colwise_sum(floor(&x) + ceil(&x) + round(&x) + trunc(&x) + &x).eval()?;
    total.grad()?;
    assert_eq!(x.adjoint().to_vec()?, vec![1.0; 31]);
    rev::clear()
}

macro_rules! binary {
    ($($name:ident: [$lo:expr, $hi:expr], [$lo2:expr, $hi2:expr];)*) => {$(
        #[test]
        fn $name() -> Result<()> {
            let n = 31;
            let xs = points(n, $lo, $hi);
            let ys: Vec<f64> = points(n + 7, $lo2, $hi2).into_iter().skip(7).collect();
            let x = Var::new(MatrixCl::from_slice(n, 1, &xs)?);
            let y = Var::new(MatrixCl::from_slice(n, 1, &ys)?);
            colwise_sum(clfuse::clfuse_ops::$name(&x, &y)).eval()?.grad()?;
            let (hx, hy) = (steps(&xs), steps(&ys));
            let shift = |v: &[f64], h: &[f64], sign: f64| -> Result<MatrixCl<f64>> {
                MatrixCl::from_slice(n, 1, &v.iter().zip(h).map(|(v, h)| v + sign * h).collect::<Vec<_>>())
            };
            let (xc, yc) = (MatrixCl::from_slice(n, 1, &xs)?, MatrixCl::from_slice(n, 1, &ys)?);
            let (xp, xm) = (shift(&xs, &hx, 1.0)?, shift(&xs, &hx, -1.0)?);
            let (yp, ym) = (shift(&ys, &hy, 1.0)?, shift(&ys, &hy, -1.0)?);
            let dx = (clfuse::clfuse_ops::$name(&xp, &yc) - clfuse::clfuse_ops::$name(&xm, &yc)).eval()?.to_vec()?;
            let dy = (clfuse::clfuse_ops::$name(&xc, &yp) - clfuse::clfuse_ops::$name(&xc, &ym)).eval()?.to_vec()?;
            let want_x: Vec<f64> = dx.iter().zip(&hx).map(|(d, h)| d / (2.0 * h)).collect();
            let want_y: Vec<f64> = dy.iter().zip(&hy).map(|(d, h)| d / (2.0 * h)).collect();
            assert_gradient(concat!(stringify!($name), " d/dx"), &x.adjoint().to_vec()?, &want_x);
            assert_gradient(concat!(stringify!($name), " d/dy"), &y.adjoint().to_vec()?, &want_y);
            rev::clear()
        }
    )*};
}

binary! {
    pow: [0.2, 3.0], [-2.0, 2.0];
    fmin: [-3.0, 3.0], [-3.0, 3.0];
    fmax: [-3.0, 3.0], [-3.0, 3.0];
    fmod: [1.0, 9.0], [0.7, 2.9];
    hypot: [-3.0, 3.0], [-3.0, 3.0];
    fdim: [-3.0, 3.0], [-3.0, 3.0];
    lbeta: [0.2, 5.0], [0.2, 5.0];
    binomial_coefficient_log: [5.0, 20.0], [0.5, 4.5];
    lmultiply: [-3.0, 3.0], [0.1, 5.0];
    log_diff_exp: [1.0, 3.0], [-3.0, 0.9];
    log_sum_exp: [-3.0, 3.0], [-3.0, 3.0];
    log_inv_logit_diff: [0.5, 3.0], [-3.0, 0.4];
    // Exponents in (1, 2): the finite differences stay at one integer.
    ldexp: [-3.0, 3.0], [1.2, 1.8];
    elt_multiply: [-3.0, 3.0], [-3.0, 3.0];
    elt_divide: [-3.0, 3.0], [0.5, 3.0];
}

/// `copysign(x, y)` moves with `x` only.
#[test]
fn copysign_follows_its_magnitude() -> Result<()> {
    let xs = points(31, 0.2, 3.0);
    let ys: Vec<f64> = (0..31)
        .map(|k| if k % 2 == 0 { 1.5 } else { -0.5 })
        .collect();
    let x = Var::new(MatrixCl::from_slice(31, 1, &xs)?);
    let y = Var::new(MatrixCl::from_slice(31, 1, &ys)?);
    colwise_sum(copysign(&x, &y)).eval()?.grad()?;
    let want: Vec<f64> = ys.iter().map(|y| y.signum()).collect();
    assert_eq!(x.adjoint().to_vec()?, want);
    assert_eq!(y.adjoint().to_vec()?, vec![0.0; 31]);
    rev::clear()
}

/// `+`, `-`, unary `-`, and scalars on either side.
#[test]
fn arithmetic_with_scalars_and_constants() -> Result<()> {
    let xs = points(33, -2.0, 2.0);
    let cs = points(33, 0.5, 1.5);
    let x = Var::new(MatrixCl::from_slice(33, 1, &xs)?);
    let c = MatrixCl::from_slice(33, 1, &cs)?;
    // f = sum(3 x - x / c + (-x) * x + 2 - c)
    colwise_sum(
        3.0f64 * &x - clfuse::clfuse_ops::elt_divide(&x, &c)
            + clfuse::clfuse_ops::elt_multiply(-&x, &x)
            + 2.0
            - &c,
    )
    .eval()?
    .grad()?;
    let want: Vec<f64> = xs
        .iter()
        .zip(&cs)
        .map(|(x, c)| 3.0 - 1.0 / c - 2.0 * x)
        .collect();
    assert_gradient("arithmetic", &x.adjoint().to_vec()?, &want);
    rev::clear()
}

/// A custom snippet with declared derivatives: two outputs sharing one
/// snippet, a variable and a constant input, a variable used by both
/// outputs; checked against central differences of the snippet's own values.
#[test]
fn custom_code_with_declared_derivatives() -> Result<()> {
    use clfuse::clfuse_ops::CustomCode;
    for n in [1, 33, 1000] {
        let xs = points(n, -2.0, 2.0);
        let ws = points(n, 0.5, 1.5);
        let cs = points(n, -1.0, 1.0);
        let f = |x: &[f64], w: &[f64]| -> f64 {
            // Σ (x w + c)² + exp(x)
            (0..n)
                .map(|i| (x[i] * w[i] + cs[i]).powi(2) + x[i].exp())
                .sum()
        };
        let x = Var::new(MatrixCl::from_slice(n, 1, &xs)?);
        let w = Var::new(MatrixCl::from_slice(n, 1, &ws)?);
        let c = MatrixCl::from_slice(n, 1, &cs)?;
        let snippet =
            CustomCode::<f64>::new("{u} = {x} * {w} + {c};\n{e} = exp({x});", &["u", "e"])
                .input("x", &x)
                .input("w", &w)
                .input("c", &c)
                .derivative("u", "x", "{w}")?
                .derivative("u", "w", "{x}")?
                .derivative("e", "x", "{e}")?
                .derivative("e", "w", "0")?;
        let u = snippet.output("u")?;
        let total = colwise_sum(clfuse::clfuse_ops::square(&u) + snippet.output("e")?).eval()?;
        assert!((total.value().to_vec()?[0] - f(&xs, &ws)).abs() < 1e-9 * f(&xs, &ws).abs());
        total.grad()?;
        let diff = |k: usize, of_x: bool| {
            let h = 1e-5;
            let (mut xp, mut wp) = (xs.clone(), ws.clone());
            let (mut xm, mut wm) = (xs.clone(), ws.clone());
            if of_x {
                xp[k] += h;
                xm[k] -= h;
            } else {
                wp[k] += h;
                wm[k] -= h;
            }
            (f(&xp, &wp) - f(&xm, &wm)) / (2.0 * h)
        };
        let want_x: Vec<f64> = (0..n).map(|k| diff(k, true)).collect();
        let want_w: Vec<f64> = (0..n).map(|k| diff(k, false)).collect();
        assert_gradient("d/dx", &x.adjoint().to_vec()?, &want_x);
        assert_gradient("d/dw", &w.adjoint().to_vec()?, &want_w);
        rev::clear()?;
    }
    Ok(())
}

#[test]
fn custom_code_without_a_derivative_is_an_error() -> Result<()> {
    use clfuse::clfuse_ops::CustomCode;
    let x = Var::new(MatrixCl::from_slice(3, 1, &[1.0, 2.0, 3.0])?);
    let snippet = CustomCode::<f64>::new("{y} = sin({x});", &["y"]).input("x", &x);
    let err = colwise_sum(snippet.output("y")?)
        .eval()
        .expect_err("no derivative declared");
    assert!(
        err.to_string().contains("`y`") && err.to_string().contains("`x`"),
        "{err}"
    );
    let named = CustomCode::<f64>::new("{y} = sin({x});", &["y"]).input("x", &x);
    assert!(
        named.derivative("y", "z", "cos({x})").is_err(),
        "no input z"
    );
    let named = CustomCode::<f64>::new("{y} = sin({x});", &["y"]).input("x", &x);
    assert!(
        named.derivative("v", "x", "cos({x})").is_err(),
        "no output v"
    );
    rev::clear()
}
