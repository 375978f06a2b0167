//! What a parameter is constrained to, and how many unconstrained values
//! each constraint needs for a given shape (Stan's reference manual,
//! "Constraint transforms").

use super::Param;
use clfuse_core::{Error, MatrixCl, Result};

/// A bound of a constraint (`<lower = ...>`, `offset = ...`): a number, data
/// on the device (`1 x 1`, or the parameter's own shape, element by
/// element), or an earlier parameter's constrained value (Stan allows
/// parameter-dependent bounds), read on the device.
///
/// ```
/// use clfuse::params::Bound;
/// let b: Bound = 0.0.into();
/// assert!(matches!(b, Bound::Number(v) if v == 0.0));
/// ```
#[derive(Debug)]
pub enum Bound {
    /// A number; `±∞` turns the bound off as in Stan.
    Number(f64),
    /// Data on the device (a shared handle to it).
    Data(MatrixCl<f64>),
    /// An earlier parameter's constrained value (`1 x 1`, or this
    /// parameter's shape).
    Param(Param),
}

impl From<f64> for Bound {
    fn from(v: f64) -> Self {
        Bound::Number(v)
    }
}

impl From<&MatrixCl<f64>> for Bound {
    fn from(m: &MatrixCl<f64>) -> Self {
        Bound::Data(m.share())
    }
}

impl From<Param> for Bound {
    fn from(p: Param) -> Self {
        Bound::Param(p)
    }
}

/// A parameter's constraint, with Stan's definitions of each transform, its
/// log-absolute-Jacobian and its inverse.
///
/// ```
/// use clfuse::params::Constraint;
/// let sigma = Constraint::lower(0.0);
/// let rho = Constraint::lower_upper(-1.0, 1.0);
/// assert_eq!(Constraint::Simplex.free_len(4, 1), Some(3));
/// # let _ = (sigma, rho);
/// ```
#[derive(Debug)]
pub enum Constraint {
    /// No constraint: the value is the unconstrained one.
    Unconstrained,
    /// `<lower = L>`: `L + exp(x)`, log-Jacobian `x`.
    Lower(Bound),
    /// `<upper = U>`: `U - exp(x)`, log-Jacobian `x`.
    Upper(Bound),
    /// `<lower = L, upper = U>`: `L + (U - L) inv_logit(x)`, log-Jacobian
    /// `log(U - L) + log inv_logit(x) + log(1 - inv_logit(x))`.
    LowerUpper(Bound, Bound),
    /// `<offset = μ, multiplier = σ>`: `μ + σ x`, log-Jacobian `log σ`.
    OffsetMultiplier(Bound, Bound),
    /// `ordered[K]`: `y₁ = x₁`, `y_k = y_{k-1} + exp(x_k)`.
    Ordered,
    /// `positive_ordered[K]`: `y_k = y_{k-1} + exp(x_k)`, `y₀ = 0`.
    PositiveOrdered,
    /// `simplex[K]` from `K - 1` values, by stick breaking.
    Simplex,
    /// `unit_vector[K]`: `x / ‖x‖`, log density term `-‖x‖² / 2`.
    UnitVector,
    /// `sum_to_zero_vector[K]` from `K - 1` values (the isometric
    /// transform; no Jacobian term).
    SumToZero,
    /// `cholesky_factor_corr[K]` from `K (K - 1) / 2` canonical partial
    /// correlations (`tanh` of the values, row by row).
    CholeskyFactorCorr,
    /// `cholesky_factor_cov[M, N]` (`M >= N`): lower triangle row by row,
    /// the diagonal through `exp`.
    CholeskyFactorCov,
    /// `corr_matrix[K]`: `L Lᵀ` of a Cholesky factor of a correlation
    /// matrix built from `K (K - 1) / 2` partial correlations, column by
    /// column.
    CorrMatrix,
    /// `cov_matrix[K]`: `L Lᵀ` of a Cholesky factor with a positive
    /// diagonal from `K (K + 1) / 2` values.
    CovMatrix,
}

impl Constraint {
    /// `<lower = bound>`.
    ///
    /// ```
    /// use clfuse::params::Constraint;
    /// assert!(matches!(Constraint::lower(0.0), Constraint::Lower(_)));
    /// ```
    pub fn lower(bound: impl Into<Bound>) -> Self {
        Constraint::Lower(bound.into())
    }

    /// `<upper = bound>`.
    ///
    /// ```
    /// use clfuse::params::Constraint;
    /// assert!(matches!(Constraint::upper(1.0), Constraint::Upper(_)));
    /// ```
    pub fn upper(bound: impl Into<Bound>) -> Self {
        Constraint::Upper(bound.into())
    }

    /// `<lower = lower, upper = upper>`.
    ///
    /// ```
    /// use clfuse::params::Constraint;
    /// assert!(matches!(Constraint::lower_upper(0.0, 1.0), Constraint::LowerUpper(..)));
    /// ```
    pub fn lower_upper(lower: impl Into<Bound>, upper: impl Into<Bound>) -> Self {
        Constraint::LowerUpper(lower.into(), upper.into())
    }

    /// `<offset = offset, multiplier = multiplier>` (non-centred
    /// parameterisations).
    ///
    /// ```
    /// use clfuse::params::Constraint;
    /// assert!(matches!(Constraint::offset_multiplier(0.0, 2.0), Constraint::OffsetMultiplier(..)));
    /// ```
    pub fn offset_multiplier(offset: impl Into<Bound>, multiplier: impl Into<Bound>) -> Self {
        Constraint::OffsetMultiplier(offset.into(), multiplier.into())
    }

    /// Stan's name of the constraint, for messages.
    ///
    /// ```
    /// use clfuse::params::Constraint;
    /// assert_eq!(Constraint::CholeskyFactorCorr.name(), "cholesky_factor_corr");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            Constraint::Unconstrained => "unconstrained",
            Constraint::Lower(_) => "lower",
            Constraint::Upper(_) => "upper",
            Constraint::LowerUpper(..) => "lower-upper",
            Constraint::OffsetMultiplier(..) => "offset-multiplier",
            Constraint::Ordered => "ordered",
            Constraint::PositiveOrdered => "positive_ordered",
            Constraint::Simplex => "simplex",
            Constraint::UnitVector => "unit_vector",
            Constraint::SumToZero => "sum_to_zero_vector",
            Constraint::CholeskyFactorCorr => "cholesky_factor_corr",
            Constraint::CholeskyFactorCov => "cholesky_factor_cov",
            Constraint::CorrMatrix => "corr_matrix",
            Constraint::CovMatrix => "cov_matrix",
        }
    }

    /// How many unconstrained values a `rows x cols` parameter with this
    /// constraint takes, or `None` when the constraint does not apply to
    /// that shape (a simplex must be a column vector, a correlation matrix
    /// square, ...).
    ///
    /// ```
    /// use clfuse::params::Constraint;
    /// assert_eq!(Constraint::CorrMatrix.free_len(3, 3), Some(3));
    /// assert_eq!(Constraint::CholeskyFactorCov.free_len(4, 2), Some(7));
    /// assert_eq!(Constraint::Ordered.free_len(2, 2), None);
    /// ```
    pub fn free_len(&self, rows: usize, cols: usize) -> Option<usize> {
        let vector = cols == 1;
        let square = rows == cols;
        match self {
            Constraint::Unconstrained
            | Constraint::Lower(_)
            | Constraint::Upper(_)
            | Constraint::LowerUpper(..)
            | Constraint::OffsetMultiplier(..) => Some(rows * cols),
            Constraint::Ordered | Constraint::PositiveOrdered => vector.then_some(rows),
            Constraint::UnitVector => (vector && rows >= 1).then_some(rows),
            Constraint::Simplex | Constraint::SumToZero => (vector && rows >= 1).then(|| rows - 1),
            Constraint::CholeskyFactorCorr | Constraint::CorrMatrix => {
                square.then(|| rows * rows.saturating_sub(1) / 2)
            }
            Constraint::CovMatrix => square.then(|| rows * (rows + 1) / 2),
            Constraint::CholeskyFactorCov => {
                (rows >= cols).then(|| cols * (cols + 1) / 2 + (rows - cols) * cols)
            }
        }
    }

    /// The bounds this constraint reads, in order.
    pub(crate) fn bounds(&self) -> Vec<&Bound> {
        match self {
            Constraint::Lower(b) | Constraint::Upper(b) => vec![b],
            Constraint::LowerUpper(a, b) | Constraint::OffsetMultiplier(a, b) => vec![a, b],
            _ => Vec::new(),
        }
    }

    /// Checks what can be checked when the parameter is declared: number
    /// bounds in order, a positive multiplier, bound shapes.
    pub(crate) fn validate(&self, name: &str, rows: usize, cols: usize) -> Result<()> {
        let invalid = |reason: String| Error::InvalidArgument {
            function: "Parameters::add",
            argument: "constraint",
            reason: format!("parameter `{name}` ({}): {reason}", self.name()),
        };
        for bound in self.bounds() {
            match bound {
                Bound::Number(v) if v.is_nan() => return Err(invalid("a bound is NaN".into())),
                Bound::Data(m)
                    if !matches!((m.rows(), m.cols()), (1, 1))
                        && (m.rows(), m.cols()) != (rows, cols) =>
                {
                    return Err(invalid(format!(
                        "a data bound is {} x {}, but must be 1 x 1 or {rows} x {cols}",
                        m.rows(),
                        m.cols()
                    )));
                }
                _ => {}
            }
        }
        match self {
            Constraint::LowerUpper(Bound::Number(l), Bound::Number(u)) if l >= u => Err(invalid(
                format!("the lower bound {l} is not below the upper bound {u}"),
            )),
            Constraint::OffsetMultiplier(Bound::Number(o), _) if !o.is_finite() => {
                Err(invalid(format!("the offset {o} is not finite")))
            }
            Constraint::OffsetMultiplier(_, Bound::Number(s)) if !(s.is_finite() && *s > 0.0) => {
                Err(invalid(format!(
                    "the multiplier {s} is not positive finite"
                )))
            }
            _ => Ok(()),
        }
    }
}
