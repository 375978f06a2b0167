//! One matrix shared between threads: every read-back sees one whole write
//! (on the default queue, and on an out-of-order one), and
//! threads meeting one new expression at once share one compile.
//!
//! `FUSION_SOUNDNESS_ROUNDS` sets the rounds of the read/write test (50 by
//! default); `make test` also runs this file under `FUSION_QUEUE=out-of-order`.

use clfuse::Result;
use clfuse::prelude::*;
use std::sync::{Arc, Barrier};

fn rounds() -> usize {
    std::env::var("FUSION_SOUNDNESS_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50)
}

/// Large enough that a copy and a write overlap when nothing orders them.
const N: usize = 1 << 20;

/// `Ok(value)` when every element is the same value.
fn uniform(v: &[f32]) -> std::result::Result<f32, String> {
    let first = v.first().copied().unwrap_or(0.0);
    match v.iter().position(|x| *x != first) {
        None => Ok(first),
        Some(k) => Err(format!(
            "torn read: v[0] = {first}, v[{k}] = {}, v[last] = {}",
            v[k],
            v[v.len() - 1]
        )),
    }
}

/// One thread fills the matrix with 1, 2, 3, … while another reads it back;
/// a second pair assigns fused expressions and reads their own results.
#[test]
fn every_read_back_is_one_whole_write() -> Result<()> {
    let m = Arc::new(MatrixCl::<f32>::zeros(N, 1)?);
    let source = Arc::new(MatrixCl::<f32>::zeros(N, 1)?);
    for round in 0..rounds() {
        let writes = 8;
        let start = Arc::new(Barrier::new(4));
        let filler = {
            let (m, start) = (m.clone(), start.clone());
            std::thread::spawn(move || -> Result<()> {
                start.wait();
                for k in 1..=writes {
                    m.fill(k as f32)?;
                }
                Ok(())
            })
        };
        let reader = {
            let (m, start) = (m.clone(), start.clone());
            std::thread::spawn(move || -> std::result::Result<Vec<f32>, String> {
                start.wait();
                let mut seen = Vec::new();
                for _ in 0..writes {
                    let v = m.to_vec().map_err(|e| e.to_string())?;
                    seen.push(uniform(&v)?);
                }
                Ok(seen)
            })
        };
        // Two threads assigning to one target and reading it back: each
        // read-back is some thread's whole result.
        let assigners: Vec<_> = [100.0f32, 200.0]
            .into_iter()
            .map(|offset| {
                let (target, source, start) = (m.clone(), source.clone(), start.clone());
                std::thread::spawn(move || -> std::result::Result<(), String> {
                    start.wait();
                    for k in 0..4 {
                        let value = offset + k as f32;
                        target.assign(&*source + value).map_err(|e| e.to_string())?;
                        let v = target.to_vec().map_err(|e| e.to_string())?;
                        uniform(&v)?;
                    }
                    Ok(())
                })
            })
            .collect();
        filler.join().expect("filler thread")?;
        let seen = reader
            .join()
            .expect("reader thread")
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        for handle in assigners {
            handle
                .join()
                .expect("assigning thread")
                .unwrap_or_else(|e| panic!("round {round}: {e}"));
        }
        // What the reader saw were whole values written by someone.
        for value in seen {
            let written = value == 0.0
                || (1.0..=writes as f32).contains(&value)
                || (100.0..104.0).contains(&value)
                || (200.0..204.0).contains(&value);
            assert!(written, "round {round}: read {value}, which nobody wrote");
        }
    }
    Ok(())
}

/// A write queued after a read on another thread waits for it: the reader
/// gets the old contents, never a mix.
#[test]
fn a_write_waits_for_an_earlier_read() -> Result<()> {
    let m = Arc::new(MatrixCl::<f32>::constant(N, 1, 7.0)?);
    for _ in 0..rounds().min(20) {
        m.fill(7.0)?;
        let pending = m.read_later()?;
        let writer = {
            let m = m.clone();
            std::thread::spawn(move || m.fill(8.0))
        };
        writer.join().expect("writer thread")?;
        let v = pending.wait()?;
        assert_eq!(uniform(&v), Ok(7.0));
        assert_eq!(uniform(&m.to_vec()?), Ok(8.0));
    }
    Ok(())
}

/// Eight threads evaluating one expression no thread has compiled yet:
/// exactly one compile among them.
#[test]
fn threads_meeting_a_new_expression_share_one_compile() -> Result<()> {
    let x = Arc::new(MatrixCl::from_slice(3, 1, &[0.25f64, 0.5, 0.75])?);
    let start = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (x, start) = (x.clone(), start.clone());
            std::thread::spawn(move || -> Result<(u64, Vec<f64>)> {
                let before = thread_kernel_stats().built();
                start.wait();
                // An expression used nowhere else in this test binary.
                let y = (sinh(cosh(&*x)) * 3.0f64 - 0.125f64).eval()?;
                Ok((thread_kernel_stats().built() - before, y.to_vec()?))
            })
        })
        .collect();
    let mut compiles = 0;
    for t in threads {
        let (compiled, y) = t.join().expect("thread")?;
        compiles += compiled;
        for (got, x) in y.iter().zip([0.25f64, 0.5, 0.75]) {
            let want = x.cosh().sinh() * 3.0 - 0.125;
            assert!((got - want).abs() <= 1e-12 * want.abs(), "{got} vs {want}");
        }
    }
    assert_eq!(
        compiles, 1,
        "the threads compiled the kernel {compiles} times"
    );
    Ok(())
}
