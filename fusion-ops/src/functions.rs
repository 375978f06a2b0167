//! Element-wise math functions, each a struct, a free function and a method.
//!
//! Every function is one `elementwise!` declaration below: its node type,
//! name and operands, its OpenCL C template, its result type and view rule,
//! and the device helpers it needs. Integer operands are promoted to
//! `double` (`exp(int) -> double`), as in Stan.

use crate::device_functions as dev;
use clfuse_core::{Expr, IntoOperand, View};

/// How a binary function's view follows from its operands' views.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewRule {
    /// `f(0, 0) != 0`: anything may be non-zero.
    Entire,
    /// `f(0, 0) == 0`: non-zero where either operand is.
    Union,
    /// `f(x, 0) == f(0, y) == 0`: non-zero only where both are.
    Intersection,
    /// `f(0, y) == 0`: non-zero only where the first operand is.
    First,
}

impl ViewRule {
    /// Applies the rule.
    pub fn apply(self, a: View, b: View) -> View {
        match self {
            ViewRule::Entire => View::Entire,
            ViewRule::Union => a.union(b),
            ViewRule::Intersection => a.intersection(b),
            ViewRule::First => a,
        }
    }
}

// Each line below is the whole declaration of one function.

crate::elementwise! { pub struct Exp; fn exp(x) = "exp({x})"; result = real; view = entire; example = true; d/dx = "{res}"; }
crate::elementwise! { pub struct Exp2; fn exp2(x) = "exp2({x})"; result = real; view = entire; example = true; d/dx = "{res} * 0.6931471805599453"; }
crate::elementwise! { pub struct Expm1; fn expm1(x) = "expm1({x})"; result = real; view = keep; example = true; d/dx = "{res} + 1"; }
crate::elementwise! { pub struct Log; fn log(x) = "log({x})"; result = real; view = entire; example = true; d/dx = "1 / {x}"; }
crate::elementwise! { pub struct Log2; fn log2(x) = "log2({x})"; result = real; view = entire; example = true; d/dx = "1 / ({x} * 0.6931471805599453)"; }
crate::elementwise! { pub struct Log10; fn log10(x) = "log10({x})"; result = real; view = entire; example = true; d/dx = "1 / ({x} * 2.302585092994046)"; }
crate::elementwise! { pub struct Log1p; fn log1p(x) = "log1p({x})"; result = real; view = keep; example = true; d/dx = "1 / (1 + {x})"; }
crate::elementwise! { pub struct Sqrt; fn sqrt(x) = "sqrt({x})"; result = real; view = keep; example = true; d/dx = "0.5 / {res}"; }
crate::elementwise! { pub struct Cbrt; fn cbrt(x) = "cbrt({x})"; result = real; view = keep; example = true; d/dx = "{res} / (3 * {x})"; }
crate::elementwise! { pub struct Rsqrt; fn rsqrt(x) = "rsqrt({x})"; result = real; view = entire; example = true; d/dx = "-0.5 * {res} / {x}"; }
crate::elementwise! { pub struct Square; fn square(x) = "{x} * {x}"; result = real; view = keep; example = true; d/dx = "2 * {x}"; }
crate::elementwise! { pub struct Fabs; fn fabs(x) = "fabs({x})"; result = real; view = keep; example = true; d/dx = "sign({x})"; }
crate::elementwise! { pub struct Floor; fn floor(x) = "floor({x})"; result = real; view = keep; example = true; d/dx = "0"; }
crate::elementwise! { pub struct Ceil; fn ceil(x) = "ceil({x})"; result = real; view = keep; example = true; d/dx = "0"; }
crate::elementwise! { pub struct Round; fn round(x) = "round({x})"; result = real; view = keep; example = true; d/dx = "0"; }
crate::elementwise! { pub struct Trunc; fn trunc(x) = "trunc({x})"; result = real; view = keep; example = true; d/dx = "0"; }
crate::elementwise! { pub struct Sin; fn sin(x) = "sin({x})"; result = real; view = keep; example = true; d/dx = "cos({x})"; }
crate::elementwise! { pub struct Cos; fn cos(x) = "cos({x})"; result = real; view = entire; example = true; d/dx = "-sin({x})"; }
crate::elementwise! { pub struct Tan; fn tan(x) = "tan({x})"; result = real; view = keep; example = true; d/dx = "1 + {res} * {res}"; }
crate::elementwise! { pub struct Asin; fn asin(x) = "asin({x})"; result = real; view = keep; example = true; d/dx = "rsqrt(1 - {x} * {x})"; }
crate::elementwise! { pub struct Acos; fn acos(x) = "acos({x})"; result = real; view = entire; example = true; d/dx = "-rsqrt(1 - {x} * {x})"; }
crate::elementwise! { pub struct Atan; fn atan(x) = "atan({x})"; result = real; view = keep; example = true; d/dx = "1 / (1 + {x} * {x})"; }
crate::elementwise! { pub struct Sinh; fn sinh(x) = "sinh({x})"; result = real; view = keep; example = true; d/dx = "cosh({x})"; }
crate::elementwise! { pub struct Cosh; fn cosh(x) = "cosh({x})"; result = real; view = entire; example = true; d/dx = "sinh({x})"; }
crate::elementwise! { pub struct Tanh; fn tanh(x) = "tanh({x})"; result = real; view = keep; example = true; d/dx = "1 - {res} * {res}"; }
crate::elementwise! { pub struct Asinh; fn asinh(x) = "asinh({x})"; result = real; view = keep; example = true; d/dx = "rsqrt({x} * {x} + 1)"; }
crate::elementwise! { pub struct Acosh; fn acosh(x) = "acosh({x})"; result = real; view = entire; example = true; d/dx = "rsqrt({x} * {x} - 1)"; }
crate::elementwise! { pub struct Atanh; fn atanh(x) = "atanh({x})"; result = real; view = keep; example = true; d/dx = "1 / (1 - {x} * {x})"; }
crate::elementwise! { pub struct Erf; fn erf(x) = "erf({x})"; result = real; view = keep; example = true; d/dx = "1.1283791670955126 * exp(-{x} * {x})"; }
crate::elementwise! { pub struct Erfc; fn erfc(x) = "erfc({x})"; result = real; view = entire; example = true; d/dx = "-1.1283791670955126 * exp(-{x} * {x})"; }
crate::elementwise! { pub struct Lgamma; fn lgamma(x) = "lgamma({x})"; result = real; view = entire; example = true; d/dx = "digamma{F}({x})"; derivative_helpers = [dev::DIGAMMA]; }
crate::elementwise! { pub struct Tgamma; fn tgamma(x) = "tgamma({x})"; result = real; view = entire; example = true; d/dx = "{res} * digamma{F}({x})"; derivative_helpers = [dev::DIGAMMA]; }
crate::elementwise! { pub struct InvLogit; fn inv_logit(x) = "inv_logit{F}({x})"; result = real; view = entire; helpers = [dev::INV_LOGIT]; example = true; d/dx = "{res} * (1 - {res})"; }
crate::elementwise! { pub struct Logit; fn logit(x) = "logit{F}({x})"; result = real; view = entire; helpers = [dev::LOGIT]; example = true; d/dx = "1 / ({x} * (1 - {x}))"; }
crate::elementwise! { pub struct LogInvLogit; fn log_inv_logit(x) = "log_inv_logit{F}({x})"; result = real; view = entire; helpers = [dev::LOG_INV_LOGIT]; example = true; d/dx = "inv_logit{F}(-{x})"; derivative_helpers = [dev::INV_LOGIT]; }
crate::elementwise! { pub struct Log1mInvLogit; fn log1m_inv_logit(x) = "log1m_inv_logit{F}({x})"; result = real; view = entire; helpers = [dev::LOG1M_INV_LOGIT]; example = true; d/dx = "-inv_logit{F}({x})"; derivative_helpers = [dev::INV_LOGIT]; }
crate::elementwise! { pub struct Log1pExp; fn log1p_exp(x) = "log1p_exp{F}({x})"; result = real; view = entire; helpers = [dev::LOG1P_EXP]; example = true; d/dx = "inv_logit{F}({x})"; derivative_helpers = [dev::INV_LOGIT]; }
crate::elementwise! { pub struct Log1mExp; fn log1m_exp(x) = "log1m_exp{F}({x})"; result = real; view = entire; helpers = [dev::LOG1M_EXP]; example = true; d/dx = "-1 / expm1(-{x})"; }
crate::elementwise! { pub struct Log1m; fn log1m(x) = "log1m{F}({x})"; result = real; view = keep; helpers = [dev::LOG1M]; example = true; d/dx = "-1 / (1 - {x})"; }
crate::elementwise! { pub struct NormalCdf; fn phi(x) = "Phi{F}({x})"; result = real; view = entire; helpers = [dev::PHI]; example = true; d/dx = "0.3989422804014327 * exp(-0.5 * {x} * {x})"; }
crate::elementwise! { pub struct LogNormalCdf; fn log_phi(x) = "log_phi{F}({x})"; result = real; view = entire; helpers = [dev::MILLS_SERIES, dev::LOG_PHI]; example = true; d/dx = "log_phi_derivative{F}({x})"; derivative_helpers = [dev::MILLS_SERIES, dev::LOG_PHI_DERIVATIVE]; }
crate::elementwise! { pub struct NormalCdfApprox; fn phi_approx(x) = "Phi_approx{F}({x})"; result = real; view = entire; helpers = [dev::INV_LOGIT, dev::PHI_APPROX]; example = true; d/dx = "{res} * (1 - {res}) * (0.21168 * {x} * {x} + 1.5976)"; }
crate::elementwise! { pub struct InvNormalCdf; fn inv_phi(x) = "inv_Phi{F}({x})"; result = real; view = entire; helpers = [dev::INV_PHI]; example = true; d/dx = "2.5066282746310002 * exp(0.5 * {res} * {res})"; }
crate::elementwise! { pub struct Digamma; fn digamma(x) = "digamma{F}({x})"; result = real; view = entire; helpers = [dev::DIGAMMA]; example = true; d/dx = "trigamma{F}({x})"; derivative_helpers = [dev::TRIGAMMA]; }
crate::elementwise! { pub struct Trigamma; fn trigamma(x) = "trigamma{F}({x})"; result = real; view = entire; helpers = [dev::TRIGAMMA]; example = true; d/dx = "tetragamma{F}({x})"; derivative_helpers = [dev::TETRAGAMMA]; }
crate::elementwise! { pub struct Inv; fn inv(x) = "1 / {x}"; result = real; view = entire; example = true; d/dx = "-{res} * {res}"; }
crate::elementwise! { pub struct InvSquare; fn inv_square(x) = "1 / ({x} * {x})"; result = real; view = entire; example = true; d/dx = "-2 * {res} / {x}"; }
crate::elementwise! { pub struct InvCloglog; fn inv_cloglog(x) = "-expm1(-exp({x}))"; result = real; view = entire; example = true; d/dx = "exp({x} - exp({x}))"; }
crate::elementwise! { pub struct Sign; fn sign(x) = "sign({x})"; result = real; view = keep; example = true; d/dx = "0"; }

crate::elementwise! { pub struct Pow; fn pow(x, y) = "pow({x}, {y})"; result = real; view = entire; example = true; d/dx = "{y} * pow({x}, {y} - 1)"; d/dy = "{res} * log({x})"; }
crate::elementwise! { pub struct Fmin; fn fmin(x, y) = "fmin({x}, {y})"; result = real; view = union; example = true; d/dx = "({x} <= {y} || isnan({y})) ? 1 : 0"; d/dy = "({x} <= {y} || isnan({y})) ? 0 : 1"; }
crate::elementwise! { pub struct Fmax; fn fmax(x, y) = "fmax({x}, {y})"; result = real; view = union; example = true; d/dx = "({x} >= {y} || isnan({y})) ? 1 : 0"; d/dy = "({x} >= {y} || isnan({y})) ? 0 : 1"; }
crate::elementwise! { pub struct Fmod; fn fmod(x, y) = "fmod({x}, {y})"; result = real; view = entire; example = true; d/dx = "1"; d/dy = "-trunc({x} / {y})"; }
crate::elementwise! { pub struct Hypot; fn hypot(x, y) = "hypot({x}, {y})"; result = real; view = union; example = true; d/dx = "{x} / {res}"; d/dy = "{y} / {res}"; }
crate::elementwise! { pub struct Copysign; fn copysign(x, y) = "copysign({x}, {y})"; result = real; view = first; example = true; d/dx = "sign({x}) * sign({res})"; d/dy = "0"; }
crate::elementwise! { pub struct Fdim; fn fdim(x, y) = "fdim({x}, {y})"; result = real; view = union; example = true; d/dx = "{x} > {y} ? 1 : 0"; d/dy = "{x} > {y} ? -1 : 0"; }
crate::elementwise! { pub struct Lbeta; fn lbeta(x, y) = "lbeta{F}({x}, {y})"; result = real; view = entire; helpers = [dev::LBETA]; example = true; d/dx = "digamma{F}({x}) - digamma{F}({x} + {y})"; d/dy = "digamma{F}({y}) - digamma{F}({x} + {y})"; derivative_helpers = [dev::DIGAMMA]; }
crate::elementwise! { pub struct BinomialCoefficientLog; fn binomial_coefficient_log(x, y) = "binomial_coefficient_log{F}({x}, {y})"; result = real; view = entire; helpers = [dev::LBETA, dev::BINOMIAL_COEFFICIENT_LOG]; example = true; d/dx = "digamma{F}({x} + 1) - digamma{F}({x} - {y} + 1)"; d/dy = "digamma{F}({x} - {y} + 1) - digamma{F}({y} + 1)"; derivative_helpers = [dev::DIGAMMA]; }
crate::elementwise! { pub struct Lmultiply; fn lmultiply(x, y) = "lmultiply{F}({x}, {y})"; result = real; view = first; helpers = [dev::LMULTIPLY]; example = true; d/dx = "log({y})"; d/dy = "{x} / {y}"; }
crate::elementwise! { pub struct LogDiffExp; fn log_diff_exp(x, y) = "log_diff_exp{F}({x}, {y})"; result = real; view = entire; helpers = [dev::LOG1M_EXP, dev::LOG_DIFF_EXP]; example = true; d/dx = "-1 / expm1({y} - {x})"; d/dy = "-1 / expm1({x} - {y})"; }
crate::elementwise! { pub struct LogSumExp; fn log_sum_exp(x, y) = "log_sum_exp{F}({x}, {y})"; result = real; view = entire; helpers = [dev::LOG1P_EXP, dev::LOG_SUM_EXP]; example = true; d/dx = "exp({x} - {res})"; d/dy = "exp({y} - {res})"; }
crate::elementwise! { pub struct LogInvLogitDiff; fn log_inv_logit_diff(x, y) = "log_inv_logit_diff{F}({x}, {y})"; result = real; view = entire; helpers = [dev::LOG1P_EXP, dev::LOG1M_EXP, dev::LOG_INV_LOGIT_DIFF]; example = true; d/dx = "-1 / expm1({y} - {x}) - inv_logit{F}({x})"; d/dy = "-1 / expm1({x} - {y}) - inv_logit{F}({y})"; derivative_helpers = [dev::INV_LOGIT]; }
crate::elementwise! { pub struct Ldexp; fn ldexp(x, y) = "ldexp({x}, (int)({y}))"; result = real; view = first; example = true; d/dx = "ldexp(1.0, (int)({y}))"; d/dy = "0"; }

/// Stan's name for [`lmultiply`]: `a * log(b)` with `0 * log(0) = 0`.
///
/// ```
/// use clfuse_ops::prelude::*;
/// let a = MatrixCl::from_slice(1, 1, &[0.0f64])?;
/// assert_eq!(multiply_log(&a, &a).eval()?.to_vec()?, vec![0.0]);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn multiply_log<A: IntoOperand, B: IntoOperand>(
    a: A,
    b: B,
) -> Expr<Lmultiply<A::Operand, B::Operand>> {
    lmultiply(a, b)
}

/// Stan's name for [`binomial_coefficient_log`]: `log(n choose k)`, the
/// same node (one kernel serves both names).
///
/// ```
/// use clfuse_ops::prelude::*;
/// let n = MatrixCl::from_slice(1, 1, &[5.0f64])?;
/// let got: f64 = lchoose(&n, 2.0).eval()?.to_vec()?[0];
/// assert!((got - 10f64.ln()).abs() < 1e-12);
/// # Ok::<(), clfuse_ops::Error>(())
/// ```
pub fn lchoose<N: IntoOperand, K: IntoOperand>(
    n: N,
    k: K,
) -> Expr<BinomialCoefficientLog<N::Operand, K::Operand>> {
    binomial_coefficient_log(n, k)
}

/// Stan's spelling of [`inv_phi`].
pub use inv_phi as inv_Phi;
/// Stan's spelling of [`phi`].
pub use phi as Phi;
/// Stan's spelling of [`phi_approx`].
pub use phi_approx as Phi_approx;
