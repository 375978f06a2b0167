//! What every density shares: its arguments' shapes and broadcasting, its
//! argument checks, and the evaluation of the summed log density
//! ([`checked_eval`]). A density file states its checks and its element-wise
//! log density; everything else is here.

use clfuse_core::expr::MatrixRef;
use clfuse_core::{Error, Expr, MatrixCl, Result};
use clfuse_ops::prelude::*;
use clfuse_ops::rev::{Both, Constant, Dependence, Differentiable, Var, Variable};
use clfuse_ops::{Check, DynOp, boxed};

/// `log(sqrt(2π))`.
pub(crate) const LOG_SQRT_TWO_PI: f64 = 0.918_938_533_204_672_8;
/// `log(π)`.
pub(crate) const LOG_PI: f64 = 1.144_729_885_849_400_2;
/// `log(2)`.
pub(crate) const LOG_TWO: f64 = std::f64::consts::LN_2;

/// One argument of a density as its expression reads it: broadcast to the
/// density's length `n` (`n x 1`), its type erased so that every kind of
/// argument (number, matrix, variable, expression) gives the same node type
/// for a given dependence.
#[doc(hidden)]
pub type Leaf<'s, D> = Expr<DynOp<'s, f64, D>>;

/// An integer argument as its expression reads it (see [`Leaf`]).
#[doc(hidden)]
pub type IntLeaf<'s> = Expr<DynOp<'s, i32, Constant>>;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for i32 {}
    impl Sealed for &clfuse_core::MatrixCl<f64> {}
    impl Sealed for &clfuse_core::MatrixCl<i32> {}
    impl Sealed for &clfuse_ops::rev::Var {}
    impl<O> Sealed for clfuse_core::Expr<O> {}
}

/// What an argument's values are checked on.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum Checked<'s, T: clfuse_core::ClType> {
    /// A number, checked on the host.
    Number(T),
    /// A matrix (or a variable's value), checked on the device.
    Device(&'s MatrixCl<T>),
    /// An expression: not checked (its values exist only inside the
    /// density's own kernel).
    Unchecked,
}

/// Any argument of a density: whether it depends on a variable (the
/// density then evaluates to a [`Var`], else to a `MatrixCl<f64>`).
pub trait Argument: sealed::Sealed {
    /// [`Constant`] or [`Variable`].
    type Dependence: Dependence;
}

/// A real argument of a density: a number (`f64`, or an `i32` read as a
/// real), a column vector or `1 x 1` matrix (`&MatrixCl<f64>`), a variable
/// (`&Var`, `n x 1` or `1 x 1`), or a matrix expression (an `n x 1` or `1 x 1`
/// [`Expr`], such as `matrix_vector_multiply(&x, &beta) + 0.25`). Numbers and
/// `1 x 1` arguments broadcast against the vectors, as in Stan's vectorised
/// signatures.
pub trait Real: Argument {
    /// Its shape: `None` for a number.
    #[doc(hidden)]
    fn shape(&self) -> Result<Option<(usize, usize)>>;
    /// Its leaf in a density of length `n`.
    #[doc(hidden)]
    fn leaf(&self, n: usize) -> Leaf<'_, Self::Dependence> {
        self.leaf_at(n, 1)
    }
    /// Its leaf as a `rows x cols` matrix (itself, or broadcast).
    #[doc(hidden)]
    fn leaf_at(&self, rows: usize, cols: usize) -> Leaf<'_, Self::Dependence>;
    /// What its checks read.
    #[doc(hidden)]
    fn checked(&self) -> Checked<'_, f64>;
    /// Its value on the device, evaluated when it is an expression: what
    /// a hand-written kernel (a triangular solve) reads.
    #[doc(hidden)]
    fn value(&self) -> Result<Value<'_>>;
}

/// An integer argument of a probability mass function (outcomes, counts,
/// trials): a number (`i32`) or a column vector or `1 x 1` matrix
/// (`&MatrixCl<i32>`).
pub trait Int: Argument<Dependence = Constant> {
    /// Its shape: `None` for a number.
    #[doc(hidden)]
    fn shape(&self) -> Result<Option<(usize, usize)>>;
    /// Its leaf in a density of length `n`.
    #[doc(hidden)]
    fn leaf(&self, n: usize) -> IntLeaf<'_> {
        self.leaf_at(n, 1)
    }
    /// Its leaf as a `rows x cols` matrix (itself, or broadcast).
    #[doc(hidden)]
    fn leaf_at(&self, rows: usize, cols: usize) -> IntLeaf<'_>;
    /// What its checks read.
    #[doc(hidden)]
    fn checked(&self) -> Checked<'_, i32>;
}

/// `a` read as a `rows x cols` matrix: itself when it has that shape
/// (`shape`; `None` for a number), else broadcast (a `1 x 1` matrix, a
/// number, or a vector repeated along its dimension that is 1).
fn spread<'s, A>(
    a: A,
    shape: Option<(usize, usize)>,
    rows: usize,
    cols: usize,
) -> Expr<
    DynOp<
        's,
        <A::Operand as clfuse_ops::Operation>::Scalar,
        <A::Operand as clfuse_ops::rev::Depends>::Dependence,
    >,
>
where
    A: clfuse_core::IntoOperand,
    A::Operand: Differentiable + 's,
{
    match shape {
        Some(shape) if shape == (rows, cols) => boxed(a),
        // A number or a `1 x 1` argument: read once per work item, and
        // what the density computes from it alone (`log(sigma)`) too.
        None | Some((1, 1)) => boxed(scalar_broadcast(a, rows, cols)),
        Some(_) => boxed(optional_broadcast(a, rows, cols)),
    }
}

impl Argument for f64 {
    type Dependence = Constant;
}
impl Real for f64 {
    fn shape(&self) -> Result<Option<(usize, usize)>> {
        Ok(None)
    }
    fn leaf_at(&self, rows: usize, cols: usize) -> Leaf<'_, Constant> {
        spread(*self, None, rows, cols)
    }
    fn checked(&self) -> Checked<'_, f64> {
        Checked::Number(*self)
    }
    fn value(&self) -> Result<Value<'_>> {
        Ok(Value::Matrix(MatrixRef::Owned(MatrixCl::from_slice(
            1,
            1,
            &[*self],
        )?)))
    }
}

impl Argument for i32 {
    type Dependence = Constant;
}
impl Real for i32 {
    fn shape(&self) -> Result<Option<(usize, usize)>> {
        Ok(None)
    }
    fn leaf_at(&self, rows: usize, cols: usize) -> Leaf<'_, Constant> {
        spread(f64::from(*self), None, rows, cols)
    }
    fn checked(&self) -> Checked<'_, f64> {
        Checked::Number(f64::from(*self))
    }
    fn value(&self) -> Result<Value<'_>> {
        Ok(Value::Matrix(MatrixRef::Owned(MatrixCl::from_slice(
            1,
            1,
            &[f64::from(*self)],
        )?)))
    }
}
impl Int for i32 {
    fn shape(&self) -> Result<Option<(usize, usize)>> {
        Ok(None)
    }
    fn leaf_at(&self, rows: usize, cols: usize) -> IntLeaf<'_> {
        spread(*self, None, rows, cols)
    }
    fn checked(&self) -> Checked<'_, i32> {
        Checked::Number(*self)
    }
}

impl Argument for &MatrixCl<f64> {
    type Dependence = Constant;
}
impl Real for &MatrixCl<f64> {
    fn shape(&self) -> Result<Option<(usize, usize)>> {
        Ok(Some((self.rows(), self.cols())))
    }
    fn leaf_at(&self, rows: usize, cols: usize) -> Leaf<'_, Constant> {
        spread(*self, Some((self.rows(), self.cols())), rows, cols)
    }
    fn checked(&self) -> Checked<'_, f64> {
        Checked::Device(self)
    }
    fn value(&self) -> Result<Value<'_>> {
        Ok(Value::Matrix(MatrixRef::Borrowed(self)))
    }
}

impl Argument for &MatrixCl<i32> {
    type Dependence = Constant;
}
impl Int for &MatrixCl<i32> {
    fn shape(&self) -> Result<Option<(usize, usize)>> {
        Ok(Some((self.rows(), self.cols())))
    }
    fn leaf_at(&self, rows: usize, cols: usize) -> IntLeaf<'_> {
        spread(*self, Some((self.rows(), self.cols())), rows, cols)
    }
    fn checked(&self) -> Checked<'_, i32> {
        Checked::Device(self)
    }
}

impl Argument for &Var {
    type Dependence = Variable;
}
impl Real for &Var {
    fn shape(&self) -> Result<Option<(usize, usize)>> {
        Ok(Some((self.rows(), self.cols())))
    }
    fn leaf_at(&self, rows: usize, cols: usize) -> Leaf<'_, Variable> {
        spread(*self, Some((self.rows(), self.cols())), rows, cols)
    }
    fn checked(&self) -> Checked<'_, f64> {
        Checked::Device(Var::value(self))
    }
    fn value(&self) -> Result<Value<'_>> {
        Ok(Value::Var((*self).clone()))
    }
}

impl<O: Differentiable<Scalar = f64>> Argument for Expr<O> {
    type Dependence = O::Dependence;
}
impl<O: Differentiable<Scalar = f64>> Real for Expr<O> {
    fn shape(&self) -> Result<Option<(usize, usize)>> {
        clfuse_ops::Operation::shape(&self.0)
    }
    fn leaf_at(&self, rows: usize, cols: usize) -> Leaf<'_, O::Dependence> {
        let shape = Real::shape(self).ok().flatten();
        spread(self, shape, rows, cols)
    }
    fn checked(&self) -> Checked<'_, f64> {
        Checked::Unchecked
    }
    fn value(&self) -> Result<Value<'_>> {
        let evaluated = <O::Dependence as Dependence>::eval(&self.0)?;
        Value::of::<O::Dependence>(evaluated)
    }
}

/// An argument's value on the device: a matrix (borrowed, or evaluated from
/// a number or a constant expression) or a variable.
#[doc(hidden)]
pub enum Value<'s> {
    /// A constant.
    Matrix(MatrixRef<'s, f64>),
    /// A variable (differentiated).
    Var(Var),
}

impl<'s> Value<'s> {
    /// The result of evaluating an expression of dependence `D`.
    pub(crate) fn of<D: Dependence>(evaluated: D::Evaluated<f64>) -> Result<Value<'s>> {
        if D::VARIABLE {
            Ok(Value::Var(same_type(evaluated)?))
        } else {
            Ok(Value::Matrix(MatrixRef::Owned(same_type(evaluated)?)))
        }
    }
}

/// The arguments of a density, as a tuple: whether any depends on a variable.
pub trait Args {
    /// [`Variable`] if any argument is one, else [`Constant`].
    type Dependence: Dependence;
}

impl<A: Argument> Args for (A,) {
    type Dependence = A::Dependence;
}
impl<A: Argument, B: Argument> Args for (A, B) {
    type Dependence = Both<A::Dependence, B::Dependence>;
}
impl<A: Argument, B: Argument, C: Argument> Args for (A, B, C) {
    type Dependence = Both<A::Dependence, Both<B::Dependence, C::Dependence>>;
}
impl<A: Argument, B: Argument, C: Argument, D: Argument> Args for (A, B, C, D) {
    type Dependence = Both<A::Dependence, Both<B::Dependence, Both<C::Dependence, D::Dependence>>>;
}
impl<A: Argument, B: Argument, C: Argument, D: Argument, E: Argument> Args for (A, B, C, D, E) {
    type Dependence = Both<
        A::Dependence,
        Both<B::Dependence, Both<C::Dependence, Both<D::Dependence, E::Dependence>>>,
    >;
}

/// What a density with arguments `A` (a tuple of their types) evaluates
/// to: a `1 x 1` [`Var`] when any argument is a variable, else a `1 x 1`
/// `MatrixCl<f64>`.
pub type Lp<A> = <<A as Args>::Dependence as Dependence>::Evaluated<f64>;

/// A summed log density, computed by [`eval`](Density::eval). Every
/// function of [`crate::dist`] returns one.
#[must_use = "a density computes nothing until `.eval()`"]
pub struct Density<F>(F);

impl<F> Density<F> {
    pub(crate) fn new(compute: F) -> Self {
        Density(compute)
    }
}

impl<T, F: FnOnce() -> Result<T>> Density<F> {
    /// Checks the arguments, then evaluates the summed log density: a `1 x 1`
    /// [`Var`] (a recorded step of the tape) when any argument is a
    /// variable, else a `1 x 1` `MatrixCl<f64>`. A failed check is an `Err`
    /// naming the function, the argument, the first bad element and its
    /// value; nothing is then recorded.
    ///
    /// ```
    /// use clfuse::prelude::*;
    /// use clfuse::{dist, rev::Var};
    /// let y = MatrixCl::from_slice(2, 1, &[0.5, 1.5])?;
    /// let rate = Var::new(MatrixCl::from_slice(1, 1, &[2.0])?);
    /// let lp: Var = dist::exponential_lpdf(&y, &rate).eval()?; // a variable
    /// let fixed: MatrixCl<f64> = dist::exponential_lpdf(&y, 2.0).eval()?; // a matrix
    /// assert_eq!(lp.value().to_vec()?, fixed.to_vec()?);
    /// let err = dist::exponential_lpdf(&y, -2.0).eval().unwrap_err();
    /// assert_eq!(err.to_string(), "exponential_lpdf: beta[0, 0] is -2, but must be positive and finite");
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn eval(self) -> Result<T> {
        (self.0)()
    }
}

impl<F> std::fmt::Debug for Density<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Density")
    }
}

/// The smallest positive double: `x > 0` is `x >= TINY`.
const TINY: f64 = f64::from_bits(1);

/// A requirement on the elements of a real argument (Stan's argument
/// checks). Each is an interval `[lo, hi]` (an open end is its neighbouring
/// double), so that every check has one predicate, `lo <= x && x <= hi`
/// with the bounds as kernel arguments: the fused check kernel of a density
/// depends only on how many arguments it checks, and densities share it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Req {
    /// Only its shape counts.
    Any,
    NotNan,
    Finite,
    Positive,
    PositiveFinite,
    NonNegative,
    /// In `[0, 1]`.
    Unit,
    /// In `(0, 1)`.
    OpenUnit,
}

impl Req {
    /// The interval, and the words after "must be".
    fn bounds(self) -> (f64, f64, &'static str) {
        let inf = f64::INFINITY;
        match self {
            Req::Any | Req::NotNan => (-inf, inf, "not NaN"),
            Req::Finite => (-f64::MAX, f64::MAX, "finite"),
            Req::Positive => (TINY, inf, "positive"),
            Req::PositiveFinite => (TINY, f64::MAX, "positive and finite"),
            Req::NonNegative => (0.0, inf, "non-negative"),
            Req::Unit => (0.0, 1.0, "in [0, 1]"),
            Req::OpenUnit => (TINY, 1.0f64.next_down(), "in (0, 1)"),
        }
    }
}

/// A requirement on the elements of an integer argument: `[lo, hi]`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum IntReq {
    /// Only its shape counts.
    Any,
    NonNegative,
    /// 0 or 1.
    Binary,
    /// In `[lo, hi]`.
    Range(i32, i32),
}

impl IntReq {
    fn bounds(self) -> (i32, i32, String) {
        match self {
            IntReq::Any => (i32::MIN, i32::MAX, "anything".into()),
            IntReq::NonNegative => (0, i32::MAX, "non-negative".into()),
            IntReq::Binary => (0, 1, "0 or 1".into()),
            IntReq::Range(lo, hi) => (lo, hi, format!("in [{lo}, {hi}]")),
        }
    }
}

/// How one argument must compare with another, element by element: their
/// difference lies in an interval.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Order {
    Greater,
    GreaterEq,
    LessEq,
}

impl Order {
    fn text(self) -> &'static str {
        match self {
            Order::Greater => "greater than",
            Order::GreaterEq => "greater than or equal to",
            Order::LessEq => "less than or equal to",
        }
    }
}

/// The element types of checked arguments.
pub(crate) trait Checkable: clfuse_core::expr::ScalarOperand + Into<f64> {
    /// The interval `a - b` lies in when `a` is `order` `b`.
    fn difference(order: Order) -> (Self, Self);
    fn minus(a: Self, b: Self) -> Self;
}

impl Checkable for f64 {
    fn difference(order: Order) -> (f64, f64) {
        match order {
            Order::Greater => (TINY, f64::INFINITY),
            Order::GreaterEq => (0.0, f64::INFINITY),
            Order::LessEq => (f64::NEG_INFINITY, 0.0),
        }
    }
    fn minus(a: f64, b: f64) -> f64 {
        a - b
    }
}

impl Checkable for i32 {
    fn difference(order: Order) -> (i32, i32) {
        match order {
            Order::Greater => (1, i32::MAX),
            Order::GreaterEq => (0, i32::MAX),
            Order::LessEq => (i32::MIN, 0),
        }
    }
    fn minus(a: i32, b: i32) -> i32 {
        a.saturating_sub(b)
    }
}

/// `lo <= x && x <= hi` (false for NaN): the one predicate of every check.
fn within<'s, T: Checkable, E: Differentiable<Scalar = T> + 's>(
    x: impl Fn() -> Expr<E>,
    lo: T,
    hi: T,
) -> Expr<DynOp<'s, i32, Constant>> {
    boxed(ge(x(), lo).and(le(x(), hi)))
}

/// A device check of one argument: its values (for the message) and the
/// predicate, both of the kernel's shape.
type DeviceCheck<'s> = Check<DynOp<'s, f64, Constant>, DynOp<'s, i32, Constant>>;

/// A check of one argument, made once the shape of the kernel it is an
/// output of is known (`rows x cols`; `n x 1` for a density of length `n`):
/// an error found on the host, or a check for the device kernel.
type Deferred<'s> = Box<dyn FnOnce(usize, usize) -> Result<Option<DeviceCheck<'s>>> + 's>;

/// The checks of one density's arguments, and their shapes (see
/// [`Checks::length`]). Built in argument order; run by [`checked_eval`].
pub(crate) struct Checks<'s> {
    function: &'static str,
    shapes: Vec<(&'static str, Option<(usize, usize)>)>,
    /// The first argument whose shape could not be known.
    unshaped: Option<Error>,
    checks: Vec<Deferred<'s>>,
    /// Checks made by a kernel of their own, before the density's, with
    /// that kernel's shape: vectors of their own length (cutpoints,
    /// coefficients), or a multivariate density's arguments.
    apart: Vec<((usize, usize), Deferred<'s>)>,
}

impl<'s> Checks<'s> {
    pub(crate) fn new(function: &'static str) -> Self {
        Checks {
            function,
            shapes: Vec::new(),
            unshaped: None,
            checks: Vec::new(),
            apart: Vec::new(),
        }
    }

    fn shape(&mut self, name: &'static str, shape: Result<Option<(usize, usize)>>) {
        match shape {
            Ok(shape) => self.shapes.push((name, shape)),
            Err(e) => {
                self.unshaped.get_or_insert(e);
            }
        }
    }

    /// A check of argument `name` whose values are `values`: `host` says
    /// whether it holds when it reads numbers only; else `predicate` (at
    /// the kernel's shape) is checked on the device and `values` reported
    /// where it fails.
    fn push<T: Checkable>(
        &mut self,
        name: &'static str,
        values: Checked<'s, T>,
        requirement: String,
        host: Option<bool>,
        predicate: impl FnOnce(usize, usize) -> Expr<DynOp<'s, i32, Constant>> + 's,
    ) {
        let function = self.function;
        let deferred: Deferred<'s> = match (values, host) {
            (Checked::Unchecked, _) | (_, Some(true)) => return,
            (Checked::Number(x), Some(false)) => {
                let failure = Error::CheckFailed {
                    function: function.to_string(),
                    argument: name.to_string(),
                    row: 0,
                    col: 0,
                    value: x.into(),
                    requirement,
                };
                Box::new(move |_, _| Err(failure))
            }
            _ => Box::new(move |rows, cols| {
                let values = boxed(values.leaf(rows, cols).cast::<f64>());
                let check = check(values, function, name, predicate(rows, cols));
                Ok(Some(check.requiring(&requirement)))
            }),
        };
        self.checks.push(deferred);
    }

    /// Real argument `name` must satisfy `req` at every element.
    pub(crate) fn real<A: Real>(mut self, name: &'static str, arg: &'s A, req: Req) -> Self {
        self.shape(name, arg.shape());
        if !matches!(req, Req::Any) {
            let (lo, hi, text) = req.bounds();
            let values = arg.checked();
            let host = values.number().map(|x| lo <= x && x <= hi);
            self.push(name, values, text.into(), host, move |r, c| {
                within(|| values.leaf(r, c), lo, hi)
            });
        }
        self
    }

    /// Integer argument `name` must satisfy `req` at every element.
    pub(crate) fn int<A: Int>(mut self, name: &'static str, arg: &'s A, req: IntReq) -> Self {
        self.shape(name, arg.shape());
        if matches!(req, IntReq::Any) {
            return self;
        }
        let (lo, hi, text) = req.bounds();
        let values = arg.checked();
        let host = values.number().map(|x| lo <= x && x <= hi);
        self.push(name, values, text, host, move |r, c| {
            within(|| values.leaf(r, c), lo, hi)
        });
        self
    }

    /// Real argument `a` (named `a_name`) must be `order` real argument `b`
    /// (`beta > alpha`). Add both with [`real`](Self::real) too (their own
    /// requirement, or `Req::Any`, gives their shapes).
    pub(crate) fn relation<A: Real, B: Real>(
        mut self,
        a_name: &'static str,
        a: &'s A,
        order: Order,
        b_name: &'static str,
        b: &'s B,
    ) -> Self {
        self.related(a_name, a.checked(), order, b_name, b.checked());
        self
    }

    /// Integer argument `a` must be `order` integer argument `b` (`n ≤ N`).
    pub(crate) fn int_relation<A: Int, B: Int>(
        mut self,
        a_name: &'static str,
        a: &'s A,
        order: Order,
        b_name: &'static str,
        b: &'s B,
    ) -> Self {
        self.related(a_name, a.checked(), order, b_name, b.checked());
        self
    }

    fn related<T: Checkable>(
        &mut self,
        a_name: &'static str,
        a: Checked<'s, T>,
        order: Order,
        b_name: &'static str,
        b: Checked<'s, T>,
    ) {
        let (lo, hi) = T::difference(order);
        let requirement = format!("{} {b_name}", order.text());
        let host = match (a.number(), b.number()) {
            (Some(x), Some(y)) => {
                let d = T::minus(x, y);
                Some(lo <= d && d <= hi)
            }
            _ if matches!(b, Checked::Unchecked) => Some(true),
            _ => None,
        };
        let predicate = move |r, c| within(|| a.leaf(r, c) - b.leaf(r, c), lo, hi);
        self.push(a_name, a, requirement, host, predicate);
    }

    /// Real argument `name` of length `len`, a vector of its own that does
    /// not broadcast against the others (cutpoints, coefficients), must
    /// satisfy `req`; with `ordered`, each element must also exceed the one
    /// before it.
    pub(crate) fn apart<A: Real>(
        mut self,
        name: &'static str,
        arg: &'s A,
        len: usize,
        req: Req,
        ordered: bool,
    ) -> Self {
        let values = arg.checked();
        let (lo, hi, text) = req.bounds();
        let mut checks = std::mem::take(&mut self.checks);
        let host = values.number().map(|x| lo <= x && x <= hi);
        self.push(name, values, text.into(), host, move |r, c| {
            within(|| values.leaf(r, c), lo, hi)
        });
        if ordered {
            // A number is one element: ordered.
            let host = values.number().map(|_| true);
            self.push(
                name,
                values,
                "greater than the element before it".into(),
                host,
                move |n, _| {
                    let row = || row_index(n, 1);
                    let before = indexing(values.leaf(n, 1), select(eq(row(), 0), 0, row() - 1), 0);
                    boxed(eq(row(), 0).or(gt(values.leaf(n, 1), before)))
                },
            );
        }
        std::mem::swap(&mut self.checks, &mut checks);
        self.apart.extend(checks.into_iter().map(|c| ((len, 1), c)));
        self
    }

    /// Real argument `name`, of shape `rows x cols` (its own, or one it
    /// broadcasts to), must satisfy `req` at every element: checked by a
    /// kernel of its own, before the density's (a multivariate density
    /// computes in several steps, and a failure must record none).
    pub(crate) fn ahead<A: Real>(
        mut self,
        name: &'static str,
        arg: &'s A,
        (rows, cols): (usize, usize),
        req: Req,
    ) -> Self {
        let mut inline = std::mem::take(&mut self.checks);
        self = self.real(name, arg, req);
        std::mem::swap(&mut self.checks, &mut inline);
        self.apart
            .extend(inline.into_iter().map(|c| ((rows, cols), c)));
        self
    }

    /// The columns of real argument `name` (`k x cols`) must each sum to 1
    /// within `1e-8` (Stan's simplex tolerance; the elements' signs are
    /// checked apart, with [`real`](Self::real)). Checked by a kernel of its
    /// own, before the density's; a failure names `sum_name`, the column
    /// and its sum.
    pub(crate) fn simplex<A: Real>(
        mut self,
        name: &'static str,
        sum_name: &'static str,
        arg: &'s A,
        cols: usize,
    ) -> Self {
        const TOLERANCE: f64 = 1e-8;
        let requirement = format!("1 (within {TOLERANCE:e}): each column of `{name}` a simplex");
        let function = self.function;
        let deferred: Deferred<'s> = match arg.checked() {
            Checked::Unchecked => return self,
            Checked::Number(x) if (x - 1.0).abs() <= TOLERANCE => return self,
            Checked::Number(x) => {
                let failure = Error::CheckFailed {
                    function: function.to_string(),
                    argument: sum_name.to_string(),
                    row: 0,
                    col: 0,
                    value: x,
                    requirement,
                };
                Box::new(move |_, _| Err(failure))
            }
            Checked::Device(m) => Box::new(move |_, cols| {
                // The column sums as a row (hoisted: the reduction runs first).
                let sums = || optional_broadcast(transpose(rowwise_sum(transpose(m))), 1, cols);
                let ok = boxed(le(fabs(sums() - 1.0), TOLERANCE));
                let check = check(boxed(sums()), function, sum_name, ok);
                Ok(Some(check.requiring(&requirement)))
            }),
        };
        self.apart.push(((1, cols), deferred));
        self
    }

    /// Runs every check now (those made [`ahead`](Self::ahead) or
    /// [`simplex`](Self::simplex), and any failure found on the host).
    pub(crate) fn run(self) -> Result<()> {
        let inline = self.run_ahead(0, 0)?;
        debug_assert!(inline.is_empty(), "checks for a kernel that never runs");
        Ok(())
    }

    /// The density's length: that of its vector arguments (`1` if all are
    /// numbers or `1 x 1`). A matrix that is not a column vector, and
    /// vectors of different lengths, are errors naming the arguments.
    pub(crate) fn length(&mut self) -> Result<usize> {
        if let Some(e) = self.unshaped.take() {
            return Err(e);
        }
        let mut first: Option<(&'static str, usize)> = None;
        for &(name, shape) in &self.shapes {
            let rows = match shape {
                None | Some((1, 1)) => continue,
                Some((r, c)) if r == 0 || c == 0 => 0,
                Some((r, 1)) => r,
                Some((r, c)) => {
                    return Err(Error::InvalidArgument {
                        function: self.function,
                        argument: name,
                        reason: format!("must be a column vector or 1 x 1, is {r} x {c}"),
                    });
                }
            };
            match first {
                None => first = Some((name, rows)),
                Some((other, m)) if m != rows => {
                    return Err(Error::InvalidArgument {
                        function: self.function,
                        argument: name,
                        reason: format!(
                            "has {rows} elements, but `{other}` has {m}: vector arguments must have the same length"
                        ),
                    });
                }
                Some(_) => {}
            }
        }
        Ok(first.map_or(1, |(_, n)| n))
    }

    /// Runs what cannot wait for the density's kernel: a failure found on
    /// the host, then the checks made [`apart`](Self::apart) (one kernel
    /// per shape). Returns the device checks for the density's own kernel,
    /// of shape `rows x cols`.
    fn run_ahead(self, rows: usize, cols: usize) -> Result<Vec<DeviceCheck<'s>>> {
        let mut inline = Vec::new();
        for deferred in self.checks {
            inline.extend(deferred(rows, cols)?);
        }
        let mut groups: Vec<((usize, usize), Vec<DeviceCheck<'s>>)> = Vec::new();
        for (shape, deferred) in self.apart {
            if let Some(c) = deferred(shape.0, shape.1)? {
                match groups.iter_mut().find(|(s, _)| *s == shape) {
                    Some((_, group)) => group.push(c),
                    None => groups.push((shape, vec![c])),
                }
            }
        }
        for ((r, c), group) in groups {
            if r > 0 && c > 0 {
                fuse(CheckSet::new(group))?;
            }
        }
        Ok(inline)
    }
}

impl<'s, T: clfuse_core::expr::ScalarOperand> Checked<'s, T> {
    /// The number, if it is one.
    fn number(self) -> Option<T> {
        match self {
            Checked::Number(x) => Some(x),
            _ => None,
        }
    }

    /// The values as a `rows x cols` matrix (unchecked expressions read as
    /// zeros; they are never checked).
    fn leaf(self, rows: usize, cols: usize) -> Expr<DynOp<'s, T, Constant>> {
        match self {
            Checked::Number(x) => spread(x, None, rows, cols),
            Checked::Device(m) => spread(m, Some((m.rows(), m.cols())), rows, cols),
            Checked::Unchecked => spread(T::default(), None, rows, cols),
        }
    }
}

/// The length of `arg`, a vector of its own (a number is one element): an
/// error unless it is a column vector with at least `min` elements.
pub(crate) fn own_length<A: Real>(
    function: &'static str,
    name: &'static str,
    arg: &A,
    min: usize,
) -> Result<usize> {
    let len = match arg.shape()? {
        None => 1,
        Some((r, 1)) => r,
        Some((r, c)) => {
            return Err(Error::InvalidArgument {
                function,
                argument: name,
                reason: format!("must be a column vector, is {r} x {c}"),
            });
        }
    };
    if len < min {
        return Err(Error::InvalidArgument {
            function,
            argument: name,
            reason: format!("must have at least {min} element(s), has {len}"),
        });
    }
    Ok(len)
}

/// Moves `x` into type `Y`, which is its own type: the summed expression's
/// result type and [`Lp`] are the same type, decided by the same
/// dependences, though the compiler cannot see it in generic code.
pub(crate) fn same_type<X: 'static, Y: 'static>(x: X) -> Result<Y> {
    let mut slot = Some(x);
    (&mut slot as &mut dyn std::any::Any)
        .downcast_mut::<Option<Y>>()
        .and_then(Option::take)
        .ok_or_else(|| Error::InvalidArgument {
            function: "dist",
            argument: "lp",
            reason: "internal: the result's type differs from the declared one".into(),
        })
}

/// Evaluates `Σ lp` (the element-wise log density `lp` of length `n`) to a
/// `1 x 1` result, a recorded step when `A` holds a variable, else a
/// matrix, checking the arguments.
///
/// Numbers are checked on the host, before any kernel. The device checks
/// of the arguments of length `n` are outputs of the density's own
/// forward kernel (each the same interval predicate with its bounds as
/// arguments); a failure returns its `Err` and records nothing. Vectors
/// of another length (cutpoints) are checked by a kernel of their own,
/// first.
pub(crate) fn checked_eval<A: Args, E>(n: usize, lp: Expr<E>, checks: Checks<'_>) -> Result<Lp<A>>
where
    E: Differentiable<Scalar = f64>,
{
    let inline = CheckSet::new(checks.run_ahead(n, 1)?);
    let total = clfuse_ops::rev::eval_colwise_sum_with(lp, &inline)?;
    same_type(total)
}

/// The shape of a matrix argument of a multivariate density (a number is
/// `1 x 1`).
pub(crate) fn matrix_shape<A: Real>(arg: &A) -> Result<(usize, usize)> {
    Ok(arg.shape()?.unwrap_or((1, 1)))
}

/// Checks that argument `name` of a multivariate density is a `rows x 1`
/// vector shared by every column or a `rows x cols` matrix, or a number
/// (the same value everywhere).
pub(crate) fn per_column<A: Real>(
    function: &'static str,
    name: &'static str,
    arg: &A,
    rows: usize,
    cols: usize,
) -> Result<()> {
    match arg.shape()? {
        None => Ok(()),
        Some((r, c)) if r == rows && (c == 1 || c == cols) => Ok(()),
        Some((r, c)) => Err(Error::InvalidArgument {
            function,
            argument: name,
            reason: format!("must be {rows} x 1 or {rows} x {cols}, is {r} x {c}"),
        }),
    }
}

/// Evaluates the sum of every element of `lp` (`rows x cols`) to a `1 x 1`
/// result, like [`checked_eval`]: the checks of shape `rows x cols` are
/// outputs of the kernel that sums the columns; the row of column sums is
/// summed by a second step (only once the checks have passed).
pub(crate) fn checked_eval_all<A: Args, E>(
    rows: usize,
    cols: usize,
    lp: Expr<E>,
    checks: Checks<'_>,
) -> Result<Lp<A>>
where
    E: Differentiable<Scalar = f64>,
{
    let inline = CheckSet::new(checks.run_ahead(rows, cols)?);
    let sums = clfuse_ops::rev::eval_colwise_sum_with(lp, &inline)?;
    if cols == 1 {
        return same_type(sums);
    }
    step_on(
        same_type::<_, Lp<A>>(sums)?,
        |v| rowwise_sum(v).eval(),
        |m| rowwise_sum(m).eval(),
    )
}

/// One more step on a result that is a [`Var`] or a `MatrixCl<f64>`
/// (generic code cannot name which, as in [`same_type`]): `on_var` or
/// `on_matrix`, whichever applies, giving a result of the same type.
fn step_on<X: 'static>(
    x: X,
    on_var: impl FnOnce(&Var) -> Result<Var>,
    on_matrix: impl FnOnce(&MatrixCl<f64>) -> Result<MatrixCl<f64>>,
) -> Result<X> {
    let any: &dyn std::any::Any = &x;
    if let Some(v) = any.downcast_ref::<Var>() {
        return same_type(on_var(v)?);
    }
    if let Some(m) = any.downcast_ref::<MatrixCl<f64>>() {
        return same_type(on_matrix(m)?);
    }
    Err(Error::InvalidArgument {
        function: "dist",
        argument: "lp",
        reason: "internal: a density evaluates to a Var or a MatrixCl<f64>".into(),
    })
}

/// The value of an expression: a matrix, or a variable (a recorded step)
/// when it depends on one.
pub(crate) fn value_of<E: Differentiable<Scalar = f64>>(e: Expr<E>) -> Result<Value<'static>> {
    Value::of::<E::Dependence>(<E::Dependence as Dependence>::eval(e.0)?)
}

/// A density with no term: `0`, a variable (independent: every gradient
/// through it is zero) when `A` holds one.
pub(crate) fn zero<A: Args>() -> Result<Lp<A>> {
    let zero = MatrixCl::<f64>::zeros(1, 1)?;
    if <A::Dependence as Dependence>::VARIABLE {
        same_type(Var::new(zero))
    } else {
        same_type(zero)
    }
}

/// Evaluates `exp(Σ lcdf)`, the product of the element-wise CDFs, from the
/// element-wise log CDF `lcdf` (for the `_cdf` functions): the summed log
/// CDF is evaluated and checked as by [`checked_eval`], then `exp` of that
/// `1 x 1` result is one more element-wise step, recorded when it is a
/// [`Var`]. The product is never formed element by element, so it does not
/// lose precision to a long run of factors, and its gradient is
/// `P · ∂(Σ lcdf)`.
pub(crate) fn checked_eval_product<A: Args, E>(
    n: usize,
    lcdf: Expr<E>,
    checks: Checks<'_>,
) -> Result<Lp<A>>
where
    E: Differentiable<Scalar = f64>,
{
    let total: Lp<A> = checked_eval::<A, E>(n, lcdf, checks)?;
    step_on(total, |v| exp(v).eval(), |m| exp(m).eval())
}
