//! `MatrixCl::write_queued`: values written as the arguments of small
//! kernels, without waiting. Every write must read back as written (and as
//! `write` writes), at sizes around the 16, 32 and 64 values the write
//! kernels carry (as vectors of 16) and the 1024 beyond which it writes as
//! `write` does, for
//! each element type,
//! with sweeps on and off, ordered behind reads and before kernels that
//! read it.

use clfuse::clfuse_core::{LaunchSweeps, set_launch_sweeps};
use clfuse::prelude::*;
use clfuse::{Error, Result};

fn with_sweeps<R>(sweeps: LaunchSweeps, f: impl FnOnce() -> Result<R>) -> Result<R> {
    let before = set_launch_sweeps(sweeps);
    let outcome = f();
    set_launch_sweeps(before);
    outcome
}

const SIZES: [usize; 15] = [1, 2, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 1000, 1024, 1025];

#[test]
fn queued_writes_read_back_as_written_at_every_size_and_type() -> Result<()> {
    for sweeps in [LaunchSweeps::Always, LaunchSweeps::Never] {
        with_sweeps(sweeps, || {
            for n in SIZES {
                let doubles: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 - 3.25).collect();
                let m = MatrixCl::<f64>::zeros(n, 1)?;
                m.write_queued(&doubles)?;
                assert_eq!(m.to_vec()?, doubles, "f64, n = {n}, {sweeps:?}");

                let floats: Vec<f32> = (0..n).map(|i| i as f32 * -0.25 + 1.5).collect();
                let m = MatrixCl::<f32>::zeros(1, n)?;
                m.write_queued(&floats)?;
                assert_eq!(m.to_vec()?, floats, "f32, n = {n}, {sweeps:?}");

                let ints: Vec<i32> = (0..n as i32).map(|i| i * 3 - 7).collect();
                let m = MatrixCl::<i32>::zeros(n, 1)?;
                m.write_queued(&ints)?;
                assert_eq!(m.to_vec()?, ints, "i32, n = {n}, {sweeps:?}");
            }
            Ok(())
        })?;
    }
    Ok(())
}

#[test]
fn a_queued_write_is_ordered_between_the_kernels_around_it() -> Result<()> {
    for sweeps in [LaunchSweeps::Always, LaunchSweeps::Never] {
        with_sweeps(sweeps, || {
            for n in [3, 64, 200] {
                let x = MatrixCl::<f64>::zeros(n, 1)?;
                let mut totals = Vec::new();
                for round in 0..4 {
                    let values: Vec<f64> = (0..n).map(|i| (i + round) as f64).collect();
                    // Read by the kernel before it, written, read by the one after.
                    let before = colwise_sum(&x).eval()?;
                    x.write_queued(&values)?;
                    let after = colwise_sum(&x).eval()?;
                    totals.push((before, after, values.iter().sum::<f64>()));
                }
                let mut previous = 0.0;
                for (before, after, want) in totals {
                    assert_eq!(before.to_vec()?[0], previous, "n = {n}, {sweeps:?}");
                    assert_eq!(after.to_vec()?[0], want, "n = {n}, {sweeps:?}");
                    previous = want;
                }
            }
            Ok(())
        })?;
    }
    Ok(())
}

#[test]
fn a_queued_write_of_the_wrong_length_is_an_error_and_writes_nothing() -> Result<()> {
    let m = MatrixCl::from_slice(3, 1, &[1.0, 2.0, 3.0])?;
    let error = m
        .write_queued(&[9.0, 9.0])
        .expect_err("two values for three");
    assert!(
        matches!(
            error,
            Error::SizeMismatch {
                function: "MatrixCl::write_queued",
                expected: 3,
                actual: 2,
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(m.to_vec()?, vec![1.0, 2.0, 3.0]);
    // An empty matrix takes an empty slice.
    MatrixCl::<f64>::empty().write_queued(&[])?;
    Ok(())
}
