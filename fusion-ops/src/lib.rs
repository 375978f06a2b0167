//! fusion-ops: lazy expression operations and the code generator that fuses
//! an expression into one OpenCL kernel.
//!
//! Trace of `d.assign(c * (&a + &b))`: the operators (in `fusion_core::expr`)
//! build `ElewiseMul<Scalar<f64>, Add<Load, Load>>`; [`AssignExt::assign`]
//! (in `assign.rs`) binds arguments with a [`Binder`], looks the kernel up by
//! type and alias pattern, on a miss has every [`Operation`] emit its code
//! into a [`Generator`], compiles it, and enqueues it through `fusion_core`.

mod arithmetic;
mod assign;
mod binder;
mod device_functions;
mod dynamic;
mod functions;
mod generator;
mod leaves;
mod logic;
mod methods;
mod operation;
mod templates;

pub use arithmetic::{elt_divide, elt_multiply};
pub use assign::{cached_kernels, results, run, AssignExt, Assignment, FusedKernel, OutputList, Results};
pub use binder::{Binder, Identity};
pub use device_functions::instantiate;
pub use dynamic::{boxed, DynOp};
pub use functions::*;
pub use generator::Generator;
pub use leaves::{col_index, constant, row_index, ColIndex, Constant, RowIndex};
pub use logic::*;
pub use methods::{ElementwiseMethods, ExprMethods};
pub use operation::{combine_shapes, Operation, Shape};
pub use templates::{convert, expand, RealOf};

pub use fusion_core::expr::{Add, ElewiseDiv, ElewiseMul, Load, Neg, Scalar, Shared, Sub};
pub use fusion_core::{ClType, Error, Expr, IntoOperand, MatrixCl, Result, View};

/// Everything needed to write expressions: `use fusion_ops::prelude::*;`.
pub mod prelude {
    pub use crate::functions::*;
    pub use crate::logic::*;
    pub use crate::{
        boxed, col_index, constant, elt_divide, elt_multiply, results, row_index, AssignExt,
        ElementwiseMethods, ExprMethods,
    };
    pub use fusion_core::{ClType, Error, Expr, MatrixCl, Result, View};
}
