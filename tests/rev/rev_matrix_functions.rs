//! Gradients of Stan's matrix functions (`fusion-ops/src/matrix_functions.rs`)
//! through `rev::Var`, against central finite differences of the same
//! function evaluated on constant matrices (relative 1e-6). Each result is
//! reduced to a number by a fixed weighting, `Σ w ∘ f(x)`, so every element
//! of the result takes part.
use clfuse::Result;
use clfuse::prelude::*;
use clfuse::rev::{self, Var};

/// Points spread over `[lo, hi]`, away from the ends, different per `salt`.
fn points(n: usize, lo: f64, hi: f64, salt: usize) -> Vec<f64> {
    (0..n)
        .map(|k| {
            let u = ((k + 7 * salt) as f64 * 0.618_033_988_7).fract();
            lo + (hi - lo) * (0.05 + 0.9 * u)
        })
        .collect()
}

/// `Σ w ∘ value` with the weights `0.5 + k / len` (never zero).
fn weighted(value: &[f64]) -> f64 {
    let n = value.len() as f64;
    value
        .iter()
        .enumerate()
        .map(|(k, v)| (0.5 + k as f64 / n) * v)
        .sum()
}

fn weights(rows: usize, cols: usize) -> Result<MatrixCl<f64>> {
    let n = (rows * cols) as f64;
    let w: Vec<f64> = (0..rows * cols).map(|k| 0.5 + k as f64 / n).collect();
    MatrixCl::from_slice(rows, cols, &w)
}

/// `grad!(name, [x: (rows, cols, lo, hi), ...] => expression)`: the
/// expression is evaluated once with each argument a `&Var` (its gradient by
/// the tape) and, for the finite differences, with each a `&MatrixCl`.
macro_rules! grad {
    ($($name:ident: [$($arg:ident: ($r:expr, $c:expr, $lo:expr, $hi:expr)),*] => $body:expr;)*) => {$(
        #[test]
        fn $name() -> Result<()> {
            let shapes: Vec<(usize, usize)> = vec![$(($r, $c)),*];
            let mut salt = 0;
            let inputs: Vec<Vec<f64>> = vec![$({
                salt += 1;
                points($r * $c, $lo, $hi, salt)
            }),*];
            let _ = salt;
            // f at constant arguments.
            let f = |inputs: &[Vec<f64>]| -> Result<f64> {
                let mut k = 0;
                $(
                    let $arg = MatrixCl::from_slice(shapes[k].0, shapes[k].1, &inputs[k])?;
                    let $arg = &$arg;
                    k += 1;
                )*
                let _ = k;
                Ok(weighted(&($body).eval()?.to_vec()?))
            };
            // The gradient by the tape.
            let mut k = 0;
            $(
                let $arg = Var::new(MatrixCl::from_slice(shapes[k].0, shapes[k].1, &inputs[k])?);
                let $arg = &$arg;
                k += 1;
            )*
            let _ = k;
            let value: Var = ($body).eval()?;
            let (rows, cols) = (value.value().rows(), value.value().cols());
            let w = weights(rows, cols)?;
            let total = colwise_sum(rowwise_sum(elt_multiply(&value, &w))).eval()?;
            assert!((total.value().to_vec()?[0] - f(&inputs)?).abs() < 1e-9 * f(&inputs)?.abs().max(1.0));
            total.grad()?;
            let adjoints: Vec<Vec<f64>> = vec![$($arg.adjoint().to_vec()?),*];
            for (a, x) in inputs.iter().enumerate() {
                for j in 0..x.len() {
                    let h = 1e-5 * x[j].abs().max(1.0);
                    let mut moved = inputs.clone();
                    moved[a][j] = x[j] + h;
                    let plus = f(&moved)?;
                    moved[a][j] = x[j] - h;
                    let minus = f(&moved)?;
                    let want = (plus - minus) / (2.0 * h);
                    let got = adjoints[a][j];
                    assert!(
                        (got - want).abs() <= 1e-6 * want.abs().max(1.0),
                        "{} argument {a}[{j}]: autodiff {got}, finite difference {want}",
                        stringify!($name)
                    );
                }
            }
            rev::clear()
        }
    )*};
}

grad! {
    dot_product_of_columns: [a: (9, 1, -2.0, 2.0), b: (9, 1, -2.0, 2.0)] => dot_product(a, b);
    dot_product_of_rows: [a: (1, 9, -2.0, 2.0), b: (1, 9, -2.0, 2.0)] => dot_product(a, b);
    dot_self_of_a_column: [v: (9, 1, -2.0, 2.0)] => dot_self(v);
    columns_dot_product_: [a: (5, 3, -2.0, 2.0), b: (5, 3, -2.0, 2.0)] => columns_dot_product(a, b);
    rows_dot_product_: [a: (5, 3, -2.0, 2.0), b: (5, 3, -2.0, 2.0)] => rows_dot_product(a, b);
    columns_dot_self_: [a: (5, 3, -2.0, 2.0)] => columns_dot_self(a);
    rows_dot_self_: [a: (5, 3, -2.0, 2.0)] => rows_dot_self(a);
    mean_: [x: (5, 3, -2.0, 2.0)] => mean(x)?;
    variance_: [x: (9, 1, -2.0, 2.0)] => variance(x)?;
    sd_: [x: (1, 9, -2.0, 2.0)] => sd(x)?;
    trace_: [m: (5, 4, -2.0, 2.0)] => trace(m);
    diag_pre_multiply_: [v: (5, 1, -2.0, 2.0), m: (5, 3, -2.0, 2.0)] => diag_pre_multiply(v, m)?;
    diag_post_multiply_: [m: (5, 3, -2.0, 2.0), v: (1, 3, -2.0, 2.0)] => diag_post_multiply(m, v)?;
    quad_form_diag_: [m: (4, 4, -2.0, 2.0), v: (4, 1, -2.0, 2.0)] => quad_form_diag(m, v)?;
    log_softmax_: [v: (9, 1, -3.0, 3.0)] => log_softmax(v)?;
    log_mix_: [theta: (7, 1, 0.1, 0.9), l1: (7, 1, -3.0, 3.0), l2: (7, 1, -3.0, 3.0)] => log_mix(theta, l1, l2);
    log_mix_vector_: [theta: (7, 1, 0.1, 0.9), lambda: (7, 1, -3.0, 3.0)] => log_mix_vector(theta, lambda);
    reverse_: [v: (9, 1, -2.0, 2.0)] => reverse(v)?;
    cumulative_sum_: [v: (9, 1, -2.0, 2.0)] => cumulative_sum(v)?;
    quad_form_: [a: (4, 4, -2.0, 2.0), b: (4, 3, -2.0, 2.0)] => quad_form(a, b);
    crossprod_: [a: (5, 3, -2.0, 2.0)] => crossprod(a);
    tcrossprod_: [a: (5, 3, -2.0, 2.0)] => tcrossprod(a);
}
