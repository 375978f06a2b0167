//! Element-wise math functions, each a struct, a free function and a method.
//!
//! Every function is one line of the tables below: its name, its OpenCL C
//! template, its view rule and the device helpers it needs. Integer operands
//! are promoted to `double` (`exp(int) -> double`), as in Stan.

use crate::binder::Binder;
use crate::device_functions::{self as dev, instantiate};
use crate::generator::{Generator, Index};
use crate::operation::{Operation, Shape, combine_shapes};
use crate::templates::{RealOf, convert, expand};
use fusion_core::{ClType, Expr, IntoOperand, Promote, Result, View};

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

macro_rules! unary_functions {
    ($($name:ident $fun:ident $template:literal keeps_zero: $keeps:literal helpers: [$($helper:expr),*];)*) => {
        $(
            #[doc = concat!("Element-wise `", stringify!($fun), "`: the node built by [`", stringify!($fun), "()`].")]
            #[derive(Debug, Clone, Copy)]
            pub struct $name<A>(pub A);

            impl<A: Operation> Operation for $name<A>
            where
                A::Scalar: RealOf,
            {
                type Scalar = <A::Scalar as RealOf>::Real;
                type Key = $name<A::Key>;

                fn shape(&self) -> Result<Shape> {
                    self.0.shape()
                }

                fn view(&self) -> View {
                    if $keeps { self.0.view() } else { View::Entire }
                }

                fn generate(&self, g: &mut Generator, at: &Index) -> String {
                    let x = self.0.generate(g, at);
                    let x = convert::<A::Scalar, Self::Scalar>(&x);
                    let real = <Self::Scalar as ClType>::CL_NAME;
                    $(g.helper(instantiate($helper, real));)*
                    g.declare(real, &expand($template, real, &[&x]))
                }

                fn bind<'a>(&'a self, b: &mut Binder<'a>) {
                    self.0.bind(b)
                }
            }

            #[doc = concat!(
                "Element-wise `", stringify!($fun), "` (OpenCL C: `", $template, "`).\n\n",
                "```\nuse fusion_ops::prelude::*;\n",
                "let a = MatrixCl::from_slice(1, 2, &[0.25f64, 0.5])?;\n",
                "let r = ", stringify!($fun), "(&a).eval()?;\n",
                "assert_eq!(r.to_vec()?.len(), 2);\n",
                "# Ok::<(), fusion_ops::Error>(())\n```"
            )]
            pub fn $fun<A: IntoOperand>(a: A) -> Expr<$name<A::Operand>> {
                Expr($name(a.into_operand()))
            }
        )*

        /// Element-wise unary functions as methods of matrices and expressions.
        pub trait UnaryFunctions: IntoOperand + Sized {
            $(
                #[doc = concat!("Element-wise `", stringify!($fun), "`; see [`", stringify!($fun), "()`].")]
                fn $fun(self) -> Expr<$name<Self::Operand>> {
                    Expr($name(self.into_operand()))
                }
            )*
        }
    };
}

macro_rules! binary_functions {
    ($($name:ident $fun:ident $template:literal view: $rule:ident helpers: [$($helper:expr),*];)*) => {
        $(
            #[doc = concat!("Element-wise `", stringify!($fun), "`: the node built by [`", stringify!($fun), "()`].")]
            #[derive(Debug, Clone, Copy)]
            pub struct $name<A, B>(pub A, pub B);

            impl<A: Operation, B: Operation> Operation for $name<A, B>
            where
                A::Scalar: Promote<B::Scalar>,
                <A::Scalar as Promote<B::Scalar>>::Output: RealOf,
            {
                type Scalar = <<A::Scalar as Promote<B::Scalar>>::Output as RealOf>::Real;
                type Key = $name<A::Key, B::Key>;

                fn shape(&self) -> Result<Shape> {
                    combine_shapes(stringify!($fun), self.0.shape()?, self.1.shape()?)
                }

                fn view(&self) -> View {
                    ViewRule::$rule.apply(self.0.view(), self.1.view())
                }

                fn generate(&self, g: &mut Generator, at: &Index) -> String {
                    let x = self.0.generate(g, at);
                    let y = self.1.generate(g, at);
                    let x = convert::<A::Scalar, Self::Scalar>(&x);
                    let y = convert::<B::Scalar, Self::Scalar>(&y);
                    let real = <Self::Scalar as ClType>::CL_NAME;
                    $(g.helper(instantiate($helper, real));)*
                    g.declare(real, &expand($template, real, &[&x, &y]))
                }

                fn bind<'a>(&'a self, b: &mut Binder<'a>) {
                    self.0.bind(b);
                    self.1.bind(b);
                }
            }

            #[doc = concat!(
                "Element-wise `", stringify!($fun), "` of two operands (OpenCL C: `", $template, "`).\n\n",
                "```\nuse fusion_ops::prelude::*;\n",
                "let a = MatrixCl::from_slice(1, 2, &[0.25f64, 0.5])?;\n",
                "let r = ", stringify!($fun), "(&a, 0.75).eval()?;\n",
                "assert_eq!(r.to_vec()?.len(), 2);\n",
                "# Ok::<(), fusion_ops::Error>(())\n```"
            )]
            pub fn $fun<A: IntoOperand, B: IntoOperand>(a: A, b: B) -> Expr<$name<A::Operand, B::Operand>> {
                Expr($name(a.into_operand(), b.into_operand()))
            }
        )*

        /// Element-wise binary functions as methods of matrices and expressions.
        pub trait BinaryFunctions: IntoOperand + Sized {
            $(
                #[doc = concat!("Element-wise `", stringify!($fun), "`; see [`", stringify!($fun), "()`].")]
                fn $fun<B: IntoOperand>(self, b: B) -> Expr<$name<Self::Operand, B::Operand>> {
                    Expr($name(self.into_operand(), b.into_operand()))
                }
            )*
        }
    };
}

unary_functions! {
    Exp exp "exp({x})" keeps_zero: false helpers: [];
    Exp2 exp2 "exp2({x})" keeps_zero: false helpers: [];
    Expm1 expm1 "expm1({x})" keeps_zero: true helpers: [];
    Log log "log({x})" keeps_zero: false helpers: [];
    Log2 log2 "log2({x})" keeps_zero: false helpers: [];
    Log10 log10 "log10({x})" keeps_zero: false helpers: [];
    Log1p log1p "log1p({x})" keeps_zero: true helpers: [];
    Sqrt sqrt "sqrt({x})" keeps_zero: true helpers: [];
    Cbrt cbrt "cbrt({x})" keeps_zero: true helpers: [];
    Rsqrt rsqrt "rsqrt({x})" keeps_zero: false helpers: [];
    Square square "{x} * {x}" keeps_zero: true helpers: [];
    Fabs fabs "fabs({x})" keeps_zero: true helpers: [];
    Floor floor "floor({x})" keeps_zero: true helpers: [];
    Ceil ceil "ceil({x})" keeps_zero: true helpers: [];
    Round round "round({x})" keeps_zero: true helpers: [];
    Trunc trunc "trunc({x})" keeps_zero: true helpers: [];
    Sin sin "sin({x})" keeps_zero: true helpers: [];
    Cos cos "cos({x})" keeps_zero: false helpers: [];
    Tan tan "tan({x})" keeps_zero: true helpers: [];
    Asin asin "asin({x})" keeps_zero: true helpers: [];
    Acos acos "acos({x})" keeps_zero: false helpers: [];
    Atan atan "atan({x})" keeps_zero: true helpers: [];
    Sinh sinh "sinh({x})" keeps_zero: true helpers: [];
    Cosh cosh "cosh({x})" keeps_zero: false helpers: [];
    Tanh tanh "tanh({x})" keeps_zero: true helpers: [];
    Asinh asinh "asinh({x})" keeps_zero: true helpers: [];
    Acosh acosh "acosh({x})" keeps_zero: false helpers: [];
    Atanh atanh "atanh({x})" keeps_zero: true helpers: [];
    Erf erf "erf({x})" keeps_zero: true helpers: [];
    Erfc erfc "erfc({x})" keeps_zero: false helpers: [];
    Lgamma lgamma "lgamma({x})" keeps_zero: false helpers: [];
    Tgamma tgamma "tgamma({x})" keeps_zero: false helpers: [];
    InvLogit inv_logit "inv_logit{F}({x})" keeps_zero: false helpers: [dev::INV_LOGIT];
    Logit logit "logit{F}({x})" keeps_zero: false helpers: [dev::LOGIT];
    LogInvLogit log_inv_logit "log_inv_logit{F}({x})" keeps_zero: false helpers: [dev::LOG_INV_LOGIT];
    Log1mInvLogit log1m_inv_logit "log1m_inv_logit{F}({x})" keeps_zero: false helpers: [dev::LOG1M_INV_LOGIT];
    Log1pExp log1p_exp "log1p_exp{F}({x})" keeps_zero: false helpers: [dev::LOG1P_EXP];
    Log1mExp log1m_exp "log1m_exp{F}({x})" keeps_zero: false helpers: [dev::LOG1M_EXP];
    Log1m log1m "log1m{F}({x})" keeps_zero: true helpers: [dev::LOG1M];
    NormalCdf phi "Phi{F}({x})" keeps_zero: false helpers: [dev::PHI];
    NormalCdfApprox phi_approx "Phi_approx{F}({x})" keeps_zero: false helpers: [dev::INV_LOGIT, dev::PHI_APPROX];
    InvNormalCdf inv_phi "inv_Phi{F}({x})" keeps_zero: false helpers: [dev::INV_PHI];
    Digamma digamma "digamma{F}({x})" keeps_zero: false helpers: [dev::DIGAMMA];
    Trigamma trigamma "trigamma{F}({x})" keeps_zero: false helpers: [dev::TRIGAMMA];
}

binary_functions! {
    Pow pow "pow({x}, {y})" view: Entire helpers: [];
    Fmin fmin "fmin({x}, {y})" view: Union helpers: [];
    Fmax fmax "fmax({x}, {y})" view: Union helpers: [];
    Fmod fmod "fmod({x}, {y})" view: Entire helpers: [];
    Hypot hypot "hypot({x}, {y})" view: Union helpers: [];
    Copysign copysign "copysign({x}, {y})" view: First helpers: [];
    Fdim fdim "fdim({x}, {y})" view: Union helpers: [];
    Lbeta lbeta "lbeta{F}({x}, {y})" view: Entire helpers: [dev::LBETA];
    BinomialCoefficientLog binomial_coefficient_log "binomial_coefficient_log{F}({x}, {y})" view: Entire helpers: [dev::LBETA, dev::BINOMIAL_COEFFICIENT_LOG];
    Lmultiply lmultiply "lmultiply{F}({x}, {y})" view: First helpers: [dev::LMULTIPLY];
    LogDiffExp log_diff_exp "log_diff_exp{F}({x}, {y})" view: Entire helpers: [dev::LOG1M_EXP, dev::LOG_DIFF_EXP];
    LogSumExp log_sum_exp "log_sum_exp{F}({x}, {y})" view: Entire helpers: [dev::LOG1P_EXP, dev::LOG_SUM_EXP];
}

/// Stan's name for [`lmultiply`]: `a * log(b)` with `0 * log(0) = 0`.
///
/// ```
/// use fusion_ops::prelude::*;
/// let a = MatrixCl::from_slice(1, 1, &[0.0f64])?;
/// assert_eq!(multiply_log(&a, &a).eval()?.to_vec()?, vec![0.0]);
/// # Ok::<(), fusion_ops::Error>(())
/// ```
pub fn multiply_log<A: IntoOperand, B: IntoOperand>(
    a: A,
    b: B,
) -> Expr<Lmultiply<A::Operand, B::Operand>> {
    lmultiply(a, b)
}

/// Stan's spelling of [`inv_phi`].
pub use inv_phi as inv_Phi;
/// Stan's spelling of [`phi`].
pub use phi as Phi;
/// Stan's spelling of [`phi_approx`].
pub use phi_approx as Phi_approx;
