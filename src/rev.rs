//! Reverse-mode automatic differentiation: [`Var`], `grad`, the tape (all of
//! [`clfuse_ops::rev`]), and the hand-written kernels as differentiable
//! leaves: Cholesky, triangular solve and inverse, and the GLMs, whose
//! analytic gradients become their adjoints.
//!
//! Every function here takes [`Operand`]s: a `&Var` (differentiated) or a
//! `&MatrixCl` (a constant, no adjoint).

pub use clfuse_ops::rev::*;

use crate::glm::{GlmOptions, Outcomes, Param, Wrt};
use crate::linalg;
use clfuse_core::{Error, MatrixCl, Result, View};
use clfuse_ops::prelude::*;

/// An argument of a differentiable leaf: a variable or a constant matrix.
pub trait Operand {
    /// Its value.
    fn value(&self) -> &MatrixCl<f64>;
    /// The variable, if it is one.
    fn variable(&self) -> Option<&Var>;
}

impl Operand for &Var {
    fn value(&self) -> &MatrixCl<f64> {
        Var::value(self)
    }
    fn variable(&self) -> Option<&Var> {
        Some(self)
    }
}

impl Operand for &MatrixCl<f64> {
    fn value(&self) -> &MatrixCl<f64> {
        self
    }
    fn variable(&self) -> Option<&Var> {
        None
    }
}

/// The variables among `operands`, with a flag per operand.
fn parents<'a>(operands: &[&'a dyn Operand]) -> (Vec<&'a Var>, Vec<bool>) {
    let flags = operands.iter().map(|o| o.variable().is_some()).collect();
    (
        operands.iter().filter_map(|o| o.variable()).collect(),
        flags,
    )
}

/// Keeps the contributions of the operands that are variables.
fn keep(flags: &[bool], contributions: Vec<MatrixCl<f64>>) -> Vec<Option<MatrixCl<f64>>> {
    flags
        .iter()
        .zip(contributions)
        .filter(|(is_var, _)| **is_var)
        .map(|(_, c)| Some(c))
        .collect()
}

/// `L` with `L Lᵀ = a` (lower triangular), differentiable in `a`; the
/// adjoint is [`linalg::cholesky_adjoint`] (lower triangular: the
/// derivative with respect to each pair `a_ij = a_ji`, as the
/// decomposition reads only the lower triangle).
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::rev::{self, Var};
/// let a = Var::new(MatrixCl::from_slice(1, 1, &[4.0])?);
/// let l = rev::cholesky_decompose(&a)?;
/// colwise_sum(&l).eval()?.grad()?; // d sqrt(a) / da = 1 / (2 sqrt(a))
/// assert_eq!(a.adjoint().to_vec()?, vec![0.25]);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn cholesky_decompose(a: impl Operand) -> Result<Var> {
    let l = linalg::cholesky_decompose(a.value())?;
    let (vars, _) = parents(&[&a]);
    leaf(l, &vars, |l, adj_l| {
        // The adjoint reads only the lower triangles of `l` and `adj_l`.
        Ok(vec![Some(linalg::cholesky_adjoint(l, adj_l)?)])
    })
}

/// `adj` with its strictly upper part zeroed and a lower view, as the
/// triangular adjoint kernels read it.
fn lower_part(m: &MatrixCl<f64>) -> Result<MatrixCl<f64>> {
    triangle(View::Lower, m)
}

/// The part of `m` inside the triangular `view` (zeros elsewhere), with that view.
fn triangle(view: View, m: &MatrixCl<f64>) -> Result<MatrixCl<f64>> {
    let (r, c) = (m.rows(), m.cols());
    let (i, j) = (row_index(r, c), col_index(r, c));
    let kept = match view {
        View::Lower => select(ge(i, j), m, 0.0f64).eval()?,
        View::Upper => select(le(i, j), m, 0.0f64).eval()?,
        View::Diagonal => select(eq(i, j), m, 0.0f64).eval()?,
        View::Entire => m.try_clone()?,
    };
    Ok(kept.with_view(view))
}

/// `op(a)⁻¹ b` for triangular `a` (view `Lower`, `Upper` or `Diagonal`) by
/// substitution ([`linalg::tri_solve`], O(n² m)), differentiable in both:
/// `adj(b) = op(a)⁻ᵀ adj(c)`, one more solve with `a` as the forward solve
/// prepared it ([`linalg::tri_solve_and_prepare`]), and
/// `adj(op(a)) = -adj(b) cᵀ`, kept to `a`'s triangle.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::rev::{self, Var};
/// let a = Var::new(MatrixCl::from_slice(1, 1, &[2.0])?.with_view(View::Lower));
/// let b = Var::new(MatrixCl::from_slice(1, 1, &[4.0])?);
/// let c = rev::tri_solve(&a, Op::T, &b)?; // c = b / a = 2
/// colwise_sum(&c).eval()?.grad()?;
/// assert_eq!(b.adjoint().to_vec()?, vec![0.5]); // 1 / a
/// assert_eq!(a.adjoint().to_vec()?, vec![-1.0]); // -b / a²
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn tri_solve(a: impl Operand, op: linalg::Op, b: impl Operand) -> Result<Var> {
    // The reverse pass solves with `a` as the forward solve prepared it
    // (its own copy, diagonal blocks inverted once).
    let (c, prepared) = linalg::tri_solve_and_prepare(a.value(), op, b.value())?;
    let (vars, flags) = parents(&[&a, &b]);
    solve_leaf(c, prepared, op, a.value().view(), &vars, flags)
}

/// The recorded solve `c = op(a)⁻¹ b`: its reverse pass solves with `a` as
/// the forward solve prepared it (checked then; the adjoint comes from the
/// tape), `adj(b) = op(a)⁻ᵀ adj(c)`, and `adj(op(a)) = -adj(b) cᵀ`, kept to
/// `view` (`a`'s triangle).
fn solve_leaf(
    c: MatrixCl<f64>,
    prepared: linalg::PreparedTriangular<f64>,
    op: linalg::Op,
    view: View,
    vars: &[&Var],
    flags: Vec<bool>,
) -> Result<Var> {
    use linalg::Op;
    leaf(c, vars, move |c, adj| {
        let flipped = if op == Op::N { Op::T } else { Op::N };
        let adj_b = prepared.solve(flipped, adj)?;
        let (left, right) = match op {
            Op::N => (&adj_b, c),
            Op::T => (c, &adj_b),
        };
        let outer = linalg::multiply_transposed(left, Op::N, right, Op::T)?;
        let adj_a = triangle(view, &(-&outer).eval()?)?;
        Ok(keep(&flags, vec![adj_a, adj_b]))
    })
}

/// `(l lᵀ)⁻¹ b` from a Cholesky factor `l` (lower triangular): two
/// differentiable substitutions ([`tri_solve`]), never an inverse.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::rev::{self, Var};
/// let l = MatrixCl::from_slice(1, 1, &[2.0])?.with_view(View::Lower);
/// let b = Var::new(MatrixCl::from_slice(1, 1, &[8.0])?);
/// let x = rev::cholesky_solve(&l, &b)?; // 8 / 4
/// assert_eq!(x.value().to_vec()?, vec![2.0]);
/// colwise_sum(&x).eval()?.grad()?;
/// assert_eq!(b.adjoint().to_vec()?, vec![0.25]);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn cholesky_solve(l: impl Operand, b: impl Operand) -> Result<Var> {
    if l.value().view() != View::Lower {
        return Err(Error::InvalidView {
            function: "rev::cholesky_solve",
            view: l.value().view(),
            reason: "the Cholesky factor must have view Lower",
        });
    }
    let z = match l.variable() {
        Some(var) => tri_solve(var, linalg::Op::N, b)?,
        None => tri_solve(l.value(), linalg::Op::N, b)?,
    };
    tri_solve(l, linalg::Op::T, &z)
}

/// `a⁻¹ b` for lower-triangular `a`, differentiable in both.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::rev::{self, Var};
/// let a = MatrixCl::from_slice(1, 1, &[2.0])?.with_view(View::Lower);
/// let b = Var::new(MatrixCl::from_slice(1, 1, &[4.0])?);
/// let c = rev::mdivide_left_tri(&a, &b)?;
/// colwise_sum(&c).eval()?.grad()?;
/// assert_eq!(b.adjoint().to_vec()?, vec![0.5]);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn mdivide_left_tri(a: impl Operand, b: impl Operand) -> Result<Var> {
    let (vars, flags) = parents(&[&a, &b]);
    if b.value().cols() <= linalg::SUBSTITUTION_MAX_COLS {
        // Substitution, as `tri_solve` (its errors naming this function).
        let lower = a.value().share().with_view(View::Lower);
        let (c, prepared) = linalg::mdivide_left_tri_and_prepare(&lower, b.value())?;
        return solve_leaf(c, prepared, linalg::Op::N, View::Lower, &vars, flags);
    }
    // Wide right-hand sides: through the inverse, forward and reverse.
    let lower = Kept::new(&a.value().share().with_view(View::Lower));
    let rhs = Kept::new(b.value());
    let c = linalg::mdivide_left_tri(lower.get("rev::mdivide_left_tri")?, b.value())?;
    leaf(c, &vars, move |_, adj| {
        let (lower, rhs) = (
            lower.get("rev::mdivide_left_tri")?,
            rhs.get("rev::mdivide_left_tri")?,
        );
        let adjoint = linalg::mdivide_left_tri_adjoint(lower, rhs, adj)?;
        Ok(keep(&flags, vec![adjoint.adj_a, adjoint.adj_b]))
    })
}

/// `a⁻¹` for lower-triangular `a`, differentiable:
/// `adj(a) = -(a⁻ᵀ adj(a⁻¹) a⁻ᵀ)`, kept to the lower triangle.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::rev::{self, Var};
/// let a = Var::new(MatrixCl::from_slice(1, 1, &[2.0])?.with_view(View::Lower));
/// let inv = rev::tri_inverse(&a)?;
/// colwise_sum(&inv).eval()?.grad()?; // d(1/a)/da = -1/a²
/// assert_eq!(a.adjoint().to_vec()?, vec![-0.25]);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn tri_inverse(a: impl Operand) -> Result<Var> {
    let inv = linalg::tri_inverse(&a.value().share().with_view(View::Lower))?;
    let (vars, _) = parents(&[&a]);
    leaf(inv, &vars, |inv, adj| {
        use linalg::Op;
        let left = linalg::multiply_transposed(inv, Op::T, adj, Op::N)?;
        let full = linalg::multiply_transposed(&left, Op::N, inv, Op::T)?;
        Ok(vec![Some(lower_part(&(-&full).eval()?)?)])
    })
}

/// An intercept or auxiliary parameter (`sigma`, `phi`) of a GLM leaf: a
/// number, a matrix (`1 x 1`, read by the kernel, or `n x 1`) or a
/// variable of either shape.
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::rev::{self, Var};
/// let x = MatrixCl::from_slice(2, 1, &[1.0, -1.0])?;
/// let beta = Var::new(MatrixCl::from_slice(1, 1, &[0.5])?);
/// // intercept and sigma as numbers
/// let lp = rev::normal_id_glm(&[0.5, -0.5][..], &x, 0.0, &beta, 1.0)?;
/// lp.grad()?;
/// assert!((beta.adjoint().to_vec()?[0]).abs() < 1e-12); // a perfect fit
/// # Ok::<(), clfuse::Error>(())
/// ```
pub trait GlmScalar {
    /// The GLM's view of it.
    #[doc(hidden)]
    fn param(&self, argument: &'static str) -> Result<Param<'_>>;
    /// The variable, if it is one.
    #[doc(hidden)]
    fn variable(&self) -> Option<&Var>;
}

impl GlmScalar for f64 {
    fn param(&self, _: &'static str) -> Result<Param<'_>> {
        Ok(Param::Scalar(*self))
    }
    fn variable(&self) -> Option<&Var> {
        None
    }
}

impl<O: Operand> GlmScalar for O {
    fn param(&self, argument: &'static str) -> Result<Param<'_>> {
        let m = self.value();
        match (m.rows(), m.cols()) {
            (1, 1) => Ok(Param::Device(m)),
            (_, 1) => Ok(Param::Vector(m)),
            (r, c) => Err(Error::InvalidArgument {
                function: "rev glm",
                argument,
                reason: format!("must be 1 x 1 or n x 1, is {r} x {c}"),
            }),
        }
    }
    fn variable(&self) -> Option<&Var> {
        Operand::variable(self)
    }
}

/// A GLM's value as a `1 x 1` variable whose adjoint scales the analytic
/// gradients of the parameters that are variables (one reverse kernel for
/// all of them, see [`scalar_leaf`]).
fn glm_leaf(value: f64, parents: &[&Var], gradients: Vec<MatrixCl<f64>>) -> Result<Var> {
    scalar_leaf(MatrixCl::from_slice(1, 1, &[value])?, parents, gradients)
}

/// Runs a GLM with the gradients of the operands that are variables (slots
/// `[alpha, beta, x, aux]`, in [`GlmOutput::into_gradients`]'s order) and
/// records its value as a `1 x 1` variable over them.
///
/// [`GlmOutput::into_gradients`]: crate::glm::GlmOutput::into_gradients
fn glm_var(
    slots: [Option<&Var>; 4],
    run: impl FnOnce(&GlmOptions) -> Result<crate::glm::GlmOutput>,
) -> Result<Var> {
    let is_var = |k: usize| slots[k].is_some();
    let wrt = Wrt {
        alpha: is_var(0),
        beta: is_var(1),
        x: is_var(2),
        aux: is_var(3),
    };
    let out = run(&GlmOptions::gradients(wrt))?;
    let value = out.value;
    let mut vars = Vec::new();
    let mut gradients = Vec::new();
    for (slot, gradient) in slots.iter().zip(out.into_gradients()) {
        if let (Some(var), Some(gradient)) = (*slot, gradient) {
            vars.push(var);
            gradients.push(gradient);
        }
    }
    glm_leaf(value, &vars, gradients)
}

macro_rules! linear_glm {
    // Successes and trials (binomial): two integer arrays before `x`.
    ($(#[$doc:meta])* $name:ident => $glm:path, $y:ty, trials) => {
        $(#[$doc])*
        #[allow(non_snake_case)]
        pub fn $name<'a>(
            n: impl Into<Outcomes<'a, $y>>,
            N: impl Into<Outcomes<'a, $y>>,
            x: impl Operand,
            alpha: impl GlmScalar,
            beta: impl Operand,
        ) -> Result<Var> {
            let (n, N): (Outcomes<'_, $y>, Outcomes<'_, $y>) = (n.into(), N.into());
            glm_var([GlmScalar::variable(&alpha), Operand::variable(&beta), Operand::variable(&x), None], |options| {
                $glm(n, N, x.value(), alpha.param("alpha")?, beta.value(), options)
            })
        }
    };
    // With an auxiliary parameter (`sigma`, `phi`): `1 x 1` (checked in the
    // kernel) or `n x 1`, like the intercept.
    ($(#[$doc:meta])* $name:ident => $glm:path, $y:ty, $aux:ident) => {
        $(#[$doc])*
        pub fn $name<'a>(
            y: impl Into<Outcomes<'a, $y>>,
            x: impl Operand,
            alpha: impl GlmScalar,
            beta: impl Operand,
            $aux: impl GlmScalar,
        ) -> Result<Var> {
            let y: Outcomes<'_, $y> = y.into();
            glm_var([GlmScalar::variable(&alpha), Operand::variable(&beta), Operand::variable(&x), GlmScalar::variable(&$aux)], |options| {
                $glm(
                    y,
                    x.value(),
                    alpha.param("alpha")?,
                    beta.value(),
                    $aux.param(stringify!($aux))?,
                    options,
                )
            })
        }
    };
    ($(#[$doc:meta])* $name:ident => $glm:path, $y:ty) => {
        $(#[$doc])*
        pub fn $name<'a>(
            y: impl Into<Outcomes<'a, $y>>,
            x: impl Operand,
            alpha: impl GlmScalar,
            beta: impl Operand,
        ) -> Result<Var> {
            let y: Outcomes<'_, $y> = y.into();
            glm_var([GlmScalar::variable(&alpha), Operand::variable(&beta), Operand::variable(&x), None], |options| {
                $glm(y, x.value(), alpha.param("alpha")?, beta.value(), options)
            })
        }
    };
}

linear_glm! {
    /// `bernoulli_logit_glm_lpmf` as a differentiable `1 x 1` variable
    /// (intercept `1 x 1` or `n x 1`, coefficients `p x 1`; the design
    /// matrix may be a variable too).
    ///
    /// ```
    /// use clfuse::prelude::*;
    /// use clfuse::rev::{self, Var};
    /// let x = MatrixCl::from_slice(2, 1, &[1.0, -1.0])?;
    /// let alpha = Var::new(MatrixCl::from_slice(1, 1, &[0.0])?);
    /// let beta = Var::new(MatrixCl::from_slice(1, 1, &[0.0])?);
    /// let lp = rev::bernoulli_logit_glm(&[1, 0][..], &x, &alpha, &beta)?;
    /// lp.grad()?;
    /// // d/dβ Σ (y - 1/2) x = (1 - 0.5)·1 + (0 - 0.5)·(-1) = 1
    /// assert!((beta.adjoint().to_vec()?[0] - 1.0).abs() < 1e-12);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    bernoulli_logit_glm => crate::glm::bernoulli_logit_glm_lpmf, i32
}

linear_glm! {
    /// `binomial_logit_glm_lpmf` as a differentiable `1 x 1` variable:
    /// successes `n`, then trials `N` (Stan's order), then `x`, the
    /// intercept (`1 x 1` or `n x 1`) and the coefficients.
    ///
    /// ```
    /// use clfuse::prelude::*;
    /// use clfuse::rev::{self, Var};
    /// let x = MatrixCl::from_slice(2, 1, &[1.0, -1.0])?;
    /// let beta = Var::new(MatrixCl::from_slice(1, 1, &[0.0])?);
    /// let lp = rev::binomial_logit_glm(&[3, 0][..], &[4, 2][..], &x, &MatrixCl::zeros(1, 1)?, &beta)?;
    /// lp.grad()?;
    /// // d/dβ Σ (n - N/2) x = (3 - 2)·1 + (0 - 1)·(-1) = 2
    /// assert!((beta.adjoint().to_vec()?[0] - 2.0).abs() < 1e-12);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    binomial_logit_glm => crate::glm::binomial_logit_glm_lpmf, i32, trials
}

linear_glm! {
    /// `poisson_log_glm_lpmf` as a differentiable `1 x 1` variable.
    ///
    /// ```
    /// use clfuse::prelude::*;
    /// use clfuse::rev::{self, Var};
    /// let x = MatrixCl::from_slice(1, 1, &[1.0])?;
    /// let beta = Var::new(MatrixCl::from_slice(1, 1, &[0.0])?);
    /// rev::poisson_log_glm(&[3][..], &x, &MatrixCl::zeros(1, 1)?, &beta)?.grad()?;
    /// // d/dβ (y η - exp η) = (3 - 1)·1
    /// assert!((beta.adjoint().to_vec()?[0] - 2.0).abs() < 1e-12);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    poisson_log_glm => crate::glm::poisson_log_glm_lpmf, i32
}

linear_glm! {
    /// `normal_id_glm_lpdf` as a differentiable `1 x 1` variable; `sigma` is a
    /// `1 x 1` operand (checked in the kernel, never read to the host) or `n x 1`.
    ///
    /// ```
    /// use clfuse::prelude::*;
    /// use clfuse::rev::{self, Var};
    /// let x = MatrixCl::from_slice(1, 1, &[1.0])?;
    /// let beta = Var::new(MatrixCl::from_slice(1, 1, &[0.0])?);
    /// let sigma = MatrixCl::from_slice(1, 1, &[1.0])?;
    /// rev::normal_id_glm(&[2.0][..], &x, &MatrixCl::zeros(1, 1)?, &beta, &sigma)?.grad()?;
    /// // d/dβ -(y - β)²/2 = y - β = 2
    /// assert!((beta.adjoint().to_vec()?[0] - 2.0).abs() < 1e-12);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    normal_id_glm => crate::glm::normal_id_glm_lpdf, f64, sigma
}

linear_glm! {
    /// `neg_binomial_2_log_glm_lpmf` as a differentiable `1 x 1` variable;
    /// `phi` is a `1 x 1` operand (checked in the kernel, never read to the host) or `n x 1`.
    ///
    /// ```
    /// use clfuse::prelude::*;
    /// use clfuse::rev::{self, Var};
    /// let x = MatrixCl::from_slice(1, 1, &[0.0])?;
    /// let phi = Var::new(MatrixCl::from_slice(1, 1, &[1.0])?);
    /// let zero = MatrixCl::zeros(1, 1)?;
    /// rev::neg_binomial_2_log_glm(&[0][..], &x, &zero, &zero, &phi)?.grad()?;
    /// // log p(0) = φ log(φ / (1 + φ)); its derivative at φ = 1 is log(1/2) + 1/2
    /// assert!((phi.adjoint().to_vec()?[0] - (0.5f64.ln() + 0.5)).abs() < 1e-12);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    neg_binomial_2_log_glm => crate::glm::neg_binomial_2_log_glm_lpmf, i32, phi
}

/// `categorical_logit_glm_lpmf` as a differentiable `1 x 1` variable
/// (intercepts `K x 1`, coefficients `p x K`).
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::rev::{self, Var};
/// let x = MatrixCl::from_slice(1, 1, &[0.0])?;
/// let alpha = Var::new(MatrixCl::zeros(2, 1)?);
/// let beta = MatrixCl::zeros(1, 2)?;
/// rev::categorical_logit_glm(&[1][..], &x, &alpha, &beta)?.grad()?;
/// // d/dα_k log softmax(α)_1 = [k = 1] - 1/2
/// assert_eq!(alpha.adjoint().to_vec()?, vec![0.5, -0.5]);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn categorical_logit_glm<'a>(
    y: impl Into<Outcomes<'a, i32>>,
    x: impl Operand,
    alpha: impl Operand,
    beta: impl Operand,
) -> Result<Var> {
    let y: Outcomes<'_, i32> = y.into();
    glm_var(
        [
            Operand::variable(&alpha),
            Operand::variable(&beta),
            Operand::variable(&x),
            None,
        ],
        |options| {
            crate::glm::categorical_logit_glm_lpmf(
                y,
                x.value(),
                alpha.value(),
                beta.value(),
                options,
            )
        },
    )
}

/// `ordered_logistic_glm_lpmf` as a differentiable `1 x 1` variable
/// (coefficients `p x 1`, ascending cutpoints `(K - 1) x 1`).
///
/// ```
/// use clfuse::prelude::*;
/// use clfuse::rev::{self, Var};
/// let x = MatrixCl::from_slice(1, 1, &[0.0])?;
/// let cuts = Var::new(MatrixCl::zeros(1, 1)?);
/// rev::ordered_logistic_glm(&[1][..], &x, &MatrixCl::zeros(1, 1)?, &cuts)?.grad()?;
/// // log p(y = 1) = log(1 - inv_logit(-c)) = log inv_logit(c); d/dc at 0 = 1/2
/// assert!((cuts.adjoint().to_vec()?[0] - 0.5).abs() < 1e-12);
/// # Ok::<(), clfuse::Error>(())
/// ```
pub fn ordered_logistic_glm<'a>(
    y: impl Into<Outcomes<'a, i32>>,
    x: impl Operand,
    beta: impl Operand,
    cutpoints: impl Operand,
) -> Result<Var> {
    let y: Outcomes<'_, i32> = y.into();
    glm_var(
        [
            None,
            Operand::variable(&beta),
            Operand::variable(&x),
            Operand::variable(&cutpoints),
        ],
        |options| {
            crate::glm::ordered_logistic_glm_lpmf(
                y,
                x.value(),
                beta.value(),
                cutpoints.value(),
                options,
            )
        },
    )
}

/// The GLMs written as expressions of variables and differentiated by the
/// tape, instead of their hand-derived fused gradients: the same values
/// and gradients, for comparison and as templates for new likelihoods.
/// Each is one step whose forward kernel reads `x` once (the product is
/// read inline, see `clfuse_ops::rev`), like the hand-fused leaves above.
/// The leaves stay the default: they also check their inputs (outcomes in
/// range, finite intercept and linear predictor), which costs one wait for
/// the kernel's flags per call; BENCHMARKS.md ("Reverse-mode autodiff") has
/// both forms' figures.
pub mod composed {
    use super::*;
    use crate::dist::Real;

    /// `x·β + α` with `α` a number, or a `1 x 1` or `n x 1` matrix or
    /// variable, as an expression: the likelihood's step computes it inline
    /// (η is never stored).
    fn linear_predictor<'a, A: Real>(
        x: &'a MatrixCl<f64>,
        alpha: &'a A,
        beta: &'a Var,
    ) -> Expr<impl Differentiable<Scalar = f64, Dependence = Variable> + 'a> {
        matrix_vector_multiply(x, beta) + alpha.leaf(x.rows())
    }

    /// Bernoulli-logit log mass `Σ log_inv_logit(s·η)`, `s = 2y - 1`.
    ///
    /// ```
    /// use clfuse::prelude::*;
    /// use clfuse::rev::{self, Var};
    /// let x = MatrixCl::from_slice(2, 1, &[1.0, -1.0])?;
    /// let y = MatrixCl::from_slice(2, 1, &[1, 0])?;
    /// let (alpha, beta) = (Var::new(MatrixCl::zeros(1, 1)?), Var::new(MatrixCl::zeros(1, 1)?));
    /// rev::composed::bernoulli_logit_glm(&y, &x, &alpha, &beta)?.grad()?;
    /// assert!((beta.adjoint().to_vec()?[0] - 1.0).abs() < 1e-12);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn bernoulli_logit_glm(
        y: &MatrixCl<i32>,
        x: &MatrixCl<f64>,
        alpha: impl Real,
        beta: &Var,
    ) -> Result<Var> {
        let eta = linear_predictor(x, &alpha, beta);
        let sign = (2 * y - 1).cast::<f64>();
        colwise_sum(log_inv_logit(elt_multiply(sign, eta))).eval()
    }

    /// Binomial-logit log mass `Σ n·η - N·log1p_exp(η) + lchoose(N, n)`.
    ///
    /// ```
    /// use clfuse::prelude::*;
    /// use clfuse::rev::{self, Var};
    /// let x = MatrixCl::from_slice(2, 1, &[1.0, -1.0])?;
    /// let (n, trials) = (MatrixCl::from_slice(2, 1, &[3, 0])?, MatrixCl::from_slice(2, 1, &[4, 2])?);
    /// let (alpha, beta) = (Var::new(MatrixCl::zeros(1, 1)?), Var::new(MatrixCl::zeros(1, 1)?));
    /// rev::composed::binomial_logit_glm(&n, &trials, &x, &alpha, &beta)?.grad()?;
    /// assert!((beta.adjoint().to_vec()?[0] - 2.0).abs() < 1e-12);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    #[allow(non_snake_case)]
    pub fn binomial_logit_glm(
        n: &MatrixCl<i32>,
        N: &MatrixCl<i32>,
        x: &MatrixCl<f64>,
        alpha: impl Real,
        beta: &Var,
    ) -> Result<Var> {
        let eta = linear_predictor(x, &alpha, beta);
        let eta = &eta;
        let (n, trials) = (n.cast::<f64>(), N.cast::<f64>());
        let (n, trials) = (&n, &trials);
        colwise_sum(
            elt_multiply(n, eta) - elt_multiply(trials, log1p_exp(eta))
                + binomial_coefficient_log(trials, n),
        )
        .eval()
    }

    /// Poisson-log log mass `Σ y·η - exp(η) - lgamma(y + 1)`.
    pub fn poisson_log_glm(
        y: &MatrixCl<i32>,
        x: &MatrixCl<f64>,
        alpha: impl Real,
        beta: &Var,
    ) -> Result<Var> {
        let eta = linear_predictor(x, &alpha, beta);
        let eta = &eta;
        let y = y.cast::<f64>();
        let y = &y;
        colwise_sum(elt_multiply(y, eta) - exp(eta) - lgamma(y + 1.0)).eval()
    }

    /// Normal log density `Σ -z²/2 - log σ - log √(2π)`, `z = (y - η) / σ`,
    /// `σ` a `1 x 1` variable.
    pub fn normal_id_glm(
        y: &MatrixCl<f64>,
        x: &MatrixCl<f64>,
        alpha: impl Real,
        beta: &Var,
        sigma: impl Real,
    ) -> Result<Var> {
        let eta = linear_predictor(x, &alpha, beta);
        let sigma = sigma.leaf(x.rows());
        let sigma = &sigma;
        let z = elt_divide(y - eta, sigma);
        colwise_sum(-0.5f64 * square(z) - log(sigma) - 0.918_938_533_204_672_8).eval()
    }
}
