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
    let options = GlmOptions::gradients(Wrt::ALPHA | Wrt::BETA);
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
            measure(ctx.reps, || {
                let out = bernoulli_logit_glm_lpmf(&y, &x, alpha, &beta, &options)?;
                std::hint::black_box(out.d_beta()?.to_vec()?);
                Ok(())
            })
        })?;
        ctx.push(&w, &format!("{} alone", names[0]), n, bytes, 0.0, alone);

        let mut parallel = DataParallel::new(&devices)?;
        // Speed on a sample of the rows, each device with its own copy.
        let sample_rows = n.min(200_000);
        let sample: Vec<f64> = (0..p)
            .flat_map(|j| xs[j * n..j * n + sample_rows].to_vec())
            .collect();
        let weights = parallel
            .calibrate(3, |device| {
                device.run(|| {
                    let x = MatrixCl::from_slice(sample_rows, p, &sample)?;
                    let beta = MatrixCl::from_slice(p, 1, &bs)?;
                    let out =
                        bernoulli_logit_glm_lpmf(&ys[..sample_rows], &x, alpha, &beta, &options)?;
                    out.d_beta()?.to_vec().map(drop)
                })
            })?
            .to_vec();
        let x_parts = parallel.upload_rows(&xs, n, p)?;
        let y_parts = parallel.upload_rows(&ys, n, 1)?;
        let betas = parallel.upload_everywhere(&bs, p, 1)?;
        let split = measure(ctx.reps, || {
            let total = parallel.glm(|part| {
                bernoulli_logit_glm_lpmf(
                    &y_parts[part],
                    &x_parts[part],
                    alpha,
                    &betas[part],
                    &options,
                )
            })?;
            std::hint::black_box(total.d_beta);
            Ok(())
        })?;
        let total: f64 = weights.iter().sum();
        let shares: Vec<String> = names
            .iter()
            .zip(&weights)
            .map(|(name, w)| format!("{name} {:.1}%", 100.0 * w / total))
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
