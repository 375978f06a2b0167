//! A model's parameters as a Stan program declares them: by name, shape
//! and constraint, read from one unconstrained column on the device.
//!
//! [`Parameters`] lays the parameters out in the sampler's unconstrained
//! column `theta` (in declaration order, each a contiguous block). For one
//! `theta`, [`Parameters::constrain`] builds each parameter's value on the
//! constrained scale as a [`Var`] — lower and upper bounds, offset and
//! multiplier, ordered, positive ordered, simplex, unit vector, sum-to-zero
//! vector, Cholesky factors of correlation and covariance matrices,
//! correlation and covariance matrices, with Stan's transforms — and the
//! sum of their log-absolute-Jacobians, all as fused kernels on the device
//! (no value goes to the host). [`Constrained::log_density`] adds that sum
//! to a model's log density. On the host, [`Parameters::constrain_host`]
//! maps a draw to named constrained values and
//! [`Parameters::unconstrain`] maps user-given initial values back.
//!
//! ```
//! use clfuse::params::{Constraint, Parameters};
//! use clfuse::prelude::*;
//! use clfuse::rev::{self, Var};
//!
//! let mut p = Parameters::new();
//! let mu = p.real("mu", Constraint::Unconstrained)?;
//! let sigma = p.real("sigma", Constraint::lower(0.0))?;
//! assert_eq!(p.dim(), 2);
//!
//! // One evaluation at θ = (1, 0): mu = 1, sigma = exp(0) = 1.
//! let theta = Var::new(MatrixCl::from_slice(2, 1, &[1.0, 0.0])?);
//! let model = || {
//!     let v = p.constrain(&theta)?;
//!     v.log_density(clfuse::dist::normal_lpdf(0.5, &v[mu], &v[sigma]).eval()?)
//! };
//! let mut gradient = [0.0; 2];
//! let value = rev::value_and_grad_to_host(&theta, model, &mut gradient)?;
//! // log N(0.5 | 1, 1) + log|d sigma / d log sigma| (= 0 here)
//! assert!((value - (-0.125 - 0.918_938_533_204_672_8)).abs() < 1e-12);
//! // d/dmu = 0.5 - 1; d/dlog sigma = (z² - 1) + 1 (the Jacobian's).
//! assert!((gradient[0] + 0.5).abs() < 1e-12 && (gradient[1] - 0.25).abs() < 1e-12);
//! # Ok::<(), clfuse::Error>(())
//! ```

mod constraint;
mod device;
mod host;

pub use constraint::{Bound, Constraint};

use clfuse_core::{Error, MatrixCl, Result};
use clfuse_ops::prelude::*;
use clfuse_ops::rev::Var;
use clfuse_ops::rev::Variable;
use clfuse_ops::{DynOp, boxed};
use device::{Block, DeviceBound, LogJacobian};
use host::HostBound;

/// A handle to one declared parameter (index it into [`Constrained`]).
///
/// ```
/// use clfuse::params::{Constraint, Parameters};
/// let mut p = Parameters::new();
/// let a = p.real("a", Constraint::Unconstrained)?;
/// assert_eq!(p.name(a), "a");
/// # Ok::<(), clfuse::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Param(usize);

/// One declared parameter.
#[derive(Debug)]
struct Entry {
    name: String,
    rows: usize,
    cols: usize,
    constraint: Constraint,
    offset: usize,
    len: usize,
    /// Where a triangular transform reads `theta` (made once, here).
    positions: Option<MatrixCl<i32>>,
    /// The host's copy of each data bound (read once, for the host maps).
    host_data: Vec<Option<Vec<f64>>>,
}

/// A model's parameter block: names, shapes and constraints, laid out in
/// one unconstrained column.
///
/// ```
/// use clfuse::params::{Constraint, Parameters};
/// let mut p = Parameters::new();
/// p.vector("theta", 3, Constraint::Simplex)?;
/// p.matrix("L", 3, 3, Constraint::CholeskyFactorCorr)?;
/// assert_eq!(p.dim(), 2 + 3);
/// assert_eq!(p.column_names()[0], "theta[1]");
/// # Ok::<(), clfuse::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct Parameters {
    entries: Vec<Entry>,
    dim: usize,
}

impl Parameters {
    /// An empty parameter block.
    ///
    /// ```
    /// assert_eq!(clfuse::params::Parameters::new().dim(), 0);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares a `rows x cols` parameter. The name must be new; the
    /// constraint must fit the shape (vectors for `ordered`, `simplex`, ...;
    /// square matrices for correlation and covariance matrices) and its
    /// bounds must be in order (numbers) and of the parameter's shape or
    /// `1 x 1` (data, earlier parameters).
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// let mut p = Parameters::new();
    /// let tau = p.add("tau", 1, 1, Constraint::lower(0.0))?;
    /// // A bound from an earlier parameter: theta > tau.
    /// p.add("theta", 4, 1, Constraint::lower(tau))?;
    /// assert!(p.add("tau", 1, 1, Constraint::Unconstrained).is_err());
    /// assert!(p.add("o", 2, 2, Constraint::Ordered).is_err());
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn add(
        &mut self,
        name: &str,
        rows: usize,
        cols: usize,
        constraint: Constraint,
    ) -> Result<Param> {
        let invalid = |argument: &'static str, reason: String| Error::InvalidArgument {
            function: "Parameters::add",
            argument,
            reason,
        };
        if name.is_empty() || self.entries.iter().any(|e| e.name == name) {
            return Err(invalid(
                "name",
                format!("`{name}` is empty or already declared"),
            ));
        }
        let len = constraint.free_len(rows, cols).ok_or_else(|| {
            invalid(
                "constraint",
                format!(
                    "parameter `{name}`: {} does not apply to a {rows} x {cols} parameter",
                    constraint.name()
                ),
            )
        })?;
        constraint.validate(name, rows, cols)?;
        for bound in constraint.bounds() {
            if let Bound::Param(p) = bound {
                let e = self.entries.get(p.0).ok_or_else(|| {
                    invalid(
                        "constraint",
                        format!("parameter `{name}`: a bound names an undeclared parameter"),
                    )
                })?;
                if (e.rows, e.cols) != (1, 1) && (e.rows, e.cols) != (rows, cols) {
                    return Err(invalid(
                        "constraint",
                        format!(
                            "parameter `{name}`: its bound `{}` is {} x {}, but must be 1 x 1 or {rows} x {cols}",
                            e.name, e.rows, e.cols
                        ),
                    ));
                }
            }
        }
        let positions = if len > 0 {
            device::triangle_positions(&constraint, rows, cols, self.dim)?
        } else {
            None
        };
        let host_data = constraint
            .bounds()
            .into_iter()
            .map(|b| match b {
                Bound::Data(m) => m.to_vec().map(Some),
                _ => Ok(None),
            })
            .collect::<Result<_>>()?;
        self.entries.push(Entry {
            name: name.to_string(),
            rows,
            cols,
            constraint,
            offset: self.dim,
            len,
            positions,
            host_data,
        });
        self.dim += len;
        Ok(Param(self.entries.len() - 1))
    }

    /// Declares a scalar (`1 x 1`) parameter.
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// let mut p = Parameters::new();
    /// p.real("rho", Constraint::lower_upper(-1.0, 1.0))?;
    /// assert_eq!(p.dim(), 1);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn real(&mut self, name: &str, constraint: Constraint) -> Result<Param> {
        self.add(name, 1, 1, constraint)
    }

    /// Declares a column vector of `n` elements.
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// let mut p = Parameters::new();
    /// p.vector("c", 4, Constraint::Ordered)?;
    /// assert_eq!(p.dim(), 4);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn vector(&mut self, name: &str, n: usize, constraint: Constraint) -> Result<Param> {
        self.add(name, n, 1, constraint)
    }

    /// Declares a `rows x cols` matrix.
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// let mut p = Parameters::new();
    /// p.matrix("Sigma", 3, 3, Constraint::CovMatrix)?;
    /// assert_eq!(p.dim(), 6);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn matrix(
        &mut self,
        name: &str,
        rows: usize,
        cols: usize,
        constraint: Constraint,
    ) -> Result<Param> {
        self.add(name, rows, cols, constraint)
    }

    /// The number of unconstrained values (the sampler's dimension).
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// let mut p = Parameters::new();
    /// p.matrix("Omega", 4, 4, Constraint::CorrMatrix)?;
    /// assert_eq!(p.dim(), 6);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// A parameter's name.
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// let mut p = Parameters::new();
    /// let s = p.real("s", Constraint::lower(0.0))?;
    /// assert_eq!(p.name(s), "s");
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn name(&self, p: Param) -> &str {
        self.entries.get(p.0).map_or("", |e| e.name.as_str())
    }

    /// A parameter by name.
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// let mut p = Parameters::new();
    /// let s = p.real("s", Constraint::lower(0.0))?;
    /// assert_eq!(p.find("s"), Some(s));
    /// assert_eq!(p.find("t"), None);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn find(&self, name: &str) -> Option<Param> {
        self.entries.iter().position(|e| e.name == name).map(Param)
    }

    /// The constrained values' column names, Stan style and 1-based:
    /// `mu`, `theta[2]`, `L[2,1]` (matrices column-major).
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// let mut p = Parameters::new();
    /// p.real("mu", Constraint::Unconstrained)?;
    /// p.matrix("S", 2, 2, Constraint::CovMatrix)?;
    /// assert_eq!(p.column_names(), ["mu", "S[1,1]", "S[2,1]", "S[1,2]", "S[2,2]"]);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn column_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for e in &self.entries {
            for j in 0..e.cols {
                for i in 0..e.rows {
                    names.push(match (e.rows, e.cols) {
                        (1, 1) => e.name.clone(),
                        (_, 1) => format!("{}[{}]", e.name, i + 1),
                        _ => format!("{}[{},{}]", e.name, i + 1, j + 1),
                    });
                }
            }
        }
        names
    }

    fn check_theta(&self, function: &'static str, len: usize) -> Result<()> {
        if len != self.dim {
            return Err(Error::InvalidArgument {
                function,
                argument: "theta",
                reason: format!("has {len} values for {} unconstrained parameters", self.dim),
            });
        }
        Ok(())
    }

    /// Every parameter on the constrained scale for the unconstrained
    /// column `theta` (`dim x 1`), and the sum of their
    /// log-absolute-Jacobians, on the device. Parameter-dependent bounds
    /// read the earlier parameters' constrained values.
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// use clfuse::prelude::*;
    /// use clfuse::rev::Var;
    /// let mut p = Parameters::new();
    /// let c = p.vector("c", 3, Constraint::Ordered)?;
    /// let theta = Var::new(MatrixCl::from_slice(3, 1, &[-1.0, 0.0, 0.0])?);
    /// let v = p.constrain(&theta)?;
    /// assert_eq!(v[c].value().to_vec()?, vec![-1.0, 0.0, 1.0]);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn constrain(&self, theta: &Var) -> Result<Constrained> {
        self.check_theta("Parameters::constrain", theta.rows())?;
        let mut values: Vec<Var> = Vec::with_capacity(self.entries.len());
        let mut log_jacobians = Vec::new();
        for e in &self.entries {
            let bounds: Vec<DeviceBound<'_>> = e
                .constraint
                .bounds()
                .into_iter()
                .map(|b| match b {
                    Bound::Number(v) => DeviceBound::Number(*v),
                    Bound::Data(m) => DeviceBound::Matrix(m),
                    Bound::Param(p) => DeviceBound::Var(&values[p.0]),
                })
                .collect();
            let block = Block {
                offset: e.offset,
                len: e.len,
                rows: e.rows,
                cols: e.cols,
                positions: e.positions.as_ref(),
            };
            let t = device::transform(&e.constraint, theta, block, &bounds)?;
            drop(bounds);
            values.push(t.value);
            log_jacobians.extend(t.log_jacobian);
        }
        Ok(Constrained {
            values,
            theta: theta.clone(),
            log_jacobians,
            log_jacobian: std::cell::OnceCell::new(),
        })
    }

    fn host_bounds(&self, e: &Entry, constrained: &[Vec<f64>]) -> Result<Vec<HostBound>> {
        e.constraint
            .bounds()
            .into_iter()
            .zip(&e.host_data)
            .map(|(b, data)| {
                Ok(HostBound(match (b, data) {
                    (Bound::Number(v), _) => vec![*v],
                    (Bound::Data(_), Some(values)) => values.clone(),
                    (Bound::Param(p), _) => constrained.get(p.0).cloned().unwrap_or_default(),
                    (Bound::Data(m), None) => m.to_vec()?,
                }))
            })
            .collect()
    }

    /// One draw's constrained values on the host, in [`column_names`]
    /// order (the forward map for a sampler's unconstrained draws).
    ///
    /// [`column_names`]: Parameters::column_names
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// let mut p = Parameters::new();
    /// p.vector("s", 2, Constraint::Simplex)?;
    /// assert_eq!(p.constrain_host(&[0.0])?, vec![0.5, 0.5]);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn constrain_host(&self, theta: &[f64]) -> Result<Vec<f64>> {
        self.check_theta("Parameters::constrain_host", theta.len())?;
        let mut per_entry: Vec<Vec<f64>> = Vec::with_capacity(self.entries.len());
        for e in &self.entries {
            let bounds = self.host_bounds(e, &per_entry)?;
            let x = &theta[e.offset..e.offset + e.len];
            per_entry.push(host::constrain(&e.constraint, x, e.rows, e.cols, &bounds));
        }
        Ok(per_entry.concat())
    }

    /// The model built from these parameters and a log density over their
    /// constrained values (the log-Jacobian is added for it): what
    /// `clfuse::nuts::sample` samples (feature `nuts`).
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// use clfuse::prelude::*;
    /// use clfuse::rev::Var;
    /// let mut p = Parameters::new();
    /// let s = p.real("s", Constraint::lower(0.0))?;
    /// // s ~ exponential(1)
    /// let posterior = p.model(move |v| clfuse::dist::exponential_lpdf(&v[s], 1.0).eval());
    /// let lp = posterior.log_density(&Var::new(MatrixCl::from_slice(1, 1, &[0.0])?))?;
    /// assert_eq!(lp.value().to_vec()?, vec![-1.0]); // -s + log|ds/dx| = -1 + 0
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn model<F>(self, log_density: F) -> Posterior<F>
    where
        F: Fn(&Constrained) -> Result<Var> + Sync,
    {
        Posterior {
            parameters: self,
            log_density,
        }
    }

    /// The unconstrained column for constrained values given by name (each
    /// `rows x cols`, column-major; every parameter must be given): the
    /// inverse transforms, for user-given initial values. A value outside
    /// its constraint is an error naming it.
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// let mut p = Parameters::new();
    /// p.real("sigma", Constraint::lower(1.0))?;
    /// p.vector("c", 2, Constraint::Ordered)?;
    /// let theta = p.unconstrain(&[("sigma", &[2.0][..]), ("c", &[0.0, 1.0][..])])?;
    /// assert_eq!(theta, vec![0.0, 0.0, 0.0]);
    /// assert!(p.unconstrain(&[("sigma", &[0.5][..]), ("c", &[0.0, 1.0][..])]).is_err());
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn unconstrain(&self, values: &[(&str, &[f64])]) -> Result<Vec<f64>> {
        let invalid = |argument: &'static str, reason: String| Error::InvalidArgument {
            function: "Parameters::unconstrain",
            argument,
            reason,
        };
        if let Some((name, _)) = values.iter().find(|(n, _)| self.find(n).is_none()) {
            return Err(invalid("values", format!("no parameter is named `{name}`")));
        }
        let mut theta = Vec::with_capacity(self.dim);
        let mut per_entry: Vec<Vec<f64>> = Vec::with_capacity(self.entries.len());
        for e in &self.entries {
            let y = values
                .iter()
                .find(|(n, _)| *n == e.name)
                .map(|(_, v)| *v)
                .ok_or_else(|| invalid("values", format!("parameter `{}` is not given", e.name)))?;
            if y.len() != e.rows * e.cols {
                return Err(invalid(
                    "values",
                    format!(
                        "parameter `{}` has {} values, but is {} x {}",
                        e.name,
                        y.len(),
                        e.rows,
                        e.cols
                    ),
                ));
            }
            let bounds = self.host_bounds(e, &per_entry)?;
            theta.extend(host::unconstrain(
                &e.name,
                &e.constraint,
                y,
                e.rows,
                e.cols,
                &bounds,
            )?);
            per_entry.push(y.to_vec());
        }
        Ok(theta)
    }
}

/// Every parameter's constrained value for one `theta`, as variables, and
/// the sum of the transforms' log-absolute-Jacobians.
pub struct Constrained {
    values: Vec<Var>,
    /// The unconstrained column the values came from.
    theta: Var,
    /// The transforms' log-Jacobian terms, added up by the step that adds
    /// them to the log density ([`log_density`](Self::log_density)).
    log_jacobians: Vec<LogJacobian>,
    /// Their sum as a variable, once [`log_jacobian`](Self::log_jacobian)
    /// has asked for it.
    log_jacobian: std::cell::OnceCell<Var>,
}

/// `constrained[p]`: the parameter's value. A handle is an index into the
/// block that declared it; one from another, larger block is out of range
/// here and panics like a slice index (use [`Constrained::get`] to test).
impl std::ops::Index<Param> for Constrained {
    type Output = Var;
    fn index(&self, p: Param) -> &Var {
        &self.values[p.0]
    }
}

impl Constrained {
    /// A parameter's value (as `constrained[p]`), or `None` for a handle
    /// from another parameter block.
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// use clfuse::prelude::*;
    /// use clfuse::rev::Var;
    /// let mut p = Parameters::new();
    /// let s = p.real("s", Constraint::lower(0.0))?;
    /// let v = p.constrain(&Var::new(MatrixCl::from_slice(1, 1, &[0.0])?))?;
    /// assert_eq!(v.get(s).map(|s| s.value().to_vec()).transpose()?, Some(vec![1.0]));
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn get(&self, p: Param) -> Option<&Var> {
        self.values.get(p.0)
    }

    /// The sum of the transforms' log-absolute-Jacobians (`1 x 1`), or
    /// `None` when no transform adds one (one step, recorded when first
    /// asked for).
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// use clfuse::prelude::*;
    /// use clfuse::rev::Var;
    /// let mut p = Parameters::new();
    /// p.real("s", Constraint::lower(0.0))?;
    /// let v = p.constrain(&Var::new(MatrixCl::from_slice(1, 1, &[0.5])?))?;
    /// assert_eq!(v.log_jacobian()?.map(|j| j.value().to_vec()).transpose()?, Some(vec![0.5]));
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn log_jacobian(&self) -> Result<Option<Var>> {
        if self.log_jacobians.is_empty() {
            return Ok(None);
        }
        if let Some(j) = self.log_jacobian.get() {
            return Ok(Some(j.clone()));
        }
        let sum = self.sum_log_jacobians(None)?;
        Ok(Some(self.log_jacobian.get_or_init(|| sum).clone()))
    }

    /// The model's log density on the unconstrained scale: `lp` (`1 x 1`)
    /// plus the log-Jacobian, as Stan's sampler sees it. One step adds
    /// `lp` and every transform's term (a one-element block's term is its
    /// element of `theta`, read in place).
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// use clfuse::prelude::*;
    /// use clfuse::rev::Var;
    /// let mut p = Parameters::new();
    /// let s = p.real("s", Constraint::lower(0.0))?;
    /// let v = p.constrain(&Var::new(MatrixCl::from_slice(1, 1, &[0.0])?))?;
    /// let lp = v.log_density((-1.0f64 * &v[s]).eval()?)?; // exponential(1) on s
    /// assert_eq!(lp.value().to_vec()?, vec![-1.0]);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn log_density(&self, lp: Var) -> Result<Var> {
        if self.log_jacobians.is_empty() {
            return Ok(lp);
        }
        if let Some(j) = self.log_jacobian.get() {
            return (&lp + j).eval();
        }
        self.sum_log_jacobians(Some(&lp))
    }

    /// Every log-Jacobian term, plus `lp` when given, as one step.
    fn sum_log_jacobians(&self, lp: Option<&Var>) -> Result<Var> {
        let mut terms = lp
            .map(|lp| boxed(lp + 0.0))
            .into_iter()
            .chain(self.log_jacobians.iter().map(|t| self.term(t)));
        let first = terms.next().ok_or_else(|| Error::InvalidArgument {
            function: "Constrained::log_density",
            argument: "self",
            reason: "internal: no term to add".into(),
        })?;
        terms.fold(first, |sum, t| boxed(sum + t)).eval()
    }

    /// One log-Jacobian term as an expression.
    fn term<'a>(&'a self, t: &'a LogJacobian) -> Expr<DynOp<'a, f64, Variable>> {
        match t {
            LogJacobian::Var(j) => boxed(j + 0.0),
            LogJacobian::Free(k) => boxed(block(&self.theta, *k, 0, 1, 1)),
        }
    }
}

/// A model: its parameters and its log density over their constrained
/// values (built by [`Parameters::model`]).
pub struct Posterior<F> {
    parameters: Parameters,
    log_density: F,
}

impl<F: Fn(&Constrained) -> Result<Var> + Sync> Posterior<F> {
    /// Its parameters.
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// use clfuse::prelude::*;
    /// let mut p = Parameters::new();
    /// let mu = p.real("mu", Constraint::Unconstrained)?;
    /// let model = p.model(move |v| clfuse::dist::std_normal_lpdf(&v[mu]).eval());
    /// assert_eq!(model.parameters().dim(), 1);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn parameters(&self) -> &Parameters {
        &self.parameters
    }

    /// The log density on the unconstrained scale at `theta` (`dim x 1`):
    /// the model's plus the transforms' log-Jacobian, as a `1 x 1`
    /// variable.
    ///
    /// ```
    /// use clfuse::params::{Constraint, Parameters};
    /// use clfuse::prelude::*;
    /// use clfuse::rev::Var;
    /// let mut p = Parameters::new();
    /// let mu = p.real("mu", Constraint::Unconstrained)?;
    /// let model = p.model(move |v| (-0.5f64 * square(&v[mu])).eval());
    /// let lp = model.log_density(&Var::new(MatrixCl::from_slice(1, 1, &[2.0])?))?;
    /// assert_eq!(lp.value().to_vec()?, vec![-2.0]);
    /// # Ok::<(), clfuse::Error>(())
    /// ```
    pub fn log_density(&self, theta: &Var) -> Result<Var> {
        let values = self.parameters.constrain(theta)?;
        values.log_density((self.log_density)(&values)?)
    }
}
