//! The kernel cache: one kernel per expression structure, aliasing in the key.
//! One test function, alone in its process (a child of the test binary), so
//! that no other test compiles kernels while counting.

use crate::common;
use clfuse::Result;
use clfuse::prelude::*;

#[test]
fn cache_behaviour() -> Result<()> {
    // Alone in its process: the counts are process-wide.
    if common::process::run_alone("kernel_cache::cache_behaviour") {
        return Ok(());
    }
    // Every launch queued on its own: a sweep (on GPUs) builds a kernel of
    // its own, counted here (`tests/runtime/sweeps.rs` covers sweeps).
    clfuse::clfuse_core::set_launch_sweeps(clfuse::clfuse_core::LaunchSweeps::Never);
    // d = c * (a + b): one kernel, one launch; other sizes and scalars reuse it.
    let a = MatrixCl::from_slice(3, 1, &[1.0, 2.0, 3.0])?;
    let b = MatrixCl::from_slice(3, 1, &[4.0, 5.0, 6.0])?;
    let d = MatrixCl::<f64>::zeros(3, 1)?;
    let c = 2.0;
    let before = kernel_stats();
    d.assign(c * (&a + &b))?;
    let delta = kernel_stats() - before;
    assert_eq!((delta.built(), delta.launched), (1, 1));
    assert_eq!(d.to_vec()?, vec![10.0, 14.0, 18.0]);

    let a2 = MatrixCl::from_slice(2, 5, &[1.0; 10])?;
    let b2 = MatrixCl::from_slice(2, 5, &[0.5; 10])?;
    let d2 = MatrixCl::<f64>::zeros(2, 5)?;
    let before = kernel_stats();
    d2.assign(-3.0 * (&a2 + &b2))?;
    let delta = kernel_stats() - before;
    assert_eq!(
        (delta.built(), delta.launched),
        (0, 1),
        "other sizes and scalars reuse the kernel"
    );
    assert_eq!(d2.to_vec()?, vec![-4.5; 10]);

    // A scalar-or-column operand: scalar and column are different kernels;
    // another scalar value or column reuses its kernel.
    let shift = MatrixCl::from_slice(3, 1, &[0.25, 0.5, 0.75])?;
    let before = kernel_stats();
    for (value, expected) in [
        (ScalarOrColumn::Scalar(1.0), vec![2.0, 3.0, 4.0]),
        (ScalarOrColumn::Column(&shift), vec![1.25, 2.5, 3.75]),
        (ScalarOrColumn::Scalar(-1.0), vec![0.0, 1.0, 2.0]),
        (ScalarOrColumn::Column(&b), vec![5.0, 7.0, 9.0]),
    ] {
        d.assign(&a + scalar_or_column(value))?;
        assert_eq!(d.to_vec()?, expected);
    }
    let delta = kernel_stats() - before;
    assert_eq!((delta.built(), delta.launched), (2, 4));

    // a + a and a + b must not share a kernel, in either order.
    let x = MatrixCl::from_slice(2, 1, &[1.0, 10.0])?;
    let y = MatrixCl::from_slice(2, 1, &[100.0, 1000.0])?;
    let before = kernel_stats();
    assert_eq!((&x + &x).eval()?.to_vec()?, vec![2.0, 20.0]);
    assert_eq!((&x + &y).eval()?.to_vec()?, vec![101.0, 1010.0]);
    assert_eq!((&y + &y).eval()?.to_vec()?, vec![200.0, 2000.0]);
    assert_eq!((&y + &x).eval()?.to_vec()?, vec![101.0, 1010.0]);
    let delta = kernel_stats() - before;
    assert_eq!(
        delta.built(),
        2,
        "a+a and a+b: two kernels, reused for y+y and y+x"
    );

    // Output aliasing an input is a different kernel from a fresh output.
    let before = kernel_stats();
    x.assign(&x + &y)?;
    assert_eq!(x.to_vec()?, vec![101.0, 1010.0]);
    y.assign(&x + &y)?;
    assert_eq!(y.to_vec()?, vec![201.0, 2010.0]);
    let z = MatrixCl::<f64>::zeros(2, 1)?;
    z.assign(&x + &y)?;
    assert_eq!(z.to_vec()?, vec![302.0, 3020.0]);
    let delta = kernel_stats() - before;
    assert_eq!(
        delta.built(),
        2,
        "x = x + y and y = x + y alias differently; z = x + y reuses a+b"
    );

    // A cache hit launches without generating source: the cached source is the one generated.
    let before = kernel_stats();
    for k in 0..100 {
        d.assign(k as f64 * (&a + &b))?;
    }
    let delta = kernel_stats() - before;
    assert_eq!((delta.built(), delta.launched), (0, 100));
    assert_eq!(d.to_vec()?, vec![99.0 * 5.0, 99.0 * 7.0, 99.0 * 9.0]);
    Ok(())
}

#[test]
fn dumped_kernels_are_named_by_cache_key() -> Result<()> {
    // Runs in a child process so the environment variable applies from the start.
    if let Some(dir) = std::env::var_os("FUSION_DUMP_KERNELS") {
        let m = MatrixCl::from_slice(1, 1, &[1.0f32])?;
        let _ = (&m * 3.0f32 + 1.0f32).eval()?;
        let names: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| clfuse::Error::Unsupported {
                what: e.to_string(),
            })?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names
                .iter()
                .any(|n| n.starts_with("fused_") && n.ends_with(".cl")),
            "{names:?}"
        );
        return Ok(());
    }
    let dir = std::env::temp_dir().join(format!("fusion-dump-{}", std::process::id()));
    let status = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "kernel_cache::dumped_kernels_are_named_by_cache_key",
        ])
        .env("FUSION_DUMP_KERNELS", &dir)
        .status()
        .expect("spawn child test");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(status.success());
    Ok(())
}
