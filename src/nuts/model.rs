//! What [`sample`](super::sample) samples: the [`Model`] trait and
//! [`UnconstrainedModel`], its adapter for plain closures.

use super::DeviceDensity;
use super::density::Interleave;
use crate::rev::Var;
use clfuse_core::{Error, Result};

/// A model the multi-chain front end ([`sample`](super::sample)) samples: a
/// log density on an unconstrained space of [`dim`](Model::dim) parameters
/// and a host map from that space to the named, constrained output columns.
///
/// The model is shared by all chains (`Sync`); each chain builds its own
/// [`density`](Model::density) on its own thread, because device variables
/// ([`Var`]) are reference counted per thread.
///
/// ```
/// use clfuse::nuts::{DeviceDensity, Model};
/// use clfuse::prelude::*;
/// use clfuse::rev::Var;
/// type Logp = fn(&Var) -> clfuse::Result<Var>;
/// fn standard_normal(t: &Var) -> clfuse::Result<Var> {
///     colwise_sum(-0.5f64 * square(t)).eval()
/// }
/// // A scale sampled on the log scale: the sampler moves `log(sigma)`,
/// // the draws report `sigma` (log(sigma) ~ N(0, 1)).
/// struct LogNormalScale;
/// impl Model for LogNormalScale {
///     type Density<'m> = DeviceDensity<Logp>;
///     fn dim(&self) -> usize { 1 }
///     fn column_names(&self) -> Vec<String> { vec!["sigma".into()] }
///     fn density(&self) -> clfuse::Result<DeviceDensity<Logp>> {
///         DeviceDensity::new(1, standard_normal as Logp)
///     }
///     fn constrain(&self, u: &[f64]) -> clfuse::Result<Vec<f64>> { Ok(vec![u[0].exp()]) }
/// }
/// assert_eq!(LogNormalScale.constrain(&[0.0])?, [1.0]);
/// assert_eq!(LogNormalScale.column_names(), ["sigma"]);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub trait Model: Sync {
    /// The per-chain density (built on the chain's own thread: `Var` is `Rc`, not `Send`).
    type Density<'m>: nuts_rs::CpuLogpFunc
    where
        Self: 'm;
    /// Unconstrained dimension.
    fn dim(&self) -> usize;
    /// Names of the constrained output columns, Stan style: `"mu"`, `"theta[1]"`, `"L[2,1]"` (1-based).
    fn column_names(&self) -> Vec<String>;
    /// A fresh density for one chain.
    fn density(&self) -> clfuse_core::Result<Self::Density<'_>>;
    /// Host map of one unconstrained position to the constrained columns (same order as column_names).
    fn constrain(&self, unconstrained: &[f64]) -> clfuse_core::Result<Vec<f64>>;
    /// Whether [`sample`](super::sample) may evaluate this model's chains
    /// from one thread, interleaved ([`Sampler::interleave`](super::Sampler::interleave)),
    /// with [`interleaved_density`](Model::interleaved_density)'s densities.
    /// False unless a model says otherwise; [`UnconstrainedModel`] and
    /// [`Posterior`](crate::params::Posterior) do.
    fn interleaves(&self) -> bool {
        false
    }
    /// A fresh density for one chain whose evaluations can be queued and
    /// waited for apart ([`Interleave`]), built on the
    /// thread that evaluates the device's chains; `None` unless
    /// [`interleaves`](Model::interleaves).
    fn interleaved_density(&self) -> Option<clfuse_core::Result<Box<dyn Interleave + '_>>> {
        None
    }
}

/// A model without constraints: a closure from the `dim x 1` parameter
/// column to the `1 x 1` log density (as for [`DeviceDensity`]), its
/// columns named `theta[1]` … `theta[dim]`, constrained = unconstrained.
///
/// The closure is shared by the chains' threads, so it is `Fn + Sync`; data
/// it captures by reference (`&MatrixCl<f64>`) is shared with them too
/// (`MatrixCl` is `Send + Sync`).
///
/// ```
/// use clfuse::nuts::{Model, UnconstrainedModel};
/// use clfuse::prelude::*;
/// use clfuse::rev::Var;
/// let y = MatrixCl::from_slice(3, 1, &[1.0, 2.0, 3.0])?;
/// // y_i ~ N(mu, 1), flat prior on mu.
/// let model = UnconstrainedModel::new(1, |mu: &Var| {
///     colwise_sum(-0.5f64 * square(&y - optional_broadcast(mu, 3, 1))).eval()
/// });
/// assert_eq!(model.dim(), 1);
/// assert_eq!(model.column_names(), ["theta[1]"]);
/// assert_eq!(model.constrain(&[2.5])?, [2.5]);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub struct UnconstrainedModel<F> {
    dim: usize,
    model: F,
    /// Whether its densities replay recorded calls ([`DeviceDensity::new`]).
    replay: bool,
}

impl<F: Fn(&Var) -> Result<Var> + Sync> UnconstrainedModel<F> {
    /// A model over `dim` unconstrained parameters with log density `model`.
    ///
    /// ```
    /// use clfuse::nuts::{Model, UnconstrainedModel};
    /// use clfuse::prelude::*;
    /// use clfuse::rev::Var;
    /// let model = UnconstrainedModel::new(2, |t: &Var| colwise_sum(-0.5f64 * square(t)).eval());
    /// assert_eq!(model.column_names(), ["theta[1]", "theta[2]"]);
    /// ```
    pub fn new(dim: usize, model: F) -> Self {
        UnconstrainedModel {
            dim,
            model,
            replay: true,
        }
    }

    /// The same model, its densities never replaying recorded calls, so
    /// that `model` runs at every evaluation: for a model whose host code
    /// does more than build device work (counts its calls, fails after
    /// some, reads the device). `FUSION_REPLAY=0` does the same for every
    /// model.
    ///
    /// ```
    /// use clfuse::nuts::{Model, UnconstrainedModel};
    /// use clfuse::prelude::*;
    /// use clfuse::rev::Var;
    /// let model = UnconstrainedModel::new(1, |t: &Var| colwise_sum(t).eval()).without_replay();
    /// assert!(!model.density()?.replays());
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn without_replay(mut self) -> Self {
        self.replay = false;
        self
    }
}

impl<F: Fn(&Var) -> Result<Var> + Sync> Model for UnconstrainedModel<F> {
    type Density<'m>
        = DeviceDensity<&'m F>
    where
        Self: 'm;

    fn dim(&self) -> usize {
        self.dim
    }

    fn column_names(&self) -> Vec<String> {
        unconstrained_names(self.dim)
    }

    fn density(&self) -> Result<Self::Density<'_>> {
        let density = DeviceDensity::new(self.dim, &self.model)?;
        Ok(if self.replay {
            density
        } else {
            density.without_replay()
        })
    }

    fn constrain(&self, unconstrained: &[f64]) -> Result<Vec<f64>> {
        unchanged("UnconstrainedModel::constrain", self.dim, unconstrained)
    }

    fn interleaves(&self) -> bool {
        true
    }

    fn interleaved_density(&self) -> Option<Result<Box<dyn Interleave + '_>>> {
        interleaved(self.density())
    }
}

/// The column names of a model without constraints: `theta[1]` …
/// `theta[dim]`.
/// A device density as a model's interleaved density.
fn interleaved<'m, F: FnMut(&Var) -> Result<Var> + 'm>(
    density: Result<DeviceDensity<F>>,
) -> Option<Result<Box<dyn Interleave + 'm>>> {
    Some(density.map(|d| Box::new(d) as Box<dyn Interleave + 'm>))
}

pub(crate) fn unconstrained_names(dim: usize) -> Vec<String> {
    (1..=dim).map(|i| format!("theta[{i}]")).collect()
}

/// The constrained values of a model without constraints: the position
/// itself, its length checked against `dim`.
pub(crate) fn unchanged(
    function: &'static str,
    dim: usize,
    unconstrained: &[f64],
) -> Result<Vec<f64>> {
    if unconstrained.len() != dim {
        return Err(Error::InvalidArgument {
            function,
            argument: "unconstrained",
            reason: format!("has {} values for {dim} parameters", unconstrained.len()),
        });
    }
    Ok(unconstrained.to_vec())
}

/// A model declared with constrained parameters ([`crate::params`]): the
/// sampler moves on the unconstrained scale, the draws come back
/// constrained, by parameter name.
impl<F> Model for crate::params::Posterior<F>
where
    F: Fn(&crate::params::Constrained) -> Result<Var> + Sync,
{
    type Density<'m>
        = DeviceDensity<Box<dyn FnMut(&Var) -> Result<Var> + 'm>>
    where
        Self: 'm;

    fn dim(&self) -> usize {
        self.parameters().dim()
    }

    fn column_names(&self) -> Vec<String> {
        self.parameters().column_names()
    }

    fn density(&self) -> Result<Self::Density<'_>> {
        DeviceDensity::new(
            self.dim(),
            Box::new(move |theta: &Var| self.log_density(theta)),
        )
    }

    fn constrain(&self, unconstrained: &[f64]) -> Result<Vec<f64>> {
        self.parameters().constrain_host(unconstrained)
    }

    fn interleaves(&self) -> bool {
        true
    }

    fn interleaved_density(&self) -> Option<Result<Box<dyn Interleave + '_>>> {
        interleaved(self.density())
    }
}
