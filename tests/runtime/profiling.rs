//! The kernel timeline of a profiling queue (`FUSION_PROFILING=1`).

use crate::common;
use clfuse::Result;
use clfuse::prelude::*;
use clfuse::{Runtime, RuntimeConfig};

#[test]
fn the_profile_counts_each_kernel_and_is_cleared_when_taken() -> Result<()> {
    // Alone in its process: configures the runtime before its first use, and the profile holds every thread's launches.
    if common::process::run_alone(
        "profiling::the_profile_counts_each_kernel_and_is_cleared_when_taken",
    ) {
        return Ok(());
    }
    clfuse::configure(RuntimeConfig {
        profiling: true,
        ..RuntimeConfig::from_env()?
    })?;
    assert!(Runtime::get()?.profiling());
    let a = MatrixCl::from_slice(33, 31, &vec![1.5f64; 33 * 31])?;
    clfuse::take_profile()?;
    let sum = (&a + &a).eval()?;
    let product = clfuse::clfuse_kernels::multiply(&a, &transpose(&a).eval()?)?;
    assert_eq!(sum.to_vec()?[0], 3.0);
    assert_eq!(product.to_vec()?[0], 31.0 * 2.25);
    let profile = clfuse::take_profile()?;
    // Two generated kernels (the sum, the transpose) and at least one GEMM.
    assert_eq!(profile.kernels["calculate"].launches, 2);
    assert!(profile.kernels.keys().any(|k| k.starts_with("gemm")));
    assert!(profile.busy_ns > 0 && profile.busy_ns <= profile.span_ns);
    assert_eq!(profile.idle_ns(), profile.span_ns - profile.busy_ns);
    let table = profile.to_string();
    assert!(table.contains("| calculate | 2 |"), "{table}");
    assert!(clfuse::take_profile()?.kernels.is_empty());

    // The timeline lists transfers and marks beside kernels, in queue order.
    clfuse::profile_mark("before")?;
    let b = MatrixCl::from_slice(1, 1, &[2.0f64])?;
    let read = (&b * 3.0f64).eval()?.read_later()?;
    assert_eq!(read.wait()?, vec![6.0]);
    let timeline = clfuse::take_profile()?.timeline;
    let names: Vec<&str> = timeline.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["before", "fill", "calculate", "read"],
        "{timeline:?}"
    );
    assert!(timeline.iter().all(|c| c.start_ns <= c.end_ns));
    assert!(
        timeline
            .windows(2)
            .all(|w| w[0].queued_ns <= w[1].queued_ns)
    );

    // Labels name the step a launch belongs to, nest, and end with their guard.
    {
        let _outer = clfuse::profile_scope("outer");
        (&a * 2.0f64).eval()?;
        {
            let _inner = clfuse::profile_scope("inner");
            (&a * 3.0f64).eval()?;
        }
        (&a * 4.0f64).eval()?;
    }
    (&a * 5.0f64).eval()?;
    let labelled = clfuse::take_profile()?;
    assert_eq!(labelled.kernels["outer: calculate"].launches, 2);
    assert_eq!(labelled.kernels["inner: calculate"].launches, 1);
    assert_eq!(labelled.kernels["calculate"].launches, 1);

    // A GLM whose rows of x are held by at most 8 work items (32 elements
    // each; one work item on a CPU) computes xᵀ·d_eta in its own kernel (x
    // read once); wider x takes a second pass (FUSION_GLM_ONE_PASS: 0 never
    // in the kernel, 2 whenever x is staged). The knob that sets elements
    // per work item moves the boundary.
    let mode = std::env::var("FUSION_GLM_ONE_PASS").unwrap_or_default();
    let max_team = if clfuse::Runtime::get()?.device_info().is_gpu {
        8
    } else {
        1
    };
    let n = 1000;
    for p in [3, 50, 300] {
        let team =
            clfuse::clfuse_ops::staged_row_team(p, clfuse::clfuse_ops::RowBlockKind::WithRowWork)?;
        if std::env::var_os("FUSION_STAGED_PER_WORK_ITEM").is_none() {
            assert_eq!(team, Some(p.div_ceil(32).next_power_of_two()), "p = {p}");
        }
        let in_kernel = match mode.as_str() {
            "0" => false,
            "2" => team.is_some(),
            _ => team.is_some_and(|t| t <= max_team),
        };
        let x = MatrixCl::from_slice(n, p, &vec![0.01f64; n * p])?;
        let beta = MatrixCl::from_slice(p, 1, &vec![0.5f64; p])?;
        let y: Vec<i32> = (0..n as i32).map(|i| i % 2).collect();
        let options = clfuse::glm::GlmOptions::gradients(clfuse::glm::Wrt::BETA);
        clfuse::take_profile()?;
        let out = clfuse::glm::bernoulli_logit_glm_lpmf(&y[..], &x, 0.1, &beta, &options)?;
        assert!(out.d_beta().is_ok());
        let names: Vec<String> = clfuse::take_profile()?.kernels.into_keys().collect();
        let second_pass = names.iter().any(|k| k.starts_with("glm: xᵀ·d_eta"));
        assert_eq!(second_pass, !in_kernel, "p = {p}: {names:?}");
    }
    Ok(())
}
