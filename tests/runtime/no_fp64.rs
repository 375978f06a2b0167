//! Using f64 on a device without fp64 is an error (forced by configuration).

use crate::common;
use clfuse::Result;
use clfuse::prelude::*;
use clfuse::{Error, RuntimeConfig};

#[test]
fn f64_without_fp64_is_unsupported() -> Result<()> {
    // Alone in its process: configures the runtime before its first use.
    if common::process::run_alone("no_fp64::f64_without_fp64_is_unsupported") {
        return Ok(());
    }
    clfuse::configure(RuntimeConfig {
        force_no_fp64: true,
        ..RuntimeConfig::from_env()?
    })?;
    let e = MatrixCl::from_slice(1, 1, &[1.0f64]).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    assert!(e.to_string().contains("fp64"), "{e}");
    assert!(matches!(
        MatrixCl::<f64>::zeros(2, 2),
        Err(Error::Unsupported { .. })
    ));
    // f32 and i32 keep working, and an expression promoting to double is refused.
    let a = MatrixCl::from_slice(1, 2, &[1.0f32, 2.0])?;
    assert_eq!((&a + &a).eval()?.to_vec()?, vec![2.0, 4.0]);
    let i = MatrixCl::from_slice(1, 2, &[1, 2])?;
    assert!(matches!(exp(&i).eval(), Err(Error::Unsupported { .. })));
    Ok(())
}
