//! Lanes (`Runtime::enter_lane`): threads that queue on queues of their
//! own, as a sampler's chains do. Only events order commands across lanes:
//! a matrix written in one lane and read in another (and the reverse) must
//! be seen whole, launches held in one lane's sweep must run before another
//! lane reads what they write, and work queued before the first lane
//! opened (which recorded no events on NVIDIA) must be done before a lane
//! uses it. Lanes are on by default on GPUs only; `make test` runs this
//! module again with `FUSION_LANES=1`, and each test checks that a lane was
//! given exactly when they are on.

use clfuse::clfuse_core::{
    Access, FusedKernel, KernelArg, MAX_LANES, NdRange, compile_kernel, enqueue_joined, sweep_group,
};
use clfuse::prelude::*;
use clfuse::{Lane, Result, Runtime};
use std::sync::{Arc, mpsc};

use crate::common::{self, INCREMENT_K};

/// Enters a lane and checks its index against the device's setting.
fn enter() -> Result<Lane> {
    let rt = Runtime::get()?;
    let lane = rt.enter_lane()?;
    if rt.lanes_enabled() {
        assert!((1..MAX_LANES).contains(&lane.index()), "{}", lane.index());
    } else {
        assert_eq!(lane.index(), 0);
    }
    Ok(lane)
}

/// `rounds` dependent steps `x <- 0.5 x + data` from `x = 0`, on the CPU.
fn steps_on_host(data: &[f64], rounds: usize) -> Vec<f64> {
    let mut x = vec![0.0; data.len()];
    for _ in 0..rounds {
        for (x, d) in x.iter_mut().zip(data) {
            *x = 0.5 * *x + d;
        }
    }
    x
}

fn data(n: usize, seed: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 7 + seed * 13) % 29) as f64 - 14.0)
        .collect()
}

#[test]
fn lanes_are_given_and_given_back() -> Result<()> {
    let outer = enter()?;
    {
        let inner = enter()?;
        // Different threads share lanes only past MAX_LANES - 1 users.
        if Runtime::get()?.lanes_enabled() {
            assert_ne!(inner.index(), outer.index());
        }
        let x = MatrixCl::from_slice(3, 1, &[1.0f64, 2.0, 3.0])?;
        assert_eq!((&x + &x).eval()?.to_vec()?, vec![2.0, 4.0, 6.0]);
    }
    // Back in the outer lane: its queue still runs this thread's work.
    let x = MatrixCl::from_slice(2, 1, &[1.0f64, -1.0])?;
    assert_eq!((&x * 3.0).eval()?.to_vec()?, vec![3.0, -3.0]);
    drop(outer);
    Ok(())
}

#[test]
fn a_matrix_written_in_one_lane_is_read_whole_in_another() -> Result<()> {
    for n in [1, 31, 33, 1000, 100_003] {
        let values = data(n, n);
        let rounds = 40;
        let (to_reader, from_writer) = mpsc::channel::<MatrixCl<f64>>();
        let (back, returned) = mpsc::channel::<MatrixCl<f64>>();
        let (doubled, read_doubled) = std::thread::scope(|scope| -> Result<_> {
            let values = &values;
            let writer = scope.spawn(move || -> Result<Vec<f64>> {
                let _lane = enter()?;
                let d = MatrixCl::from_slice(n, 1, values)?;
                let mut x = MatrixCl::<f64>::zeros(n, 1)?;
                for _ in 0..rounds {
                    let next: MatrixCl<f64> = (&x * 0.5 + &d).eval()?;
                    x = next;
                }
                // Read in this lane (queued, not waited for), then handed over:
                // the reader's overwrite must wait for this read.
                let twice: MatrixCl<f64> = (&x * 2.0).eval()?;
                to_reader.send(x.share()).ok();
                // The reader's overwrite comes back; this lane reads it.
                let overwritten = returned.recv().ok();
                assert!(overwritten.is_some(), "the reader sent nothing back");
                let twice = twice.to_vec()?;
                if let Some(m) = overwritten {
                    assert!(m.to_vec()?.iter().all(|v| *v == -1.0), "n = {n}");
                }
                Ok(twice)
            });
            let reader = scope.spawn(move || -> Result<Vec<f64>> {
                let _lane = enter()?;
                let Ok(x) = from_writer.recv() else {
                    return Ok(Vec::new());
                };
                // Read at once, in this lane: the writer's 40 steps must be done.
                let seen = (&x + 0.0).eval()?;
                x.fill(-1.0)?;
                back.send(x).ok();
                seen.to_vec()
            });
            let doubled = writer.join().expect("the writer thread")?;
            let read = reader.join().expect("the reader thread")?;
            Ok((doubled, read))
        })?;
        let expected = steps_on_host(&values, rounds);
        assert_eq!(read_doubled, expected, "read in another lane, n = {n}");
        let twice: Vec<f64> = expected.iter().map(|v| 2.0 * v).collect();
        assert_eq!(
            doubled, twice,
            "read before another lane's overwrite, n = {n}"
        );
    }
    Ok(())
}

#[test]
fn chains_in_lanes_agree_with_one_thread() -> Result<()> {
    let n = 4099;
    let shared = MatrixCl::from_slice(n, 1, &data(n, 1))?;
    let host_data = data(n, 1);
    let chains = 4;
    let rounds = 25;
    // Each chain: its own state, the shared data, a scalar read per round.
    let run = |chain: usize| -> Result<Vec<f64>> {
        let scale = 1.0 + chain as f64;
        let mut x = MatrixCl::<f64>::zeros(n, 1)?;
        let mut sums = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let next: MatrixCl<f64> = (&x * 0.5 + &shared * scale).eval()?;
            x = next;
            sums.push(colwise_sum(&x).eval()?.to_vec()?[0]);
        }
        Ok(sums)
    };
    let in_lanes: Vec<Vec<f64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..chains)
            .map(|chain| {
                scope.spawn(move || -> Result<Vec<f64>> {
                    let _lane = enter()?;
                    run(chain)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a chain thread"))
            .collect::<Result<_>>()
    })?;
    for (chain, sums) in in_lanes.iter().enumerate() {
        assert_eq!(sums, &run(chain)?, "chain {chain}");
        // And against the CPU, to the rounding of a sum's order.
        let scaled: Vec<f64> = host_data.iter().map(|d| d * (1.0 + chain as f64)).collect();
        let expected: f64 = steps_on_host(&scaled, rounds).iter().sum();
        let last = sums[rounds - 1];
        assert!(
            (last - expected).abs() <= 1e-9 * expected.abs().max(1.0),
            "chain {chain}: {last} vs {expected}"
        );
    }
    Ok(())
}

#[test]
fn launches_held_in_one_lane_run_before_another_lane_reads() -> Result<()> {
    let source = "__kernel void bump(__global int* x, int n) {
  if (get_global_id(0) < n) x[get_global_id(0)] += 1;
}";
    let bump = Arc::new(FusedKernel::new(
        compile_kernel("bump", source, "", "bump")?,
        source.into(),
    ));
    let n = 3;
    let x = MatrixCl::<i32>::zeros(n, 1)?;
    let (ready, wait_ready) = mpsc::channel::<()>();
    let (done, wait_done) = mpsc::channel::<()>();
    std::thread::scope(|scope| -> Result<()> {
        let (x, bump) = (&x, &bump);
        let holder = scope.spawn(move || -> Result<()> {
            let _lane = enter()?;
            let group = sweep_group(Runtime::get()?);
            let range = NdRange::d1(group).with_local(&[group]);
            // Five one-group launches, held in this thread's sweep.
            let held = (0..5).try_for_each(|_| {
                let args = [
                    KernelArg::buffer(x, Access::ReadWrite),
                    KernelArg::Int(n as i32),
                ];
                enqueue_joined(bump, &args, range, true)
            });
            ready.send(()).ok();
            // Stays in its lane, queuing nothing, until the reader is done.
            wait_done.recv().ok();
            held
        });
        let reader = scope.spawn(move || -> Result<()> {
            let _lane = enter()?;
            wait_ready.recv().ok();
            let seen = x.to_vec();
            done.send(()).ok();
            assert_eq!(seen?, vec![5; n]);
            Ok(())
        });
        holder.join().expect("the holding thread")?;
        reader.join().expect("the reading thread")
    })?;
    Ok(())
}

#[test]
fn work_queued_before_the_first_lane_is_done_before_a_lane_uses_it() -> Result<()> {
    // Alone in its process: the first lane of the process opens here, after
    // commands queued without events (on NVIDIA's in-order queue).
    if common::process::run_alone(
        "lanes::work_queued_before_the_first_lane_is_done_before_a_lane_uses_it",
    ) {
        return Ok(());
    }
    let n = 100_003;
    let a = MatrixCl::<i32>::zeros(n, 1)?;
    for _ in 0..300 {
        INCREMENT_K.launch(NdRange::d1(n), (&a, n as i32))?;
    }
    let seen = std::thread::scope(|scope| {
        scope
            .spawn(|| -> Result<Vec<i32>> {
                let _lane = enter()?;
                // A kernel in the lane reads it, then the copy: both behind the 300.
                (&a + 0).eval()?.to_vec()
            })
            .join()
            .expect("the lane's thread")
    })?;
    assert!(seen.iter().all(|v| *v == 300));
    // And the main queue, now tracking events, still sees its own order.
    INCREMENT_K.launch(NdRange::d1(n), (&a, n as i32))?;
    assert!(a.to_vec()?.iter().all(|v| *v == 301));
    Ok(())
}
