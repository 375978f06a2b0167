//! Cumulative distribution functions, Stan's: for each of 17 families,
//! `_cdf` (the *product* of the elements' CDFs), `_lcdf` (the *sum* of their
//! log CDFs) and `_lccdf` (the sum of their log complementary CDFs), with
//! Stan's names, argument order and checks, each returning a [`Density`]
//! like the log densities.
//!
//! ```
//! use clfuse::prelude::*;
//! use clfuse::{dist, rev::Var};
//! let y = MatrixCl::from_slice(2, 1, &[0.0, 0.0])?;
//! let mu = Var::new(MatrixCl::from_slice(1, 1, &[0.0])?);
//! let p: Var = dist::normal_cdf(&y, &mu, 1.0).eval()?; // Φ(0)²
//! assert!((p.value().to_vec()?[0] - 0.25).abs() < 1e-12);
//! p.grad()?; // d/dμ Φ(-μ)² = -2 Φ(0) φ(0)
//! let want = -2.0 * 0.5 * 0.398_942_280_401_432_7;
//! assert!((mu.adjoint().to_vec()?[0] - want).abs() < 1e-12);
//! # Ok::<(), clfuse::Error>(())
//! ```
//!
//! The 51 functions:
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
//! **Log space throughout.** Every function is built from its element-wise
//! log CDF or log CCDF written in the form that keeps its precision in the
//! tails: `log Φ` is its own device function ([`log_phi`](clfuse_ops::log_phi),
//! asymptotic below -10, with a Mills-ratio derivative), so that
//! `normal_lcdf` at `z = -30` is `-454.32...` and its gradient `≈ 30`; the
//! logistic uses `log_inv_logit`/`log1m_inv_logit`; the exponential family
//! (exponential, Weibull, Rayleigh, Fréchet, Gumbel, Pareto) uses
//! `log1m_exp` of the exact log survival or log CDF; the Cauchy CDF below
//! its centre is `atan(-1/z)/π` (no cancellation in `1/2 + atan(z)/π`); the
//! exponentially modified normal combines `log Φ` terms with
//! `log_diff_exp`/`log_sum_exp`.
//!
//! **`_cdf` is `exp(Σ lcdf)`.** The product of CDFs is computed as the
//! summed log CDF (the `_lcdf` kernel itself, checks included), then `exp`
//! of that `1 x 1` result as one more element-wise step (recorded on the
//! tape when an argument is a variable, so the gradient is `P · ∂Σ lcdf`).
//! This keeps one element-wise expression per family and shares the
//! `_lcdf` kernel, at the price of one tiny extra kernel launch; a product
//! whose log is below about -745 is `0`, as Stan's would be.
//!
//! Branches (below/above the centre, outside the support) are `select`s
//! whose unselected side is fed a safe operand (`fmax(z, 0)`, a midpoint),
//! so that its derivative is never `0 · ∞` on the tape. Gradients exactly at
//! the edges of the support (`y = 0` for the lognormal, `y = α` for the
//! uniform) are not defined.
//!
//! Checks are Stan's (listed on each function), made in the same kernel as
//! the value; a failure names the function, the argument, the element and
//! its value, and records nothing.

mod bounded;
mod positive;
mod real_line;

pub use bounded::*;
pub use positive::*;
pub use real_line::*;

/// One CDF function: its doc, name, arguments (name, type parameter, check),
/// an optional relation between two arguments, whether it sums
/// (`checked_eval`) or multiplies (`checked_eval_product`), a doc example
/// (`y`, the other arguments, the expected value) and the element-wise log
/// CDF or log CCDF in terms of the arguments' leaves, after `let`s of
/// subexpressions it reads more than once (they live as long as the
/// density's expression, which borrows them).
macro_rules! cdf {
    (
        $(#[$attr:meta])*
        fn $name:ident($($arg:ident: $T:ident = $req:expr),+ $(,)?)
        $(where $a:ident $order:ident $b:ident)?
        => $finish:ident, example($ex_y:literal, $ex_args:literal, $ex_want:literal)
        = $(let $v:ident = $e:expr;)* $body:expr;
    ) => {
        $(#[$attr])*
        ///
        /// ```
        /// use clfuse::prelude::*;
        /// use clfuse::dist;
        #[doc = concat!("let y = MatrixCl::from_slice(1, 1, &[", $ex_y, "])?;")]
        #[doc = concat!("let v = dist::", stringify!($name), "(&y, ", $ex_args, ").eval()?.to_vec()?[0];")]
        #[doc = concat!("let want: f64 = ", $ex_want, ";")]
        /// assert!((v - want).abs() <= 1e-12 * want.abs().max(1.0), "{v} {want}");
        /// # Ok::<(), clfuse::Error>(())
        /// ```
        pub fn $name<$($T: Real),+>(
            $($arg: $T),+
        ) -> Density<impl FnOnce() -> Result<Lp<($($T,)+)>>> {
            Density::new(move || {
                let mut checks = Checks::new(stringify!($name))
                    $(.real(stringify!($arg), &$arg, $req))+
                    $(.relation(stringify!($a), &$a, Order::$order, stringify!($b), &$b))?;
                let n = checks.length()?;
                $(let $arg = $arg.leaf(n);)+
                $(let $v = $e;)*
                let lp = $body;
                $finish::<($($T,)+), _>(n, lp, checks)
            })
        }
    };
}
pub(crate) use cdf;
