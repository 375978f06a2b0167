//! The generator's most complex path, frozen: the bernoulli GLM's one
//! kernel with `x` staged in registers (10 columns: one work item per row,
//! no barrier per block) and staged and prefetched (100 columns: rows shared
//! by a team of work items, the next block fetched during this one).
//! The kernels are taken from the build dump, so they are exactly what ran.
//! Regenerate on purpose with `FUSION_BLESS=1 cargo test --test glm -- golden_glm::`.

use clfuse::glm::{GlmOptions, Wrt, bernoulli_logit_glm_lpmf};
use clfuse::prelude::*;
use clfuse::{BuildDiagnostics, Result, RuntimeConfig};
use std::path::{Path, PathBuf};

use crate::common;

/// The fused row-block kernels dumped into `dir` so far.
fn row_block_kernels(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut found: Vec<(PathBuf, String)> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    name.starts_with("fused_") && name.ends_with(".cl")
                })
                .filter_map(|p| std::fs::read_to_string(&p).ok().map(|s| (p, s)))
                .filter(|(_, source)| source.contains("int block_rows"))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

#[test]
fn glm_kernels_staged_and_prefetched() -> Result<()> {
    // Alone in its process: configures the runtime before its first use.
    if common::process::run_alone("golden_glm::glm_kernels_staged_and_prefetched") {
        return Ok(());
    }
    let dir = std::env::temp_dir().join(format!("clfuse-golden-glm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = RuntimeConfig::from_env()?;
    if config.tuning != clfuse::Tuning::default() || config.diagnostics.kernel_override.is_some() {
        // The goldens are the default layouts; a tuned run builds others.
        return Ok(());
    }
    clfuse::configure(RuntimeConfig {
        diagnostics: BuildDiagnostics {
            dump_kernels: Some(dir.clone()),
            ..config.diagnostics.clone()
        },
        // The one-pass kernel of a team of work items per row (the GPUs'
        // default at 100 predictors; a CPU takes a second pass instead).
        tuning: clfuse::Tuning {
            glm_one_pass: Some(clfuse::GlmOnePass::WheneverStaged),
            // The GPUs' ending of `xᵀ·v` (its last group adds up the
            // groups' sums), off on CPUs.
            last_group_sums: Some(true),
            ..config.tuning.clone()
        },
        ..config
    })?;
    let device = clfuse::Runtime::get()?.device_info();
    if device.max_work_group_size < 128 {
        return Ok(()); // other group sizes give other (equally valid) layouts
    }
    let mut known: Vec<PathBuf> = Vec::new();
    for (name, p) in [
        ("glm_bernoulli_staged", 10),
        ("glm_bernoulli_prefetched", 100),
    ] {
        let n = 200;
        let x: Vec<f64> = (0..n * p)
            .map(|k| ((k % 23) as f64 - 11.0) / 40.0)
            .collect();
        let y: Vec<i32> = (0..n).map(|i| (i % 3 == 0) as i32).collect();
        let x = MatrixCl::from_slice(n, p, &x)?;
        let beta = MatrixCl::from_slice(p, 1, &vec![0.05; p])?;
        let out = bernoulli_logit_glm_lpmf(
            &y[..],
            &x,
            0.1,
            &beta,
            &GlmOptions::gradients(Wrt::ALPHA | Wrt::BETA),
        )?;
        assert!(out.value.is_finite() && out.d_beta()?.rows() == p);
        let new: Vec<(PathBuf, String)> = row_block_kernels(&dir)
            .into_iter()
            .filter(|(path, _)| !known.contains(path))
            .collect();
        assert_eq!(new.len(), 1, "{name}: one new row-block kernel");
        let (path, source) = &new[0];
        // Prefetching fetches the next block's row while this one is used.
        assert_eq!(source.contains("next_row"), p == 100, "{name}");
        common::check_golden(name, source);
        known.push(path.clone());
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
