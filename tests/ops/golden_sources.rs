//! The generated OpenCL C for a few expressions is stable and readable.
//! Regenerate on purpose with `FUSION_BLESS=1 cargo test --test ops -- golden_sources::`.

use clfuse::Result;
use clfuse::prelude::*;

use crate::common;

#[test]
fn golden_sources() -> Result<()> {
    let a = MatrixCl::<f64>::zeros(2, 2)?;
    let b = MatrixCl::<f64>::zeros(2, 2)?;
    let f = MatrixCl::<f32>::zeros(2, 2)?;
    let d = MatrixCl::<f64>::zeros(2, 2)?;
    let e = MatrixCl::<f64>::zeros(2, 2)?;
    common::check_golden("scaled_sum", &(2.0f64 * (&a + &b)).kernel_source()?);
    common::check_golden("same_matrix_twice", &(&a + &a).kernel_source()?);
    common::check_golden(
        "float_stats_helpers",
        &log_sum_exp(log1p_exp(&f), inv_logit(&f) * 2.0f32).kernel_source()?,
    );
    common::check_golden(
        "select_and_compare",
        &select(lt(&a, 0.0), -&a, sqrt(&a)).kernel_source()?,
    );
    common::check_golden(
        "multi_output",
        &results((&d, &e)).kernel_source((&a + &b, elt_multiply(&a, &b)))?,
    );
    let rows = MatrixCl::<i32>::zeros(2, 2)?;
    common::check_golden(
        "gather_checked",
        &(indexing(&a, &rows, 1) * 2.0).kernel_source()?,
    );
    Ok(())
}
