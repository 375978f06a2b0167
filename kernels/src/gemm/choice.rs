//! The device's GEMM configuration: the default of each device (settled
//! once), the smaller tiling of small products and of epilogues,
//! `FUSION_GEMM`'s override, a product's explicit choice, and the checks
//! of a configuration against the device.

use super::{direct, tensor_cores, tiled};
use clfuse_core::{ClFloat, Error, GemmConfig, Result, Runtime};

/// The device's choice of [`GemmConfig`] for a product, and the check of a
/// configuration against the device (in the prelude).
///
/// ```
/// use clfuse_kernels::prelude::*;
/// use clfuse_kernels::GemmConfig;
/// let config = GemmConfig::for_device()?;
/// config.validate::<f64>()?;
/// assert!(config.block().is_some_and(|(rows, _)| rows >= 1));
/// # Ok::<(), clfuse_core::Error>(())
/// ```
pub trait GemmChoice: Sized {
    /// The configuration for the current device: `FUSION_GEMM` when set,
    /// else FP64 tensor cores 128/8/8 on NVIDIA devices of compute
    /// capability 8.0 and 9.0+, tiled 128/8/8 on other GPUs (best of the
    /// tilings measured on an H200, see BENCHMARKS.md) and direct 16 x 8 on
    /// CPUs (best of those measured on PoCL, where it outruns the tiled
    /// kernel 2-3x); validated against the device. Never
    /// [`Portable`](GemmConfig::Portable).
    ///
    /// ```
    /// use clfuse_kernels::{GemmChoice, GemmConfig};
    /// let config = GemmConfig::for_device()?;
    /// assert!(config.block().unwrap().0 >= 1);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    fn for_device() -> Result<Self>;

    /// The configuration for an `m x n` product (`lower_only`: only the
    /// tiles touching the lower triangle): [`for_device`](Self::for_device),
    /// except that on a GPU a product with fewer 128 x 128 tiles than a
    /// quarter of the compute units (`FUSION_GEMM_SMALL_BELOW` tiles to tune)
    /// takes 64 x 64 tiles (4 x 4 per work item, fewer registers), so that
    /// small and skinny products (a blocked algorithm's) occupy more compute
    /// units; so does a product at most 64 wide or tall at any length. (On
    /// an H200, a quarter was best for n = 1024 products.) A `lower_only`
    /// product, a factorization's update, takes small tiles below two large
    /// ones per compute unit: large tiles run one work-group per compute
    /// unit, so a second wave that is barely begun costs as much as the
    /// first. (Cholesky on an H200, this threshold against a quarter: 6–7%
    /// faster at n = 4096 and 8192, 5% at 16384, the same at 2048.)
    /// `FUSION_GEMM_SMALL_BELOW` sets both thresholds; `FUSION_GEMM`
    /// overrides the choice.
    ///
    /// ```
    /// use clfuse_kernels::{GemmChoice, GemmConfig};
    /// let config = GemmConfig::for_shape(10_000, 10_000, false)?;
    /// assert_eq!(config, GemmConfig::for_device()?);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    fn for_shape(m: usize, n: usize, lower_only: bool) -> Result<Self>;

    /// The configuration of an `m x n` GEMM whose store applies an
    /// epilogue (see [`EpilogueGemm`](crate::EpilogueGemm)):
    /// [`for_shape`](Self::for_shape), except that the tensor-core kernel
    /// takes its small tiling whatever the shape. A work item's stored
    /// elements each run the epilogue, and with 64 x 64 tiles (fewer
    /// registers, more work-groups per compute unit) one group's epilogue
    /// overlaps another's main loop: `inv_logit(x * b + 1)`, x 1e6 x 100, on
    /// an H200 took 1.30 ms against 1.55 ms with 128 x 128 tiles, where the
    /// product alone takes 1.02 and 0.98 ms. The portable kernel gained
    /// nothing from it (2.17 ms either way) and lost 12% on a cheap tail
    /// (BENCHMARKS.md). `FUSION_GEMM` overrides it.
    ///
    /// ```
    /// use clfuse_kernels::{GemmChoice, GemmConfig};
    /// let config = GemmConfig::for_epilogue(1000, 100)?;
    /// assert!(config.block().unwrap().0 >= 1);
    /// # Ok::<(), clfuse_core::Error>(())
    /// ```
    fn for_epilogue(m: usize, n: usize) -> Result<Self>;

    /// Checks the blocking against the device's work-group and local-memory
    /// limits (and, for the direct kernel, a sane register block);
    /// [`Portable`](GemmConfig::Portable) always passes (it resolves to a
    /// checked choice).
    ///
    /// ```
    /// use clfuse_kernels::{GemmChoice, GemmConfig};
    /// assert!(GemmConfig::Tiled { thread_block_size: 32, work_per_thread: 4, tile_k: 16 }.validate::<f64>().is_ok());
    /// assert!(GemmConfig::Tiled { thread_block_size: 30, work_per_thread: 4, tile_k: 16 }.validate::<f64>().is_err());
    /// assert!(GemmConfig::Direct { rows: 0, cols: 4 }.validate::<f64>().is_err());
    /// ```
    fn validate<T: ClFloat>(&self) -> Result<()>;
}

impl GemmChoice for GemmConfig {
    fn for_device() -> Result<GemmConfig> {
        Ok(chosen()?.config)
    }

    fn for_shape(m: usize, n: usize, lower_only: bool) -> Result<GemmConfig> {
        Ok(chosen()?.for_shape(m, n, lower_only))
    }

    fn for_epilogue(m: usize, n: usize) -> Result<GemmConfig> {
        let chosen = chosen()?;
        Ok(match (chosen.for_shape(m, n, false), chosen.small) {
            (GemmConfig::TensorCores { .. }, Some(small)) => small.config,
            (config, _) => config,
        })
    }

    fn validate<T: ClFloat>(&self) -> Result<()> {
        let info = Runtime::get()?.device_info();
        let reason = match *self {
            GemmConfig::Tiled {
                thread_block_size,
                work_per_thread,
                tile_k,
            } => tiled::unfit::<T>(info, thread_block_size, work_per_thread, tile_k, tiled::PAD),
            GemmConfig::TensorCores {
                thread_block_size,
                work_per_thread,
                tile_k,
            } => tensor_cores::unfit(info, thread_block_size, work_per_thread, tile_k).or_else(
                || {
                    tiled::unfit::<T>(
                        info,
                        thread_block_size,
                        work_per_thread,
                        tile_k,
                        tensor_cores::PAD,
                    )
                },
            ),
            GemmConfig::Direct { rows, cols } => direct::unfit(rows, cols),
            GemmConfig::Portable => None,
        };
        match reason {
            Some(reason) => Err(Error::InvalidArgument {
                function: "GemmConfig::validate",
                argument: "config",
                reason,
            }),
            None => Ok(()),
        }
    }
}

/// The configuration an `m x n` product of `T` runs: `requested` (checked
/// against the device), else the device's choice for its shape, without
/// tensor cores where `requested` is `Portable` or `T` is not `f64`. Never
/// `Portable`.
pub(crate) fn resolve<T: ClFloat>(
    requested: Option<GemmConfig>,
    m: usize,
    n: usize,
    lower_only: bool,
) -> Result<GemmConfig> {
    let config = match requested {
        None => chosen()?.for_shape(m, n, lower_only),
        Some(GemmConfig::Portable) => chosen()?.portable().for_shape(m, n, lower_only),
        Some(config) => {
            config.validate::<T>()?;
            config
        }
    };
    Ok(for_element::<T>(config))
}

/// The tiling of a GPU's updates with k and width at most 64 that lie on
/// a factorization's chain (the Cholesky update between a panel's two
/// leaves); `None` where the device's own choice stands (CPUs) or
/// `FUSION_GEMM` chooses every product's tiling.
pub(crate) fn thin_update() -> Result<Option<GemmConfig>> {
    Ok(chosen()?.thin_update())
}

/// The configuration for elements of type `T`: tensor cores are FP64 only.
pub(crate) fn for_element<T: ClFloat>(config: GemmConfig) -> GemmConfig {
    if T::CL_NAME == "double" {
        config
    } else {
        portable(config)
    }
}

/// The same blocking without tensor cores.
fn portable(config: GemmConfig) -> GemmConfig {
    match config {
        GemmConfig::TensorCores {
            thread_block_size,
            work_per_thread,
            tile_k,
        } => GemmConfig::Tiled {
            thread_block_size,
            work_per_thread,
            tile_k,
        },
        other => other,
    }
}

/// The device's GEMM configuration, and for GPUs the smaller tiling used
/// below a number of tiles (see [`GemmChoice::for_shape`]).
#[derive(Debug, Clone, Copy)]
struct Chosen {
    config: GemmConfig,
    small: Option<Small>,
}

/// A GPU's small tiling and when a product takes it.
#[derive(Debug, Clone, Copy)]
struct Small {
    config: GemmConfig,
    /// A product with fewer large tiles than this takes the small ones.
    below: usize,
    /// The same for `lower_only` products (a factorization's updates).
    update_below: usize,
    /// The tiling of thin updates ([`THIN`] unless `FUSION_GEMM_THIN`).
    thin: GemmConfig,
}

/// The built-in tiling of thin updates (see [`Chosen::thin_update`]).
const THIN: GemmConfig = GemmConfig::Tiled {
    thread_block_size: 32,
    work_per_thread: 2,
    tile_k: 16,
};

impl Chosen {
    /// The configuration of an `m x n` product (see [`GemmChoice::for_shape`]).
    fn for_shape(&self, m: usize, n: usize, lower_only: bool) -> GemmConfig {
        let Some(small) = self.small else {
            return self.config;
        };
        let (Some((rows, cols)), Some((small_rows, small_cols))) =
            (self.config.block(), small.config.block())
        else {
            return self.config;
        };
        let tiles = m.div_ceil(rows) * n.div_ceil(cols);
        let (tiles, below) = if lower_only {
            (tiles.div_ceil(2), small.update_below)
        } else {
            (tiles, small.below)
        };
        // A product no wider (or taller) than a small tile would leave at
        // least half of every large tile's work items idle.
        let thin = m <= small_rows || n <= small_cols;
        if tiles < below || thin {
            small.config
        } else {
            self.config
        }
    }

    /// See [`thin_update`]: 32 x 32 tiles without tensor cores, 2 x 2 per
    /// work item, slices of 16, where the device has a small tiling (GPUs
    /// without `FUSION_GEMM`). Four times as many work-groups as the 64 x 64
    /// tensor-core tiles and half as many dependent slices of k: on an H200
    /// the Cholesky's k = 64 update took 6.8 instead of 10.9 µs at n = 2048
    /// and 8.9 instead of 11.5 at 4096, the factorization 5% less time at
    /// 1000 and 2048, 3.5% at 4096, 1% at 8192 and the same at 16384 (per
    /// call, same lease).
    fn thin_update(&self) -> Option<GemmConfig> {
        self.small.map(|small| small.thin)
    }

    /// The same choice without tensor cores.
    fn portable(self) -> Chosen {
        Chosen {
            config: portable(self.config),
            small: self.small.map(|small| Small {
                config: portable(small.config),
                thin: portable(small.thin),
                ..small
            }),
        }
    }
}

/// Settled once per device (a device and the environment do not
/// change); every product asks for it.
fn chosen() -> Result<Chosen> {
    static CHOSEN: std::sync::Mutex<Vec<(usize, Chosen)>> = std::sync::Mutex::new(Vec::new());
    let slot = Runtime::get()?.slot();
    let known =
        |list: &Vec<(usize, Chosen)>| list.iter().find(|(s, _)| *s == slot).map(|(_, c)| *c);
    if let Some(chosen) = known(&CHOSEN.lock().unwrap_or_else(|p| p.into_inner())) {
        return Ok(chosen);
    }
    let chosen = choose()?;
    let mut list = CHOSEN.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(settled) = known(&list) {
        return Ok(settled);
    }
    list.push((slot, chosen));
    Ok(chosen)
}

fn choose() -> Result<Chosen> {
    let rt = Runtime::get()?;
    let info = rt.device_info();
    let explicit = rt.tuning().gemm.filter(|c| *c != GemmConfig::Portable);
    let tensor_cores = rt.tuning().gemm.is_none() && info.has_fp64_tensor_cores();
    let chosen = match explicit {
        Some(config) => Chosen {
            config,
            small: None,
        },
        None if info.is_gpu => {
            // Slices of 8 (m16n8k4 steps on 9.0+): slices of 16 would
            // take m16n8k16, which measured slower in this kernel on
            // an H200 at every tiling and in Cholesky (BENCHMARKS.md).
            let tiles = |thread_block_size, work_per_thread| {
                if tensor_cores {
                    GemmConfig::TensorCores {
                        thread_block_size,
                        work_per_thread,
                        tile_k: 8,
                    }
                } else {
                    GemmConfig::Tiled {
                        thread_block_size,
                        work_per_thread,
                        tile_k: 8,
                    }
                }
            };
            let tuning = rt.tuning();
            // A tiling the environment names must fit the device; the
            // built-in one is dropped where it does not.
            for config in [tuning.gemm_small, tuning.gemm_thin].into_iter().flatten() {
                config.validate::<f64>()?;
            }
            let small = tuning.gemm_small.unwrap_or(tiles(64, 4));
            let compute_units = info.compute_units as usize;
            let below = tuning.gemm_small_below;
            Chosen {
                config: tiles(128, 8),
                small: small.validate::<f64>().is_ok().then_some(Small {
                    config: small,
                    below: below.unwrap_or(compute_units.div_ceil(4)),
                    update_below: below.unwrap_or(2 * compute_units),
                    thin: tuning.gemm_thin.unwrap_or(THIN),
                }),
            }
        }
        None => Chosen {
            config: GemmConfig::Direct { rows: 16, cols: 8 },
            small: None,
        },
    };
    chosen.config.validate::<f64>()?;
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GPU's choice with 132 compute units: large 128 x 128 tiles, small
    /// 64 x 64 ones below 33 large tiles, below 264 for updates.
    fn gpu() -> Chosen {
        let tiles = |thread_block_size, work_per_thread| GemmConfig::TensorCores {
            thread_block_size,
            work_per_thread,
            tile_k: 8,
        };
        Chosen {
            config: tiles(128, 8),
            small: Some(Small {
                config: tiles(64, 4),
                below: 33,
                update_below: 264,
                thin: THIN,
            }),
        }
    }

    #[test]
    fn updates_take_small_tiles_below_two_waves_of_large_ones() {
        let chosen = gpu();
        let (large, small) = (chosen.config, chosen.small.map(|s| s.config));
        // A 2048 x 2048 product: 256 large tiles, more than a quarter of the units.
        assert_eq!(chosen.for_shape(2048, 2048, false), large);
        // The same as a lower-only update: 128 of its tiles count, fewer than 264.
        assert_eq!(Some(chosen.for_shape(2048, 2048, true)), small);
        // 4096 x 4096 lower-only: 512 tiles count, more than two waves.
        assert_eq!(chosen.for_shape(4096, 4096, true), large);
        // Small products and thin ones take small tiles either way.
        assert_eq!(Some(chosen.for_shape(512, 512, false)), small);
        assert_eq!(Some(chosen.for_shape(100_000, 64, false)), small);
        // Without a small tiling (CPUs, FUSION_GEMM) nothing changes.
        let cpu = Chosen {
            config: GemmConfig::Direct { rows: 16, cols: 8 },
            small: None,
        };
        assert_eq!(cpu.for_shape(2048, 2048, true), cpu.config);
    }

    #[test]
    fn thin_updates_on_gpus_only() {
        assert!(matches!(
            gpu().thin_update(),
            Some(GemmConfig::Tiled {
                thread_block_size: 32,
                ..
            })
        ));
        // CPUs and FUSION_GEMM (no small tiling) keep their own choice.
        let explicit = Chosen {
            config: GemmConfig::Direct { rows: 16, cols: 8 },
            small: None,
        };
        assert_eq!(explicit.thin_update(), None);
    }
}
