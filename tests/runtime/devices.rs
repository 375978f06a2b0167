//! Several devices in one process. CI has one OpenCL device (PoCL), so the
//! second device is a second context on it (`Device::open_new`): to OpenCL
//! that is as foreign as another GPU (buffers cannot cross contexts), which
//! is what the rules below are about.

use clfuse::prelude::*;
use clfuse::{Device, Error, Result, RuntimeConfig};

fn second_device() -> Result<Device> {
    let default = Device::default_device()?;
    Device::open_new(RuntimeConfig {
        device: Some(default.info().index.to_string()),
        ..RuntimeConfig::from_env()?
    })
}

fn column(n: usize, scale: f64) -> Vec<f64> {
    (0..n).map(|i| scale * (i as f64 - 3.5)).collect()
}

#[test]
fn work_inside_run_stays_on_that_device() -> Result<()> {
    let default = Device::default_device()?;
    let second = second_device()?;
    assert_ne!(default, second);
    assert!(Device::opened().contains(&second));
    let n = 33;
    let (a, b) = (column(n, 1.0), column(n, -0.5));
    let built_before = second.runtime().kernels().fused_len();
    let (result, stats) = second.run(|| -> Result<_> {
        assert_eq!(Device::current()?, second);
        let x = MatrixCl::from_slice(n, 1, &a)?;
        let y = MatrixCl::from_slice(n, 1, &b)?;
        let before = thread_kernel_stats();
        let d = (2.0f64 * (&x + &y) - exp(&y)).eval()?;
        let stats = thread_kernel_stats() - before;
        assert_eq!(d.device(), Some(second));
        Ok((d.to_vec()?, stats))
    })?;
    assert_eq!(Device::current()?, default, "run restores the device");
    assert_eq!(stats.launched, 1);
    assert_eq!(second.runtime().kernels().fused_len(), built_before + 1);
    for i in 0..n {
        let want = 2.0 * (a[i] + b[i]) - b[i].exp();
        assert!(
            (result[i] - want).abs() <= 1e-12 * want.abs().max(1.0),
            "{i}"
        );
    }
    // The default device builds its own copy of the kernel: caches are per device.
    let x = MatrixCl::from_slice(n, 1, &a)?;
    let y = MatrixCl::from_slice(n, 1, &b)?;
    let here = (2.0f64 * (&x + &y) - exp(&y)).eval()?.to_vec()?;
    assert_eq!(here, result);
    Ok(())
}

#[test]
fn mixing_devices_is_an_error_naming_both() -> Result<()> {
    let second = second_device()?;
    let n = 31;
    let here = MatrixCl::from_slice(n, 1, &column(n, 1.0))?;
    let there = second.run(|| MatrixCl::from_slice(n, 1, &column(n, 2.0)))?;
    let target = MatrixCl::from_slice(n, 1, &vec![7.0; n])?;

    let fused = target.assign(&here + &there);
    match &fused {
        Err(Error::DeviceMismatch {
            what,
            expected,
            found,
        }) => {
            assert!(what.contains("calculate"), "{what}");
            assert!(expected.starts_with(&format!("[{}]", Device::current()?.runtime().slot())));
            assert!(
                found.starts_with(&format!("[{}]", second.runtime().slot())),
                "{found}"
            );
        }
        other => panic!("expected DeviceMismatch, got {other:?}"),
    }
    assert_eq!(target.to_vec()?, vec![7.0; n], "nothing was written");
    assert!(fused.unwrap_err().to_string().contains("to_device"));

    // A hand-written kernel (GEMM) and a device copy refuse likewise.
    let square = MatrixCl::from_slice(2, 2, &[1.0, 2.0, 3.0, 4.0])?;
    let foreign = second.run(|| MatrixCl::from_slice(2, 2, &[1.0, 0.0, 0.0, 1.0]))?;
    assert!(matches!(
        (&square * &foreign).eval(),
        Err(Error::DeviceMismatch { .. })
    ));
    assert!(matches!(
        square.copy_from(&foreign),
        Err(Error::DeviceMismatch { .. })
    ));
    // Inside the second device's run, its own matrices work and ours do not.
    second.run(|| -> Result<()> {
        assert!(matches!(
            (&there + &here).eval(),
            Err(Error::DeviceMismatch { .. })
        ));
        assert_eq!((&there + &there).eval()?.to_vec()?, column(n, 4.0));
        Ok(())
    })?;
    Ok(())
}

#[test]
fn to_device_copies_across_and_keeps_the_view() -> Result<()> {
    let second = second_device()?;
    let n = 5;
    let host: Vec<f64> = (0..n * n).map(|k| k as f64).collect();
    let lower = MatrixCl::from_slice(n, n, &host)?.with_view(View::Lower);
    let moved = lower.to_device(second)?;
    assert_eq!(moved.device(), Some(second));
    assert_eq!(moved.view(), View::Lower);
    assert_eq!(moved.to_vec()?, host);
    let back = moved.to_device(Device::default_device()?)?;
    assert_eq!(back.to_vec()?, host);
    // Work on the moved copy runs there.
    let doubled = second.run(|| (2.0f64 * &moved).eval())?;
    assert_eq!(doubled.device(), Some(second));
    Ok(())
}

#[test]
fn opening_the_default_device_again_shares_its_context() -> Result<()> {
    let default = Device::default_device()?;
    let name = default.info().name.clone();
    assert_eq!(Device::open(&name)?, default);
    assert_eq!(Device::open(&default.info().index.to_string())?, default);
    assert!(matches!(
        Device::open("no such device anywhere"),
        Err(Error::NoDevice { .. })
    ));
    Ok(())
}

#[test]
fn empty_matrices_belong_to_any_device() -> Result<()> {
    let second = second_device()?;
    // Made on the default device, but it has no buffer to keep there.
    let here = MatrixCl::<f64>::zeros(4, 0)?;
    let sums = second.run(|| -> Result<_> {
        let there = MatrixCl::<f64>::zeros(4, 0)?;
        let total = (&here + &there).eval()?;
        assert!(total.is_empty());
        colwise_sum(MatrixCl::<f64>::zeros(0, 3)?).eval()?.to_vec()
    })?;
    assert_eq!(sums, vec![0.0; 3]);
    Ok(())
}

#[test]
fn threads_work_on_their_own_devices_at_once() -> Result<()> {
    let second = second_device()?;
    let n = 1000;
    let worker = |device: Device, scale: f64| {
        std::thread::spawn(move || {
            device.run(|| -> Result<Vec<f64>> {
                let x = MatrixCl::from_slice(n, 1, &column(n, scale))?;
                let mut acc = x.try_clone()?;
                for _ in 0..20 {
                    acc = (&acc + &x).eval()?;
                }
                acc.to_vec()
            })
        })
    };
    let here = worker(Device::default_device()?, 1.0);
    let there = worker(second, 3.0);
    let (here, there) = (
        here.join().expect("thread")?,
        there.join().expect("thread")?,
    );
    assert_eq!(here, column(n, 21.0));
    assert_eq!(there, column(n, 63.0));
    Ok(())
}

#[test]
fn run_restores_the_outer_device_after_a_panic() -> Result<()> {
    let default = Device::default_device()?;
    let second = second_device()?;
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        second.run(|| panic!("inside"))
    }));
    assert!(caught.is_err());
    assert_eq!(Device::current()?, default);
    second.run(|| -> Result<()> {
        default.run(|| assert_eq!(Device::current().ok(), Some(default)));
        assert_eq!(Device::current()?, second);
        Ok(())
    })
}

/// The bernoulli GLM over rows split across two devices (weights 3:1, then
/// calibrated) matches the one-device GLM over all rows.
#[test]
fn data_parallel_glm_matches_one_device() -> Result<()> {
    use clfuse::data_parallel::DataParallel;
    use clfuse::glm::{GlmOptions, Wrt, bernoulli_logit_glm_lpmf};
    let second = second_device()?;
    let devices = [Device::default_device()?, second];
    for (n, p) in [(1001usize, 7usize), (33, 3), (1, 2)] {
        let x_host: Vec<f64> = (0..n * p)
            .map(|k| ((k * 37 % 101) as f64 / 50.0 - 1.0) * 0.7)
            .collect();
        let y_host: Vec<i32> = (0..n).map(|i| (i * 7 % 3 == 0) as i32).collect();
        let beta_host: Vec<f64> = (0..p).map(|j| 0.3 - 0.1 * j as f64).collect();
        let options = GlmOptions::gradients(Wrt::ALPHA | Wrt::BETA);
        let x = MatrixCl::from_slice(n, p, &x_host)?;
        let beta = MatrixCl::from_slice(p, 1, &beta_host)?;
        let whole = bernoulli_logit_glm_lpmf(&y_host, &x, 0.25, &beta, &options)?;
        let want_beta = whole.d_beta()?.to_vec()?;
        let want_alpha = whole.d_alpha()?.to_vec()?;

        let mut parallel = DataParallel::with_weights(&devices, &[3.0, 1.0])?;
        for round in 0..2 {
            if round == 1 {
                // Each device's own copy of two samples, uploaded before timing.
                let rows = (n.div_ceil(4), n.max(2));
                let sample = |r: usize| -> Vec<f64> {
                    (0..p)
                        .flat_map(|j| x_host[j * n..j * n + r.min(n)].to_vec())
                        .collect()
                };
                let mut samples = Vec::new();
                for device in parallel.devices() {
                    let at =
                        |r: usize| device.run(|| MatrixCl::from_slice(r.min(n), p, &sample(r)));
                    samples.push([at(rows.0)?, at(rows.1)?]);
                }
                let betas = parallel.upload_everywhere(&beta_host, p, 1)?;
                let costs = parallel.calibrate(rows, 2, |part, r| {
                    let xs = &samples[part][usize::from(r == rows.1)];
                    let ys = &y_host[..xs.rows()];
                    bernoulli_logit_glm_lpmf(ys, xs, 0.25, &betas[part], &options).map(drop)
                })?;
                assert!(costs.iter().all(|c| c.per_row_s > 0.0 && c.fixed_s >= 0.0));
            }
            let parts = parallel.split(n);
            assert_eq!(parts.iter().map(|r| r.len()).sum::<usize>(), n);
            let xs = parallel.upload_rows(&x_host, n, p)?;
            let ys = parallel.upload_rows(&y_host, n, 1)?;
            let betas = parallel.upload_everywhere(&beta_host, p, 1)?;
            assert_eq!(xs[1].device(), Some(second));
            let total = parallel.glm(n, |part| {
                bernoulli_logit_glm_lpmf(&ys[part], &xs[part], 0.25, &betas[part], &options)
            })?;
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-10 * b.abs().max(1.0);
            assert!(
                close(total.value, whole.value),
                "n = {n}: {} vs {}",
                total.value,
                whole.value
            );
            let d_beta = total.d_beta.expect("asked for");
            assert!(
                d_beta.iter().zip(&want_beta).all(|(a, b)| close(*a, *b)),
                "n = {n}"
            );
            let d_alpha = total.d_alpha.expect("asked for");
            assert!(close(d_alpha[0], want_alpha[0]), "n = {n}");
        }
    }
    Ok(())
}

/// Every part `glm` runs is timed; `recalibrate` refits the cost models
/// to those times and calibration's samples.
#[test]
fn glm_calls_feed_the_cost_models() -> Result<()> {
    use clfuse::data_parallel::DataParallel;
    use clfuse::glm::{GlmOptions, Wrt, bernoulli_logit_glm_lpmf};
    let devices = [Device::default_device()?, second_device()?];
    let mut parallel = DataParallel::new(&devices)?;
    let (n, p) = (2001usize, 3usize);
    let x_host: Vec<f64> = (0..n * p)
        .map(|k| ((k * 13 % 29) as f64 - 14.0) / 20.0)
        .collect();
    let y_host: Vec<i32> = (0..n).map(|i| (i % 3 == 0) as i32).collect();
    let options = GlmOptions {
        prefetch: true,
        ..GlmOptions::gradients(Wrt::BETA)
    };
    assert!(parallel.observations().iter().all(Vec::is_empty));
    assert!(!parallel.recalibrate());
    let xs = parallel.upload_rows(&x_host, n, p)?;
    let ys = parallel.upload_rows(&y_host, n, 1)?;
    let betas = parallel.upload_everywhere(&[0.1, -0.2, 0.3], p, 1)?;
    for _ in 0..3 {
        parallel.glm(n, |part| {
            bernoulli_logit_glm_lpmf(&ys[part], &xs[part], 0.0, &betas[part], &options)
        })?;
    }
    let parts = parallel.split(n);
    for (part, seen) in parallel.observations().iter().enumerate() {
        assert_eq!(seen.len(), 1, "one size per device so far");
        assert_eq!(seen[0].0, parts[part].len());
        assert!(seen[0].1 > 0.0);
    }
    // With calibration's two sizes per device too, the models are refit.
    let rows_of = |r: usize| -> Vec<f64> {
        (0..p)
            .flat_map(|j| x_host[j * n..j * n + r].to_vec())
            .collect()
    };
    let mut samples = Vec::new();
    for d in &devices {
        let at = |r: usize| {
            d.run(|| -> Result<_> {
                Ok((
                    MatrixCl::from_slice(r, p, &rows_of(r))?,
                    MatrixCl::from_slice(r, 1, &y_host[..r])?,
                ))
            })
        };
        samples.push([at(10)?, at(100)?]);
    }
    parallel.calibrate((10, 100), 1, |part, rows| {
        let (x, y) = &samples[part][usize::from(rows == 100)];
        bernoulli_logit_glm_lpmf(y, x, 0.0, &betas[part], &options).map(drop)
    })?;
    assert!(parallel.observations().iter().all(|seen| seen.len() == 3));
    parallel.recalibrate();
    assert!(
        parallel
            .costs()
            .iter()
            .all(|c| c.per_row_s > 0.0 && c.fixed_s >= 0.0)
    );
    assert_eq!(parallel.split(n).iter().map(|r| r.len()).sum::<usize>(), n);
    Ok(())
}

/// A part that fails (an error injected on the second device) makes the
/// whole call an `Err`, every time, without hanging; the first device's
/// part still ran. A panicking part is an `Err` too.
#[test]
fn a_failing_part_is_an_error_not_a_hang() -> Result<()> {
    use clfuse::data_parallel::DataParallel;
    let devices = [Device::default_device()?, second_device()?];
    let parallel = DataParallel::new(&devices)?;
    let parts = parallel.upload_rows(&column(9, 1.0), 9, 1)?;
    let ran = std::sync::atomic::AtomicUsize::new(0);
    for _ in 0..3 {
        let result = parallel.map(|part, _| {
            if part == 1 {
                return Err(Error::OpenCl {
                    code: -36,
                    name: "CL_INVALID_COMMAND_QUEUE (injected)".into(),
                    call: "clFinish",
                });
            }
            ran.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            sum(&parts[part])
        });
        assert!(
            matches!(result, Err(Error::OpenCl { code: -36, .. })),
            "{result:?}"
        );
    }
    assert_eq!(ran.load(std::sync::atomic::Ordering::Relaxed), 3);
    let panicking = parallel.map(|part, _| {
        assert_ne!(part, 0, "part 0 panics on purpose");
        Ok(part)
    });
    assert!(matches!(
        panicking,
        Err(Error::InvalidArgument {
            argument: "work",
            ..
        })
    ));
    // The workers survive both.
    assert_eq!(parallel.map(|part, _| Ok(part))?, vec![0, 1]);
    Ok(())
}

/// After calibration the split includes the hand-off: one row is never
/// split, and a split call's parts cover the rows exactly.
#[test]
fn calibrated_splits_never_split_what_one_device_does_faster() -> Result<()> {
    use clfuse::data_parallel::DataParallel;
    let devices = [Device::default_device()?, second_device()?];
    let mut parallel = DataParallel::new(&devices)?;
    let host = column(4000, 0.001);
    let samples: Vec<[MatrixCl<f64>; 2]> = devices
        .iter()
        .map(|d| {
            d.run(|| -> Result<_> {
                Ok([
                    MatrixCl::from_slice(10, 1, &host[..10])?,
                    MatrixCl::from_slice(4000, 1, &host)?,
                ])
            })
        })
        .collect::<Result<_>>()?;
    parallel.calibrate((10, 4000), 2, |part, rows| {
        sum(&samples[part][usize::from(rows == 4000)]).map(drop)
    })?;
    assert!(parallel.handoff_s().is_finite() && parallel.handoff_s() >= 0.0);
    let one = parallel.split(1);
    assert_eq!(one.iter().filter(|r| !r.is_empty()).count(), 1, "{one:?}");
    for rows in [0usize, 1, 31, 33, 1001] {
        let parts = parallel.split(rows);
        assert_eq!(parts.iter().map(|r| r.len()).sum::<usize>(), rows);
        assert!(parts.windows(2).all(|w| w[0].end == w[1].start));
    }
    Ok(())
}

/// A split is taken only when predicted at least 5% faster than the
/// fastest device alone: two equal devices with a 50 µs fixed cost gain 3%
/// from splitting 30 000 rows (one device takes them) and 9% from 100 000.
#[test]
fn a_split_predicted_barely_faster_is_not_taken() -> Result<()> {
    use clfuse::data_parallel::{Cost, DataParallel};
    let d = Device::default_device()?;
    let cost = Cost {
        fixed_s: 50e-6,
        per_row_s: 1e-10,
    };
    let parallel = DataParallel::with_costs(&[d, d], &[cost, cost])?;
    assert_eq!(parallel.split(30_000), vec![0..30_000, 30_000..30_000]);
    assert_eq!(parallel.split(100_000), vec![0..50_000, 50_000..100_000]);
    Ok(())
}

/// The pool's limit is each device's own: opening a device that keeps no
/// buffers leaves the others pooling (the last runtime created used to set
/// one limit for all).
#[test]
fn a_device_without_the_pool_leaves_the_others_pooling() -> Result<()> {
    let default = Device::default_device()?;
    let unpooled = Device::open_new(RuntimeConfig {
        device: Some(default.info().index.to_string()),
        no_buffer_cache: true,
        ..RuntimeConfig::from_env()?
    })?;
    // A size class no other test of this binary uses (3 MiB + 512 bytes).
    let rows = (3 * 1024 * 1024 + 512) / 8;
    drop(unpooled.run(|| MatrixCl::<f64>::zeros(rows, 1))?);
    assert_eq!(unpooled.cached_buffer_bytes(), 0);
    let before = default.cached_buffer_bytes();
    drop(default.run(|| MatrixCl::<f64>::zeros(rows, 1))?);
    // Kept: the total grew by over 2 MiB. Tests running beside this one may
    // take pooled buffers back meanwhile, but theirs are under 100 KB.
    assert!(default.cached_buffer_bytes() + (1 << 20) >= before + rows * 8);
    Ok(())
}
