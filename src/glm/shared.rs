//! What every GLM shares: argument checks and uploads, the diagnosis of a
//! non-finite linear predictor, and the gradients that go through `x`.

use super::{Outcomes, Param};
use clfuse_core::expr::MatrixRef;
use clfuse_core::{ClType, Error, MatrixCl, Result};
use clfuse_kernels::{self as k, Op};
use clfuse_ops::prelude::*;
use clfuse_ops::{Assignable, IntoOperand, Operation, OutputList, RowBlockKind, fuse_then};

/// Name of the derived quantity checked inside each GLM kernel.
pub(crate) const LINEAR_PREDICTOR: &str = "linear predictor";

/// The outcomes as an `n x 1` device vector.
pub(crate) fn outcomes<'a, T: ClType>(
    function: &'static str,
    y: Outcomes<'a, T>,
    n: usize,
) -> Result<MatrixRef<'a, T>> {
    outcomes_named(function, "y", y, n)
}

/// Integer or real data of one value per observation (outcomes, trials),
/// named `argument`, as an `n x 1` device vector.
pub(crate) fn outcomes_named<'a, T: ClType>(
    function: &'static str,
    argument: &'static str,
    y: Outcomes<'a, T>,
    n: usize,
) -> Result<MatrixRef<'a, T>> {
    let m = match y {
        Outcomes::Device(m) => MatrixRef::Borrowed(m),
        Outcomes::Host(s) => {
            if s.len() != n {
                return Err(Error::SizeMismatch {
                    function,
                    argument,
                    expected: n,
                    actual: s.len(),
                });
            }
            MatrixRef::Owned(MatrixCl::from_slice(n, 1, s)?)
        }
    };
    column(function, argument, &m, n)?;
    Ok(m)
}

/// Checks that `m` is an `n x 1` column.
pub(crate) fn column<T: ClType>(
    function: &'static str,
    argument: &'static str,
    m: &MatrixCl<T>,
    n: usize,
) -> Result<()> {
    if (m.rows(), m.cols()) != (n, 1) {
        return Err(Error::InvalidArgument {
            function,
            argument,
            reason: format!("must be a {n} x 1 column, got {} x {}", m.rows(), m.cols()),
        });
    }
    Ok(())
}

/// What a scalar parameter must satisfy (vectors are checked in the kernel).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Requirement {
    Finite,
    PositiveFinite,
}

/// A parameter as a kernel operand: a scalar is a kernel argument (checked
/// here), a vector a `len x 1` column and a device scalar a `1 x 1` matrix
/// (both checked in the GLM's kernel, see [`checked_in_kernel`]).
pub(crate) fn parameter<'a>(
    function: &'static str,
    argument: &'static str,
    p: Param<'a>,
    len: usize,
    requirement: Requirement,
) -> Result<Expr<ScalarOrColumn<'a, f64>>> {
    if let Param::Device(m) = p {
        if (m.rows(), m.cols()) != (1, 1) {
            return Err(Error::InvalidArgument {
                function,
                argument,
                reason: format!(
                    "a device scalar must be 1 x 1, got {} x {}",
                    m.rows(),
                    m.cols()
                ),
            });
        }
        // Checked in the GLM's kernel like a vector: nothing waits for a
        // transfer to the host (a sampler calls this once per gradient).
        return Ok(scalar_or_column(ScalarOrColumn::Broadcast(m, len)));
    }
    match p {
        Param::Scalar(v) => {
            let ok = v.is_finite() && (requirement == Requirement::Finite || v > 0.0);
            if !ok {
                return Err(Error::CheckFailed {
                    function: function.to_string(),
                    argument: argument.to_string(),
                    row: 0,
                    col: 0,
                    value: v,
                    requirement: if requirement == Requirement::Finite {
                        "finite"
                    } else {
                        "positive finite"
                    }
                    .to_string(),
                });
            }
            Ok(scalar_or_column(ScalarOrColumn::Scalar(v)))
        }
        Param::Vector(m) => {
            column(function, argument, m, len)?;
            Ok(scalar_or_column(ScalarOrColumn::Column(m)))
        }
        Param::Device(m) => Ok(scalar_or_column(ScalarOrColumn::Broadcast(m, len))),
    }
}

/// Checks `x` (`n x p`) against `beta` (`p x cols`).
pub(crate) fn design(
    function: &'static str,
    x: &MatrixCl<f64>,
    beta: &MatrixCl<f64>,
    beta_cols: usize,
) -> Result<()> {
    if beta.rows() != x.cols() || beta.cols() != beta_cols {
        return Err(Error::InvalidArgument {
            function,
            argument: "beta",
            reason: format!(
                "must be {} x {beta_cols} for x of {} x {}, got {} x {}",
                x.cols(),
                x.rows(),
                x.cols(),
                beta.rows(),
                beta.cols()
            ),
        });
    }
    Ok(())
}

/// A scalar parameter as a `1 x 1` device matrix for a vector parameter's
/// place; `true` when the argument is a vector.
pub(crate) fn is_vector(p: &Param<'_>) -> bool {
    matches!(p, Param::Vector(_))
}

/// Whether the GLM's kernel checks this parameter (a vector or a device
/// scalar; a host number is checked before the launch).
pub(crate) fn checked_in_kernel(p: &Param<'_>) -> bool {
    !matches!(p, Param::Scalar(_))
}

/// The GLM kernel found a non-finite linear predictor: name the argument
/// responsible (x, then beta) when one holds a non-finite value; otherwise
/// the predictor itself overflowed and the original error stands.
pub(crate) fn diagnose(
    function: &'static str,
    x: &MatrixCl<f64>,
    beta: &MatrixCl<f64>,
    error: Error,
) -> Error {
    let predictor_failed =
        matches!(&error, Error::CheckFailed { argument, .. } if argument == LINEAR_PREDICTOR);
    if !predictor_failed {
        return error;
    }
    if let Err(e) = check_finite(x, function, "x").run() {
        return e;
    }
    if let Err(e) = check_finite(beta, function, "beta").run() {
        return e;
    }
    error
}

/// `xᵀ·d` for a derivative column `d` (`n x 1`), as a `p x 1` column: a
/// second pass over `x`, by the fused `transpose_vector_multiply` when the
/// kernel can stage rows of `x` in registers (faster than the leaf on an
/// H200), else by the row-vector × matrix leaf (which takes the column as
/// the row `dᵀ`).
pub(crate) fn x_transpose_times(x: &MatrixCl<f64>, d: &MatrixCl<f64>) -> Result<MatrixCl<f64>> {
    let _scope = clfuse_core::profile_scope("glm: xᵀ·d_eta");
    if clfuse_ops::staged_row_team(x.cols(), RowBlockKind::ProductAlone)?.is_some() {
        return transpose_vector_multiply(x, d).eval();
    }
    k::row_vector_matrix_multiply(d, x)?.reshape(x.cols(), 1)
}

/// Whether the GLM's kernel computes beta's gradient `xᵀ·d_eta` itself,
/// reading `x` once for the linear predictor and the gradient (see
/// [`clfuse_ops::one_pass_worthwhile`]); otherwise a second pass reads `x`
/// again after the kernel (see [`x_transpose_times`]).
pub(crate) fn beta_gradient_in_kernel(x: &MatrixCl<f64>) -> Result<bool> {
    clfuse_ops::one_pass_worthwhile(x)
}

/// `d·betaᵀ` (`n x p`), the gradient with respect to `x`.
pub(crate) fn outer(d: &MatrixCl<f64>, beta: &MatrixCl<f64>) -> Result<MatrixCl<f64>> {
    k::multiply_transposed(d, Op::N, beta, Op::T)
}

/// An output target, allocated only when it will be written.
pub(crate) fn target(rows: usize, cols: usize, wanted: bool) -> Result<MatrixCl<f64>> {
    if wanted {
        MatrixCl::uninitialized(rows, cols)
    } else {
        MatrixCl::uninitialized(0, 0)
    }
}

/// The gradients that go through `x` and `alpha`, from the derivative with
/// respect to the linear predictor (`d_eta`, `n x 1`).
pub(crate) struct Finish<'a> {
    pub x: &'a MatrixCl<f64>,
    pub beta: &'a MatrixCl<f64>,
    pub wrt: super::Wrt,
    pub alpha_is_vector: bool,
    /// The GLM's kernel computes `xᵀ·d_eta` itself (no leaf afterwards).
    pub beta_in_kernel: bool,
}

impl Finish<'_> {
    /// `xᵀ·d_eta` when the beta gradient is asked for: queued from inside
    /// the GLM's `fuse_then`, so it runs while the host checks the kernel's
    /// flags and sums its value.
    pub fn beta_gradient(&self, d_eta: &MatrixCl<f64>) -> Result<Option<MatrixCl<f64>>> {
        if self.wrt.beta && !self.beta_in_kernel {
            x_transpose_times(self.x, d_eta).map(Some)
        } else {
            Ok(None)
        }
    }

    /// Assembles the output: `d_alpha` is `d_eta` itself for a vector
    /// intercept and the kernel's sum for a scalar one.
    pub fn output(
        self,
        value: f64,
        d_eta: MatrixCl<f64>,
        d_alpha_sum: MatrixCl<f64>,
        d_beta: Option<MatrixCl<f64>>,
        d_aux: Option<MatrixCl<f64>>,
    ) -> Result<super::GlmOutput> {
        let d_x = if self.wrt.x {
            Some(outer(&d_eta, self.beta)?)
        } else {
            None
        };
        let d_alpha = match (self.wrt.alpha, self.alpha_is_vector) {
            (false, _) => None,
            (true, true) => Some(d_eta),
            (true, false) => Some(d_alpha_sum),
        };
        Ok(super::GlmOutput {
            value,
            d_alpha,
            d_beta,
            d_x,
            d_aux,
            prefetched: Default::default(),
        })
    }

    /// Whether the kernel must write `d_eta`.
    pub fn needs_d_eta(&self) -> bool {
        (self.wrt.beta && !self.beta_in_kernel)
            || self.wrt.x
            || (self.wrt.alpha && self.alpha_is_vector)
    }
}

/// 1.0 when a term is kept, 0.0 when `propto` drops it (a kernel argument,
/// so one kernel serves both).
pub(crate) fn keep(kept: bool) -> f64 {
    if kept { 1.0 } else { 0.0 }
}

/// The kernel's sum of the terms (a full reduction, finished on the host)
/// plus a host-side constant, or 0 when `propto` drops every term because no
/// gradient is asked for.
pub(crate) fn value(total: Option<f64>, options: &super::GlmOptions, constant: f64) -> Result<f64> {
    if options.propto && !options.wrt.any_gradient() {
        return Ok(0.0);
    }
    let total = total.ok_or_else(|| Error::InvalidArgument {
        function: "glm",
        argument: "value",
        reason: "internal: the kernel produced no sum".into(),
    })?;
    Ok(total + constant)
}

/// What the GLMs with one linear predictor `η = x·beta + alpha` per
/// observation share (normal, Bernoulli, binomial, Poisson, negative binomial): the
/// checked and uploaded outcomes and intercept, and the kernel's targets.
pub(crate) struct LinearGlm<'a, T: ClType> {
    pub y: MatrixRef<'a, T>,
    pub alpha: Expr<ScalarOrColumn<'a, f64>>,
    pub alpha_is_vector: bool,
    /// The intercept is read from the device (a column or a `1 x 1`
    /// matrix), so the kernel checks it.
    pub alpha_on_device: bool,
    /// d/dη (`n x 1`), when a gradient goes through it.
    pub d_eta: MatrixCl<f64>,
    /// `xᵀ·d/dη` (`p x 1`) when the GLM's kernel computes it (x read once).
    d_beta: Option<MatrixCl<f64>>,
    /// Σ d/dη (`1 x 1`), for a scalar intercept's gradient.
    pub d_alpha_sum: MatrixCl<f64>,
    finish: Finish<'a>,
    options: super::GlmOptions,
    /// The gradients' read-backs queued by `run` ([`GlmOptions::prefetch`](super::GlmOptions::prefetch)).
    prefetched: std::cell::RefCell<super::Prefetched>,
}

impl<'a, T: ClType> LinearGlm<'a, T> {
    pub fn new(
        function: &'static str,
        y: Outcomes<'a, T>,
        x: &'a MatrixCl<f64>,
        alpha: Param<'a>,
        beta: &'a MatrixCl<f64>,
        options: &super::GlmOptions,
    ) -> Result<Self> {
        Self::with_outcomes_named(function, "y", y, x, alpha, beta, options)
    }

    /// [`new`](Self::new) with the outcomes named `y_name` in errors
    /// (the binomial's successes `n`).
    pub fn with_outcomes_named(
        function: &'static str,
        y_name: &'static str,
        y: Outcomes<'a, T>,
        x: &'a MatrixCl<f64>,
        alpha: Param<'a>,
        beta: &'a MatrixCl<f64>,
        options: &super::GlmOptions,
    ) -> Result<Self> {
        let n = x.rows();
        let y = outcomes_named(function, y_name, y, n)?;
        design(function, x, beta, 1)?;
        let alpha_is_vector = is_vector(&alpha);
        let alpha_on_device = !matches!(alpha, Param::Scalar(_));
        let alpha = parameter(function, "alpha", alpha, n, Requirement::Finite)?;
        let beta_in_kernel = options.wrt.beta && beta_gradient_in_kernel(x)?;
        let finish = Finish {
            x,
            beta,
            wrt: options.wrt,
            alpha_is_vector,
            beta_in_kernel,
        };
        Ok(LinearGlm {
            y,
            alpha,
            alpha_is_vector,
            alpha_on_device,
            d_eta: target(n, 1, finish.needs_d_eta())?,
            d_beta: if beta_in_kernel {
                Some(MatrixCl::uninitialized(x.cols(), 1)?)
            } else {
                None
            },
            d_alpha_sum: target(1, 1, options.wrt.alpha && !alpha_is_vector)?,
            finish,
            options: *options,
            prefetched: Default::default(),
        })
    }

    /// Whether the kernel must write `d_eta`.
    pub fn writes_d_eta(&self) -> bool {
        self.finish.needs_d_eta()
    }

    /// The kernel outputs that carry `d_eta` (the derivative with respect
    /// to the linear predictor) towards the gradients, each only when it is
    /// needed: `d_eta` itself, its sum (a scalar intercept's gradient) and
    /// `xᵀ·d_eta` (beta's gradient, when the kernel computes it).
    pub fn gradient_outputs<'s, D>(&'s self, d_eta: D) -> impl OutputList + 's
    where
        D: IntoOperand + Copy + 's,
        D::Operand: Operation<Scalar = f64> + Assignable<&'s MatrixCl<f64>>,
    {
        // A disabled output's target is never bound: any matrix serves.
        let unused = &self.d_alpha_sum;
        (
            optional(output(&self.d_eta, d_eta), self.writes_d_eta()),
            optional(
                output(&self.d_alpha_sum, colwise_sum(d_eta)),
                self.sums_alpha(),
            ),
            optional(
                output(
                    self.d_beta.as_ref().unwrap_or(unused),
                    transpose_vector_multiply(self.finish.x, d_eta),
                ),
                self.d_beta.is_some(),
            ),
        )
    }

    /// Whether the kernel must sum `d_eta` (a scalar intercept's gradient).
    pub fn sums_alpha(&self) -> bool {
        self.options.wrt.alpha && !self.alpha_is_vector
    }

    /// Runs the GLM's kernel (`outputs`) with `xᵀ·d_eta` queued before the
    /// host waits for the kernel's read-backs, and returns that beta
    /// gradient (when asked for); a non-finite linear predictor is traced
    /// back to its argument.
    pub fn run<L: OutputList>(
        &self,
        function: &'static str,
        outputs: L,
    ) -> Result<Option<MatrixCl<f64>>> {
        let _scope = clfuse_core::profile_scope("glm kernel");
        let mut d_beta = None;
        fuse_then(outputs, || {
            d_beta = self.finish.beta_gradient(&self.d_eta)?;
            if self.options.prefetch {
                self.prefetch(d_beta.as_ref())?;
            }
            Ok(())
        })
        .map_err(|e| diagnose(function, self.finish.x, self.finish.beta, e))?;
        Ok(d_beta)
    }

    /// Queues the read-backs of the intercept's gradient and of beta's
    /// (`d_beta` when a second pass computes it, else the kernel's own).
    fn prefetch(&self, d_beta: Option<&MatrixCl<f64>>) -> Result<()> {
        let wrt = self.options.wrt;
        let d_alpha = match (wrt.alpha, self.alpha_is_vector) {
            (false, _) => None,
            (true, true) => Some(&self.d_eta),
            (true, false) => Some(&self.d_alpha_sum),
        };
        let d_beta = d_beta.or(self.d_beta.as_ref()).filter(|_| wrt.beta);
        let mut prefetched = self.prefetched.borrow_mut();
        prefetched.d_alpha = d_alpha.map(MatrixCl::read_later).transpose()?;
        prefetched.d_beta = d_beta.map(MatrixCl::read_later).transpose()?;
        Ok(())
    }

    /// The value (the kernel's sum `total`, with `constant` added on the
    /// host) and the gradients.
    pub fn output(
        self,
        total: Option<f64>,
        d_beta: Option<MatrixCl<f64>>,
        constant: f64,
        d_aux: Option<MatrixCl<f64>>,
    ) -> Result<super::GlmOutput> {
        let value = value(total, &self.options, constant)?;
        let d_beta = d_beta.or(self.d_beta);
        let mut out = self
            .finish
            .output(value, self.d_eta, self.d_alpha_sum, d_beta, d_aux)?;
        out.prefetched = self.prefetched.into_inner();
        Ok(out)
    }
}
