//! The bernoulli GLM split across devices (#22): the first device alone
//! against rows split over all of them in proportion to their measured
//! speed. Both are per call: the value and the beta gradient reach the
//! host before the call returns.

use crate::glm::data;
use crate::timing::measure;
use crate::workloads::Ctx;
use clfuse::Device;
use clfuse::data_parallel::DataParallel;
use clfuse::glm::{GlmOptions, Wrt, bernoulli_logit_glm_lpmf};
use clfuse::prelude::*;

pub fn glm(ctx: &mut Ctx, selectors: &[String], shapes: &[(usize, usize)]) -> clfuse::Result<()> {
    let devices: Vec<Device> = selectors
        .iter()
        .map(|s| Device::open(s))
        .collect::<clfuse::Result<_>>()?;
    let names: Vec<String> = devices.iter().map(Device::label).collect();
    // Value and gradients in one round trip, alone and in each part.
    let options = GlmOptions {
        prefetch: true,
        ..GlmOptions::gradients(Wrt::ALPHA | Wrt::BETA)
    };
    let alpha = 0.3;
    for &(n, p) in shapes {
        let w = format!("bernoulli GLM split across devices, P = {p}");
        let (xs, ys, bs) = data(n, p);
        let bytes = 8.0 * (n * p) as f64;
        let first = devices[0];
        let alone = first.run(|| -> clfuse::Result<_> {
            let x = MatrixCl::from_slice(n, p, &xs)?;
            let y = MatrixCl::from_slice(n, 1, &ys)?;
            let beta = MatrixCl::from_slice(p, 1, &bs)?;
            // The same reads as a split part: both gradients, queued together.
            measure(ctx.reps, || {
                let mut out = bernoulli_logit_glm_lpmf(&y, &x, alpha, &beta, &options)?;
                std::hint::black_box(out.host_gradients()?);
                Ok(())
            })
        })?;
        ctx.push(&w, &format!("{} alone", names[0]), n, bytes, 0.0, alone);
        first.run(|| -> clfuse::Result<()> {
            let x = MatrixCl::from_slice(n, p, &xs)?;
            let y = MatrixCl::from_slice(n, 1, &ys)?;
            let beta = MatrixCl::from_slice(p, 1, &bs)?;
            ctx.profile(format!("{w}, one device, n = {n}"), || {
                let mut out = bernoulli_logit_glm_lpmf(&y, &x, alpha, &beta, &options)?;
                std::hint::black_box(out.host_gradients()?);
                Ok(())
            })
        })?;

        let mut parallel = DataParallel::new(&devices)?;
        // Cost models from two samples of the rows, each device with its own
        // copies uploaded before timing.
        let large = n.min(10_000_000);
        // The small sample shows the fixed cost per call (launches, reads).
        let rows = ((large / 100).max(1), large);
        let sample =
            |r: usize| -> Vec<f64> { (0..p).flat_map(|j| xs[j * n..j * n + r].to_vec()).collect() };
        let mut samples = Vec::new();
        for device in &devices {
            // Outcomes too: a host slice would be uploaded on every call.
            let at = |r: usize| {
                device.run(|| {
                    Ok((
                        MatrixCl::from_slice(r, p, &sample(r))?,
                        MatrixCl::from_slice(r, 1, &ys[..r])?,
                    ))
                })
            };
            samples.push([at(rows.0)?, at(rows.1)?]);
        }
        let sample_betas = parallel.upload_everywhere(&bs, p, 1)?;
        let costs = parallel
            .calibrate(rows, 3, |part, r| {
                let (x, y) = &samples[part][usize::from(r == rows.1)];
                let mut out = bernoulli_logit_glm_lpmf(y, x, alpha, &sample_betas[part], &options)?;
                out.host_gradients().map(drop)
            })?
            .to_vec();
        drop(samples);
        let x_parts = parallel.upload_rows(&xs, n, p)?;
        let y_parts = parallel.upload_rows(&ys, n, 1)?;
        let betas = parallel.upload_everywhere(&bs, p, 1)?;
        let call = || {
            parallel.glm(n, |part| {
                bernoulli_logit_glm_lpmf(
                    &y_parts[part],
                    &x_parts[part],
                    alpha,
                    &betas[part],
                    &options,
                )
            })
        };
        let split = measure(ctx.reps, || {
            std::hint::black_box(call()?.d_beta);
            Ok(())
        })?;
        ctx.profile(format!("{w}, split, n = {n}"), || call().map(drop))?;
        let shares: Vec<String> = names
            .iter()
            .zip(parallel.split(n))
            .zip(&costs)
            .map(|((name, part), cost)| {
                format!(
                    "{name} {:.1}% (fixed {:.0} µs, {:.2} ns/row)",
                    100.0 * part.len() as f64 / n as f64,
                    cost.fixed_s * 1e6,
                    cost.per_row_s * 1e9
                )
            })
            .collect();
        ctx.push(
            &w,
            &format!("split: {}", shares.join(", ")),
            n,
            bytes,
            0.0,
            split,
        );
    }
    Ok(())
}
