//! Sweeps (`clfuse_core::enqueue_joined`): launches of one work-group wait
//! and run as one kernel. Every result must equal the same work launched
//! one by one (and a plain loop), whatever comes between the launches: a
//! read, a large launch, a fill, a dropped matrix, another thread, more
//! members than one sweep takes.

use clfuse::clfuse_core::{LaunchSweeps, set_launch_sweeps, sweep_group, thread_kernel_stats};
use clfuse::prelude::*;
use clfuse::{Result, Runtime};

/// Runs `f` with this thread's sweeps set to `sweeps`, restoring the
/// previous setting afterwards.
fn with_sweeps<R>(sweeps: LaunchSweeps, f: impl FnOnce() -> Result<R>) -> Result<R> {
    let before = set_launch_sweeps(sweeps);
    let outcome = f();
    set_launch_sweeps(before);
    outcome
}

fn column(n: usize, salt: f64) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 7 + 3) % 11) as f64 * 0.25 - salt)
        .collect()
}

/// A chain of small steps, each reading the one before: `b = a + 1`,
/// `c = 2 b - a`, `d = exp(c / 8)`, the sum of `d`.
fn chain(a: &MatrixCl<f64>) -> Result<(Vec<f64>, f64)> {
    let b = (a + 1.0).eval()?;
    let c: MatrixCl<f64> = (&b * 2.0 - a).eval()?;
    let d = exp(&c / 8.0).eval()?;
    let total = colwise_sum(&d).eval()?;
    // `b` and `c` are dropped before anything reads `d`: their buffers
    // must stay alive while the sweep that writes them waits.
    drop((b, c));
    Ok((d.to_vec()?, total.to_vec()?[0]))
}

fn chain_on_host(a: &[f64]) -> (Vec<f64>, f64) {
    let d: Vec<f64> = a
        .iter()
        .map(|x| ((2.0 * (x + 1.0) - x) / 8.0).exp())
        .collect();
    let total = d.iter().sum();
    (d, total)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn a_chain_of_small_steps_sweeps_to_the_same_results_at_every_size() -> Result<()> {
    let group = sweep_group(Runtime::get()?);
    // Sizes in one group and past it (which launch on their own).
    for n in [1, 2, 31, 33, group - 1, group, group + 1, 1000] {
        let host = column(n, 0.5);
        let a = MatrixCl::from_slice(n, 1, &host)?;
        let (swept_d, swept_total) = with_sweeps(LaunchSweeps::Always, || chain(&a))?;
        let (alone_d, alone_total) = with_sweeps(LaunchSweeps::Never, || chain(&a))?;
        let (want_d, want_total) = chain_on_host(&host);
        for i in 0..n {
            assert!(close(swept_d[i], want_d[i]), "n = {n}, d[{i}]");
            assert!(close(alone_d[i], want_d[i]), "n = {n}, d[{i}] alone");
        }
        assert!(
            close(swept_total, want_total),
            "n = {n}: {swept_total} vs {want_total}"
        );
        assert!(close(alone_total, want_total), "n = {n}");
    }
    Ok(())
}

#[test]
fn a_swept_chain_takes_fewer_launches() -> Result<()> {
    // Alone in its process: another test thread's wait for the device
    // would launch (and count) this thread's sweeps.
    if crate::common::process::run_alone("sweeps::a_swept_chain_takes_fewer_launches") {
        return Ok(());
    }
    let a = MatrixCl::from_slice(33, 1, &column(33, 0.0))?;
    // Warm: kernels and the sweep's kernel built.
    with_sweeps(LaunchSweeps::Always, || chain(&a))?;
    with_sweeps(LaunchSweeps::Never, || chain(&a))?;
    let launches = |sweeps| -> Result<u64> {
        let before = thread_kernel_stats().queued;
        with_sweeps(sweeps, || chain(&a))?;
        Ok(thread_kernel_stats().queued - before)
    };
    let swept = launches(LaunchSweeps::Always)?;
    let alone = launches(LaunchSweeps::Never)?;
    assert!(alone >= 4, "four steps, {alone} kernels queued");
    assert!(
        swept < alone,
        "swept: {swept} kernels queued, one by one {alone}"
    );
    Ok(())
}

#[test]
fn commands_between_launches_see_the_swept_writes() -> Result<()> {
    with_sweeps(LaunchSweeps::Always, || {
        let n = 40;
        let host = column(n, 1.0);
        let a = MatrixCl::from_slice(n, 1, &host)?;
        let b = (&a * 3.0).eval()?;
        // A read in between launches the pending sweep first.
        let read = b.to_vec()?;
        for i in 0..n {
            assert!(close(read[i], 3.0 * host[i]));
        }
        // A fill of a matrix a waiting launch reads comes after it.
        let c = (&b + 1.0).eval()?;
        b.fill(0.0)?;
        let c = c.to_vec()?;
        for i in 0..n {
            assert!(close(c[i], 3.0 * host[i] + 1.0), "c[{i}] = {}", c[i]);
        }
        // A large launch between small ones runs in order with them.
        let big = MatrixCl::from_slice(5000, 1, &column(5000, 0.0))?;
        let e = (&a + 2.0).eval()?;
        let f = (&big + 1.0).eval()?;
        let g = (&e * 2.0).eval()?;
        let (f, g) = (f.to_vec()?, g.to_vec()?);
        assert!(close(f[4999], column(5000, 0.0)[4999] + 1.0));
        for i in 0..n {
            assert!(close(g[i], 2.0 * (host[i] + 2.0)));
        }
        Ok(())
    })
}

#[test]
fn more_steps_than_one_sweep_takes_run_in_order() -> Result<()> {
    with_sweeps(LaunchSweeps::Always, || {
        let n = 17;
        let mut x = MatrixCl::from_slice(n, 1, &column(n, 0.0))?;
        let mut want = column(n, 0.0);
        for step in 0..40 {
            let scale = 1.0 + step as f64 / 64.0;
            x = (&x * scale + 0.125).eval()?;
            for w in &mut want {
                *w = *w * scale + 0.125;
            }
        }
        let got = x.to_vec()?;
        for i in 0..n {
            assert!(close(got[i], want[i]), "x[{i}] = {} vs {}", got[i], want[i]);
        }
        Ok(())
    })
}

#[test]
fn another_thread_reading_launches_the_sweep() -> Result<()> {
    let n = 9;
    let host = column(n, 0.0);
    let a = MatrixCl::from_slice(n, 1, &host)?;
    let b = with_sweeps(LaunchSweeps::Always, || (&a * 5.0).eval())?;
    // This thread queued `b`'s kernel in a sweep and stops; another reads.
    let read = std::thread::scope(|s| s.spawn(|| b.to_vec()).join()).map_err(|_| {
        clfuse::Error::Unsupported {
            what: "the reading thread panicked".into(),
        }
    })??;
    for i in 0..n {
        assert!(close(read[i], 5.0 * host[i]));
    }
    Ok(())
}

#[test]
fn finishing_the_device_launches_the_sweep() -> Result<()> {
    let a = MatrixCl::from_slice(3, 1, &[1.0, 2.0, 3.0])?;
    let b = with_sweeps(LaunchSweeps::Always, || (&a + 1.0).eval())?;
    Runtime::get()?.finish()?;
    assert_eq!(b.to_vec()?, vec![2.0, 3.0, 4.0]);
    Ok(())
}

#[test]
fn fills_join_sweeps_for_every_element_type_and_size() -> Result<()> {
    with_sweeps(LaunchSweeps::Always, || {
        // Small fills run as sweep members; past 16384 elements, as fills.
        for n in [1, 33, 1000, 16384, 16385] {
            let a = MatrixCl::from_slice(n, 1, &column(n, 0.0))?;
            let b = (&a + 1.0).eval()?;
            b.fill(-2.5)?;
            let c = (&b * 2.0).eval()?;
            assert!(c.to_vec()?.iter().all(|&v| v == -5.0), "n = {n}");
            let ints = MatrixCl::from_slice(n, 1, &vec![7i32; n])?;
            ints.fill(-3)?;
            assert!(ints.to_vec()?.iter().all(|&v| v == -3), "n = {n}");
            let floats = MatrixCl::<f32>::zeros(n, 2)?;
            floats.fill(0.5)?;
            assert!(floats.to_vec()?.iter().all(|&v| v == 0.5), "n = {n}");
        }
        Ok(())
    })
}

#[test]
fn threads_sweep_apart_and_meet_where_they_share_a_matrix() -> Result<()> {
    with_sweeps(LaunchSweeps::Always, || {
        let n = 21;
        let host = column(n, 0.25);
        let a = MatrixCl::from_slice(n, 1, &host)?;
        // This thread's step waits in its sweep ...
        let b = (&a * 4.0).eval()?;
        // ... while chains on other threads sweep their own work, and one
        // of them reads `b`, which launches this thread's sweep first.
        let (want_d, want_total) = chain_on_host(&host);
        let outcomes: Vec<Result<(Vec<f64>, f64, Vec<f64>)>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        with_sweeps(LaunchSweeps::Always, || {
                            let mut last = (Vec::new(), 0.0);
                            for _ in 0..10 {
                                last = chain(&a)?;
                            }
                            let c: MatrixCl<f64> = (&b + 1.0).eval()?;
                            Ok((last.0, last.1, c.to_vec()?))
                        })
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().map_err(|_| clfuse::Error::Unsupported {
                        what: "a chain thread panicked".into(),
                    })?
                })
                .collect()
        });
        for outcome in outcomes {
            let (d, total, c) = outcome?;
            for i in 0..n {
                assert!(close(d[i], want_d[i]));
                assert!(close(c[i], 4.0 * host[i] + 1.0), "c[{i}] = {}", c[i]);
            }
            assert!(close(total, want_total));
        }
        Ok(())
    })
}
