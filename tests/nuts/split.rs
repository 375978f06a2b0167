//! One batch whose data rows are split over devices (`RowSplitDensity`,
//! `SplitBatchModel`, `Sampler::split_rows`): the parts sum to the whole
//! batch's values and gradients, a split run samples the posterior with
//! each part's data uploaded once, and a failing or panicking part is an
//! error, never a hang.

use super::batched::{P, close, position, second_device};
use clfuse::nuts::{
    BatchDensity, BatchModel, BatchedModel, RowSplitDensity, Sampler, SplitBatchModel,
    UnconstrainedModel, sample, sample_batched, sample_batched_with_stats,
};
use clfuse::prelude::*;
use clfuse::rev::{self, Var};
use clfuse::{Device, Error, Result};
use std::ops::Range;
use std::sync::Mutex;

/// Host data of `n` rows: predictors (column-major) and outcomes.
fn host_data(n: usize) -> (Vec<f64>, Vec<f64>) {
    let x = (0..n * P)
        .map(|k| ((k * 37 % 101) as f64 / 50.0 - 1.0) * 0.8)
        .collect();
    let y = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
    (x, y)
}

struct Part {
    x: MatrixCl<f64>,
    y: MatrixCl<f64>,
}

/// Rows `rows` of the `n`-row data on the current device.
fn upload(n: usize, rows: Range<usize>) -> Result<Part> {
    let (x, y) = host_data(n);
    let mut block = Vec::with_capacity(rows.len() * P);
    for j in 0..P {
        block.extend_from_slice(&x[j * n + rows.start..j * n + rows.end]);
    }
    Ok(Part {
        x: MatrixCl::from_slice(rows.len(), P, &block)?,
        y: MatrixCl::from_slice(rows.len(), 1, &y[rows])?,
    })
}

/// The rows' log likelihoods, one per column of `theta` (`P x k`): a
/// product, element-wise steps and a column reduction.
fn likelihood(part: &Part, theta: &Var) -> Result<Var> {
    let k = theta.cols();
    let eta = (&part.x * theta).eval()?;
    let residual = colwise_broadcast(&part.y, k) - &eta;
    colwise_sum(-0.5f64 * square(residual) - 0.01f64 * log1p_exp(&eta)).eval()
}

/// A prior through a Cholesky factor and a triangular solve:
/// `θ ~ N(0, Σ)`, `Σ = 2 I + 0.5`.
fn prior(theta: &Var) -> Result<Var> {
    let cov: Vec<f64> = (0..P * P)
        .map(|k| if k % (P + 1) == 0 { 2.5 } else { 0.5 })
        .collect();
    let l = rev::cholesky_decompose(&MatrixCl::from_slice(P, P, &cov)?)?;
    let z = rev::mdivide_left_tri(&l, theta)?;
    let sum: Var = colwise_sum(square(&z)).eval()?;
    (-0.5f64 * &sum).eval()
}

#[test]
fn the_parts_sum_to_the_whole_batch() -> Result<()> {
    let default = Device::default_device()?;
    let second = second_device()?;
    for n in [1usize, 2, 31, 33, 1001] {
        let model = SplitBatchModel::new(P, n, |rows| upload(n, rows), likelihood, prior);
        let mut whole = model.density(default)?;
        for devices in [vec![default, second], vec![second, default, second]] {
            std::thread::scope(|scope| -> Result<()> {
                let mut split = RowSplitDensity::start(scope, &model, &devices)?;
                // The parts cover the rows once, in order.
                let parts = split.parts();
                let mut next = parts[0].1.start;
                for (_, rows) in &parts {
                    assert_eq!(rows.start, next, "n = {n}: {parts:?}");
                    next = rows.end;
                }
                assert_eq!((parts[0].1.start, next), (0, n), "n = {n}: {parts:?}");
                assert!(parts.len() <= devices.len().min(n));
                for k in [1usize, 2, 7] {
                    let at: Vec<f64> = (0..k).flat_map(position).collect();
                    let (mut g_whole, mut g_split) = (vec![0.0; P * k], vec![0.0; P * k]);
                    let v_whole = whole.evaluate(&at, &mut g_whole)?;
                    let v_split = split.evaluate(&at, &mut g_split)?;
                    for c in 0..k {
                        assert!(
                            close(v_whole[c], v_split[c]),
                            "n = {n}, k = {k}, chain {c}: {} vs {}",
                            v_whole[c],
                            v_split[c]
                        );
                    }
                    for (i, (a, b)) in g_whole.iter().zip(&g_split).enumerate() {
                        assert!(close(*a, *b), "n = {n}, k = {k}, gradient {i}: {a} vs {b}");
                    }
                }
                // A batch of the wrong shape is an error, not a panic.
                assert!(matches!(
                    split.evaluate(&[0.0; 4], &mut [0.0; 4]),
                    Err(Error::InvalidArgument {
                        argument: "positions",
                        ..
                    })
                ));
                Ok(())
            })?;
        }
    }
    Ok(())
}

#[test]
fn a_split_run_samples_the_posterior_with_each_part_uploaded_once() -> Result<()> {
    let devices = vec![Device::default_device()?, second_device()?];
    // y_i ~ N(mu, 1), mu ~ N(0, 10²): mu | y ~ N(Σy / (n + 0.01), 1 / (n + 0.01)).
    let y: Vec<f64> = (0..21).map(|i| 1.0 + (i as f64 * 0.9).cos()).collect();
    let uploads = Mutex::new(Vec::new());
    let model = SplitBatchModel::new(
        1,
        y.len(),
        |rows: Range<usize>| {
            uploads
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(rows.clone());
            MatrixCl::from_slice(rows.len(), 1, &y[rows])
        },
        |y: &MatrixCl<f64>, mu: &Var| {
            let (n, k) = (y.rows(), mu.cols());
            colwise_sum(-0.5f64 * square(colwise_broadcast(y, k) - rowwise_broadcast(mu, n))).eval()
        },
        |mu: &Var| (-0.005f64 * square(mu)).eval(),
    );
    let sampler = Sampler {
        chains: 4,
        warmup: 200,
        draws: 300,
        seed: 7,
        devices,
        split_rows: true,
        ..Sampler::default()
    };
    let (fit, stats) = sample_batched_with_stats(&model, &sampler)?;
    let mut uploaded = uploads.into_inner().unwrap_or_else(|p| p.into_inner());
    uploaded.sort_by_key(|r| r.start);
    assert_eq!(uploaded, [0..10, 10..21], "each part's rows uploaded once");
    // One batch of all four chains: most batches answer several.
    assert_eq!(stats.len(), 1);
    assert!(stats[0].evaluations > stats[0].batches);
    let row = fit.summary().rows[0].clone();
    let mean = y.iter().sum::<f64>() / (y.len() as f64 + 0.01);
    super::assert_mean_within_4_mcse(&row, mean);
    assert!(fit.summary().max_rhat() < 1.01);
    Ok(())
}

#[test]
fn split_rows_needs_a_splittable_model_and_batched_chains() -> Result<()> {
    let devices = vec![Device::default_device()?, second_device()?];
    let sampler = Sampler {
        chains: 2,
        warmup: 10,
        draws: 10,
        devices,
        split_rows: true,
        ..Sampler::default()
    };
    let whole = BatchModel::new(
        1,
        || Ok(()),
        |_: &(), t: &Var| colwise_sum(-0.5f64 * square(t)).eval(),
    );
    match sample_batched(&whole, &sampler) {
        Err(Error::InvalidArgument {
            argument, reason, ..
        }) => {
            assert_eq!(argument, "model");
            assert!(reason.contains("cannot be split"), "{reason}");
        }
        other => panic!("expected an error naming the model, got {other:?}"),
    }
    std::thread::scope(|scope| {
        assert!(matches!(
            RowSplitDensity::start(scope, &whole, &sampler.devices),
            Err(Error::InvalidArgument {
                argument: "model",
                ..
            })
        ));
    });
    let single = UnconstrainedModel::new(1, |t: &Var| colwise_sum(-0.5f64 * square(t)).eval());
    match sample(&single, &sampler) {
        Err(Error::InvalidArgument { argument, .. }) => assert_eq!(argument, "sampler"),
        other => panic!("expected an error naming the sampler, got {other:?}"),
    }
    Ok(())
}

/// A model of 11 rows (parts 0..5 and 5..11 over two devices) whose part
/// starting at row `failing` fails to upload, or whose second part (the
/// worker's) panics in its first evaluation.
fn faulty(failing: Option<usize>, panic: bool) -> impl BatchedModel {
    SplitBatchModel::new(
        1,
        11,
        move |rows: Range<usize>| {
            if failing == Some(rows.start) {
                return Err(Error::OpenCl {
                    code: -4,
                    name: "CL_MEM_OBJECT_ALLOCATION_FAILURE (injected)".into(),
                    call: "clCreateBuffer",
                });
            }
            MatrixCl::from_slice(rows.len(), 1, &vec![1.0; rows.len()])
        },
        move |y: &MatrixCl<f64>, mu: &Var| {
            if panic && y.rows() == 6 {
                panic!("the part panics on purpose");
            }
            let (n, k) = (y.rows(), mu.cols());
            colwise_sum(-0.5f64 * square(colwise_broadcast(y, k) - rowwise_broadcast(mu, n))).eval()
        },
        |mu: &Var| (-0.5f64 * square(mu)).eval(),
    )
}

#[test]
fn a_failing_or_panicking_part_is_an_error_not_a_hang() -> Result<()> {
    let devices = vec![Device::default_device()?, second_device()?];
    let sampler = Sampler {
        chains: 3,
        warmup: 20,
        draws: 20,
        devices: devices.clone(),
        split_rows: true,
        ..Sampler::default()
    };
    // The calling thread's part and a worker's part.
    for failing in [0, 5] {
        match sample_batched(&faulty(Some(failing), false), &sampler) {
            Err(Error::OpenCl { name, .. }) => assert!(name.contains("injected"), "{name}"),
            other => panic!("part at {failing}: expected the injected error, got {other:?}"),
        }
    }
    match sample_batched(&faulty(None, true), &sampler) {
        Err(Error::Unsupported { what }) => assert!(what.contains("stopped"), "{what}"),
        other => panic!("expected the stopped part's error, got {other:?}"),
    }
    let model = faulty(None, true);
    std::thread::scope(|scope| -> Result<()> {
        let mut split = RowSplitDensity::start(scope, &model, &devices)?;
        let mut g = [0.0];
        match split.evaluate(&[0.5], &mut g) {
            Err(Error::Unsupported { what }) => assert!(what.contains("stopped"), "{what}"),
            other => panic!("expected the stopped part's error, got {other:?}"),
        }
        // Later calls get the same error at once.
        assert!(split.evaluate(&[0.5], &mut g).is_err());
        Ok(())
    })
}
