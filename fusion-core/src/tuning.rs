//! The launch-shape knobs, for tuning on a new device without rebuilding:
//! one typed struct, filled from the environment once, checked when read.
//!
//! Every field is `None` by default, which means "the built-in choice for
//! this device" (documented per field, and in the README's table); a value
//! overrides it for every launch of the process.

use crate::env::{env_value, invalid, parse_count, parse_flag};
use crate::error::Result;
use crate::gemm_config::GemmConfig;
use std::ops::RangeInclusive;

/// When the linear GLMs compute `xᵀ·d_eta` inside their own kernel
/// (`FUSION_GLM_ONE_PASS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GlmOnePass {
    /// Never: a second pass reads `x` again (`0`).
    Never,
    /// When few work items share each staged row of `x` (`1`, the default):
    /// at most 8 on a GPU, one on a CPU.
    #[default]
    SmallTeams,
    /// Whenever `x` is staged in registers (`2`).
    WheneverStaged,
}

/// Whether a GEMM applies an element-wise consumer of its product in its
/// store (`FUSION_GEMM_EPILOGUE`; see `clfuse_ops::epilogue`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GemmEpilogue {
    /// Never: the product is computed, then read by a fused kernel (`0`).
    Off,
    /// Where the product's shape allows (`1`, the default).
    #[default]
    On,
}

/// The launch-shape knobs. Part of [`RuntimeConfig`](crate::RuntimeConfig);
/// read them through [`Runtime::tuning`](crate::Runtime::tuning).
///
/// ```
/// use clfuse_core::{RuntimeConfig, Tuning};
/// let tuning = Tuning { reduction_groups_per_cu: Some(8), ..Tuning::default() };
/// tuning.validate()?;
/// let config = RuntimeConfig { tuning, ..RuntimeConfig::default() };
/// assert_eq!(config.tuning.reduction_groups_per_cu, Some(8));
/// assert!(Tuning { staged_per_work_item: Some(65), ..Tuning::default() }.validate().is_err());
/// # Ok::<(), clfuse_core::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tuning {
    /// Work-groups per compute unit of column-wise and full reductions
    /// (`FUSION_REDUCTION_GROUPS_PER_CU`, 1–1024; default 32, and 8 for a
    /// kernel summing several scalars, such as a log density with the
    /// gradients of its scalar parameters).
    pub reduction_groups_per_cu: Option<usize>,
    /// Elements of a staged row one work item holds in a row-block kernel
    /// (`FUSION_STAGED_PER_WORK_ITEM`, 1–64; default 16 for `xᵀ·v` alone,
    /// 32 with per-row work).
    pub staged_per_work_item: Option<usize>,
    /// Whether staged blocks are prefetched (`FUSION_ROW_BLOCK_PREFETCH`,
    /// 0 or 1; default: when rows are shared by several work items).
    pub row_block_prefetch: Option<bool>,
    /// Work items per row-block work-group (`FUSION_ROW_BLOCK_GROUP_SIZE`,
    /// a power of two 1–256; default 256 for `xᵀ·v` alone, 128 with per-row work).
    pub row_block_group_size: Option<usize>,
    /// Row-block work-groups per compute unit (`FUSION_ROW_BLOCK_GROUPS_PER_CU`,
    /// 1–64; default 2, or 4 with per-row work and no prefetch).
    pub row_block_groups_per_cu: Option<usize>,
    /// The GEMM kernel and blocking (`FUSION_GEMM`; default tensor cores
    /// 128/8/8 on NVIDIA devices that have FP64 ones, tiled 128/8/8 on other
    /// GPUs, direct 16 x 8 on CPUs). Checked against the device at the
    /// first product.
    pub gemm: Option<GemmConfig>,
    /// On GPUs, products with fewer large tiles than this take 64 x 64 tiles
    /// (`FUSION_GEMM_SMALL_BELOW`, 1–1000000; default a quarter of the compute
    /// units, and two per compute unit for lower-only products: a
    /// factorization's updates).
    pub gemm_small_below: Option<usize>,
    /// On GPUs, the tiling of the products that take small tiles
    /// (`FUSION_GEMM_SMALL`, a `FUSION_GEMM` value other than `portable`;
    /// default `tensor,64,4,8` on NVIDIA devices with FP64 tensor cores,
    /// else `64,4,8`). Ignored when `FUSION_GEMM` is set.
    pub gemm_small: Option<GemmConfig>,
    /// On GPUs, the tiling of a factorization's thin updates, k and width
    /// at most 64 (`FUSION_GEMM_THIN`, as `FUSION_GEMM_SMALL`; default
    /// `32,2,16`). Ignored when `FUSION_GEMM` is set.
    pub gemm_thin: Option<GemmConfig>,
    /// Work-groups per compute unit of the row-vector product
    /// (`FUSION_ROW_VECTOR_GROUPS_PER_CU`, 1–64; default 4).
    pub row_vector_groups_per_cu: Option<usize>,
    /// Columns per work-group of the row-vector product
    /// (`FUSION_ROW_VECTOR_CHUNK`, 1–64; default 8).
    pub row_vector_chunk: Option<usize>,
    /// Work items per row of the Cholesky leaf, in units of 64
    /// (`FUSION_CHOLESKY_LEAF_GROUPS`, 1, 2 or 4; default 4).
    pub cholesky_leaf_groups: Option<usize>,
    /// Cholesky leaf work-groups per compute unit
    /// (`FUSION_CHOLESKY_LEAF_GROUPS_PER_CU`, 1–64; default 1).
    pub cholesky_leaf_groups_per_cu: Option<usize>,
    /// A Cholesky factorization updates the columns its next panel does
    /// not need yet on a second queue, while that panel is factored, when
    /// there are at least this many of them (`FUSION_CHOLESKY_LOOKAHEAD`,
    /// 0–1000000, 0 never; default 128 on GPUs, 0 elsewhere).
    pub cholesky_lookahead: Option<usize>,
    /// When the linear GLMs compute `xᵀ·d_eta` in their kernel
    /// (`FUSION_GLM_ONE_PASS`, 0, 1 or 2; default 1).
    pub glm_one_pass: Option<GlmOnePass>,
    /// Whether GEMMs fuse their element-wise consumers
    /// (`FUSION_GEMM_EPILOGUE`, 0 or 1; default 1).
    pub gemm_epilogue: Option<GemmEpilogue>,
    /// Whether reverse kernels add floating-point values with the device's
    /// native atomic reductions where it has them (NVIDIA's `red.add`)
    /// rather than compare-and-swap loops (`FUSION_NATIVE_ATOMICS`, 0 or 1;
    /// default 1).
    pub native_atomics: Option<bool>,
    /// Rows of `x` each work item of the mixture density kernels keeps in
    /// registers, so that each component value staged in local memory
    /// serves that many rows (`FUSION_MIXTURE_ROWS`, 1–8; default 2).
    pub mixture_rows: Option<usize>,
    /// Whether a step with a `1 x 1` result stores the partial of a
    /// variable (of 65536 elements or more) it reads at each element in
    /// that variable's zero adjoint,
    /// so that its reverse pass has nothing to move at seed one
    /// (`FUSION_LEND_ADJOINTS`, 0 or 1; default 1).
    pub lend_adjoints: Option<bool>,
    /// Whether launches of one work-group wait to run together as one
    /// kernel (`FUSION_SWEEPS`, 0 or 1; default 1 on GPUs, 0 elsewhere;
    /// a thread's [`set_launch_sweeps`](crate::set_launch_sweeps) overrides it).
    pub sweeps: Option<bool>,
    /// Whether a sampler's density replays its recorded device work once
    /// two calls recorded the same (`FUSION_REPLAY`, 0 or 1; default 1;
    /// see `clfuse::rev::Replay`).
    pub replay: Option<bool>,
    /// Whether a replay issues each recorded launch, a whole sweep among
    /// them, on a kernel object of its own with its arguments set once
    /// (`FUSION_BIND_REPLAYS`, 0 or 1; default 1), instead of launching
    /// and joining sweeps again as the recorded call did.
    pub bind_replays: Option<bool>,
    /// Whether interleaved chains replaying the same recorded work launch
    /// each recorded kernel once for all of them (`FUSION_BATCH_CHAINS`, 0
    /// or 1; default 1; see [`ReplayBatch`](crate::ReplayBatch)), instead
    /// of once per chain.
    pub batch_chains: Option<bool>,
    /// Whether a bound replayed launch of many arguments takes its scalars
    /// from a table and each buffer it passes twice once
    /// (`FUSION_COMPACT_LAUNCHES`, 0 or 1; default 1), instead of as the
    /// kernel was written: on NVIDIA's driver every argument costs the host
    /// time at each enqueue.
    pub compact_launches: Option<bool>,
    /// Whether matrices of at most 64 KiB are sub-buffers of larger ones,
    /// which a replayed launch's variant passes once (`FUSION_ARENA`, 0 or
    /// 1; default 1): on NVIDIA's driver every argument costs the host
    /// time at each enqueue. Matrices created while it is off keep buffers
    /// of their own.
    pub arena: Option<bool>,
    /// Whether a kernel computing `xᵀ·v` ends with its last work-group
    /// adding up every group's sums, when they are few enough, instead of
    /// leaving them to a second kernel (`FUSION_LAST_GROUP_SUMS`, 0 or 1;
    /// default 1 on GPUs, 0 elsewhere: PoCL takes seconds to build the
    /// ending's barriers into a large kernel, and a CPU's second launch
    /// costs little).
    pub last_group_sums: Option<bool>,
    /// Whether a replayed launch of one work-group (a recorded sweep) runs
    /// the calling thread's pending launches from outside the recording
    /// (a sampler's position write) as its first steps
    /// (`FUSION_REPLAY_PROLOGUES`, 0 or 1; default 1), instead of their
    /// own sweep launched before it: one kernel fewer per call.
    pub replay_prologues: Option<bool>,
}

/// The environment variables [`Tuning::from_env`] reads, in field order.
pub const TUNING_VARIABLES: [&str; 27] = [
    "FUSION_REDUCTION_GROUPS_PER_CU",
    "FUSION_STAGED_PER_WORK_ITEM",
    "FUSION_ROW_BLOCK_PREFETCH",
    "FUSION_ROW_BLOCK_GROUP_SIZE",
    "FUSION_ROW_BLOCK_GROUPS_PER_CU",
    "FUSION_GEMM",
    "FUSION_GEMM_SMALL_BELOW",
    "FUSION_GEMM_SMALL",
    "FUSION_GEMM_THIN",
    "FUSION_ROW_VECTOR_GROUPS_PER_CU",
    "FUSION_ROW_VECTOR_CHUNK",
    "FUSION_CHOLESKY_LEAF_GROUPS",
    "FUSION_CHOLESKY_LEAF_GROUPS_PER_CU",
    "FUSION_CHOLESKY_LOOKAHEAD",
    "FUSION_GLM_ONE_PASS",
    "FUSION_GEMM_EPILOGUE",
    "FUSION_NATIVE_ATOMICS",
    "FUSION_MIXTURE_ROWS",
    "FUSION_LEND_ADJOINTS",
    "FUSION_SWEEPS",
    "FUSION_REPLAY",
    "FUSION_BIND_REPLAYS",
    "FUSION_BATCH_CHAINS",
    "FUSION_COMPACT_LAUNCHES",
    "FUSION_ARENA",
    "FUSION_LAST_GROUP_SUMS",
    "FUSION_REPLAY_PROLOGUES",
];

impl Tuning {
    /// The knobs set in the environment (unset or empty variables keep the
    /// built-in choice). A value outside its range is an
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming the
    /// variable and what it accepts.
    ///
    /// ```
    /// // Unset variables mean "the built-in choice".
    /// if std::env::var_os("FUSION_ROW_VECTOR_CHUNK").is_none() {
    ///     assert_eq!(clfuse_core::Tuning::from_env()?.row_vector_chunk, None);
    /// }
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn from_env() -> Result<Self> {
        Self::from_lookup(env_value)
    }

    /// Like [`from_env`](Self::from_env), reading values from `lookup`.
    ///
    /// ```
    /// use clfuse_core::{GlmOnePass, Tuning};
    /// let tuning = Tuning::from_lookup(|name| (name == "FUSION_GLM_ONE_PASS").then(|| "2".to_string()))?;
    /// assert_eq!(tuning.glm_one_pass, Some(GlmOnePass::WheneverStaged));
    /// let bad = Tuning::from_lookup(|name| (name == "FUSION_ROW_BLOCK_GROUP_SIZE").then(|| "100".to_string()));
    /// assert!(bad.unwrap_err().to_string().contains("FUSION_ROW_BLOCK_GROUP_SIZE"));
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    pub fn from_lookup(lookup: impl Fn(&'static str) -> Option<String>) -> Result<Self> {
        let count = |name: &'static str, range: RangeInclusive<usize>| {
            lookup(name)
                .map(|text| parse_count(name, &text, range))
                .transpose()
        };
        let tiling = |name: &'static str| {
            lookup(name)
                .map(|text| GemmConfig::parse_for(name, &text))
                .transpose()
        };
        let tuning = Tuning {
            reduction_groups_per_cu: count("FUSION_REDUCTION_GROUPS_PER_CU", 1..=1024)?,
            staged_per_work_item: count("FUSION_STAGED_PER_WORK_ITEM", 1..=64)?,
            row_block_prefetch: lookup("FUSION_ROW_BLOCK_PREFETCH")
                .map(|text| parse_flag("FUSION_ROW_BLOCK_PREFETCH", &text))
                .transpose()?,
            row_block_group_size: count("FUSION_ROW_BLOCK_GROUP_SIZE", 1..=256)?,
            row_block_groups_per_cu: count("FUSION_ROW_BLOCK_GROUPS_PER_CU", 1..=64)?,
            gemm: tiling("FUSION_GEMM")?,
            gemm_small_below: count("FUSION_GEMM_SMALL_BELOW", 1..=1_000_000)?,
            gemm_small: tiling("FUSION_GEMM_SMALL")?,
            gemm_thin: tiling("FUSION_GEMM_THIN")?,
            row_vector_groups_per_cu: count("FUSION_ROW_VECTOR_GROUPS_PER_CU", 1..=64)?,
            row_vector_chunk: count("FUSION_ROW_VECTOR_CHUNK", 1..=64)?,
            cholesky_leaf_groups: count("FUSION_CHOLESKY_LEAF_GROUPS", 1..=4)?,
            cholesky_leaf_groups_per_cu: count("FUSION_CHOLESKY_LEAF_GROUPS_PER_CU", 1..=64)?,
            cholesky_lookahead: count("FUSION_CHOLESKY_LOOKAHEAD", 0..=1_000_000)?,
            glm_one_pass: lookup("FUSION_GLM_ONE_PASS")
                .map(|text| match text.as_str() {
                    "0" => Ok(GlmOnePass::Never),
                    "1" => Ok(GlmOnePass::SmallTeams),
                    "2" => Ok(GlmOnePass::WheneverStaged),
                    _ => Err(invalid("FUSION_GLM_ONE_PASS", &text, "0, 1 or 2")),
                })
                .transpose()?,
            gemm_epilogue: lookup("FUSION_GEMM_EPILOGUE")
                .map(|text| match text.as_str() {
                    "0" => Ok(GemmEpilogue::Off),
                    "1" => Ok(GemmEpilogue::On),
                    _ => Err(invalid("FUSION_GEMM_EPILOGUE", &text, "0 or 1")),
                })
                .transpose()?,
            native_atomics: lookup("FUSION_NATIVE_ATOMICS")
                .map(|text| parse_flag("FUSION_NATIVE_ATOMICS", &text))
                .transpose()?,
            mixture_rows: count("FUSION_MIXTURE_ROWS", 1..=8)?,
            lend_adjoints: lookup("FUSION_LEND_ADJOINTS")
                .map(|text| parse_flag("FUSION_LEND_ADJOINTS", &text))
                .transpose()?,
            sweeps: lookup("FUSION_SWEEPS")
                .map(|text| parse_flag("FUSION_SWEEPS", &text))
                .transpose()?,
            replay: lookup("FUSION_REPLAY")
                .map(|text| parse_flag("FUSION_REPLAY", &text))
                .transpose()?,
            bind_replays: lookup("FUSION_BIND_REPLAYS")
                .map(|text| parse_flag("FUSION_BIND_REPLAYS", &text))
                .transpose()?,
            batch_chains: lookup("FUSION_BATCH_CHAINS")
                .map(|text| parse_flag("FUSION_BATCH_CHAINS", &text))
                .transpose()?,
            compact_launches: lookup("FUSION_COMPACT_LAUNCHES")
                .map(|text| parse_flag("FUSION_COMPACT_LAUNCHES", &text))
                .transpose()?,
            arena: lookup("FUSION_ARENA")
                .map(|text| parse_flag("FUSION_ARENA", &text))
                .transpose()?,
            last_group_sums: lookup("FUSION_LAST_GROUP_SUMS")
                .map(|text| parse_flag("FUSION_LAST_GROUP_SUMS", &text))
                .transpose()?,
            replay_prologues: lookup("FUSION_REPLAY_PROLOGUES")
                .map(|text| parse_flag("FUSION_REPLAY_PROLOGUES", &text))
                .transpose()?,
        };
        tuning.validate()?;
        Ok(tuning)
    }

    /// Checks every set field against its range (a struct built in code
    /// is checked too, by [`configure`](crate::configure)).
    pub fn validate(&self) -> Result<()> {
        let check =
            |name: &'static str, value: Option<usize>, range: RangeInclusive<usize>| match value {
                Some(v) if !range.contains(&v) => Err(invalid(
                    name,
                    &v.to_string(),
                    &format!("{}–{}", range.start(), range.end()),
                )),
                _ => Ok(()),
            };
        check(
            "FUSION_REDUCTION_GROUPS_PER_CU",
            self.reduction_groups_per_cu,
            1..=1024,
        )?;
        check(
            "FUSION_STAGED_PER_WORK_ITEM",
            self.staged_per_work_item,
            1..=64,
        )?;
        check(
            "FUSION_ROW_BLOCK_GROUP_SIZE",
            self.row_block_group_size,
            1..=256,
        )?;
        if let Some(size) = self.row_block_group_size
            && !size.is_power_of_two()
        {
            return Err(invalid(
                "FUSION_ROW_BLOCK_GROUP_SIZE",
                &size.to_string(),
                "a power of two, 1–256",
            ));
        }
        check(
            "FUSION_ROW_BLOCK_GROUPS_PER_CU",
            self.row_block_groups_per_cu,
            1..=64,
        )?;
        check(
            "FUSION_GEMM_SMALL_BELOW",
            self.gemm_small_below,
            1..=1_000_000,
        )?;
        check(
            "FUSION_ROW_VECTOR_GROUPS_PER_CU",
            self.row_vector_groups_per_cu,
            1..=64,
        )?;
        check("FUSION_ROW_VECTOR_CHUNK", self.row_vector_chunk, 1..=64)?;
        if let Some(groups) = self.cholesky_leaf_groups
            && !matches!(groups, 1 | 2 | 4)
        {
            return Err(invalid(
                "FUSION_CHOLESKY_LEAF_GROUPS",
                &groups.to_string(),
                "1, 2 or 4",
            ));
        }
        check(
            "FUSION_CHOLESKY_LEAF_GROUPS_PER_CU",
            self.cholesky_leaf_groups_per_cu,
            1..=64,
        )?;
        check(
            "FUSION_CHOLESKY_LOOKAHEAD",
            self.cholesky_lookahead,
            0..=1_000_000,
        )?;
        check("FUSION_MIXTURE_ROWS", self.mixture_rows, 1..=8)?;
        for (name, config) in [
            ("FUSION_GEMM", self.gemm),
            ("FUSION_GEMM_SMALL", self.gemm_small),
            ("FUSION_GEMM_THIN", self.gemm_thin),
        ] {
            match config {
                Some(
                    GemmConfig::Tiled {
                        thread_block_size,
                        work_per_thread,
                        tile_k,
                    }
                    | GemmConfig::TensorCores {
                        thread_block_size,
                        work_per_thread,
                        tile_k,
                    },
                ) if thread_block_size == 0 || work_per_thread == 0 || tile_k == 0 => {
                    return Err(invalid(name, "0", "positive sizes"));
                }
                Some(GemmConfig::Portable) if name != "FUSION_GEMM" => {
                    return Err(invalid(name, "portable", "a tiling, not `portable`"));
                }
                _ => {}
            }
        }
        Ok(())
    }
}
