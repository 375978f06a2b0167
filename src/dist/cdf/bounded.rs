//! CDFs with bounded support: the uniform on `[α, β]` and the Bernoulli on
//! `{0, 1}`.

use super::cdf;
use crate::dist::common::{
    Checks, Density, Int, IntReq, Lp, Order, Real, Req, checked_eval, checked_eval_product,
};
use clfuse_core::Result;
use clfuse_ops::prelude::*;

cdf! {
    /// Stan's `uniform_cdf(y | alpha, beta)`: `Π (y - α)/(β - α)`, each
    /// factor `0` below `α` and `1` above `β` (the logarithm inside reads `y`
    /// only strictly between the bounds, else the midpoint, so that the side
    /// not taken stays finite).
    ///
    /// Checks: `y` not NaN, `alpha` and `beta` finite, `beta > alpha`.
    fn uniform_cdf(y: Y = Req::NotNan, alpha: A = Req::Finite, beta: B = Req::Finite)
        where beta Greater alpha
        => checked_eval_product, example("0.5", "0.0, 2.0", "0.25")
        = let inside = gt(&y, &alpha).and(lt(&y, &beta));
          let safe = select(inside, &y, 0.5 * (&alpha + &beta));
          let width = log(&beta - &alpha);
          select(
              le(&y, &alpha),
              f64::NEG_INFINITY,
              select(ge(&y, &beta), 0.0, log(&safe - &alpha) - &width),
          );
}

cdf! {
    /// Stan's `uniform_lcdf(y | alpha, beta)`: `Σ log(y - α) - log(β - α)`,
    /// `-∞` below `α` and `0` above `β`.
    ///
    /// Checks: `y` not NaN, `alpha` and `beta` finite, `beta > alpha`.
    fn uniform_lcdf(y: Y = Req::NotNan, alpha: A = Req::Finite, beta: B = Req::Finite)
        where beta Greater alpha
        => checked_eval, example("0.5", "0.0, 2.0", "0.25f64.ln()")
        = let inside = gt(&y, &alpha).and(lt(&y, &beta));
          let safe = select(inside, &y, 0.5 * (&alpha + &beta));
          let width = log(&beta - &alpha);
          select(
              le(&y, &alpha),
              f64::NEG_INFINITY,
              select(ge(&y, &beta), 0.0, log(&safe - &alpha) - &width),
          );
}

cdf! {
    /// Stan's `uniform_lccdf(y | alpha, beta)`: `Σ log(β - y) - log(β - α)`,
    /// `0` below `α` and `-∞` above `β`.
    ///
    /// Checks: `y` not NaN, `alpha` and `beta` finite, `beta > alpha`.
    fn uniform_lccdf(y: Y = Req::NotNan, alpha: A = Req::Finite, beta: B = Req::Finite)
        where beta Greater alpha
        => checked_eval, example("0.5", "0.0, 2.0", "0.75f64.ln()")
        = let inside = gt(&y, &alpha).and(lt(&y, &beta));
          let safe = select(inside, &y, 0.5 * (&alpha + &beta));
          let width = log(&beta - &alpha);
          select(
              le(&y, &alpha),
              0.0,
              select(ge(&y, &beta), f64::NEG_INFINITY, log(&beta - &safe) - &width),
          );
}

/// The Bernoulli's log CDF `log P(N ≤ n)` (`lower`) or log CCDF
/// `log P(N > n)` (`upper`), as Stan defines them for every integer `n`:
/// `P(N ≤ n)` is `0` below 0, `1 - θ` at 0 and `1` from 1 on.
macro_rules! bernoulli {
    ($n:expr, $theta:expr, upper) => {
        select(
            lt($n, 0),
            0.0,
            select(eq($n, 0), log($theta), f64::NEG_INFINITY),
        )
    };
    ($n:expr, $theta:expr, lower) => {
        select(
            lt($n, 0),
            f64::NEG_INFINITY,
            select(eq($n, 0), log1m($theta), 0.0),
        )
    };
}

/// The Bernoulli functions: checks, then the sum or product of `bernoulli!`.
macro_rules! bernoulli_fn {
    (
        $(#[$attr:meta])*
        fn $name:ident => $finish:ident, $side:ident
    ) => {
        $(#[$attr])*
        ///
        /// Checks: `theta` in `[0, 1]` (`n` may be any integer, as in Stan).
        pub fn $name<N: Int, T: Real>(
            n: N,
            theta: T,
        ) -> Density<impl FnOnce() -> Result<Lp<(N, T)>>> {
            Density::new(move || {
                let mut checks = Checks::new(stringify!($name))
                    .int("n", &n, IntReq::Any)
                    .real("theta", &theta, Req::Unit);
                let len = checks.length()?;
                let (n, theta) = (n.leaf(len), theta.leaf(len));
                let lp = bernoulli!(&n, &theta, $side);
                $finish::<(N, T), _>(len, lp, checks)
            })
        }
    };
}

bernoulli_fn! {
    /// Stan's `bernoulli_cdf(n | theta)`: `Π P(N ≤ n)`, each factor `1 - θ`
    /// at `n = 0`, `1` from 1 on and `0` below 0.
    ///
    /// ```
    /// use clfuse::prelude::*;
    /// use clfuse::{dist, rev::Var};
    /// let n = MatrixCl::from_slice(3, 1, &[0, 1, 0])?;
    /// let theta = Var::new(MatrixCl::from_slice(1, 1, &[0.25])?);
    /// let p = dist::bernoulli_cdf(&n, &theta).eval()?; // (1 - θ)²
    /// assert!((p.value().to_vec()?[0] - 0.5625).abs() < 1e-12);
    /// p.grad()?; // -2 (1 - θ)
    /// assert!((theta.adjoint().to_vec()?[0] + 1.5).abs() < 1e-12);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    fn bernoulli_cdf => checked_eval_product, lower
}

bernoulli_fn! {
    /// Stan's `bernoulli_lcdf(n | theta)`: `Σ log P(N ≤ n)`: `log(1 - θ)` at
    /// `n = 0`, `0` from 1 on, `-∞` below 0.
    ///
    /// ```
    /// use clfuse::prelude::*;
    /// use clfuse::dist;
    /// let n = MatrixCl::from_slice(2, 1, &[0, 1])?;
    /// let lp = dist::bernoulli_lcdf(&n, 0.25).eval()?.to_vec()?[0];
    /// assert!((lp - 0.75f64.ln()).abs() < 1e-12);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    fn bernoulli_lcdf => checked_eval, lower
}

bernoulli_fn! {
    /// Stan's `bernoulli_lccdf(n | theta)`: `Σ log P(N > n)`: `log θ` at
    /// `n = 0`, `-∞` from 1 on, `0` below 0.
    ///
    /// ```
    /// use clfuse::prelude::*;
    /// use clfuse::dist;
    /// let n = MatrixCl::from_slice(2, 1, &[0, 0])?;
    /// let lp = dist::bernoulli_lccdf(&n, 0.25).eval()?.to_vec()?[0];
    /// assert!((lp - 2.0 * 0.25f64.ln()).abs() < 1e-12);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    fn bernoulli_lccdf => checked_eval, upper
}
