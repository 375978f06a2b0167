//! Probability densities and masses, Stan's, as fused differentiable
//! expressions: each function (Stan's name and argument order) returns a
//! [`Density`] whose [`eval`](Density::eval) checks the arguments and gives
//! the *summed* log density, every constant term included, as a `1 x 1`
//! result: a [`Var`](crate::rev::Var) when any argument is a variable (a
//! recorded step, differentiable in every such argument), else a
//! `MatrixCl<f64>`.
//!
//! Arguments are numbers (`f64`, or `i32` where a real is expected), column
//! vectors or `1 x 1` matrices (`&MatrixCl<f64>`; integer outcomes and
//! counts `&MatrixCl<i32>`), variables (`&Var`, `n x 1` or `1 x 1`) or real
//! matrix expressions; numbers and `1 x 1` arguments broadcast against the
//! vectors, which must all have the same length.
//!
//! ```
//! use clfuse::prelude::*;
//! use clfuse::{dist, rev::Var};
//! let y = MatrixCl::from_slice(3, 1, &[0.5, -1.0, 2.0])?;
//! let mu = Var::new(MatrixCl::from_slice(1, 1, &[0.0])?);
//! let lp: Var = dist::normal_lpdf(&y, &mu, 2.0).eval()?;
//! lp.grad()?; // d/dmu = Σ (y - mu) / sigma² = 1.5 / 4
//! assert!((mu.adjoint().to_vec()?[0] - 0.375).abs() < 1e-12);
//! # Ok::<(), clfuse::Error>(())
//! ```
//!
//! The 40 densities and masses, by family:
//!
//! - on the real line: [`normal_lpdf`], [`std_normal_lpdf`],
//!   [`student_t_lpdf`], [`cauchy_lpdf`], [`logistic_lpdf`], [`gumbel_lpdf`],
//!   [`double_exponential_lpdf`], [`skew_normal_lpdf`],
//!   [`skew_double_exponential_lpdf`], [`exp_mod_normal_lpdf`];
//! - positive: [`lognormal_lpdf`], [`exponential_lpdf`], [`gamma_lpdf`],
//!   [`inv_gamma_lpdf`], [`chi_square_lpdf`], [`inv_chi_square_lpdf`],
//!   [`scaled_inv_chi_square_lpdf`], [`weibull_lpdf`], [`frechet_lpdf`],
//!   [`rayleigh_lpdf`], [`pareto_lpdf`], [`pareto_type_2_lpdf`];
//! - on an interval: [`beta_lpdf`], [`beta_proportion_lpdf`], [`uniform_lpdf`];
//! - successes: [`bernoulli_lpmf`], [`bernoulli_logit_lpmf`],
//!   [`binomial_lpmf`], [`binomial_logit_lpmf`], [`beta_binomial_lpmf`];
//! - counts: [`poisson_lpmf`], [`poisson_log_lpmf`], [`neg_binomial_lpmf`],
//!   [`neg_binomial_2_lpmf`], [`neg_binomial_2_log_lpmf`];
//! - categories: [`ordered_logistic_lpmf`] and [`categorical_logit_lpmf`],
//!   whose cutpoints or log-odds are a vector of their own, shared by every
//!   outcome;
//! - multivariate, over the columns of a `K x N` matrix (each column an
//!   observation): [`dirichlet_lpdf`] (simplexes),
//!   [`multi_normal_cholesky_lpdf`] (covariance `L Lᵀ`) and
//!   [`multi_normal_lpdf`] (covariance `Σ`, with Stan's closed-form
//!   gradient), whose parameters are a `K x 1` vector shared by every
//!   column or a `K x N` matrix.
//!
//! And Stan's cumulative distribution functions of 17 families, 51 in all:
//! `_cdf` (the product of the elements' CDFs, computed as `exp(Σ lcdf)`),
//! `_lcdf` and `_lccdf` (the sums of their log CDFs and log complementary
//! CDFs, in forms accurate far into the tails):
//!
//! - on the real line: [`normal_cdf`], [`normal_lcdf`], [`normal_lccdf`],
//!   [`std_normal_cdf`], [`std_normal_lcdf`], [`std_normal_lccdf`],
//!   [`cauchy_cdf`], [`cauchy_lcdf`], [`cauchy_lccdf`], [`logistic_cdf`],
//!   [`logistic_lcdf`], [`logistic_lccdf`], [`gumbel_cdf`], [`gumbel_lcdf`],
//!   [`gumbel_lccdf`], [`double_exponential_cdf`],
//!   [`double_exponential_lcdf`], [`double_exponential_lccdf`],
//!   [`skew_double_exponential_cdf`], [`skew_double_exponential_lcdf`],
//!   [`skew_double_exponential_lccdf`], [`exp_mod_normal_cdf`],
//!   [`exp_mod_normal_lcdf`], [`exp_mod_normal_lccdf`];
//! - positive: [`lognormal_cdf`], [`lognormal_lcdf`], [`lognormal_lccdf`],
//!   [`exponential_cdf`], [`exponential_lcdf`], [`exponential_lccdf`],
//!   [`weibull_cdf`], [`weibull_lcdf`], [`weibull_lccdf`], [`frechet_cdf`],
//!   [`frechet_lcdf`], [`frechet_lccdf`], [`rayleigh_cdf`],
//!   [`rayleigh_lcdf`], [`rayleigh_lccdf`], [`pareto_cdf`], [`pareto_lcdf`],
//!   [`pareto_lccdf`], [`pareto_type_2_cdf`], [`pareto_type_2_lcdf`],
//!   [`pareto_type_2_lccdf`];
//! - on an interval, and Bernoulli: [`uniform_cdf`], [`uniform_lcdf`],
//!   [`uniform_lccdf`], [`bernoulli_cdf`], [`bernoulli_lcdf`],
//!   [`bernoulli_lccdf`].
//!
//! Checks are Stan's (scales positive and finite, locations finite,
//! outcomes not NaN or in their support, counts non-negative, probabilities
//! in `[0, 1]`), made in the density's own forward kernel (numbers on the
//! host, before it); a failure is an `Err` naming the function, the
//! argument, the first failing element and its value, and records nothing.
//! Expression arguments are not checked: Stan checks values, and an
//! expression's values are the caller's computation (a location `x·β`).

mod binary;
mod bounded;
mod categorical;
mod cdf;
mod common;
mod counts;
mod location_scale;
mod multivariate;
mod positive;

pub use binary::*;
pub use bounded::*;
pub use categorical::*;
pub use cdf::*;
pub use common::{Args, Argument, Density, Int, Lp, Real};
#[doc(hidden)]
pub use common::{Checked, IntLeaf, Leaf, Value};
pub use counts::*;
pub use location_scale::*;
pub use multivariate::*;
pub use positive::*;
