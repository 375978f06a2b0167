//! The generated OpenCL C for a few expressions is stable and readable.
//! Regenerate on purpose with `FUSION_BLESS=1 cargo test --test golden_sources`.

use clfuse::Result;
use clfuse::prelude::*;

fn check(name: &str, source: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.cl"));
    if std::env::var_os("FUSION_BLESS").is_some() {
        std::fs::write(&path, source).expect("write golden file");
        return;
    }
    let golden = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing golden file {}", path.display()));
    assert_eq!(source, golden, "generated source for {name} changed");
}

#[test]
fn golden_sources() -> Result<()> {
    let a = MatrixCl::<f64>::zeros(2, 2)?;
    let b = MatrixCl::<f64>::zeros(2, 2)?;
    let f = MatrixCl::<f32>::zeros(2, 2)?;
    let d = MatrixCl::<f64>::zeros(2, 2)?;
    let e = MatrixCl::<f64>::zeros(2, 2)?;
    check("scaled_sum", &(2.0f64 * (&a + &b)).kernel_source()?);
    check("same_matrix_twice", &(&a + &a).kernel_source()?);
    check(
        "float_stats_helpers",
        &log_sum_exp(log1p_exp(&f), inv_logit(&f) * 2.0f32).kernel_source()?,
    );
    check(
        "select_and_compare",
        &select(lt(&a, 0.0), -&a, sqrt(&a)).kernel_source()?,
    );
    check(
        "multi_output",
        &results((&d, &e)).kernel_source((&a + &b, elt_multiply(&a, &b)))?,
    );
    Ok(())
}
