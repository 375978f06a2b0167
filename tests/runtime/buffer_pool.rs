//! The buffer pool: dropped matrices' buffers are reused, the reuse respects
//! the previous owner's pending commands, and the pool can be emptied.

use crate::common;
use clfuse::Result;
use clfuse::prelude::*;

#[test]
fn a_dropped_buffer_is_reused_and_the_pool_can_be_emptied() -> Result<()> {
    // Alone in its process: it empties the pool other tests count on.
    if common::process::run_alone(
        "buffer_pool::a_dropped_buffer_is_reused_and_the_pool_can_be_emptied",
    ) {
        return Ok(());
    }
    clfuse::release_cached_buffers();
    // 100 doubles: the 1024-byte class (other tests of this binary may add
    // buffers of their own, so only this class's effect is asserted).
    let before = clfuse::cached_buffer_bytes();
    drop(MatrixCl::<f64>::zeros(100, 1)?);
    assert!(clfuse::cached_buffer_bytes() >= before + 1024);
    // 128 doubles share the class: the same buffer comes back, filled anew.
    let reused = MatrixCl::from_slice(128, 1, &vec![2.5f64; 128])?;
    assert_eq!(reused.to_vec()?, vec![2.5; 128]);
    // A different element type of the same size class reuses it too.
    drop(reused);
    let ints = MatrixCl::from_slice(256, 1, &(0..256).collect::<Vec<i32>>())?;
    assert_eq!(ints.to_vec()?, (0..256).collect::<Vec<i32>>());
    drop(ints);
    assert!(clfuse::release_cached_buffers() >= 1024);
    Ok(())
}

#[test]
fn a_reused_buffer_waits_for_its_previous_owner() -> Result<()> {
    // Each round drops the source while the kernel reading it may still be
    // queued; the next round's upload takes that buffer and must not
    // overwrite it before the kernel has read it.
    let n = 200_003;
    let mut outputs = Vec::new();
    for round in 0..12 {
        let host: Vec<f64> = (0..n).map(|i| (i % 97) as f64 + round as f64).collect();
        let source = MatrixCl::from_slice(n, 1, &host)?;
        let doubled = MatrixCl::<f64>::uninitialized(n, 1)?;
        doubled.assign(elt_multiply(2.0 * exp(&source * 0.0), &source))?;
        drop(source);
        outputs.push((round, doubled));
    }
    for (round, doubled) in outputs {
        let got = doubled.to_vec()?;
        for (i, v) in got.iter().enumerate() {
            let want = 2.0 * ((i % 97) as f64 + round as f64);
            assert_eq!(*v, want, "round {round}, element {i}");
        }
    }
    Ok(())
}

#[test]
fn reads_queued_together_return_each_matrix() -> Result<()> {
    let a = MatrixCl::from_slice(3, 1, &[1, 2, 3])?;
    let b = MatrixCl::from_slice(2, 2, &[0.5f64, 1.5, 2.5, 3.5])?;
    let empty = MatrixCl::<f32>::uninitialized(0, 4)?;
    b.assign(&b * 2.0)?;
    let (ra, rb, re) = (a.read_later()?, b.read_later()?, empty.read_later()?);
    assert_eq!(rb.wait()?, vec![1.0, 3.0, 5.0, 7.0]);
    assert_eq!(ra.wait()?, vec![1, 2, 3]);
    assert!(re.wait()?.is_empty());
    // A read dropped without waiting still completes before its memory goes.
    drop(b.read_later()?);
    Ok(())
}

/// Small read-backs go through page-locked slots (pooled by size), large ones
/// straight into host memory: every size returns the right data, also with
/// more reads in flight than the pool keeps, and a slot reused after a
/// dropped read holds the new read's data.
#[test]
fn reads_of_every_size_return_their_data() -> Result<()> {
    for len in [1usize, 31, 33, 1000, 8191, 8193, 100_003] {
        let host: Vec<f64> = (0..len).map(|i| i as f64 * 0.5 - 3.0).collect();
        let m = MatrixCl::from_slice(len, 1, &host)?;
        let reads = (0..40)
            .map(|_| m.read_later())
            .collect::<Result<Vec<_>>>()?;
        for read in reads {
            assert_eq!(read.wait()?, host, "len {len}");
        }
        drop(m.read_later()?);
        let flags = MatrixCl::from_slice(len, 1, &vec![i32::MAX; len])?;
        assert_eq!(flags.read_later()?.wait()?, vec![i32::MAX; len]);
    }
    Ok(())
}

#[test]
fn a_shared_buffer_stays_out_of_the_pool_until_its_last_handle_drops() -> Result<()> {
    let data: Vec<f64> = (0..300).map(f64::from).collect();
    let original = MatrixCl::from_slice(300, 1, &data)?;
    let kept = original.share();
    assert_eq!(kept.buffer_id(), original.buffer_id());
    drop(original);
    // Matrices of the same size class are made and written while `kept`
    // lives: none of them may receive its buffer.
    let others = (0..4)
        .map(|k| MatrixCl::constant(300, 1, -f64::from(k)))
        .collect::<Result<Vec<_>>>()?;
    assert_eq!(kept.to_vec()?, data);
    for (k, other) in others.iter().enumerate() {
        assert_ne!(other.buffer_id(), kept.buffer_id());
        assert_eq!(other.to_vec()?, vec![-(k as f64); 300]);
    }
    // Commands through either handle are ordered on the one buffer.
    let second = kept.share().with_view(View::Lower);
    second.assign(&kept + 1.0)?;
    assert_eq!(kept.view(), View::Entire);
    assert_eq!(kept.to_vec()?[299], 300.0);
    Ok(())
}

#[test]
fn every_kind_of_write_counts() -> Result<()> {
    let m = MatrixCl::from_slice(5, 1, &[1.0f64; 5])?;
    let mut last = m.events().write_count();
    let mut wrote = |what: &str, m: &MatrixCl<f64>| {
        let now = m.events().write_count();
        assert!(now > last, "{what} did not count as a write");
        last = now;
    };
    m.fill(2.0)?;
    wrote("fill", &m);
    m.write(&[3.0; 5])?;
    wrote("write", &m);
    m.copy_from(&MatrixCl::zeros(5, 1)?)?;
    wrote("copy_from", &m);
    m.assign(&m + 1.0)?;
    wrote("a kernel", &m);
    let before = m.events().write_count();
    let _ = (&m * 2.0).eval()?;
    let _ = m.to_vec()?;
    assert_eq!(m.events().write_count(), before, "reads count as writes");
    Ok(())
}
