//! Stan's Gaussian-process covariance functions (`gp_exp_quad_cov`,
//! `gp_matern32_cov`, `gp_matern52_cov`, `gp_exponential_cov`,
//! `gp_periodic_cov`, `gp_dot_prod_cov`) and `add_diag`, as fused,
//! differentiable expressions.
//!
//! Points are the ROWS of a matrix `x` (`n x d`; `d = 1` is a column
//! vector). Each function has a one-set form (`x`: the symmetric `n x n`
//! covariance, its diagonal exactly `σ²` as in Stan) and a two-set form
//! (`x1`, `x2`: `n1 x n2`, named `*_cross_cov`, since Rust has no
//! overloading).
//!
//! A stationary covariance is one GEMM and two row-norm reductions (the
//! squared distances, [`squared_distance`](crate::squared_distance)) and ONE
//! fused kernel over the `n x n` result: `σ²` is a `1 x 1` operand read
//! through [`scalar_broadcast`](crate::scalar_broadcast), so `square(sigma)`
//! (and `-2 / l²`, `π / p` for the periodic one) is computed once per work
//! item, not per element. The length scale divides the points'
//! coordinates before the distance (`x_ik / l_k`, an `n x d` expression
//! evaluated into the GEMM): a number or `1 x 1` length scale is isotropic,
//! a vector of `d` elements is ARD (one length scale per dimension), decided
//! when called, one kernel for both. The functions of the distance
//! ([`gp_matern32_kernel`] ...) are element-wise operations of the squared
//! distance with derivatives that stay finite where points coincide.
//!
//! Arguments: points `x` are `&MatrixCl<f64>`, `&Var` or `&Expr`;
//! hyper-parameters (`sigma`, `length_scale`, `period`, the `add_diag`
//! values) are numbers, `&MatrixCl<f64>`, `&Var` or expressions
//! ([`GpParameter`]). Everything is `f64`, as in Stan. Each result `.eval()`s
//! to a `MatrixCl<f64>`, or to a [`Var`](crate::rev::Var) when any argument is
//! a variable, differentiable in every variable argument (points included).
//!
//! Errors (`Err` naming the function and argument, never a panic): points of
//! different dimensions, a hyper-parameter of the wrong shape, and a
//! hyper-parameter given as a number that is not positive and finite (`sigma`
//! of `gp_dot_prod_cov` may be 0). Values on the device are not checked.

use crate::distances::{SquaredDistance, squared_distance_of};
use crate::functions::{Exp, Square};
use crate::leaves::{ColIndex, Constant, RowIndex, col_index, constant, row_index};
use crate::logic::{Equal, Less, Select, eq, lt, select};
use crate::matrix_functions::AlongCols;
use crate::operation::Operation;
use crate::rev::{Var, VarLoad};
use crate::structural::{Indexing, ScalarBroadcast, Transpose, indexing, scalar_broadcast};
use clfuse_core::expr::{Add, ElewiseDiv, ElewiseMul, Load, MatrixProduct, Scalar, Shared};
use clfuse_core::{Error, Expr, IntoOperand, MatrixCl, Result};

crate::elementwise! {
    /// `(1 + √3 r) exp(-√3 r)` of the squared distance `r²`: the Matérn 3/2
    /// correlation (its derivative in `r²`, `-1.5 exp(-√3 r)`, is finite at 0).
    pub struct GpMatern32Kernel;
    fn gp_matern32_kernel(x) = "(1 + 1.7320508075688772 * sqrt({x})) * exp(-1.7320508075688772 * sqrt({x}))";
    result = real; view = entire; example = true;
    d/dx = "-1.5 * exp(-1.7320508075688772 * sqrt({x}))";
}

crate::elementwise! {
    /// `(1 + √5 r + 5 r² / 3) exp(-√5 r)` of the squared distance `r²`: the
    /// Matérn 5/2 correlation (derivative `-5/6 (1 + √5 r) exp(-√5 r)`).
    pub struct GpMatern52Kernel;
    fn gp_matern52_kernel(x) = "(1 + 2.23606797749979 * sqrt({x}) + 1.6666666666666667 * {x}) * exp(-2.23606797749979 * sqrt({x}))";
    result = real; view = entire; example = true;
    d/dx = "-0.8333333333333334 * (1 + 2.23606797749979 * sqrt({x})) * exp(-2.23606797749979 * sqrt({x}))";
}

crate::elementwise! {
    /// `exp(-r)` of the squared distance `r²`: the exponential correlation.
    /// Its derivative in `r²`, `-exp(-r) / (2r)`, is taken as 0 at `r = 0`
    /// (where the covariance has a kink in the points).
    pub struct GpExponentialKernel;
    fn gp_exponential_kernel(x) = "exp(-sqrt({x}))";
    result = real; view = entire; example = true;
    d/dx = "({x} > 0 ? -0.5 * {res} / sqrt({x}) : 0)";
}

crate::elementwise! {
    /// `sin²(c r)` of the squared distance `r²` and `c = π / period`: the
    /// periodic covariance's argument (derivative in `r²` `c sin(2cr) / (2r)`,
    /// `c²` at `r = 0`).
    pub struct GpPeriodicKernel;
    fn gp_periodic_kernel(x, y) = "sin({y} * sqrt({x})) * sin({y} * sqrt({x}))";
    result = real; view = entire; example = true;
    d/dx = "({x} > 0 ? {y} * sin(2 * {y} * sqrt({x})) / (2 * sqrt({x})) : {y} * {y})";
    d/dy = "sqrt({x}) * sin(2 * {y} * sqrt({x}))";
}

/// A hyper-parameter of a covariance function (or the values of
/// [`add_diag()`]): a number (`f64`), a `&MatrixCl<f64>`, a `&Var` or an
/// expression. A number becomes a `1 x 1` constant and is checked on the host.
///
/// ```
/// use clfuse_ops::prelude::*;
/// use clfuse_ops::GpParameter;
/// assert_eq!(2.5f64.number(), Some(2.5));
/// let m = MatrixCl::from_slice(1, 1, &[2.5f64])?;
/// assert_eq!((&m).number(), None);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub trait GpParameter: Copy {
    /// The node it becomes in an expression.
    type Operand: Operation<Scalar = f64>;
    /// The node (a number becomes a `1 x 1` constant).
    fn gp_operand(self) -> Self::Operand;
    /// Its value when it is a number (checked on the host).
    fn number(&self) -> Option<f64> {
        None
    }
}

impl GpParameter for f64 {
    type Operand = Constant<f64>;
    fn gp_operand(self) -> Constant<f64> {
        constant(self, 1, 1).0
    }
    fn number(&self) -> Option<f64> {
        Some(*self)
    }
}

impl<'a> GpParameter for &'a MatrixCl<f64> {
    type Operand = Load<'a, f64>;
    fn gp_operand(self) -> Load<'a, f64> {
        self.into_operand()
    }
}

impl<'a> GpParameter for &'a Var<f64> {
    type Operand = VarLoad<'a, f64>;
    fn gp_operand(self) -> VarLoad<'a, f64> {
        self.into_operand()
    }
}

impl<O: Operation<Scalar = f64> + Copy> GpParameter for Expr<O> {
    type Operand = O;
    fn gp_operand(self) -> O {
        self.0
    }
}

impl<'a, O: Operation<Scalar = f64>> GpParameter for &'a Expr<O> {
    type Operand = Shared<'a, O>;
    fn gp_operand(self) -> Shared<'a, O> {
        self.into_operand()
    }
}

/// Points `x` with each coordinate divided by its length scale.
pub type Scaled<X, L> = ElewiseDiv<X, AlongCols<L>>;
/// Squared distances between scaled points.
pub type ScaledDistance<X1, X2, L> = SquaredDistance<Scaled<X1, L>, Scaled<X2, L>, f64>;
/// `σ²` read once per work item.
pub type Magnitude<S> = ScalarBroadcast<Square<S>>;
/// A two-set covariance: `σ² f(i, j)`.
pub type CrossCov<S, F> = ElewiseMul<Magnitude<S>, F>;
/// A one-set covariance: `σ²` on the diagonal, `σ² f(i, j)` elsewhere.
pub type SymmetricCov<S, F> =
    ElewiseMul<Magnitude<S>, Select<Equal<RowIndex, ColIndex>, Scalar<f64>, F>>;
/// `exp(-r² / 2)`.
pub type ExpQuadKernel<D> = Exp<ElewiseMul<Scalar<f64>, D>>;
/// `exp(-2 sin²(π r / p) / l²)`.
pub type PeriodicKernel<D, L, P> = Exp<
    ElewiseMul<
        ScalarBroadcast<ElewiseDiv<Scalar<f64>, Square<L>>>,
        GpPeriodicKernel<D, ScalarBroadcast<ElewiseDiv<Scalar<f64>, P>>>,
    >,
>;

/// The node [`gp_exp_quad_cov()`] builds.
pub type GpExpQuadCov<X, S, L> = SymmetricCov<S, ExpQuadKernel<ScaledDistance<X, X, L>>>;
/// The node [`gp_exp_quad_cross_cov()`] builds.
pub type GpExpQuadCrossCov<X1, X2, S, L> = CrossCov<S, ExpQuadKernel<ScaledDistance<X1, X2, L>>>;
/// The node [`gp_matern32_cov()`] builds.
pub type GpMatern32Cov<X, S, L> = SymmetricCov<S, GpMatern32Kernel<ScaledDistance<X, X, L>>>;
/// The node [`gp_matern32_cross_cov()`] builds.
pub type GpMatern32CrossCov<X1, X2, S, L> =
    CrossCov<S, GpMatern32Kernel<ScaledDistance<X1, X2, L>>>;
/// The node [`gp_matern52_cov()`] builds.
pub type GpMatern52Cov<X, S, L> = SymmetricCov<S, GpMatern52Kernel<ScaledDistance<X, X, L>>>;
/// The node [`gp_matern52_cross_cov()`] builds.
pub type GpMatern52CrossCov<X1, X2, S, L> =
    CrossCov<S, GpMatern52Kernel<ScaledDistance<X1, X2, L>>>;
/// The node [`gp_exponential_cov()`] builds.
pub type GpExponentialCov<X, S, L> = SymmetricCov<S, GpExponentialKernel<ScaledDistance<X, X, L>>>;
/// The node [`gp_exponential_cross_cov()`] builds.
pub type GpExponentialCrossCov<X1, X2, S, L> =
    CrossCov<S, GpExponentialKernel<ScaledDistance<X1, X2, L>>>;
/// The node [`gp_periodic_cov()`] builds.
pub type GpPeriodicCov<X, S, L, P> =
    SymmetricCov<S, PeriodicKernel<SquaredDistance<X, X, f64>, L, P>>;
/// The node [`gp_periodic_cross_cov()`] builds.
pub type GpPeriodicCrossCov<X1, X2, S, L, P> =
    CrossCov<S, PeriodicKernel<SquaredDistance<X1, X2, f64>, L, P>>;
/// The node [`gp_dot_prod_cov()`] and [`gp_dot_prod_cross_cov()`] build.
pub type GpDotProdCov<X1, X2, S> = Add<Magnitude<S>, MatrixProduct<X1, Transpose<X2>>>;
/// The node [`add_diag()`] builds.
pub type AddDiag<M, D> = Add<
    M,
    Select<Equal<RowIndex, ColIndex>, Indexing<D, DiagonalIndex, DiagonalIndex>, Scalar<f64>>,
>;
/// Where `add_diag` reads its vector at `(i, j)`: element `i` (times the
/// layout's 0 or 1), kept inside the vector below a tall matrix's diagonal
/// (those elements are not selected, but a gather is checked wherever it
/// runs).
pub type DiagonalIndex =
    ElewiseMul<Select<Less<RowIndex, Scalar<i32>>, RowIndex, Scalar<i32>>, Scalar<i32>>;

fn invalid(function: &'static str, argument: &'static str, reason: String) -> Error {
    Error::InvalidArgument {
        function,
        argument,
        reason,
    }
}

/// The `rows x cols` of a matrix argument.
fn matrix_shape<O: Operation>(
    function: &'static str,
    argument: &'static str,
    o: &O,
) -> Result<(usize, usize)> {
    o.shape()?
        .ok_or_else(|| invalid(function, argument, "needs a matrix, not a scalar".into()))
}

/// `(n1, n2, d)` of two sets of points.
fn points<X1: Operation, X2: Operation>(
    function: &'static str,
    x1: &X1,
    x2: &X2,
) -> Result<(usize, usize, usize)> {
    let (n1, d1) = matrix_shape(function, "x1", x1)?;
    let (n2, d2) = matrix_shape(function, "x2", x2)?;
    if d1 != d2 {
        return Err(invalid(
            function,
            "x2",
            format!("points of x1 have {d1} dimensions (columns), of x2 {d2}"),
        ));
    }
    Ok((n1, n2, d1))
}

/// A `1 x 1` hyper-parameter; a number must be positive (or non-negative
/// with `allow_zero`) and finite.
fn check_scalar<P: GpParameter>(
    function: &'static str,
    argument: &'static str,
    p: P,
    allow_zero: bool,
) -> Result<()> {
    if let Some(v) = p.number() {
        let ok = v.is_finite() && (v > 0.0 || (allow_zero && v == 0.0));
        if !ok {
            let need = if allow_zero {
                "non-negative"
            } else {
                "positive"
            };
            return Err(invalid(
                function,
                argument,
                format!("must be {need} and finite, but is {v}"),
            ));
        }
    }
    let shape = matrix_shape(function, argument, &p.gp_operand())?;
    if shape != (1, 1) {
        return Err(invalid(
            function,
            argument,
            format!(
                "must be a number or 1 x 1, but is {} x {}",
                shape.0, shape.1
            ),
        ));
    }
    Ok(())
}

/// Index multipliers reading a vector of `len` elements along an axis:
/// `(0, 0)` for a `1 x 1` (one value), `(1, 0)` for a column, `(0, 1)` for
/// a row.
fn vector_layout<P: GpParameter>(
    function: &'static str,
    argument: &'static str,
    p: P,
    len: usize,
    what: &str,
) -> Result<(i32, i32)> {
    let shape = matrix_shape(function, argument, &p.gp_operand())?;
    match shape {
        (1, 1) => Ok((0, 0)),
        (r, 1) if r == len => Ok((1, 0)),
        (1, c) if c == len => Ok((0, 1)),
        (r, c) => Err(invalid(
            function,
            argument,
            format!(
                "must be a number, 1 x 1 or a vector of {len} elements ({what}), but is {r} x {c}"
            ),
        )),
    }
}

/// The length scale, checked: isotropic (a number or `1 x 1`) or ARD (a
/// vector of `d` elements). Returns the multipliers that read it per column.
fn length_scale_layout<L: GpParameter>(
    function: &'static str,
    l: L,
    d: usize,
) -> Result<(i32, i32)> {
    if let Some(v) = l.number()
        && !(v.is_finite() && v > 0.0)
    {
        return Err(invalid(
            function,
            "length_scale",
            format!("must be positive and finite, but is {v}"),
        ));
    }
    vector_layout(
        function,
        "length_scale",
        l,
        d,
        "one per dimension of the points",
    )
}

/// `x` (`rows x d`) with column `k` divided by `l[k]`.
fn scaled<X: IntoOperand, L: GpParameter>(
    x: X,
    l: L,
    rows: usize,
    d: usize,
    (a, b): (i32, i32),
) -> Scaled<X::Operand, L::Operand>
where
    X::Operand: Operation<Scalar = f64>,
{
    let per_column = indexing(
        Expr(l.gp_operand()),
        col_index(rows, d) * a,
        col_index(rows, d) * b,
    );
    ElewiseDiv(x.into_operand(), per_column.0)
}

/// The squared distances between the points of `x1` and `x2`, each
/// coordinate divided by its length scale, and `σ²`, checked.
#[allow(clippy::type_complexity)]
fn stationary_parts<X1, X2, S, L>(
    function: &'static str,
    x1: X1,
    x2: X2,
    sigma: S,
    length_scale: L,
) -> Result<(
    ScaledDistance<X1::Operand, X2::Operand, L::Operand>,
    Magnitude<S::Operand>,
    (usize, usize),
)>
where
    X1: IntoOperand + Clone,
    X2: IntoOperand + Clone,
    X1::Operand: Operation<Scalar = f64>,
    X2::Operand: Operation<Scalar = f64>,
    S: GpParameter,
    L: GpParameter,
{
    let (n1, n2, d) = points(
        function,
        &x1.clone().into_operand(),
        &x2.clone().into_operand(),
    )?;
    check_scalar(function, "sigma", sigma, false)?;
    let at = length_scale_layout(function, length_scale, d)?;
    let d2 = squared_distance_of(
        || scaled(x1.clone(), length_scale, n1, d, at),
        || scaled(x2.clone(), length_scale, n2, d, at),
        n1,
        n2,
    );
    Ok((d2, magnitude(sigma, n1, n2), (n1, n2)))
}

fn magnitude<S: GpParameter>(sigma: S, rows: usize, cols: usize) -> Magnitude<S::Operand> {
    scalar_broadcast(Expr(Square(sigma.gp_operand())), rows, cols).0
}

/// `σ² f` with `σ²` on the diagonal (one set of points).
fn symmetric<S, F>(s2: Magnitude<S>, f: F, n: usize) -> SymmetricCov<S, F> {
    let off_diagonal = select(eq(row_index(n, n), col_index(n, n)), 1.0f64, Expr(f));
    ElewiseMul(s2, off_diagonal.0)
}

macro_rules! stationary {
    (
        $(#[$one_doc:meta])* $one:ident => $One:ident,
        $(#[$cross_doc:meta])* $cross:ident => $Cross:ident,
        $name:literal, |$d2:ident| $kernel:expr
    ) => {
        $(#[$one_doc])*
        #[allow(clippy::type_complexity)]
        pub fn $one<X, S, L>(
            x: X,
            sigma: S,
            length_scale: L,
        ) -> Result<Expr<$One<X::Operand, S::Operand, L::Operand>>>
        where
            X: IntoOperand + Clone,
            X::Operand: Operation<Scalar = f64>,
            S: GpParameter,
            L: GpParameter,
        {
            let ($d2, s2, (n, _)) =
                stationary_parts($name, x.clone(), x, sigma, length_scale)?;
            Ok(Expr(symmetric(s2, $kernel, n)))
        }

        $(#[$cross_doc])*
        #[allow(clippy::type_complexity)]
        pub fn $cross<X1, X2, S, L>(
            x1: X1,
            x2: X2,
            sigma: S,
            length_scale: L,
        ) -> Result<Expr<$Cross<X1::Operand, X2::Operand, S::Operand, L::Operand>>>
        where
            X1: IntoOperand + Clone,
            X2: IntoOperand + Clone,
            X1::Operand: Operation<Scalar = f64>,
            X2::Operand: Operation<Scalar = f64>,
            S: GpParameter,
            L: GpParameter,
        {
            let ($d2, s2, _) = stationary_parts($name, x1, x2, sigma, length_scale)?;
            Ok(Expr(ElewiseMul(s2, $kernel)))
        }
    };
}

stationary! {
    /// Stan's `gp_exp_quad_cov(x, sigma, length_scale)`: the squared-exponential
    /// covariance `σ² exp(-‖x_i − x_j‖² / (2 l²))` of the rows of `x`
    /// (`n x n`). `length_scale` is a number or `1 x 1` (isotropic) or a vector
    /// of one length scale per column of `x` (ARD: `σ² exp(-½ Σ_k (x_ik −
    /// x_jk)² / l_k²)`). Arguments are any [`GpParameter`].
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// // points 0 and 1 on a line, σ = 2, l = 1
    /// let x = MatrixCl::from_slice(2, 1, &[0.0f64, 1.0])?;
    /// let k = gp_exp_quad_cov(&x, 2.0, 1.0)?.eval()?.to_vec()?;
    /// let off = 4.0 * (-0.5f64).exp();
    /// assert!((k[0] - 4.0).abs() < 1e-12 && (k[1] - off).abs() < 1e-12);
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    gp_exp_quad_cov => GpExpQuadCov,
    /// Stan's `gp_exp_quad_cov(x1, x2, sigma, length_scale)`: the
    /// squared-exponential covariance between the rows of `x1` and of `x2`
    /// (`n1 x n2`); see [`gp_exp_quad_cov()`].
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// let x1 = MatrixCl::from_slice(1, 2, &[0.0f64, 0.0])?;
    /// let x2 = MatrixCl::from_slice(2, 2, &[3.0f64, 0.0, 4.0, 0.0])?;
    /// // ARD: the second dimension's length scale is 2
    /// let l = MatrixCl::from_slice(2, 1, &[1.0f64, 2.0])?;
    /// let k = gp_exp_quad_cross_cov(&x1, &x2, 1.0, &l)?.eval()?.to_vec()?;
    /// assert!((k[0] - (-0.5f64 * (9.0 + 4.0)).exp()).abs() < 1e-12);
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    gp_exp_quad_cross_cov => GpExpQuadCrossCov,
    "gp_exp_quad_cov", |d2| Exp(ElewiseMul(Scalar(-0.5), d2))
}

stationary! {
    /// Stan's `gp_matern32_cov(x, sigma, length_scale)`: `σ² (1 + √3 r)
    /// exp(-√3 r)` with `r = ‖x_i − x_j‖ / l` (ARD: `r² = Σ_k (x_ik −
    /// x_jk)² / l_k²`). See [`gp_exp_quad_cov()`] for the arguments.
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// let x = MatrixCl::from_slice(2, 1, &[0.0f64, 1.0])?;
    /// let k = gp_matern32_cov(&x, 1.0, 1.0)?.eval()?.to_vec()?;
    /// let s3 = 3f64.sqrt();
    /// assert!((k[1] - (1.0 + s3) * (-s3).exp()).abs() < 1e-12);
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    gp_matern32_cov => GpMatern32Cov,
    /// Stan's `gp_matern32_cov(x1, x2, sigma, length_scale)`: the Matérn 3/2
    /// covariance between the rows of `x1` and of `x2`; see [`gp_matern32_cov()`].
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// let x1 = MatrixCl::from_slice(1, 1, &[0.0f64])?;
    /// let x2 = MatrixCl::from_slice(2, 1, &[0.0f64, 2.0])?;
    /// let k = gp_matern32_cross_cov(&x1, &x2, 1.0, 2.0)?.eval()?.to_vec()?;
    /// let s3 = 3f64.sqrt();
    /// assert!((k[0] - 1.0).abs() < 1e-12 && (k[1] - (1.0 + s3) * (-s3).exp()).abs() < 1e-12);
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    gp_matern32_cross_cov => GpMatern32CrossCov,
    "gp_matern32_cov", |d2| GpMatern32Kernel(d2)
}

stationary! {
    /// Stan's `gp_matern52_cov(x, sigma, length_scale)`: `σ² (1 + √5 r +
    /// 5 r² / 3) exp(-√5 r)` with `r = ‖x_i − x_j‖ / l` (ARD as in
    /// [`gp_matern32_cov()`]).
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// let x = MatrixCl::from_slice(2, 1, &[0.0f64, 1.0])?;
    /// let k = gp_matern52_cov(&x, 1.0, 1.0)?.eval()?.to_vec()?;
    /// let s5 = 5f64.sqrt();
    /// assert!((k[1] - (1.0 + s5 + 5.0 / 3.0) * (-s5).exp()).abs() < 1e-12);
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    gp_matern52_cov => GpMatern52Cov,
    /// Stan's `gp_matern52_cov(x1, x2, sigma, length_scale)`; see
    /// [`gp_matern52_cov()`].
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// let x1 = MatrixCl::from_slice(1, 1, &[0.0f64])?;
    /// let x2 = MatrixCl::from_slice(1, 1, &[1.0f64])?;
    /// let k = gp_matern52_cross_cov(&x1, &x2, 2.0, 1.0)?.eval()?.to_vec()?;
    /// let s5 = 5f64.sqrt();
    /// assert!((k[0] - 4.0 * (1.0 + s5 + 5.0 / 3.0) * (-s5).exp()).abs() < 1e-12);
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    gp_matern52_cross_cov => GpMatern52CrossCov,
    "gp_matern52_cov", |d2| GpMatern52Kernel(d2)
}

stationary! {
    /// Stan's `gp_exponential_cov(x, sigma, length_scale)`: `σ² exp(-r)` with
    /// `r = ‖x_i − x_j‖ / l` (ARD as in [`gp_matern32_cov()`]). Not
    /// differentiable in the points where two of them coincide; the
    /// derivative there is taken as 0.
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// let x = MatrixCl::from_slice(2, 1, &[0.0f64, 2.0])?;
    /// let k = gp_exponential_cov(&x, 1.0, 4.0)?.eval()?.to_vec()?;
    /// assert!((k[1] - (-0.5f64).exp()).abs() < 1e-12);
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    gp_exponential_cov => GpExponentialCov,
    /// Stan's `gp_exponential_cov(x1, x2, sigma, length_scale)`; see
    /// [`gp_exponential_cov()`].
    ///
    /// ```
    /// use clfuse_ops::prelude::*;
    /// let x1 = MatrixCl::from_slice(1, 1, &[0.0f64])?;
    /// let x2 = MatrixCl::from_slice(1, 1, &[3.0f64])?;
    /// let k = gp_exponential_cross_cov(&x1, &x2, 1.0, 1.0)?.eval()?.to_vec()?;
    /// assert!((k[0] - (-3.0f64).exp()).abs() < 1e-12);
    /// # Ok::<(), clfuse_ops::Error>(())
    /// ```
    gp_exponential_cross_cov => GpExponentialCrossCov,
    "gp_exponential_cov", |d2| GpExponentialKernel(d2)
}

#[allow(clippy::type_complexity)]
fn periodic_parts<X1, X2, S, L, P>(
    function: &'static str,
    x1: X1,
    x2: X2,
    sigma: S,
    length_scale: L,
    period: P,
) -> Result<(
    Magnitude<S::Operand>,
    PeriodicKernel<SquaredDistance<X1::Operand, X2::Operand, f64>, L::Operand, P::Operand>,
    usize,
)>
where
    X1: IntoOperand + Clone,
    X2: IntoOperand + Clone,
    X1::Operand: Operation<Scalar = f64>,
    X2::Operand: Operation<Scalar = f64>,
    S: GpParameter,
    L: GpParameter,
    P: GpParameter,
{
    let (n1, n2, _) = points(
        function,
        &x1.clone().into_operand(),
        &x2.clone().into_operand(),
    )?;
    check_scalar(function, "sigma", sigma, false)?;
    check_scalar(function, "length_scale", length_scale, false)?;
    check_scalar(function, "period", period, false)?;
    let d2 = squared_distance_of(
        || x1.clone().into_operand(),
        || x2.clone().into_operand(),
        n1,
        n2,
    );
    let minus_two_over_l2 = scalar_broadcast(
        Expr(ElewiseDiv(Scalar(-2.0), Square(length_scale.gp_operand()))),
        n1,
        n2,
    );
    let pi_over_p = scalar_broadcast(
        Expr(ElewiseDiv(
            Scalar(std::f64::consts::PI),
            period.gp_operand(),
        )),
        n1,
        n2,
    );
    let kernel = Exp(ElewiseMul(
        minus_two_over_l2.0,
        GpPeriodicKernel(d2, pi_over_p.0),
    ));
    Ok((magnitude(sigma, n1, n2), kernel, n1))
}

/// Stan's `gp_periodic_cov(x, sigma, length_scale, period)`: `σ² exp(-2
/// sin²(π ‖x_i − x_j‖ / p) / l²)` of the rows of `x` (`n x n`). `sigma`,
/// `length_scale` and `period` are numbers or `1 x 1` (Stan has no ARD form).
///
/// ```
/// use clfuse_ops::prelude::*;
/// // points half a period apart: sin² = 1
/// let x = MatrixCl::from_slice(2, 1, &[0.0f64, 1.0])?;
/// let k = gp_periodic_cov(&x, 1.0, 1.0, 2.0)?.eval()?.to_vec()?;
/// assert!((k[1] - (-2.0f64).exp()).abs() < 1e-12);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
#[allow(clippy::type_complexity)]
pub fn gp_periodic_cov<X, S, L, P>(
    x: X,
    sigma: S,
    length_scale: L,
    period: P,
) -> Result<Expr<GpPeriodicCov<X::Operand, S::Operand, L::Operand, P::Operand>>>
where
    X: IntoOperand + Clone,
    X::Operand: Operation<Scalar = f64>,
    S: GpParameter,
    L: GpParameter,
    P: GpParameter,
{
    let (s2, kernel, n) =
        periodic_parts("gp_periodic_cov", x.clone(), x, sigma, length_scale, period)?;
    Ok(Expr(symmetric(s2, kernel, n)))
}

/// Stan's `gp_periodic_cov(x1, x2, sigma, length_scale, period)`: the
/// periodic covariance between the rows of `x1` and of `x2`; see
/// [`gp_periodic_cov()`].
///
/// ```
/// use clfuse_ops::prelude::*;
/// // a whole period apart: sin² = 0
/// let x1 = MatrixCl::from_slice(1, 1, &[0.0f64])?;
/// let x2 = MatrixCl::from_slice(1, 1, &[2.0f64])?;
/// let k = gp_periodic_cross_cov(&x1, &x2, 3.0, 1.0, 2.0)?.eval()?.to_vec()?;
/// assert!((k[0] - 9.0).abs() < 1e-12);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
#[allow(clippy::type_complexity)]
pub fn gp_periodic_cross_cov<X1, X2, S, L, P>(
    x1: X1,
    x2: X2,
    sigma: S,
    length_scale: L,
    period: P,
) -> Result<Expr<GpPeriodicCrossCov<X1::Operand, X2::Operand, S::Operand, L::Operand, P::Operand>>>
where
    X1: IntoOperand + Clone,
    X2: IntoOperand + Clone,
    X1::Operand: Operation<Scalar = f64>,
    X2::Operand: Operation<Scalar = f64>,
    S: GpParameter,
    L: GpParameter,
    P: GpParameter,
{
    let (s2, kernel, _) = periodic_parts("gp_periodic_cov", x1, x2, sigma, length_scale, period)?;
    Ok(Expr(ElewiseMul(s2, kernel)))
}

/// Stan's `gp_dot_prod_cov(x, sigma)`: `σ² + x_i · x_j` of the rows of `x`
/// (`n x n`): one GEMM and `σ²` added in its epilogue. `sigma` is a number or
/// `1 x 1`; as a number it must be non-negative (Stan allows 0).
///
/// ```
/// use clfuse_ops::prelude::*;
/// let x = MatrixCl::from_slice(2, 1, &[1.0f64, 2.0])?;
/// let k = gp_dot_prod_cov(&x, 0.5)?.eval()?.to_vec()?;
/// assert_eq!(k, vec![1.25, 2.25, 2.25, 4.25]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
#[allow(clippy::type_complexity)]
pub fn gp_dot_prod_cov<X, S>(
    x: X,
    sigma: S,
) -> Result<Expr<GpDotProdCov<X::Operand, X::Operand, S::Operand>>>
where
    X: IntoOperand + Clone,
    X::Operand: Operation<Scalar = f64>,
    S: GpParameter,
{
    dot_prod("gp_dot_prod_cov", x.clone(), x, sigma)
}

/// Stan's `gp_dot_prod_cov(x1, x2, sigma)`: `σ² + x1_i · x2_j` (`n1 x n2`);
/// see [`gp_dot_prod_cov()`].
///
/// ```
/// use clfuse_ops::prelude::*;
/// let x1 = MatrixCl::from_slice(1, 2, &[1.0f64, 2.0])?;
/// let x2 = MatrixCl::from_slice(1, 2, &[3.0f64, 4.0])?;
/// let k = gp_dot_prod_cross_cov(&x1, &x2, 1.0)?.eval()?.to_vec()?;
/// assert_eq!(k, vec![12.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
#[allow(clippy::type_complexity)]
pub fn gp_dot_prod_cross_cov<X1, X2, S>(
    x1: X1,
    x2: X2,
    sigma: S,
) -> Result<Expr<GpDotProdCov<X1::Operand, X2::Operand, S::Operand>>>
where
    X1: IntoOperand + Clone,
    X2: IntoOperand + Clone,
    X1::Operand: Operation<Scalar = f64>,
    X2::Operand: Operation<Scalar = f64>,
    S: GpParameter,
{
    dot_prod("gp_dot_prod_cov", x1, x2, sigma)
}

#[allow(clippy::type_complexity)]
fn dot_prod<X1, X2, S>(
    function: &'static str,
    x1: X1,
    x2: X2,
    sigma: S,
) -> Result<Expr<GpDotProdCov<X1::Operand, X2::Operand, S::Operand>>>
where
    X1: IntoOperand + Clone,
    X2: IntoOperand + Clone,
    X1::Operand: Operation<Scalar = f64>,
    X2::Operand: Operation<Scalar = f64>,
    S: GpParameter,
{
    let (n1, n2, _) = points(
        function,
        &x1.clone().into_operand(),
        &x2.clone().into_operand(),
    )?;
    check_scalar(function, "sigma", sigma, true)?;
    Ok(Expr(Add(
        magnitude(sigma, n1, n2),
        MatrixProduct::new(x1.into_operand(), Transpose(x2.into_operand())),
    )))
}

/// Stan's `add_diag(m, d)`: `m` with `d` added to its diagonal; `d` is a
/// number, `1 x 1`, or a vector of `min(rows, cols)` elements (one per
/// diagonal element). Fuses with `m` (a covariance, say) into one kernel.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let m = MatrixCl::from_slice(2, 2, &[1.0f64, 2.0, 3.0, 4.0])?;
/// assert_eq!(add_diag(&m, 0.5)?.eval()?.to_vec()?, vec![1.5, 2.0, 3.0, 4.5]);
/// let d = MatrixCl::from_slice(2, 1, &[10.0f64, 20.0])?;
/// assert_eq!(add_diag(&m, &d)?.eval()?.to_vec()?, vec![11.0, 2.0, 3.0, 24.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn add_diag<M, D>(m: M, d: D) -> Result<Expr<AddDiag<M::Operand, D::Operand>>>
where
    M: IntoOperand,
    M::Operand: Operation<Scalar = f64>,
    D: GpParameter,
{
    let m = m.into_operand();
    let (r, c) = matrix_shape("add_diag", "m", &m)?;
    let (a, b) = vector_layout("add_diag", "d", d, r.min(c), "one per diagonal element")?;
    let len = r.min(c) as i32;
    let inside = || select(lt(row_index(r, c), len), row_index(r, c), 0);
    let along = indexing(Expr(d.gp_operand()), inside() * a, inside() * b);
    let on_diagonal = select(eq(row_index(r, c), col_index(r, c)), along, 0.0f64);
    Ok(Expr(Add(m, on_diagonal.0)))
}
