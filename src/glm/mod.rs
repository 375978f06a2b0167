//! Generalised linear model likelihoods with analytic gradients (paper §3.4),
//! each composed from fused operations: one kernel computes the linear
//! predictor (a fused row-wise matrix-vector product, reading `x` once), the
//! per-observation terms, the derivative, every needed sum and the input
//! checks; `xᵀ·derivative` is a second pass over `x` (the row-vector ×
//! matrix leaf, or the GEMM leaf for several categories). Gradients not
//! asked for are not computed (optional outputs).
//!
//! Conventions follow Stan: `x` is `N x P`, `beta` has `P` rows, `alpha`
//! (and `sigma`, `phi`) is a scalar or one value per observation, integer
//! outcomes are `MatrixCl<i32>` or host slices. With `propto`, terms that
//! depend on no argument a gradient is asked for are dropped — exactly Stan's
//! rule, where "asked for" plays the role of an autodiff variable.
//!
//! ```
//! use clfuse::glm::{bernoulli_logit_glm_lpmf, GlmOptions, Wrt};
//! use clfuse::prelude::*;
//! let x = MatrixCl::from_slice(3, 1, &[1.0, -1.0, 0.5])?;
//! let beta = MatrixCl::from_slice(1, 1, &[0.3])?;
//! let out = bernoulli_logit_glm_lpmf(&[1, 0, 1][..], &x, 0.1, &beta, &GlmOptions::gradients(Wrt::ALPHA | Wrt::BETA))?;
//! assert!(out.value < 0.0);
//! let d_beta: &MatrixCl<f64> = out.d_beta()?; // requested: a matrix, not an Option
//! assert_eq!(d_beta.rows(), 1);
//! assert!(out.d_x().is_err()); // not requested: the error says so
//! # Ok::<(), clfuse::Error>(())
//! ```

mod bernoulli;
mod binomial;
mod categorical;
mod neg_binomial;
mod normal;
mod ordered;
mod poisson;
mod shared;

pub use bernoulli::bernoulli_logit_glm_lpmf;
pub use binomial::binomial_logit_glm_lpmf;
pub use categorical::categorical_logit_glm_lpmf;

pub use neg_binomial::neg_binomial_2_log_glm_lpmf;
pub use normal::normal_id_glm_lpdf;
pub use ordered::ordered_logistic_glm_lpmf;

pub use poisson::poisson_log_glm_lpmf;

use clfuse_core::{ClType, MatrixCl};

/// A parameter given once for all observations or once per observation.
#[derive(Debug, Clone, Copy)]
pub enum Param<'a> {
    /// The same value for every observation.
    Scalar(f64),
    /// One value per observation (a column vector on the device).
    Vector(&'a MatrixCl<f64>),
    /// The same value for every observation, kept in a `1 x 1` device
    /// matrix: the kernel reads (and checks) it there, so nothing waits for
    /// a transfer to the host (positive parameters such as `sigma` and `phi`
    /// too).
    ///
    /// ```
    /// use clfuse::glm::{bernoulli_logit_glm_lpmf, GlmOptions, Param};
    /// use clfuse::prelude::*;
    /// let x = MatrixCl::from_slice(2, 1, &[0.0, 0.0])?;
    /// let beta = MatrixCl::from_slice(1, 1, &[1.0])?;
    /// let alpha = MatrixCl::from_slice(1, 1, &[0.0])?;
    /// let out = bernoulli_logit_glm_lpmf(&[1, 0][..], &x, Param::Device(&alpha), &beta, &GlmOptions::default())?;
    /// assert!((out.value - 2.0 * 0.5f64.ln()).abs() < 1e-12);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    Device(&'a MatrixCl<f64>),
}

impl From<f64> for Param<'_> {
    fn from(v: f64) -> Self {
        Param::Scalar(v)
    }
}

impl<'a> From<&'a MatrixCl<f64>> for Param<'a> {
    fn from(m: &'a MatrixCl<f64>) -> Self {
        Param::Vector(m)
    }
}

/// Outcomes: a device column vector or a host slice (uploaded on the call).
#[derive(Debug, Clone, Copy)]
pub enum Outcomes<'a, T: ClType> {
    /// Already on the device (`N x 1`).
    Device(&'a MatrixCl<T>),
    /// On the host.
    Host(&'a [T]),
}

impl<'a, T: ClType> From<&'a MatrixCl<T>> for Outcomes<'a, T> {
    fn from(m: &'a MatrixCl<T>) -> Self {
        Outcomes::Device(m)
    }
}

impl<'a, T: ClType> From<&'a [T]> for Outcomes<'a, T> {
    fn from(s: &'a [T]) -> Self {
        Outcomes::Host(s)
    }
}

impl<'a, T: ClType> From<&'a Vec<T>> for Outcomes<'a, T> {
    fn from(s: &'a Vec<T>) -> Self {
        Outcomes::Host(s)
    }
}

/// Which gradients to compute (combine with `|`).
///
/// ```
/// use clfuse::glm::Wrt;
/// let w = Wrt::ALPHA | Wrt::BETA;
/// assert!(w.alpha && w.beta && !w.x);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wrt {
    /// The intercept(s) `alpha`.
    pub alpha: bool,
    /// The coefficients `beta`.
    pub beta: bool,
    /// The design matrix `x`.
    pub x: bool,
    /// `sigma` (normal), `phi` (negative binomial) or the cutpoints (ordered logistic).
    pub aux: bool,
}

impl Wrt {
    /// No gradients: the value only.
    pub const NONE: Wrt = Wrt {
        alpha: false,
        beta: false,
        x: false,
        aux: false,
    };
    /// With respect to `alpha`.
    pub const ALPHA: Wrt = Wrt {
        alpha: true,
        ..Wrt::NONE
    };
    /// With respect to `beta`.
    pub const BETA: Wrt = Wrt {
        beta: true,
        ..Wrt::NONE
    };
    /// With respect to `x`.
    pub const X: Wrt = Wrt {
        x: true,
        ..Wrt::NONE
    };
    /// With respect to `sigma`, `phi` or the cutpoints.
    pub const AUX: Wrt = Wrt {
        aux: true,
        ..Wrt::NONE
    };
    /// Every gradient.
    pub const ALL: Wrt = Wrt {
        alpha: true,
        beta: true,
        x: true,
        aux: true,
    };

    /// Whether any gradient is asked for.
    ///
    /// ```
    /// use clfuse::glm::Wrt;
    /// assert!(Wrt::AUX.any_gradient() && !Wrt::NONE.any_gradient());
    /// ```
    pub fn any_gradient(self) -> bool {
        self.alpha || self.beta || self.x || self.aux
    }
}

impl std::ops::BitOr for Wrt {
    type Output = Wrt;
    fn bitor(self, o: Wrt) -> Wrt {
        Wrt {
            alpha: self.alpha || o.alpha,
            beta: self.beta || o.beta,
            x: self.x || o.x,
            aux: self.aux || o.aux,
        }
    }
}

/// Gradients asked for and whether constant terms are dropped.
///
/// ```
/// use clfuse::glm::{GlmOptions, Wrt};
/// let o = GlmOptions { wrt: Wrt::BETA, propto: true, prefetch: false };
/// assert!(o.wrt.beta && o.propto);
/// assert!(!GlmOptions::default().wrt.any_gradient());
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct GlmOptions {
    /// Gradients to compute.
    pub wrt: Wrt,
    /// Drop terms that depend on no argument in `wrt` (Stan's `propto`).
    pub propto: bool,
    /// Queue the read-back of the intercept's and beta's gradients (when
    /// asked for) before the GLM waits for its own value, so that value and
    /// gradients reach the host in one round trip: what a caller that
    /// needs them on the host (a sampler, [`DataParallel::glm`](crate::data_parallel::DataParallel::glm))
    /// asks for; read them with [`GlmOutput::host_gradients`]. The linear
    /// GLMs (normal, bernoulli, binomial, Poisson, negative binomial)
    /// prefetch; the others read when asked.
    pub prefetch: bool,
}

impl GlmOptions {
    /// The full log density and the gradients in `wrt`.
    ///
    /// ```
    /// use clfuse::glm::{GlmOptions, Wrt};
    /// assert!(!GlmOptions::gradients(Wrt::ALL).propto);
    /// ```
    pub fn gradients(wrt: Wrt) -> Self {
        GlmOptions {
            wrt,
            propto: false,
            prefetch: false,
        }
    }
}

/// The value and the gradients asked for; each gradient has its
/// argument's shape (`1 x 1` for a scalar).
///
/// ```
/// use clfuse::glm::{poisson_log_glm_lpmf, GlmOptions, Wrt};
/// use clfuse::prelude::*;
/// let x = MatrixCl::from_slice(2, 1, &[0.0, 0.0])?;
/// let beta = MatrixCl::from_slice(1, 1, &[0.0])?;
/// let out = poisson_log_glm_lpmf(&[1, 1][..], &x, 0.0, &beta, &GlmOptions::gradients(Wrt::ALPHA))?;
/// // d/d alpha = sum(y - exp(eta)) = 0 at eta = 0, y = 1
/// assert_eq!(out.d_alpha()?.to_vec()?, vec![0.0]);
/// # Ok::<(), clfuse::Error>(())
/// ```
#[derive(Debug)]
pub struct GlmOutput {
    /// The log density / mass.
    pub value: f64,
    pub(crate) d_alpha: Option<MatrixCl<f64>>,
    pub(crate) d_beta: Option<MatrixCl<f64>>,
    pub(crate) d_x: Option<MatrixCl<f64>>,
    pub(crate) d_aux: Option<MatrixCl<f64>>,
    pub(crate) prefetched: Prefetched,
}

/// Read-backs a GLM queued before its own wait ([`GlmOptions::prefetch`]).
#[derive(Debug, Default)]
pub(crate) struct Prefetched {
    pub d_alpha: Option<clfuse_core::PendingRead<f64>>,
    pub d_beta: Option<clfuse_core::PendingRead<f64>>,
}

/// A gradient that was requested, or the error naming the flag that asks for it.
fn requested<'a>(
    gradient: &'a Option<MatrixCl<f64>>,
    name: &'static str,
    flag: &str,
) -> crate::Result<&'a MatrixCl<f64>> {
    gradient
        .as_ref()
        .ok_or_else(|| crate::Error::InvalidArgument {
            function: "GlmOutput",
            argument: name,
            reason: format!("`{name}` was not requested; add `{flag}` to `GlmOptions::wrt`"),
        })
}

impl GlmOutput {
    /// d/d alpha (`Wrt::ALPHA`): `1 x 1`, or one value per observation
    /// (per category for the categorical GLM).
    pub fn d_alpha(&self) -> crate::Result<&MatrixCl<f64>> {
        requested(&self.d_alpha, "d_alpha", "Wrt::ALPHA")
    }

    /// d/d beta (`Wrt::BETA`), beta's shape.
    pub fn d_beta(&self) -> crate::Result<&MatrixCl<f64>> {
        requested(&self.d_beta, "d_beta", "Wrt::BETA")
    }

    /// d/d x (`Wrt::X`), `N x P`.
    pub fn d_x(&self) -> crate::Result<&MatrixCl<f64>> {
        requested(&self.d_x, "d_x", "Wrt::X")
    }

    /// d/d sigma (normal), phi (negative binomial) or cutpoints (ordered
    /// logistic) (`Wrt::AUX`); an error for the GLMs without such a parameter.
    pub fn d_aux(&self) -> crate::Result<&MatrixCl<f64>> {
        requested(
            &self.d_aux,
            "d_aux",
            "Wrt::AUX (for a GLM with an auxiliary parameter)",
        )
    }

    /// The intercept's and beta's gradients on the host (`None` for those
    /// not requested): the read-backs queued by [`GlmOptions::prefetch`]
    /// where there are, else both queued now and waited for together.
    ///
    /// ```
    /// use clfuse::glm::{bernoulli_logit_glm_lpmf, GlmOptions, Wrt};
    /// use clfuse::prelude::*;
    /// let x = MatrixCl::from_slice(2, 1, &[1.0, -1.0])?;
    /// let beta = MatrixCl::from_slice(1, 1, &[0.0])?;
    /// let options = GlmOptions { prefetch: true, ..GlmOptions::gradients(Wrt::ALPHA | Wrt::BETA) };
    /// let mut out = bernoulli_logit_glm_lpmf(&[1, 0][..], &x, 0.0, &beta, &options)?;
    /// assert_eq!(out.host_gradients()?, (Some(vec![0.0]), Some(vec![1.0])));
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn host_gradients(&mut self) -> crate::Result<(Option<Vec<f64>>, Option<Vec<f64>>)> {
        let queue = |pending: Option<clfuse_core::PendingRead<f64>>, m: &Option<MatrixCl<f64>>| {
            match pending {
                Some(p) => Ok(Some(p)),
                None => m.as_ref().map(MatrixCl::read_later).transpose(),
            }
        };
        let d_alpha = queue(self.prefetched.d_alpha.take(), &self.d_alpha)?;
        let d_beta = queue(self.prefetched.d_beta.take(), &self.d_beta)?;
        Ok((
            d_alpha.map(|p| p.wait()).transpose()?,
            d_beta.map(|p| p.wait()).transpose()?,
        ))
    }

    /// The gradients as owned matrices, in the order alpha, beta, x, aux
    /// (`None` for those not requested).
    pub fn into_gradients(self) -> [Option<MatrixCl<f64>>; 4] {
        [self.d_alpha, self.d_beta, self.d_x, self.d_aux]
    }
}
