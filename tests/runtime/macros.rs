//! A macro-declared kernel at run time (the macros' compile-time checks
//! are clfuse-ops' `tests/compile_fail.rs`).

use clfuse::Result;
use clfuse::prelude::*;

clfuse::clfuse_core::kernel! {
    /// A generic kernel declared from inline source.
    fn axpy<T>(inout y: T, in x: T, a: T) = source "
        __kernel void axpy(__global T* y, const __global T* x, T a) {
          const int i = get_global_id(0);
          y[i] += a * x[i];
        }";
}

#[test]
fn a_declared_kernel_launches_for_each_element_type() -> Result<()> {
    let x = MatrixCl::from_slice(3, 1, &[1.0f64, 2.0, 3.0])?;
    let y = MatrixCl::from_slice(3, 1, &[1.0f64, 1.0, 1.0])?;
    axpy::<f64>().launch(clfuse::clfuse_core::NdRange::d1(3), (&y, &x, 2.0))?;
    assert_eq!(y.to_vec()?, vec![3.0, 5.0, 7.0]);
    let xi = MatrixCl::from_slice(2, 1, &[1, 2])?;
    let yi = MatrixCl::from_slice(2, 1, &[0, 0])?;
    axpy::<i32>().launch(clfuse::clfuse_core::NdRange::d1(2), (&yi, &xi, 5))?;
    assert_eq!(yi.to_vec()?, vec![5, 10]);
    Ok(())
}

clfuse::clfuse_ops::elementwise! {
    /// A user-declared function with a helper-free template.
    pub struct Cube;
    fn cube(x) = "{x} * {x} * {x}";
    result = same;
    view = keep;
}

#[test]
fn a_user_declared_operation_fuses() -> Result<()> {
    let a = MatrixCl::from_slice(3, 1, &[1.0f64, -2.0, 3.0])?.with_view(View::Lower);
    let r = (cube(&a) + 1.0f64).eval()?;
    assert_eq!(r.to_vec()?, vec![2.0, -7.0, 28.0]);
    assert_eq!(cube(&a).eval()?.view(), View::Lower);
    let i = MatrixCl::from_slice(1, 2, &[2, 3])?;
    assert_eq!((&i).cube().eval()?.to_vec()?, vec![8, 27]);
    Ok(())
}
