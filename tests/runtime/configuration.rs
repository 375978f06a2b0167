//! The typed configuration: every tuning variable is parsed, range-checked
//! and named in its error; the runtime's kernel cache is keyed by device
//! and can be purged.

use crate::common;
use clfuse::prelude::*;
use clfuse::{GemmConfig, GemmEpilogue, GlmOnePass, Result, Runtime, Tuning};
use clfuse_core::TUNING_VARIABLES;

fn only(name: &'static str, value: &'static str) -> Result<Tuning> {
    Tuning::from_lookup(move |asked| (asked == name).then(|| value.to_string()))
}

#[test]
fn unset_variables_keep_the_built_in_choices() -> Result<()> {
    assert_eq!(Tuning::from_lookup(|_| None)?, Tuning::default());
    Ok(())
}

#[test]
fn every_variable_is_read_into_its_field() -> Result<()> {
    let cases: [(&'static str, &'static str); 27] = [
        ("FUSION_REDUCTION_GROUPS_PER_CU", "8"),
        ("FUSION_STAGED_PER_WORK_ITEM", "4"),
        ("FUSION_ROW_BLOCK_PREFETCH", "0"),
        ("FUSION_ROW_BLOCK_GROUP_SIZE", "64"),
        ("FUSION_ROW_BLOCK_GROUPS_PER_CU", "3"),
        ("FUSION_GEMM", "direct,16,8"),
        ("FUSION_GEMM_SMALL_BELOW", "40"),
        ("FUSION_GEMM_SMALL", "tensor,64,4,32"),
        ("FUSION_GEMM_THIN", "32,2,32"),
        ("FUSION_ROW_VECTOR_GROUPS_PER_CU", "5"),
        ("FUSION_ROW_VECTOR_CHUNK", "16"),
        ("FUSION_CHOLESKY_LEAF_GROUPS", "2"),
        ("FUSION_CHOLESKY_LEAF_GROUPS_PER_CU", "2"),
        ("FUSION_CHOLESKY_LOOKAHEAD", "256"),
        ("FUSION_GLM_ONE_PASS", "2"),
        ("FUSION_GEMM_EPILOGUE", "0"),
        ("FUSION_NATIVE_ATOMICS", "0"),
        ("FUSION_MIXTURE_ROWS", "3"),
        ("FUSION_LEND_ADJOINTS", "0"),
        ("FUSION_SWEEPS", "1"),
        ("FUSION_REPLAY", "0"),
        ("FUSION_BIND_REPLAYS", "0"),
        ("FUSION_BATCH_CHAINS", "0"),
        ("FUSION_COMPACT_LAUNCHES", "0"),
        ("FUSION_ARENA", "0"),
        ("FUSION_LAST_GROUP_SUMS", "1"),
        ("FUSION_REPLAY_PROLOGUES", "0"),
    ];
    assert_eq!(
        cases.map(|(name, _)| name),
        TUNING_VARIABLES,
        "one case per variable"
    );
    let tuning = Tuning::from_lookup(|name| {
        cases
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
    })?;
    let expected = Tuning {
        reduction_groups_per_cu: Some(8),
        staged_per_work_item: Some(4),
        row_block_prefetch: Some(false),
        row_block_group_size: Some(64),
        row_block_groups_per_cu: Some(3),
        gemm: Some(GemmConfig::Direct { rows: 16, cols: 8 }),
        gemm_small_below: Some(40),
        gemm_small: Some(GemmConfig::TensorCores {
            thread_block_size: 64,
            work_per_thread: 4,
            tile_k: 32,
        }),
        gemm_thin: Some(GemmConfig::Tiled {
            thread_block_size: 32,
            work_per_thread: 2,
            tile_k: 32,
        }),
        row_vector_groups_per_cu: Some(5),
        row_vector_chunk: Some(16),
        cholesky_leaf_groups: Some(2),
        cholesky_leaf_groups_per_cu: Some(2),
        cholesky_lookahead: Some(256),
        glm_one_pass: Some(GlmOnePass::WheneverStaged),
        gemm_epilogue: Some(GemmEpilogue::Off),
        native_atomics: Some(false),
        mixture_rows: Some(3),
        lend_adjoints: Some(false),
        sweeps: Some(true),
        replay: Some(false),
        bind_replays: Some(false),
        batch_chains: Some(false),
        compact_launches: Some(false),
        arena: Some(false),
        last_group_sums: Some(true),
        replay_prologues: Some(false),
    };
    assert_eq!(tuning, expected);
    Ok(())
}

#[test]
fn a_bad_value_is_an_error_naming_the_variable_and_the_range() {
    let bad: [(&'static str, &'static str, &str); 20] = [
        ("FUSION_REDUCTION_GROUPS_PER_CU", "0", "1–1024"),
        ("FUSION_REDUCTION_GROUPS_PER_CU", "lots", "1–1024"),
        ("FUSION_STAGED_PER_WORK_ITEM", "65", "1–64"),
        ("FUSION_ROW_BLOCK_PREFETCH", "maybe", "0 or 1"),
        ("FUSION_ROW_BLOCK_GROUP_SIZE", "100", "power of two"),
        ("FUSION_ROW_BLOCK_GROUP_SIZE", "512", "1–256"),
        ("FUSION_ROW_BLOCK_GROUPS_PER_CU", "-1", "1–64"),
        ("FUSION_GEMM", "64,4", "TS,WPT,TILE_K"),
        ("FUSION_GEMM_SMALL_BELOW", "0", "1–1000000"),
        ("FUSION_GEMM_SMALL", "portable", "a tiling"),
        ("FUSION_GEMM_THIN", "32,2", "TS,WPT,TILE_K"),
        ("FUSION_ROW_VECTOR_GROUPS_PER_CU", "1e3", "1–64"),
        ("FUSION_ROW_VECTOR_CHUNK", "128", "1–64"),
        ("FUSION_CHOLESKY_LEAF_GROUPS", "3", "1, 2 or 4"),
        ("FUSION_NATIVE_ATOMICS", "sometimes", "0 or 1"),
        ("FUSION_GLM_ONE_PASS", "3", "0, 1 or 2"),
        ("FUSION_MIXTURE_ROWS", "9", "1–8"),
        ("FUSION_SWEEPS", "2", "0 or 1"),
        ("FUSION_REPLAY", "2", "0 or 1"),
        ("FUSION_LAST_GROUP_SUMS", "sometimes", "0 or 1"),
    ];
    for (name, value, accepted) in bad {
        let error = only(name, value).expect_err(name).to_string();
        assert!(error.contains(name), "{error}");
        assert!(error.contains(value), "{error}");
        assert!(error.contains(accepted), "{name}: {error}");
    }
}

#[test]
fn a_struct_built_in_code_is_checked_by_configure() {
    let config = clfuse::RuntimeConfig {
        tuning: Tuning {
            row_vector_chunk: Some(0),
            ..Tuning::default()
        },
        ..clfuse::RuntimeConfig::default()
    };
    let error = clfuse::configure(config).expect_err("chunk 0");
    assert!(
        error.to_string().contains("FUSION_ROW_VECTOR_CHUNK"),
        "{error}"
    );
}

#[test]
fn the_kernel_cache_belongs_to_the_device_and_purges() -> Result<()> {
    // Alone in its process: the purge empties the cache other tests count their builds in.
    if common::process::run_alone(
        "configuration::the_kernel_cache_belongs_to_the_device_and_purges",
    ) {
        return Ok(());
    }
    let rt = Runtime::get()?;
    let cache = rt.kernels();
    assert_eq!(cache.device(), rt.device_info().index);
    let a = MatrixCl::from_slice(3, 1, &[1.0f64, 2.0, 3.0])?;
    let d = MatrixCl::<f64>::zeros(3, 1)?;
    // A structure no other test of this binary uses.
    d.assign(exp(&a) * 3.0 - 1.0)?;
    assert!(cache.fused_len() >= 1);
    let _ = clfuse::linalg::multiply(&a, &transpose(&a).eval()?)?;
    assert!(cache.typed_len() >= 1);
    cache.purge();
    assert_eq!((cache.fused_len(), cache.typed_len()), (0, 0));
    // The next use compiles again and still computes the right thing.
    let before = clfuse::thread_kernel_stats();
    d.assign(exp(&a) * 3.0 - 1.0)?;
    assert_eq!((clfuse::thread_kernel_stats() - before).built(), 1);
    let want: Vec<f64> = [1.0f64, 2.0, 3.0]
        .iter()
        .map(|x| x.exp() * 3.0 - 1.0)
        .collect();
    for (got, want) in d.to_vec()?.iter().zip(want) {
        assert!((got - want).abs() <= 1e-12 * want.abs());
    }
    assert_eq!(cache.fused_len(), 1);
    Ok(())
}
