//! The second compute queue (`Runtime::on_side_queue`): work there runs
//! after what the main queue held when it was queued, and the main queue's
//! commands after a join see its results.

use clfuse::prelude::*;
use clfuse::{Error, Result, Runtime};

#[test]
fn side_work_runs_after_the_main_queue_and_before_what_follows_its_join() -> Result<()> {
    let rt = Runtime::get()?;
    for n in [1, 33, 1000] {
        let x = MatrixCl::<f64>::zeros(n, 1)?;
        // Queued on the main queue before the fork: the side work reads it.
        x.fill(1.5)?;
        let y = MatrixCl::<f64>::zeros(n, 1)?;
        let z = MatrixCl::<f64>::zeros(n, 1)?;
        let side = rt.on_side_queue(|| {
            for _ in 0..4 {
                y.assign(&y + &x)?;
            }
            Ok(())
        })?;
        // Meanwhile on the main queue: touches neither `x` nor `y`.
        z.fill(-2.0)?;
        side.join()?;
        let total = (&y + &z).eval()?;
        assert_eq!(total.to_vec()?, vec![4.0; n], "n = {n}");
    }
    Ok(())
}

#[test]
fn dropping_side_work_joins_it() -> Result<()> {
    let rt = Runtime::get()?;
    let y = MatrixCl::<f32>::zeros(257, 3)?;
    drop(rt.on_side_queue(|| y.fill(7.0))?);
    assert_eq!((&y * 2.0f32).eval()?.to_vec()?, vec![14.0; 257 * 3]);
    Ok(())
}

#[test]
fn nested_side_work_runs_in_order_on_the_side_queue() -> Result<()> {
    let rt = Runtime::get()?;
    let y = MatrixCl::<f64>::zeros(65, 1)?;
    let outer = rt.on_side_queue(|| {
        y.fill(1.0)?;
        // Already on the side queue: runs there in order, nothing to join.
        rt.on_side_queue(|| y.assign(&y * 3.0))?.join()?;
        y.assign(&y + 1.0)
    })?;
    outer.join()?;
    assert_eq!(y.to_vec()?, vec![4.0; 65]);
    Ok(())
}

#[test]
fn an_error_in_side_work_is_returned_and_the_queues_go_on() -> Result<()> {
    let rt = Runtime::get()?;
    let y = MatrixCl::<f64>::zeros(31, 1)?;
    let err = rt
        .on_side_queue(|| {
            y.fill(5.0)?;
            // Mismatched sizes: the assignment refuses before queueing.
            y.assign(MatrixCl::<f64>::zeros(2, 2)? + 1.0)
        })
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::SizeMismatch { .. } | Error::DimensionMismatch { .. }
        ),
        "{err}"
    );
    // What was queued before the error ran, and later commands see it.
    assert_eq!((&y + 1.0).eval()?.to_vec()?, vec![6.0; 31]);
    Ok(())
}

#[test]
fn threads_share_the_side_queue_soundly() -> Result<()> {
    let rt = Runtime::get()?;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|t| {
                scope.spawn(move || -> Result<()> {
                    let value = t as f64 + 1.0;
                    for n in [1, 33, 300] {
                        let y = MatrixCl::<f64>::zeros(n, 2)?;
                        let side = rt.on_side_queue(|| {
                            y.fill(value)?;
                            y.assign(&y * 2.0)
                        })?;
                        side.join()?;
                        assert_eq!(y.to_vec()?, vec![2.0 * value; 2 * n], "thread {t}");
                    }
                    Ok(())
                })
            })
            .collect();
        workers
            .into_iter()
            .try_for_each(|w| w.join().unwrap_or_else(|_| panic!("a worker panicked")))
    })
}
