//! Declaring your own element-wise operation: `cargo run --example user_function`.
//!
//! A centred softplus, `log(1 + e^x) - log 2`, is zero at zero, so it keeps
//! the triangular view of its operand (a custom view rule); it reuses the
//! library's numerically stable `log1p_exp` device helper and fuses with the
//! rest of the expression into one kernel.

use clfuse::Result;
use clfuse::clfuse_ops::device_functions::LOG1P_EXP;
use clfuse::prelude::*;

clfuse::clfuse_ops::elementwise! {
    /// Centred softplus: `log1p_exp(x) - log(2)`.
    pub struct CentredSoftplus;
    fn centred_softplus(x) = "log1p_exp{F}({x}) - 0.6931471805599453";
    result = real;
    view = keep;
    helpers = [LOG1P_EXP];
}

fn main() -> Result<()> {
    let n = 5;
    let host: Vec<f64> = (0..n * n).map(|k| k as f64 / 4.0 - 3.0).collect();
    let a = MatrixCl::from_slice(n, n, &host)?.with_view(View::Lower);
    let before = thread_kernel_stats();
    let r = (2.0f64 * centred_softplus(&a)).eval()?;
    let stats = thread_kernel_stats() - before;
    println!(
        "2 * centred_softplus(a): {} kernel built, {} launched",
        stats.built(),
        stats.launched
    );
    assert_eq!(stats.launched, 1);
    assert_eq!(
        r.view(),
        View::Lower,
        "the custom view rule keeps the triangle"
    );
    let got = r.to_vec()?;
    for j in 0..n {
        for i in 0..n {
            let x = if i >= j { host[i + n * j] } else { 0.0 };
            let want = 2.0 * ((x.max(0.0) + (-x.abs()).exp().ln_1p()) - std::f64::consts::LN_2);
            assert!((got[i + n * j] - want).abs() < 1e-14, "({i}, {j})");
        }
    }
    let f = MatrixCl::from_slice(1, 3, &[-800.0f32, 0.0, 800.0])?;
    println!(
        "centred_softplus(f32 [-800, 0, 800]) = {:?}",
        centred_softplus(&f).eval()?.to_vec()?
    );
    println!("{}", centred_softplus(&a).kernel_source()?);
    Ok(())
}
