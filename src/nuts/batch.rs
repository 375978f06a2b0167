//! Batched chains: one evaluation gives several chains' log densities and
//! gradients ([`BatchDensity`]), and a model that builds such a density on
//! each device it runs on ([`BatchedModel`], [`BatchModel`]), or on a share
//! of the data's rows on each ([`SplitBatchModel`]).

use crate::rev::{self, Eval, Var};
use clfuse_core::{Device, Error, MatrixCl, Result};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::ops::Range;

/// A log density evaluated at several positions at once: what a batch of
/// chains on one device calls (see [`sample_batched`](super::sample_batched)).
///
/// Column `k` of `positions` is chain `k`'s position; its value and
/// gradient must be what an evaluation at that position alone gives.
///
/// ```
/// use clfuse::nuts::BatchDensity;
/// // A standard normal evaluated on the host, for illustration.
/// struct Normal(usize);
/// impl BatchDensity for Normal {
///     fn dim(&self) -> usize { self.0 }
///     fn evaluate(&mut self, positions: &[f64], gradients: &mut [f64]) -> clfuse::Result<Vec<f64>> {
///         gradients.iter_mut().zip(positions).for_each(|(g, x)| *g = -x);
///         Ok(positions.chunks(self.0).map(|c| -0.5 * c.iter().map(|x| x * x).sum::<f64>()).collect())
///     }
/// }
/// let mut g = [0.0; 4];
/// assert_eq!(Normal(2).evaluate(&[1.0, 0.0, 0.0, 2.0], &mut g)?, [-0.5, -2.0]);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub trait BatchDensity {
    /// Unconstrained dimension of one position.
    fn dim(&self) -> usize;
    /// The log densities at the columns of `positions` (`dim x k`,
    /// column-major, `k >= 1`), with their gradients written to `gradients`
    /// (same layout).
    fn evaluate(&mut self, positions: &[f64], gradients: &mut [f64]) -> Result<Vec<f64>>;
}

/// The number of positions in a batch (`positions` and `gradients` both
/// `dim x k`, `k >= 1`), or an error naming `function`.
pub(crate) fn batch_width(
    function: &'static str,
    dim: usize,
    positions: &[f64],
    gradients: &[f64],
) -> Result<usize> {
    let batch = positions.len() / dim.max(1);
    if batch == 0
        || !positions.len().is_multiple_of(dim.max(1))
        || gradients.len() != positions.len()
    {
        return Err(Error::InvalidArgument {
            function,
            argument: "positions",
            reason: format!(
                "has {} values and gradients {}: both must hold k >= 1 columns of {dim}",
                positions.len(),
                gradients.len(),
            ),
        });
    }
    Ok(batch)
}

/// A batched log density written with [`rev`](crate::rev): `model(&theta)`
/// gets the `dim x k` parameters, one column per chain, and returns the
/// `1 x k` row of their log densities, entry `k` depending on column `k`
/// alone. Written once, it is evaluated for any number of chains: `x * theta`
/// is one GEMM that reads `x` once for all of them, and `colwise_sum`
/// reduces each chain's column. One forward and one reverse pass serve the
/// whole batch ([`rev::batch_value_and_grad_to_host`]), replayed once two
/// evaluations of one batch width did the same device work ([`rev::Replay`]).
///
/// ```
/// use clfuse::nuts::{BatchDensity, DeviceBatchDensity};
/// use clfuse::prelude::*;
/// let mut density = DeviceBatchDensity::new(2, |theta| colwise_sum(-0.5f64 * square(theta)).eval())?;
/// let mut gradients = [0.0; 6];
/// let values = density.evaluate(&[1.0, 2.0, 0.0, 0.0, -1.0, 1.0], &mut gradients)?;
/// assert_eq!(values, [-2.5, 0.0, -1.0]);
/// assert_eq!(gradients, [-1.0, -2.0, 0.0, 0.0, 1.0, -1.0]);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub struct DeviceBatchDensity<F> {
    dim: usize,
    /// The parameter variable per batch size (chains leave as they
    /// finish), with the replay of its evaluations.
    thetas: HashMap<usize, (Var, rev::Replay)>,
    model: F,
}

impl<F: FnMut(&Var) -> Result<Var>> DeviceBatchDensity<F> {
    /// A batched density over `dim` parameters per chain.
    pub fn new(dim: usize, model: F) -> Result<Self> {
        if dim == 0 {
            return Err(Error::InvalidArgument {
                function: "DeviceBatchDensity::new",
                argument: "dim",
                reason: "is 0: a density needs a parameter".into(),
            });
        }
        Ok(DeviceBatchDensity {
            dim,
            thetas: HashMap::new(),
            model,
        })
    }
}

impl<F: FnMut(&Var) -> Result<Var>> BatchDensity for DeviceBatchDensity<F> {
    fn dim(&self) -> usize {
        self.dim
    }

    fn evaluate(&mut self, positions: &[f64], gradients: &mut [f64]) -> Result<Vec<f64>> {
        let batch = batch_width(
            "DeviceBatchDensity::evaluate",
            self.dim,
            positions,
            gradients,
        )?;
        let (theta, replay) = match self.thetas.entry(batch) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert((
                Var::new(MatrixCl::zeros(self.dim, batch)?),
                rev::Replay::new(),
            )),
        };
        theta.value().write_queued(positions)?;
        let mut values = vec![0.0; batch];
        let model = &mut self.model;
        replay.batch_value_and_grad_to_host(theta, || model(theta), &mut values, gradients)?;
        Ok(values)
    }
}

/// A model the batched front end ([`sample_batched`](super::sample_batched))
/// samples: like [`Model`](super::Model), but its density evaluates all of
/// a device's chains at once, and is built once per device (on that
/// device's batch thread, with the device current, so the data it uploads
/// lands there: once per device, whatever the number of chains).
pub trait BatchedModel: Sync {
    /// The per-device density.
    type Density<'m>: BatchDensity
    where
        Self: 'm;
    /// Unconstrained dimension.
    fn dim(&self) -> usize;
    /// Names of the constrained output columns (as [`Model::column_names`](super::Model::column_names)).
    fn column_names(&self) -> Vec<String>;
    /// The batched density on `device` (current while this runs).
    fn density(&self, device: Device) -> Result<Self::Density<'_>>;
    /// Host map of one unconstrained position to the constrained columns.
    fn constrain(&self, unconstrained: &[f64]) -> Result<Vec<f64>>;
    /// The number of data rows the density sums over, when its rows can
    /// be split over devices ([`Sampler::split_rows`](super::Sampler::split_rows));
    /// `None` (the default) when they cannot.
    fn rows(&self) -> Option<usize> {
        None
    }
    /// The density of data rows `rows` alone on `device` (current while
    /// this runs; the part's data is uploaded there), with the terms that
    /// read no data (the prior) only when `with_prior`: the parts of a
    /// split, exactly one of them with the prior, sum to
    /// [`density`](Self::density). Needed when [`rows`](Self::rows) is
    /// `Some`; the default is an error.
    fn part_density(
        &self,
        device: Device,
        rows: Range<usize>,
        with_prior: bool,
    ) -> Result<Self::Density<'_>> {
        let _ = (device, with_prior);
        Err(Error::Unsupported {
            what: format!(
                "BatchedModel::part_density: this model cannot evaluate rows {rows:?} alone"
            ),
        })
    }
}

/// A batched model of two closures: `upload()` puts the data on the current
/// device (called once per device), and `model(&data, &theta)` maps the
/// `dim x k` parameters to the `1 x k` log densities (see
/// [`DeviceBatchDensity`]). Columns are named `theta[1]` … `theta[dim]`,
/// constrained = unconstrained.
///
/// ```
/// use clfuse::nuts::{BatchModel, BatchedModel};
/// use clfuse::prelude::*;
/// // y_i ~ N(mu, 1), flat prior; one column of `mu` per chain.
/// let y = vec![0.8, 1.3, 0.9, 1.4];
/// let model = BatchModel::new(
///     1,
///     || MatrixCl::from_slice(4, 1, &y),
///     |y: &MatrixCl<f64>, mu: &clfuse::rev::Var| {
///         let k = mu.cols();
///         colwise_sum(-0.5f64 * square(colwise_broadcast(y, k) - rowwise_broadcast(mu, 4))).eval()
///     },
/// );
/// assert_eq!(model.column_names(), ["theta[1]"]);
/// ```
pub struct BatchModel<D, U, F> {
    dim: usize,
    upload: U,
    model: F,
    data: PhantomData<fn() -> D>,
}

impl<D, U, F> BatchModel<D, U, F>
where
    U: Fn() -> Result<D> + Sync,
    F: Fn(&D, &Var) -> Result<Var> + Sync,
{
    /// A batched model over `dim` unconstrained parameters.
    pub fn new(dim: usize, upload: U, model: F) -> Self {
        BatchModel {
            dim,
            upload,
            model,
            data: PhantomData,
        }
    }
}

impl<D, U, F> BatchedModel for BatchModel<D, U, F>
where
    U: Fn() -> Result<D> + Sync,
    F: Fn(&D, &Var) -> Result<Var> + Sync,
{
    type Density<'m>
        = DeviceBatchDensity<Box<dyn FnMut(&Var) -> Result<Var> + 'm>>
    where
        Self: 'm;

    fn dim(&self) -> usize {
        self.dim
    }

    fn column_names(&self) -> Vec<String> {
        super::model::unconstrained_names(self.dim)
    }

    fn density(&self, device: Device) -> Result<Self::Density<'_>> {
        let data = device.run(|| (self.upload)())?;
        let model = &self.model;
        DeviceBatchDensity::new(self.dim, Box::new(move |theta: &Var| model(&data, theta)))
    }

    fn constrain(&self, unconstrained: &[f64]) -> Result<Vec<f64>> {
        super::model::unchanged("BatchModel::constrain", self.dim, unconstrained)
    }
}

/// A batched model whose data rows can be split over devices: `upload(rows)`
/// puts rows `rows` of the data on the current device, `likelihood(&data,
/// &theta)` gives the `1 x k` log likelihoods of those rows alone, and
/// `prior(&theta)` the `1 x k` terms that read no data. On one device it is
/// a [`BatchModel`] of all the rows with the prior added; with
/// [`Sampler::split_rows`](super::Sampler::split_rows) every device
/// evaluates every chain on its share of the rows, one of them adds the
/// prior, and the host sums the parts ([`RowSplitDensity`](super::RowSplitDensity)).
///
/// ```
/// use clfuse::nuts::{BatchedModel, SplitBatchModel};
/// use clfuse::prelude::*;
/// use clfuse::rev::Var;
/// // y_i ~ N(mu, 1), mu ~ N(0, 10²); one column of `mu` per chain.
/// let y: Vec<f64> = (0..5).map(|i| 1.0 + 0.1 * i as f64).collect();
/// let model = SplitBatchModel::new(
///     1,
///     y.len(),
///     |rows: std::ops::Range<usize>| MatrixCl::from_slice(rows.len(), 1, &y[rows]),
///     |y: &MatrixCl<f64>, mu: &Var| {
///         let (n, k) = (y.rows(), mu.cols());
///         colwise_sum(-0.5f64 * square(colwise_broadcast(y, k) - rowwise_broadcast(mu, n))).eval()
///     },
///     |mu: &Var| (-0.005f64 * square(mu)).eval(),
/// );
/// assert_eq!(model.rows(), Some(5));
/// # Ok::<(), clfuse::Error>(())
/// ```
pub struct SplitBatchModel<D, U, L, P> {
    dim: usize,
    rows: usize,
    upload: U,
    likelihood: L,
    prior: P,
    data: PhantomData<fn() -> D>,
}

impl<D, U, L, P> SplitBatchModel<D, U, L, P>
where
    U: Fn(Range<usize>) -> Result<D> + Sync,
    L: Fn(&D, &Var) -> Result<Var> + Sync,
    P: Fn(&Var) -> Result<Var> + Sync,
{
    /// A model over `dim` unconstrained parameters and `rows` data rows.
    pub fn new(dim: usize, rows: usize, upload: U, likelihood: L, prior: P) -> Self {
        SplitBatchModel {
            dim,
            rows,
            upload,
            likelihood,
            prior,
            data: PhantomData,
        }
    }
}

impl<D, U, L, P> BatchedModel for SplitBatchModel<D, U, L, P>
where
    U: Fn(Range<usize>) -> Result<D> + Sync,
    L: Fn(&D, &Var) -> Result<Var> + Sync,
    P: Fn(&Var) -> Result<Var> + Sync,
{
    type Density<'m>
        = DeviceBatchDensity<Box<dyn FnMut(&Var) -> Result<Var> + 'm>>
    where
        Self: 'm;

    fn dim(&self) -> usize {
        self.dim
    }

    fn column_names(&self) -> Vec<String> {
        super::model::unconstrained_names(self.dim)
    }

    fn density(&self, device: Device) -> Result<Self::Density<'_>> {
        self.part_density(device, 0..self.rows, true)
    }

    fn constrain(&self, unconstrained: &[f64]) -> Result<Vec<f64>> {
        super::model::unchanged("SplitBatchModel::constrain", self.dim, unconstrained)
    }

    fn rows(&self) -> Option<usize> {
        Some(self.rows)
    }

    fn part_density(
        &self,
        device: Device,
        rows: Range<usize>,
        with_prior: bool,
    ) -> Result<Self::Density<'_>> {
        if rows.start > rows.end || rows.end > self.rows {
            return Err(Error::InvalidArgument {
                function: "SplitBatchModel::part_density",
                argument: "rows",
                reason: format!("{rows:?} is not a range of the model's {} rows", self.rows),
            });
        }
        let data = device.run(|| (self.upload)(rows))?;
        let (likelihood, prior) = (&self.likelihood, &self.prior);
        DeviceBatchDensity::new(
            self.dim,
            Box::new(move |theta: &Var| {
                let part = likelihood(&data, theta)?;
                if with_prior {
                    (&part + &prior(theta)?).eval()
                } else {
                    Ok(part)
                }
            }),
        )
    }
}
